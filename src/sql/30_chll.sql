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

CREATE FUNCTION chll_estimate_counters(sketch chll) RETURNS float8
AS 'MODULE_PATHNAME', 'chll_estimate_counters'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_info(sketch chll,
	OUT buckets integer,
	OUT items bigint,
	OUT estimate float8,
	OUT exact boolean,
	OUT overflow_used integer,
	OUT overflow_capacity integer,
	OUT bytes integer,
	OUT exact_distinct boolean)
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
'number of distinct values: exact while the sketch lists them (chll_info(s).exact_distinct), else the counters'' maximum-likelihood estimate';
COMMENT ON FUNCTION chll_estimate_counters(chll) IS
'the HyperLogLog counters'' estimate of the number of distinct values, ignoring the exact set';
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

-- Equality (same counts: src/hll/chll_ops.c), a hash operator class for
-- DISTINCT, GROUP BY and set operations, || for the union, a cast to bytea
-- (the sketch's bytes) and chll(bytea) for the way back, which validates
-- them (no cast: chll_io.sql makes corrupt values through one of its own).
CREATE FUNCTION chll_eq(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_eq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_ne(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_ne'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_hash_sketch(chll) RETURNS integer
AS 'MODULE_PATHNAME', 'chll_hash_sketch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll(bytea) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_from_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR = (
	LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES
);

CREATE OPERATOR <> (
	LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE OPERATOR || (
	LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_union
);

-- An order with no meaning but a fixed one, for sorting (count(DISTINCT),
-- merge joins): 0 exactly when chll_eq.
CREATE FUNCTION chll_cmp(chll, chll) RETURNS integer
AS 'MODULE_PATHNAME', 'chll_cmp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION chll_lt(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_lt'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION chll_le(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_le'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION chll_gt(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_gt'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION chll_ge(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_ge'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR < (LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR CLASS chll_btree_ops DEFAULT FOR TYPE chll USING btree AS
	OPERATOR 1 < (chll, chll),
	OPERATOR 2 <= (chll, chll),
	OPERATOR 3 = (chll, chll),
	OPERATOR 4 >= (chll, chll),
	OPERATOR 5 > (chll, chll),
	FUNCTION 1 chll_cmp(chll, chll);

CREATE OPERATOR CLASS chll_hash_ops DEFAULT FOR TYPE chll USING hash AS
	OPERATOR 1 = (chll, chll),
	FUNCTION 1 chll_hash_sketch(chll);

CREATE CAST (chll AS bytea) WITHOUT FUNCTION;

COMMENT ON FUNCTION chll_eq(chll, chll) IS
'whether two sketches count the same (bucket count, flags, totals and every counter)';
COMMENT ON FUNCTION chll_hash_sketch(chll) IS
'hash of what chll_eq compares (hash operator class chll_hash_ops)';
COMMENT ON FUNCTION chll(bytea) IS
'the chll value whose bytes these are (from a cast of chll to bytea), validated';
