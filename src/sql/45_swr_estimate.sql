/* The install script, part 45: approximate aggregates over a TABLESAMPLE swr sample. */

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
