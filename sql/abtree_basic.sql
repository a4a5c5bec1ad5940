--
-- abtree: build, inserts with splits, VACUUM, verification, statistics,
-- weights, options and bad input.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

SELECT setseed(0.25);
CREATE TABLE abt_t (id int, k int, w int, pad text);
INSERT INTO abt_t SELECT i, (random() * 5000)::int, 1 + i % 7, repeat('x', 20)
  FROM generate_series(1, 20000) i;

-- bulk build
CREATE INDEX abt_t_k ON abt_t USING abtree (k);
SELECT height, leaf_pages > 10 AS many_leaves, empty_leaf_pages, entries, total_weight
  FROM abtree_stats('abt_t_k');
SELECT abtree_verify('abt_t_k', heapallindexed => true);

-- inserts: many leaf splits, internal splits of a small-fanout index
CREATE INDEX abt_t_pad ON abt_t USING abtree (pad, id);
INSERT INTO abt_t SELECT i, (random() * 5000)::int, 1 + i % 7, repeat(chr(65 + i % 26), 200)
  FROM generate_series(20001, 40000) i;
SELECT height, entries, total_weight FROM abtree_stats('abt_t_k');
SELECT height >= 3 AS deep, entries, total_weight FROM abtree_stats('abt_t_pad');
SELECT abtree_verify('abt_t_k', true);
SELECT abtree_verify('abt_t_pad', true);

-- the planner costs it like a btree of the same shape: selective conditions
-- use it, unselective ones do not, ORDER BY ... LIMIT walks it
ANALYZE abt_t;
EXPLAIN (COSTS OFF) SELECT id FROM abt_t WHERE k = 2500;
EXPLAIN (COSTS OFF) SELECT id FROM abt_t WHERE k > 100;
EXPLAIN (COSTS OFF) SELECT k FROM abt_t ORDER BY k DESC LIMIT 5;

-- the index answers like a sequential scan
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM abt_t WHERE k = 2500;
SELECT count(*), sum(id) FROM abt_t WHERE k BETWEEN 100 AND 200;
SELECT array_agg(k ORDER BY k DESC) FROM (SELECT k FROM abt_t WHERE k < 3 ORDER BY k DESC) s;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*), sum(id) FROM abt_t WHERE k = 2500;
SELECT count(*), sum(id) FROM abt_t WHERE k BETWEEN 100 AND 200;

-- VACUUM removes entries and subtracts their weight
DELETE FROM abt_t WHERE k < 2500;
VACUUM (INDEX_CLEANUP ON) abt_t;
SELECT entries, total_weight, empty_leaf_pages > 0 AS emptied FROM abtree_stats('abt_t_k');
SELECT abtree_verify('abt_t_k', true);
SELECT abtree_verify('abt_t_pad', true);
-- emptied leaves take new entries in their key range
INSERT INTO abt_t SELECT i, i % 2500, 1, 'again' FROM generate_series(1, 3000) i;
SELECT abtree_verify('abt_t_k', true);
SELECT entries = (SELECT count(*) FROM abt_t) AS all_indexed FROM abtree_stats('abt_t_k');

-- REINDEX, also concurrently, and the at-least verification mode
REINDEX INDEX abt_t_k;
REINDEX INDEX CONCURRENTLY abt_t_k;
SELECT abtree_verify('abt_t_k', false, exact => false);
SELECT entries = (SELECT count(*) FROM abt_t) AS all_indexed FROM abtree_stats('abt_t_k');

-- weighted index: the weight column is a key or INCLUDE column
CREATE INDEX abt_t_kw ON abt_t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
SELECT total_weight = (SELECT sum(w) FROM abt_t) AS weights_summed FROM abtree_stats('abt_t_kw');
INSERT INTO abt_t VALUES (-1, 10, 1000, 'heavy');
UPDATE abt_t SET w = 2000 WHERE id = -1;
SELECT total_weight - (SELECT sum(w) FROM abt_t) AS dead_weight_until_vacuum FROM abtree_stats('abt_t_kw');
-- (a plain VACUUM may skip index cleanup when this few rows died)
VACUUM (INDEX_CLEANUP ON) abt_t;
SELECT total_weight = (SELECT sum(w) FROM abt_t) AS weights_summed FROM abtree_stats('abt_t_kw');
SELECT abtree_verify('abt_t_kw', true);
-- NULL and negative weights are refused
INSERT INTO abt_t VALUES (-2, 10, NULL, 'null weight');
INSERT INTO abt_t VALUES (-3, 10, -5, 'negative weight');
-- a bigint weight column
CREATE TABLE abt_w8 (k int, w bigint);
INSERT INTO abt_w8 SELECT i, 10000000000 FROM generate_series(1, 3) i;
CREATE INDEX ON abt_w8 USING abtree (k, w) WITH (weight_column = w);
SELECT total_weight FROM abtree_stats('abt_w8_k_w_idx');

-- bad options
CREATE INDEX ON abt_t USING abtree (k) WITH (weight_column = 'nope');
CREATE INDEX ON abt_t USING abtree (k) INCLUDE (pad) WITH (weight_column = 'pad');
CREATE INDEX ON abt_t USING abtree (k) WITH (weight_column = '');
CREATE INDEX ON abt_t USING abtree (k) WITH (fillfactor = 5);
CREATE INDEX ON abt_t USING abtree (k) WITH (fillfactor = 101);
CREATE INDEX ON abt_t USING abtree (k) WITH (fillfactor = 'x');
CREATE INDEX ON abt_t USING abtree (k) WITH (no_such_option = 1);
CREATE UNIQUE INDEX ON abt_t USING abtree (id);
-- ALTER INDEX checks weight_column against the index's columns, as REINDEX
-- would (issue 25, item 5: a bad value was accepted, dumped, and the restore
-- failed), and says that a new weighting waits for REINDEX
ALTER INDEX abt_t_kw SET (weight_column = 'nope');
ALTER INDEX abt_t_kw SET (weight_column = 'id');
ALTER TABLE abt_t_kw SET (weight_column = '');
SELECT reloptions FROM pg_class WHERE relname = 'abt_t_kw';
ALTER INDEX abt_t_kw SET (weight_column = 'k');
ALTER INDEX abt_t_kw RESET (weight_column);
ALTER INDEX abt_t_kw SET (weight_column = 'w', fillfactor = 80);
ALTER INDEX abt_t_k SET (weight_column = 'k');
ALTER INDEX abt_t_k RESET (weight_column);
SELECT reloptions FROM pg_class WHERE relname IN ('abt_t_kw', 'abt_t_k') ORDER BY relname;
CREATE INDEX abt_t_ff ON abt_t USING abtree (k) WITH (fillfactor = 50);
SELECT avg_leaf_fill < 0.6 AS half_full FROM abtree_stats('abt_t_ff');

-- too large to index
CREATE TABLE abt_big (t text);
CREATE INDEX ON abt_big USING abtree (t);
INSERT INTO abt_big VALUES (repeat('x', 3000));
INSERT INTO abt_big SELECT string_agg(md5(i::text), '') FROM generate_series(1, 200) i;

-- unlogged and temporary indexes, empty tables
CREATE UNLOGGED TABLE abt_u (k int);
CREATE INDEX abt_u_k ON abt_u USING abtree (k);
SELECT height, entries FROM abtree_stats('abt_u_k');
INSERT INTO abt_u SELECT generate_series(1, 1000);
SELECT abtree_verify('abt_u_k', true);
CREATE TEMP TABLE abt_tmp (k int);
CREATE INDEX abt_tmp_k ON abt_tmp USING abtree (k);
INSERT INTO abt_tmp SELECT generate_series(1, 1000);
SELECT abtree_verify('abt_tmp_k', true);
SELECT count(*) FROM abtree_sample_tids('abt_tmp_k', 10, 1);
-- keys near the size limit: a split must leave room for the new key in
-- the half it goes to, with the left half's new high key (2.2 kB keys
-- inserted out of order made a half overflow: PANIC "failed to add item")
CREATE TABLE abt_wide (a text);
CREATE INDEX abt_wide_a ON abt_wide USING abtree (a) WITH (sketch = off);
INSERT INTO abt_wide
SELECT (SELECT string_agg(md5(g::text || '-' || i), '') FROM generate_series(1, n) i)
  FROM generate_series(1, 300) g, (VALUES (70), (76), (83)) v(n) ORDER BY md5(g::text || n);
SELECT count(*), min(length(a)), max(length(a)) FROM abt_wide;
SELECT abtree_verify('abt_wide_a', exact => true) AS verified;
SELECT count(*) AS found FROM abt_wide WHERE a = (SELECT max(a) FROM abt_wide);
DROP TABLE abt_wide;

CREATE TABLE abt_empty (k int);
CREATE INDEX abt_empty_k ON abt_empty USING abtree (k);
SELECT * FROM abtree_stats('abt_empty_k');
SELECT count(*) FROM abtree_sample_tids('abt_empty_k', 10, 1);
SELECT abtree_verify('abt_empty_k', exact => true);

-- bad input to the functions
SELECT abtree_verify(NULL);
SELECT abtree_verify('abt_t_k', NULL);
SELECT abtree_verify('abt_t_k', true, false);
SELECT abtree_verify('abt_t');
CREATE INDEX abt_t_btree ON abt_t (k);
SELECT abtree_verify('abt_t_btree');
SELECT * FROM abtree_stats('abt_t_btree');
SELECT * FROM abtree_stats(NULL);
SELECT abtree_verify(0);
SELECT count(*) FROM abtree_sample_tids(NULL, 1);
SELECT count(*) FROM abtree_sample_tids('abt_t_k', NULL);
SELECT count(*) FROM abtree_sample_tids('abt_t_k', -1);
SELECT count(*) FROM abtree_sample_tids('abt_t_k', 0);
SELECT count(*) FROM abtree_sample_tids('abt_t_k', 2000000000);
SELECT count(*) FROM abtree_sample_tids('abt_t_k', 10, 'NaN');
SELECT count(*) FROM abtree_sample_tids('abt_t_k', 10, NULL);
SELECT count(*) FROM abtree_sample_tids('abt_t_k', 'ten');
SELECT count(*) FROM abtree_sample_tids('abt_t_btree', 10);
-- samples need SELECT on the table
CREATE ROLE abt_nobody;
SET ROLE abt_nobody;
SELECT count(*) FROM abtree_sample_tids('abt_t_k', 10);
SELECT abtree_verify('abt_t_k');
RESET ROLE;
DROP ROLE abt_nobody;

-- DROP
DROP INDEX abt_t_kw;
DROP TABLE abt_t, abt_w8, abt_big, abt_u, abt_tmp, abt_empty;
