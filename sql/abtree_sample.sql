--
-- abtree sampling: chi-square goodness-of-fit tests of the draws.
--
-- Each test draws N samples with a fixed seed and compares the counts per
-- category with the expected ones.  The critical values are the chi-square
-- quantiles at 1 - alpha with alpha = 0.001, so with random seeds each test
-- would fail by chance once in 1000 runs (its false-alarm rate); with the
-- fixed seeds here the outcome is deterministic.  A sampler that is biased
-- by a few percent on some category fails them (see the "biased" checks,
-- which run the same test against a wrong expectation and must fail).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

-- chi-square statistic of observed counts against expected proportions
CREATE FUNCTION abt_chisq(observed bigint[], expected float8[]) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
  SELECT sum((o - e * n) ^ 2 / (e * n))
    FROM unnest(observed, expected) AS u(o, e),
         (SELECT sum(x) AS n FROM unnest(observed) x) t
$$;
-- 0.999 quantiles of chi-square for the degrees of freedom used below
CREATE TABLE abt_chisq_crit (df int PRIMARY KEY, crit float8);
INSERT INTO abt_chisq_crit VALUES (49, 85.351), (29, 58.301), (9, 27.877);

SELECT setseed(0.5);
-- 50 keys, 40 rows each, inserted in random order (so the tree has splits)
CREATE TABLE abt_s (id serial, k int, w int);
INSERT INTO abt_s (k, w)
  SELECT k, 1 + k % 10 FROM generate_series(0, 49) k, generate_series(1, 40) r
  ORDER BY random();
CREATE INDEX abt_s_k ON abt_s USING abtree (k) WITH (fillfactor = 20);
INSERT INTO abt_s (k, w)
  SELECT k, 1 + k % 10 FROM generate_series(0, 49) k, generate_series(1, 40) r
  ORDER BY random();
SELECT height >= 2 AS has_internal_pages, entries FROM abtree_stats('abt_s_k');

-- uniform: every entry equally likely, so every key 1/50
CREATE TABLE abt_draw AS
  SELECT s.k FROM abtree_sample_tids('abt_s_k', 50000, 0.123) t
  JOIN abt_s s ON s.ctid = t;
SELECT count(*) AS draws FROM abt_draw;
WITH c AS (SELECT k, count(*) AS n FROM abt_draw GROUP BY k ORDER BY k)
SELECT count(*) AS keys_seen,
       abt_chisq(array_agg(n), array_fill(1.0 / 50, ARRAY[50])) <
         (SELECT crit FROM abt_chisq_crit WHERE df = 49) AS uniform
  FROM c;
-- the test can fail: a 10% bias on half of the keys is detected
WITH c AS (SELECT k, count(*) AS n FROM abt_draw GROUP BY k ORDER BY k)
SELECT abt_chisq(array_agg(n), array_agg(CASE WHEN k < 25 THEN 1.1 ELSE 0.9 END / 50 ORDER BY k)) <
         (SELECT crit FROM abt_chisq_crit WHERE df = 49) AS biased_passes
  FROM c;

-- weighted: weight w = 1 + k % 10, so the ten weight classes are drawn
-- in proportion (w * rows of that weight)
CREATE INDEX abt_s_kw ON abt_s USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE TABLE abt_wdraw AS
  SELECT s.w FROM abtree_sample_tids('abt_s_kw', 50000, 0.456) t
  JOIN abt_s s ON s.ctid = t;
WITH c AS (SELECT w, count(*) AS n FROM abt_wdraw GROUP BY w ORDER BY w),
     e AS (SELECT w, w * count(*)::float8 AS mass FROM abt_s GROUP BY w ORDER BY w)
SELECT abt_chisq((SELECT array_agg(n ORDER BY w) FROM c),
                 (SELECT array_agg(mass / (SELECT sum(mass) FROM e) ORDER BY w) FROM e)) <
         (SELECT crit FROM abt_chisq_crit WHERE df = 9) AS proportional_to_weight;
-- uniform expectations must fail on weighted draws
WITH c AS (SELECT w, count(*) AS n FROM abt_wdraw GROUP BY w ORDER BY w)
SELECT abt_chisq(array_agg(n ORDER BY w), array_fill(0.1, ARRAY[10])) <
         (SELECT crit FROM abt_chisq_crit WHERE df = 9) AS uniform_passes_on_weighted
  FROM c;

-- range: uniform over the keys in [10, 19], nothing outside
CREATE TABLE abt_rdraw AS
  SELECT s.k FROM abtree_sample_tids_range('abt_s_k', 20000, 0.321, 10, 19) t
  JOIN abt_s s ON s.ctid = t;
SELECT count(*) AS draws, min(k), max(k) FROM abt_rdraw;
WITH c AS (SELECT k, count(*) AS n FROM abt_rdraw GROUP BY k ORDER BY k)
SELECT abt_chisq(array_agg(n), array_fill(1.0 / 10, ARRAY[10])) <
         (SELECT crit FROM abt_chisq_crit WHERE df = 9) AS uniform_in_range
  FROM c;
-- open bounds, a one-key range, an empty range, cross-type bounds
SELECT count(*), min(s.k), max(s.k)
  FROM abtree_sample_tids_range('abt_s_k', 1000, 1, NULL, 4) t JOIN abt_s s ON s.ctid = t;
SELECT count(*), min(s.k), max(s.k)
  FROM abtree_sample_tids_range('abt_s_k', 1000, 1, 45, NULL::int) t JOIN abt_s s ON s.ctid = t;
SELECT count(*), min(s.k), max(s.k)
  FROM abtree_sample_tids_range('abt_s_k', 1000, 1, 7, 7) t JOIN abt_s s ON s.ctid = t;
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', 1000, 1, 100, 200);
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', 1000, 1, 20, 10);
SELECT count(*), min(s.k), max(s.k)
  FROM abtree_sample_tids_range('abt_s_k', 1000, 1, 3::bigint, 5::bigint) t JOIN abt_s s ON s.ctid = t;
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', 10, 1, 'a'::text, 'b'::text);
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', 10, 1, NULL, NULL);
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', 10, 1, NULL::int, NULL::int);
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', -5, 1, 1, 2);
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', 0, 1, 1, 2);
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', 2000000000, 1, 1, 2);
SELECT count(*) FROM abtree_sample_tids_range(NULL, 10, 1, 1, 2);
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', NULL, 1, 1, 2);
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', 10, 'NaN', 1, 2);
SELECT count(*) FROM abtree_sample_tids_range('abt_s_k', 10, 1, 1, 'x');
SELECT count(*) FROM abtree_sample_tids_range('abt_s', 10, 1, 1, 2);

-- after deletes and VACUUM: uniform over the remaining entries
DELETE FROM abt_s WHERE k >= 30;
VACUUM (INDEX_CLEANUP ON) abt_s;
SELECT abtree_verify('abt_s_k', true);
CREATE TABLE abt_vdraw AS
  SELECT s.k FROM abtree_sample_tids('abt_s_k', 40000, 0.789) t
  JOIN abt_s s ON s.ctid = t;
SELECT count(*) AS draws, max(k) AS max_key FROM abt_vdraw;
WITH c AS (SELECT k, count(*) AS n FROM abt_vdraw GROUP BY k ORDER BY k)
SELECT abt_chisq(array_agg(n), array_fill(1.0 / 30, ARRAY[30])) <
         (SELECT crit FROM abt_chisq_crit WHERE df = 29) AS uniform_after_vacuum
  FROM c;

-- the same seed gives the same draws; another seed others
SELECT (SELECT array_agg(t) FROM abtree_sample_tids('abt_s_k', 20, 42) t) =
       (SELECT array_agg(t) FROM abtree_sample_tids('abt_s_k', 20, 42) t) AS repeatable,
       (SELECT array_agg(t) FROM abtree_sample_tids('abt_s_k', 20, 42) t) <>
       (SELECT array_agg(t) FROM abtree_sample_tids('abt_s_k', 20, 43) t) AS seeds_differ;

-- batched descents (src/abtree/README "Batched draws"): a draw follows
-- its own variate whatever else the batch holds, so at rest the first k
-- draws of n are the draws of k, for plain and weighted draws on a
-- three-level tree (k = 1 is a descent of its own)
CREATE TABLE abt_b (k int, w int, pad text);
INSERT INTO abt_b SELECT g, 1 + g % 7, repeat(md5(g::text), 10) FROM generate_series(1, 30000) g;
CREATE INDEX abt_b_k ON abt_b USING abtree (pad);
CREATE INDEX abt_b_kw ON abt_b USING abtree (pad) INCLUDE (w) WITH (weight_column = 'w');
SELECT height FROM abtree_stats('abt_b_k');
SELECT idx, k,
       (SELECT array_agg(t) FROM (SELECT t FROM abtree_sample_tids(idx, 3000, 7) t LIMIT k) s) =
       (SELECT array_agg(t) FROM abtree_sample_tids(idx, k, 7) t) AS prefix_equal
  FROM unnest(ARRAY['abt_b_k', 'abt_b_kw']::regclass[]) idx, unnest(ARRAY[1, 2, 17, 500]) k
  ORDER BY 1, 2;
DROP TABLE abt_b;

-- HAS_INVALID (src/abtree/README "Sampling"): MARK_VALID leaves the flag
-- on the leaves inserts went to; a draw that sums such a leaf and finds
-- no entry waiting clears it, after which draws index the leaf directly
-- (and give the same draws).  The flags byte is 10 bytes into the special
-- space: 0x01 leaf, 0x08 HAS_INVALID.
CREATE EXTENSION pageinspect;
CREATE TABLE abt_hi (k int);
CREATE INDEX abt_hi_k ON abt_hi USING abtree (k);
INSERT INTO abt_hi SELECT g FROM generate_series(1, 3000) g;
CREATE FUNCTION abt_leaf_flags(idx regclass, OUT leaves int, OUT flagged int)
LANGUAGE sql AS $$
  SELECT count(*) FILTER (WHERE f & 1 = 1)::int, count(*) FILTER (WHERE f & 9 = 9)::int
    FROM generate_series(1, pg_relation_size(idx) / 8192 - 1) b,
         LATERAL (SELECT get_raw_page(idx::text, b::int) AS p) r,
         LATERAL (SELECT get_byte(p, (page_header(p)).special + 10) AS f) x $$;
SELECT leaves > 1 AS several_leaves, flagged > 0 AS flagged_after_inserts
  FROM abt_leaf_flags('abt_hi_k');
SELECT array_agg(t) AS summed FROM abtree_sample_tids('abt_hi_k', 3000, 11) t \gset
SELECT flagged AS flagged_after_draws FROM abt_leaf_flags('abt_hi_k');
SELECT (SELECT array_agg(t) FROM abtree_sample_tids('abt_hi_k', 3000, 11) t) = :'summed'
       AS same_draws_indexed;
SELECT abtree_verify('abt_hi_k', exact => true);
DROP TABLE abt_hi;
DROP FUNCTION abt_leaf_flags(regclass);
DROP EXTENSION pageinspect;

-- Deferred pages (README, "Batched draws"): a batch that reaches a page a
-- writer holds exclusively visits it after the level's other pages.  The
-- order of visits changes no draw's route: with abtree.debug_defer_draws,
-- which defers every other page of a level (16 at most), the same seed gives the
-- same draws, draw for draw, also within a key range and on a weighted
-- index, and abtree_status counts the pages put off.
CREATE TABLE abt_df (k int, w int);
INSERT INTO abt_df SELECT g, 1 + g % 7 FROM generate_series(1, 200000) g;
CREATE INDEX abt_df_k ON abt_df USING abtree (k);
CREATE INDEX abt_df_w ON abt_df USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
SELECT array_agg(t) AS df_plain FROM abtree_sample_tids('abt_df_k', 5000, 0.77) t \gset
SELECT array_agg(t) AS df_range
  FROM abtree_sample_tids_range('abt_df_k', 3000, 0.5, 20000, 150000) t \gset
SELECT array_agg(t) AS df_weighted FROM abtree_sample_tids('abt_df_w', 5000, 0.25) t \gset
SELECT value::bigint AS df_deferred FROM abtree_status() WHERE item = 'pages_deferred' \gset
SET abtree.debug_defer_draws = on;
SELECT (SELECT array_agg(t) FROM abtree_sample_tids('abt_df_k', 5000, 0.77) t) = :'df_plain'
       AS same_draws_deferred,
       (SELECT array_agg(t)
          FROM abtree_sample_tids_range('abt_df_k', 3000, 0.5, 20000, 150000) t) = :'df_range'
       AS same_range_draws_deferred,
       (SELECT array_agg(t) FROM abtree_sample_tids('abt_df_w', 5000, 0.25) t) = :'df_weighted'
       AS same_weighted_draws_deferred;
RESET abtree.debug_defer_draws;
SELECT value::bigint > :df_deferred AS pages_deferred
  FROM abtree_status() WHERE item = 'pages_deferred';
DROP TABLE abt_df;

-- HOT-updated rows (README, "abtree_sample_tids"): an entry points to the
-- root of its row's HOT chain, and the row the statement sees can be a later
-- member.  Each draw comes out as the TID of the member the snapshot sees, so
-- that joining on ctid keeps it.  Before, half of this table (rows updated
-- in place) was never joined: 20000 draws gave about 10000 rows, all of
-- them of rows never updated, with no error.  A chain the snapshot sees no
-- member of (its row deleted) still comes out as the entry's TID, which the
-- join drops.  Fixed seeds; p = 0.5 of updated rows, the band is 8.5
-- standard deviations wide (false alarm below 1e-16).
CREATE TABLE abt_hot (k int, v int) WITH (fillfactor = 40, autovacuum_enabled = off);
INSERT INTO abt_hot SELECT g, 0 FROM generate_series(1, 4000) g;
CREATE INDEX abt_hot_k ON abt_hot USING abtree (k);
UPDATE abt_hot SET v = 1 WHERE k % 2 = 0;
UPDATE abt_hot SET v = 2 WHERE k % 4 = 0;
SELECT pg_stat_force_next_flush() IS NULL AS flushed \gset
SELECT n_tup_hot_upd > 2000 AS hot_chains FROM pg_stat_user_tables WHERE relname = 'abt_hot';
SELECT count(*) AS hot_joined,
       abs(avg((v > 0)::int) - 0.5) < 0.03 AS hot_share_ok
  FROM abtree_sample_tids('abt_hot_k', 20000, 0.31) t JOIN abt_hot h ON h.ctid = t;
SELECT count(*) AS hot_range_joined, bool_and(k BETWEEN 1001 AND 3000) AS hot_in_range,
       abs(avg((v > 0)::int) - 0.5) < 0.03 AS hot_range_share_ok
  FROM abtree_sample_tids_range('abt_hot_k', 20000, 0.32, 1001, 3000) t
  JOIN abt_hot h ON h.ctid = t;
DELETE FROM abt_hot WHERE k > 2000;
SELECT count(*) AS hot_sampled,
       abs(count(h.k) / 20000.0 - 0.5) < 0.03 AS hot_deleted_dropped,
       bool_and(h.k <= 2000) AS hot_live_only
  FROM abtree_sample_tids('abt_hot_k', 20000, 0.33) t LEFT JOIN abt_hot h ON h.ctid = t;
DROP TABLE abt_hot;

-- An invalid index (a failed CREATE INDEX CONCURRENTLY, or one still being
-- built) lacks entries of rows: draws and range weights through it would
-- leave them out with no error.  Before, abtree_sample_tids gave no rows and
-- abtree_range_weight 0 for this table of 1000 rows.  Both refuse it now,
-- as TABLESAMPLE swr does; REINDEX makes it valid.
CREATE TABLE abt_iv (k int);
INSERT INTO abt_iv SELECT g FROM generate_series(1, 1000) g;
CREATE INDEX CONCURRENTLY abt_iv_e ON abt_iv USING abtree ((100 / (k - 1000)));
SELECT indisvalid FROM pg_index WHERE indexrelid = 'abt_iv_e'::regclass;
SELECT count(*) FROM abtree_sample_tids('abt_iv_e', 100, 1);
SELECT count(*) FROM abtree_sample_tids_range('abt_iv_e', 100, 1, 1, 5);
SELECT abtree_range_weight('abt_iv_e', NULL::int, NULL::int);
DELETE FROM abt_iv WHERE k = 1000;
REINDEX INDEX abt_iv_e;
SELECT count(*) FROM abtree_sample_tids('abt_iv_e', 100, 1);
SELECT abtree_range_weight('abt_iv_e', NULL::int, NULL::int);
DROP TABLE abt_iv;

DROP TABLE abt_s, abt_draw, abt_wdraw, abt_rdraw, abt_vdraw, abt_chisq_crit;
DROP FUNCTION abt_chisq(bigint[], float8[]);
