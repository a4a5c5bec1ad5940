-- Distinct-value sketches kept by abtree indexes (src/abtree/README, "Sketches").
-- S1: the sketch of key column k is the chll sketch of the non-NULL values of
-- column k of the valid entries; chll_agg over the same values builds the
-- same bytes while both count exactly, so the two are compared byte for byte.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

CREATE FUNCTION sk_same(idx regclass, col int, agg chll) RETURNS boolean
LANGUAGE sql AS $$ SELECT chll_send(abtree_sketch(idx, col)) = chll_send(agg) $$;

CREATE TABLE sk (a int, b text COLLATE "C", c numeric, d int, e int, f int);
INSERT INTO sk SELECT g % 1000, 'v' || (g % 77), CASE WHEN g % 3 = 0 THEN NULL ELSE g % 10 END,
                      g, g, g
  FROM generate_series(1, 20000) g;
-- five key columns (only four are sketched) and an INCLUDE column
CREATE INDEX sk_idx ON sk USING abtree (a, b DESC, c, d, e) INCLUDE (f);

-- after the bulk build
SELECT sk_same('sk_idx', 1, chll_agg(a)) AS a, sk_same('sk_idx', 2, chll_agg(b)) AS b,
       sk_same('sk_idx', 3, chll_agg(c)) AS c, sk_same('sk_idx', 4, chll_agg(d)) AS d,
       abtree_sketch('sk_idx', 5) IS NULL AS fifth_not_sketched
  FROM sk;
SELECT attname, key_column, sketch_ndistinct, sketch_items, sketch_exact
  FROM abtree_column_ndistinct WHERE indexname = 'sk_idx' ORDER BY key_column;

-- inserts (one by one through aminsert), then deletes and VACUUM
INSERT INTO sk SELECT g, 'w' || g, g, g, g, g FROM generate_series(1, 3000) g;
INSERT INTO sk VALUES (NULL, NULL, NULL, NULL, NULL, NULL);
SELECT sk_same('sk_idx', 1, chll_agg(a)) AS a, sk_same('sk_idx', 2, chll_agg(b)) AS b,
       sk_same('sk_idx', 3, chll_agg(c)) AS c, sk_same('sk_idx', 4, chll_agg(d)) AS d
  FROM sk;
-- a rolled-back insert stays counted until VACUUM removes its entries (its
-- entries became valid: safe_page; under batched only those flushed before
-- the rollback do)
BEGIN;
SET LOCAL abtree.weight_protocol = safe_page;
INSERT INTO sk SELECT -g, 'x', -g, -g, -g, -g FROM generate_series(1, 100) g;
ROLLBACK;
SELECT (chll_info(abtree_sketch('sk_idx', 1))).items - (SELECT count(a) FROM sk) AS dead_counted;
DELETE FROM sk WHERE a < 500;
VACUUM sk;
SELECT sk_same('sk_idx', 1, chll_agg(a)) AS a, sk_same('sk_idx', 2, chll_agg(b)) AS b,
       sk_same('sk_idx', 3, chll_agg(c)) AS c, sk_same('sk_idx', 4, chll_agg(d)) AS d
  FROM sk;
SELECT abtree_verify('sk_idx', true, true);

-- the planner takes n_distinct from the sketch, also before any ANALYZE
CREATE FUNCTION sk_rows(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
  RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
SELECT count(DISTINCT a) AS true_distinct FROM sk;
SELECT sk_rows('SELECT DISTINCT a FROM sk') BETWEEN 2500 * 0.9 AND 2500 * 1.1 AS from_sketch;
SET abtree.sketch_ndistinct = off;
SELECT sk_rows('SELECT DISTINCT a FROM sk') AS without_sketch_default;
RESET abtree.sketch_ndistinct;
-- ANALYZE's number is in the view beside the sketch's
ANALYZE sk;
SELECT attname, sketch_ndistinct BETWEEN 2500 * 0.9 AND 2500 * 1.1 AS sketch_close,
       analyze_ndistinct IS NOT NULL AS analyzed, used_by_planner
  FROM abtree_column_ndistinct WHERE indexname = 'sk_idx' AND key_column = 1;
SELECT sk_rows('SELECT DISTINCT a FROM sk') BETWEEN 2500 * 0.9 AND 2500 * 1.1 AS from_sketch;

-- a partial index's sketch covers only some rows: the planner ignores it
CREATE TABLE skp (a int);
INSERT INTO skp SELECT g FROM generate_series(1, 5000) g;
CREATE INDEX skp_idx ON skp USING abtree (a) WHERE a < 100;
SELECT used_by_planner FROM abtree_column_ndistinct WHERE indexname = 'skp_idx';
SELECT sk_rows('SELECT DISTINCT a FROM skp') AS partial_not_used;

-- a column of 5 values, a million rows, 99% deleted, then everything deleted
CREATE TABLE sk5 (v int);
CREATE INDEX sk5_idx ON sk5 USING abtree (v);
INSERT INTO sk5 SELECT g % 5 FROM generate_series(1, 1000000) g;
SELECT round(estimate) AS estimate, items, exact FROM chll_info(abtree_sketch('sk5_idx'));
DELETE FROM sk5 WHERE ctid IN (SELECT ctid FROM sk5 ORDER BY ctid OFFSET 10000);
VACUUM sk5;
SELECT round(estimate) AS estimate, items, exact FROM chll_info(abtree_sketch('sk5_idx'));
SELECT sk_same('sk5_idx', 1, chll_agg(v)) AS same FROM sk5;
DELETE FROM sk5;
VACUUM sk5;
SELECT estimate, items FROM chll_info(abtree_sketch('sk5_idx'));
SELECT sk_same('sk5_idx', 1, chll_create(512)) AS empty_byte_for_byte;
SELECT abtree_verify('sk5_idx', true, true);
DROP TABLE sk5;

-- reloption: off means no sketch; it takes effect at the next build
CREATE TABLE sko (a int);
INSERT INTO sko SELECT g FROM generate_series(1, 100) g;
CREATE INDEX sko_idx ON sko USING abtree (a) WITH (sketch = off);
SELECT abtree_sketch('sko_idx') IS NULL AS no_sketch;
SELECT count(*) FROM abtree_column_ndistinct WHERE indexname = 'sko_idx';
INSERT INTO sko VALUES (101);
DELETE FROM sko WHERE a < 50;
VACUUM sko;
SELECT abtree_verify('sko_idx', true, true);
ALTER INDEX sko_idx SET (sketch = on);
SELECT abtree_sketch('sko_idx') IS NULL AS still_none_until_reindex;
REINDEX INDEX sko_idx;
SELECT sk_same('sko_idx', 1, chll_agg(a)) AS after_reindex FROM sko;
CREATE INDEX sko_bad ON sko USING abtree (a) WITH (sketch = maybe);
CREATE INDEX sko_bad ON sko USING abtree (a) WITH (sketch = 1.5);
CREATE INDEX sko_bad ON sko USING abtree (a) WITH (sketch = -1);
CREATE INDEX sko_bad ON sko USING abtree (a) WITH (sketch = '');
ALTER INDEX sko_idx SET (sketch = 99999999999);

-- unlogged and temporary tables
CREATE UNLOGGED TABLE sku (a int);
CREATE INDEX sku_idx ON sku USING abtree (a);
INSERT INTO sku SELECT g % 10 FROM generate_series(1, 1000) g;
SELECT sk_same('sku_idx', 1, chll_agg(a)) AS unlogged FROM sku;
CREATE TEMP TABLE skt (a text);
CREATE INDEX skt_idx ON skt USING abtree (a);
INSERT INTO skt SELECT md5(g::text) FROM generate_series(1, 1000) g;
SELECT sk_same('skt_idx', 1, chll_agg(a)) AS temp FROM skt;

-- relcache invalidations at every catalog access (assert-enabled servers
-- only; elsewhere the setting is refused and this runs normally): hashing
-- and type look-ups must not keep rd_amcache pointers across them
CREATE TABLE skd (a text, b int);
CREATE INDEX skd_idx ON skd USING abtree (a, b);
INSERT INTO skd SELECT g::text, g FROM generate_series(1, 200) g;
DO $$ BEGIN PERFORM set_config('debug_discard_caches', '1', false);
EXCEPTION WHEN others THEN NULL; END $$;
INSERT INTO skd SELECT g::text, g FROM generate_series(1, 20) g;
SELECT sk_rows('SELECT DISTINCT a FROM skd') > 100 AS planned;
DELETE FROM skd WHERE b < 50;
VACUUM skd;
RESET debug_discard_caches;
SELECT sk_same('skd_idx', 1, chll_agg(a)) AS a, sk_same('skd_idx', 2, chll_agg(b)) AS b FROM skd;
DROP TABLE skd;

-- exact while small (issue 24): the index's sketch lists its distinct
-- values until they outgrow its set; estimates are exact, inserts and
-- VACUUM keep them so, and the set's bytes are the ones chll_agg makes
CREATE TABLE skx (a int, b int);
CREATE INDEX skx_idx ON skx USING abtree (a, b);
INSERT INTO skx SELECT g % 1000, g % 2 FROM generate_series(1, 30000) g;
SELECT round(chll_estimate(abtree_sketch('skx_idx', 1))) AS a_1000,
       round(chll_estimate(abtree_sketch('skx_idx', 2))) AS b_2,
       (chll_info(abtree_sketch('skx_idx', 1))).exact_distinct;
-- every row of half of the values deleted, then VACUUM: exact again
DELETE FROM skx WHERE a % 2 = 0;
VACUUM skx;
SELECT round(chll_estimate(abtree_sketch('skx_idx', 1))) AS a_500,
       sk_same('skx_idx', 1, chll_agg(a)) AS a, sk_same('skx_idx', 2, chll_agg(b)) AS b
  FROM skx;
-- past the set's capacity: the counters estimate, verify still agrees
INSERT INTO skx SELECT g, 0 FROM generate_series(10000, 14999) g;
SELECT (chll_info(abtree_sketch('skx_idx', 1))).exact_distinct AS kept,
       sk_same('skx_idx', 1, chll_agg(a)) AS a FROM skx;
-- back below it: removals cannot bring the set back (verify allows a
-- stored sketch without one), so VACUUM rebuilds the sketch from the
-- entries once its counters say the column fits a set again, if it can
-- lock out writers at once (abtree.sketch_rebuild; before, the set came
-- back only at REINDEX).  With the setting off it stays given up.
DELETE FROM skx WHERE a >= 10000;
SET abtree.sketch_rebuild = off;
VACUUM skx;
SELECT abtree_verify('skx_idx', exact => true) AS verified,
       (chll_info(abtree_sketch('skx_idx', 1))).exact_distinct AS kept_off;
RESET abtree.sketch_rebuild;
VACUUM skx;
SELECT abtree_verify('skx_idx', exact => true) AS verified,
       (chll_info(abtree_sketch('skx_idx', 1))).exact_distinct AS kept,
       chll_estimate(abtree_sketch('skx_idx', 1)) = (SELECT count(DISTINCT a) FROM skx) AS exact,
       sk_same('skx_idx', 1, chll_agg(a)) AS a
  FROM skx;
DELETE FROM skx;
VACUUM skx;
INSERT INTO skx VALUES (1, 1), (2, 1);
SELECT chll_estimate(abtree_sketch('skx_idx', 1)) AS two,
       (chll_info(abtree_sketch('skx_idx', 1))).exact_distinct AS kept_again;
DROP TABLE skx;

-- a tall tree (2.5 kB keys, four sketched columns): VACUUM locks one
-- chunk and one set page per column and logs one entry per record, so
-- that a record's path and sketch pages stay within XLR_MAX_BLOCK_ID
CREATE TABLE skw (a text, b text, c text, d text);
CREATE INDEX skw_idx ON skw USING abtree (a, b, c, d);
INSERT INTO skw
SELECT (SELECT string_agg(md5(g::text || '-' || i), '') FROM generate_series(1, 78) i),
       md5(g::text), md5((g * 7)::text), (g % 7)::text
  FROM generate_series(1, 3000) g;
SELECT height >= 9 AS tall FROM abtree_stats('skw_idx');
DELETE FROM skw WHERE d IN ('1', '2', '3');
VACUUM skw;
SELECT abtree_verify('skw_idx', exact => true) AS verified,
       chll_estimate(abtree_sketch('skw_idx', 4)) AS d_4,
       sk_same('skw_idx', 4, chll_agg(d)) AS d FROM skw;
DROP TABLE skw;

-- the key sketch (key_column 0): an index on two or three key columns also
-- sketches its whole keys, a NULL being a value as in GROUP BY.  Exact
-- while small (below about 1,000 keys: src/hll/README), after the build,
-- inserts, and deletes with VACUUM; verify rebuilds it from the entries
-- and compares.
CREATE TABLE skk (a int, b text COLLATE "C", c int) WITH (autovacuum_enabled = off);
INSERT INTO skk SELECT g % 23, 'v' || (g % 19), CASE WHEN g % 100 = 0 THEN 2 ELSE g % 23 % 2 END
  FROM generate_series(1, 20000) g;
INSERT INTO skk SELECT NULL, 'v' || (g % 3), NULL FROM generate_series(1, 50) g;
CREATE INDEX skk_ab ON skk USING abtree (a, b);
CREATE INDEX skk_cab ON skk USING abtree (c, a, b);
CREATE FUNCTION skk_check() RETURNS TABLE (ab bigint, ab_same boolean, cab bigint, cab_same boolean,
                                           verified boolean)
LANGUAGE sql AS $$
  SELECT d.ab, chll_estimate(abtree_sketch('skk_ab', 0)) = d.ab,
         d.cab, chll_estimate(abtree_sketch('skk_cab', 0)) = d.cab,
         abtree_verify('skk_ab', exact => true) IS NOT NULL AND
         abtree_verify('skk_cab', exact => true) IS NOT NULL
    FROM (SELECT (SELECT count(*) FROM (SELECT DISTINCT a, b FROM skk) s) AS ab,
                 (SELECT count(*) FROM (SELECT DISTINCT c, a, b FROM skk) s) AS cab) d
$$;
SELECT * FROM skk_check();
INSERT INTO skk SELECT g, 'w', NULL FROM generate_series(100, 250) g;
INSERT INTO skk VALUES (NULL, NULL, NULL), (NULL, NULL, NULL), (1, NULL, 1);
SELECT * FROM skk_check();
DELETE FROM skk WHERE a % 2 = 0;
VACUUM skk;
SELECT * FROM skk_check();
-- (x, y) and (y, x) are two keys
CREATE TABLE skk2 (x int, y int);
INSERT INTO skk2 VALUES (1, 2), (2, 1), (1, 2), (3, 3);
CREATE INDEX skk2_xy ON skk2 USING abtree (x, y);
SELECT chll_estimate(abtree_sketch('skk2_xy', 0)) AS three;
-- no key sketch: one key column, five, sketch = off, key_sketch = off; a
-- key on an expression has one (abtree_ndistinct does not use it: see
-- ndistinct)
CREATE INDEX skk_a ON skk USING abtree (a);
CREATE INDEX skk_off ON skk USING abtree (a, b) WITH (sketch = off);
CREATE INDEX skk_nokey ON skk USING abtree (a, b) WITH (key_sketch = off);
CREATE TABLE skk3 (p point, x int);
CREATE INDEX skk3_idx ON skk3 USING abtree ((p[0]), x);
SELECT abtree_sketch('skk_a', 0) IS NULL AS one_column, abtree_sketch('sk_idx', 0) IS NULL AS five,
       abtree_sketch('skk_off', 0) IS NULL AS off,
       abtree_sketch('skk_nokey', 0) IS NULL AND abtree_sketch('skk_nokey', 2) IS NOT NULL AS key_off,
       abtree_sketch('skk3_idx', 0) IS NOT NULL AS expression_key;
DROP TABLE skk, skk2, skk3;
DROP FUNCTION skk_check();

-- sketch_buckets (issue 24): the bucket count of an index's sketches, a
-- power of two from 16 to 2048, kept from the build (ALTER INDEX SET takes
-- effect at REINDEX).  Up to 512 the head page holds one overflow entry per
-- bucket and the sketch is chll_agg's of that count, byte for byte while
-- all its counts are exact; 1,024 and 2,048 buckets cap the overflow array
-- at what the head page holds (1,016 entries), which chll_info shows.  The
-- exact set grows with the bucket count: 2,048 buckets keep 3,000 values
-- exactly, 512 do not.
CREATE TABLE skb (a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO skb SELECT g % 3000, g % 7 FROM generate_series(1, 30000) g;
CREATE INDEX skb_16 ON skb USING abtree (a) WITH (sketch_buckets = 16);
CREATE INDEX skb_256 ON skb USING abtree (a) WITH (sketch_buckets = 256);
CREATE INDEX skb_512 ON skb USING abtree (a);
CREATE INDEX skb_2048 ON skb USING abtree (a, b) WITH (sketch_buckets = 2048);
CREATE FUNCTION skb_info() RETURNS TABLE (idx text, col int, buckets int, capacity int,
                                          used int, exact boolean, exact_set boolean,
                                          estimate numeric)
LANGUAGE sql AS $$
  SELECT i, c, (x).buckets, (x).overflow_capacity, (x).overflow_used, (x).exact,
         (x).exact_distinct, round((x).estimate::numeric)
    FROM (VALUES ('skb_16', 1), ('skb_256', 1), ('skb_512', 1), ('skb_2048', 1),
                 ('skb_2048', 2), ('skb_2048', 0)) v(i, c),
         LATERAL (SELECT chll_info(abtree_sketch(i::regclass, c)) AS x) s
   ORDER BY i, c
$$;
SELECT * FROM skb_info();
SELECT sk_same('skb_256', 1, chll_agg(a, 256)) AS b256, sk_same('skb_512', 1, chll_agg(a)) AS b512
  FROM skb;
-- 1,200 values 135 times each want more overflow entries than the capped
-- array holds: some counts turn approximate, the set still counts exactly,
-- and inserts, deletes and VACUUM keep the index's sketches equal to a
-- sketch of its entries with the same cap (verify)
INSERT INTO skb SELECT 10000 + g % 1200, 0 FROM generate_series(1, 162000) g;
SELECT * FROM skb_info();
DELETE FROM skb WHERE a % 3 = 0;
VACUUM skb;
SELECT * FROM skb_info();
SELECT bool_and(abtree_verify(i, exact => true) IS NOT NULL) AS verified
  FROM unnest('{skb_16,skb_256,skb_512,skb_2048}'::regclass[]) i;
-- ALTER INDEX SET changes the count at REINDEX, not before
ALTER INDEX skb_512 SET (sketch_buckets = 64);
SELECT (chll_info(abtree_sketch('skb_512', 1))).buckets AS before_reindex;
REINDEX INDEX skb_512;
SELECT (chll_info(abtree_sketch('skb_512', 1))).buckets AS after_reindex,
       abtree_verify('skb_512', exact => true) IS NOT NULL AS verified;
SELECT pg_get_indexdef('skb_2048'::regclass);
DROP TABLE skb;
DROP FUNCTION skb_info();
-- a partitioned index's sketch is the union of its partitions' (which
-- inherit the reloption); partitions of different bucket counts have none
CREATE TABLE skbp (a int) PARTITION BY RANGE (a);
CREATE TABLE skbp_1 PARTITION OF skbp FOR VALUES FROM (0) TO (100);
CREATE TABLE skbp_2 PARTITION OF skbp FOR VALUES FROM (100) TO (200);
INSERT INTO skbp SELECT g % 200 FROM generate_series(1, 1000) g;
CREATE INDEX skbp_idx ON skbp USING abtree (a) WITH (sketch_buckets = 64);
SELECT round(chll_estimate(abtree_sketch('skbp_idx', 1))) AS of_200,
       (chll_info(abtree_sketch('skbp_idx', 1))).buckets;
ALTER INDEX skbp_2_a_idx SET (sketch_buckets = 128);
REINDEX INDEX skbp_2_a_idx;
SELECT abtree_sketch('skbp_idx', 1);
DROP TABLE skbp;

-- bad input
SELECT abtree_sketch(NULL, 1);
SELECT abtree_sketch('sk_idx', NULL);
SELECT abtree_sketch('sk_idx', 0);
SELECT abtree_sketch('sk_idx', -1);
SELECT abtree_sketch('sk_idx', 2147483647);
SELECT abtree_sketch('sk_idx', 6);
SELECT abtree_sketch('sk', 1);
CREATE INDEX sk_btree ON sk USING btree (a);
SELECT abtree_sketch('sk_btree', 1);
SELECT abtree_sketch('no_such_index', 1);
SELECT abtree_sketch(0, 1);
SELECT abtree_sketch('sk_idx', 'one');
-- a user without SELECT on the table sees neither the sketch nor the row
CREATE ROLE sk_nobody;
SET ROLE sk_nobody;
SELECT abtree_sketch('sk_idx', 1);
SELECT count(*) FROM abtree_column_ndistinct WHERE indexname = 'sk_idx';
RESET ROLE;
DROP ROLE sk_nobody;

DROP TABLE sk, skp, sko, sku, skt;
DROP FUNCTION sk_same(regclass, int, chll), sk_rows(text);
