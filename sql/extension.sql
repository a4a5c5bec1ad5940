--
-- CREATE/DROP EXTENSION and what the extension installs.
-- The server runs with shared_preload_libraries = 'abtree'; the TAP test
-- test/t/001_preload.pl covers a server without it.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS abtree;
RESET client_min_messages;

CREATE EXTENSION abtree;
CREATE EXTENSION abtree;				-- already exists
SELECT e.extname, e.extversion, e.extrelocatable, n.nspname AS schema, a.comment
  FROM pg_extension e
  JOIN pg_namespace n ON n.oid = e.extnamespace
  JOIN pg_available_extensions a ON a.name = e.extname
 WHERE e.extname = 'abtree';
-- what the extension installs (array types and the row types of views left
-- out: PostgreSQL 18 lists them too; composite types of CREATE TYPE stay)
SELECT pg_describe_object(d.classid, d.objid, 0) AS object
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'abtree')
   AND NOT EXISTS (SELECT FROM pg_type t
                    WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                      AND (t.typcategory = 'A' OR
                           EXISTS (SELECT FROM pg_class c
                                    WHERE c.oid = t.typrelid AND c.relkind <> 'c')))
 ORDER BY 1;

-- preloaded: the check passes quietly
SELECT abtree_check_preload();

-- the components registered in this server (counters vary, so not shown)
SELECT component, item, value
  FROM abtree_status()
 WHERE item NOT LIKE 'probes_%' AND component NOT IN ('weights', 'swr', 'draws', 'inserts', 'vacuum') AND item <> 'bytes'
 ORDER BY component, item;
SELECT count(*) AS counters
  FROM abtree_status()
 WHERE (item LIKE 'probes_%' OR component IN ('weights', 'swr', 'draws', 'inserts', 'vacuum') OR item = 'bytes')
   AND value ~ '^[0-9]+$';

-- wrong arguments get PostgreSQL's own clear errors
SELECT * FROM abtree_status(1);
SELECT abtree_check_preload(NULL);

-- the WAL probe is for administrators only
CREATE ROLE abtree_regress_user;
SET ROLE abtree_regress_user;
SELECT abtree_wal_probe('not allowed');
SELECT count(*) > 0 AS status_is_public FROM abtree_status();
RESET ROLE;
DROP ROLE abtree_regress_user;

-- the extension is relocatable
CREATE TABLE reloc_t (k int);
INSERT INTO reloc_t SELECT i % 50 FROM generate_series(1, 2000) i;
CREATE INDEX reloc_t_k ON reloc_t USING abtree (k);
CREATE SCHEMA abtree_elsewhere;
ALTER EXTENSION abtree SET SCHEMA abtree_elsewhere;
SELECT count(*) > 0 AS moved FROM abtree_elsewhere.abtree_status();
-- its own queries find swr there, not on the search path (issue 25, item 6:
-- abtree_ndistinct sampled through an unqualified TABLESAMPLE swr)
SELECT estimate BETWEEN 45 AND 55 AS estimate_ok, table_rows
  FROM abtree_elsewhere.abtree_ndistinct('reloc_t', ARRAY['k'], 1000, 'scbc', 0.5);
ALTER EXTENSION abtree SET SCHEMA public;
DROP TABLE reloc_t;
DROP SCHEMA abtree_elsewhere;

DROP EXTENSION abtree;
DROP EXTENSION abtree;					-- does not exist
SELECT abtree_check_preload();			-- gone with it
CREATE EXTENSION abtree;
DROP EXTENSION abtree CASCADE;
