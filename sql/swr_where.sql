--
-- TABLESAMPLE swr and WHERE: key-range sampling, redrawing rows that fail
-- the clause (abtree.swr_where = redraw, the default) or filtering the n
-- draws as the SQL standard says (standard); EXPLAIN; partitioned tables
-- and inheritance parents; system columns, joins and prepared statements.
-- The distributions are tested in swr_stats.sql.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

CREATE TABLE swr_w (id int, k int, v int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO swr_w SELECT i, i % 1000, i % 7, 'x' FROM generate_series(1, 10000) i;
CREATE INDEX swr_w_k ON swr_w USING abtree (k);

-- EXPLAIN ANALYZE's draw counts as numbers (JSON), for checks that do not
-- depend on the tree's shape
CREATE FUNCTION swr_counts(query text,
  OUT rows bigint, OUT draws bigint, OUT invisible bigint, OUT by_index bigint,
  OUT by_filter bigint, OUT removed bigint)
LANGUAGE plpgsql AS $$
DECLARE
  p json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query INTO p;
  p := p -> 0 -> 'Plan';
  WHILE p ->> 'Node Type' <> 'Custom Scan' LOOP
    p := p -> 'Plans' -> 0;
  END LOOP;
  rows := (p ->> 'Actual Rows')::numeric;
  draws := p ->> 'Draws';
  invisible := p ->> 'Draws Invisible';
  by_index := p ->> 'Draws Rejected by Index';
  by_filter := p ->> 'Draws Rejected by Filter';
  removed := coalesce((p ->> 'Rows Removed by Filter')::bigint, 0);
END $$;
-- EXPLAIN ANALYZE in text, numbers masked
CREATE FUNCTION swr_explain(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || query LOOP
    RETURN NEXT regexp_replace(line, '\d+(\.\d+)?', 'N', 'g');
  END LOOP;
END $$;

-- key ranges: n rows, all inside, whatever the shape of the range
SELECT count(*) AS rows, bool_and(k BETWEEN 100 AND 199) AS inside
  FROM swr_w TABLESAMPLE swr(500) WHERE k BETWEEN 100 AND 199;
SELECT count(*) AS rows, bool_and(k > 990) AS inside
  FROM swr_w TABLESAMPLE swr(500) WHERE k > 990;
SELECT count(*) AS rows, bool_and(k < 3) AS inside
  FROM swr_w TABLESAMPLE swr(500) WHERE 3 > k;
SELECT count(*) AS rows, bool_and(k = 5) AS inside
  FROM swr_w TABLESAMPLE swr(500) WHERE k = 5;
SELECT count(*) AS rows, bool_and(k >= 10 AND k < 20) AS inside
  FROM swr_w TABLESAMPLE swr(500) WHERE k >= 10 AND k < 20 AND k >= 0 AND k < 900;
-- a range holds no row: no rows, no hang
SELECT count(*) FROM swr_w TABLESAMPLE swr(500) WHERE k BETWEEN 5000 AND 6000;
SELECT count(*) FROM swr_w TABLESAMPLE swr(500) WHERE k < -1;
-- the range draws only inside it: no draw is rejected by the filter
SELECT rows, by_filter, removed, draws - invisible - by_index - by_filter = rows AS balanced
  FROM swr_counts('SELECT * FROM swr_w TABLESAMPLE swr(300) REPEATABLE (1) WHERE k BETWEEN 100 AND 199');

-- a range draw starts below the root, where the range spans several
-- items: in this three-level tree (whose root has two children) a tenth of
-- the keys is drawn with few rejections; starting at the root, most draws
-- would land outside the range and be rejected (entries one per row: the
-- posting tuples of 100 rows each would make the tree two levels high)
CREATE TABLE swr_big (k int) WITH (autovacuum_enabled = off);
INSERT INTO swr_big SELECT i % 1000 FROM generate_series(1, 100000) i;
CREATE INDEX swr_big_k ON swr_big USING abtree (k) WITH (deduplicate_items = off);
SELECT height, pages_per_level FROM abtree_stats('swr_big_k');
SELECT rows, by_index * 10 < draws AS few_rejected
  FROM swr_counts('SELECT * FROM swr_big TABLESAMPLE swr(3000) REPEATABLE (1) WHERE k BETWEEN 100 AND 199');
DROP TABLE swr_big;

-- other clauses: rows that fail them are drawn again, so still n rows
SELECT count(*) AS rows, bool_and(v = 3 AND k < 300) AS all_match
  FROM swr_w TABLESAMPLE swr(500) WHERE k < 300 AND v = 3;
SELECT count(*) AS rows, bool_and(id % 10 = 0) AS all_match
  FROM swr_w TABLESAMPLE swr(500) WHERE id % 10 = 0;
SELECT rows, by_filter > 0 AS redrawn, by_filter = removed AS counted_as_removed,
       draws - invisible - by_index - by_filter = rows AS balanced
  FROM swr_counts('SELECT * FROM swr_w TABLESAMPLE swr(300) REPEATABLE (1) WHERE v = 3');
-- nothing satisfies WHERE: no rows
SELECT count(*) FROM swr_w TABLESAMPLE swr(100) WHERE v = 99;
SELECT count(*) FROM swr_w TABLESAMPLE swr(100) WHERE k < 50 AND v = 99;
-- REPEATABLE still repeats
SELECT (SELECT array_agg(id) FROM swr_w TABLESAMPLE swr(50) REPEATABLE (9) WHERE k < 500 AND v = 1) =
       (SELECT array_agg(id) FROM swr_w TABLESAMPLE swr(50) REPEATABLE (9) WHERE k < 500 AND v = 1)
       AS repeatable;

-- EXPLAIN shows the index, the range, the mode; ANALYZE the draws
EXPLAIN (COSTS OFF)
  SELECT * FROM swr_w TABLESAMPLE swr(100) WHERE k BETWEEN 100 AND 199 AND v = 3;
SELECT * FROM swr_explain('SELECT * FROM swr_w TABLESAMPLE swr(100) REPEATABLE (1) WHERE k < 100 AND v = 3');
-- in structured formats: separate properties
CREATE FUNCTION swr_plan_props(query text) RETURNS TABLE (key text, value text)
LANGUAGE plpgsql AS $$
DECLARE
  p json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF, FORMAT JSON) ' || query INTO p;
  RETURN QUERY SELECT j.key, j.value FROM json_each_text(p -> 0 -> 'Plan') j
    WHERE j.key IN ('Node Type', 'Custom Plan Provider', 'Filter', 'Sampling', 'Sample Index',
                    'Sample Range', 'Filter Mode', 'Draws', 'Draws Invisible',
                    'Draws Rejected by Index', 'Draws Rejected by Filter');
END $$;
SELECT key, CASE WHEN key LIKE 'Draws%' THEN value::bigint >= 0 ELSE NULL END AS count_ok,
       CASE WHEN key NOT LIKE 'Draws%' THEN value END AS value
  FROM swr_plan_props('SELECT * FROM swr_w TABLESAMPLE swr(100) WHERE k = 7');
-- a range on another column, or an operator outside the index's family, is
-- not a key range: it is checked as a filter
EXPLAIN (COSTS OFF) SELECT * FROM swr_w TABLESAMPLE swr(100) WHERE v < 3 AND k <> 5;
-- the planner expects n rows: every row returned satisfies WHERE
SELECT (swr_counts).rows FROM (SELECT swr_counts('SELECT * FROM swr_w TABLESAMPLE swr(77) WHERE k < 10')) s;

-- bounds known only at execution: parameters of a generic plan, LATERAL
SET plan_cache_mode = force_generic_plan;
PREPARE swr_q(int, int) AS
  SELECT count(*) AS rows, bool_and(k >= $1 AND k < $2) AS inside
    FROM swr_w TABLESAMPLE swr(200) WHERE k >= $1 AND k < $2;
EXECUTE swr_q(10, 20);
EXECUTE swr_q(900, 901);
EXECUTE swr_q(20, 10);
EXECUTE swr_q(NULL, 10);
EXPLAIN (COSTS OFF) EXECUTE swr_q(10, 20);
DEALLOCATE swr_q;
RESET plan_cache_mode;
SELECT g, s.rows, s.inside
  FROM generate_series(1, 3) g,
       LATERAL (SELECT count(*) AS rows, bool_and(k < g * 10) AS inside
                  FROM swr_w TABLESAMPLE swr(g * 5) WHERE k < g * 10) s;

-- the standard's rule: n draws from the whole table, then WHERE filters
SET abtree.swr_where = standard;
SELECT count(*) < 100 AS filtered, bool_and(k < 100) AS all_match
  FROM swr_w TABLESAMPLE swr(100) REPEATABLE (4) WHERE k < 100;
SELECT count(*) FROM swr_w TABLESAMPLE swr(100) WHERE v = 99;
SELECT count(*) FROM swr_w TABLESAMPLE swr(100) WHERE true;
SELECT rows + removed AS draws_used, by_filter = removed AS counted
  FROM swr_counts('SELECT * FROM swr_w TABLESAMPLE swr(300) REPEATABLE (1) WHERE v = 3');
EXPLAIN (COSTS OFF) SELECT * FROM swr_w TABLESAMPLE swr(100) WHERE k < 100;
SELECT * FROM swr_explain('SELECT * FROM swr_w TABLESAMPLE swr(100) REPEATABLE (1) WHERE k < 100');
-- a plan keeps the mode it was planned with
PREPARE swr_std AS SELECT count(*) FROM swr_w TABLESAMPLE swr(100) REPEATABLE (4) WHERE k < 100;
RESET abtree.swr_where;
EXECUTE swr_std;
DEALLOCATE swr_std;
SET abtree.swr_where = sideways;

-- NULL keys are never in a range; a DESC index; a collation
CREATE TABLE swr_n (id int, k int, t text) WITH (autovacuum_enabled = off);
INSERT INTO swr_n SELECT i, CASE WHEN i % 4 = 0 THEN NULL ELSE i % 50 END, 'w' || (i % 50)
  FROM generate_series(1, 2000) i;
CREATE INDEX swr_n_k ON swr_n USING abtree (k DESC NULLS FIRST);
SELECT count(*) AS rows, count(k) AS not_null, bool_and(k >= 40) AS inside
  FROM swr_n TABLESAMPLE swr(300) WHERE k >= 40;
SELECT count(*) AS rows, count(k) AS not_null, bool_and(k < 5) AS inside
  FROM swr_n TABLESAMPLE swr(300) WHERE k < 5;
SELECT count(*) AS rows, bool_and(k IS NULL) AS all_null
  FROM swr_n TABLESAMPLE swr(300) WHERE k IS NULL;
DROP INDEX swr_n_k;
CREATE INDEX swr_n_t ON swr_n USING abtree (t COLLATE "C");
EXPLAIN (COSTS OFF) SELECT * FROM swr_n TABLESAMPLE swr(10) WHERE t < 'w2' COLLATE "C";
EXPLAIN (COSTS OFF) SELECT * FROM swr_n TABLESAMPLE swr(10) WHERE t < 'w2' COLLATE "POSIX";
SELECT count(*) AS rows, bool_and(t < 'w2' COLLATE "C") AS inside
  FROM swr_n TABLESAMPLE swr(300) WHERE t < 'w2' COLLATE "C";
-- a bound computed when the scan starts, in memory of its own
SET swr.bound = 'w2';
SELECT count(*) AS rows, bool_and(t < 'w2' COLLATE "C") AS inside
  FROM swr_n TABLESAMPLE swr(300) WHERE t < current_setting('swr.bound') COLLATE "C";
EXPLAIN (COSTS OFF)
  SELECT * FROM swr_n TABLESAMPLE swr(300) WHERE t < current_setting('swr.bound') COLLATE "C";
RESET swr.bound;

-- system columns, joins, locking
SELECT count(*) AS rows FROM swr_w s TABLESAMPLE swr(20) REPEATABLE (2)
  JOIN swr_w t ON t.ctid = s.ctid AND t.id = s.id;
SELECT DISTINCT tableoid::regclass AS tbl, xmin = (SELECT xmin FROM swr_w WHERE id = 1) AS one_load
  FROM swr_w TABLESAMPLE swr(20);
SELECT count(*) AS rows FROM (SELECT id FROM swr_w TABLESAMPLE swr(5) WHERE k < 10 FOR UPDATE) s;

-- partitioned tables: n rows in all, the partitions chosen by weight
CREATE TABLE swr_pa (id int, k int, w int) PARTITION BY RANGE (id);
CREATE TABLE swr_pa1 PARTITION OF swr_pa FOR VALUES FROM (0) TO (1000);
CREATE TABLE swr_pa2 PARTITION OF swr_pa FOR VALUES FROM (1000) TO (3000)
  PARTITION BY RANGE (id);
CREATE TABLE swr_pa2a PARTITION OF swr_pa2 FOR VALUES FROM (1000) TO (2000);
CREATE TABLE swr_pa2b PARTITION OF swr_pa2 FOR VALUES FROM (2000) TO (3000);
-- a partition with its columns in another order and a dropped column
CREATE TABLE swr_pa3 (w int, junk int, k int, id int);
ALTER TABLE swr_pa3 DROP COLUMN junk;
ALTER TABLE swr_pa ATTACH PARTITION swr_pa3 FOR VALUES FROM (3000) TO (10000);
INSERT INTO swr_pa SELECT i, i % 100, 1 + i % 3 FROM generate_series(0, 9999) i;
SELECT count(*) FROM swr_pa TABLESAMPLE swr(10);
CREATE INDEX swr_pa_k ON swr_pa USING abtree (k);
SELECT count(*) AS rows, count(DISTINCT tableoid) AS tables,
       bool_and(k = id % 100 AND w = 1 + id % 3) AS columns_right
  FROM swr_pa TABLESAMPLE swr(1000) REPEATABLE (1);
SELECT count(*) AS rows,
       bool_and(s.ctid = t.ctid AND s.tableoid = t.tableoid) AS system_columns_right
  FROM swr_pa s TABLESAMPLE swr(300) REPEATABLE (2) JOIN swr_pa t USING (id);
SELECT count(*) AS rows, bool_and(k BETWEEN 10 AND 12) AS inside
  FROM swr_pa TABLESAMPLE swr(500) WHERE k BETWEEN 10 AND 12;
EXPLAIN (COSTS OFF) SELECT * FROM swr_pa TABLESAMPLE swr(10) WHERE k < 5;
-- pruning leaves the partitions that can hold rows
EXPLAIN (COSTS OFF) SELECT * FROM swr_pa TABLESAMPLE swr(10) WHERE id < 500;
SELECT count(*) AS rows, bool_and(id < 1500) AS inside
  FROM swr_pa TABLESAMPLE swr(300) WHERE id < 1500;
SELECT count(*) FROM swr_pa TABLESAMPLE swr(10) WHERE id < 0;
-- in a join, and with partitionwise joins on
SET enable_partitionwise_join = on;
SELECT count(*) AS rows FROM swr_pa s TABLESAMPLE swr(50) JOIN swr_pa t USING (id);
RESET enable_partitionwise_join;
-- weighted: every partition must weigh rows the same way
CREATE INDEX swr_pa1_w ON swr_pa1 USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
SET abtree.swr_index = swr_pa1_w;
SELECT count(*) FROM swr_pa TABLESAMPLE swr(10);
RESET abtree.swr_index;
DROP INDEX swr_pa1_w;
-- a partition without an abtree index
CREATE TABLE swr_pb (id int, k int) PARTITION BY LIST (k);
CREATE TABLE swr_pb1 PARTITION OF swr_pb FOR VALUES IN (1);
CREATE TABLE swr_pb2 PARTITION OF swr_pb FOR VALUES IN (2);
INSERT INTO swr_pb SELECT i, 1 + i % 2 FROM generate_series(1, 100) i;
CREATE INDEX ON swr_pb1 USING abtree (id);
SELECT count(*) FROM swr_pb TABLESAMPLE swr(10);
SELECT count(*) AS rows, bool_and(k = 1) AS pruned FROM swr_pb TABLESAMPLE swr(10) WHERE k = 1;

-- an inheritance parent draws from itself and its children
CREATE TABLE swr_ip (id int, k int);
CREATE TABLE swr_ic (extra text) INHERITS (swr_ip);
INSERT INTO swr_ip SELECT i, i % 10 FROM generate_series(1, 100) i;
INSERT INTO swr_ic SELECT i, i % 10, 'c' FROM generate_series(101, 400) i;
CREATE INDEX ON swr_ip USING abtree (k);
CREATE INDEX ON swr_ic USING abtree (k);
SELECT count(*) AS rows, count(DISTINCT tableoid) AS tables
  FROM swr_ip TABLESAMPLE swr(1000) REPEATABLE (3);
SELECT count(*) AS rows FROM ONLY swr_ip TABLESAMPLE swr(100) WHERE id > 100;
EXPLAIN (COSTS OFF) SELECT * FROM swr_ip TABLESAMPLE swr(10);

-- per-index counters: abtree_swr_stats
SELECT abtree_swr_stats_reset();
SELECT count(*) FROM swr_w TABLESAMPLE swr(300) REPEATABLE (1) WHERE v = 3;
SELECT count(*) FROM swr_w TABLESAMPLE swr(0);
SELECT count(*) FROM swr_pa TABLESAMPLE swr(400) REPEATABLE (1);
SELECT index, "table", scans, rows_returned,
       draws = rows_returned + rejected_invisible + rejected_by_index + rejected_by_filter AS balanced,
       rejected_by_filter > 0 AS redrawn, acceptance <= 1 AS acceptance_ok,
       last_scan <= now() + interval '1 hour' AS has_time
  FROM abtree_swr_stats ORDER BY index::text;
SELECT sum(rows_returned) AS partitions_rows FROM abtree_swr_stats WHERE "table"::text LIKE 'swr_pa%';
CREATE ROLE swr_stats_user;
SET ROLE swr_stats_user;
SELECT count(*) >= 0 AS readable FROM abtree_swr_stats;
SELECT abtree_swr_stats_reset();
RESET ROLE;
DROP ROLE swr_stats_user;
SELECT abtree_swr_stats_reset();
SELECT count(*) AS after_reset FROM abtree_swr_stats;

-- what TABLESAMPLE cannot be applied to
CREATE VIEW swr_v AS SELECT * FROM swr_w;
SELECT * FROM swr_v TABLESAMPLE swr(5);
CREATE FOREIGN DATA WRAPPER swr_fdw;
CREATE SERVER swr_srv FOREIGN DATA WRAPPER swr_fdw;
CREATE FOREIGN TABLE swr_ft (id int) SERVER swr_srv;
SELECT * FROM swr_ft TABLESAMPLE swr(5);
SET client_min_messages = warning;
DROP FOREIGN DATA WRAPPER swr_fdw CASCADE;
RESET client_min_messages;

-- a plan that reads no column of its rows (count(*)) returns one row of
-- NULLs per draw instead of a copy (swr_fetch_block): its draws and the
-- ones it rejects as invisible are those of a plan that reads a column,
-- with the same seed on the same index (deleted rows not yet vacuumed,
-- then all-visible pages after VACUUM); what reads a column still gets it
DELETE FROM swr_w WHERE id % 3 = 0;
SELECT a.draws = b.draws AND a.invisible = b.invisible AS same_draws,
       a.invisible > 0 AS some_invisible, a.rows, b.rows
FROM swr_counts('SELECT count(*) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (4)') a,
     swr_counts('SELECT count(v) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (4)') b;
VACUUM swr_w;
SELECT a.draws = b.draws AND a.invisible = b.invisible AS same_draws, a.rows, b.rows
FROM swr_counts('SELECT count(*) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (5)') a,
     swr_counts('SELECT count(v) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (5)') b;
SELECT count(*) AS rows, count(id) AS ids, bool_and(id % 3 <> 0) AS none_deleted,
       (SELECT count(*) FROM (SELECT 1 FROM swr_w TABLESAMPLE swr(300) REPEATABLE (6)) c) AS constants,
       (SELECT count(*) FROM swr_w TABLESAMPLE swr(300) REPEATABLE (7) WHERE v >= 0) AS filtered
FROM swr_w TABLESAMPLE swr(300) REPEATABLE (6);
-- index-only draws (swr_index_only): after VACUUM the visibility map marks
-- the pages all-visible, and count(*) reads none of them; a delete makes
-- the first pages' draws read the heap again, and the draws, the invisible
-- ones and the rows are still those of the plan that reads a column
CREATE FUNCTION swr_index_only(query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  p json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query INTO p;
  RETURN coalesce((p -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Index-Only Draws')::bigint, 0);
END $$;
SELECT swr_index_only('SELECT count(*) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (8)')
         = 2000 AS all_index_only,
       swr_index_only('SELECT count(v) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (8)')
         = 0 AS none_reading_v;
DELETE FROM swr_w WHERE id <= 1500;
SELECT a.draws = b.draws AND a.invisible = b.invisible AND a.rows = b.rows AS same_draws,
       a.invisible > 0 AS some_invisible, a.rows,
       swr_index_only('SELECT count(*) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (9)')
         BETWEEN 1 AND a.draws - a.invisible - 1 AS some_index_only
FROM swr_counts('SELECT count(*) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (9)') a,
     swr_counts('SELECT count(v) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (9)') b;
-- not in a serializable transaction: its reads owe the pages predicate locks
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT swr_index_only('SELECT count(*) FROM swr_w TABLESAMPLE swr(2000) REPEATABLE (9)') AS serializable;
COMMIT;
-- covered plans (swr_plan_cover): a plan that reads only columns of the
-- sample index (key or INCLUDE) makes an index-only draw's row from the
-- entry.  With the same seed, its rows are those of a plan that also reads
-- a column the index lacks (fetched from the heap): NULLs, text, numeric
-- and posting tuples (CREATE INDEX folds runs of equal keys), a WHERE on
-- indexed columns, partitions that order their columns differently.  A
-- system column or the whole row reads the heap.
CREATE TABLE swr_c (id int, k int, t text, inc numeric, other int) WITH (autovacuum_enabled = off);
INSERT INTO swr_c
  SELECT i, CASE WHEN i % 50 = 0 THEN NULL ELSE i % 300 END,
         CASE WHEN i % 7 = 0 THEN NULL ELSE repeat(md5((i % 40)::text), 1 + i % 3) END,
         (i % 600) / 7.0, i
  FROM generate_series(1, 6000) i;
CREATE INDEX swr_c_kt ON swr_c USING abtree (k, t) INCLUDE (inc);
VACUUM swr_c;
-- more entries a leaf than plain tuples of these columns fit (about 80)
SELECT entries / leaf_pages > 200 AS postings FROM abtree_stats('swr_c_kt');
SELECT a.s = b.s AS same_rows, a.n, a.nulls > 0 AS some_null_k, a.tnulls > 0 AS some_null_t,
       swr_index_only('SELECT array_agg(t) FROM swr_c TABLESAMPLE swr(3000) REPEATABLE (11)')
         = 3000 AS all_index_only,
       swr_index_only('SELECT array_agg(other) FROM swr_c TABLESAMPLE swr(3000) REPEATABLE (11)')
         = 0 AS other_from_heap
FROM (SELECT array_agg(ROW(k, t, inc) ORDER BY k, t, inc) s, count(*) n,
             count(*) FILTER (WHERE k IS NULL) nulls, count(*) FILTER (WHERE t IS NULL) tnulls
      FROM swr_c TABLESAMPLE swr(3000) REPEATABLE (11)) a,
     (SELECT array_agg(ROW(k, t, inc) ORDER BY k, t, inc) s, sum(other) o
      FROM swr_c TABLESAMPLE swr(3000) REPEATABLE (11)) b;
SELECT a.s = b.s AS same_filtered_rows, a.n,
       swr_index_only('SELECT sum(inc) FROM swr_c TABLESAMPLE swr(400) REPEATABLE (12) WHERE t IS NULL')
         > 0 AS where_index_only
FROM (SELECT array_agg(inc ORDER BY inc) s, count(*) n
      FROM swr_c TABLESAMPLE swr(400) REPEATABLE (12) WHERE t IS NULL) a,
     (SELECT array_agg(inc ORDER BY inc) s
      FROM swr_c TABLESAMPLE swr(400) REPEATABLE (12) WHERE t IS NULL AND other > 0) b;
SELECT swr_index_only('SELECT count(ctid) FROM swr_c TABLESAMPLE swr(100) REPEATABLE (13)') AS ctid,
       swr_index_only('SELECT count(s) FROM swr_c s TABLESAMPLE swr(100) REPEATABLE (13)') AS whole_row;
VACUUM swr_pa;
SELECT a.s = b.s AS same_partition_rows, a.n,
       swr_index_only('SELECT array_agg(k) FROM swr_pa TABLESAMPLE swr(1000) REPEATABLE (14)')
         = 1000 AS partitions_index_only
FROM (SELECT array_agg(k ORDER BY k) s, count(*) n FROM swr_pa TABLESAMPLE swr(1000) REPEATABLE (14)) a,
     (SELECT array_agg(k ORDER BY k) s, sum(id) i FROM swr_pa TABLESAMPLE swr(1000) REPEATABLE (14)) b;
-- a serializable transaction reads the heap for covered plans too
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT swr_index_only('SELECT array_agg(t) FROM swr_c TABLESAMPLE swr(300) REPEATABLE (15)') AS serializable_covered;
COMMIT;
DROP TABLE swr_c;
DROP FUNCTION swr_index_only(text);

DROP VIEW swr_v;
DROP TABLE swr_w, swr_n, swr_pa, swr_pb, swr_ip CASCADE;
DROP FUNCTION swr_counts(text), swr_explain(text), swr_plan_props(text);
