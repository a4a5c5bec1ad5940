
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
