--
-- Batched validation (abtree.weight_protocol = batched; src/abtree/README,
-- "Batched validation"): an insert's entry goes in not valid and waits in
-- the inserting backend; a flush makes a record's worth of waiting entries
-- valid at once.  What the backend reads counts its waiting entries, what
-- commits is valid, what aborts never weighs anything.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;
SET abtree.weight_protocol = batched;

CREATE FUNCTION bt_counter(name text) RETURNS bigint LANGUAGE sql AS
$$ SELECT value::bigint FROM abtree_status() WHERE item = name $$;
CREATE FUNCTION bt_weight(idx regclass) RETURNS numeric LANGUAGE sql AS
$$ SELECT total_weight FROM abtree_stats(idx) $$;
CREATE FUNCTION bt_exact(idx regclass) RETURNS boolean LANGUAGE sql AS
$$ SELECT abtree_verify(idx, exact => true) IS NOT NULL $$;

CREATE TABLE bt (k int, w int NOT NULL DEFAULT 1, pad text);
CREATE INDEX bt_k ON bt USING abtree (k);
CREATE INDEX bt_kw ON bt USING abtree (k DESC, pad) INCLUDE (w) WITH (weight_column = 'w');

-- one statement: its entries become valid in groups, far fewer records than rows
SELECT bt_counter('batch_records') AS r0, bt_counter('batch_entries') AS e0 \gset
INSERT INTO bt SELECT (hashint4(g) & 1048575), 1 + g % 5, md5(g::text)
  FROM generate_series(1, 5000) g;
SELECT bt_counter('batch_entries') - :e0 >= 2 * 5000 * 0.9 AS nearly_all_grouped,
       bt_counter('batch_records') - :r0 < 2 * 5000 / 4 AS few_records;
SELECT bt_exact('bt_k') AS k_exact, bt_exact('bt_kw') AS kw_exact,
       bt_weight('bt_k') = 5000 AS k_total, bt_weight('bt_kw') = (SELECT sum(w) FROM bt) AS kw_total;

-- the inserting backend reads its own waiting entries (ten: fewer than a
-- flush): the statistics, a verification, the draws
BEGIN;
INSERT INTO bt SELECT g, 1, 'own' FROM generate_series(1000001, 1000010) g;
SELECT bt_weight('bt_k') = 5010 AS counts_own, bt_exact('bt_k') AS exact_inside;
SELECT count(*) > 0 AS own_drawn
  FROM abtree_sample_tids('bt_k', 20000, 0.25) s JOIN bt ON bt.ctid = s
 WHERE bt.k > 1000000;
COMMIT;

-- a rolled-back transaction's waiting entries never weigh anything: they
-- stay in the tree, not valid, until VACUUM takes them out
BEGIN;
INSERT INTO bt SELECT g, 1, 'gone' FROM generate_series(2000001, 2000020) g;
ROLLBACK;
SELECT bt_weight('bt_k') = 5010 AS aborted_weigh_nothing, entries = 5030 AS still_in_tree
  FROM abtree_stats('bt_k');
SELECT bt_exact('bt_k') AS exact_after_abort;

-- subtransactions: an aborted one takes its entries (and its children's) out
BEGIN;
INSERT INTO bt VALUES (3000001, 1, 'a');
SAVEPOINT s1;
INSERT INTO bt VALUES (3000002, 1, 'b');
SAVEPOINT s2;
INSERT INTO bt VALUES (3000003, 1, 'c');
RELEASE s2;
ROLLBACK TO s1;
INSERT INTO bt VALUES (3000004, 1, 'd');
COMMIT;
DO $$
BEGIN
  INSERT INTO bt VALUES (3000005, 1, 'e');
  BEGIN
    INSERT INTO bt VALUES (3000006, 1, 'f');
    RAISE EXCEPTION 'undo f';
  EXCEPTION WHEN raise_exception THEN NULL;
  END;
END $$;
SELECT bt_weight('bt_k') = 5013 AS committed_counted,
       bt_weight('bt_k') = (SELECT count(*) FROM bt) AS rows_counted,
       bt_exact('bt_k') AS exact_after_savepoints, bt_exact('bt_kw') AS kw_exact;

-- new storage in the same transaction: TRUNCATE and REINDEX drop what waits
-- for the old, DROP INDEX what waits for the index
BEGIN;
INSERT INTO bt SELECT g, 1, 'old' FROM generate_series(4000001, 4000005) g;
TRUNCATE bt;
INSERT INTO bt SELECT g, 2, 'new' FROM generate_series(1, 3) g;
COMMIT;
SELECT bt_weight('bt_k') = 3 AS after_truncate, bt_weight('bt_kw') = 6 AS kw_after_truncate,
       bt_exact('bt_k') AS exact, bt_exact('bt_kw') AS kw_exact;
BEGIN;
INSERT INTO bt SELECT g, 1, 'r' FROM generate_series(10, 14) g;
REINDEX INDEX bt_k;
INSERT INTO bt SELECT g, 1, 'r' FROM generate_series(15, 16) g;
COMMIT;
SELECT bt_weight('bt_k') = 10 AS after_reindex, bt_exact('bt_k') AS exact;
-- a copy of the storage (ALTER INDEX ... SET TABLESPACE) holds the waiting
-- entries as they were, not valid: they are flushed there, or their
-- committed rows would weigh nothing (an undercount); heapallindexed finds
-- a committed row whose entry is not valid
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE abt_bt_ts LOCATION '';
BEGIN;
INSERT INTO bt SELECT g, 1, 't' FROM generate_series(30, 34) g;
ALTER INDEX bt_k SET TABLESPACE abt_bt_ts;
INSERT INTO bt SELECT g, 1, 't' FROM generate_series(35, 36) g;
COMMIT;
SELECT bt_weight('bt_k') = 17 AS after_set_tablespace, bt_exact('bt_k') AS exact,
       abtree_verify('bt_k', heapallindexed => true) IS NOT NULL AS every_row_valid;
BEGIN;
INSERT INTO bt SELECT g, 1, 't' FROM generate_series(40, 44) g;
ALTER INDEX bt_k SET TABLESPACE pg_default;
SAVEPOINT s;
INSERT INTO bt SELECT g, 1, 't' FROM generate_series(45, 46) g;
ALTER INDEX bt_k SET TABLESPACE abt_bt_ts;
ROLLBACK TO s;
COMMIT;
SELECT bt_weight('bt_k') = 22 AS moved_back, bt_exact('bt_k') AS exact,
       abtree_verify('bt_k', heapallindexed => true) IS NOT NULL AS every_row_valid;
-- a copy, then a rebuild: the rebuild took the rows in valid
BEGIN;
INSERT INTO bt SELECT g, 1, 't' FROM generate_series(50, 54) g;
ALTER INDEX bt_k SET TABLESPACE abt_bt_ts;
REINDEX INDEX bt_k;
INSERT INTO bt SELECT g, 1, 't' FROM generate_series(55, 56) g;
ALTER INDEX bt_k SET TABLESPACE pg_default;
COMMIT;
SELECT bt_weight('bt_k') = 29 AS copy_then_rebuild, bt_exact('bt_k') AS exact,
       abtree_verify('bt_k', heapallindexed => true) IS NOT NULL AS every_row_valid;
-- ROLLBACK TO SAVEPOINT brings back the storage the entries went into,
-- still not valid there: after TRUNCATE, REINDEX, and a copy flushed into
CREATE FUNCTION bt_counted() RETURNS boolean LANGUAGE sql AS
$$ SELECT bt_weight('bt_k') = (SELECT count(*) FROM bt)
          AND bt_weight('bt_kw') = (SELECT sum(w) FROM bt)
          AND abtree_verify('bt_k', heapallindexed => true) IS NOT NULL
          AND abtree_verify('bt_kw', heapallindexed => true) IS NOT NULL $$;
BEGIN;
INSERT INTO bt SELECT g, 2, 's' FROM generate_series(60, 64) g;
SAVEPOINT s;
TRUNCATE bt;
INSERT INTO bt SELECT g, 2, 's' FROM generate_series(100, 102) g;
ROLLBACK TO s;
INSERT INTO bt SELECT g, 2, 's' FROM generate_series(65, 66) g;
COMMIT;
SELECT bt_counted() AS truncate_rolled_back;
BEGIN;
INSERT INTO bt SELECT g, 2, 's' FROM generate_series(70, 74) g;
SAVEPOINT s;
REINDEX INDEX bt_k;
INSERT INTO bt SELECT g, 2, 's' FROM generate_series(75, 75) g;
ROLLBACK TO s;
COMMIT;
SELECT bt_counted() AS reindex_rolled_back;
BEGIN;
INSERT INTO bt SELECT g, 2, 's' FROM generate_series(80, 84) g;
SAVEPOINT s;
ALTER INDEX bt_k SET TABLESPACE abt_bt_ts;
SELECT bt_weight('bt_k') = (SELECT count(*) FROM bt) AS copy_counts_them;
ROLLBACK TO s;
COMMIT;
SELECT bt_counted() AS copy_rolled_back;
DROP FUNCTION bt_counted();
DROP TABLESPACE abt_bt_ts;
RESET allow_in_place_tablespaces;
BEGIN;
INSERT INTO bt SELECT g, 1, 'x' FROM generate_series(20, 24) g;
DROP INDEX bt_kw;
COMMIT;
SELECT bt_weight('bt_k') = 51 AS after_drop_index, bt_exact('bt_k') AS exact;

-- a tall tree (keys of 1,900 bytes that differ only at their ends, so that
-- pivots keep them whole, and no compression): a record holds fewer leaves
-- with the pages above them, and the groups shrink to fit
CREATE TABLE bw (k text);
CREATE INDEX bw_k ON bw USING abtree (k);
INSERT INTO bw SELECT p || lpad(hashint4(g)::text, 12, '0')
  FROM generate_series(1, 2000) g,
       (SELECT string_agg(md5(i::text), '') AS p FROM generate_series(1, 59) i) x;
SELECT height >= 5 AS tall, total_weight = 2000 AS total, bt_exact('bw_k') AS exact
  FROM abtree_stats('bw_k');

-- sketches: every batch changes them with its entries (S1); the
-- low-cardinality column keeps its exact set, the other its buckets
CREATE FUNCTION bt_sk_same(idx regclass, col int, agg chll) RETURNS boolean
LANGUAGE sql AS $$ SELECT chll_send(abtree_sketch(idx, col)) = chll_send(agg) $$;
CREATE TABLE bd (d date, v int);
CREATE INDEX bd_d ON bd USING abtree (d);
CREATE INDEX bd_v ON bd USING abtree (v);
INSERT INTO bd SELECT date '2020-01-01' + g % 50, hashint4(g) FROM generate_series(1, 3000) g;
BEGIN;
INSERT INTO bd SELECT date '2021-01-01' + g % 7, hashint4(-g) FROM generate_series(1, 30) g;
ROLLBACK;
SELECT bt_sk_same('bd_d', 1, chll_agg(d)) AS d_same, bt_sk_same('bd_v', 1, chll_agg(v)) AS v_same
  FROM bd;
SELECT abtree_verify('bd_d', true, true) IS NOT NULL AS d_exact,
       abtree_verify('bd_v', true, true) IS NOT NULL AS v_exact;

-- sketches of many pages (2,048 buckets on three columns and the key) leave
-- a record no room for a group: every entry goes the path_exclusive way
CREATE TABLE bs (a int, b int, c text);
CREATE INDEX bs_abc ON bs USING abtree (a, b, c) WITH (sketch_buckets = 2048);
SELECT bt_counter('batch_entries') AS e2 \gset
INSERT INTO bs SELECT g % 1200, g % 7, (g % 1500)::text FROM generate_series(1, 3000) g;
SELECT bt_counter('batch_entries') = :e2 AS none_grouped, bt_weight('bs_abc') = 3000 AS total,
       bt_exact('bs_abc') AS exact;

-- a lost exact set's pages are left out of a group's record, which then
-- names more leaves; a set back since (VACUUM emptied the sketch) sends a
-- group that counted on the room back to lock fewer (batch_retries).  The
-- 128 keys fall on different leaves of about 200, enough to fill a record.
CREATE TABLE bl (k int4);
CREATE INDEX bl_k ON bl USING abtree (k);
INSERT INTO bl SELECT hashint4(g) FROM generate_series(1, 60000) g;
SELECT NOT (chll_info(abtree_sketch('bl_k', 1))).exact_distinct AS set_lost,
       pg_relation_size('bl_k') / 8192 > 150 AS many_leaves;
DELETE FROM bl;
VACUUM bl;
SELECT (chll_info(abtree_sketch('bl_k', 1))).exact_distinct AS set_back;
SELECT bt_counter('batch_retries') AS t0 \gset
INSERT INTO bl SELECT g * 33000000 FROM generate_series(-64, 63) g;
SELECT bt_counter('batch_retries') > :t0 AS retried, bt_weight('bl_k') = 128 AS total,
       bt_exact('bl_k') AS exact,
       (chll_info(abtree_sketch('bl_k', 1))).exact_distinct AS set_counts,
       bt_sk_same('bl_k', 1, chll_agg(k)) AS same
  FROM bl;

-- NULLs, and a weighted index whose entries weigh their column
CREATE TABLE bn (k int, w bigint NOT NULL);
CREATE INDEX bn_kw ON bn USING abtree (k NULLS FIRST) INCLUDE (w) WITH (weight_column = 'w');
INSERT INTO bn SELECT CASE WHEN g % 10 = 0 THEN NULL ELSE g END, g % 4 FROM generate_series(1, 2000) g;
SELECT bt_weight('bn_kw') = (SELECT sum(w) FROM bn) AS weighted_total, bt_exact('bn_kw') AS exact;

-- an operator class whose comparison function is PL/pgSQL: the flush at
-- the commit runs it after the statement's snapshot is gone (it failed
-- there with "cannot execute SQL without an outer snapshot or portal", and
-- the commit with it)
CREATE FUNCTION bt_plcmp(a int4, b int4) RETURNS int4 LANGUAGE plpgsql IMMUTABLE AS
$$ BEGIN RETURN CASE WHEN a < b THEN -1 WHEN a > b THEN 1 ELSE 0 END; END $$;
CREATE OPERATOR CLASS bt_pl_ops FOR TYPE int4 USING abtree AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 bt_plcmp(int4, int4);
CREATE TABLE bp (k int4);
CREATE INDEX bp_k ON bp USING abtree (k bt_pl_ops);
INSERT INTO bp SELECT hashint4(g) FROM generate_series(1, 300) g;
BEGIN;
INSERT INTO bp SELECT g FROM generate_series(1, 10) g;
COMMIT;
SELECT count(*) AS committed, bt_weight('bp_k') = 310 AS total, bt_exact('bp_k') AS exact FROM bp;

-- a parallel worker reads the index without the leader's waiting entries:
-- the leader flushes before a parallel plan starts.  Without that, both
-- functions below ran in a worker and missed the 10 rows inserted here
-- (range weight 300, none of the 2,000 draws among them).
-- force_parallel_mode became debug_parallel_query in PostgreSQL 16.
CREATE TABLE bq (k int4);
CREATE INDEX bq_k ON bq USING abtree (k);
INSERT INTO bq SELECT g FROM generate_series(1, 300) g;
BEGIN;
INSERT INTO bq SELECT g FROM generate_series(301, 310) g;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END,
                  'regress', true) AS parallel;
SET LOCAL parallel_setup_cost = 0;
SELECT abtree_range_weight('bq_k', 0, 1000) AS leader_rows_counted;
SELECT count(*) > 0 AS leader_rows_drawn
FROM abtree_sample_tids('bq_k', 2000, 0.5) t JOIN bq ON bq.ctid = t
WHERE k > 300;
COMMIT;
SELECT bt_exact('bq_k') AS exact;

-- the other protocols leave nothing waiting
SET abtree.weight_protocol = safe_page;
SELECT bt_counter('batch_entries') AS e1 \gset
INSERT INTO bn VALUES (1, 1);
SELECT bt_counter('batch_entries') = :e1 AS none_waiting;
RESET abtree.weight_protocol;

DROP TABLE bt, bw, bd, bs, bl, bn, bp, bq;
DROP OPERATOR FAMILY bt_pl_ops USING abtree;
DROP FUNCTION bt_plcmp(int4, int4);
DROP FUNCTION bt_counter(text), bt_weight(regclass), bt_exact(regclass),
  bt_sk_same(regclass, int, chll);
