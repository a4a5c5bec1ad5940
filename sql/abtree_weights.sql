--
-- Weight limits of weighted abtree indexes (src/abtree/README, "Weight
-- limits"): an entry weighs at most 2^40 and an index at most 2^53 in all,
-- so that draws add a page's weights exactly in doubles and no sum wraps
-- around in 64 bits.  Before the limits, a total past 2^53 lost exactness
-- without a word, and three entries of 9e18 wrapped the
-- root's total (abtree_stats showed 8553255926290448384 for 2.7e19), with
-- abtree_verify content and draws biased.  The bad-input suite has the
-- per-entry cases.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

-- exactly 2^53: 2^13 entries of 2^40 (a build), at the limit
CREATE TABLE wl (k int, w int8 NOT NULL);
INSERT INTO wl SELECT g, 1099511627776 FROM generate_series(1, 8192) g;
CREATE INDEX wl_k ON wl USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
SELECT total_weight = 2::numeric ^ 53 AS at_limit FROM abtree_stats('wl_k');
SELECT abtree_verify('wl_k', exact => true);
SELECT count(*) FROM wl TABLESAMPLE swr(100) REPEATABLE (1);

-- one more unit fails under every weight protocol, before anything changes;
-- an entry of weight 0 still goes in
\set VERBOSITY terse
SET abtree.weight_protocol = batched;
INSERT INTO wl VALUES (0, 1);
BEGIN;
INSERT INTO wl VALUES (0, 0);
INSERT INTO wl VALUES (-1, 1);
COMMIT;
SET abtree.weight_protocol = safe_page;
INSERT INTO wl VALUES (0, 1);
SET abtree.weight_protocol = page_exclusive;
INSERT INTO wl VALUES (0, 1);
SET abtree.weight_protocol = path_exclusive;
INSERT INTO wl VALUES (0, 1);
INSERT INTO wl VALUES (0, 0);
RESET abtree.weight_protocol;
\set VERBOSITY default
SELECT total_weight = 2::numeric ^ 53 AS at_limit, entries FROM abtree_stats('wl_k');
SELECT abtree_verify('wl_k', heapallindexed => true);

-- VACUUM gives room back
DELETE FROM wl WHERE k <= 2;
VACUUM (INDEX_CLEANUP ON) wl;
SELECT total_weight = 2::numeric ^ 53 - 2 * 1099511627776 AS room FROM abtree_stats('wl_k');
INSERT INTO wl VALUES (1, 1099511627776);
INSERT INTO wl VALUES (2, 1099511627777);
INSERT INTO wl VALUES (2, 1099511627775);
INSERT INTO wl VALUES (3, 1);
INSERT INTO wl VALUES (3, 1);
SELECT total_weight = 2::numeric ^ 53 AS at_limit FROM abtree_stats('wl_k');

-- a build past the limit fails, as does one with a heavier entry
DROP INDEX wl_k;
INSERT INTO wl VALUES (4, 1);
CREATE INDEX wl_k ON wl USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
DELETE FROM wl WHERE k = 4;
UPDATE wl SET w = w + 1 WHERE k = 3;
CREATE INDEX wl_k ON wl USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
DROP TABLE wl;

-- A renamed weight column: the index's own column keeps its old name, and
-- pg_get_indexdef (pg_dump) prints the table's; weight_column follows the
-- rename, so that the printed definition can be run again (TAP 010).
CREATE TABLE wr (k int, w int, v int);
CREATE INDEX wr_kw ON wr USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE INDEX wr_kv ON wr USING abtree (k) INCLUDE (v, w) WITH (weight_column = 'v');
INSERT INTO wr SELECT g, 3, 1 FROM generate_series(1, 100) g;
ALTER TABLE wr RENAME COLUMN w TO weight;
SELECT pg_get_indexdef('wr_kw'::regclass), pg_get_indexdef('wr_kv'::regclass);
SELECT attname FROM pg_attribute WHERE attrelid = 'wr_kw'::regclass ORDER BY attnum;
REINDEX TABLE wr;
SELECT abtree_range_weight('wr_kw', NULL::int, NULL), abtree_range_weight('wr_kv', NULL::int, NULL);
-- the printed definition builds the same index
DO $$ BEGIN EXECUTE replace(pg_get_indexdef('wr_kw'::regclass), 'INDEX wr_kw', 'INDEX wr_kw2'); END $$;
SELECT abtree_range_weight('wr_kw2', NULL::int, NULL);
-- an index renamed before weight_column followed (its option still says w):
-- it still weighs by w, and takes the table's name for it
ALTER INDEX wr_kw SET (weight_column = 'w');
SELECT pg_get_indexdef('wr_kw'::regclass);
ALTER INDEX wr_kw SET (weight_column = 'weight');
REINDEX INDEX wr_kw;
SELECT abtree_range_weight('wr_kw', NULL::int, NULL);
-- an option still naming the index column's own name follows too
ALTER INDEX wr_kw SET (weight_column = 'w');
-- inheritance: the children's indexes follow too
CREATE TABLE wr_child () INHERITS (wr);
CREATE INDEX wr_child_kw ON wr_child USING abtree (k) INCLUDE (weight) WITH (weight_column = 'weight');
ALTER TABLE wr RENAME COLUMN weight TO wt;
SELECT c.relname, c.reloptions FROM pg_class c WHERE c.relname LIKE 'wr%kw%' ORDER BY 1;
DROP TABLE wr CASCADE;
-- two renames that give the weight column the key column's former name:
-- the option names the table's column, not the index column named so
CREATE TABLE ws (a int, b int);
CREATE INDEX ws_ab ON ws USING abtree (a) INCLUDE (b) WITH (weight_column = 'b');
INSERT INTO ws SELECT g, 2 FROM generate_series(1, 100) g;
ALTER TABLE ws RENAME COLUMN a TO c;
ALTER TABLE ws RENAME COLUMN b TO a;
SELECT pg_get_indexdef('ws_ab'::regclass);
REINDEX INDEX ws_ab;
SELECT abtree_range_weight('ws_ab', NULL::int, NULL);
DROP TABLE ws;
