--
-- TABLESAMPLE swr: chi-square goodness-of-fit tests of the rows returned.
--
-- The pattern of abtree_sample.sql: each test draws N rows with a fixed
-- seed and compares the counts per category (every visible row, or every
-- key) with the expected ones; categories never drawn count as 0.  The
-- critical values are the chi-square quantiles at 1 - alpha, alpha = 0.001:
-- with random seeds each test would raise a false alarm once in 1000 runs
-- (its false-alarm rate); with the fixed seeds here the outcome is
-- deterministic.  Checks marked "must fail" run the same statistic against a
-- slightly wrong expectation, to show that the tests can fail.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

-- 0.999 quantiles of chi-square by degrees of freedom
CREATE TABLE swr_crit (df int PRIMARY KEY, crit float8);
-- (2 and 9 exact; 399, 799 and 1199 by the Wilson-Hilferty approximation,
-- within 0.1% at these degrees of freedom)
INSERT INTO swr_crit VALUES (2, 13.816), (9, 27.877), (29, 58.301), (49, 85.351),
                            (399, 492.05), (799, 928.27), (999, 1142.848),
                            (1199, 1356.06), (3999, 4281.073);
-- does the fit of observed counts to expected weights pass at alpha 0.001?
CREATE FUNCTION swr_fit(observed bigint[], expected float8[]) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT sum((o - e / se * n) ^ 2 / (e / se * n)) <
         (SELECT crit FROM swr_crit WHERE df = cardinality(observed) - 1)
    FROM unnest(observed, expected) AS u(o, e),
         (SELECT sum(x) AS n FROM unnest(observed) x) t,
         (SELECT sum(x) AS se FROM unnest(expected) x) s
$$;

SELECT setseed(0.25);
-- 50 keys, 80 rows each, inserted in random order on both sides of the
-- index build (so the tree has splits); room on the pages for HOT updates
CREATE TABLE swr_s (id serial, k int, w int, pad text)
  WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO swr_s (k, w, pad)
  SELECT k, 1 + k % 10, 'x' FROM generate_series(0, 49) k, generate_series(1, 40) r
  ORDER BY random();
CREATE INDEX swr_s_k ON swr_s USING abtree (k) WITH (fillfactor = 20);
INSERT INTO swr_s (k, w, pad)
  SELECT k, 1 + k % 10, 'x' FROM generate_series(0, 49) k, generate_series(1, 40) r
  ORDER BY random();
SELECT count(*) AS rows, count(DISTINCT id) AS ids FROM swr_s;
SELECT height >= 2 AS has_internal_pages, entries FROM abtree_stats('swr_s_k');

-- the rows drawn, and the visible rows with their draw counts
CREATE TABLE swr_draw (id int);
CREATE VIEW swr_counts AS
  SELECT s.id, s.k, s.w, count(d.id) AS n
    FROM swr_s s LEFT JOIN swr_draw d USING (id)
   GROUP BY s.id, s.k, s.w;

-- LIMIT over swr(n) (issue 21, item 3): rows come out in the order they were
-- drawn, so the first k rows of swr(n) are k independent draws, as a cursor
-- read half-way is.  400 scans of swr(500) LIMIT 5 (seeds 0.001 .. 0.4):
-- their 2000 rows over ten id ranges of 400 rows (ids follow the heap's
-- order here), each expected 1/10.  A scan that returned its draws sorted by
-- TID gave its 5 lowest: the same statistic on ORDER BY ctid LIMIT 5 must
-- fail.
CREATE TABLE swr_prefix (id int, sorted boolean);
DO $$ BEGIN
  FOR s IN 1..400 LOOP
    EXECUTE format('INSERT INTO swr_prefix SELECT id, false FROM swr_s TABLESAMPLE swr(500) REPEATABLE (%s) LIMIT 5', s / 1000.0);
    EXECUTE format('INSERT INTO swr_prefix SELECT id, true FROM (SELECT id, ctid FROM swr_s TABLESAMPLE swr(500) REPEATABLE (%s) ORDER BY ctid LIMIT 5) x', s / 1000.0);
  END LOOP;
END $$;
WITH c AS (SELECT g.g, v.sorted, count(p.id) AS n
             FROM generate_series(0, 9) g(g) CROSS JOIN (VALUES (false), (true)) v(sorted)
             LEFT JOIN swr_prefix p ON (p.id - 1) / 400 = g.g AND p.sorted = v.sorted
            GROUP BY g.g, v.sorted)
SELECT swr_fit(array_agg(n ORDER BY g) FILTER (WHERE NOT sorted), array_fill(1.0::float8, ARRAY[10])) AS limit_prefix_uniform,
       swr_fit(array_agg(n ORDER BY g) FILTER (WHERE sorted), array_fill(1.0::float8, ARRAY[10])) AS sorted_prefix_must_fail
  FROM c;
DROP TABLE swr_prefix;

-- uniform: every row 1/4000; every key 1/50
INSERT INTO swr_draw SELECT id FROM swr_s TABLESAMPLE swr(200000) REPEATABLE (0.1);
SELECT count(*) AS draws FROM swr_draw;
SELECT swr_fit(array_agg(n ORDER BY id), array_agg(1.0 ORDER BY id)) AS uniform_over_rows
  FROM swr_counts;
WITH c AS (SELECT k, sum(n)::bigint AS n FROM swr_counts GROUP BY k)
SELECT swr_fit(array_agg(n ORDER BY k), array_agg(1.0 ORDER BY k)) AS uniform_over_keys,
       swr_fit(array_agg(n ORDER BY k),
               array_agg(CASE WHEN k < 25 THEN 1.1 ELSE 0.9 END ORDER BY k)) AS biased_passes_must_fail
  FROM c;

-- weighted: weight w = 1 + k % 10, so each row is drawn with probability
-- w / sum(w), and the ten weight classes in proportion to w * their rows
CREATE INDEX swr_s_kw ON swr_s USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
SET abtree.swr_index = swr_s_kw;
TRUNCATE swr_draw;
INSERT INTO swr_draw SELECT id FROM swr_s TABLESAMPLE swr(200000) REPEATABLE (0.2);
SELECT swr_fit(array_agg(n ORDER BY id), array_agg(w ORDER BY id)) AS proportional_to_weight,
       swr_fit(array_agg(n ORDER BY id), array_agg(1.0 ORDER BY id)) AS uniform_passes_must_fail
  FROM swr_counts;
WITH c AS (SELECT w, sum(n)::bigint AS n, sum(w) AS mass FROM swr_counts GROUP BY w)
SELECT swr_fit(array_agg(n ORDER BY w), array_agg(mass ORDER BY w)) AS weight_classes,
       swr_fit(array_agg(n ORDER BY w),
               array_agg(mass * CASE WHEN w > 5 THEN 1.1 ELSE 0.9 END ORDER BY w)) AS biased_passes_must_fail
  FROM c;
RESET abtree.swr_index;
DROP INDEX swr_s_kw;

-- HOT updates of half the rows: the index still points at the chains'
-- roots, and the draws stay uniform over the rows
BEGIN;
UPDATE swr_s SET pad = 'updated' WHERE id % 2 = 0;
SELECT n_tup_hot_upd = 2000 AS all_hot FROM pg_stat_xact_user_tables WHERE relname = 'swr_s';
COMMIT;
TRUNCATE swr_draw;
INSERT INTO swr_draw SELECT id FROM swr_s TABLESAMPLE swr(200000) REPEATABLE (0.3);
SELECT swr_fit(array_agg(n ORDER BY id), array_agg(1.0 ORDER BY id)) AS uniform_after_hot_updates
  FROM swr_counts;
SELECT count(*) FILTER (WHERE id % 2 = 0) BETWEEN 95000 AND 105000 AS updated_rows_half
  FROM swr_draw;

-- key ranges (abtree.swr_where = redraw): uniform over the rows inside the
-- range, and over those that also satisfy the rest of WHERE
TRUNCATE swr_draw;
INSERT INTO swr_draw SELECT id FROM swr_s TABLESAMPLE swr(80000) REPEATABLE (0.35)
  WHERE k BETWEEN 10 AND 19;
SELECT count(*) AS draws FROM swr_draw;
SELECT swr_fit(array_agg(n ORDER BY id), array_agg(1.0 ORDER BY id)) AS uniform_in_range
  FROM swr_counts WHERE k BETWEEN 10 AND 19;
WITH c AS (SELECT k, sum(n)::bigint AS n FROM swr_counts WHERE k BETWEEN 10 AND 19 GROUP BY k)
SELECT swr_fit(array_agg(n ORDER BY k), array_agg(1.0 ORDER BY k)) AS uniform_over_keys_in_range,
       swr_fit(array_agg(n ORDER BY k),
               array_agg(CASE WHEN k < 15 THEN 1.1 ELSE 0.9 END ORDER BY k)) AS biased_passes_must_fail
  FROM c;
TRUNCATE swr_draw;
INSERT INTO swr_draw SELECT id FROM swr_s TABLESAMPLE swr(40000) REPEATABLE (0.36)
  WHERE k >= 10 AND k < 20 AND k % 2 = 0;
SELECT count(*) AS draws FROM swr_draw;
SELECT swr_fit(array_agg(n ORDER BY id), array_agg(1.0 ORDER BY id)) AS uniform_in_range_and_filter
  FROM swr_counts WHERE k BETWEEN 10 AND 19 AND k % 2 = 0;

-- many deletes: three rows in four, without VACUUM (the dead rows keep
-- their weight in the index and are rejected and redrawn), then with it
DELETE FROM swr_s WHERE id % 4 <> 0;
TRUNCATE swr_draw;
INSERT INTO swr_draw SELECT id FROM swr_s TABLESAMPLE swr(50000) REPEATABLE (0.4);
SELECT count(*) AS draws, bool_and(id % 4 = 0) AS no_deleted_rows FROM swr_draw;
SELECT swr_fit(array_agg(n ORDER BY id), array_agg(1.0 ORDER BY id)) AS uniform_over_visible,
       swr_fit(array_agg(n ORDER BY id),
               array_agg(CASE WHEN k < 25 THEN 1.1 ELSE 0.9 END ORDER BY id)) AS biased_passes_must_fail
  FROM swr_counts;
VACUUM (INDEX_CLEANUP ON) swr_s;
SELECT entries FROM abtree_stats('swr_s_k');
TRUNCATE swr_draw;
INSERT INTO swr_draw SELECT id FROM swr_s TABLESAMPLE swr(50000) REPEATABLE (0.5);
SELECT count(*) AS draws, bool_and(id % 4 = 0) AS no_deleted_rows FROM swr_draw;
SELECT swr_fit(array_agg(n ORDER BY id), array_agg(1.0 ORDER BY id)) AS uniform_after_vacuum
  FROM swr_counts;

-- weighted after deletes: the visible rows, in proportion to their weight
CREATE INDEX swr_s_kw ON swr_s USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
DELETE FROM swr_s WHERE k >= 30;
SET abtree.swr_index = swr_s_kw;
TRUNCATE swr_draw;
INSERT INTO swr_draw SELECT id FROM swr_s TABLESAMPLE swr(40000) REPEATABLE (0.6);
WITH c AS (SELECT w, sum(n)::bigint AS n, sum(w) AS mass FROM swr_counts GROUP BY w)
SELECT swr_fit(array_agg(n ORDER BY w), array_agg(mass ORDER BY w)) AS weighted_after_deletes,
       swr_fit(array_agg(n ORDER BY w), array_fill(1.0::float8, ARRAY[10])) AS uniform_passes_must_fail
  FROM c;
SELECT max(k) AS max_key FROM swr_draw JOIN swr_s USING (id);
RESET abtree.swr_index;

-- a partitioned table: the partitions in proportion to their visible
-- weight (one of them has 900 deleted rows VACUUM has not removed), and
-- uniform over the visible rows
CREATE TABLE swr_sp (id int, p int) PARTITION BY LIST (p);
CREATE TABLE swr_sp1 PARTITION OF swr_sp FOR VALUES IN (1);
CREATE TABLE swr_sp2 PARTITION OF swr_sp FOR VALUES IN (2);
CREATE TABLE swr_sp3 PARTITION OF swr_sp FOR VALUES IN (3) WITH (autovacuum_enabled = off);
INSERT INTO swr_sp SELECT i, CASE WHEN i <= 300 THEN 1 WHEN i <= 900 THEN 2 ELSE 3 END
  FROM generate_series(1, 2100) i ORDER BY random();
CREATE INDEX ON swr_sp USING abtree (id);
DELETE FROM swr_sp WHERE p = 3 AND id % 4 <> 0;
CREATE TABLE swr_spd AS SELECT id, p FROM swr_sp TABLESAMPLE swr(60000) REPEATABLE (0.7);
SELECT count(*) AS draws, count(*) FILTER (WHERE p = 3 AND id % 4 <> 0) AS deleted_rows
  FROM swr_spd;
WITH c AS (SELECT p, count(*) AS n FROM swr_spd GROUP BY p)
SELECT swr_fit(array_agg(n ORDER BY p), '{300, 600, 300}') AS by_visible_weight,
       swr_fit(array_agg(n ORDER BY p), '{300, 600, 1200}') AS by_stored_weight_must_fail,
       swr_fit(array_agg(n ORDER BY p), '{1, 1, 1}') AS n_per_partition_must_fail
  FROM c;
WITH c AS (SELECT s.id, count(d.id) AS n FROM swr_sp s LEFT JOIN swr_spd d USING (id) GROUP BY s.id)
SELECT swr_fit(array_agg(n ORDER BY id), array_agg(1.0 ORDER BY id)) AS uniform_over_rows
  FROM c;
DROP TABLE swr_sp, swr_spd;

DROP VIEW swr_counts;
DROP TABLE swr_s, swr_draw, swr_crit;
DROP FUNCTION swr_fit(bigint[], float8[]);
