--
-- abtree_range_weight: range counts and sums from downlink weights, equal to
-- what a scan counts once VACUUM has run, for thousands of random ranges;
-- open and exclusive bounds, DESC and NULLS FIRST columns, NULL keys,
-- cross-type bounds, text keys, and bad input.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;
SELECT setseed(0.42);

CREATE TABLE rg (k int, w int NOT NULL, t text);
INSERT INTO rg SELECT CASE WHEN i % 97 = 0 THEN NULL ELSE (random() * 5000)::int END,
					  1 + (random() * 20)::int, md5(i::text)
  FROM generate_series(1, 20000) i;
CREATE INDEX rg_k ON rg USING abtree (k);
CREATE INDEX rg_kw ON rg USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE INDEX rg_kd ON rg USING abtree (k DESC NULLS LAST);
CREATE INDEX rg_knf ON rg USING abtree (k NULLS FIRST);
CREATE INDEX rg_t ON rg USING abtree (t);
-- changes after the build: inserts (splits) and deletes with VACUUM
INSERT INTO rg SELECT (random() * 5000)::int, 1 + (random() * 20)::int, md5(random()::text)
  FROM generate_series(1, 10000);
DELETE FROM rg WHERE k % 11 = 3;
VACUUM (INDEX_CLEANUP ON) rg;

-- 2000 random ranges, some empty (lo > hi), some open, both kinds of bounds
CREATE TEMP TABLE ranges AS
SELECT i,
	   CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 5200)::int - 100 END AS lo,
	   CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 5200)::int - 100 END AS hi,
	   random() < 0.5 AS lo_incl, random() < 0.5 AS hi_incl
  FROM generate_series(1, 2000) i;

CREATE TEMP TABLE truth AS
SELECT r.i, count(g.k) AS n, coalesce(sum(g.w), 0) AS wsum
  FROM ranges r LEFT JOIN rg g
	ON (r.lo IS NULL OR g.k > r.lo OR (r.lo_incl AND g.k = r.lo))
   AND (r.hi IS NULL OR g.k < r.hi OR (r.hi_incl AND g.k = r.hi))
   AND g.k IS NOT NULL
 GROUP BY r.i;

SELECT idx, count(*) AS ranges,
	   count(*) FILTER (WHERE got <> want) AS wrong
  FROM (SELECT idx, abtree_range_weight(idx::regclass, r.lo, r.hi, r.lo_incl, r.hi_incl) AS got,
			   CASE WHEN idx = 'rg_kw' THEN t.wsum ELSE t.n END AS want
		  FROM ranges r JOIN truth t USING (i),
			   unnest(ARRAY['rg_k', 'rg_kw', 'rg_kd', 'rg_knf']) idx) s
 GROUP BY idx ORDER BY idx;

-- a few by hand: everything, nothing, one value, exclusive bounds
SELECT abtree_range_weight('rg_k', NULL::int, NULL) AS all_non_null,
	   (SELECT count(k) FROM rg) AS count_k,
	   abtree_range_weight('rg_k', 10, 9) AS reversed,
	   abtree_range_weight('rg_k', 10, 10) = (SELECT count(*) FROM rg WHERE k = 10) AS one_value,
	   abtree_range_weight('rg_k', 10, 10, false, true) AS open_low_one_value,
	   abtree_range_weight('rg_kw', NULL::int, NULL) = (SELECT sum(w) FROM rg WHERE k IS NOT NULL) AS weighted_all;
-- cross-type bounds, text keys
SELECT abtree_range_weight('rg_k', 100::bigint, 200::bigint) = (SELECT count(*) FROM rg WHERE k BETWEEN 100 AND 200) AS int8_bounds,
	   abtree_range_weight('rg_t', 'a'::text, 'b'::text) = (SELECT count(*) FROM rg WHERE t BETWEEN 'a' AND 'b') AS text_bounds;
-- an empty index
CREATE TABLE rg_empty (k int);
CREATE INDEX rg_empty_k ON rg_empty USING abtree (k);
SELECT abtree_range_weight('rg_empty_k', 1, 10) AS empty;

-- extreme and reversed bounds: counts, never errors
SELECT abtree_range_weight('rg_k', -2147483648, 2147483647) = (SELECT count(k) FROM rg) AS int4_extremes,
	   abtree_range_weight('rg_k', '-9223372036854775808'::bigint, 9223372036854775807::bigint) = (SELECT count(k) FROM rg) AS int8_extremes,
	   abtree_range_weight('rg_k', 0, 0) = (SELECT count(*) FROM rg WHERE k = 0) AS zero,
	   abtree_range_weight('rg_k', -5, -1) AS negative,
	   abtree_range_weight('rg_k', 2147483647, -2147483648) AS reversed_extremes;

-- bad input
SELECT abtree_range_weight(NULL, 1, 2);
SELECT abtree_range_weight('rg_k', 1, 2, NULL, true);
SELECT abtree_range_weight('rg_k', NULL, NULL);
SELECT abtree_range_weight('rg_k', 'x'::text, 'y'::text);
SELECT abtree_range_weight('rg_k', 1.5, 2.5);
SELECT abtree_range_weight('rg', 1, 2);
CREATE INDEX rg_bt ON rg (k);
SELECT abtree_range_weight('rg_bt', 1, 2);
SELECT abtree_range_weight(0, 1, 2);

-- A partitioned abtree index (issue 25, item 7): abtree_range_weight and
-- abtree_sketch add up its leaf partitions (two levels here, and a
-- default partition), with the partitioned table's privileges; the other
-- functions say what the index is and what to do.
CREATE TABLE rgp (k int, w int) PARTITION BY RANGE (k);
CREATE TABLE rgp_lo PARTITION OF rgp FOR VALUES FROM (0) TO (1000);
CREATE TABLE rgp_hi PARTITION OF rgp FOR VALUES FROM (1000) TO (3000) PARTITION BY RANGE (k);
CREATE TABLE rgp_hi1 PARTITION OF rgp_hi FOR VALUES FROM (1000) TO (2000);
CREATE TABLE rgp_hi2 PARTITION OF rgp_hi FOR VALUES FROM (2000) TO (2500);
CREATE TABLE rgp_rest PARTITION OF rgp DEFAULT;
INSERT INTO rgp SELECT g % 4000, 1 + g % 3 FROM generate_series(1, 8000) g WHERE g % 4000 NOT BETWEEN 2500 AND 2999;
CREATE INDEX rgp_k ON rgp USING abtree (k);
CREATE INDEX rgp_kw ON rgp USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
SELECT abtree_range_weight('rgp_k', NULL::int, NULL) AS all_rows,
       abtree_range_weight('rgp_k', 500, 2500) AS rows_500_2500,
       (SELECT count(*) FROM rgp WHERE k BETWEEN 500 AND 2500) AS counted,
       abtree_range_weight('rgp_kw', 500, 2500) AS weight_500_2500,
       (SELECT sum(w) FROM rgp WHERE k BETWEEN 500 AND 2500) AS summed;
-- the same as adding up the partitions' indexes by hand
SELECT sum(abtree_range_weight(i.relid, 500, 2500)) AS by_hand
  FROM pg_partition_tree('rgp_k') i WHERE i.isleaf;
-- visible_only through each partition's weight store
SELECT abtree_range_weight('rgp_k', 500, 2500, visible_only => true) AS visible;
-- the union of the partitions' sketches (3500 distinct keys) is the
-- sketch of the whole column
SELECT round((chll_estimate(abtree_sketch('rgp_k', 1)) / 3500)::numeric, 1) AS ratio,
       chll_estimate(abtree_sketch('rgp_k', 1)) =
         (SELECT chll_estimate(chll_agg(k)) FROM rgp) AS same_as_whole_column;
SELECT abtree_sketch('rgp_k', 2);
-- the others refuse, with the way out
SELECT * FROM abtree_stats('rgp_k');
-- a foreign partition has no index: its rows would be missing from a sum
CREATE FOREIGN DATA WRAPPER rg_fdw;
CREATE SERVER rg_srv FOREIGN DATA WRAPPER rg_fdw;
CREATE FOREIGN TABLE rgp_far PARTITION OF rgp_hi FOR VALUES FROM (2500) TO (3000) SERVER rg_srv;
SELECT abtree_range_weight('rgp_k', NULL::int, NULL);
DROP FOREIGN TABLE rgp_far;
DROP SERVER rg_srv;
DROP FOREIGN DATA WRAPPER rg_fdw;
-- the partitioned table's privileges decide
CREATE ROLE regress_rg_reader;
SET ROLE regress_rg_reader;
SELECT abtree_range_weight('rgp_k', NULL::int, NULL);
RESET ROLE;
GRANT SELECT ON rgp TO regress_rg_reader;
SET ROLE regress_rg_reader;
SELECT abtree_range_weight('rgp_k', NULL::int, NULL);
RESET ROLE;
DROP TABLE rgp;
DROP ROLE regress_rg_reader;

-- Partitions' indexes weigh rows as their partitioned abtree index declares.
-- PostgreSQL attaches an existing partition index with the same columns
-- whatever its options: before, an unweighted one ended up under a weighted
-- parent, and the sum below mixed counts (1000) with weights (10 x 1000).
CREATE TABLE rpw (k int, w int) PARTITION BY RANGE (k);
CREATE TABLE rpw1 PARTITION OF rpw FOR VALUES FROM (0) TO (1000);
CREATE INDEX rpw_kw ON rpw USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE TABLE rpw2 (k int, w int);
CREATE INDEX rpw2_k ON rpw2 USING abtree (k) INCLUDE (w);
INSERT INTO rpw1 SELECT g, 10 FROM generate_series(0, 999) g;
INSERT INTO rpw2 SELECT g, 10 FROM generate_series(1000, 1999) g;
ALTER TABLE rpw ATTACH PARTITION rpw2 FOR VALUES FROM (1000) TO (2000);  -- ERROR
-- rebuilt with the weight column, the same index is attached
ALTER INDEX rpw2_k SET (weight_column = 'w');
REINDEX INDEX rpw2_k;
ALTER TABLE rpw ATTACH PARTITION rpw2 FOR VALUES FROM (1000) TO (2000);
SELECT abtree_range_weight('rpw_kw', NULL::int, NULL);
-- a later REINDEX under other options: the sum refuses
ALTER INDEX rpw2_k RESET (weight_column);
REINDEX INDEX rpw2_k;
SELECT abtree_range_weight('rpw_kw', NULL::int, NULL);  -- ERROR
DROP TABLE rpw;
-- CREATE INDEX on the parent over an existing index, and ALTER INDEX ATTACH
CREATE TABLE rpw (k int, w int) PARTITION BY RANGE (k);
CREATE TABLE rpw1 PARTITION OF rpw FOR VALUES FROM (0) TO (1000) PARTITION BY RANGE (k);
CREATE TABLE rpw11 PARTITION OF rpw1 FOR VALUES FROM (0) TO (500);
CREATE INDEX rpw11_kw ON rpw11 USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE INDEX rpw_k ON rpw USING abtree (k) INCLUDE (w);  -- ERROR
CREATE INDEX rpw_kw ON ONLY rpw USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE INDEX rpw1_k ON ONLY rpw1 USING abtree (k) INCLUDE (w);
ALTER INDEX rpw_kw ATTACH PARTITION rpw1_k;  -- ERROR
DROP INDEX rpw1_k;
CREATE INDEX rpw_kw2 ON rpw USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
SELECT c.relname, i.inhparent::regclass FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
WHERE c.relname LIKE 'rpw%' AND c.relkind IN ('i', 'I') ORDER BY 1;
DROP TABLE rpw;

DROP TABLE rg, rg_empty;
