--
-- The abtree WAL resource manager, seen through pg_walinspect, and the
-- bad inputs of abtree_wal_probe().
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
RESET client_min_messages;

SELECT value::bigint AS written_before
  FROM abtree_status() WHERE item = 'probes_written' \gset

SELECT pg_current_wal_insert_lsn() AS start_lsn \gset
SELECT abtree_wal_probe('hello from the regression tests') AS end_lsn \gset
SELECT abtree_wal_probe() > :'start_lsn'::pg_lsn AS default_message;
SELECT abtree_wal_probe('') AS end_lsn \gset

-- our records carry our resource manager's name, type and description
SELECT resource_manager, record_type, description
  FROM pg_get_wal_records_info(:'start_lsn', :'end_lsn')
 WHERE resource_manager = 'abtree'
 ORDER BY start_lsn;

SELECT value::bigint - :written_before AS written
  FROM abtree_status() WHERE item = 'probes_written';

-- a probe is not transactional: it is in the WAL even if we roll back
BEGIN;
SELECT abtree_wal_probe('rolled back') IS NOT NULL AS written;
ROLLBACK;
SELECT value::bigint - :written_before AS written
  FROM abtree_status() WHERE item = 'probes_written';

-- bad input
SELECT abtree_wal_probe(NULL);
SELECT abtree_wal_probe(NULL::text);
SELECT abtree_wal_probe(repeat('x', 1024)) IS NOT NULL AS longest_allowed;
SELECT abtree_wal_probe(repeat('x', 1025));
SELECT abtree_wal_probe(repeat('x', 50000000));
SELECT abtree_wal_probe(42);
SELECT abtree_wal_probe(-1);
SELECT abtree_wal_probe('a', 'b');
-- multibyte characters count in bytes
SELECT abtree_wal_probe(repeat('ä', 512)) IS NOT NULL AS fits;
SELECT abtree_wal_probe(repeat('ä', 513));

-- nothing failed counted as written
SELECT value::bigint - :written_before AS written
  FROM abtree_status() WHERE item = 'probes_written';
