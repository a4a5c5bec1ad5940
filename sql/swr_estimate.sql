--
-- swr_avg, swr_sum and swr_count: estimates with standard errors and 95%
-- confidence intervals from a TABLESAMPLE swr sample (the formulas are at
-- the top of src/swr/swr_estimate.c).
--
-- 1. Known answers on small inputs (VALUES lists, no sampling), computed
--    by hand in the comments; numbers rounded to 6 decimals, so that the
--    last bits of float8 arithmetic do not matter.
-- 2. Equivalences, scale invariance, precision, partial aggregates.
-- 3. Bad input, by SQLSTATE where PostgreSQL's own messages could differ
--    between versions.
-- 4. Coverage: how many of 200 intervals from fixed-seed samples contain
--    the exact answer.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

-- (estimate, std_error, ci_low, ci_high, sample_rows), rounded
CREATE FUNCTION est_r(e swr_estimate, digits int DEFAULT 6) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT format('(%s, %s, %s, %s, %s)',
                round(e.estimate::numeric, digits), round(e.std_error::numeric, digits),
                round(e.ci_low::numeric, digits), round(e.ci_high::numeric, digits),
                e.sample_rows)
$$;

--
-- 1. Known answers.  z = 1.959963984540054.
--

-- mean of 1, 2, 3, 4 (the NULL is not a row of AVG): 2.5; s^2 = 5/3,
-- std_error = sqrt(5/3 / 4) = 0.645497, half-width z * 0.645497 = 1.265151
SELECT est_r(swr_avg(x)) FROM (VALUES (1.0), (2), (3), (4), (NULL)) v(x);
-- weights 1, 2, 4: a = 1, 1/2, 1/4, sum a = 7/4, sum a x = 30,
-- R = 120/7 = 17.142857; sum a^2 (x - R)^2 = (2500 + 100 + 1600) / 49 = 600/7,
-- std_error^2 = 3/2 * 600/7 / (7/4)^2 = 14400/343, std_error = 6.479391
SELECT est_r(swr_avg(x, w)) FROM (VALUES (10.0, 1.0), (20, 2), (40, 4)) v(x, w);
-- y = 100 x, NULL as 0: 100, 200, 0, 500; mean 200; s^2 = 140000/3,
-- std_error = sqrt(140000/3 / 4) = 108.012345
SELECT est_r(swr_sum(x, 100)) FROM (VALUES (1.0), (2), (NULL), (5)) v(x);
-- y = 12 x / w: 36, 0, 24; mean 20; s^2 = 336, std_error = sqrt(112) = 10.583005
SELECT est_r(swr_sum(x, w, 12)) FROM (VALUES (3.0, 1.0), (NULL, 2), (8, 4)) v(x, w);
-- k = 2 of n = 4 (NULL is false): 100 * 2/4 = 50; y = 100, 0, 0, 100,
-- std_error = sqrt(10000/3 / 4) = 28.867513; Wilson:
-- (2k + z^2 -+ z sqrt(z^2 + 4k(n-k)/n)) / (2 (n + z^2)) = 0.150039, 0.849961
SELECT est_r(swr_count(p, 100)) FROM (VALUES (true), (false), (NULL), (true)) v(p);
-- k = 0 of 10: Wilson gives [0, z^2 / (n + z^2)] = [0, 0.277533], where Wald
-- would give [0, 0]; k = n: [1 - 0.277533, 1]
SELECT est_r(swr_count(g < 0, 1000)) AS none, est_r(swr_count(g > 0, 1000)) AS all_rows
  FROM generate_series(1, 10) g;
-- weighted: y = 100 [p] / w = 50, 0, 0, 25; mean 18.75; s^2 = 1718.75/3,
-- std_error = 11.967839; Wald 18.75 -+ 23.456533, the lower end cut at 0
SELECT est_r(swr_count(p, w, 100))
  FROM (VALUES (true, 2.0), (false, 1), (NULL, 5), (true, 4)) v(p, w);

-- no rows: NULL, like AVG
SELECT swr_avg(x) IS NULL AS avg, swr_avg(x, 1) IS NULL AS avg_w,
       swr_sum(x, 10) IS NULL AS sum, swr_sum(x, 1, 10) IS NULL AS sum_w,
       swr_count(x > 0, 10) IS NULL AS count, swr_count(x > 0, 1, 10) IS NULL AS count_w
  FROM (VALUES (1.0)) v(x) WHERE false;
-- rows, but no x: swr_avg has no estimate and rests on 0 rows; swr_sum's
-- estimate is 0, and so is its spread
SELECT swr_avg(x) AS avg, swr_sum(x, 10) AS sum
  FROM (VALUES (NULL::float8), (NULL), (NULL)) v(x);
-- one usable row: an estimate, but no std_error or interval
SELECT swr_avg(x) AS avg, swr_avg(x, 2) AS avg_w, swr_sum(x, 10) AS sum,
       swr_count(x > 0, 10) AS count, swr_count(x > 0, 5, 10) AS count_w
  FROM (VALUES (3.0)) v(x);
SELECT swr_avg(x) AS avg FROM (VALUES (3.0), (NULL)) v(x);
-- the fields, by name
SELECT (swr_avg(x)).estimate, (swr_avg(x)).sample_rows
  FROM (VALUES (1.0), (2)) v(x);
-- one total per group; groups may have different ones
SELECT g, est_r(swr_sum(x, t)) AS sum, est_r(swr_count(x > 1, t)) AS count
  FROM (VALUES (1, 1.0, 10), (1, 2, 10), (2, 1, 50), (2, 3, 50), (2, NULL, 50)) v(g, x, t)
 GROUP BY g ORDER BY g;
-- infinities and NaN among the values: as AVG and SUM do
SELECT swr_avg(x) AS avg, swr_sum(x, 10) AS sum
  FROM (VALUES ('Infinity'::float8), (1)) v(x);
SELECT swr_avg(x) AS avg FROM (VALUES ('NaN'::float8), (1)) v(x);
-- as a window aggregate (running estimates)
SELECT i, est_r(swr_avg(i) OVER (ORDER BY i), 3)
  FROM generate_series(1, 3) i;

--
-- 2. Equivalences, scale, precision, partial aggregates
--
CREATE TABLE est_v AS
  SELECT i, (i * 37 % 101)::float8 AS x, 1 + i % 7 AS w,
         CASE WHEN i % 3 = 0 THEN NULL ELSE i % 5 < 2 END AS p
    FROM generate_series(1, 500) i;
-- equal weights give the unweighted answers (with the total weight of
-- the same population: 3 * 500; the weighted count's interval is Wald, not
-- Wilson); swr_count is swr_sum of 1 where pred holds
SELECT est_r(swr_avg(x, 7)) = est_r(swr_avg(x)) AS avg,
       est_r(swr_sum(x, 3, 1500)) = est_r(swr_sum(x, 500)) AS sum,
       (swr_count(p, 500)).estimate = (swr_count(p, 1, 500)).estimate AS count,
       round((swr_count(p, 500)).std_error::numeric, 9) =
         round((swr_count(p, 1, 500)).std_error::numeric, 9) AS count_error,
       est_r(swr_count(p, 1, 500)) = est_r(swr_sum(CASE WHEN p THEN 1 END, 500)) AS count_is_sum,
       (swr_count(p, 500)).ci_low <> (swr_count(p, 1, 500)).ci_low AS wilson_not_wald
  FROM est_v;
-- the answers do not depend on the weights' unit: scaled by powers of two
-- they are the same to the last bit, whatever the magnitude (subnormal
-- included); scaled by powers of ten, up to the rounding of the weights
SELECT swr_avg(x, w * 2.0 ^ 1000) = swr_avg(x, w) AS avg_huge,
       swr_avg(x, w * 2::float8 ^ -1060) = swr_avg(x, w) AS avg_tiny,
       swr_sum(x, w * 2.0 ^ 1000, 3000 * 2.0 ^ 1000) = swr_sum(x, w, 3000) AS sum_huge,
       swr_sum(x, w * 2::float8 ^ -1070, 3000 * 2::float8 ^ -1070) = swr_sum(x, w, 3000) AS sum_tiny,
       est_r(swr_avg(x, w * 1e300)) = est_r(swr_avg(x, w)) AS avg_1e300,
       est_r(swr_count(p, w * 1e-300, 3000e-300)) = est_r(swr_count(p, w, 3000)) AS count_1e_300
  FROM est_v;
-- extreme weights and totals: the smallest subnormal weight (y = 1024 x:
-- 1024, 2048, 3072), a total of 2^1000 (y = 2^1000 x), values near 1e150
SELECT est_r(swr_sum(x, '4.9e-324', '4.9e-324'::float8 * 1024)) AS subnormal_weight
  FROM (VALUES (1.0), (2), (3)) v(x);
SELECT (h).estimate = 2.0 ^ 1000 * (s).estimate AS huge_total,
       (h).std_error = 2.0 ^ 1000 * (s).std_error AS huge_total_error
  FROM (SELECT swr_sum(x, 2.0 ^ 1000) AS h, swr_sum(x, 1) AS s
          FROM (VALUES (1.0), (2), (3)) v(x)) e;
SELECT round(((e).estimate / 1e150)::numeric, 6) AS estimate,
       round(((e).std_error / 1e150)::numeric, 6) AS std_error
  FROM (SELECT swr_avg(x * 1e150) AS e FROM (VALUES (1.0), (2), (3)) v(x)) s;
-- a million values near 1e9: the spread survives (float8_accum's precision);
-- std_error * sqrt(n) is the sample standard deviation, 0.50000025
SELECT (e).estimate, round(((e).std_error * 1000)::numeric, 12) AS sd_avg,
       round(sd::numeric, 12) AS stddev, (e).sample_rows
  FROM (SELECT swr_avg(1e9 + i % 2) AS e, stddev(1e9 + i % 2) AS sd
          FROM generate_series(1, 1000000) i) s;
SELECT (e).estimate, round(((e).std_error * 1000 / 1e6)::numeric, 12) AS sd_sum
  FROM (SELECT swr_sum(1e9 + i % 2, 1e6) AS e FROM generate_series(1, 1000000) i) s;

-- combine functions, called directly on two halves' states, give the
-- answers over all rows
CREATE AGGREGATE est_avg_state(float8, float8) (
  SFUNC = swr_avg_trans, STYPE = float8[], INITCOND = '{0,0,0,0,0,0,0,0}');
CREATE AGGREGATE est_sum_state(float8, float8, float8) (
  SFUNC = swr_sum_trans, STYPE = float8[], INITCOND = '{0,0,0,0,0,0}');
CREATE AGGREGATE est_count_state(boolean, float8) (
  SFUNC = swr_count_trans, STYPE = float8[], INITCOND = '{0,0,0,0,0,0}');
WITH h AS (SELECT i <= 200 AS first, est_avg_state(x, w * 2.0 ^ (i % 3 * 20)) AS a,
                  est_sum_state(x, w, 3000) AS s, est_count_state(p, 500) AS c
             FROM est_v GROUP BY 1),
     h1 AS (SELECT * FROM h WHERE first), h2 AS (SELECT * FROM h WHERE NOT first)
SELECT est_r(swr_avg_final(swr_avg_combine(h1.a, h2.a))) =
         (SELECT est_r(swr_avg(x, w * 2.0 ^ (i % 3 * 20))) FROM est_v) AS avg,
       est_r(swr_sum_final(swr_sum_combine(h2.s, h1.s))) =
         (SELECT est_r(swr_sum(x, w, 3000)) FROM est_v) AS sum,
       est_r(swr_count_final(swr_sum_combine(h1.c, h2.c))) =
         (SELECT est_r(swr_count(p, 500)) FROM est_v) AS count,
       swr_avg_final(swr_avg_combine(h1.a, '{0,0,0,0,0,0,0,0}')) = swr_avg_final(h1.a) AS avg_empty,
       swr_sum_final(swr_sum_combine('{0,0,0,0,0,0}', h2.s)) = swr_sum_final(h2.s) AS sum_empty
  FROM h1, h2;
-- and in a parallel plan, with partial aggregates
CREATE FUNCTION est_plan_has(query text, node text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    IF line LIKE '%' || node || '%' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$;
CREATE TABLE est_par AS SELECT x, w, p FROM est_v, generate_series(1, 20);
ANALYZE est_par;
BEGIN;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT est_plan_has('SELECT swr_avg(x, w), swr_sum(x, w, 60000), swr_count(p, 10000) FROM est_par',
                    'Partial Aggregate') AS partial;
SELECT est_r(swr_avg(x, w)) AS par_avg, est_r(swr_sum(x, w, 60000)) AS par_sum,
       est_r(swr_count(p, 10000)) AS par_count
  FROM est_par \gset
ROLLBACK;
SELECT est_r(swr_avg(x, w)) = :'par_avg' AS avg, est_r(swr_sum(x, w, 60000)) = :'par_sum' AS sum,
       est_r(swr_count(p, 10000)) = :'par_count' AS count
  FROM est_par;

--
-- 3. Bad input.  Our messages (with their hints) are shown once; the rest
-- by SQLSTATE: 22004 for NULL, 22023 for a bad weight or total, 22003 for
-- overflow, and PostgreSQL's own for wrong types.
--
SELECT swr_avg(x, NULL) FROM (VALUES (1.0)) v(x);
SELECT swr_sum(x, -2, 10) FROM (VALUES (1.0)) v(x);
SELECT swr_count(x > 0, 0) FROM (VALUES (1.0)) v(x);
SELECT swr_sum(x, t) FROM (VALUES (1.0, 100), (2, 100), (3, 101)) v(x, t);
SELECT swr_avg(x) FROM (VALUES (1e200), (-1e200)) v(x);

\set VERBOSITY sqlstate
-- NULL weight or total: a bug in the query, even where x is NULL
SELECT swr_avg(NULL, NULL);
SELECT swr_sum(NULL, NULL, 10);
SELECT swr_count(NULL, NULL, 10);
SELECT swr_sum(1, NULL);
SELECT swr_sum(1, 1, NULL);
SELECT swr_count(true, NULL);
SELECT swr_count(NULL, 1, NULL);
-- weights: negative, zero, negative zero, NaN, infinite
SELECT swr_avg(1, -1);
SELECT swr_avg(1, 0);
SELECT swr_avg(1, '-0');
SELECT swr_sum(1, 'NaN', 10);
SELECT swr_sum(1, 'Infinity', 10);
SELECT swr_count(true, '-Infinity', 10);
SELECT swr_count(false, -1e-300, 10);
-- a huge weight is a weight; one beyond float8 is not a number
SELECT (swr_avg(1, 1e308)).estimate;
SELECT swr_avg(1, '1e309');
-- totals: negative, zero, NaN, infinite; varying within a group (also
-- between partial aggregates); a huge total is a total
SELECT swr_sum(1, -10);
SELECT swr_sum(1, 1, 0);
SELECT swr_count(true, 'NaN');
SELECT swr_count(true, 1, 'Infinity');
SELECT swr_sum(1, '-Infinity');
SELECT swr_count(p, t) FROM (VALUES (true, 10), (false, 10.000001)) v(p, t);
SELECT swr_sum(x, w, t) FROM (VALUES (1.0, 1, 10), (2, 1, NULL)) v(x, w, t);
SELECT swr_sum_combine('{1,1,0,10,1,0}', '{1,1,0,11,1,0}');
SELECT (swr_sum(1, 1e308)).estimate;
-- overflow: of the sums, and of the estimate or interval
SELECT swr_sum(x, 10) FROM (VALUES (1e308), (1e308)) v(x);
SELECT swr_sum(x, 1e300) FROM (VALUES (1e10), (1)) v(x);
SELECT swr_sum(x, 1e-320, 1) FROM (VALUES (1.0), (2)) v(x);
-- wrong types and arities
SELECT swr_avg('abc'::text);
SELECT swr_avg(1, 'abc');
SELECT swr_count(1, 10);
SELECT swr_count(true);
SELECT swr_sum(1);
SELECT swr_sum(1, 2, 3, 4);
SELECT swr_avg(now());
-- the support functions refuse states that are not theirs
SELECT swr_avg_final('{1,2}');
SELECT swr_avg_final('{1,2,0,0,0,0,0,NULL}');
SELECT swr_sum_final('{0.5,0,0,1,0,0}');
SELECT swr_sum_final('{2,3,0,1,0,0}');
SELECT swr_sum_final('{2,1,NaN,1,0,0}');
SELECT swr_count_final('{{1,1,0},{1,0,1}}');
SELECT swr_avg_trans(NULL, 1);
SELECT swr_avg_combine('{0,0,0,0,0,0}', '{0,0,0,0,0,0,0,0}');
\set VERBOSITY default

--
-- 4. Coverage.  A table of 100000 rows with a skewed value (the cube of a
-- spread-out residue, mean 249.5) and a weight correlated with it; one
-- index without weights and one with.  For seeds 1..200, each aggregate's
-- 95% interval from swr(400) either contains the exact answer or not.
--
-- For correct 95% intervals the number that do is Binomial(200, 0.95):
-- mean 190, sd 3.08.  We accept 177..199: P(X <= 176) = 7.20e-5 and
-- P(X = 200) = 3.51e-5, so each of the six checks raises a false alarm with
-- probability 1.07e-4, and one of them or more with at most 6.4e-4 (below
-- 0.1%).  With the fixed seeds the outcome is deterministic.  The upper end
-- catches intervals far too wide (all 200 covering); the narrow_must_fail
-- checks show that intervals half as wide as they should be (covering
-- about 67%) are caught.
--
-- 200 samples are few: intervals that cover 90% instead of 95% still pass
-- with probability 0.80 (85%: 0.10); the README shows cases where the
-- normal approximation is poor.
--
CREATE TABLE est_t (id int, v float8, w int);
INSERT INTO est_t
  SELECT id, ((id * 7919) % 1000) ^ 3 / 1e6, 1 + (id * 7919) % 1000 / 100
    FROM generate_series(1, 100000) id;
CREATE INDEX est_t_u ON est_t USING abtree (id);
CREATE INDEX est_t_w ON est_t USING abtree (id) INCLUDE (w) WITH (weight_column = 'w');
VACUUM ANALYZE est_t;
-- the exact answers: AVG(v), SUM(v) over even ids, COUNT where v > 500
CREATE TABLE est_truth AS
  SELECT avg(v) AS a, sum(v) FILTER (WHERE id % 2 = 0) AS s,
         count(*) FILTER (WHERE v > 500) AS c
    FROM est_t;
SELECT round(a::numeric, 4) AS a, round(s::numeric, 2) AS s, c FROM est_truth;
-- the populations' total weights (abtree_stats() reads the whole index:
-- once, not per sample)
SELECT (abtree_stats('est_t_u')).total_weight AS w_u,
       (abtree_stats('est_t_w')).total_weight AS w_w \gset
SELECT :w_u AS w_u, :w_w AS w_w;

CREATE TABLE est_ci (weighted boolean, agg text, est swr_estimate);
SET abtree.swr_index = est_t_u;
INSERT INTO est_ci
  SELECT false, a.agg, a.est
    FROM generate_series(1, 200) seed,
         LATERAL (SELECT swr_avg(v) AS a,
                         swr_sum(CASE WHEN id % 2 = 0 THEN v END, :w_u) AS s,
                         swr_count(v > 500, :w_u) AS c
                    FROM est_t TABLESAMPLE swr(400) REPEATABLE (seed)) e,
         LATERAL (VALUES ('avg', e.a), ('sum', e.s), ('count', e.c)) a(agg, est);
SET abtree.swr_index = est_t_w;
INSERT INTO est_ci
  SELECT true, a.agg, a.est
    FROM generate_series(1, 200) seed,
         LATERAL (SELECT swr_avg(v, w) AS a,
                         swr_sum(CASE WHEN id % 2 = 0 THEN v END, w, :w_w) AS s,
                         swr_count(v > 500, w, :w_w) AS c
                    FROM est_t TABLESAMPLE swr(400) REPEATABLE (seed)) e,
         LATERAL (VALUES ('avg', e.a), ('sum', e.s), ('count', e.c)) a(agg, est);
RESET abtree.swr_index;

WITH c AS (
  SELECT weighted, agg, count(*) AS samples, bool_and((est).sample_rows = 400) AS all_400,
         count(*) FILTER (WHERE (est).ci_low <= t AND t <= (est).ci_high) AS covered,
         count(*) FILTER (WHERE abs((est).estimate - t) <= 0.98 * (est).std_error) AS narrow
    FROM est_ci,
         LATERAL (SELECT CASE agg WHEN 'avg' THEN a WHEN 'sum' THEN s ELSE c END AS t
                    FROM est_truth) tr
   GROUP BY weighted, agg)
SELECT weighted, agg, samples, all_400, covered BETWEEN 177 AND 199 AS coverage_ok,
       narrow BETWEEN 177 AND 199 AS narrow_must_fail
  FROM c ORDER BY weighted, agg;

--
-- An aggregate that assumes the other kind of sample is refused (issue 25,
-- item 8): the unweighted form over weighted draws gave 465.9 in
-- [460, 472] against a true 332.8, with nothing to show it.  Checked when
-- the executor starts, after each scan has chosen its index, wherever the
-- sample's rows reach the aggregate: directly, through a subquery, a CTE,
-- a join, a window.  A constant weight is the unweighted form.
--
SET abtree.swr_index = est_t_w;
SELECT swr_avg(v) FROM est_t TABLESAMPLE swr(400) REPEATABLE (1);
SELECT swr_sum(v, :w_w) FROM est_t TABLESAMPLE swr(400) REPEATABLE (1);
SELECT swr_count(v > 500, :w_w) FROM (SELECT * FROM est_t TABLESAMPLE swr(400) REPEATABLE (1) LIMIT 300) s;
WITH s AS MATERIALIZED (SELECT * FROM est_t TABLESAMPLE swr(400) REPEATABLE (1))
SELECT (swr_avg(v)).estimate > 0 FROM s;
SELECT swr_avg(v) OVER () FROM est_t TABLESAMPLE swr(3) REPEATABLE (1);
SELECT (swr_avg(v, 1)).estimate > 0 FROM est_t TABLESAMPLE swr(400) REPEATABLE (1);
-- matching forms work, also beside a join
SELECT abs((e).estimate - a) < 4 * (e).std_error AS near_truth
  FROM (SELECT swr_avg(v, w) AS e FROM est_t TABLESAMPLE swr(400) REPEATABLE (1)) s, est_truth;
SELECT (swr_avg(est_t.v, est_t.w)).sample_rows
  FROM est_t TABLESAMPLE swr(400) REPEATABLE (1) JOIN (VALUES (1)) x(one) ON true;
-- plain EXPLAIN computes nothing and still shows the plan
EXPLAIN (COSTS OFF) SELECT swr_avg(v) FROM est_t TABLESAMPLE swr(400);
-- the index is chosen at execution: a prepared statement follows the setting
PREPARE est_p AS SELECT (swr_avg(v)).sample_rows FROM est_t TABLESAMPLE swr(400) REPEATABLE (1);
SET abtree.swr_index = est_t_u;
EXECUTE est_p;
SELECT (swr_avg(v, 2)).sample_rows FROM est_t TABLESAMPLE swr(400) REPEATABLE (1);
SELECT swr_avg(v, w) FROM est_t TABLESAMPLE swr(400) REPEATABLE (1);
SELECT swr_sum(v, w, :w_u) FROM est_t TABLESAMPLE swr(400) REPEATABLE (1);
SET abtree.swr_index = est_t_w;
EXECUTE est_p;
DEALLOCATE est_p;
-- an aggregate over aggregated rows is not over the sample: not checked
SELECT (swr_avg(n)).sample_rows
  FROM (SELECT id % 3 AS g, count(*)::float8 AS n
          FROM est_t TABLESAMPLE swr(400) REPEATABLE (1) GROUP BY 1) s;
RESET abtree.swr_index;

DROP TABLE est_v, est_par, est_t, est_truth, est_ci;
DROP AGGREGATE est_avg_state(float8, float8);
DROP AGGREGATE est_sum_state(float8, float8, float8);
DROP AGGREGATE est_count_state(boolean, float8);
DROP FUNCTION est_plan_has(text, text);
DROP FUNCTION est_r(swr_estimate, int);
