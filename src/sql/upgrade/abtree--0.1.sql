-- abtree 0.1 install script, as released (tag v0.1, commit b6939c3): frozen.
-- Kept so that CREATE EXTENSION abtree VERSION '0.1' and the upgrade test
-- (test/t/030_upgrade.pl) can install it; never edit it, write an upgrade
-- script instead (README, "Upgrading").

/* abtree--0.1.sql, part 00: the core functions.
 * The install script is the concatenation of the files in src/sql, in name order
 * (see the Makefile). */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION abtree" to load this file. \quit

-- Fails, with a HINT naming the postgresql.conf line, unless the library is in
-- shared_preload_libraries.  Called first so that CREATE EXTENSION fails early.
CREATE FUNCTION abtree_check_preload()
RETURNS void
AS 'MODULE_PATHNAME', 'abtree_check_preload'
LANGUAGE C VOLATILE PARALLEL SAFE;

SELECT abtree_check_preload();

COMMENT ON FUNCTION abtree_check_preload() IS
'raises an error with a hint unless abtree is loaded via shared_preload_libraries';

CREATE FUNCTION abtree_status(
	OUT component text,
	OUT item text,
	OUT value text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'abtree_status'
LANGUAGE C VOLATILE PARALLEL SAFE ROWS 16;

COMMENT ON FUNCTION abtree_status() IS
'what abtree has registered in this server: WAL resource manager, shared memory, parameters, counters';

-- Not STRICT: a NULL message gets an ERROR, not a silent NULL.
CREATE FUNCTION abtree_wal_probe(message text DEFAULT 'probe')
RETURNS pg_lsn
AS 'MODULE_PATHNAME', 'abtree_wal_probe'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION abtree_wal_probe(text) IS
'writes and flushes an abtree PROBE WAL record; returns the LSN after it. Replay logs the message.';

-- Writing WAL at will is for administrators.
REVOKE ALL ON FUNCTION abtree_wal_probe(text) FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- The abtree index access method (src/abtree/README)
-- ---------------------------------------------------------------------------

CREATE FUNCTION abtree_am_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'abtree_am_handler'
LANGUAGE C;

CREATE ACCESS METHOD abtree TYPE INDEX HANDLER abtree_am_handler;
COMMENT ON ACCESS METHOD abtree IS
'aggregate B-link tree: an ordered index whose downlinks carry subtree weights, for weighted random sampling';

-- Draws n index entries, each with probability proportional to its weight,
-- independently and with replacement; returns their heap TIDs (visible or
-- not: the caller checks).  For tests and for TABLESAMPLE swr.
CREATE FUNCTION abtree_sample_tids(index regclass, n integer, seed float8 DEFAULT NULL)
RETURNS SETOF tid
AS 'MODULE_PATHNAME', 'abtree_sample_tids'
LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1000;

-- Checks the structure and the weights of an abtree index, amcheck style.
-- exact: downlink weights must equal the weight below (takes a ShareLock,
-- which waits for and blocks writers); false: at least that (AccessShareLock).
CREATE FUNCTION abtree_verify(index regclass, heapallindexed boolean DEFAULT false,
							  exact boolean DEFAULT true)
RETURNS void
AS 'MODULE_PATHNAME', 'abtree_verify'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION abtree_stats(index regclass,
	OUT height integer,
	OUT pages bigint,
	OUT leaf_pages bigint,
	OUT empty_leaf_pages bigint,
	OUT entries bigint,
	OUT total_weight numeric,
	OUT avg_leaf_fill float8,
	OUT pages_per_level bigint[])
RETURNS record
AS 'MODULE_PATHNAME', 'abtree_stats'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION abtree_sample_tids(regclass, integer, float8) IS
'n weighted random draws with replacement from an abtree index (heap TIDs)';
COMMENT ON FUNCTION abtree_verify(regclass, boolean, boolean) IS
'checks order, links, levels and weights of an abtree index; ERROR on the first problem';
COMMENT ON FUNCTION abtree_stats(regclass) IS
'height, pages, entries, total weight and fill of an abtree index';

-- The same, restricted to entries whose first key column is in [lo, hi]
-- (a NULL bound is open): independent range sampling (paper 000, section 6).
CREATE FUNCTION abtree_sample_tids_range(index regclass, n integer, seed float8,
										 lo anyelement, hi anyelement)
RETURNS SETOF tid
AS 'MODULE_PATHNAME', 'abtree_sample_tids_range'
LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION abtree_sample_tids_range(regclass, integer, float8, anyelement, anyelement) IS
'n weighted random draws with replacement among the entries whose first key is in [lo, hi]';

-- The total weight (for an unweighted index: the number) of the valid
-- entries whose first key column is in the range from lo to hi, NULL
-- meaning open on that side, from two root-to-leaf descents (no scan).
-- Counts index entries, not visible rows (README, "Range aggregates").
CREATE FUNCTION abtree_range_weight(index regclass, lo anyelement, hi anyelement,
									lo_inclusive boolean DEFAULT true,
									hi_inclusive boolean DEFAULT true,
									visible_only boolean DEFAULT false)
RETURNS numeric
AS 'MODULE_PATHNAME', 'abtree_range_weight'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION abtree_range_weight(regclass, anyelement, anyelement, boolean, boolean, boolean) IS
'total weight (unweighted index: number) of the index entries whose first key is in the range, in O(log n); visible_only leaves out inserts the snapshot cannot see';

-- ---------------------------------------------------------------------------
-- Operator classes and families of the abtree access method
-- ---------------------------------------------------------------------------
--
-- abtree is an ordered index with btree's strategy numbers (1 <, 2 <=, 3 =,
-- 4 >=, 5 >) and support functions (1 comparison, 2 sortsupport), and no
-- others.  Each family mirrors the btree family of the same name, with its
-- cross-type operators and comparison functions, but without btree's
-- in_range (3) and equalimage (4) functions.  Every class is the default for
-- its type; varchar columns use text_ops through binary coercion, as with
-- btree.  Nothing is schema-qualified: this runs inside CREATE EXTENSION,
-- after the access method is created, and the objects go into the
-- extension's schema.

-- integer_ops: int2, int4, int8 and every cross-type pair of them

CREATE OPERATOR FAMILY integer_ops USING abtree;

CREATE OPERATOR CLASS int2_ops
	DEFAULT FOR TYPE int2 USING abtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint2cmp(int2, int2),
	FUNCTION 2 btint2sortsupport(internal);

CREATE OPERATOR CLASS int4_ops
	DEFAULT FOR TYPE int4 USING abtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint4cmp(int4, int4),
	FUNCTION 2 btint4sortsupport(internal);

CREATE OPERATOR CLASS int8_ops
	DEFAULT FOR TYPE int8 USING abtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint8cmp(int8, int8),
	FUNCTION 2 btint8sortsupport(internal);

ALTER OPERATOR FAMILY integer_ops USING abtree ADD
	-- int2 vs int4
	OPERATOR 1 < (int2, int4),
	OPERATOR 2 <= (int2, int4),
	OPERATOR 3 = (int2, int4),
	OPERATOR 4 >= (int2, int4),
	OPERATOR 5 > (int2, int4),
	FUNCTION 1 (int2, int4) btint24cmp(int2, int4),
	-- int2 vs int8
	OPERATOR 1 < (int2, int8),
	OPERATOR 2 <= (int2, int8),
	OPERATOR 3 = (int2, int8),
	OPERATOR 4 >= (int2, int8),
	OPERATOR 5 > (int2, int8),
	FUNCTION 1 (int2, int8) btint28cmp(int2, int8),
	-- int4 vs int2
	OPERATOR 1 < (int4, int2),
	OPERATOR 2 <= (int4, int2),
	OPERATOR 3 = (int4, int2),
	OPERATOR 4 >= (int4, int2),
	OPERATOR 5 > (int4, int2),
	FUNCTION 1 (int4, int2) btint42cmp(int4, int2),
	-- int4 vs int8
	OPERATOR 1 < (int4, int8),
	OPERATOR 2 <= (int4, int8),
	OPERATOR 3 = (int4, int8),
	OPERATOR 4 >= (int4, int8),
	OPERATOR 5 > (int4, int8),
	FUNCTION 1 (int4, int8) btint48cmp(int4, int8),
	-- int8 vs int2
	OPERATOR 1 < (int8, int2),
	OPERATOR 2 <= (int8, int2),
	OPERATOR 3 = (int8, int2),
	OPERATOR 4 >= (int8, int2),
	OPERATOR 5 > (int8, int2),
	FUNCTION 1 (int8, int2) btint82cmp(int8, int2),
	-- int8 vs int4
	OPERATOR 1 < (int8, int4),
	OPERATOR 2 <= (int8, int4),
	OPERATOR 3 = (int8, int4),
	OPERATOR 4 >= (int8, int4),
	OPERATOR 5 > (int8, int4),
	FUNCTION 1 (int8, int4) btint84cmp(int8, int4);

-- float_ops: float4, float8 and both cross-type pairs

CREATE OPERATOR FAMILY float_ops USING abtree;

CREATE OPERATOR CLASS float4_ops
	DEFAULT FOR TYPE float4 USING abtree FAMILY float_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btfloat4cmp(float4, float4),
	FUNCTION 2 btfloat4sortsupport(internal);

CREATE OPERATOR CLASS float8_ops
	DEFAULT FOR TYPE float8 USING abtree FAMILY float_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btfloat8cmp(float8, float8),
	FUNCTION 2 btfloat8sortsupport(internal);

ALTER OPERATOR FAMILY float_ops USING abtree ADD
	-- float4 vs float8
	OPERATOR 1 < (float4, float8),
	OPERATOR 2 <= (float4, float8),
	OPERATOR 3 = (float4, float8),
	OPERATOR 4 >= (float4, float8),
	OPERATOR 5 > (float4, float8),
	FUNCTION 1 (float4, float8) btfloat48cmp(float4, float8),
	-- float8 vs float4
	OPERATOR 1 < (float8, float4),
	OPERATOR 2 <= (float8, float4),
	OPERATOR 3 = (float8, float4),
	OPERATOR 4 >= (float8, float4),
	OPERATOR 5 > (float8, float4),
	FUNCTION 1 (float8, float4) btfloat84cmp(float8, float4);

-- numeric_ops

CREATE OPERATOR CLASS numeric_ops
	DEFAULT FOR TYPE numeric USING abtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 numeric_cmp(numeric, numeric),
	FUNCTION 2 numeric_sortsupport(internal);

-- text_ops: text, and varchar through binary coercion.  The comparison
-- functions use the index column's collation.

CREATE OPERATOR CLASS text_ops
	DEFAULT FOR TYPE text USING abtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 bttextcmp(text, text),
	FUNCTION 2 bttextsortsupport(internal);

-- bpchar_ops: char(n), compared without its trailing spaces

CREATE OPERATOR CLASS bpchar_ops
	DEFAULT FOR TYPE bpchar USING abtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 bpcharcmp(bpchar, bpchar),
	FUNCTION 2 bpchar_sortsupport(internal);

-- datetime_ops: date, timestamp, timestamptz and every cross-type pair

CREATE OPERATOR FAMILY datetime_ops USING abtree;

CREATE OPERATOR CLASS date_ops
	DEFAULT FOR TYPE date USING abtree FAMILY datetime_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 date_cmp(date, date),
	FUNCTION 2 date_sortsupport(internal);

CREATE OPERATOR CLASS timestamp_ops
	DEFAULT FOR TYPE timestamp USING abtree FAMILY datetime_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 timestamp_cmp(timestamp, timestamp),
	FUNCTION 2 timestamp_sortsupport(internal);

CREATE OPERATOR CLASS timestamptz_ops
	DEFAULT FOR TYPE timestamptz USING abtree FAMILY datetime_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 timestamptz_cmp(timestamptz, timestamptz),
	FUNCTION 2 timestamp_sortsupport(internal);

ALTER OPERATOR FAMILY datetime_ops USING abtree ADD
	-- date vs timestamp
	OPERATOR 1 < (date, timestamp),
	OPERATOR 2 <= (date, timestamp),
	OPERATOR 3 = (date, timestamp),
	OPERATOR 4 >= (date, timestamp),
	OPERATOR 5 > (date, timestamp),
	FUNCTION 1 (date, timestamp) date_cmp_timestamp(date, timestamp),
	-- date vs timestamptz
	OPERATOR 1 < (date, timestamptz),
	OPERATOR 2 <= (date, timestamptz),
	OPERATOR 3 = (date, timestamptz),
	OPERATOR 4 >= (date, timestamptz),
	OPERATOR 5 > (date, timestamptz),
	FUNCTION 1 (date, timestamptz) date_cmp_timestamptz(date, timestamptz),
	-- timestamp vs date
	OPERATOR 1 < (timestamp, date),
	OPERATOR 2 <= (timestamp, date),
	OPERATOR 3 = (timestamp, date),
	OPERATOR 4 >= (timestamp, date),
	OPERATOR 5 > (timestamp, date),
	FUNCTION 1 (timestamp, date) timestamp_cmp_date(timestamp, date),
	-- timestamp vs timestamptz
	OPERATOR 1 < (timestamp, timestamptz),
	OPERATOR 2 <= (timestamp, timestamptz),
	OPERATOR 3 = (timestamp, timestamptz),
	OPERATOR 4 >= (timestamp, timestamptz),
	OPERATOR 5 > (timestamp, timestamptz),
	FUNCTION 1 (timestamp, timestamptz) timestamp_cmp_timestamptz(timestamp, timestamptz),
	-- timestamptz vs date
	OPERATOR 1 < (timestamptz, date),
	OPERATOR 2 <= (timestamptz, date),
	OPERATOR 3 = (timestamptz, date),
	OPERATOR 4 >= (timestamptz, date),
	OPERATOR 5 > (timestamptz, date),
	FUNCTION 1 (timestamptz, date) timestamptz_cmp_date(timestamptz, date),
	-- timestamptz vs timestamp
	OPERATOR 1 < (timestamptz, timestamp),
	OPERATOR 2 <= (timestamptz, timestamp),
	OPERATOR 3 = (timestamptz, timestamp),
	OPERATOR 4 >= (timestamptz, timestamp),
	OPERATOR 5 > (timestamptz, timestamp),
	FUNCTION 1 (timestamptz, timestamp) timestamptz_cmp_timestamp(timestamptz, timestamp);

-- time_ops (time without time zone; btree has no sortsupport for it either)

CREATE OPERATOR CLASS time_ops
	DEFAULT FOR TYPE time USING abtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 time_cmp(time, time);

-- interval_ops (no sortsupport in btree either)

CREATE OPERATOR CLASS interval_ops
	DEFAULT FOR TYPE interval USING abtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 interval_cmp(interval, interval);

-- uuid_ops

CREATE OPERATOR CLASS uuid_ops
	DEFAULT FOR TYPE uuid USING abtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 uuid_cmp(uuid, uuid),
	FUNCTION 2 uuid_sortsupport(internal);

-- bytea_ops

CREATE OPERATOR CLASS bytea_ops
	DEFAULT FOR TYPE bytea USING abtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 byteacmp(bytea, bytea),
	FUNCTION 2 bytea_sortsupport(internal);

-- oid_ops

CREATE OPERATOR CLASS oid_ops
	DEFAULT FOR TYPE oid USING abtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btoidcmp(oid, oid),
	FUNCTION 2 btoidsortsupport(internal);

-- bool_ops (no sortsupport in btree either)

CREATE OPERATOR CLASS bool_ops
	DEFAULT FOR TYPE bool USING abtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btboolcmp(bool, bool);
-- ---------------------------------------------------------------------------
-- chll: counting HyperLogLog sketches (paper 002, section 6.1; src/hll/README)
-- ---------------------------------------------------------------------------

CREATE TYPE chll;

CREATE FUNCTION chll_in(cstring) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_out(chll) RETURNS cstring
AS 'MODULE_PATHNAME', 'chll_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_recv(internal) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_recv'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_send(chll) RETURNS bytea
AS 'MODULE_PATHNAME', 'chll_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE chll (
	INPUT = chll_in,
	OUTPUT = chll_out,
	RECEIVE = chll_recv,
	SEND = chll_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = extended
);

COMMENT ON TYPE chll IS
'counting HyperLogLog sketch: estimates the number of distinct values of a multiset that supports removal';

-- The functions that change or combine sketches are not STRICT: a NULL
-- sketch or bucket count is an ERROR rather than a silent NULL.  A NULL
-- value is no value: adding or removing it leaves the sketch unchanged.
CREATE FUNCTION chll_create(buckets integer DEFAULT 512) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_create'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_add(sketch chll, value anyelement) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_add'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_remove(sketch chll, value anyelement) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_remove'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_add_all(sketch chll, vals anyarray) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_add_all'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_remove_all(sketch chll, vals anyarray) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_remove_all'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_add_hash(sketch chll, hash bigint) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_add_hash_sql'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_remove_hash(sketch chll, hash bigint) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_remove_hash_sql'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_union(a chll, b chll) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_union'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Reading a NULL sketch gives NULL, so that chll_estimate(chll_agg(x)) over
-- no rows is NULL and not an error.
CREATE FUNCTION chll_hash(value anyelement) RETURNS bigint
AS 'MODULE_PATHNAME', 'chll_hash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_estimate(sketch chll) RETURNS float8
AS 'MODULE_PATHNAME', 'chll_estimate'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_info(sketch chll,
	OUT buckets integer,
	OUT items bigint,
	OUT estimate float8,
	OUT exact boolean,
	OUT overflow_used integer,
	OUT overflow_capacity integer,
	OUT bytes integer)
RETURNS record
AS 'MODULE_PATHNAME', 'chll_info'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_counters(sketch chll,
	OUT bucket integer,
	OUT zeros integer,
	OUT raw integer,
	OUT count bigint,
	OUT exact boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'chll_counters'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;

-- Aggregates: the state is the sketch itself, changed in place.
CREATE FUNCTION chll_agg_trans(chll, anyelement) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_agg_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_agg_trans(chll, anyelement, integer) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_agg_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_agg_combine(chll, chll) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_agg_combine'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION chll_agg_final(chll) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_agg_final'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- SSPACE: the default sketch is 22.5 kB, which the planner should know
-- before it chooses to hash many groups.
CREATE AGGREGATE chll_agg(anyelement) (
	SFUNC = chll_agg_trans,
	STYPE = chll,
	SSPACE = 22556,
	COMBINEFUNC = chll_agg_combine,
	FINALFUNC = chll_agg_final,
	PARALLEL = SAFE
);

CREATE AGGREGATE chll_agg(anyelement, integer) (
	SFUNC = chll_agg_trans,
	STYPE = chll,
	SSPACE = 22556,
	COMBINEFUNC = chll_agg_combine,
	FINALFUNC = chll_agg_final,
	PARALLEL = SAFE
);

CREATE AGGREGATE chll_union_agg(chll) (
	SFUNC = chll_agg_combine,
	STYPE = chll,
	SSPACE = 22556,
	COMBINEFUNC = chll_agg_combine,
	FINALFUNC = chll_agg_final,
	PARALLEL = SAFE
);

COMMENT ON FUNCTION chll_create(integer) IS
'an empty chll sketch with the given number of buckets (a power of two, 16 to 32768)';
COMMENT ON FUNCTION chll_add(chll, anyelement) IS
'the sketch with one more occurrence of the value (NULL: unchanged)';
COMMENT ON FUNCTION chll_remove(chll, anyelement) IS
'the sketch with one occurrence of the value removed; ERROR if it certainly was not there';
COMMENT ON FUNCTION chll_add_all(chll, anyarray) IS
'chll_add of every non-NULL element of the array';
COMMENT ON FUNCTION chll_remove_all(chll, anyarray) IS
'chll_remove of every non-NULL element of the array';
COMMENT ON FUNCTION chll_add_hash(chll, bigint) IS
'chll_add of a value whose 64-bit hash is given';
COMMENT ON FUNCTION chll_remove_hash(chll, bigint) IS
'chll_remove of a value whose 64-bit hash is given';
COMMENT ON FUNCTION chll_union(chll, chll) IS
'the sketch of both multisets together (sketches of equal bucket count)';
COMMENT ON FUNCTION chll_hash(anyelement) IS
'the 64-bit hash under which chll_add sketches the value';
COMMENT ON FUNCTION chll_estimate(chll) IS
'estimated number of distinct values (Ertl''s improved HyperLogLog estimator)';
COMMENT ON FUNCTION chll_info(chll) IS
'bucket count, values held, estimate, whether every count is exact, overflow use and size of a sketch';
COMMENT ON FUNCTION chll_counters(chll) IS
'the nonzero counters of a sketch: bucket, leading zeros, counter byte, count and whether it is exact';
COMMENT ON AGGREGATE chll_agg(anyelement) IS
'chll sketch (512 buckets) of the non-NULL values';
COMMENT ON AGGREGATE chll_agg(anyelement, integer) IS
'chll sketch with the given bucket count of the non-NULL values';
COMMENT ON AGGREGATE chll_union_agg(chll) IS
'union of the non-NULL sketches';
-- Distinct-value sketches kept by abtree indexes (src/abtree/README, "Sketches")

CREATE FUNCTION abtree_sketch(index regclass, key_column integer DEFAULT 1)
RETURNS chll
AS 'MODULE_PATHNAME', 'abtree_sketch'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION abtree_sketch(regclass, integer) IS
'The counting HyperLogLog sketch an abtree index keeps of a key column (numbered from 1), as inserts and VACUUM leave it; NULL if the index keeps none (reloption sketch = off, a column past the fourth, or a type without an extended hash function)';

-- One row per sketched key column of every abtree index the user may read:
-- the sketch's estimate beside ANALYZE's (pg_stats.n_distinct, made a count).
CREATE VIEW abtree_column_ndistinct AS
SELECT n.nspname AS schemaname,
       t.relname AS tablename,
       i.relname AS indexname,
       a.attname,
       k.key_column,
       round(s.estimate) AS sketch_ndistinct,
       s.items AS sketch_items,
       s.exact AS sketch_exact,
       CASE WHEN ps.n_distinct < 0 THEN round(-ps.n_distinct * t.reltuples)
            ELSE round(ps.n_distinct) END AS analyze_ndistinct,
       current_setting('abtree.sketch_ndistinct')::boolean
           AND pg_index.indisvalid AND pg_index.indpred IS NULL
           AND coll.ok AS used_by_planner
FROM pg_index
JOIN pg_class i ON i.oid = pg_index.indexrelid
JOIN pg_am am ON am.oid = i.relam AND am.amname = 'abtree'
JOIN pg_class t ON t.oid = pg_index.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
CROSS JOIN LATERAL generate_series(1, least(pg_index.indnkeyatts, 4)) AS k(key_column)
JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = pg_index.indkey[k.key_column - 1]
CROSS JOIN LATERAL (SELECT pg_index.indcollation[k.key_column - 1] = a.attcollation AS ok) coll
CROSS JOIN LATERAL chll_info(CASE WHEN has_table_privilege(t.oid, 'SELECT')
                              THEN abtree_sketch(i.oid, k.key_column) END) s
LEFT JOIN pg_stats ps ON ps.schemaname = n.nspname AND ps.tablename = t.relname
                     AND ps.attname = a.attname AND NOT ps.inherited
WHERE s.buckets IS NOT NULL;

GRANT SELECT ON abtree_column_ndistinct TO PUBLIC;

COMMENT ON VIEW abtree_column_ndistinct IS
'Distinct values of each column that an abtree index sketches: the sketch''s estimate, ANALYZE''s, and whether the planner uses the sketch (abtree.sketch_ndistinct)';
-- ---------------------------------------------------------------------------
-- Multi-column distinct counts: sampling estimators corrected by per-column
-- sketches (paper 002, sections 6.2 and 6.3; src/hll/README)
-- ---------------------------------------------------------------------------

-- The estimate of the number of distinct tuples from a sample's frequency
-- vector: freq[i] is the number of distinct tuples seen exactly i times in
-- a sample drawn with replacement from table_rows rows.  column_ndistinct
-- gives each column's distinct count in the table (needed by 'scgee' and
-- 'scbc'), column_repeated each column's values seen at least twice in the
-- sample (optional; it tightens the lower bound).  Not STRICT: a NULL
-- argument that needs a value is an ERROR.
CREATE FUNCTION abtree_ndistinct_from_freq(
	freq bigint[],
	table_rows float8,
	column_ndistinct float8[] DEFAULT NULL,
	method text DEFAULT 'scbc',
	column_repeated float8[] DEFAULT NULL)
RETURNS float8
AS 'MODULE_PATHNAME', 'abtree_ndistinct_from_freq'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION abtree_ndistinct_from_freq(bigint[], float8, float8[], text, float8[]) IS
'estimated number of distinct tuples from a with-replacement sample''s frequency vector (gee, bc, scgee, scbc)';

-- The estimate for a column combination of a table from a TABLESAMPLE swr
-- sample, corrected by the columns' sketches.  column_source says, per
-- column, where its distinct count came from ('sketch') or that there was
-- none ('none'), in which case method is the uncorrected one used instead.
CREATE FUNCTION abtree_ndistinct(
	tbl regclass,
	columns text[],
	sample_rows integer DEFAULT 30000,
	method text DEFAULT 'scbc',
	seed float8 DEFAULT NULL,
	OUT estimate float8,
	OUT method text,
	OUT sample_rows integer,
	OUT sample_distinct bigint,
	OUT sample_singletons bigint,
	OUT table_rows float8,
	OUT column_ndistinct float8[],
	OUT column_source text[])
RETURNS record
AS 'MODULE_PATHNAME', 'abtree_ndistinct'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION abtree_ndistinct(regclass, text[], integer, text, float8) IS
'estimated number of distinct combinations of the columns, from a TABLESAMPLE swr sample corrected by per-column sketches';

-- The frequency vector of all rows of a table over the columns, by
-- Algorithm 6.3 ('partition') or by sorting whole rows ('reference').
CREATE FUNCTION abtree_ndistinct_freq(
	tbl regclass,
	columns text[],
	algorithm text DEFAULT 'partition')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'abtree_ndistinct_freq'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION abtree_ndistinct_freq(regclass, text[], text) IS
'frequency vector of the rows of a table over some columns: element i is the number of combinations that occur exactly i times';

-- Compute the estimate for every combination of two or more columns of a
-- CREATE STATISTICS (ndistinct) object from one sample and write them
-- into the object's data, where the planner's GROUP BY estimates read
-- them.  keep_across_analyze sets the object's statistics target to 0,
-- which makes ANALYZE leave the data alone.  Returns the number of
-- combinations written.  Only the object's owner may call it.
CREATE FUNCTION abtree_ndistinct_store(
	stat text,
	sample_rows integer DEFAULT 30000,
	seed float8 DEFAULT NULL,
	keep_across_analyze boolean DEFAULT true)
RETURNS integer
AS 'MODULE_PATHNAME', 'abtree_ndistinct_store'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION abtree_ndistinct_store(
	stat oid,
	sample_rows integer DEFAULT 30000,
	seed float8 DEFAULT NULL,
	keep_across_analyze boolean DEFAULT true)
RETURNS integer
AS 'MODULE_PATHNAME', 'abtree_ndistinct_store'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION abtree_ndistinct_store(text, integer, float8, boolean) IS
'store sketch-corrected distinct counts of every column combination in a CREATE STATISTICS (ndistinct) object';
COMMENT ON FUNCTION abtree_ndistinct_store(oid, integer, float8, boolean) IS
'store sketch-corrected distinct counts of every column combination in a CREATE STATISTICS (ndistinct) object';
/* abtree--0.1.sql, part 40: TABLESAMPLE swr (src/swr/README). */

-- SELECT ... FROM t TABLESAMPLE swr(n) [REPEATABLE (seed)]: exactly n rows,
-- drawn independently with replacement, each with probability proportional
-- to its weight in the table's abtree index.  n is float8, like the
-- standard methods' argument, so that a fractional n can be refused rather
-- than silently rounded.
--
-- PARALLEL UNSAFE (the default, spelled out): a sample scan inside a
-- parallel plan would run in every worker, each drawing its own n rows.
CREATE FUNCTION swr(internal)
RETURNS tsm_handler
AS 'MODULE_PATHNAME', 'swr_handler'
LANGUAGE C STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION swr(internal) IS
'TABLESAMPLE swr(n): n independent weighted draws with replacement through the table''s abtree index';

-- Counters of swr per index since the server started (src/swr/swr_stats.c):
-- scans, draws (descents), rows returned, and the draws rejected because the
-- row was invisible to the scan's snapshot, because the index rejected the
-- descent (its weights overcounted while inserts or VACUUM ran), or because
-- the row failed WHERE (abtree.swr_where = redraw draws those again).
CREATE FUNCTION abtree_swr_stats(
	OUT indexrelid oid,
	OUT scans bigint,
	OUT draws bigint,
	OUT rows_returned bigint,
	OUT rejected_invisible bigint,
	OUT rejected_by_index bigint,
	OUT rejected_by_filter bigint,
	OUT last_scan timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'abtree_swr_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE VIEW abtree_swr_stats AS
SELECT s.indexrelid::regclass AS index,
	   i.indrelid::regclass AS "table",
	   s.scans, s.draws, s.rows_returned,
	   s.rejected_invisible, s.rejected_by_index, s.rejected_by_filter,
	   CASE WHEN s.draws > 0 THEN round(s.rows_returned::numeric / s.draws, 4) END
		 AS acceptance,
	   s.last_scan
  FROM abtree_swr_stats() s
  LEFT JOIN pg_index i ON i.indexrelid = s.indexrelid
 WHERE i.indexrelid IS NOT NULL OR s.indexrelid = 0;
GRANT SELECT ON abtree_swr_stats TO PUBLIC;
COMMENT ON VIEW abtree_swr_stats IS
'TABLESAMPLE swr per index since the server started: scans, draws, rows and rejections by reason (index 0: indexes beyond the first 1024)';

CREATE FUNCTION abtree_swr_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'abtree_swr_stats_reset'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION abtree_swr_stats_reset() FROM PUBLIC;
COMMENT ON FUNCTION abtree_swr_stats_reset() IS
'forgets the abtree_swr_stats counters of the current database';
/* abtree--0.1.sql, part 45: approximate aggregates over a TABLESAMPLE swr sample. */

-- What swr_avg, swr_sum and swr_count return: the estimate, its standard
-- error, a two-sided 95% confidence interval and the number of sample rows
-- it rests on (all of them; for swr_avg those with x not NULL).  The
-- formulas are at the top of src/swr/swr_estimate.c.
CREATE TYPE swr_estimate AS (
	estimate float8,
	std_error float8,
	ci_low float8,
	ci_high float8,
	sample_rows bigint
);

COMMENT ON TYPE swr_estimate IS
'an estimate from a TABLESAMPLE swr sample with its standard error and 95% confidence interval';

-- Support functions.  The states are float8 arrays, so partial aggregates
-- combine without serialisation functions.  The transition functions are
-- not STRICT: a row with a NULL x still counts as a sample row, and a NULL
-- weight or total is an ERROR rather than a row silently skipped.
CREATE FUNCTION swr_avg_trans(float8[], float8) RETURNS float8[]
AS 'MODULE_PATHNAME', 'swr_avg_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION swr_avg_trans(float8[], float8, float8) RETURNS float8[]
AS 'MODULE_PATHNAME', 'swr_avg_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION swr_avg_combine(float8[], float8[]) RETURNS float8[]
AS 'MODULE_PATHNAME', 'swr_avg_combine'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION swr_avg_final(float8[]) RETURNS swr_estimate
AS 'MODULE_PATHNAME', 'swr_avg_final'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION swr_sum_trans(float8[], float8, float8) RETURNS float8[]
AS 'MODULE_PATHNAME', 'swr_sum_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION swr_sum_trans(float8[], float8, float8, float8) RETURNS float8[]
AS 'MODULE_PATHNAME', 'swr_sum_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION swr_count_trans(float8[], boolean, float8) RETURNS float8[]
AS 'MODULE_PATHNAME', 'swr_count_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION swr_count_trans(float8[], boolean, float8, float8) RETURNS float8[]
AS 'MODULE_PATHNAME', 'swr_count_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- swr_sum and swr_count share their state, and so the combine function
CREATE FUNCTION swr_sum_combine(float8[], float8[]) RETURNS float8[]
AS 'MODULE_PATHNAME', 'swr_sum_combine'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION swr_sum_final(float8[]) RETURNS swr_estimate
AS 'MODULE_PATHNAME', 'swr_sum_final'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- unweighted: the Wilson score interval; weighted: Wald, cut at 0
CREATE FUNCTION swr_count_final(float8[]) RETURNS swr_estimate
AS 'MODULE_PATHNAME', 'swr_count_final'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION swr_count_weighted_final(float8[]) RETURNS swr_estimate
AS 'MODULE_PATHNAME', 'swr_count_weighted_final'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- swr_avg(x [, weight]): the AVG of x over the population rows where x is
-- not NULL.  No total: it cancels out of the ratio.
CREATE AGGREGATE swr_avg(x float8) (
	SFUNC = swr_avg_trans,
	STYPE = float8[],
	INITCOND = '{0,0,0,0,0,0,0,0}',
	COMBINEFUNC = swr_avg_combine,
	FINALFUNC = swr_avg_final,
	PARALLEL = SAFE
);

CREATE AGGREGATE swr_avg(x float8, weight float8) (
	SFUNC = swr_avg_trans,
	STYPE = float8[],
	INITCOND = '{0,0,0,0,0,0,0,0}',
	COMBINEFUNC = swr_avg_combine,
	FINALFUNC = swr_avg_final,
	PARALLEL = SAFE
);

-- swr_sum(x, [weight,] total): the SUM of x over the population, NULL
-- counting as 0; total is the population's total weight W.
CREATE AGGREGATE swr_sum(x float8, total float8) (
	SFUNC = swr_sum_trans,
	STYPE = float8[],
	INITCOND = '{0,0,0,0,0,0}',
	COMBINEFUNC = swr_sum_combine,
	FINALFUNC = swr_sum_final,
	PARALLEL = SAFE
);

CREATE AGGREGATE swr_sum(x float8, weight float8, total float8) (
	SFUNC = swr_sum_trans,
	STYPE = float8[],
	INITCOND = '{0,0,0,0,0,0}',
	COMBINEFUNC = swr_sum_combine,
	FINALFUNC = swr_sum_final,
	PARALLEL = SAFE
);

-- swr_count(pred, [weight,] total): the number of population rows where
-- pred is true (NULL counting as false).
CREATE AGGREGATE swr_count(pred boolean, total float8) (
	SFUNC = swr_count_trans,
	STYPE = float8[],
	INITCOND = '{0,0,0,0,0,0}',
	COMBINEFUNC = swr_sum_combine,
	FINALFUNC = swr_count_final,
	PARALLEL = SAFE
);

CREATE AGGREGATE swr_count(pred boolean, weight float8, total float8) (
	SFUNC = swr_count_trans,
	STYPE = float8[],
	INITCOND = '{0,0,0,0,0,0}',
	COMBINEFUNC = swr_sum_combine,
	FINALFUNC = swr_count_weighted_final,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE swr_avg(float8) IS
'estimated AVG(x) from a uniform TABLESAMPLE swr sample, with standard error and 95% interval';
COMMENT ON AGGREGATE swr_avg(float8, float8) IS
'estimated AVG(x) from a weighted TABLESAMPLE swr sample (Hansen-Hurwitz ratio), with standard error and 95% interval';
COMMENT ON AGGREGATE swr_sum(float8, float8) IS
'estimated SUM(x) of a population of total weight total from a uniform TABLESAMPLE swr sample, with standard error and 95% interval';
COMMENT ON AGGREGATE swr_sum(float8, float8, float8) IS
'estimated SUM(x) of a population of total weight total from a weighted TABLESAMPLE swr sample (Hansen-Hurwitz), with standard error and 95% interval';
COMMENT ON AGGREGATE swr_count(boolean, float8) IS
'estimated number of rows where pred holds from a uniform TABLESAMPLE swr sample, with standard error and 95% Wilson interval';
COMMENT ON AGGREGATE swr_count(boolean, float8, float8) IS
'estimated number of rows where pred holds from a weighted TABLESAMPLE swr sample (Hansen-Hurwitz), with standard error and 95% interval';
/* abtree--0.1.sql, part 50: the multi-version weight store (src/mvstore/README). */

CREATE FUNCTION abtree_mvstore(
	OUT enabled boolean,
	OUT size_bytes bigint,
	OUT entries bigint,
	OUT entries_max bigint,
	OUT versions bigint,
	OUT versions_max bigint,
	OUT bytes_used bigint,
	OUT versions_recorded bigint,
	OUT versions_collected bigint,
	OUT chains_rebuilt bigint,
	OUT gc_runs bigint,
	OUT fallbacks bigint,
	OUT is_full boolean,
	OUT gc_horizon xid)
RETURNS record
AS 'MODULE_PATHNAME', 'abtree_mvstore'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION abtree_mvstore() IS
'sizes and counters of the abtree multi-version weight store (NULLs when abtree.mvstore_size = 0)';

-- One row: what the weight store holds and has done since the server started.
CREATE VIEW abtree_mvstore AS SELECT * FROM abtree_mvstore();

-- Server-wide counters, like pg_stat_bgwriter: anyone may read them.
GRANT SELECT ON abtree_mvstore TO PUBLIC;

COMMENT ON VIEW abtree_mvstore IS
'the abtree multi-version weight store: entries, versions, bytes, collections, fallbacks';

CREATE FUNCTION abtree_mvstore_collect()
RETURNS bigint
AS 'MODULE_PATHNAME', 'abtree_mvstore_collect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION abtree_mvstore_collect() IS
'drops now the weight store versions no snapshot can need; returns how many (the collector does this every abtree.mvstore_gc_interval)';

-- It locks every partition of the store in turn: for administrators.
REVOKE ALL ON FUNCTION abtree_mvstore_collect() FROM PUBLIC;

-- Not STRICT: a NULL index gets an ERROR.
CREATE FUNCTION abtree_mvstore_check(
	index regclass,
	OUT downlinks bigint,
	OUT versioned bigint,
	OUT violations bigint,
	OUT visible_weight numeric)
RETURNS record
AS 'MODULE_PATHNAME', 'abtree_mvstore_check'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION abtree_mvstore_check(regclass) IS
'checks that every downlink of an abtree index, as the current snapshot sees it, weighs at least its child''s items (violations must be 0); visible_weight is the root''s total for the snapshot';

-- ---------------------------------------------------------------------------
-- The pbtree index access method: a partitioned B-tree (src/pbtree/README)
-- ---------------------------------------------------------------------------
--
-- Its operator classes are abtree's, declared again for pbtree: the build
-- appends src/sql/20_abtree_opclasses.sql with "USING abtree" replaced by
-- "USING pbtree" after this file (Makefile).

CREATE FUNCTION pbtree_am_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'pbtree_am_handler'
LANGUAGE C;

CREATE ACCESS METHOD pbtree TYPE INDEX HANDLER pbtree_am_handler;
COMMENT ON ACCESS METHOD pbtree IS
'partitioned B-tree: inserts go to one small mutable partition, sealed partitions are written once, sequentially, with Bloom filters, and merged';

CREATE FUNCTION pbtree_stats(index regclass,
	OUT partition bigint,
	OUT state text,
	OUT entries bigint,
	OUT leaf_pages bigint,
	OUT filters integer,
	OUT filter_pages bigint,
	OUT key_filter_fpr float8,
	OUT leading_filter_fpr float8,
	OUT created timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pbtree_stats'
LANGUAGE C VOLATILE PARALLEL SAFE STRICT;
COMMENT ON FUNCTION pbtree_stats(regclass) IS
'one row per partition of a pbtree index: state, entries, leaf pages, filters and their estimated false-positive rates';

-- Checks the directory, every partition's tree, the filters (no key a
-- sealed partition holds may be ruled out), that no heap tuple has two
-- entries and, with heapallindexed, that every heap tuple has one.  Returns
-- the number of entries.  Takes a ShareLock on the index (waits for and
-- blocks inserts).
CREATE FUNCTION pbtree_verify(index regclass, heapallindexed boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'pbtree_verify'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION pbtree_verify(regclass, boolean) IS
'checks a pbtree index: partitions, trees, filters, and optionally that the heap is all indexed; ERROR on the first problem';

CREATE FUNCTION pbtree_seal(index regclass)
RETURNS boolean
AS 'MODULE_PATHNAME', 'pbtree_seal'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION pbtree_seal(regclass) IS
'seals the mutable partition of a pbtree index now (false if it is empty)';

CREATE FUNCTION pbtree_merge(index regclass, max_partitions integer DEFAULT 0)
RETURNS integer
AS 'MODULE_PATHNAME', 'pbtree_merge'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION pbtree_merge(regclass, integer) IS
'merges the sealed partitions of a pbtree index (the oldest max_partitions, 0 for all) into one; returns how many were merged';

-- ---------------------------------------------------------------------------
-- The same operator classes for pbtree (generated from 20_abtree_opclasses.sql)
-- ---------------------------------------------------------------------------
--
-- abtree is an ordered index with btree's strategy numbers (1 <, 2 <=, 3 =,
-- 4 >=, 5 >) and support functions (1 comparison, 2 sortsupport), and no
-- others.  Each family mirrors the btree family of the same name, with its
-- cross-type operators and comparison functions, but without btree's
-- in_range (3) and equalimage (4) functions.  Every class is the default for
-- its type; varchar columns use text_ops through binary coercion, as with
-- btree.  Nothing is schema-qualified: this runs inside CREATE EXTENSION,
-- after the access method is created, and the objects go into the
-- extension's schema.

-- integer_ops: int2, int4, int8 and every cross-type pair of them

CREATE OPERATOR FAMILY integer_ops USING pbtree;

CREATE OPERATOR CLASS int2_ops
	DEFAULT FOR TYPE int2 USING pbtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint2cmp(int2, int2),
	FUNCTION 2 btint2sortsupport(internal);

CREATE OPERATOR CLASS int4_ops
	DEFAULT FOR TYPE int4 USING pbtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint4cmp(int4, int4),
	FUNCTION 2 btint4sortsupport(internal);

CREATE OPERATOR CLASS int8_ops
	DEFAULT FOR TYPE int8 USING pbtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint8cmp(int8, int8),
	FUNCTION 2 btint8sortsupport(internal);

ALTER OPERATOR FAMILY integer_ops USING pbtree ADD
	-- int2 vs int4
	OPERATOR 1 < (int2, int4),
	OPERATOR 2 <= (int2, int4),
	OPERATOR 3 = (int2, int4),
	OPERATOR 4 >= (int2, int4),
	OPERATOR 5 > (int2, int4),
	FUNCTION 1 (int2, int4) btint24cmp(int2, int4),
	-- int2 vs int8
	OPERATOR 1 < (int2, int8),
	OPERATOR 2 <= (int2, int8),
	OPERATOR 3 = (int2, int8),
	OPERATOR 4 >= (int2, int8),
	OPERATOR 5 > (int2, int8),
	FUNCTION 1 (int2, int8) btint28cmp(int2, int8),
	-- int4 vs int2
	OPERATOR 1 < (int4, int2),
	OPERATOR 2 <= (int4, int2),
	OPERATOR 3 = (int4, int2),
	OPERATOR 4 >= (int4, int2),
	OPERATOR 5 > (int4, int2),
	FUNCTION 1 (int4, int2) btint42cmp(int4, int2),
	-- int4 vs int8
	OPERATOR 1 < (int4, int8),
	OPERATOR 2 <= (int4, int8),
	OPERATOR 3 = (int4, int8),
	OPERATOR 4 >= (int4, int8),
	OPERATOR 5 > (int4, int8),
	FUNCTION 1 (int4, int8) btint48cmp(int4, int8),
	-- int8 vs int2
	OPERATOR 1 < (int8, int2),
	OPERATOR 2 <= (int8, int2),
	OPERATOR 3 = (int8, int2),
	OPERATOR 4 >= (int8, int2),
	OPERATOR 5 > (int8, int2),
	FUNCTION 1 (int8, int2) btint82cmp(int8, int2),
	-- int8 vs int4
	OPERATOR 1 < (int8, int4),
	OPERATOR 2 <= (int8, int4),
	OPERATOR 3 = (int8, int4),
	OPERATOR 4 >= (int8, int4),
	OPERATOR 5 > (int8, int4),
	FUNCTION 1 (int8, int4) btint84cmp(int8, int4);

-- float_ops: float4, float8 and both cross-type pairs

CREATE OPERATOR FAMILY float_ops USING pbtree;

CREATE OPERATOR CLASS float4_ops
	DEFAULT FOR TYPE float4 USING pbtree FAMILY float_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btfloat4cmp(float4, float4),
	FUNCTION 2 btfloat4sortsupport(internal);

CREATE OPERATOR CLASS float8_ops
	DEFAULT FOR TYPE float8 USING pbtree FAMILY float_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btfloat8cmp(float8, float8),
	FUNCTION 2 btfloat8sortsupport(internal);

ALTER OPERATOR FAMILY float_ops USING pbtree ADD
	-- float4 vs float8
	OPERATOR 1 < (float4, float8),
	OPERATOR 2 <= (float4, float8),
	OPERATOR 3 = (float4, float8),
	OPERATOR 4 >= (float4, float8),
	OPERATOR 5 > (float4, float8),
	FUNCTION 1 (float4, float8) btfloat48cmp(float4, float8),
	-- float8 vs float4
	OPERATOR 1 < (float8, float4),
	OPERATOR 2 <= (float8, float4),
	OPERATOR 3 = (float8, float4),
	OPERATOR 4 >= (float8, float4),
	OPERATOR 5 > (float8, float4),
	FUNCTION 1 (float8, float4) btfloat84cmp(float8, float4);

-- numeric_ops

CREATE OPERATOR CLASS numeric_ops
	DEFAULT FOR TYPE numeric USING pbtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 numeric_cmp(numeric, numeric),
	FUNCTION 2 numeric_sortsupport(internal);

-- text_ops: text, and varchar through binary coercion.  The comparison
-- functions use the index column's collation.

CREATE OPERATOR CLASS text_ops
	DEFAULT FOR TYPE text USING pbtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 bttextcmp(text, text),
	FUNCTION 2 bttextsortsupport(internal);

-- bpchar_ops: char(n), compared without its trailing spaces

CREATE OPERATOR CLASS bpchar_ops
	DEFAULT FOR TYPE bpchar USING pbtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 bpcharcmp(bpchar, bpchar),
	FUNCTION 2 bpchar_sortsupport(internal);

-- datetime_ops: date, timestamp, timestamptz and every cross-type pair

CREATE OPERATOR FAMILY datetime_ops USING pbtree;

CREATE OPERATOR CLASS date_ops
	DEFAULT FOR TYPE date USING pbtree FAMILY datetime_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 date_cmp(date, date),
	FUNCTION 2 date_sortsupport(internal);

CREATE OPERATOR CLASS timestamp_ops
	DEFAULT FOR TYPE timestamp USING pbtree FAMILY datetime_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 timestamp_cmp(timestamp, timestamp),
	FUNCTION 2 timestamp_sortsupport(internal);

CREATE OPERATOR CLASS timestamptz_ops
	DEFAULT FOR TYPE timestamptz USING pbtree FAMILY datetime_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 timestamptz_cmp(timestamptz, timestamptz),
	FUNCTION 2 timestamp_sortsupport(internal);

ALTER OPERATOR FAMILY datetime_ops USING pbtree ADD
	-- date vs timestamp
	OPERATOR 1 < (date, timestamp),
	OPERATOR 2 <= (date, timestamp),
	OPERATOR 3 = (date, timestamp),
	OPERATOR 4 >= (date, timestamp),
	OPERATOR 5 > (date, timestamp),
	FUNCTION 1 (date, timestamp) date_cmp_timestamp(date, timestamp),
	-- date vs timestamptz
	OPERATOR 1 < (date, timestamptz),
	OPERATOR 2 <= (date, timestamptz),
	OPERATOR 3 = (date, timestamptz),
	OPERATOR 4 >= (date, timestamptz),
	OPERATOR 5 > (date, timestamptz),
	FUNCTION 1 (date, timestamptz) date_cmp_timestamptz(date, timestamptz),
	-- timestamp vs date
	OPERATOR 1 < (timestamp, date),
	OPERATOR 2 <= (timestamp, date),
	OPERATOR 3 = (timestamp, date),
	OPERATOR 4 >= (timestamp, date),
	OPERATOR 5 > (timestamp, date),
	FUNCTION 1 (timestamp, date) timestamp_cmp_date(timestamp, date),
	-- timestamp vs timestamptz
	OPERATOR 1 < (timestamp, timestamptz),
	OPERATOR 2 <= (timestamp, timestamptz),
	OPERATOR 3 = (timestamp, timestamptz),
	OPERATOR 4 >= (timestamp, timestamptz),
	OPERATOR 5 > (timestamp, timestamptz),
	FUNCTION 1 (timestamp, timestamptz) timestamp_cmp_timestamptz(timestamp, timestamptz),
	-- timestamptz vs date
	OPERATOR 1 < (timestamptz, date),
	OPERATOR 2 <= (timestamptz, date),
	OPERATOR 3 = (timestamptz, date),
	OPERATOR 4 >= (timestamptz, date),
	OPERATOR 5 > (timestamptz, date),
	FUNCTION 1 (timestamptz, date) timestamptz_cmp_date(timestamptz, date),
	-- timestamptz vs timestamp
	OPERATOR 1 < (timestamptz, timestamp),
	OPERATOR 2 <= (timestamptz, timestamp),
	OPERATOR 3 = (timestamptz, timestamp),
	OPERATOR 4 >= (timestamptz, timestamp),
	OPERATOR 5 > (timestamptz, timestamp),
	FUNCTION 1 (timestamptz, timestamp) timestamptz_cmp_timestamp(timestamptz, timestamp);

-- time_ops (time without time zone; btree has no sortsupport for it either)

CREATE OPERATOR CLASS time_ops
	DEFAULT FOR TYPE time USING pbtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 time_cmp(time, time);

-- interval_ops (no sortsupport in btree either)

CREATE OPERATOR CLASS interval_ops
	DEFAULT FOR TYPE interval USING pbtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 interval_cmp(interval, interval);

-- uuid_ops

CREATE OPERATOR CLASS uuid_ops
	DEFAULT FOR TYPE uuid USING pbtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 uuid_cmp(uuid, uuid),
	FUNCTION 2 uuid_sortsupport(internal);

-- bytea_ops

CREATE OPERATOR CLASS bytea_ops
	DEFAULT FOR TYPE bytea USING pbtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 byteacmp(bytea, bytea),
	FUNCTION 2 bytea_sortsupport(internal);

-- oid_ops

CREATE OPERATOR CLASS oid_ops
	DEFAULT FOR TYPE oid USING pbtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btoidcmp(oid, oid),
	FUNCTION 2 btoidsortsupport(internal);

-- bool_ops (no sortsupport in btree either)

CREATE OPERATOR CLASS bool_ops
	DEFAULT FOR TYPE bool USING pbtree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btboolcmp(bool, bool);
