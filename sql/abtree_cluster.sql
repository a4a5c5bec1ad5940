-- CLUSTER and ALTER TABLE ... CLUSTER ON with abtree and pbtree indexes.
-- CLUSTER reads the table in the index's order through an index scan with
-- SnapshotAny (dead rows, rolled-back rows and not-yet-valid entries
-- included: the heap decides what is copied), then rebuilds every index.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;
CREATE TABLE cl (id int, k int, g text, w int NOT NULL);
INSERT INTO cl SELECT i, CASE WHEN i % 50 = 0 THEN NULL ELSE (i * 7919) % 3001 END,
  'g' || (i % 7), i % 5 FROM generate_series(1, 6000) i;
CREATE INDEX cl_k ON cl USING abtree (k);
CREATE INDEX cl_gk ON cl USING abtree (g DESC, k NULLS FIRST) INCLUDE (id);
CREATE INDEX cl_kw ON cl USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
-- rows after the build (entries of the batched protocol), dead rows, rows
-- of a rolled-back transaction
INSERT INTO cl SELECT i, (i * 7919) % 3001, 'g' || (i % 7), i % 5 FROM generate_series(6001, 7000) i;
DELETE FROM cl WHERE id % 9 = 0;
BEGIN;
INSERT INTO cl SELECT -i, i, 'gone', 1 FROM generate_series(1, 500) i;
ROLLBACK;

-- ordered like abtree's scan order, NULLs last (the default), duplicates by TID
CLUSTER cl USING cl_k;
SELECT count(*) AS rows, count(*) FILTER (WHERE id < 0) AS rolled_back,
  count(*) FILTER (WHERE id % 9 = 0) AS deleted
  FROM cl;
SELECT bool_and(pos = want) AS in_index_order
  FROM (SELECT row_number() OVER (ORDER BY ctid) AS pos,
               row_number() OVER (ORDER BY k NULLS LAST, ctid) AS want FROM cl) s;
SELECT indexrelid::regclass, indisclustered FROM pg_index
  WHERE indrelid = 'cl'::regclass ORDER BY 1::text;
SELECT abtree_verify('cl_k', heapallindexed => true, exact => true),
       abtree_verify('cl_gk', heapallindexed => true, exact => true),
       abtree_verify('cl_kw', heapallindexed => true, exact => true);
SELECT entries, total_weight = (SELECT sum(w) FROM cl) AS weights_right
  FROM abtree_stats('cl_kw');
SET abtree.swr_index = 'cl_kw';
SELECT count(*), bool_and(w > 0) FROM cl TABLESAMPLE swr(300) REPEATABLE (7);
RESET abtree.swr_index;

-- a multi-column DESC index; then CLUSTER without USING takes the one remembered
CLUSTER cl USING cl_gk;
SELECT bool_and(pos = want) AS in_index_order
  FROM (SELECT row_number() OVER (ORDER BY ctid) AS pos,
               row_number() OVER (ORDER BY g DESC, k NULLS FIRST, ctid) AS want FROM cl) s;
ALTER TABLE cl CLUSTER ON cl_k;
UPDATE cl SET k = k + 1 WHERE id % 11 = 0;
CLUSTER cl;
SELECT bool_and(pos = want) AS in_index_order
  FROM (SELECT row_number() OVER (ORDER BY ctid) AS pos,
               row_number() OVER (ORDER BY k NULLS LAST, ctid) AS want FROM cl) s;
SELECT abtree_verify('cl_k', heapallindexed => true, exact => true);
ALTER TABLE cl SET WITHOUT CLUSTER;
SELECT count(*) FROM pg_index WHERE indrelid = 'cl'::regclass AND indisclustered;

-- a partial abtree index cannot order the whole table, as for btree
CREATE INDEX cl_part ON cl USING abtree (k) WHERE w > 2;
CLUSTER cl USING cl_part;

-- pbtree: its scans merge the partitions into key order
CREATE TABLE clp (id int, k int);
INSERT INTO clp SELECT i, (i * 31) % 4001 FROM generate_series(1, 2000) i;
CREATE INDEX clp_k ON clp USING pbtree (k);
INSERT INTO clp SELECT i, (i * 31) % 4001 FROM generate_series(2001, 4000) i;
SELECT pbtree_seal('clp_k');
INSERT INTO clp SELECT i, (i * 31) % 4001 FROM generate_series(4001, 6000) i;
CLUSTER clp USING clp_k;
SELECT bool_and(pos = want) AS in_index_order
  FROM (SELECT row_number() OVER (ORDER BY ctid) AS pos,
               row_number() OVER (ORDER BY k, ctid) AS want FROM clp) s;
SELECT pbtree_verify('clp_k', true);

DROP TABLE cl, clp;
