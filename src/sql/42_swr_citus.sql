/* The install script, part 42: TABLESAMPLE swr on Citus distributed tables (src/swr/README, "Citus"). */

-- On a Citus distributed table, the coordinator replaces "t TABLESAMPLE
-- swr(n)" by swr_citus_sample(NULL::t, 't', n, seed, conditions), which
-- runs rounds of TABLESAMPLE swr_shard(rate) on every shard (Poisson(rate
-- x the shard's weight) draws each), after weighing the shards, when it must,
-- with swr_shard_weight() over a probe, TABLESAMPLE swr_shard(0) (one row of
-- NULLs per shard).  The three are
-- internal to that: they are callable, and check their arguments, but a
-- query says TABLESAMPLE swr(n).
CREATE FUNCTION swr_shard(internal)
RETURNS tsm_handler
AS 'MODULE_PATHNAME', 'swr_shard_handler'
LANGUAGE C STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION swr_shard(internal) IS
'TABLESAMPLE swr_shard(rate): a Citus shard''s part of a distributed TABLESAMPLE swr(n)';

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
