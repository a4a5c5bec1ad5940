--
-- TABLESAMPLE swr(n): exact row counts, REPEATABLE, the choice of index,
-- visibility, and every bad input.  The distributions are tested in
-- swr_stats.sql.  Drawn rows depend on the tree's shape, so the queries
-- show counts and comparisons, not row ids.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

-- autovacuum off: some checks need dead rows to stay until we VACUUM
CREATE TABLE swr_t (id int, k int, w int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO swr_t SELECT i, i % 100, 1 + i % 10, 'x' FROM generate_series(1, 1000) i;

-- no abtree index: an ERROR with a hint, also for n = 0
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
SELECT count(*) FROM swr_t TABLESAMPLE swr(0);
CREATE INDEX swr_t_btree ON swr_t (k);
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);

CREATE INDEX swr_t_k ON swr_t USING abtree (k);

-- exactly n rows, repeats included (n may exceed the table's 1000 rows)
SELECT n, (SELECT count(*) FROM swr_t TABLESAMPLE swr(n)) AS rows
  FROM unnest(ARRAY[0, 1, 7, 1000, 100000, 1000000]) n;
-- with replacement: 2000 draws from 1000 rows repeat some rows
SELECT count(*) AS draws, count(DISTINCT id) < 1000 AS some_rows_repeat
  FROM swr_t TABLESAMPLE swr(2000) REPEATABLE (7);
-- n as other numeric types and as a literal
SELECT count(*) FROM swr_t TABLESAMPLE swr(3::bigint);
SELECT count(*) FROM swr_t TABLESAMPLE swr(3.0);
SELECT count(*) FROM swr_t TABLESAMPLE swr('3');
SELECT count(*) FROM swr_t TABLESAMPLE swr(1e3);

-- REPEATABLE: the same seed gives the same rows, another seed others
SELECT (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(50) REPEATABLE (1)) =
       (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(50) REPEATABLE (1)) AS repeatable,
       (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(50) REPEATABLE (1)) <>
       (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(50) REPEATABLE (2)) AS seeds_differ,
       (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(50)) <>
       (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(50)) AS unseeded_differ;
-- a rescan repeats the sample: with REPEATABLE, and without it (the seed
-- is chosen once per plan node), like the built-in methods
SELECT count(DISTINCT s.a) AS distinct_samples
  FROM generate_series(1, 3) g,
       LATERAL (SELECT array_agg(id) AS a
                  FROM swr_t TABLESAMPLE swr(5 + g * 0) REPEATABLE (3)) s;
SELECT count(DISTINCT s.a) AS distinct_samples
  FROM generate_series(1, 3) g,
       LATERAL (SELECT array_agg(id) AS a FROM swr_t TABLESAMPLE swr(5 + g * 0)) s;
-- arguments are evaluated once per scan: a LATERAL n, a subquery, a
-- volatile function
SELECT v.n, s.c
  FROM (VALUES (0), (10), (100)) v(n),
       LATERAL (SELECT count(*) AS c FROM swr_t TABLESAMPLE swr(v.n)) s;
SELECT count(*) FROM swr_t TABLESAMPLE swr((SELECT count(*) FROM swr_t WHERE id <= 5));
CREATE SEQUENCE swr_seq START 4;
SELECT count(*) FROM swr_t TABLESAMPLE swr(nextval('swr_seq'));
SELECT currval('swr_seq') AS evaluated_once;
SELECT count(*) FROM swr_t TABLESAMPLE swr(4) REPEATABLE (random());

-- a cursor returns the n rows across fetches
BEGIN;
DECLARE swr_c CURSOR FOR SELECT 1 AS one FROM swr_t TABLESAMPLE swr(10);
FETCH 3 FROM swr_c;
MOVE FORWARD ALL IN swr_c;
COMMIT;

-- Batches' work arrays are kept between queries (abtscratch.c): two scans
-- open at once, an ERROR in the middle of one and a rolled-back cursor
-- leave the samples as they are alone.
CREATE TEMP TABLE swr_alone AS
SELECT (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (3)) AS a,
       (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (4)) AS b;
BEGIN;
DECLARE swr_c3 CURSOR FOR SELECT id FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (3);
MOVE 7 IN swr_c3;
SELECT (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (4)) = b AS b_meanwhile
  FROM swr_alone;
COMMIT;
BEGIN;
DECLARE swr_c3 CURSOR FOR SELECT id FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (3);
DECLARE swr_c4 CURSOR FOR SELECT id FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (4);
CREATE FUNCTION swr_fetch_all(c refcursor) RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
  r int;
  out int[] := '{}';
BEGIN
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    out := out || r;
  END LOOP;
  RETURN out;
END $$;
MOVE 5000 IN swr_c3;
MOVE 5000 IN swr_c4;
SELECT swr_fetch_all('swr_c4') = b[5001:] AS b_interleaved,
       swr_fetch_all('swr_c3') = a[5001:] AS a_interleaved
  FROM swr_alone;
ROLLBACK;
BEGIN;
DECLARE swr_c3 CURSOR FOR SELECT id FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (3);
MOVE 2 IN swr_c3;
SELECT count(*) FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (4) WHERE 1 / (id - id) = 0;
ROLLBACK;
SELECT (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (3)) = a AS a_after,
       (SELECT array_agg(id) FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (4)) = b AS b_after
  FROM swr_alone;
DROP TABLE swr_alone;

-- EXPLAIN shows the method, its argument and the index
EXPLAIN (COSTS OFF) SELECT * FROM swr_t TABLESAMPLE swr(10);
EXPLAIN (COSTS OFF) SELECT * FROM swr_t TABLESAMPLE swr(10) REPEATABLE (1) WHERE k < 5;
-- the planner expects n rows (1000 when n is known only at run time)
CREATE FUNCTION swr_plan_value(query text, field text DEFAULT 'Plan Rows')
RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
  RETURN (plan -> 0 -> 'Plan' ->> field)::float8;
END $$;
SELECT swr_plan_value('SELECT * FROM swr_t TABLESAMPLE swr(123)') AS n_123,
       swr_plan_value('SELECT * FROM swr_t TABLESAMPLE swr(5000)') AS n_5000,
       swr_plan_value('SELECT * FROM swr_t TABLESAMPLE swr(0)') AS n_0,
       swr_plan_value('SELECT * FROM swr_t TABLESAMPLE swr(-5)') AS n_bad,
       swr_plan_value('SELECT * FROM swr_t TABLESAMPLE swr(random())') AS n_unknown;
-- the cost charges each page the draws read once, not a random page read
-- per draw: swr(100000) on these 1,000 rows is far below jit_above_cost's
-- default (it cost 411,000 and was compiled)
SELECT swr_plan_value('SELECT * FROM swr_t TABLESAMPLE swr(100000)', 'Total Cost')
         < 100000 AS pages_once,
       swr_plan_value('SELECT * FROM swr_t TABLESAMPLE swr(100)', 'Total Cost')
         < swr_plan_value('SELECT * FROM swr_t TABLESAMPLE swr(100000)', 'Total Cost')
         AS grows_with_n;
DROP FUNCTION swr_plan_value(text, text);

-- WHERE: n rows that satisfy it (swr_where.sql has the rest)
SELECT count(*) AS rows, bool_and(k < 10) AS all_match
  FROM swr_t TABLESAMPLE swr(100) REPEATABLE (4) WHERE k < 10;

-- bad arguments
SELECT count(*) FROM swr_t TABLESAMPLE swr(NULL);
SELECT count(*) FROM swr_t TABLESAMPLE swr(NULL::int);
SELECT count(*) FROM swr_t TABLESAMPLE swr(-1);
SELECT count(*) FROM swr_t TABLESAMPLE swr(-0.0);
SELECT count(*) FROM swr_t TABLESAMPLE swr(7.5);
SELECT count(*) FROM swr_t TABLESAMPLE swr(0.001);
SELECT count(*) FROM swr_t TABLESAMPLE swr('NaN');
SELECT count(*) FROM swr_t TABLESAMPLE swr('Infinity');
SELECT count(*) FROM swr_t TABLESAMPLE swr('-Infinity');
SELECT count(*) FROM swr_t TABLESAMPLE swr(1000000001);
SELECT count(*) FROM swr_t TABLESAMPLE swr(1e300);
SELECT count(*) FROM swr_t TABLESAMPLE swr('ten');
SELECT count(*) FROM swr_t TABLESAMPLE swr();
SELECT count(*) FROM swr_t TABLESAMPLE swr(1, 2);
-- (terse: PostgreSQL 18 words the explanation as a DETAIL, 15 as a HINT)
\set VERBOSITY terse
SELECT count(*) FROM swr_t TABLESAMPLE swr(id);
\set VERBOSITY default
SELECT count(*) FROM swr_t TABLESAMPLE swr(5) REPEATABLE (NULL);
SELECT count(*) FROM swr_t TABLESAMPLE swr(5) REPEATABLE ('seed');
SELECT count(*) FROM swr_t TABLESAMPLE swr(sum(1));
SELECT count(*) FROM swr_t TABLESAMPLE swr((SELECT -1));
SELECT count(*) FROM swr_t TABLESAMPLE swr((SELECT 0.5));
-- only tables and materialized views can be sampled (PostgreSQL's check)
CREATE VIEW swr_v AS SELECT * FROM swr_t;
SELECT count(*) FROM swr_v TABLESAMPLE swr(5);
CREATE FOREIGN DATA WRAPPER swr_fdw;
CREATE SERVER swr_server FOREIGN DATA WRAPPER swr_fdw;
CREATE FOREIGN TABLE swr_ft (id int) SERVER swr_server;
SELECT count(*) FROM swr_ft TABLESAMPLE swr(5);
DROP FOREIGN DATA WRAPPER swr_fdw CASCADE;
DROP VIEW swr_v;
-- a materialized view with an abtree index works
CREATE MATERIALIZED VIEW swr_mv AS SELECT id, k FROM swr_t WHERE id <= 100;
SELECT count(*) FROM swr_mv TABLESAMPLE swr(5);
CREATE INDEX ON swr_mv USING abtree (id);
SELECT count(*), max(id) <= 100 AS only_its_rows FROM swr_mv TABLESAMPLE swr(500);
DROP MATERIALIZED VIEW swr_mv;

-- empty, deleted and weightless: no rows, no hang
CREATE TABLE swr_e (id int, w bigint) WITH (autovacuum_enabled = off);
CREATE INDEX swr_e_id ON swr_e USING abtree (id);
SELECT count(*) AS empty FROM swr_e TABLESAMPLE swr(1000);
INSERT INTO swr_e SELECT i, 0 FROM generate_series(1, 5000) i;
DELETE FROM swr_e;
SELECT count(*) AS all_deleted FROM swr_e TABLESAMPLE swr(1000000);
VACUUM swr_e;
SELECT count(*) AS vacuumed FROM swr_e TABLESAMPLE swr(1000);
INSERT INTO swr_e SELECT i, 0 FROM generate_series(1, 100) i;
DROP INDEX swr_e_id;
CREATE INDEX swr_e_w ON swr_e USING abtree (id) INCLUDE (w) WITH (weight_column = 'w');
SELECT count(*) AS weightless FROM swr_e TABLESAMPLE swr(1000);
-- rows of weight 0 are never drawn
INSERT INTO swr_e VALUES (0, 5);
SELECT count(*), min(id), max(id) FROM swr_e TABLESAMPLE swr(300);
DELETE FROM swr_e WHERE w > 0;
SELECT count(*) AS only_weightless_visible FROM swr_e TABLESAMPLE swr(300);
-- almost nothing visible: a visible row of weight 1 among deleted rows of
-- weight 10^12 would take forever to find: an ERROR with a hint
INSERT INTO swr_e VALUES (1, 1);
INSERT INTO swr_e SELECT i, 1000000000000 FROM generate_series(2, 20) i;
DELETE FROM swr_e WHERE w > 1;
SELECT count(*) FROM swr_e TABLESAMPLE swr(10) REPEATABLE (1);
VACUUM swr_e;
SELECT count(*), min(id), max(id) FROM swr_e TABLESAMPLE swr(10) REPEATABLE (1);
DROP TABLE swr_e;

-- deleted rows never come back, before and after VACUUM
DELETE FROM swr_t WHERE id > 500;
SELECT count(*), max(id) FROM swr_t TABLESAMPLE swr(5000) REPEATABLE (8);
VACUUM swr_t;
SELECT count(*), max(id) FROM swr_t TABLESAMPLE swr(5000) REPEATABLE (8);
-- nor does a row deleted by the current transaction; an insert of its own
-- is visible to it
BEGIN;
DELETE FROM swr_t WHERE id <= 250;
INSERT INTO swr_t SELECT i, i % 100, 1, 'new' FROM generate_series(2001, 2250) i;
SELECT count(*), min(id) > 250 AS deleted_gone, count(*) FILTER (WHERE pad = 'new') > 0 AS own_inserts
  FROM swr_t TABLESAMPLE swr(5000) REPEATABLE (8);
ROLLBACK;
-- a statement never samples its own inserts: they enter the index (and
-- new heap pages) while the sample scan runs, and its later batches of
-- draws hit them and redraw
INSERT INTO swr_t SELECT id, k, w, 'copy:' || pad FROM swr_t TABLESAMPLE swr(20000) REPEATABLE (9);
SELECT count(*) FILTER (WHERE pad LIKE 'copy:%') AS copies,
       count(*) FILTER (WHERE pad LIKE 'copy:copy:%') AS copies_of_copies
  FROM swr_t;
DELETE FROM swr_t WHERE pad LIKE 'copy:%';
VACUUM swr_t;
-- HOT-updated rows are drawn: the index points at the root of the chain
ALTER TABLE swr_t SET (fillfactor = 40);
VACUUM FULL swr_t;
BEGIN;
UPDATE swr_t SET pad = 'hot';
SELECT n_tup_hot_upd = 500 AS all_hot FROM pg_stat_xact_user_tables WHERE relname = 'swr_t';
COMMIT;
SELECT count(*), count(*) FILTER (WHERE pad = 'hot') AS hot FROM swr_t TABLESAMPLE swr(3000);
VACUUM swr_t;					-- prunes the chains: the roots become redirects
SELECT count(*), count(*) FILTER (WHERE pad = 'hot') AS hot FROM swr_t TABLESAMPLE swr(3000);

-- sampling needs SELECT on the table, like any read, and no more
CREATE ROLE swr_regress_reader;
SET ROLE swr_regress_reader;
SELECT count(*) FROM swr_t TABLESAMPLE swr(1);
RESET ROLE;
GRANT SELECT ON swr_t TO swr_regress_reader;
SET ROLE swr_regress_reader;
SELECT count(*) FROM swr_t TABLESAMPLE swr(1);
RESET ROLE;
REVOKE SELECT ON swr_t FROM swr_regress_reader;
DROP ROLE swr_regress_reader;

-- choosing the index
-- two unweighted indexes draw alike: the one created first is used
CREATE INDEX swr_t_id ON swr_t USING abtree (id);
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
-- a weighted one draws differently: ERROR until one is chosen
CREATE INDEX swr_t_w ON swr_t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
SHOW abtree.swr_index;
SET abtree.swr_index = swr_t_w;
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
SET abtree.swr_index = 'public.swr_t_k';
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
-- the chosen index decides: rows of weight 0 are never drawn through it
UPDATE swr_t SET w = 0 WHERE id % 2 = 0;
SET abtree.swr_index = swr_t_w;
SELECT count(*), bool_and(id % 2 = 1) AS only_weighted_rows FROM swr_t TABLESAMPLE swr(1000);
SET abtree.swr_index = swr_t_k;
SELECT count(*), bool_or(id % 2 = 0) AS unweighted_rows_too FROM swr_t TABLESAMPLE swr(1000);
-- an index of another table leaves this one to the automatic rule
CREATE TABLE swr_u (id int);
INSERT INTO swr_u SELECT generate_series(1, 10);
CREATE INDEX swr_u_id ON swr_u USING abtree (id);
SET abtree.swr_index = swr_u_id;
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
-- one index per sampled table in a list
SET abtree.swr_index = swr_u_id, swr_t_w;
SELECT (SELECT count(*) FROM swr_t TABLESAMPLE swr(10)) AS t,
       (SELECT count(*) FROM swr_u TABLESAMPLE swr(20)) AS u;
SET abtree.swr_index = ' "swr_u_id" ,public . "swr_t_w" ';
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
-- bad names: the syntax is checked by SET, the names when a query samples
SET abtree.swr_index = swr_t_w, swr_t_k;
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
SET abtree.swr_index = no_such_index;
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
-- a stale name (a dropped index) stops only the tables the list names no
-- index of (it may have been meant for them): a table it names an index of
-- samples through that index
SET abtree.swr_index = 'no_such_index, swr_t_w';
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
SET abtree.swr_index = swr_t_btree;
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
SET abtree.swr_index = swr_t;
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
SET abtree.swr_index = '"unterminated';
SET abtree.swr_index = 'a,,b';
SET abtree.swr_index = 'a.b.c.d';
SET abtree.swr_index = '""';
SET abtree.swr_index = 'a b';
SHOW abtree.swr_index;
RESET abtree.swr_index;
-- a partial index is used only when named, and samples only its rows
DROP INDEX swr_t_k, swr_t_id, swr_t_w;
CREATE INDEX swr_t_part ON swr_t USING abtree (k) WHERE k < 10;
SELECT count(*) FROM swr_t TABLESAMPLE swr(10);
SET abtree.swr_index = swr_t_part;
SELECT count(*), max(k) < 10 AS only_indexed_rows FROM swr_t TABLESAMPLE swr(100);
RESET abtree.swr_index;

-- partitioned tables: n rows in all, drawn through each partition's index
-- (swr_where.sql and swr_stats.sql have more)
CREATE TABLE swr_p (id int, k int) PARTITION BY RANGE (id);
CREATE TABLE swr_p1 PARTITION OF swr_p FOR VALUES FROM (0) TO (100);
CREATE TABLE swr_p2 PARTITION OF swr_p FOR VALUES FROM (100) TO (200);
INSERT INTO swr_p SELECT i, i % 10 FROM generate_series(0, 199) i;
SELECT count(*) FROM swr_p TABLESAMPLE swr(10);
CREATE INDEX swr_p_k ON swr_p USING abtree (k);
SELECT count(*), count(DISTINCT tableoid) AS partitions FROM swr_p TABLESAMPLE swr(100) REPEATABLE (1);
-- batches (src/swr/README "How a scan draws"): one descent for a batch's
-- draws and fetches in heap block order change neither which rows a seed
-- draws nor their order, at rest; abtree.swr_batch_size = 1 is one draw,
-- one descent and one fetch at a time.  Over partitions (a table chosen
-- per draw) and a plain table, with a batch larger than the leaves.
CREATE TABLE swr_bt (id int, k int);
INSERT INTO swr_bt SELECT i, (i * 7919) % 20000 FROM generate_series(1, 20000) i;
CREATE INDEX swr_bt_k ON swr_bt USING abtree (k);
CREATE TEMP TABLE swr_batches AS
  SELECT (SELECT array_agg(id) FROM swr_p TABLESAMPLE swr(3000) REPEATABLE (5)) AS p,
         (SELECT array_agg(id) FROM swr_bt TABLESAMPLE swr(3000) REPEATABLE (5)) AS t;
SET abtree.swr_batch_size = 1;
SELECT (SELECT array_agg(id) FROM swr_p TABLESAMPLE swr(3000) REPEATABLE (5)) = p AS partitions_same,
       (SELECT array_agg(id) FROM swr_bt TABLESAMPLE swr(3000) REPEATABLE (5)) = t AS table_same,
       cardinality(p) AS n
  FROM swr_batches;
SET abtree.swr_batch_size = 7;
SELECT (SELECT array_agg(id) FROM swr_p TABLESAMPLE swr(3000) REPEATABLE (5)) = p AS partitions_same_7,
       (SELECT array_agg(id) FROM swr_bt TABLESAMPLE swr(3000) REPEATABLE (5)) = t AS table_same_7
  FROM swr_batches;
RESET abtree.swr_batch_size;
DROP TABLE swr_batches, swr_bt;
EXPLAIN (COSTS OFF) SELECT * FROM swr_p TABLESAMPLE swr(10);
-- naming the partitioned index picks its partition on each partition
CREATE INDEX swr_p_id ON swr_p USING abtree (id) INCLUDE (k) WITH (weight_column = 'k');
SELECT count(*) FROM swr_p TABLESAMPLE swr(10);
SET abtree.swr_index = swr_p_id;
SELECT count(*), min(k) > 0 AS weighted FROM swr_p TABLESAMPLE swr(500);
RESET abtree.swr_index;
-- a partition without an abtree index
CREATE TABLE swr_q (id int) PARTITION BY LIST (id);
CREATE TABLE swr_q1 PARTITION OF swr_q FOR VALUES IN (1);
CREATE TABLE swr_q2 PARTITION OF swr_q FOR VALUES IN (2);
INSERT INTO swr_q VALUES (1), (2);
CREATE INDEX ON swr_q1 USING abtree (id);
SELECT count(*) FROM swr_q TABLESAMPLE swr(10);
SELECT count(*) FROM swr_q1 TABLESAMPLE swr(10);
DROP TABLE swr_q;

DROP TABLE swr_t, swr_u, swr_p;
DROP SEQUENCE swr_seq;
