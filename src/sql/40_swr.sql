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
