--
-- Row-level security and the SQL entry points (issue 25, items 1 and 4).
-- The index functions read every entry of an index, so where a policy
-- applies to the caller they refuse (42501) instead of revealing counts,
-- weights, sketches or TIDs of rows the caller cannot see; the table itself,
-- TABLESAMPLE swr included, answers under its policies.  The owner (who
-- bypasses RLS unless it is forced) and a table without RLS still work.
-- Every function of the extension that takes a table or an index has a case
-- or is listed with the reason it needs none.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
DROP ROLE IF EXISTS regress_abt_alice;
DROP ROLE IF EXISTS regress_abt_bob;
RESET client_min_messages;
CREATE ROLE regress_abt_alice;
CREATE ROLE regress_abt_bob;

-- hr: 1000 rows, alice owns 100 of them, the policy shows her only hers
CREATE TABLE rls_hr (id int, owner name, salary int);
INSERT INTO rls_hr SELECT i, CASE WHEN i % 10 = 0 THEN 'regress_abt_alice' ELSE 'someone' END,
       1000 + i % 97 FROM generate_series(1, 1000) i;
CREATE INDEX rls_hr_sal ON rls_hr USING abtree (salary);
CREATE INDEX rls_hr_pb ON rls_hr USING pbtree (salary);
ALTER TABLE rls_hr ENABLE ROW LEVEL SECURITY;
CREATE POLICY rls_hr_own ON rls_hr USING (owner = current_user);
GRANT SELECT ON rls_hr TO regress_abt_alice;
-- the same without RLS (the control)
CREATE TABLE rls_open (id int, salary int);
INSERT INTO rls_open SELECT i, 1000 + i % 97 FROM generate_series(1, 1000) i;
CREATE INDEX rls_open_sal ON rls_open USING abtree (salary);
CREATE INDEX rls_open_pb ON rls_open USING pbtree (salary);
GRANT SELECT ON rls_open TO regress_abt_alice;
-- the verification functions are not PUBLIC (issue 25, item 2): without a
-- grant they refuse everybody but superusers
SET ROLE regress_abt_alice;
SELECT abtree_verify('rls_open_sal', exact => false);
SELECT pbtree_verify('rls_open_pb');
SELECT violations FROM abtree_mvstore_check('rls_open_sal');
RESET ROLE;
-- granted, as an administrator would, so that what follows tests RLS
GRANT EXECUTE ON FUNCTION abtree_verify(regclass, boolean, boolean), pbtree_verify(regclass, boolean),
  abtree_mvstore_check(regclass) TO regress_abt_alice, regress_abt_bob;

-- %T is replaced by the table, %I by its abtree index, %P by its pbtree index
CREATE TABLE rls_case (fn text, sql text);
INSERT INTO rls_case VALUES
('abtree_sample_tids', $$SELECT count(*) FROM abtree_sample_tids('%I', 10, 0.5)$$),
('abtree_sample_tids_range', $$SELECT count(*) FROM abtree_sample_tids_range('%I', 10, 0.5, 1000, 1010)$$),
('abtree_range_weight', $$SELECT abtree_range_weight('%I', 1037, 1037)$$),
('abtree_range_weight', $$SELECT abtree_range_weight('%I', NULL::int, NULL, visible_only => true)$$),
('abtree_stats', $$SELECT entries FROM abtree_stats('%I')$$),
('abtree_sketch', $$SELECT round(chll_estimate(abtree_sketch('%I', 1)))$$),
('abtree_verify', $$SELECT abtree_verify('%I', exact => false)$$),
('abtree_mvstore_check', $$SELECT violations FROM abtree_mvstore_check('%I')$$),
('pbtree_stats', $$SELECT sum(entries) FROM pbtree_stats('%P')$$),
('pbtree_verify', $$SELECT pbtree_verify('%P')$$),
('abtree_ndistinct', $$SELECT round(estimate) FROM abtree_ndistinct('%T', ARRAY['salary'], 1000, 'scbc', 0.5)$$),
('abtree_ndistinct_freq', $$SELECT abtree_ndistinct_freq('%T', ARRAY['salary'])$$);

-- Functions with a table or index argument that need no case: they read
-- only what the caller's own query reads, or change an index without
-- revealing it (and need INSERT), or are the owner's.
CREATE TABLE rls_exempt (fn text, why text);
INSERT INTO rls_exempt VALUES
('pbtree_seal', 'maintenance, needs INSERT, returns only whether it sealed'),
('pbtree_merge', 'maintenance, needs INSERT, returns a partition count'),
('swr_citus_sample', 'reads the table with queries run as the caller, under its policies');

-- swr_shard_weight (a Citus shard's total weight) is an index function too
INSERT INTO rls_case VALUES
('swr_shard_weight', $$SELECT swr_shard_weight('%T')$$);

-- run every case on a table as the current role: the result or the SQLSTATE
CREATE FUNCTION rls_run(tbl text, idx text, pidx text)
RETURNS TABLE (fn text, outcome text) LANGUAGE plpgsql AS $$
DECLARE
  c record;
  q text;
  r text;
BEGIN
  FOR c IN SELECT * FROM rls_case ORDER BY fn, sql LOOP
    q := replace(replace(replace(c.sql, '%T', tbl), '%I', idx), '%P', pidx);
    BEGIN
      EXECUTE q INTO r;
      outcome := 'ok';
    EXCEPTION WHEN OTHERS THEN
      outcome := SQLSTATE;
    END;
    fn := c.fn;
    RETURN NEXT;
  END LOOP;
END $$;
GRANT EXECUTE ON FUNCTION rls_run(text, text, text) TO regress_abt_alice, regress_abt_bob;
GRANT SELECT ON rls_case TO regress_abt_alice, regress_abt_bob;

-- alice under the policy: every function refuses
SET ROLE regress_abt_alice;
SELECT * FROM rls_run('rls_hr', 'rls_hr_sal', 'rls_hr_pb');
-- what she is told
\set VERBOSITY default
SELECT abtree_range_weight('rls_hr_sal', 1037, 1037);
\set VERBOSITY terse
-- the table answers under its policy, TABLESAMPLE swr included
SELECT count(*) FROM rls_hr WHERE salary = 1037;
SELECT count(*) AS drawn, bool_and(owner = current_user) AS all_hers
  FROM rls_hr TABLESAMPLE swr (50) REPEATABLE (1);
-- the view shows nothing of rls_hr, and no error
SELECT tablename, indexname, sketch_ndistinct FROM abtree_column_ndistinct
 WHERE tablename LIKE 'rls_%' ORDER BY 1, 2;
-- alice without RLS: every function works
SELECT * FROM rls_run('rls_open', 'rls_open_sal', 'rls_open_pb') WHERE outcome <> 'ok';
RESET ROLE;

-- the owner bypasses the policy: everything works
SELECT * FROM rls_run('rls_hr', 'rls_hr_sal', 'rls_hr_pb') WHERE outcome <> 'ok';
SELECT abtree_range_weight('rls_hr_sal', NULL::int, NULL);
-- a role without SELECT on the table (bob, on rls_open): every function refuses
SET ROLE regress_abt_bob;
SELECT fn, outcome FROM rls_run('rls_open', 'rls_open_sal', 'rls_open_pb') GROUP BY 1, 2 ORDER BY 1;
RESET ROLE;
-- (that was a superuser) an owner who is not is refused when RLS is forced
ALTER TABLE rls_hr OWNER TO regress_abt_bob;
ALTER TABLE rls_hr FORCE ROW LEVEL SECURITY;
SET ROLE regress_abt_bob;
SELECT fn, outcome FROM rls_run('rls_hr', 'rls_hr_sal', 'rls_hr_pb') GROUP BY 1, 2 ORDER BY 1;
ALTER TABLE rls_hr NO FORCE ROW LEVEL SECURITY;
SELECT * FROM rls_run('rls_hr', 'rls_hr_sal', 'rls_hr_pb') WHERE outcome <> 'ok';
RESET ROLE;
ALTER TABLE rls_hr OWNER TO CURRENT_USER;

-- every function with a table or index argument has a case or a reason
SELECT p.proname
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'abtree'
 WHERE 'regclass'::regtype = ANY (p.proargtypes)
   AND p.proname NOT IN (SELECT fn FROM rls_case UNION SELECT fn FROM rls_exempt)
 ORDER BY 1;

-- The view with a btree index and a partitioned abtree index beside
-- abtree ones (issue 25, item 4: it raised "... is not an abtree index").
CREATE TABLE rls_part (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE rls_part_1 PARTITION OF rls_part FOR VALUES FROM (0) TO (100);
INSERT INTO rls_part SELECT i, i % 7 FROM generate_series(0, 99) i;
CREATE INDEX rls_part_v ON rls_part USING abtree (v);
CREATE INDEX rls_open_btree ON rls_open (salary);
-- the index functions say what a partitioned index is (issue 25, item 7)
\set VERBOSITY default
SELECT entries FROM abtree_stats('rls_part_v');
\set VERBOSITY terse
SELECT count(*) FROM abtree_sample_tids('rls_part_v', 5, 0.5);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT tablename, indexname, sketch_ndistinct FROM abtree_column_ndistinct
 WHERE tablename LIKE 'rls_%' ORDER BY 1, 2;
SET ROLE regress_abt_alice;
SELECT tablename, indexname, sketch_ndistinct FROM abtree_column_ndistinct
 WHERE tablename LIKE 'rls_%' ORDER BY 1, 2;
RESET ROLE;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- the sums over a partitioned index's partitions obey the partitioned
-- table's policies (issue 25, item 7)
ALTER TABLE rls_part ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON rls_part TO regress_abt_alice;
SET ROLE regress_abt_alice;
SELECT count(*) FROM rls_part;
SELECT abtree_range_weight('rls_part_v', NULL::int, NULL);
SELECT abtree_sketch('rls_part_v', 1) IS NULL;
RESET ROLE;
SELECT abtree_range_weight('rls_part_v', NULL::int, NULL);

REVOKE EXECUTE ON FUNCTION abtree_verify(regclass, boolean, boolean), pbtree_verify(regclass, boolean),
  abtree_mvstore_check(regclass) FROM regress_abt_alice, regress_abt_bob;
DROP TABLE rls_hr, rls_open, rls_part, rls_case, rls_exempt;
DROP FUNCTION rls_run(text, text, text);
DROP ROLE regress_abt_alice;
DROP ROLE regress_abt_bob;
