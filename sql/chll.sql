--
-- chll: counting HyperLogLog sketches (src/hll/README).  The thesis's
-- worked examples, the SQL API with good and bad arguments, hashing,
-- aggregates and union.  I/O is in chll_io, workloads in chll_workload.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

-- add each 64-bit hash of hs to s n times, or remove it -n times
CREATE FUNCTION chll_t_repeat(s chll, hs bigint[], n int) RETURNS chll
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	h bigint;
BEGIN
	FOREACH h IN ARRAY hs LOOP
		FOR i IN 1..abs(n) LOOP
			IF n > 0 THEN
				s := chll_add_hash(s, h);
			ELSE
				s := chll_remove_hash(s, h);
			END IF;
		END LOOP;
	END LOOP;
	RETURN s;
END $$;

-- a hash in bucket b (of 2^log2m) with z leading zeros below the bucket bits
CREATE FUNCTION chll_t_hash(log2m int, b int, z int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
	SELECT (b::bigint << (64 - log2m)) | (1::bigint << (63 - log2m - z))
$$;

-- ---------------------------------------------------------------------------
-- Empty sketches and bucket counts
-- ---------------------------------------------------------------------------
SELECT * FROM chll_info(chll_create());
SELECT buckets, bytes, overflow_capacity FROM chll_info(chll_create(16));
SELECT buckets, bytes, overflow_capacity FROM chll_info(chll_create(32768));
SELECT chll_create(65536);
SELECT chll_estimate(chll_create(64)) AS empty_estimate;

SELECT chll_create(NULL);
SELECT chll_create(-512);
SELECT chll_create(0);
SELECT chll_create(8);
SELECT chll_create(100);
SELECT chll_create(131072);
SELECT chll_create(2147483647);
SELECT chll_create('many');
SELECT chll_create(512.5);
SELECT chll_create(512, 2);

-- ---------------------------------------------------------------------------
-- Figure 6.2: one hash value in bucket 2, with 3 leading zeros, added
-- 2000 times to a 64-bucket sketch
-- ---------------------------------------------------------------------------
SELECT ARRAY[chll_t_hash(6, 2, 3)] AS h62 \gset
SELECT * FROM chll_counters(chll_t_repeat(chll_create(64), :'h62', 2000));
-- The slot is the top of its bucket, so above 128 an overflow entry counts
-- it exactly: removing all 2000 gives back the empty sketch, byte for byte.
SELECT (chll_info(s)).items, s::text = chll_create(64)::text AS empty_again
  FROM (SELECT chll_t_repeat(chll_t_repeat(chll_create(64), :'h62', 2000), :'h62', -2000) AS s) x;
-- A frequent slot more than 3 below the top slot of its bucket (here a
-- value with 10 leading zeros is in bucket 2 too) is not worth an overflow
-- entry: it counts the thesis's way, exactly up to 128 and then as a byte
-- v > 128 standing for [128 + 2^(v-129), 128 + 2^(v-128)].  The thesis
-- expects 139, the range [1152, 2176].
CREATE TEMP TABLE chll_fig62 AS
	SELECT chll_t_repeat(chll_add_hash(chll_create(64), chll_t_hash(6, 2, 10)),
						 :'h62', 2000) AS s;
SELECT c.*, CASE WHEN NOT exact THEN 128 + 2 ^ (c.raw - 129) END AS range_lo,
	   CASE WHEN NOT exact THEN 128 + 2 ^ (c.raw - 128) END AS range_hi
  FROM chll_fig62, chll_counters(s) c ORDER BY zeros;
SELECT items, exact, overflow_used FROM chll_fig62, chll_info(s);
-- Removing the 2000 again: the probabilistic counter need not come back
-- to 0, but the bucket's exact count does once its last value is gone,
-- and that clears the bucket.
UPDATE chll_fig62 SET s = chll_t_repeat(s, :'h62', -2000);
SELECT c.bucket, c.zeros, c.raw, i.items FROM chll_fig62, chll_counters(s) c, chll_info(s) i;
UPDATE chll_fig62 SET s = chll_remove_hash(s, chll_t_hash(6, 2, 10));
SELECT (chll_info(s)).items, s::text = chll_create(64)::text AS empty_again FROM chll_fig62;

-- ---------------------------------------------------------------------------
-- Figure 6.3: a table of N = 8 rows with D = 4 distinct tuples (A four
-- times, B twice, C and D once: F1 = 2, F2 = 1, F4 = 1), and a sample of
-- n = 4 rows with d = 3 (A twice, B and C once: f1 = 2, f2 = 1)
-- ---------------------------------------------------------------------------
CREATE TEMP TABLE chll_fig63 (id int, t text, sampled bool);
INSERT INTO chll_fig63 VALUES
	(1, 'A', true), (2, 'A', false), (3, 'A', true), (4, 'A', false),
	(5, 'B', true), (6, 'B', false), (7, 'C', true), (8, 'D', false);
SELECT round(chll_estimate(chll_agg(t))) AS d_table,
	   round(chll_estimate(chll_agg(t) FILTER (WHERE sampled))) AS d_sample,
	   (chll_info(chll_agg(t))).items AS n_table
  FROM chll_fig63;
-- the table's sketch minus the rows not sampled is the sample's sketch
SELECT chll_remove_all(chll_agg(t), array_agg(t) FILTER (WHERE NOT sampled))::text
	   = (chll_agg(t) FILTER (WHERE sampled))::text AS remove_is_exact
  FROM chll_fig63;
-- per-value multiplicities survive in the counters: 8 values, 4 slots
SELECT count(*) AS slots, sum(count) AS values, bool_and(exact) AS exact
  FROM chll_counters((SELECT chll_agg(t) FROM chll_fig63));

-- ---------------------------------------------------------------------------
-- Figure 6.5: two columns of N = 100,000 rows.  Column a has D_1 = 50,000
-- values, F_{1,1} = 25,000 of them singletons (the others three times);
-- column b has 2.  The tuples (a, b): F_1 = 50,000 singletons, D = 75,000.
-- The sketches estimate each D_j, which bounds D (inequality 6.15):
-- max_j D_j <= D <= prod_j D_j.
-- ---------------------------------------------------------------------------
CREATE TEMP TABLE chll_fig65 AS
	SELECT r,
		   CASE WHEN r <= 25000 THEN r ELSE 25001 + (r - 25001) / 3 END AS a,
		   CASE WHEN r > 25000 AND (r - 25001) % 3 = 2 THEN 1 ELSE 0 END AS b
	  FROM generate_series(1, 100000) r;
SELECT count(DISTINCT a) AS d1, count(DISTINCT b) AS d2,
	   count(DISTINCT (a, b)) AS d,
	   (SELECT count(*) FROM (SELECT 1 FROM chll_fig65 GROUP BY a, b HAVING count(*) = 1) s) AS f1
  FROM chll_fig65;
CREATE TEMP TABLE chll_fig65_est AS
	SELECT chll_estimate(chll_agg(a)) AS d1, chll_estimate(chll_agg(b)) AS d2,
		   chll_estimate(chll_agg((a, b))) AS d
	  FROM chll_fig65;
SELECT abs(d1 / 50000 - 1) < 0.05 AS d1_within_5pct,
	   round(d2) AS d2,
	   abs(d / 75000 - 1) < 0.05 AS d_within_5pct,
	   greatest(d1, d2) <= 75000 AND 75000 <= d1 * d2 AS bounds_hold
  FROM chll_fig65_est;

-- ---------------------------------------------------------------------------
-- Adding and removing values
-- ---------------------------------------------------------------------------
SELECT round(chll_estimate(chll_add_all(chll_create(), ARRAY[1, 2, 3, 2, 1]))) AS three;
SELECT chll_add(chll_create(16), NULL::int)::text = chll_create(16)::text AS null_is_no_value,
	   chll_remove(chll_create(16), NULL::int)::text = chll_create(16)::text AS null_remove,
	   chll_add_all(chll_create(16), NULL::int[])::text = chll_create(16)::text AS null_array,
	   chll_add_all(chll_create(16), ARRAY[NULL, NULL]::int[])::text
		   = chll_create(16)::text AS null_elements,
	   chll_add_hash(chll_create(16), NULL)::text = chll_create(16)::text AS null_hash;
-- multi-dimensional arrays are flattened
SELECT (chll_info(chll_add_all(chll_create(16), ARRAY[[1, 2], [3, 4]]))).items AS four;
-- add then remove gives the empty sketch back
SELECT chll_remove(chll_add(chll_create(), 'x'::text), 'x'::text)::text = chll_create()::text
	   AS add_remove;
SELECT chll_remove_all(chll_add_all(chll_create(), ARRAY[1, 2, 3]), ARRAY[3, 1, 2])::text
	   = chll_create()::text AS add_remove_all;
-- extreme hashes: bucket 0 with all zero bits, and the last bucket
SELECT c.* FROM chll_counters(chll_add_hash(chll_add_hash(chll_create(16), 0),
											-1)) c;
SELECT c.* FROM chll_counters(chll_add_hash(chll_add_hash(chll_create(16),
	9223372036854775807), -9223372036854775808)) c;
SELECT round(chll_estimate(chll_add_hash(chll_create(16), 0))) AS one;

-- removing what was never added is an error
SELECT chll_remove(chll_create(), 1);
SELECT chll_remove_hash(chll_create(16), 42);
SELECT chll_remove_hash(chll_add_hash(chll_create(16), chll_t_hash(4, 3, 0)),
						chll_t_hash(4, 3, 1));
SELECT chll_remove_all(chll_add_all(chll_create(), ARRAY[1, 2]), ARRAY[1, 2, 2]);

-- NULL sketches are errors for the functions that change sketches
SELECT chll_add(NULL, 1);
SELECT chll_remove(NULL, 1);
SELECT chll_add_all(NULL, ARRAY[1]);
SELECT chll_remove_all(NULL, ARRAY[1]);
SELECT chll_add_hash(NULL, 1);
SELECT chll_remove_hash(NULL, 1);
SELECT chll_union(NULL, chll_create());
SELECT chll_union(chll_create(), NULL);
-- and NULL for the ones that read them
SELECT chll_estimate(NULL) IS NULL AS estimate_null, chll_hash(NULL::int) IS NULL AS hash_null,
	   (SELECT count(*) FROM chll_counters(NULL)) AS counters_null;
SELECT (chll_info(NULL)).buckets IS NULL AS info_null;

-- wrong argument types
SELECT chll_add(1, 2);
SELECT chll_add('\x01'::bytea, 2);
SELECT chll_add_all(chll_create(), 1);
SELECT chll_add_hash(chll_create(), 1.5);
SELECT chll_add_hash(chll_create(), 'abc');
SELECT chll_add_hash(chll_create(), 99999999999999999999);
SELECT chll_estimate(1);
SELECT chll_estimate('abc');
SELECT chll_union(chll_create(), 1);
SELECT chll_info(42);
SELECT chll_counters(chll_create(), 1);
SELECT chll_hash('abc');
SELECT chll_hash();
SELECT chll_add(chll_create(16), NULL);
SELECT chll_union_agg(1);

-- ---------------------------------------------------------------------------
-- Hashing: through the type's extended hash function, so values that
-- compare equal hash equally
-- ---------------------------------------------------------------------------
SELECT chll_hash(1.0::numeric) = chll_hash(1.00::numeric) AS numeric_scale,
	   chll_hash(1::int2) = chll_hash(1::int8) AS integer_family,
	   chll_hash(0.0::float8) = chll_hash(-0.0::float8) AS float_zero,
	   chll_hash('abc'::varchar) = chll_hash('abc'::text) AS varchar_text,
	   chll_hash(1) <> chll_hash(2) AS differ;
SELECT round(chll_estimate(chll_add_all(chll_create(), ARRAY[1.0, 1.00, 1.000, 2]::numeric[])))
	   AS two;
CREATE COLLATION chll_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT chll_hash('ABC'::text COLLATE chll_ci) = chll_hash('abc'::text COLLATE chll_ci) AS ci_equal,
	   chll_hash('ABC'::text COLLATE "C") = chll_hash('abc'::text COLLATE "C") AS c_equal;
SELECT round(chll_estimate(chll_agg(v COLLATE chll_ci))) AS ci_distinct,
	   round(chll_estimate(chll_agg(v))) AS c_distinct
  FROM (VALUES ('abc'), ('ABC'), ('Abc'), ('xyz')) t(v);
DROP COLLATION chll_ci;
-- every hashable type works: arrays, records, ranges, enums, domains, ...
CREATE TYPE chll_mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN chll_posint AS int CHECK (VALUE > 0);
SELECT round(chll_estimate(chll_add_all(chll_create(), ARRAY['sad', 'ok', 'sad']::chll_mood[]))) AS enums,
	   round(chll_estimate(chll_add(chll_add(chll_create(), ARRAY[1, 2]), ARRAY[2, 1]))) AS arrays,
	   round(chll_estimate(chll_add(chll_add(chll_create(), (1, 'a'::text)), (1, 'a'::text)))) AS records,
	   round(chll_estimate(chll_add(chll_add(chll_create(), int4range(1, 5)), int4range(1, 4, '[]')))) AS ranges,
	   chll_hash(5::chll_posint) = chll_hash(5) AS domain_is_base,
	   round(chll_estimate(chll_add_all(chll_create(), ARRAY['{"a":1}', '{"a": 1}']::jsonb[]))) AS jsonb,
	   round(chll_estimate(chll_add_all(chll_create(), ARRAY[gen_random_uuid(), gen_random_uuid()]))) AS uuids;
DROP DOMAIN chll_posint;
DROP TYPE chll_mood;
-- types without a hash function: a clear error with a hint
SELECT chll_hash(point '(1,2)');
SELECT chll_add(chll_create(), '{"a": 1}'::json);
SELECT chll_add_all(chll_create(), ARRAY[point '(1,2)']);
SELECT chll_agg(p) FROM (VALUES (point '(1,2)')) t(p);
SELECT chll_hash((1, point '(1,2)'));

-- ---------------------------------------------------------------------------
-- Aggregates
-- ---------------------------------------------------------------------------
CREATE TABLE chll_agg_t (g int, v int);
INSERT INTO chll_agg_t SELECT g % 4, g FROM generate_series(1, 40000) g;
INSERT INTO chll_agg_t SELECT 9, NULL FROM generate_series(1, 10);
SELECT round(chll_estimate(chll_agg(v))) AS estimate,
	   abs(chll_estimate(chll_agg(v)) / 40000 - 1) < 0.05 AS within_5pct,
	   (chll_info(chll_agg(v))).items AS items
  FROM chll_agg_t;
-- chll_agg is chll_add over the rows, in any order
SELECT chll_agg(v)::text = chll_add_all(chll_create(), array_agg(v ORDER BY v DESC))::text
	   AS agg_is_add
  FROM chll_agg_t;
SELECT chll_agg(v, 64)::text = chll_add_all(chll_create(64), array_agg(v))::text AS agg64
  FROM chll_agg_t;
-- per group; NULLs are skipped, no rows give NULL
SELECT g, round(chll_estimate(chll_agg(v))) AS estimate, (chll_info(chll_agg(v))).items
  FROM chll_agg_t GROUP BY g ORDER BY g;
SELECT chll_agg(v) IS NULL AS no_rows FROM chll_agg_t WHERE false;
SELECT chll_estimate(chll_agg(v)) AS estimate FROM chll_agg_t WHERE false;
-- the union of the groups' sketches is the sketch of all rows
SELECT chll_union_agg(s)::text = (SELECT chll_agg(v) FROM chll_agg_t)::text AS union_of_groups
  FROM (SELECT chll_agg(v) AS s FROM chll_agg_t GROUP BY g) x;
SELECT chll_union_agg(s) IS NULL AS all_null FROM (VALUES (NULL::chll)) t(s);
SELECT chll_union_agg(s) FROM (VALUES (chll_create(16)), (chll_create(32))) t(s);
-- bad bucket counts
SELECT chll_agg(v, NULL) FROM chll_agg_t;
SELECT chll_agg(v, 0) FROM chll_agg_t;
SELECT chll_agg(v, -16) FROM chll_agg_t;
SELECT chll_agg(v, 1 << 20) FROM chll_agg_t;
SELECT chll_agg(v, 16 << (v % 2)) FROM chll_agg_t;
SELECT chll_agg(v, 'x') FROM chll_agg_t;
SELECT chll_agg() FROM chll_agg_t;
-- parallel aggregation combines the workers' sketches exactly
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT chll_agg(v) FROM chll_agg_t;
CREATE TEMP TABLE chll_par AS SELECT chll_agg(v) AS s FROM chll_agg_t;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT s::text = (SELECT chll_agg(v) FROM chll_agg_t)::text AS parallel_equals_serial
  FROM chll_par;
-- as a window function: a running distinct count
SELECT v, round(chll_estimate(chll_agg(v % 3) OVER (ORDER BY v))) AS running
  FROM chll_agg_t WHERE v <= 5 ORDER BY v;
-- the transition functions are not for direct calls
SELECT chll_agg_trans(NULL, 1);
SELECT chll_agg_trans(NULL, 1, 16);
SELECT chll_agg_combine(chll_create(), chll_create());
SELECT chll_agg_final(chll_create());
DROP TABLE chll_agg_t;

-- ---------------------------------------------------------------------------
-- Union: the multiset sum of two sketches of equal bucket count
-- ---------------------------------------------------------------------------
CREATE TEMP TABLE chll_u AS
	SELECT (SELECT chll_agg(g) FROM generate_series(1, 30000) g) AS a,
		   (SELECT chll_agg(g) FROM generate_series(20001, 50000) g) AS b;
SELECT abs(chll_estimate(chll_union(a, b)) / 50000 - 1) < 0.05 AS within_5pct,
	   (chll_info(chll_union(a, b))).items AS items,
	   chll_union(a, b)::text = chll_union(b, a)::text AS commutative,
	   chll_estimate(chll_union(a, a)) = chll_estimate(a) AS idempotent_estimate,
	   (chll_info(chll_union(a, a))).items AS doubled
  FROM chll_u;
-- what was added to either input can be removed from the union
SELECT chll_remove_all(chll_union(a, b), ARRAY(SELECT generate_series(1, 30000)))::text = b::text
	   AS remove_a
  FROM chll_u;
SELECT chll_union(chll_create(16), chll_create(32));
SELECT chll_union(chll_create(32768), chll_create(16));
DROP TABLE chll_u;

-- Equality, hashing, || and the bytea conversions (issue 25, packaging):
-- equal when they count the same, whatever the order of past operations
SELECT chll_add(chll_add(chll_create(), 1), 2) = chll_add(chll_add(chll_create(), 2), 1) AS order_free,
       chll_remove(chll_add_all(chll_create(), '{1,2}'::int[]), 2) = chll_add(chll_create(), 1) AS removed,
       chll_add(chll_create(), 1) = chll_add(chll_create(), 2) AS different_values,
       chll_add(chll_create(), 1) <> chll_create() AS not_empty,
       chll_create(16) = chll_create(32) AS different_buckets,
       chll_add(chll_create(), 1) = chll_add_all(chll_create(), '{1,1}'::int[]) AS different_counts;
SELECT (chll_add(chll_create(), 1) || chll_add(chll_create(), 2)) = chll_add_all(chll_create(), '{1,2}'::int[])
       AS union_operator;
CREATE TABLE chll_grp AS
  SELECT g, g % 3 AS k, chll_add_all(chll_create(), ARRAY(SELECT generate_series(1, g % 3 * 1000))) AS s
    FROM generate_series(1, 9) g;
SELECT count(DISTINCT s) AS distinct_sketches FROM chll_grp;
SELECT k, count(*) FROM chll_grp GROUP BY s, k ORDER BY k;
SELECT count(*) AS set_union FROM (SELECT s FROM chll_grp UNION SELECT s FROM chll_grp) u;
SET enable_mergejoin = off;
SET enable_nestloop = off;
SELECT count(*) AS hash_join FROM chll_grp a JOIN chll_grp b ON a.s = b.s;
SET enable_hashjoin = off;
SET enable_mergejoin = on;
SELECT count(*) AS merge_join FROM chll_grp a JOIN chll_grp b ON a.s = b.s;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
-- the order is fixed (here: by total first), and agrees with equality
SELECT string_agg(k::text, '' ORDER BY s, k) AS sorted FROM chll_grp;
SELECT bool_and((a.s < b.s) = (chll_cmp(a.s, b.s) < 0) AND (a.s = b.s) = (chll_cmp(a.s, b.s) = 0)
                AND (a.s < b.s) = (b.s > a.s)) AS consistent
  FROM chll_grp a, chll_grp b;
-- to bytea and back: the same sketch; bytes that are not one are refused
SELECT bool_and(chll(s::bytea) = s) AS round_trip, min(length(s::bytea)) AS packed_bytes,
       max(length(s::bytea)) AS max_packed_bytes FROM chll_grp;
SELECT chll('\x01'::bytea);
SELECT chll(substring(chll_create()::bytea from 1 for 26));
DROP TABLE chll_grp;

-- ---------------------------------------------------------------------------
-- Exact while small (issue 24): the set of distinct hashes makes small
-- counts exact (with 512 buckets the counters alone said 46 for 50 values,
-- and 1 for two values that share a bucket), after removals too
-- ---------------------------------------------------------------------------
SELECT d, chll_estimate(s) AS estimate, round(chll_estimate_counters(s)) AS counters,
       (chll_info(s)).exact_distinct
  FROM (SELECT d, chll_agg(g % d) AS s
          FROM generate_series(1, 100000) g, (VALUES (2), (50), (100), (1000), (10000)) v(d)
         GROUP BY d) t ORDER BY d;
-- two values in one bucket (the first two values of 0..100 whose hashes share one)
SELECT chll_estimate(chll_add(chll_add(chll_create(), a), b)) AS two_in_one_bucket
  FROM (SELECT x.v AS a, y.v AS b
          FROM generate_series(0, 100) x(v), generate_series(0, 100) y(v)
         WHERE x.v < y.v
           AND (chll_hash(x.v) >> 55) = (chll_hash(y.v) >> 55)
         ORDER BY x.v, y.v LIMIT 1) p;
-- removals: every copy of half of 1,000 values, each added three times
CREATE TEMP TABLE chll_ex AS
SELECT chll_agg(g % 1000) AS s FROM generate_series(1, 3000) g;
SELECT chll_estimate(chll_remove_all(s, (SELECT array_agg(v % 1000) FROM generate_series(0, 2999) v
                                          WHERE v % 1000 < 500))) AS half_left
  FROM chll_ex;
-- a value the set does not hold is certainly not there
SELECT chll_remove(s, 5000) FROM chll_ex;
-- the bytes depend on the values, not on the order they came in
SELECT (SELECT chll_agg(v ORDER BY v) FROM generate_series(1, 1200) v) =
       (SELECT chll_agg(v ORDER BY v DESC) FROM generate_series(1, 1200) v) AS same_bytes,
       (SELECT chll_agg(v ORDER BY md5(v::text)) FROM generate_series(1, 1200) v) =
       chll_union((SELECT chll_agg(v) FROM generate_series(1, 600) v),
                  (SELECT chll_agg(v) FROM generate_series(601, 1200) v)) AS union_same;
-- past the set's capacity the counters estimate; the set comes back empty
SELECT (chll_info(s)).exact_distinct AS set_kept,
       chll_remove_all(s, (SELECT array_agg(v) FROM generate_series(1, 5000) v)) = chll_create()
         AS emptied_is_new
  FROM (SELECT chll_agg(v) AS s FROM generate_series(1, 5000) v) t;
SELECT (chll_info(chll_union(a, b))).exact_distinct AS union_kept
  FROM (SELECT chll_agg(v) AS a FROM generate_series(1, 1000) v) x,
       (SELECT chll_agg(v) AS b FROM generate_series(1001, 2000) v) y;
DROP TABLE chll_ex;

DROP FUNCTION chll_t_repeat(chll, bigint[], int);
DROP FUNCTION chll_t_hash(int, int, int);
