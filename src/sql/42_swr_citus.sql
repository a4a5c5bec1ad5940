/* abtree--0.1.sql, part 42: TABLESAMPLE swr on Citus distributed tables (src/swr/README, "Citus"). */

-- On a Citus distributed table, the coordinator replaces "t TABLESAMPLE
-- swr(n)" by swr_citus_sample(NULL::t, 't', n, seed, conditions), which
-- weighs the shards with swr_shard_id() and swr_shard_weight() over a probe,
-- TABLESAMPLE swr_shard('{}', '{}') (one row of NULLs per shard), and sends
-- each its part of the draws as TABLESAMPLE swr_shard(shard ids, attempts).
-- The four are
-- internal to that: they are callable, and check their arguments, but a
-- query says TABLESAMPLE swr(n).
CREATE FUNCTION swr_shard(internal)
RETURNS tsm_handler
AS 'MODULE_PATHNAME', 'swr_shard_handler'
LANGUAGE C STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION swr_shard(internal) IS
'TABLESAMPLE swr_shard(shard ids, attempts): a Citus shard''s part of a distributed TABLESAMPLE swr(n)';

CREATE FUNCTION swr_shard_id(regclass)
RETURNS int8
AS 'MODULE_PATHNAME', 'swr_shard_id'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION swr_shard_id(regclass) IS
'The Citus shard id of a shard (from the _<shardid> suffix Citus gives its name)';

CREATE FUNCTION swr_shard_weight(regclass)
RETURNS float8
AS 'MODULE_PATHNAME', 'swr_shard_weight'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION swr_shard_weight(regclass) IS
'The weight TABLESAMPLE swr draws a table''s rows from, as the current snapshot sees it (a Citus shard''s, for a distributed swr(n))';

CREATE FUNCTION swr_citus_sample(anyelement, regclass, float8, float8, text, VARIADIC "any")
RETURNS SETOF anyelement
AS 'MODULE_PATHNAME', 'swr_citus_sample'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION swr_citus_sample(anyelement, regclass, float8, float8, text, VARIADIC "any") IS
'TABLESAMPLE swr(n) over a Citus distributed table: what the planner puts in its place';
