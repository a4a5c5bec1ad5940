--
-- Bad input to every SQL entry point of the extension: each function (with
-- NULL, zero, negative, huge, NaN/infinity and wrong-type arguments), the
-- swr tablesample method, chll input, the abtree reloptions and the
-- abtree.* parameters.  One row of bad_case per case; a DO loop runs each
-- in a subtransaction that is always rolled back (so DDL and SET cases
-- leave nothing behind) and records "ok: <result>" or the SQLSTATE.
-- A case must end in a sensible result or an ERROR with the right
-- SQLSTATE; XX000 (internal error) is never right, and the checks at the end
-- make sure every function and parameter of the extension has cases.
--
-- To add an index access method: add a line to bad_am (the reloption cases
-- are templates, copied for each access method with %A replaced by its name).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;
SET statement_timeout = '60s';

CREATE TABLE bad_t (k int, w int, t text, f float8, b bool);
INSERT INTO bad_t SELECT i, i % 7, 'v' || i, i / 3.0, i % 2 = 0
  FROM generate_series(1, 500) i;
CREATE INDEX bad_t_k ON bad_t USING abtree (k);
CREATE TABLE bad_w (k int, w int);
INSERT INTO bad_w SELECT i, i % 7 FROM generate_series(1, 500) i;
CREATE INDEX bad_w_kw ON bad_w USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE INDEX bad_t_btree ON bad_t USING btree (k);
CREATE TABLE bad_empty (k int);
CREATE INDEX bad_empty_k ON bad_empty USING abtree (k);
CREATE TABLE bad_part (k int) PARTITION BY RANGE (k);
CREATE TABLE bad_part_1 PARTITION OF bad_part FOR VALUES FROM (0) TO (1000);
INSERT INTO bad_part SELECT generate_series(1, 300);
CREATE INDEX bad_part_k ON bad_part USING abtree (k);
CREATE INDEX bad_t_p ON bad_t USING pbtree (k);
CREATE VIEW bad_v AS SELECT * FROM bad_t;
CREATE SEQUENCE bad_seq;
CREATE STATISTICS bad_stat (ndistinct) ON k, w FROM bad_t;
CREATE STATISTICS bad_stat_dep (dependencies) ON k, w FROM bad_t;
ANALYZE bad_t;

-- index access methods whose reloptions are under test
CREATE TABLE bad_am (am text PRIMARY KEY);
INSERT INTO bad_am VALUES ('abtree'), ('pbtree');

CREATE TABLE bad_case (id serial PRIMARY KEY, area text NOT NULL, sql text NOT NULL,
					   outcome text);

-- a valid 16-bucket sketch with one value, as text, to corrupt below
CREATE FUNCTION bad_chll() RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT chll_add(chll_create(16), 1)::text $$;
-- byte i (from 0) of that text replaced by hex digits h
CREATE FUNCTION bad_chll_byte(i int, h text) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT overlay(bad_chll() placing h from 3 + 2 * i for 2) $$;

INSERT INTO bad_case (area, sql) VALUES
-- core
('core', $$SELECT abtree_check_preload()$$),
('core', $$SELECT count(*) > 0 FROM abtree_status()$$),
('core', $$SELECT abtree_wal_probe(NULL) IS NOT NULL$$),
('core', $$SELECT abtree_wal_probe('') IS NOT NULL$$),
('core', $$SELECT abtree_wal_probe(repeat('x', 100000)) IS NOT NULL$$),
('core', $$SELECT abtree_wal_probe(42)$$),
('core', $$SELECT abtree_am_handler(NULL)$$),
-- pbtree
('pbtree', $$SELECT count(*) FROM pbtree_stats(NULL)$$),
('pbtree', $$SELECT count(*) FROM pbtree_stats('bad_t_p')$$),
('pbtree', $$SELECT count(*) FROM pbtree_stats('bad_t_k')$$),
('pbtree', $$SELECT count(*) FROM pbtree_stats(0)$$),
('pbtree', $$SELECT count(*) FROM pbtree_stats('bad_v')$$),
('pbtree', $$SELECT pbtree_verify(NULL)$$),
('pbtree', $$SELECT pbtree_verify('bad_t_p', NULL)$$),
('pbtree', $$SELECT pbtree_verify('bad_t_p', true)$$),
('pbtree', $$SELECT pbtree_verify('bad_t')$$),
('pbtree', $$SELECT pbtree_verify('bad_t_btree')$$),
('pbtree', $$SELECT pbtree_verify('bad_t_p', 'maybe')$$),
('pbtree', $$SELECT pbtree_seal(NULL)$$),
('pbtree', $$SELECT pbtree_seal('bad_t_p')$$),
('pbtree', $$SELECT pbtree_seal('bad_seq')$$),
('pbtree', $$SELECT pbtree_seal(-1)$$),
('pbtree', $$SELECT pbtree_merge(NULL)$$),
('pbtree', $$SELECT pbtree_merge('bad_t_p', NULL)$$),
('pbtree', $$SELECT pbtree_merge('bad_t_p', 0)$$),
('pbtree', $$SELECT pbtree_merge('bad_t_p', -5)$$),
('pbtree', $$SELECT pbtree_merge('bad_t_p', 1)$$),
('pbtree', $$SELECT pbtree_merge('bad_t_p', 2147483647)$$),
('pbtree', $$SELECT pbtree_merge('bad_t_p', 'x')$$),
('pbtree', $$SELECT pbtree_am_handler(NULL)$$),
('pbtree', $$CREATE UNIQUE INDEX ON bad_t USING pbtree (k)$$),
('pbtree', $$CREATE INDEX ON bad_t USING pbtree (f, t, b)$$),
('guc', $$SET abtree.pbtree_buffer_budget = 1$$),
('guc', $$SET abtree.pbtree_buffer_budget = '1TB'$$),
('guc', $$SET abtree.pbtree_merge_threshold = -1$$),
('guc', $$SET abtree.pbtree_filter_bits = 'NaN'$$),
('guc', $$SET abtree.pbtree_filter_bits = 0$$),
-- abtree_verify
('verify', $$SELECT abtree_verify(NULL)$$),
('verify', $$SELECT abtree_verify('bad_t_k', NULL, NULL)$$),
('verify', $$SELECT abtree_verify('bad_t_k', true, NULL)$$),
('verify', $$SELECT abtree_verify('bad_t_k', NULL)$$),
('verify', $$SELECT abtree_verify('bad_t_k', true, false)$$),
('verify', $$SELECT abtree_verify('bad_w_kw', true, true)$$),
('verify', $$SELECT abtree_verify('bad_empty_k', true, true)$$),
('verify', $$SELECT abtree_verify('bad_t')$$),
('verify', $$SELECT abtree_verify('bad_t_btree')$$),
('verify', $$SELECT abtree_verify('bad_v')$$),
('verify', $$SELECT abtree_verify('bad_seq')$$),
('verify', $$SELECT abtree_verify('no_such_index')$$),
('verify', $$SELECT abtree_verify(0)$$),
('verify', $$SELECT abtree_verify(-1)$$),
('verify', $$SELECT abtree_verify(4294967295)$$),
('verify', $$SELECT abtree_verify('bad_t_k', 'maybe')$$),
('verify', $$SELECT abtree_verify(1.5)$$),
-- abtree_stats
('stats', $$SELECT entries FROM abtree_stats(NULL)$$),
('stats', $$SELECT entries FROM abtree_stats('bad_t_k')$$),
('stats', $$SELECT total_weight FROM abtree_stats('bad_w_kw')$$),
('stats', $$SELECT entries FROM abtree_stats('bad_empty_k')$$),
('stats', $$SELECT entries FROM abtree_stats('bad_t')$$),
('stats', $$SELECT entries FROM abtree_stats('bad_t_btree')$$),
('stats', $$SELECT entries FROM abtree_stats(0)$$),
('stats', $$SELECT entries FROM abtree_stats('pg_class'::regclass::oid::int)$$),
-- abtree_sample_tids
('sample', $$SELECT count(*) FROM abtree_sample_tids(NULL, 10)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', NULL)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 10, NULL)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 0)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', -1)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', -2147483648)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 2147483647)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 2147483648)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 10, 'NaN')$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 10, 'Infinity')$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 10, '-Infinity')$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 10, -1)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 10, 2)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 10, 1e308)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 10, 0)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_w_kw', 10, 0.5)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_empty_k', 10)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t', 10)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_btree', 10)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_v', 10)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids(0, 10)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 'ten')$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 1.5)$$),
('sample', $$SELECT count(*) FROM abtree_sample_tids('bad_t_k', 10, 'x')$$),
-- abtree_sample_tids_range
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, 1, 100)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range(NULL, 10, 0.5, 1, 100)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', NULL, 0.5, 1, 100)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, NULL, 1, 100)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, NULL::int, 100)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, 1, NULL::int)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, NULL::int, NULL::int)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, NULL, NULL)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, 100, 1)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, 1000, 2000)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', -1, 0.5, 1, 100)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 2147483647, 0.5, 1, 100)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 'NaN', 1, 100)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, -2147483648, 2147483647)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, 1::bigint, 9223372036854775807)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, 1::float8, 100::float8)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, 'a'::text, 'z'::text)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, 1, 'z'::text)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_k', 10, 0.5, ARRAY[1], ARRAY[2])$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_t_btree', 10, 0.5, 1, 100)$$),
('range sample', $$SELECT count(*) FROM abtree_sample_tids_range('bad_empty_k', 10, 0.5, 1, 100)$$),
-- abtree_range_weight
('range weight', $$SELECT abtree_range_weight('bad_t_k', 1, 100)$$),
('range weight', $$SELECT abtree_range_weight('bad_w_kw', 1, 100)$$),
('range weight', $$SELECT abtree_range_weight(NULL, 1, 100)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', NULL::int, NULL::int)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', NULL, NULL)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', NULL::int, 10)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', 10, NULL::int)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', 1, 100, NULL, NULL, NULL)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', 100, 1)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', 5, 5, false, false)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', 5, 5, true, true, true)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', -2147483648, 2147483647)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', 'NaN'::float8, 'Infinity'::float8)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', '-Infinity'::float8, 'Infinity'::float8)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', 0::numeric, 1e1000::numeric)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', 'a'::text, 'b'::text)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', 1, 'b'::text)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_k', now(), now())$$),
('range weight', $$SELECT abtree_range_weight('bad_t', 1, 100)$$),
('range weight', $$SELECT abtree_range_weight('bad_t_btree', 1, 100)$$),
('range weight', $$SELECT abtree_range_weight('bad_empty_k', 1, 100)$$),
-- the same on a partitioned abtree index (the sum over its partitions)
('range weight', $$SELECT abtree_range_weight('bad_part_k', 1, 100)$$),
('range weight', $$SELECT abtree_range_weight('bad_part_k', NULL, NULL)$$),
('range weight', $$SELECT abtree_range_weight('bad_part_k', NULL::int, NULL::int, true, true, NULL)$$),
('range weight', $$SELECT abtree_range_weight('bad_part_k', 'a'::text, 'b'::text)$$),
('range weight', $$SELECT abtree_range_weight('bad_part_k', 0::numeric, 1e1000::numeric)$$),
('range weight', $$SELECT abtree_range_weight('bad_part_k', -2147483648, 2147483647)$$),
('range weight', $$SELECT abtree_range_weight('bad_part_k', 100, 1)$$),
-- abtree_sketch
('sketch', $$SELECT chll_estimate(abtree_sketch('bad_t_k')) > 0$$),
('sketch', $$SELECT abtree_sketch(NULL) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_t_k', NULL) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_t_k', 0) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_t_k', -1) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_t_k', 2) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_w_kw', 2) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_t_k', 2147483647) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_t_k', -2147483648) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_t', 1) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_t_btree', 1) IS NULL$$),
('sketch', $$SELECT abtree_sketch(0, 1) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_empty_k', 1)::text = chll_create()::text$$),
('sketch', $$SELECT chll_estimate(abtree_sketch('bad_part_k')) > 0$$),
('sketch', $$SELECT abtree_sketch('bad_part_k', 0) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_part_k', 2) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_part_k', -2147483648) IS NULL$$),
('sketch', $$SELECT abtree_sketch('bad_part_k', NULL) IS NULL$$),
('sketch', $$SELECT count(*) FROM abtree_column_ndistinct WHERE tablename LIKE 'bad\_%'$$),
-- chll_create and input
('chll', $$SELECT chll_create(NULL) IS NULL$$),
('chll', $$SELECT chll('\x01'::bytea)$$),
('chll', $$SELECT chll(NULL::bytea) IS NULL$$),
('chll', $$SELECT chll(decode(repeat('00', 40000), 'hex'))$$),
('chll', $$SELECT (chll_create() || chll_create(16)) IS NULL$$),
('chll', $$SELECT (chll_create() || NULL) IS NULL$$),
('chll', $$SELECT chll_create() = NULL IS NULL$$),
('chll', $$SELECT chll_cmp(chll_create(16), chll_create(32768))$$),
('chll', $$SELECT chll_create(16) < chll_create(32)$$),
('chll', $$SELECT chll_hash_sketch(chll_create(16)) = chll_hash_sketch(chll_create(16))$$),
('chll', $$SELECT chll_hash_sketch(NULL) IS NULL$$),
('chll', $$SELECT chll(''::bytea)$$),
('chll', $$SELECT chll(decode('ff', 'hex'))$$),
('chll', $$SELECT chll(1::int)$$),
('chll', $$SELECT chll_eq(chll_create(), 'x'::text)$$),
('chll', $$SELECT (chll_info(chll_create(16))).buckets$$),
('chll', $$SELECT (chll_info(chll_create(32768))).buckets$$),
('chll', $$SELECT chll_create(0) IS NULL$$),
('chll', $$SELECT chll_create(-16) IS NULL$$),
('chll', $$SELECT chll_create(8) IS NULL$$),
('chll', $$SELECT chll_create(100) IS NULL$$),
('chll', $$SELECT chll_create(65536) IS NULL$$),
('chll', $$SELECT chll_create(2147483647) IS NULL$$),
('chll', $$SELECT chll_create(-2147483648) IS NULL$$),
('chll', $$SELECT chll_create('many') IS NULL$$),
('chll', $$SELECT chll_create(16.5) IS NULL$$),
('chll input', $$SELECT NULL::chll IS NULL$$),
('chll input', $$SELECT ''::chll IS NULL$$),
('chll input', $$SELECT '\x'::chll IS NULL$$),
('chll input', $$SELECT '\x0'::chll IS NULL$$),
('chll input', $$SELECT '\xzz'::chll IS NULL$$),
('chll input', $$SELECT 'garbage'::chll IS NULL$$),
('chll input', $$SELECT '  \x00'::chll IS NULL$$),
('chll input', $$SELECT 42::chll IS NULL$$),
('chll input', $$SELECT '\x'::bytea::chll IS NULL$$),
('chll input', $$SELECT ('\x' || repeat('00', 1000000))::chll IS NULL$$),
('chll input', $$SELECT (chll_info(bad_chll()::chll)).items$$),
('chll input', $$SELECT left(bad_chll(), 40)::chll IS NULL$$),
('chll input', $$SELECT (bad_chll() || '00')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(0, '03')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(0, 'ff')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(1, '00')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(1, '1f')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(1, 'ff')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(4, 'ff')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(8, 'ff')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(15, 'ff')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(20, 'ff')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(24, 'ff')::chll IS NULL$$),
('chll input', $$SELECT bad_chll_byte(100, 'ff')::chll IS NULL$$),
('chll input', $$SELECT overlay(bad_chll() placing repeat('ff', 16) from 3 for 32)::chll IS NULL$$),
('chll input', $$SELECT chll_in(NULL) IS NULL$$),
('chll input', $$SELECT chll_in('\x01') IS NULL$$),
('chll input', $$SELECT chll_estimate(chll_in(chll_out(chll_create(16))))$$),
('chll output', $$SELECT chll_out(NULL) IS NULL$$),
('chll output', $$SELECT chll_send(NULL) IS NULL$$),
('chll output', $$SELECT length(chll_send(chll_create(16)))$$),
('chll output', $$SELECT chll_recv(NULL) IS NULL$$),
-- chll functions on values
('chll funcs', $$SELECT chll_add(NULL, 1) IS NULL$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), NULL::int))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), NULL))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), 'NaN'::float8))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), 'Infinity'::float8))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), ''::text))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), repeat('x', 1000000)))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), ARRAY[1,2]))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), ROW(1, 2)))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), 'unknown literal'))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), point(1, 2)))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), '{}'::json))$$),
('chll funcs', $$SELECT chll_estimate(chll_add(chll_create(16), chll_create(16)))$$),
('chll funcs', $$SELECT chll_remove(NULL, 1) IS NULL$$),
('chll funcs', $$SELECT chll_estimate(chll_remove(chll_create(16), 1))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove(chll_create(16), NULL::int))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove(chll_add(chll_create(16), 1), 1))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove(chll_add(chll_create(16), 1), 1::bigint))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_all(NULL, ARRAY[1]))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_all(chll_create(16), NULL::int[]))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_all(chll_create(16), ARRAY[NULL, 1, NULL]::int[]))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_all(chll_create(16), '{}'::int[]))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_all(chll_create(16), ARRAY[[1,2],[3,4]]))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_all(chll_create(16), '[-5:-3]={1,2,3}'::int[]))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_all(chll_create(16), 1))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_all(chll_create(16), (SELECT array_agg(i) FROM generate_series(1, 100000) i)))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove_all(chll_create(16), ARRAY[1]))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove_all(chll_create(16), NULL::int[]))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove_all(chll_add(chll_create(16), 1), ARRAY[1, NULL]))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove_all(NULL, ARRAY[1]))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_hash(chll_create(16), NULL))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_hash(chll_create(16), 0))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_hash(chll_create(16), -1))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_hash(chll_create(16), -9223372036854775808))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_hash(chll_create(16), 9223372036854775807))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_hash(chll_create(16), 9223372036854775808))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_hash(chll_create(16), 'x'))$$),
('chll funcs', $$SELECT chll_estimate(chll_add_hash(NULL, 1))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove_hash(chll_create(16), 0))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove_hash(chll_add_hash(chll_create(16), 0), 0))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove_hash(chll_create(16), NULL))$$),
('chll funcs', $$SELECT chll_estimate(chll_remove_hash(chll_create(16), -9223372036854775808))$$),
('chll funcs', $$SELECT chll_estimate(chll_union(NULL, NULL))$$),
('chll funcs', $$SELECT chll_estimate(chll_union(chll_create(16), NULL))$$),
('chll funcs', $$SELECT chll_estimate(chll_union(NULL, chll_create(16)))$$),
('chll funcs', $$SELECT chll_estimate(chll_union(chll_create(16), chll_create(32)))$$),
('chll funcs', $$SELECT chll_estimate(chll_union(chll_create(16), 'x'))$$),
('chll funcs', $$SELECT chll_hash(NULL::int) IS NULL$$),
('chll funcs', $$SELECT chll_hash(NULL) IS NULL$$),
('chll funcs', $$SELECT chll_hash(1) = chll_hash(1::bigint)$$),
('chll funcs', $$SELECT chll_hash('NaN'::float8) = chll_hash('NaN'::float8)$$),
('chll funcs', $$SELECT chll_hash(point(1, 2))$$),
('chll funcs', $$SELECT chll_hash('x')$$),
('chll funcs', $$SELECT chll_estimate(NULL) IS NULL$$),
('chll funcs', $$SELECT chll_estimate('x')$$),
('chll funcs', $$SELECT chll_info(NULL) IS NULL$$),
('chll funcs', $$SELECT chll_estimate_counters(NULL) IS NULL$$),
('chll funcs', $$SELECT chll_estimate_counters(chll_create(16))$$),
('chll funcs', $$SELECT chll_estimate_counters(chll('\x02'::bytea))$$),
('chll funcs', $$SELECT chll_estimate_counters(chll_add_hash(chll_create(16), 0))$$),
('chll funcs', $$SELECT count(*) FROM chll_counters(NULL)$$),
('chll funcs', $$SELECT count(*) FROM chll_counters(chll_create(16))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_trans(NULL, 1))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_trans(NULL, NULL::int))$$),
('chll funcs', $$SELECT chll_agg_trans(NULL, NULL::int) IS NULL$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_trans(chll_create(16), 1))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_trans(NULL, 1, 16))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_trans(NULL, 1, NULL))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_trans(NULL, 1, 0))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_trans(NULL, 1, -1))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_trans(NULL, 1, 2147483647))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_trans(chll_create(16), 1, 32))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_combine(NULL, NULL))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_combine(chll_create(16), NULL))$$),
('chll funcs', $$SELECT chll_estimate(chll_agg_combine(chll_create(16), chll_create(64)))$$),
('chll funcs', $$SELECT chll_agg_final(NULL) IS NULL$$),
('chll agg', $$SELECT chll_estimate(chll_agg(x)) FROM (VALUES (NULL::int)) v(x)$$),
('chll agg', $$SELECT chll_agg(x) IS NULL FROM (VALUES (1)) v(x) WHERE false$$),
('chll agg', $$SELECT chll_estimate(chll_agg(x, NULL)) FROM (VALUES (1)) v(x)$$),
('chll agg', $$SELECT chll_estimate(chll_agg(x, 0)) FROM (VALUES (1)) v(x)$$),
('chll agg', $$SELECT chll_estimate(chll_agg(x, -16)) FROM (VALUES (1)) v(x)$$),
('chll agg', $$SELECT chll_estimate(chll_agg(x, 100)) FROM (VALUES (1)) v(x)$$),
('chll agg', $$SELECT chll_estimate(chll_agg(x, b)) FROM (VALUES (1, 16), (2, 32)) v(x, b)$$),
('chll agg', $$SELECT chll_estimate(chll_agg(x, 2147483647)) FROM (VALUES (1)) v(x)$$),
('chll agg', $$SELECT chll_estimate(chll_agg(x)) FROM (VALUES ('NaN'::float8), ('-Infinity')) v(x)$$),
('chll agg', $$SELECT chll_estimate(chll_union_agg(x)) FROM (VALUES (NULL::chll)) v(x)$$),
('chll agg', $$SELECT chll_estimate(chll_union_agg(x)) FROM (VALUES (chll_create(16)), (chll_create(32))) v(x)$$),
('chll agg', $$SELECT chll_estimate(chll_union_agg(x)) FROM (VALUES (chll_create(16)), (NULL)) v(x)$$),
-- abtree_ndistinct_from_freq
('nd freq', $$SELECT round(abtree_ndistinct_from_freq('{10,5}', 100, NULL, 'bc'))$$),
('nd freq', $$SELECT round(abtree_ndistinct_from_freq('{10,5}', 100))$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq(NULL, 100)$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', NULL, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{}', 100, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{0,0}', 100, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{NULL,5}', 100, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{-1,5}', 100, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{9223372036854775807,9223372036854775807}', 100, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{{1,2},{3,4}}', 100, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('[0:1]={10,5}', 100, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 0, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', -1, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 'NaN', NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 'Infinity', NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 1e308, NULL, 'bc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 10, NULL, 'bc')$$),
('nd freq', $$SELECT round(abtree_ndistinct_from_freq('{10,5}', 100, NULL, NULL))$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, NULL, 'magic')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, NULL, '')$$),
('nd freq', $$SELECT round(abtree_ndistinct_from_freq('{10,5}', 100, NULL, 'GEE'))$$),
('nd freq', $$SELECT round(abtree_ndistinct_from_freq('{10,5}', 100, '{}', 'scbc'))$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{NULL,3}', 'scbc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{NaN,3}', 'scbc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{-1,3}', 'scbc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{Infinity,3}', 'scbc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{0,0}', 'scbc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{{1,2},{3,4}}', 'scbc')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{3,3}', 'scbc', '{NaN,1}')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{3,3}', 'scbc', '{-1,1}')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{3,3}', 'scbc', '{1}')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{3,3}', 'scbc', '{2,2}')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('{10,5}', 100, '{3,3}', 'gee', '{1,1}')$$),
('nd freq', $$SELECT abtree_ndistinct_from_freq('x', 100, NULL, 'bc')$$),
-- abtree_ndistinct
('ndistinct', $$SELECT sample_rows FROM abtree_ndistinct('bad_t', '{k,w}', 1000, 'scbc', 0.5)$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct(NULL, '{k,w}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', NULL)$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{NULL}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{k,NULL}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{nope}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{k,k}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{ctid}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{""}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{{k,w},{k,w}}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', (SELECT array_agg('k'::text) FROM generate_series(1, 100)))$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{k}', NULL)$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{k}', 0)$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{k}', -1)$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{k}', 2147483647)$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{k}', 1000, NULL)$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{k}', 1000, 'magic')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', '{k}', 1000, 'scbc', 'NaN')$$),
('ndistinct', $$SELECT sample_rows FROM abtree_ndistinct('bad_t', '{k}', 1000, 'scbc', 'Infinity')$$),
('ndistinct', $$SELECT sample_rows FROM abtree_ndistinct('bad_t', '{k}', 1000, 'scbc', -5)$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t_k', '{k}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_v', '{k}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_seq', '{last_value}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct(0, '{k}')$$),
('ndistinct', $$SELECT sample_rows FROM abtree_ndistinct('bad_empty', '{k}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('pg_class', '{relname}')$$),
('ndistinct', $$SELECT estimate FROM abtree_ndistinct('bad_t', 'k')$$),
-- abtree_ndistinct_freq
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_t', '{w}')$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_t', '{w}', 'sort')$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq(NULL, '{w}')$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_t', NULL)$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_t', '{}')$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_t', '{nope}')$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_t', '{NULL}')$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_t', '{w}', NULL)$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_t', '{w}', 'magic')$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_empty', '{k}')$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_v', '{k}')$$),
('nd freq vector', $$SELECT abtree_ndistinct_freq('bad_t', '{f}')$$),
-- abtree_ndistinct_store
('nd store', $$SELECT abtree_ndistinct_store('bad_stat', 1000, 0.5)$$),
('nd store', $$SELECT abtree_ndistinct_store('bad_stat'::text, NULL)$$),
('nd store', $$SELECT abtree_ndistinct_store(NULL::text)$$),
('nd store', $$SELECT abtree_ndistinct_store(NULL::oid)$$),
('nd store', $$SELECT abtree_ndistinct_store('no_such_stat')$$),
('nd store', $$SELECT abtree_ndistinct_store('')$$),
('nd store', $$SELECT abtree_ndistinct_store('a.b.c.d')$$),
('nd store', $$SELECT abtree_ndistinct_store('bad_stat_dep')$$),
('nd store', $$SELECT abtree_ndistinct_store(0::oid)$$),
('nd store', $$SELECT abtree_ndistinct_store(4294967295::oid)$$),
('nd store', $$SELECT abtree_ndistinct_store('bad_stat', 0)$$),
('nd store', $$SELECT abtree_ndistinct_store('bad_stat', -1)$$),
('nd store', $$SELECT abtree_ndistinct_store('bad_stat', 2147483647)$$),
('nd store', $$SELECT abtree_ndistinct_store('bad_stat', 1000, 'NaN')$$),
('nd store', $$SELECT abtree_ndistinct_store('bad_stat', 1000, 0.5, NULL)$$),
('nd store', $$SELECT abtree_ndistinct_store(1.5)$$),
-- TABLESAMPLE swr
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(NULL)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(0)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(-1)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(1.5)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr('NaN')$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr('Infinity')$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr('-Infinity')$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(1e300)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(2147483648)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr('ten')$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10, 20)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr()$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10) REPEATABLE (NULL)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10) REPEATABLE ('NaN')$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10) REPEATABLE ('Infinity')$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10) REPEATABLE (-1e308)$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10) REPEATABLE ('x')$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10) WHERE k < 0$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10) WHERE k IS NULL$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10) WHERE k = 'NaN'::float8$$),
('swr', $$SELECT count(*) FROM bad_t TABLESAMPLE swr(10) WHERE k > 2147483647$$),
('swr', $$SELECT count(*) FROM bad_empty TABLESAMPLE swr(10)$$),
('swr', $$SELECT count(*) FROM bad_v TABLESAMPLE swr(10)$$),
('swr', $$SELECT count(*) FROM pg_class TABLESAMPLE swr(10)$$),
('swr', $$SELECT count(*) FROM (SELECT 1) s TABLESAMPLE swr(10)$$),
('swr', $$SELECT count(*) FROM generate_series(1, 3) g TABLESAMPLE swr(10)$$),
('swr', $$SELECT swr(NULL)$$),
-- the Citus parts of swr (src/swr/swr_citus*.c), without Citus
('swr citus', $$SELECT count(*) FROM bad_t TABLESAMPLE swr_shard(1)$$),
('swr citus', $$SELECT count(*) FROM bad_t TABLESAMPLE swr_shard(0)$$),
('swr citus', $$SELECT count(*) FROM bad_t TABLESAMPLE swr_shard(NULL)$$),
('swr citus', $$SELECT count(*) FROM bad_t TABLESAMPLE swr_shard(-1)$$),
('swr citus', $$SELECT count(*) FROM bad_t TABLESAMPLE swr_shard('NaN')$$),
('swr citus', $$SELECT count(*) FROM bad_t TABLESAMPLE swr_shard('Infinity')$$),
('swr citus', $$SELECT count(*) FROM bad_t TABLESAMPLE swr_shard(1e300)$$),
('swr citus', $$SELECT count(*) FROM bad_t TABLESAMPLE swr_shard('{1}', '{10}')$$),
('swr citus', $$SELECT count(*) FROM bad_t TABLESAMPLE swr_shard(1) REPEATABLE (NULL)$$),
('swr citus', $$SELECT swr_shard(NULL)$$),
('swr citus', $$SELECT swr_shard_weight('bad_t')$$),
('swr citus', $$SELECT swr_shard_weight('bad_w')$$),
('swr citus', $$SELECT swr_shard_weight('bad_empty')$$),
('swr citus', $$SELECT swr_shard_weight('bad_v')$$),
('swr citus', $$SELECT swr_shard_weight('bad_seq')$$),
('swr citus', $$SELECT swr_shard_weight('bad_t_k')$$),
('swr citus', $$SELECT swr_shard_weight(NULL)$$),
('swr citus', $$SELECT swr_shard_weight(0)$$),
('swr citus', $$SELECT count(*) FROM swr_citus_sample(NULL::bad_t, 'bad_t', 10, NULL, NULL, 0)$$),
('swr citus', $$SELECT count(*) FROM swr_citus_sample(NULL::bad_t, NULL, 10, NULL, NULL, 0)$$),
('swr citus', $$SELECT count(*) FROM swr_citus_sample(NULL::bad_t, 'bad_t', NULL, NULL, NULL, 0)$$),
('swr citus', $$SELECT count(*) FROM swr_citus_sample(NULL::bad_t, 'bad_t', -1, NULL, NULL, 0)$$),
('swr citus', $$SELECT count(*) FROM swr_citus_sample(NULL::bad_t, 'bad_t', 10, NULL, NULL, 2, 1)$$),
('swr citus', $$SELECT count(*) FROM swr_citus_sample(NULL::bad_t, 'bad_t', 10, NULL, NULL, NULL)$$),
('swr citus', $$SELECT count(*) FROM swr_citus_sample(NULL::bad_t, 'bad_t', 10, NULL, NULL, 'x'::text)$$),
('swr stats', $$SELECT count(*) >= 0 FROM abtree_swr_stats()$$),
('swr stats', $$SELECT count(*) >= 0 FROM abtree_swr_stats$$),
('swr stats', $$SELECT abtree_swr_stats_reset()$$),
('swr stats', $$SELECT abtree_swr_stats_reset(1)$$),
-- swr estimates: aggregates, and their state functions called directly
('swr estimate', $$SELECT (swr_avg(x)).estimate FROM (VALUES (1.0), (3.0)) v(x)$$),
('swr estimate', $$SELECT (swr_avg(k)).estimate FROM bad_w TABLESAMPLE swr(10)$$),
('swr estimate', $$SELECT (swr_count(k > 0, 1, 100)).estimate FROM bad_w TABLESAMPLE swr(10)$$),
('swr estimate', $$SELECT (swr_sum(k, w, 100)).estimate FROM bad_t TABLESAMPLE swr(10)$$),
('swr estimate', $$SELECT (swr_avg(x)).sample_rows FROM (VALUES (NULL::float8)) v(x)$$),
('swr estimate', $$SELECT (swr_avg(x)).estimate FROM (VALUES (1.0)) v(x) WHERE false$$),
('swr estimate', $$SELECT (swr_avg(x)).estimate FROM (VALUES ('NaN'::float8), (1)) v(x)$$),
('swr estimate', $$SELECT (swr_avg(x)).estimate FROM (VALUES ('Infinity'::float8), (1)) v(x)$$),
('swr estimate', $$SELECT (swr_avg(x)).estimate FROM (VALUES (1e308), (1e308)) v(x)$$),
('swr estimate', $$SELECT (swr_avg(x, w)).estimate FROM (VALUES (1.0, 0.0)) v(x, w)$$),
('swr estimate', $$SELECT (swr_avg(x, w)).estimate FROM (VALUES (1.0, -1.0)) v(x, w)$$),
('swr estimate', $$SELECT (swr_avg(x, w)).estimate FROM (VALUES (1.0, NULL)) v(x, w)$$),
('swr estimate', $$SELECT (swr_avg(x, w)).estimate FROM (VALUES (1.0, 'NaN'::float8)) v(x, w)$$),
('swr estimate', $$SELECT (swr_avg(x, w)).estimate FROM (VALUES (1.0, 'Infinity'::float8)) v(x, w)$$),
('swr estimate', $$SELECT (swr_avg(x, w)).estimate FROM (VALUES (1.0, 1e-320::float8)) v(x, w)$$),
('swr estimate', $$SELECT (swr_sum(x, t)).estimate FROM (VALUES (1.0, 100.0)) v(x, t)$$),
('swr estimate', $$SELECT (swr_sum(x, t)).estimate FROM (VALUES (1.0, NULL)) v(x, t)$$),
('swr estimate', $$SELECT (swr_sum(x, t)).estimate FROM (VALUES (1.0, -1.0)) v(x, t)$$),
('swr estimate', $$SELECT (swr_sum(x, t)).estimate FROM (VALUES (1.0, 'NaN'::float8)) v(x, t)$$),
('swr estimate', $$SELECT (swr_sum(x, t)).estimate FROM (VALUES (1.0, 'Infinity'::float8)) v(x, t)$$),
('swr estimate', $$SELECT (swr_sum(x, t)).estimate FROM (VALUES (1.0, 10.0), (1.0, 20.0)) v(x, t)$$),
('swr estimate', $$SELECT (swr_sum(x, w, t)).estimate FROM (VALUES (1.0, 0.0, 10.0)) v(x, w, t)$$),
('swr estimate', $$SELECT (swr_sum(x, w, t)).estimate FROM (VALUES (1.0, -2.0, 10.0)) v(x, w, t)$$),
('swr estimate', $$SELECT (swr_sum(x, w, t)).estimate FROM (VALUES (1.0, 2.0, 0.0)) v(x, w, t)$$),
('swr estimate', $$SELECT (swr_count(p, t)).estimate FROM (VALUES (true, 10.0), (NULL, 10.0)) v(p, t)$$),
('swr estimate', $$SELECT (swr_count(p, t)).estimate FROM (VALUES (true, 'NaN'::float8)) v(p, t)$$),
('swr estimate', $$SELECT (swr_count(p, t)).estimate FROM (VALUES (true, -10.0)) v(p, t)$$),
('swr estimate', $$SELECT (swr_count(p, w, t)).estimate FROM (VALUES (true, 1.0, 10.0)) v(p, w, t)$$),
('swr estimate', $$SELECT (swr_count(p, w, t)).estimate FROM (VALUES (true, 0.0, 10.0)) v(p, w, t)$$),
('swr estimate', $$SELECT (swr_count(p, w, t)).estimate FROM (VALUES (true, NULL, 10.0)) v(p, w, t)$$),
('swr estimate', $$SELECT (swr_count(p, t)).estimate FROM (VALUES (1, 10.0)) v(p, t)$$),
('swr state', $$SELECT swr_avg_trans(NULL, 1)$$),
('swr state', $$SELECT swr_avg_trans('{}', 1)$$),
('swr state', $$SELECT swr_avg_trans('{1,2,3}', 1)$$),
('swr state', $$SELECT swr_avg_trans('{NULL,0,0,0,0,0,0,0}', 1)$$),
('swr state', $$SELECT swr_avg_trans('{{0,0,0,0},{0,0,0,0}}', 1)$$),
('swr state', $$SELECT swr_avg_trans('{0,0,0,0,0,0,0,0,0}', 1)$$),
('swr state', $$SELECT swr_avg_trans('{0,0,0,0,0,0,0,0}', 1, NULL)$$),
('swr state', $$SELECT swr_avg_combine('{1,2,3}', '{0,0,0,0,0,0,0,0}')$$),
('swr state', $$SELECT swr_avg_combine('{0,0,0,0,0,0,0,0}', '{1}')$$),
('swr state', $$SELECT swr_avg_final('{1,2}')$$),
('swr state', $$SELECT swr_avg_final('{-1,0,0,0,0,0,0,0}')$$),
('swr state', $$SELECT swr_avg_final('{NaN,NaN,NaN,NaN,NaN,NaN,NaN,NaN}')$$),
('swr state', $$SELECT swr_avg_final('{Infinity,1,1,1,1,1,1,1}')$$),
('swr state', $$SELECT swr_avg_final(NULL)$$),
('swr state', $$SELECT swr_sum_trans(NULL, 1, 10)$$),
('swr state', $$SELECT swr_sum_trans('{1}', 1, 10)$$),
('swr state', $$SELECT swr_sum_trans('{0,0,0,0,0,0}', 1, 1, NULL)$$),
('swr state', $$SELECT swr_sum_combine('{1}', '{0,0,0,0,0,0}')$$),
('swr state', $$SELECT swr_sum_final('{1,2}')$$),
('swr state', $$SELECT swr_sum_final('{-5,0,0,0,0,0}')$$),
('swr state', $$SELECT swr_sum_final('{NaN,NaN,NaN,NaN,NaN,NaN}')$$),
('swr state', $$SELECT swr_count_trans(NULL, true, 10)$$),
('swr state', $$SELECT swr_count_trans('{1,2,3}', true, 10)$$),
('swr state', $$SELECT swr_count_trans('{0,0,0,0,0,0}', true, 1, NULL)$$),
('swr state', $$SELECT swr_count_final('{1,2}')$$),
('swr state', $$SELECT swr_count_final('{1e308,1e308,1e308,1e308,1e308,1e308}')$$),
('swr state', $$SELECT swr_count_final('{-1,0,0,0,0,0}')$$),
('swr state', $$SELECT swr_count_weighted_final('{1,2}')$$),
('swr state', $$SELECT swr_count_weighted_final('{Infinity,0,0,0,0,0}')$$),
-- the weight store
('mvstore', $$SELECT enabled FROM abtree_mvstore()$$),
('mvstore', $$SELECT count(*) FROM abtree_mvstore$$),
('mvstore', $$SELECT abtree_mvstore_collect() >= 0$$),
('mvstore', $$SELECT violations FROM abtree_mvstore_check('bad_t_k')$$),
('mvstore', $$SELECT violations FROM abtree_mvstore_check('bad_w_kw')$$),
('mvstore', $$SELECT violations FROM abtree_mvstore_check('bad_empty_k')$$),
('mvstore', $$SELECT violations FROM abtree_mvstore_check(NULL)$$),
('mvstore', $$SELECT violations FROM abtree_mvstore_check(0)$$),
('mvstore', $$SELECT violations FROM abtree_mvstore_check('bad_t')$$),
('mvstore', $$SELECT violations FROM abtree_mvstore_check('bad_t_btree')$$),
('mvstore', $$SELECT violations FROM abtree_mvstore_check('bad_t_k', 1)$$),
-- reloptions (templates for each index AM: %I index, %T table)
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 10); SELECT reloptions FROM pg_class WHERE relname = 'bad_r'$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 100); SELECT reloptions FROM pg_class WHERE relname = 'bad_r'$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 0)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 9)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 101)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = -1)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 2147483648)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 50.5)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 'NaN')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 'ninety')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = '')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = NULL)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (fillfactor = 50, fillfactor = 60)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (nosuch = 1)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (toast.fillfactor = 50)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) INCLUDE (w) WITH (weight_column = 'w'); SELECT total_weight FROM abtree_stats('bad_r')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (weight_column = 'k'); SELECT total_weight FROM abtree_stats('bad_r')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (weight_column = 'w')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) INCLUDE (t) WITH (weight_column = 't')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) INCLUDE (f) WITH (weight_column = 'f')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) INCLUDE (b) WITH (weight_column = 'b')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (weight_column = '')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (weight_column = 'nope')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (weight_column = 'K')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (weight_column = 42)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (weight_column)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (weight_column = 'ctid')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (weight_column = repeat('w', 100))$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A ((k + 1)) WITH (weight_column = 'k')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) INCLUDE (w) WITH (weight_column = 'w') WHERE w > 0; SELECT total_weight FROM abtree_stats('bad_r')$$),
('reloption', $$CREATE TABLE bad_n (k int, w int); INSERT INTO bad_n VALUES (1, -1); CREATE INDEX bad_r ON bad_n USING %A (k) INCLUDE (w) WITH (weight_column = 'w')$$),
('reloption', $$CREATE TABLE bad_n (k int, w int); INSERT INTO bad_n VALUES (1, NULL); CREATE INDEX bad_r ON bad_n USING %A (k) INCLUDE (w) WITH (weight_column = 'w')$$),
('reloption', $$CREATE TABLE bad_n (k int, w int); CREATE INDEX bad_r ON bad_n USING %A (k) INCLUDE (w) WITH (weight_column = 'w'); INSERT INTO bad_n VALUES (1, -1)$$),
('reloption', $$CREATE TABLE bad_n (k int, w int); CREATE INDEX bad_r ON bad_n USING %A (k) INCLUDE (w) WITH (weight_column = 'w'); INSERT INTO bad_n VALUES (1, NULL)$$),
('reloption', $$CREATE TABLE bad_n (k int, w bigint); CREATE INDEX bad_r ON bad_n USING %A (k) INCLUDE (w) WITH (weight_column = 'w'); INSERT INTO bad_n VALUES (1, 9223372036854775807), (2, 9223372036854775807); SELECT total_weight FROM abtree_stats('bad_r')$$),
('reloption', $$CREATE TABLE bad_n (k int, w bigint); INSERT INTO bad_n VALUES (1, 9223372036854775807), (2, 9223372036854775807); CREATE INDEX bad_r ON bad_n USING %A (k) INCLUDE (w) WITH (weight_column = 'w'); SELECT total_weight FROM abtree_stats('bad_r')$$),
('reloption', $$CREATE TABLE bad_n (k int, w smallint); CREATE INDEX bad_r ON bad_n USING %A (k) INCLUDE (w) WITH (weight_column = 'w'); INSERT INTO bad_n VALUES (1, 0), (2, 0); SELECT count(*) FROM abtree_sample_tids('bad_r', 10)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch = off); SELECT abtree_sketch('bad_r') IS NULL$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch = 'maybe')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch = 2)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch = -1)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch = '')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch); SELECT abtree_sketch('bad_r') IS NULL$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k, w) WITH (key_sketch = off); SELECT abtree_sketch('bad_r', 0) IS NULL AND abtree_sketch('bad_r', 2) IS NOT NULL$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k, w) WITH (key_sketch = 'maybe')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (deduplicate_items = 'maybe')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (deduplicate_items = 2)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (deduplicate_items = -1)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (deduplicate_items = '')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (deduplicate_items = NULL)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (deduplicate_items); SELECT entries = (SELECT count(k) FROM bad_t) FROM abtree_stats('bad_r')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (deduplicate_items = off); SELECT entries = (SELECT count(k) FROM bad_t) FROM abtree_stats('bad_r')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) INCLUDE (w) WITH (deduplicate_items = on, weight_column = 'w'); SELECT total_weight FROM abtree_stats('bad_r')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k, w) WITH (key_sketch = 2)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k, w) WITH (sketch = off, key_sketch = on); SELECT abtree_sketch('bad_r', 0) IS NULL$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (key_sketch = on); SELECT abtree_sketch('bad_r', 0) IS NULL$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k, w) WITH (key_sketch = -1)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k, w) WITH (key_sketch = '')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k, w) WITH (key_sketch); SELECT abtree_sketch('bad_r', 0) IS NOT NULL$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = 2048); SELECT (chll_info(abtree_sketch('bad_r', 1))).buckets$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = 16, sketch = off); SELECT abtree_sketch('bad_r', 1) IS NULL$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = 100)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = 8)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = 4096)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = 0)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = -512)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = 2147483648)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = 512.5)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = 'many')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = '')$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets)$$),
('reloption', $$CREATE INDEX bad_r ON bad_t USING %A (k) WITH (sketch_buckets = NULL)$$),
('reloption', $$ALTER INDEX bad_t_k SET (sketch_buckets = 1000)$$),
('reloption', $$ALTER INDEX bad_t_k SET (sketch_buckets = 32); REINDEX INDEX bad_t_k; SELECT (chll_info(abtree_sketch('bad_t_k', 1))).buckets$$),
('reloption', $$ALTER INDEX bad_t_k SET (fillfactor = 50); SELECT reloptions FROM pg_class WHERE relname = 'bad_t_k'$$),
('reloption', $$ALTER INDEX bad_t_k SET (fillfactor = 0)$$),
('reloption', $$ALTER INDEX bad_t_k SET (sketch = off); SELECT abtree_sketch('bad_t_k') IS NULL$$),
-- weight_column takes effect at the next REINDEX (before the fix, the
-- entries inserted after such an ALTER had the wrong shape: verify failed)
('reloption', $$ALTER INDEX bad_t_k SET (weight_column = 'w'); INSERT INTO bad_t VALUES (0, 5); SELECT total_weight FROM abtree_verify('bad_t_k', true), abtree_stats('bad_t_k')$$),
('reloption', $$ALTER INDEX bad_t_k SET (weight_column = 'w'); REINDEX INDEX bad_t_k; SELECT total_weight FROM abtree_verify('bad_t_k', true), abtree_stats('bad_t_k')$$),
('reloption', $$ALTER INDEX bad_w_kw SET (weight_column = 'k'); INSERT INTO bad_w VALUES (0, 5); SELECT total_weight FROM abtree_verify('bad_w_kw', true), abtree_stats('bad_w_kw')$$),
('reloption', $$ALTER INDEX bad_w_kw RESET (weight_column); INSERT INTO bad_w VALUES (0, 5); SELECT total_weight FROM abtree_verify('bad_w_kw', true), abtree_stats('bad_w_kw')$$),
('reloption', $$ALTER INDEX bad_w_kw SET (weight_column = 'nope'); INSERT INTO bad_w VALUES (0, 5); SELECT total_weight FROM abtree_verify('bad_w_kw', true), abtree_stats('bad_w_kw')$$),
('reloption', $$ALTER INDEX bad_w_kw SET (weight_column = 'nope'); REINDEX INDEX bad_w_kw$$),
('reloption', $$ALTER INDEX bad_t_k SET (nosuch = 1)$$),
-- parameters: SET with bad values; set_config with NULL resets
('guc', $$SET abtree.debug_redo = on$$),
('guc', $$SELECT set_config('abtree.debug_redo', NULL, false)$$),
('guc', $$SET abtree.swr_index = 'bad_t_k'; SELECT count(*) FROM bad_t TABLESAMPLE swr(5)$$),
('guc', $$SET abtree.swr_index = 'no_such_index'; SELECT count(*) FROM bad_t TABLESAMPLE swr(5)$$),
('guc', $$SET abtree.swr_index = 'bad_t_btree'; SELECT count(*) FROM bad_t TABLESAMPLE swr(5)$$),
('guc', $$SET abtree.swr_index = 'a.b.c'$$),
('guc', $$SET abtree.swr_index = '"unterminated'$$),
('guc', $$SET abtree.swr_index = ',,,'$$),
('guc', $$SET abtree.swr_index = ''; SELECT count(*) FROM bad_t TABLESAMPLE swr(5)$$),
('guc', $$SELECT set_config('abtree.swr_index', repeat('x', 100000), false) IS NOT NULL$$),
('guc', $$SELECT set_config('abtree.swr_index', NULL, false)$$),
('guc', $$SET abtree.swr_where = standard$$),
('guc', $$SET abtree.swr_where = 'sometimes'$$),
('guc', $$SET abtree.swr_where = 1$$),
('guc', $$SELECT set_config('abtree.swr_where', NULL, false)$$),
('guc', $$SET abtree.swr_batch_size = 0$$),
('guc', $$SET abtree.swr_batch_size = 65537$$),
('guc', $$SET abtree.swr_batch_size = 'many'$$),
('guc', $$SELECT set_config('abtree.swr_batch_size', NULL, false)$$),
('guc', $$SET abtree.draw_stored_share = -0.1$$),
('guc', $$SET abtree.draw_stored_share = -2$$),
('guc', $$SET abtree.draw_stored_share = -1$$),
('guc', $$SET abtree.draw_stored_share = 1.5$$),
('guc', $$SET abtree.draw_stored_share = 1e308$$),
('guc', $$SET abtree.draw_stored_share = -1e308$$),
('guc', $$SET abtree.draw_stored_share = 0$$),
('guc', $$SET abtree.draw_stored_share = 'NaN'$$),
('guc', $$SET abtree.draw_stored_share = 'half'$$),
('guc', $$SELECT set_config('abtree.draw_stored_share', NULL, false)$$),
('guc', $$SET abtree.weight_protocol = 'fastest'$$),
('guc', $$SET abtree.weight_protocol = -1$$),
('guc', $$SET abtree.weight_protocol = 'batch'$$),
('guc', $$SELECT set_config('abtree.weight_protocol', NULL, false)$$),
('guc', $$SET abtree.range_selectivity = 'maybe'$$),
('guc', $$SET abtree.range_selectivity = 2$$),
('guc', $$SELECT set_config('abtree.range_selectivity', NULL, false)$$),
('guc', $$SET abtree.sketch_ndistinct = 'maybe'$$),
('guc', $$SET abtree.sketch_ndistinct = -1$$),
('guc', $$SELECT set_config('abtree.sketch_ndistinct', NULL, false)$$),
('guc', $$SET abtree.sketch_rebuild = 'maybe'$$),
('guc', $$SET abtree.sketch_rebuild = -1$$),
('guc', $$SET abtree.sketch_rebuild = ''$$),
('guc', $$SELECT set_config('abtree.sketch_rebuild', NULL, false)$$),
('guc', $$SET abtree.debug_pass_pause = -1$$),
('guc', $$SET abtree.debug_pass_pause = 2147483648$$),
('guc', $$SET abtree.debug_pass_pause = 'NaN'$$),
('guc', $$SET abtree.debug_pass_pause = 1.5$$),
('guc', $$SET abtree.debug_pass_pause = 0$$),
('guc', $$SELECT set_config('abtree.debug_pass_pause', NULL, false)$$),
('guc', $$SET abtree.debug_sample_pause = -1$$),
('guc', $$SET abtree.debug_sample_pause = 2147483648$$),
('guc', $$SET abtree.debug_sample_pause = 'NaN'$$),
('guc', $$SET abtree.debug_sample_pause = 1.5$$),
('guc', $$SELECT set_config('abtree.debug_sample_pause', NULL, false)$$),
('guc', $$SET abtree.debug_build_merge_runs = 1$$),
('guc', $$SET abtree.debug_build_merge_runs = 0$$),
('guc', $$SET abtree.debug_build_merge_runs = -5$$),
('guc', $$SET abtree.debug_build_merge_runs = 1025$$),
('guc', $$SET abtree.debug_build_merge_runs = 'many'$$),
('guc', $$SELECT set_config('abtree.debug_build_merge_runs', NULL, false)$$),
('guc', $$SET abtree.debug_repair_pause = -1$$),
('guc', $$SET abtree.debug_repair_pause = 2147483584$$),
('guc', $$SET abtree.debug_repair_pause = 'NaN'$$),
('guc', $$SET abtree.debug_repair_pause = 1.5$$),
('guc', $$SELECT set_config('abtree.debug_repair_pause', NULL, false)$$),
('guc', $$SET abtree.debug_pass_pause_level = -2$$),
('guc', $$SET abtree.debug_pass_pause_level = 65$$),
('guc', $$SET abtree.debug_pass_pause_level = 'leaf'$$),
('guc', $$SELECT set_config('abtree.debug_pass_pause_level', NULL, false)$$),
('guc', $$SET abtree.debug_pass_error_level = -2$$),
('guc', $$SET abtree.debug_pass_error_level = 65$$),
('guc', $$SET abtree.debug_pass_error_level = 'root'$$),
('guc', $$SELECT set_config('abtree.debug_pass_error_level', NULL, false)$$),
('guc', $$SET abtree.debug_path_record = 'maybe'$$),
('guc', $$SET abtree.debug_path_record = 2$$),
('guc', $$SELECT set_config('abtree.debug_path_record', NULL, false)$$),
('guc', $$SET abtree.mvstore = 'maybe'$$),
('guc', $$SET abtree.mvstore = off; INSERT INTO bad_t VALUES (1000, 1); SELECT count(*) FROM bad_t TABLESAMPLE swr(5)$$),
('guc', $$SELECT set_config('abtree.mvstore', NULL, false)$$),
('guc', $$SET abtree.mvstore_size = 0$$),
('guc', $$SET abtree.mvstore_size = -1$$),
('guc', $$SET abtree.mvstore_gc_interval = 100$$),
('guc', $$SELECT set_config('abtree.mvstore_gc_interval', NULL, false)$$),
('guc', $$SET abtree.no_such_parameter = 1$$);

-- one copy of each reloption case per index access method
INSERT INTO bad_case (area, sql)
SELECT c.area || ' ' || a.am, replace(c.sql, '%A', a.am)
  FROM bad_case c, bad_am a
 WHERE c.sql LIKE '%\%A%'
 ORDER BY c.id, a.am;
DELETE FROM bad_case WHERE sql LIKE '%\%A%';

DO $$
DECLARE
	c		record;
	res		text;
	st		text;
	stmt	text;
BEGIN
	FOR c IN SELECT * FROM bad_case ORDER BY id LOOP
		BEGIN
			res := NULL;
			-- statements one by one (no case has a semicolon in a literal);
			-- a query's first column of its first row is the result
			FOREACH stmt IN ARRAY regexp_split_to_array(c.sql, ';\s*') LOOP
				IF stmt ~* '^\s*(select|with|values)' THEN
					EXECUTE stmt INTO res;
				ELSE
					EXECUTE stmt;
				END IF;
			END LOOP;
			-- roll the case back, carrying its result out
			RAISE SQLSTATE 'ZZ999' USING MESSAGE = coalesce(left(res, 60), 'NULL');
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, res = MESSAGE_TEXT;
			UPDATE bad_case
			   SET outcome = CASE WHEN st = 'ZZ999' THEN 'ok: ' || res ELSE st END
			 WHERE id = c.id;
		END;
	END LOOP;
END
$$;

SELECT id, area, sql, outcome FROM bad_case ORDER BY id;

-- no internal errors, no case left without an outcome
SELECT id, sql, outcome FROM bad_case
 WHERE outcome IS NULL OR outcome IN ('XX000', 'XX001', 'XX002');

-- every function of the extension has cases
SELECT p.proname
  FROM pg_depend d
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'abtree'
  JOIN pg_proc p ON p.oid = d.objid AND d.classid = 'pg_proc'::regclass
 WHERE NOT EXISTS (SELECT FROM bad_case c WHERE c.sql ~ ('\m' || p.proname || '\M'))
 ORDER BY 1;

-- and every abtree.* parameter
SELECT name FROM pg_settings s
 WHERE name LIKE 'abtree.%'
   AND NOT EXISTS (SELECT FROM bad_case c WHERE c.sql LIKE '%' || s.name || '%')
 ORDER BY 1;

-- the reloptions of each index AM
SELECT a.am, o.opt
  FROM bad_am a, (VALUES ('fillfactor'), ('weight_column'), ('sketch')) o(opt)
 WHERE NOT EXISTS (SELECT FROM bad_case c
					WHERE c.area = 'reloption ' || a.am AND c.sql LIKE '%' || o.opt || '%')
 ORDER BY 1, 2;

SELECT count(*) AS cases, count(*) FILTER (WHERE outcome LIKE 'ok:%') AS ok,
	   count(*) FILTER (WHERE outcome NOT LIKE 'ok:%') AS errors
  FROM bad_case;

-- the indexes are intact after all of it
SELECT abtree_verify('bad_t_k', true), abtree_verify('bad_w_kw', true);
SELECT total_weight FROM abtree_stats('bad_w_kw');

DROP TABLE bad_t, bad_w, bad_empty, bad_part, bad_case, bad_am CASCADE;
DROP SEQUENCE bad_seq;
DROP FUNCTION bad_chll_byte(int, text), bad_chll();

-- ALTER SYSTEM cannot run in the loop's subtransactions: the parameters
-- that only postgresql.conf sets, with bad values (each must fail)
\set VERBOSITY sqlstate
ALTER SYSTEM SET abtree.mvstore_size = -1;
ALTER SYSTEM SET abtree.mvstore_size = '1TB';
ALTER SYSTEM SET abtree.mvstore_size = 'NaN';
ALTER SYSTEM SET abtree.mvstore_size = 2147483648;
ALTER SYSTEM SET abtree.mvstore_gc_interval = 0;
ALTER SYSTEM SET abtree.mvstore_gc_interval = '2h';
ALTER SYSTEM SET abtree.mvstore_gc_interval = -1;
ALTER SYSTEM SET abtree.mvstore_gc_interval = 'soon';
ALTER SYSTEM SET abtree.debug_redo = 'maybe';
\set VERBOSITY default
ALTER SYSTEM RESET abtree.mvstore_size;
ALTER SYSTEM RESET abtree.mvstore_gc_interval;
