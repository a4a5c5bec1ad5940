/*-------------------------------------------------------------------------
 *
 * swr_estimate.c
 *	  Approximate aggregates over a TABLESAMPLE swr sample: swr_avg,
 *	  swr_sum and swr_count return an estimate of the population's AVG,
 *	  SUM or COUNT with its standard error and a 95% confidence interval,
 *	  as the composite type swr_estimate.
 *
 * The sample: rows i = 1..n drawn independently, with replacement, row r
 * with probability p(r) = w(r) / W, where w is the row's weight (1 for the
 * forms without a weight argument) and W the population's total weight
 * (the total argument).  z = 1.959963984540054, the 0.975 quantile of the
 * standard normal distribution.
 *
 * swr_sum(x, [w,] W), the population's SUM(x) with NULL as 0:
 *	  Hansen-Hurwitz.  y_i = x_i / p_i = x_i * W / w_i (0 for NULL x).  The
 *	  y_i are independent and identically distributed with mean SUM(x), so
 *		estimate	= ybar = (1/n) sum y_i							(unbiased)
 *		std_error	= s_y / sqrt(n),  s_y^2 = sum (y_i - ybar)^2 / (n - 1)
 *		interval	= estimate -+ z * std_error						(Wald)
 *
 * swr_count(pred, [w,] W), the number of rows where pred is true:
 *	  swr_sum of x_i = 1 if pred, else 0 (NULL is false): same estimate and
 *	  std_error.  Without weights the estimate is W * k / n (k rows of n
 *	  true) and the interval W times the Wilson score interval of k / n,
 *		( 2k + z^2 -+ z * sqrt(z^2 + 4 k (n - k) / n) ) / ( 2 (n + z^2) ),
 *	  because Wald's interval collapses to [0, 0] when no sampled row
 *	  matches (k = 0: a rare predicate) and covers far less than 95% while
 *	  k or n - k is small; Wilson's stays inside [0, W] and near 95% there.
 *	  With weights no such closed form applies (y_i is not binomial): Wald,
 *	  with the lower end cut at 0 since no count is negative.
 *
 * swr_avg(x, [w]), the AVG of x over the population rows where x is not
 * NULL:
 *	  Conditioned on which sampled rows have x, those m rows are independent
 *	  draws from the rows with x, with probability proportional to w.  The
 *	  ratio of the Hansen-Hurwitz estimates of SUM(x) and COUNT(x) over
 *	  them, with a_i = 1 / w_i (W cancels, so swr_avg takes no total):
 *		estimate	= R = sum a_i x_i / sum a_i
 *		std_error	= sqrt( m / (m - 1) * sum a_i^2 (x_i - R)^2 ) / sum a_i
 *		interval	= estimate -+ z * std_error
 *	  The std_error is the delta-method (linearisation) one, that of the
 *	  mean of d_i = a_i (x_i - R) / abar, abar = sum a_i / m, whose sum is
 *	  0: std_error^2 = sum d_i^2 / (m (m - 1)).
 *	  Without weights (a_i = 1) these are the sample mean and s_x / sqrt(m).
 *
 * All: with fewer than 2 usable rows (n for swr_sum and swr_count, m for
 * swr_avg) std_error and the interval are NULL; with no rows at all the
 * result is NULL, like AVG's.  sample_rows is n, or m for swr_avg.
 *
 * Accumulation.  The states are float8 arrays (so that partial aggregates
 * combine without serialisation functions).  Sums of squared deviations
 * are updated as in PostgreSQL's float8_accum (Youngs and Cramer), with
 * weights: adding x of weight v to a set of total weight S and weighted
 * sum T adds v (x S - T)^2 / (S (S + v)), which is v S / (S + v) times
 * (x - mu)^2 without rounding the mean mu = T / S first; two sets combine
 * by adding S1 S2 / (S1 + S2) (mu1 - mu2)^2.  No difference of two large
 * sums of squares is ever taken, so a million values near 1e9 keep their
 * spread.  For swr_avg, sum a_i^2 (x_i - R)^2 is kept as the squared
 * deviations about the a^2-weighted mean mu2 (weights v = a^2) plus
 * S2 (mu2 - R)^2, added at the end.
 *
 * Weights of any magnitude: rather than a_i = 1 / w_i, which overflows or
 * underflows for tiny or huge weights, we use a_i = 2^e / w_i, where 2^e
 * is the largest power of two not above the smallest weight seen so far.
 * Every a_i is then in (0, 1] and one in (1/2, 1]; when a smaller weight
 * comes, the sums are rescaled by a power of two, which is exact.  R does
 * not change with the scale, and swr_sum multiplies by W / 2^e at the end.
 *
 * Nothing here touches shared memory or WAL, so, like the chll functions,
 * these need no preload check (src/README).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/float.h"

PG_FUNCTION_INFO_V1(swr_avg_trans);
PG_FUNCTION_INFO_V1(swr_avg_combine);
PG_FUNCTION_INFO_V1(swr_avg_final);
PG_FUNCTION_INFO_V1(swr_sum_trans);
PG_FUNCTION_INFO_V1(swr_count_trans);
PG_FUNCTION_INFO_V1(swr_sum_combine);
PG_FUNCTION_INFO_V1(swr_sum_final);
PG_FUNCTION_INFO_V1(swr_count_final);
PG_FUNCTION_INFO_V1(swr_count_weighted_final);

/* the 0.975 quantile of the standard normal: two-sided 95% intervals */
#define SWR_Z95			1.959963984540054

/* Counts are kept in float8: exact up to 2^53 */
#define SWR_MAX_COUNT	9007199254740992.0

/*
 * Scale exponents lie in [-1075, 1023] (frexp of positive finite doubles);
 * a state with one outside this range did not come from our functions.
 */
#define SWR_MAX_EXP		1100

/*
 * The elements of a state.  Array data is aligned for float8 (the detour
 * through void * tells cppcheck so).
 */
#define STATE(arr)		((float8 *) (void *) ARR_DATA_PTR(arr))

/*
 * The state of swr_avg.  AVG_E is defined once AVG_M > 0.  S1, T1: sums of
 * a and a * x; S2, T2: of a^2 and a^2 * x; Q2: sum of a^2 (x - T2/S2)^2.
 */
enum
{
	AVG_N,						/* rows */
	AVG_M,						/* rows with x not NULL */
	AVG_E,						/* scale: a = 2^E / w */
	AVG_S1,
	AVG_T1,
	AVG_S2,
	AVG_T2,
	AVG_Q2,
	AVG_LEN
};

/*
 * The state of swr_sum and swr_count: y = u * W / 2^E, u = x * 2^E / w.
 * SUM_E is defined once SUM_C > 0; SUM_W once SUM_N > 0.
 */
enum
{
	SUM_N,						/* rows */
	SUM_C,						/* rows with x not NULL (pred true) */
	SUM_E,						/* scale: u = x * 2^E / w */
	SUM_W,						/* the total, the same in every row */
	SUM_SU,						/* sum of u */
	SUM_QU,						/* sum of (u - mean u)^2 */
	SUM_LEN
};

/* What a final function returns, before it becomes a swr_estimate */
typedef struct SwrEstimate
{
	bool		has_estimate;
	bool		has_error;		/* std_error and interval */
	float8		estimate;
	float8		std_error;
	float8		ci_low;
	float8		ci_high;
	int64		rows;
} SwrEstimate;


/* ----------------------------------------------------------------
 * Arguments and states
 * ----------------------------------------------------------------
 */

/* A row's weight: positive and finite, since the row was drawn */
static float8
weight_arg(FunctionCallInfo fcinfo, int argno, const char *agg)
{
	float8		w;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the weight of a sampled row passed to %s must not be NULL", agg),
				 errhint("Pass the weight column of the abtree index the sample was drawn through; a drawn row has a positive weight.")));
	w = PG_GETARG_FLOAT8(argno);
	if (!(w > 0.0) || isinf(w))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid weight of a sampled row passed to %s: %s",
						agg, float8out_internal(w)),
				 errdetail("Rows of weight zero are never drawn, so the weight of a sampled row must be positive and finite."),
				 errhint("Pass the weight column of the abtree index the sample was drawn through.")));
	return w;
}

/* The population's total weight: positive and finite */
static float8
total_arg(FunctionCallInfo fcinfo, int argno, const char *agg)
{
	float8		total;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the total weight passed to %s must not be NULL", agg),
				 errhint("Pass the total weight of the population sampled, such as (abtree_stats('index')).total_weight.")));
	total = PG_GETARG_FLOAT8(argno);
	if (!(total > 0.0) || isinf(total))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid total weight passed to %s: %s",
						agg, float8out_internal(total)),
				 errdetail("A population that a row was drawn from has a positive, finite total weight."),
				 errhint("Pass the total weight of the population sampled, such as (abtree_stats('index')).total_weight.")));
	return total;
}

static void
total_varies(const char *agg, float8 a, float8 b)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("the total weight passed to %s differs between rows of one group", agg),
			 errdetail("Rows carry the totals %s and %s.",
					   float8out_internal(a), float8out_internal(b)),
			 errhint("Pass the total weight of the population the sample was drawn from, the same in every row: a constant or a scalar subquery.")));
}

static void
overflow_error(const char *agg)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("value out of range: overflow in %s", agg),
			 errhint("Divide the values by a constant and multiply the result back.")));
}

static bool
all_finite(const float8 *v, int len)
{
	for (int i = 0; i < len; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

/* A count kept in a state, checked so that a hand-made state cannot crash */
static bool
valid_count(float8 v)
{
	return v >= 0.0 && v <= SWR_MAX_COUNT && v == floor(v);
}

/*
 * The state argument, a float8 array of len elements.  With for_update
 * outside an aggregate (a direct call), a copy, so that the caller's value
 * stays as it was; inside one, the aggregate's own state, changed in place.
 * Checked, so that a hand-made state cannot make us misbehave.
 */
static ArrayType *
state_arg(FunctionCallInfo fcinfo, int argno, int len, bool for_update,
		  const char *agg)
{
	ArrayType  *arr;
	float8	   *st;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the state of %s must not be NULL", agg)));
	if (for_update && !AggCheckCallContext(fcinfo, NULL))
		arr = PG_GETARG_ARRAYTYPE_P_COPY(argno);
	else
		arr = PG_GETARG_ARRAYTYPE_P(argno);
	st = STATE(arr);
	if (ARR_NDIM(arr) != 1 || ARR_DIMS(arr)[0] != len || ARR_HASNULL(arr) ||
		ARR_ELEMTYPE(arr) != FLOAT8OID ||
		!valid_count(st[0]) || !valid_count(st[1]) || st[1] > st[0] ||
		!(fabs(st[2]) <= SWR_MAX_EXP) || st[2] != floor(st[2]))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid state of %s", agg),
				 errdetail("The state is a float8 array of %d elements: two counts, a scale exponent and sums.",
						   len)));
	return arr;
}

/* e such that 2^e <= w < 2^(e+1), for a positive finite w */
static int
weight_exponent(float8 w)
{
	int			ex;

	(void) frexp(w, &ex);
	return ex - 1;
}

/*
 * v * W / 2^e.  W / 2^e is at least 1 when W is at least the smallest
 * weight, as it is for any population the rows were drawn from, so it
 * loses nothing to underflow; when it overflows, the product may still be
 * in range (v tiny), and W * v first is the only way to get it.
 */
static float8
scale_back(float8 total, float8 v, int e, const char *agg)
{
	float8		scale = ldexp(total, -e);
	float8		r;

	if (isfinite(scale))
		r = scale * v;
	else
		r = ldexp(total * v, -e);
	if (isinf(r) && isfinite(v))
		overflow_error(agg);
	return r;
}

/* The Wald interval, estimate -+ z * std_error */
static void
wald_interval(SwrEstimate *est, const char *agg)
{
	float8		half = SWR_Z95 * est->std_error;

	est->ci_low = est->estimate - half;
	est->ci_high = est->estimate + half;
	if ((isinf(est->ci_low) || isinf(est->ci_high)) &&
		isfinite(est->estimate) && isfinite(est->std_error))
		overflow_error(agg);
}

/* The swr_estimate row of a final function */
static Datum
estimate_datum(FunctionCallInfo fcinfo, const SwrEstimate *est)
{
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Float8GetDatum(est->estimate);
	values[1] = Float8GetDatum(est->std_error);
	values[2] = Float8GetDatum(est->ci_low);
	values[3] = Float8GetDatum(est->ci_high);
	values[4] = Int64GetDatum(est->rows);
	nulls[0] = !est->has_estimate;
	nulls[1] = nulls[2] = nulls[3] = !est->has_error;
	nulls[4] = false;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}


/* ----------------------------------------------------------------
 * swr_avg
 * ----------------------------------------------------------------
 */

/* Bring the sums of an swr_avg state from the scale 2^E to 2^e, e < E */
static void
avg_rescale(float8 *st, int e)
{
	int			d = e - (int) st[AVG_E];

	st[AVG_S1] = ldexp(st[AVG_S1], d);
	st[AVG_T1] = ldexp(st[AVG_T1], d);
	st[AVG_S2] = ldexp(st[AVG_S2], 2 * d);
	st[AVG_T2] = ldexp(st[AVG_T2], 2 * d);
	st[AVG_Q2] = ldexp(st[AVG_Q2], 2 * d);
	st[AVG_E] = e;
}

/* Add a row whose x is not NULL */
static void
avg_add(float8 *st, float8 x, float8 w)
{
	float8		old[AVG_LEN];
	int			e = weight_exponent(w);
	float8		a,
				v;

	memcpy(old, st, sizeof(old));
	if (st[AVG_M] == 0)
		st[AVG_E] = e;
	else if (e < st[AVG_E])
		avg_rescale(st, e);
	a = ldexp(1.0, (int) st[AVG_E]) / w;
	v = a * a;
	if (st[AVG_S2] > 0.0)
	{
		/* S2 (x - mu2), without rounding the mean (exact for integers) */
		float8		d = x * st[AVG_S2] - st[AVG_T2];

		st[AVG_Q2] += d * d / (st[AVG_S2] * (st[AVG_S2] + v)) * v;
	}
	st[AVG_M] += 1;
	st[AVG_S1] += a;
	st[AVG_T1] += a * x;
	st[AVG_S2] += v;
	st[AVG_T2] += v * x;

	/*
	 * As in float8_accum: an infinite or NaN x makes the estimate infinite or
	 * NaN, like AVG's, and the spread undefined; finite values whose sums
	 * leave the range of float8 are an ERROR.
	 */
	if (!isfinite(x))
		st[AVG_Q2] = get_float8_nan();
	else if (all_finite(old, AVG_LEN) && !all_finite(st, AVG_LEN))
		overflow_error("swr_avg");
}

/* swr_avg_trans(state, x [, weight]) */
Datum
swr_avg_trans(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = state_arg(fcinfo, 0, AVG_LEN, true, "swr_avg");
	float8	   *st = STATE(arr);
	float8		w = 1.0;

	/* the weight is checked in every row: a NULL one is a bug, x or not */
	if (PG_NARGS() > 2)
		w = weight_arg(fcinfo, 2, "swr_avg");
	st[AVG_N] += 1;
	if (!PG_ARGISNULL(1))
		avg_add(st, PG_GETARG_FLOAT8(1), w);
	PG_RETURN_ARRAYTYPE_P(arr);
}

Datum
swr_avg_combine(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = state_arg(fcinfo, 0, AVG_LEN, true, "swr_avg");
	float8	   *st = STATE(arr);
	float8		other[AVG_LEN];
	float8		old[AVG_LEN];
	float8		d;

	memcpy(other, STATE(state_arg(fcinfo, 1, AVG_LEN, false, "swr_avg")),
		   sizeof(other));
	memcpy(old, st, sizeof(old));
	st[AVG_N] += other[AVG_N];
	if (other[AVG_M] == 0)
		PG_RETURN_ARRAYTYPE_P(arr);
	if (st[AVG_M] == 0)
	{
		memcpy(st + AVG_M, other + AVG_M, (AVG_LEN - AVG_M) * sizeof(float8));
		PG_RETURN_ARRAYTYPE_P(arr);
	}

	/* both have rows with x: bring them to the smaller scale */
	if (other[AVG_E] < st[AVG_E])
		avg_rescale(st, (int) other[AVG_E]);
	else if (st[AVG_E] < other[AVG_E])
		avg_rescale(other, (int) st[AVG_E]);
	d = st[AVG_T2] / st[AVG_S2] - other[AVG_T2] / other[AVG_S2];
	st[AVG_Q2] += other[AVG_Q2] +
		d * d * (st[AVG_S2] * (other[AVG_S2] / (st[AVG_S2] + other[AVG_S2])));
	st[AVG_M] += other[AVG_M];
	st[AVG_S1] += other[AVG_S1];
	st[AVG_T1] += other[AVG_T1];
	st[AVG_S2] += other[AVG_S2];
	st[AVG_T2] += other[AVG_T2];
	if (all_finite(old, AVG_LEN) && all_finite(other, AVG_LEN) &&
		!all_finite(st, AVG_LEN))
		overflow_error("swr_avg");
	PG_RETURN_ARRAYTYPE_P(arr);
}

Datum
swr_avg_final(PG_FUNCTION_ARGS)
{
	const float8 *st = STATE(state_arg(fcinfo, 0, AVG_LEN, false, "swr_avg"));
	SwrEstimate est = {0};
	float8		m = st[AVG_M];
	float8		mu2;

	if (st[AVG_N] == 0)
		PG_RETURN_NULL();
	est.rows = (int64) m;
	if (m == 0)
		return estimate_datum(fcinfo, &est);
	est.has_estimate = true;
	est.estimate = st[AVG_T1] / st[AVG_S1];
	if (m < 2)
		return estimate_datum(fcinfo, &est);

	/*
	 * sum a^2 (x - R)^2 = Q2 + S2 (mu2 - R)^2: hypot() adds the two without
	 * squaring the second, which may overflow even when the result does not
	 * (values near 1e200, all alike).
	 */
	mu2 = st[AVG_T2] / st[AVG_S2];
	est.has_error = true;
	est.std_error = hypot(sqrt(st[AVG_Q2]),
						  fabs(mu2 - est.estimate) * sqrt(st[AVG_S2])) *
		sqrt(m / (m - 1)) / st[AVG_S1];
	wald_interval(&est, "swr_avg");
	return estimate_datum(fcinfo, &est);
}


/* ----------------------------------------------------------------
 * swr_sum and swr_count
 * ----------------------------------------------------------------
 */

/* Bring the sums of an swr_sum state from the scale 2^E to 2^e, e < E */
static void
sum_rescale(float8 *st, int e)
{
	int			d = e - (int) st[SUM_E];

	st[SUM_SU] = ldexp(st[SUM_SU], d);
	st[SUM_QU] = ldexp(st[SUM_QU], 2 * d);
	st[SUM_E] = e;
}

/* The total of a row: the first one sets it, the others must repeat it */
static void
sum_total(float8 *st, float8 total, const char *agg)
{
	if (st[SUM_N] == 0)
		st[SUM_W] = total;
	else if (st[SUM_W] != total)
		total_varies(agg, st[SUM_W], total);
}

/* Add a row: y = x W / w, 0 when x is NULL */
static void
sum_add(float8 *st, float8 x, bool isnull, float8 w, const char *agg)
{
	float8		old[SUM_LEN];
	float8		u = 0.0;
	float8		n = st[SUM_N];

	memcpy(old, st, sizeof(old));
	if (!isnull)
	{
		int			e = weight_exponent(w);

		if (st[SUM_C] == 0)
			st[SUM_E] = e;
		else if (e < st[SUM_E])
			sum_rescale(st, e);
		u = x * (ldexp(1.0, (int) st[SUM_E]) / w);
		st[SUM_C] += 1;
	}
	if (n > 0)
	{
		float8		d = u * n - st[SUM_SU];

		st[SUM_QU] += d * d / (n * (n + 1));
	}
	st[SUM_N] += 1;
	st[SUM_SU] += u;

	/* infinities and NaNs as in avg_add() */
	if (!isfinite(u))
		st[SUM_QU] = get_float8_nan();
	else if (all_finite(old, SUM_LEN) && !all_finite(st, SUM_LEN))
		overflow_error(agg);
}

/* swr_sum_trans(state, x, [weight,] total) */
Datum
swr_sum_trans(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = state_arg(fcinfo, 0, SUM_LEN, true, "swr_sum");
	float8	   *st = STATE(arr);
	int			totalno = PG_NARGS() - 1;
	float8		w = 1.0;
	float8		total;

	if (PG_NARGS() > 3)
		w = weight_arg(fcinfo, 2, "swr_sum");
	total = total_arg(fcinfo, totalno, "swr_sum");
	sum_total(st, total, "swr_sum");
	sum_add(st, PG_ARGISNULL(1) ? 0.0 : PG_GETARG_FLOAT8(1),
			PG_ARGISNULL(1), w, "swr_sum");
	PG_RETURN_ARRAYTYPE_P(arr);
}

/* swr_count_trans(state, pred, [weight,] total): swr_sum of 1 where pred */
Datum
swr_count_trans(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = state_arg(fcinfo, 0, SUM_LEN, true, "swr_count");
	float8	   *st = STATE(arr);
	int			totalno = PG_NARGS() - 1;
	float8		w = 1.0;
	float8		total;
	bool		pred;

	if (PG_NARGS() > 3)
		w = weight_arg(fcinfo, 2, "swr_count");
	total = total_arg(fcinfo, totalno, "swr_count");
	sum_total(st, total, "swr_count");
	pred = !PG_ARGISNULL(1) && PG_GETARG_BOOL(1);
	sum_add(st, 1.0, !pred, w, "swr_count");
	PG_RETURN_ARRAYTYPE_P(arr);
}

/* for swr_sum and swr_count alike */
Datum
swr_sum_combine(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = state_arg(fcinfo, 0, SUM_LEN, true, "swr_sum");
	float8	   *st = STATE(arr);
	float8		other[SUM_LEN];
	float8		old[SUM_LEN];
	float8		n1 = st[SUM_N],
				n2,
				d;

	memcpy(other, STATE(state_arg(fcinfo, 1, SUM_LEN, false, "swr_sum")),
		   sizeof(other));
	memcpy(old, st, sizeof(old));
	n2 = other[SUM_N];
	if (n2 == 0)
		PG_RETURN_ARRAYTYPE_P(arr);
	if (n1 == 0)
	{
		memcpy(st, other, sizeof(other));
		PG_RETURN_ARRAYTYPE_P(arr);
	}
	if (st[SUM_W] != other[SUM_W])
		total_varies("swr_sum or swr_count", st[SUM_W], other[SUM_W]);

	/* a side without x has all u = 0, which any scale keeps */
	if (other[SUM_C] > 0)
	{
		if (st[SUM_C] == 0)
			st[SUM_E] = other[SUM_E];
		else if (other[SUM_E] < st[SUM_E])
			sum_rescale(st, (int) other[SUM_E]);
		else if (st[SUM_E] < other[SUM_E])
			sum_rescale(other, (int) st[SUM_E]);
	}
	d = st[SUM_SU] / n1 - other[SUM_SU] / n2;
	st[SUM_QU] += other[SUM_QU] + d * d * (n1 * (n2 / (n1 + n2)));
	st[SUM_N] += n2;
	st[SUM_C] += other[SUM_C];
	st[SUM_SU] += other[SUM_SU];
	if (all_finite(old, SUM_LEN) && all_finite(other, SUM_LEN) &&
		!all_finite(st, SUM_LEN))
		overflow_error("swr_sum or swr_count");
	PG_RETURN_ARRAYTYPE_P(arr);
}

/*
 * The Hansen-Hurwitz estimate and std_error of a swr_sum or swr_count
 * state with n > 0 rows.  False when there is no row.
 */
static bool
sum_estimate(FunctionCallInfo fcinfo, SwrEstimate *est, const char *agg)
{
	const float8 *st = STATE(state_arg(fcinfo, 0, SUM_LEN, false, agg));
	float8		n = st[SUM_N];
	int			e = (int) st[SUM_E];

	if (n == 0)
		return false;
	est->rows = (int64) n;
	est->has_estimate = true;
	if (st[SUM_C] == 0)
		e = 0;					/* every y is 0; any scale will do */
	est->estimate = scale_back(st[SUM_W], st[SUM_SU] / n, e, agg);
	if (n < 2)
		return true;
	est->has_error = true;
	est->std_error = scale_back(st[SUM_W], sqrt(st[SUM_QU] / (n - 1) / n),
								e, agg);
	return true;
}

Datum
swr_sum_final(PG_FUNCTION_ARGS)
{
	SwrEstimate est = {0};

	if (!sum_estimate(fcinfo, &est, "swr_sum"))
		PG_RETURN_NULL();
	if (est.has_error)
		wald_interval(&est, "swr_sum");
	return estimate_datum(fcinfo, &est);
}

/* swr_count(pred, weight, total): Wald, cut at 0 */
Datum
swr_count_weighted_final(PG_FUNCTION_ARGS)
{
	SwrEstimate est = {0};

	if (!sum_estimate(fcinfo, &est, "swr_count"))
		PG_RETURN_NULL();
	if (est.has_error)
	{
		wald_interval(&est, "swr_count");
		est.ci_low = Max(est.ci_low, 0.0);
	}
	return estimate_datum(fcinfo, &est);
}

/*
 * swr_count(pred, total): W times the Wilson score interval of k / n.  At
 * k = 0 (k = n) the lower (upper) end is 0 (1) exactly; the formula gives
 * it up to rounding.
 */
Datum
swr_count_final(PG_FUNCTION_ARGS)
{
	const float8 *st = STATE(state_arg(fcinfo, 0, SUM_LEN, false, "swr_count"));
	SwrEstimate est = {0};
	float8		n = st[SUM_N],
				k = st[SUM_C],
				total = st[SUM_W];
	float8		z2 = SWR_Z95 * SWR_Z95;
	float8		root,
				lo,
				hi;

	if (!sum_estimate(fcinfo, &est, "swr_count"))
		PG_RETURN_NULL();
	if (!est.has_error)
		return estimate_datum(fcinfo, &est);
	root = SWR_Z95 * sqrt(z2 + 4.0 * k * ((n - k) / n));
	lo = (k == 0) ? 0.0 : (2.0 * k + z2 - root) / (2.0 * (n + z2));
	hi = (k == n) ? 1.0 : (2.0 * k + z2 + root) / (2.0 * (n + z2));
	est.ci_low = total * Max(lo, 0.0);
	est.ci_high = total * Min(hi, 1.0);
	return estimate_datum(fcinfo, &est);
}
