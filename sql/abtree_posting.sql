--
-- Posting tuples (issue 22): CREATE INDEX folds the entries of rows whose
-- index columns are the same bytes into one leaf tuple of their heap TIDs,
-- which weighs their number.  Scans return every TID, draws pick one TID
-- of a tuple uniformly, VACUUM takes dead TIDs out (the first one too, which
-- does not move the tuple), and inserts after the build land between them.
--
-- The statistical tests draw with fixed seeds; their critical values are
-- the 0.999 quantiles (false-alarm rate 0.001 each with random seeds).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;
SELECT setseed(0.25);

-- 4 keys, 600 rows each, spread over the heap: each key a run of 600 TIDs,
-- in three posting tuples (at most about 220 TIDs each)
CREATE TABLE pt (id int, k int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO pt SELECT i, i % 4, repeat('x', 200) FROM generate_series(1, 2400) i;
CREATE INDEX pt_k ON pt USING abtree (k);
CREATE INDEX pt_k_plain ON pt USING abtree (k) WITH (deduplicate_items = off);
SELECT entries, total_weight, leaf_pages FROM abtree_stats('pt_k');
SELECT p.leaf_pages AS posting_leaves, q.leaf_pages AS plain_leaves
  FROM abtree_stats('pt_k') p, abtree_stats('pt_k_plain') q;
SELECT abtree_verify('pt_k', heapallindexed => true, exact => true);
SELECT abtree_verify('pt_k_plain', heapallindexed => true, exact => true);

-- scans: every row once, forward and backward, index-only, bitmap, cursor
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), count(DISTINCT id), sum(id) FROM pt WHERE k = 2;
SELECT count(*), sum(k) FROM pt WHERE k BETWEEN 1 AND 2;
EXPLAIN (COSTS OFF) SELECT k FROM pt WHERE k >= 3 ORDER BY k DESC;
SELECT count(*), sum(k) FROM (SELECT k FROM pt WHERE k >= 2 ORDER BY k DESC) s;
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT count(*), sum(id) FROM pt WHERE k = 2;
RESET enable_indexscan;
SET enable_bitmapscan = off;
-- a scrollable cursor turns around inside a posting tuple's TIDs
CREATE FUNCTION pt_cursor_walk(OUT forward_rest int, OUT backward_all int, OUT ids_back bigint)
LANGUAGE plpgsql AS $$
DECLARE
  c refcursor;
  r record;
BEGIN
  forward_rest := 0; backward_all := 0; ids_back := 0;
  OPEN c SCROLL FOR SELECT id FROM pt WHERE k = 1 ORDER BY k;
  MOVE FORWARD 300 FROM c;
  MOVE BACKWARD 100 FROM c;
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    forward_rest := forward_rest + 1;
  END LOOP;
  LOOP
    FETCH PRIOR FROM c INTO r;
    EXIT WHEN NOT FOUND;
    backward_all := backward_all + 1;
    ids_back := ids_back + r.id;
  END LOOP;
  CLOSE c;
END $$;
SELECT * FROM pt_cursor_walk();
RESET enable_seqscan;
RESET enable_bitmapscan;

-- uniform per row: 240,000 draws, 100 expected per row
CREATE TEMP TABLE pt_draw AS
  SELECT p.id FROM abtree_sample_tids('pt_k', 240000, 0.75) t JOIN pt p ON p.ctid = t;
CREATE FUNCTION pt_chisq(df int, OUT chisq float8, OUT crit float8) LANGUAGE sql AS $$
  -- the 0.999 quantile by Wilson and Hilferty's approximation (z = 3.0902)
  SELECT sum((coalesce(n, 0) - e) ^ 2 / e),
         $1 * (1 - 2.0 / (9 * $1) + 3.0902 * sqrt(2.0 / (9 * $1))) ^ 3
    FROM (SELECT p.id, c.n, (SELECT count(*) FROM pt_draw)::float8 / (SELECT count(*) FROM pt) AS e
            FROM pt p LEFT JOIN (SELECT id, count(*) AS n FROM pt_draw GROUP BY id) c USING (id)) s
$$;
SELECT count(*) AS draws, count(DISTINCT id) AS rows_drawn FROM pt_draw;
SELECT chisq < crit AS uniform_per_row FROM pt_chisq(2399);
-- the first and the last TID of every run of a key (a tuple's ends): each
-- expected 100; the pair of sums is within 3.29 standard deviations
-- (false-alarm rate 0.001 each) of 400
WITH ends AS (
  SELECT k, min(ctid) AS first, max(ctid) AS last FROM pt GROUP BY k)
SELECT abs(count(*) FILTER (WHERE p.ctid = e.first) - 400) < 3.29 * sqrt(400) AS firsts_fair,
       abs(count(*) FILTER (WHERE p.ctid = e.last) - 400) < 3.29 * sqrt(400) AS lasts_fair
  FROM pt_draw d JOIN pt p USING (id) JOIN ends e ON e.k = p.k;
-- a key range draws only its rows, each alike; and TABLESAMPLE swr
CREATE TEMP TABLE pt_rdraw AS
  SELECT p.id, p.k FROM abtree_sample_tids_range('pt_k', 60000, 0.6, 1, 2) t
  JOIN pt p ON p.ctid = t;
SELECT count(*) AS draws, min(k), max(k), count(DISTINCT id) AS rows_drawn FROM pt_rdraw;
-- chi-square over the 1,200 rows (df 1199, 0.999 quantile 1356.1), 50 expected each
SELECT sum((coalesce(c.n, 0) - 50.0) ^ 2 / 50.0) < 1356.1 AS uniform_in_range
  FROM pt p LEFT JOIN (SELECT id, count(*) AS n FROM pt_rdraw GROUP BY id) c USING (id)
 WHERE p.k BETWEEN 1 AND 2;
-- (1,000 draws with replacement of 2,400 rows: about 818 distinct ones)
SELECT count(*), count(DISTINCT id) BETWEEN 760 AND 880 AS spread
  FROM pt TABLESAMPLE swr(1000) REPEATABLE (3);
-- the test can fail: a draw that never took a tuple's first TID leaves ten
-- or so rows at 0, which this statistic sees as from a biased sampler
SELECT (chisq + 10 * 100) < crit AS ten_rows_at_zero_pass FROM pt_chisq(2399);

-- VACUUM: dead TIDs leave the tuples, the first ones too; whole tuples go
DELETE FROM pt WHERE id % 5 = 0 OR id <= 400 OR (k = 3 AND id > 1800);
VACUUM pt;
SELECT entries = (SELECT count(*) FROM pt) AS all_indexed,
       total_weight = (SELECT count(*) FROM pt) AS weight_is_rows
  FROM abtree_stats('pt_k');
SELECT abtree_verify('pt_k', heapallindexed => true, exact => true);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k, count(*) FROM pt WHERE k >= 0 GROUP BY k ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT k, count(*) FROM pt GROUP BY k ORDER BY k;
-- still uniform per row after the TIDs left
TRUNCATE pt_draw;
INSERT INTO pt_draw
  SELECT p.id FROM abtree_sample_tids('pt_k', 150000, 0.5) t JOIN pt p ON p.ctid = t;
SELECT chisq < crit AS uniform_after_vacuum
  FROM pt_chisq((SELECT count(*)::int - 1 FROM pt));

-- inserts after the build: the freed slots take new rows, whose TIDs fall
-- inside the tuples' ranges; they go in as entries of their own
INSERT INTO pt SELECT 10000 + i, i % 4, repeat('y', 200) FROM generate_series(1, 1500) i;
SELECT abtree_verify('pt_k', heapallindexed => true, exact => true);
SELECT entries = (SELECT count(*) FROM pt) AS all_indexed FROM abtree_stats('pt_k');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k, count(*), sum(id) FROM pt WHERE k >= 0 GROUP BY k ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT k, count(*), sum(id) FROM pt GROUP BY k ORDER BY k;
SELECT abtree_range_weight('pt_k', 1, 2) = (SELECT count(*) FROM pt WHERE k BETWEEN 1 AND 2)
  AS range_counts_rows;
-- the leaves split: their halves keep HAS_POSTING, and the draws stay uniform
SELECT leaf_pages > 3 AS split FROM abtree_stats('pt_k');
TRUNCATE pt_draw;
INSERT INTO pt_draw
  SELECT p.id FROM abtree_sample_tids('pt_k', 200000, 0.3) t JOIN pt p ON p.ctid = t;
SELECT chisq < crit AS uniform_after_inserts
  FROM pt_chisq((SELECT count(*)::int - 1 FROM pt));
DELETE FROM pt WHERE k = 1;
VACUUM pt;
SELECT abtree_verify('pt_k', heapallindexed => true, exact => true);
SELECT entries = (SELECT count(*) FROM pt) AS all_indexed FROM abtree_stats('pt_k');

-- what shares a tuple is the same bytes: numeric 1.0 and 1.00 are equal
-- but not the same, and index-only scans return each row's own value;
-- INCLUDE columns take part; NULLs fold too; several key columns
CREATE TABLE pn (n numeric, i int, t text);
INSERT INTO pn SELECT CASE g % 3 WHEN 0 THEN 1.0 WHEN 1 THEN 1.00 ELSE NULL END, g % 2, 'v' || (g % 5)
  FROM generate_series(1, 3000) g;
CREATE INDEX pn_n ON pn USING abtree (n) INCLUDE (i);
CREATE INDEX pn_ti ON pn USING abtree (t, i);
CREATE INDEX pn_desc ON pn USING abtree (t DESC NULLS FIRST, n);
SELECT abtree_verify('pn_n', heapallindexed => true, exact => true);
SELECT abtree_verify('pn_ti', heapallindexed => true, exact => true);
SELECT abtree_verify('pn_desc', heapallindexed => true, exact => true);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n::text, i FROM pn WHERE n = 1;
SELECT n::text, i, count(*) FROM pn WHERE n = 1 GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) FROM pn WHERE n IS NULL;
SELECT t, i, count(*) FROM pn WHERE t BETWEEN 'v1' AND 'v2' GROUP BY 1, 2 ORDER BY 1, 2;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT n::text, i, count(*) FROM pn WHERE n = 1 GROUP BY 1, 2 ORDER BY 1, 2;
-- a weighted index keeps one entry per row (each has its own weight)
CREATE INDEX pn_w ON pn USING abtree (t) INCLUDE (i) WITH (weight_column = 'i');
SELECT entries, total_weight FROM abtree_stats('pn_w');
SELECT abtree_verify('pn_w', heapallindexed => true, exact => true);

-- a run of fewer than four rows stays plain entries (its leaves keep the
-- draws' direct indexing); four fold
CREATE TABLE p3 (k int, r int);
INSERT INTO p3 SELECT g / 3, 3 FROM generate_series(0, 2999) g;
INSERT INTO p3 SELECT 10000 + g / 4, 4 FROM generate_series(0, 3999) g;
CREATE INDEX p3_k ON p3 USING abtree (k) WHERE r = 3;
CREATE INDEX p3_k_plain ON p3 USING abtree (k) WITH (deduplicate_items = off) WHERE r = 3;
CREATE INDEX p4_k ON p3 USING abtree (k) WHERE r = 4;
CREATE INDEX p4_k_plain ON p3 USING abtree (k) WITH (deduplicate_items = off) WHERE r = 4;
SELECT a.leaf_pages = b.leaf_pages AS threes_stay_plain, c.leaf_pages < d.leaf_pages AS fours_fold
  FROM abtree_stats('p3_k') a, abtree_stats('p3_k_plain') b, abtree_stats('p4_k') c,
       abtree_stats('p4_k_plain') d;
SELECT abtree_verify('p3_k', heapallindexed => true, exact => true),
       abtree_verify('p4_k', heapallindexed => true, exact => true);
DROP TABLE p3;

-- the option: off builds an entry per row; REINDEX after ALTER INDEX
SELECT reloptions FROM pg_class WHERE relname = 'pt_k_plain';
ALTER INDEX pt_k_plain SET (deduplicate_items = on);
REINDEX INDEX pt_k_plain;
REINDEX INDEX pt_k;
SELECT p.leaf_pages = q.leaf_pages AS same_as_default
  FROM abtree_stats('pt_k') p, abtree_stats('pt_k_plain') q;
SELECT abtree_verify('pt_k_plain', heapallindexed => true, exact => true);

-- inserts fold: a full leaf first folds its runs of equal entries that
-- every snapshot sees (valid, and older than every snapshot), as nbtree
-- deduplicates before it splits.  40 statements of 100 rows of 8 keys,
-- each committed before the next: the leaves fold instead of splitting.
CREATE TABLE pf (id int, k int) WITH (autovacuum_enabled = off);
CREATE INDEX pf_k ON pf USING abtree (k);
CREATE INDEX pf_k_plain ON pf USING abtree (k) WITH (deduplicate_items = off);
DO $$ BEGIN
  FOR i IN 0..39 LOOP
    INSERT INTO pf SELECT i * 100 + g, g % 8 FROM generate_series(1, 100) g;
    COMMIT;
  END LOOP;
END $$;
SELECT p.leaf_pages * 3 < q.leaf_pages AS folded, p.entries, p.total_weight
  FROM abtree_stats('pf_k') p, abtree_stats('pf_k_plain') q;
SELECT abtree_verify('pf_k', heapallindexed => true, exact => true);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k, count(*), sum(id) FROM pf WHERE k >= 0 GROUP BY k ORDER BY k;
SELECT count(*), sum(id) FROM (SELECT id FROM pf WHERE k BETWEEN 2 AND 5 ORDER BY k DESC) s;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT k, count(*), sum(id) FROM pf GROUP BY k ORDER BY k;
-- each row alike: 400,000 draws, 100 expected per row (df 3999; the
-- 0.999 quantile by Wilson and Hilferty's approximation, false alarms 0.001)
CREATE TEMP TABLE pf_draw AS
  SELECT p.id FROM abtree_sample_tids('pf_k', 400000, 0.4) t JOIN pf p ON p.ctid = t;
SELECT sum((coalesce(c.n, 0) - 100.0) ^ 2 / 100.0) <
         3999 * (1 - 2.0 / (9 * 3999) + 3.0902 * sqrt(2.0 / (9 * 3999))) ^ 3 AS uniform_folded
  FROM pf p LEFT JOIN (SELECT id, count(*) AS n FROM pf_draw GROUP BY id) c USING (id);
-- the inserting transaction's own entries fold once valid (flushed), with
-- their xid, in runs of 16 or more; entries not yet valid never (one would
-- weigh before its downlinks): 3,000 rows of one key in one statement onto
-- folded leaves stay exact
INSERT INTO pf SELECT 10000 + g, 3 FROM generate_series(1, 3000) g;
SELECT abtree_verify('pf_k', heapallindexed => true, exact => true);
SELECT entries, total_weight FROM abtree_stats('pf_k');
-- and take fewer leaves.  DELETE and VACUUM take folded TIDs out.
SELECT p.leaf_pages < q.leaf_pages AS fewer_leaves
  FROM abtree_stats('pf_k') p, abtree_stats('pf_k_plain') q;
INSERT INTO pf SELECT 20000 + g, 3 FROM generate_series(1, 500) g;
DELETE FROM pf WHERE id % 3 = 0;
VACUUM pf;
SELECT abtree_verify('pf_k', heapallindexed => true, exact => true);
SELECT entries = (SELECT count(*) FROM pf) AS all_indexed,
       total_weight = (SELECT count(*) FROM pf) AS weight_is_rows
  FROM abtree_stats('pf_k');
DROP TABLE pf;

-- a value's later rows come in heap order, so its entries grow near the
-- end of its run: a leaf beginning with the value splits where the value
-- ends (the high key takes every later entry of the value), and a leaf of
-- one value (its last) splits 96% left, as nbtree's single-value split.
-- 60 statements of 2,000 rows of 21 keys take about 1.1 times the leaves
-- of nbtree's deduplicated index; balanced splits took 1.8 times, and the
-- check fails without the 96% split.
CREATE TABLE pk (id int, k int) WITH (autovacuum_enabled = off);
CREATE INDEX pk_k ON pk USING abtree (k);
CREATE INDEX pk_k_btree ON pk USING btree (k);
CREATE INDEX pk_k2 ON pk USING abtree (k, (id % 2)) INCLUDE (id);
SELECT sum(value::bigint) FILTER (WHERE item = 'split_value_end') AS pk_end0,
       sum(value::bigint) FILTER (WHERE item = 'split_single_value') AS pk_single0,
       sum(value::bigint) FILTER (WHERE item = 'leaf_folds') AS pk_folds0
  FROM abtree_status() WHERE component = 'inserts' \gset
DO $$ BEGIN
  FOR i IN 0..59 LOOP
    INSERT INTO pk SELECT i * 2000 + g, g % 21 FROM generate_series(1, 2000) g;
    COMMIT;
  END LOOP;
END $$;
SELECT p.leaf_pages < 1.3 * pg_relation_size('pk_k_btree') / 8192 AS near_nbtree_size
  FROM abtree_stats('pk_k') p;
-- abtree_status counts both splits and the folds
SELECT sum(value::bigint) FILTER (WHERE item = 'split_value_end') > :pk_end0 AS value_end,
       sum(value::bigint) FILTER (WHERE item = 'split_single_value') > :pk_single0 AS single_value,
       sum(value::bigint) FILTER (WHERE item = 'leaf_folds') > :pk_folds0 AS folds
  FROM abtree_status() WHERE component = 'inserts';
DROP INDEX pk_k_btree;
SELECT abtree_verify('pk_k', heapallindexed => true, exact => true);
SELECT abtree_verify('pk_k2', heapallindexed => true, exact => true);
DELETE FROM pk WHERE id % 5 = 0;
VACUUM pk;
INSERT INTO pk SELECT 200000 + g, g % 21 FROM generate_series(1, 20000) g;
SELECT abtree_verify('pk_k', heapallindexed => true, exact => true);
SELECT abtree_verify('pk_k2', heapallindexed => true, exact => true);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k, count(*), sum(id) FROM pk WHERE k BETWEEN 3 AND 5 GROUP BY k ORDER BY k;
SELECT count(*), sum(id) FROM pk WHERE k = 20;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT k, count(*), sum(id) FROM pk WHERE k BETWEEN 3 AND 5 GROUP BY k ORDER BY k;
SELECT count(*), sum(id) FROM pk WHERE k = 20;
-- each key drawn as often as it has rows: 210,000 draws, chi-square over
-- the 21 keys (df 20; 0.999 quantile 45.31, false alarms 0.001)
SELECT sum((coalesce(d.n, 0) - 210000.0 * c.rows / c.total) ^ 2 /
           (210000.0 * c.rows / c.total)) < 45.31 AS uniform_keys
  FROM (SELECT k, count(*) AS rows, sum(count(*)) OVER () AS total
          FROM pk GROUP BY k) c
  LEFT JOIN (SELECT p.k, count(*) AS n
               FROM abtree_sample_tids('pk_k', 210000, 0.3) t JOIN pk p ON p.ctid = t
              GROUP BY p.k) d USING (k);
-- 200 values of 600 rows, each statement's rows in another order of the
-- values: most leaves hold one value's end and the next one's start.
-- 1.31 times nbtree's leaves; 1.72 without the split where a value ends
TRUNCATE pk;
CREATE INDEX pk_k_btree ON pk USING btree (k);
DO $$ BEGIN
  FOR i IN 0..59 LOOP
    INSERT INTO pk SELECT i * 2000 + g, (g * 7919) % 200 FROM generate_series(1, 2000) g;
    COMMIT;
  END LOOP;
END $$;
SELECT p.leaf_pages < 1.5 * pg_relation_size('pk_k_btree') / 8192 AS near_nbtree_size_200
  FROM abtree_stats('pk_k') p;
SELECT abtree_verify('pk_k', heapallindexed => true, exact => true);
SELECT abtree_verify('pk_k2', heapallindexed => true, exact => true);
DROP TABLE pk;

DROP TABLE pt, pn;
DROP FUNCTION pt_chisq, pt_cursor_walk;
