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
