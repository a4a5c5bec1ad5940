/*-------------------------------------------------------------------------
 *
 * chll_estimate.c
 *	  The estimate of a counting HyperLogLog sketch: the exact count while
 *	  the set of distinct hashes is kept, otherwise the maximum-likelihood
 *	  estimate from which slots of each bucket are occupied.
 *
 * A plain HLL keeps one register per bucket, the highest slot a hash fell
 * into.  A counting sketch counts every slot, so it also knows which slots
 * below the top are empty; a likelihood that reads them estimates with a
 * relative standard error of about 0.65 / sqrt(m) where the registers
 * alone give 1.04 / sqrt(m) (src/hll/README, "Estimator and error").
 *
 * Like everything in src/hll below the SQL layer, nothing here allocates
 * or raises an ERROR: the planner's hooks and index code call it.
 *
 *-------------------------------------------------------------------------
 */
#include "hll/chll.h"
#include "hll/chll_layout.h"

#include <math.h>

/* Newton's method stops when a step moves x by less than this fraction */
#define CHLL_ML_TOLERANCE		1e-12
#define CHLL_ML_MAX_STEPS		100

/*
 * The HLL register of a bucket: 1 + the highest z with a nonzero counter.
 * A bucket whose exact count says it is not empty has a register of at
 * least 1 even if its probabilistic counters all fell to zero.
 */
static int
bucket_register(const uint8 *sk, int bucket)
{
	int			top = slots_top(sk + slot_off(bucket, 0));

	if (top >= 0)
		return top + 1;
	return chll_get32(sk + bucket_off(bucket)) != 0 ? 1 : 0;
}

/*
 * m times the probability that a hash falls into slot z of a given bucket:
 * z is the number of leading zeros of CHLL_QBITS bits, so 2^-(z+1) below
 * CHLL_QBITS and 2^-CHLL_QBITS for z = CHLL_QBITS (all bits zero).
 */
static inline double
slot_prob(int z)
{
	return ldexp(1.0, -Min(z + 1, CHLL_QBITS));
}

/*
 * What the likelihood reads of a sketch: occupied[z], the number of read
 * slots at level z that hold a value, and empty_prob, the sum of
 * slot_prob() over the read slots that are empty.
 *
 * Of each bucket with register R, it reads the slots from R on (empty by
 * definition; their probabilities sum to 2^-R, or 0 when R is
 * CHLL_QBITS + 1), slot R - 1 (occupied by definition) and the
 * CHLL_READ_DEPTH slots below it.  Those are among the slots whose counts
 * the sketch keeps exact (chll_sketch.c gives them overflow entries first).
 * Deeper slots are not read: a slot far below the top is occupied with a
 * probability close to 1 and tells little.
 *
 * Whether a slot is occupied is exact as long as no removal hit an
 * approximate count there: additions never take a counter back to 0,
 * exact removals do so exactly.  A slot where one did may look empty while
 * it holds values, and each such slot pulls the estimate down (a 16-bucket
 * sketch read five times too low so).  Header byte CHLL_OFF_LOSSY_Z
 * bounds the z of such slots, and no slot below it is read.  Which slots
 * are read then depends on the history of removals, not on what the slots
 * hold, so the likelihood of the slots read stays exact.  Such slots are
 * low ones as a rule (they passed 128), far below the registers; when the
 * tops fall far (heavy deletes) or a frequent value sat high, fewer slots
 * are read, down to the registers alone, which the thesis's estimator
 * reads too.
 */
typedef struct ChllSlotStats
{
	int			occupied[CHLL_SLOTS];
	double		empty_prob;
} ChllSlotStats;

static void
slot_stats(const uint8 *sk, ChllSlotStats *st)
{
	int			m = bucket_count(sk);
	int			lossy_z = sk[CHLL_OFF_LOSSY_Z];
	int			empty[CHLL_SLOTS] = {0};	/* empty slots read, by z */
	int			registers[CHLL_QBITS + 2] = {0};	/* buckets, by register */

	memset(st, 0, sizeof(*st));
	for (int b = 0; b < m; b++)
	{
		const uint8 *slots = sk + slot_off(b, 0);
		int			r = bucket_register(sk, b);

		registers[r]++;
		if (r == 0)
			continue;
		st->occupied[r - 1]++;
		for (int z = Max(r - 1 - CHLL_READ_DEPTH, lossy_z); z < r - 1; z++)
		{
			if (slots[z] != 0)
				st->occupied[z]++;
			else
				empty[z]++;
		}
	}
	/* sums of powers of two: exact, and in an order independent of m */
	for (int z = 0; z < CHLL_SLOTS; z++)
		st->empty_prob += empty[z] * slot_prob(z);
	for (int r = 0; r <= CHLL_QBITS; r++)
		st->empty_prob += registers[r] * ldexp(1.0, -r);
}

/*
 * The maximum-likelihood estimate of the number of distinct values.
 *
 * Poissonized, with n distinct hashes in m buckets and x = n / m, the
 * values in slot z of a bucket are Poisson with mean x * slot_prob(z),
 * independently of every other slot, so the slot is occupied with
 * probability 1 - exp(-x p_z).  The log-likelihood of what slot_stats()
 * read is
 *
 *   l(x) = -x * empty_prob + sum_z occupied[z] * log(1 - exp(-x p_z)),
 *
 * and its derivative
 *
 *   f(x) = -empty_prob + sum_z occupied[z] * p_z / (exp(x p_z) - 1)
 *
 * falls strictly from +infinity to -empty_prob: one root, the estimate.
 * With N occupied slots and B = sum_z occupied[z] p_z / 2, the bounds
 * 1/t - 1/2 < 1/(e^t - 1) < 1/t put the root between N / (empty_prob + B)
 * and N / empty_prob.  f is convex, so Newton's method from the lower
 * bound climbs to the root without ever passing it (up to rounding).
 */
double
chll_estimate_hll(const uint8 *sk)
{
	ChllSlotStats st;
	double		prob[CHLL_SLOTS];
	int			nocc = 0;
	double		half = 0.0;
	double		x;

	slot_stats(sk, &st);
	for (int z = 0; z < CHLL_SLOTS; z++)
	{
		prob[z] = slot_prob(z);
		nocc += st.occupied[z];
		half += 0.5 * st.occupied[z] * prob[z];
	}
	if (nocc == 0)
		return 0.0;
	if (st.empty_prob <= 0.0)
		return INFINITY;		/* every register saturated */

	x = nocc / (st.empty_prob + half);
	for (int step = 0; step < CHLL_ML_MAX_STEPS; step++)
	{
		double		f = -st.empty_prob;
		double		df = 0.0;
		double		dx;

		for (int z = 0; z < CHLL_SLOTS; z++)
		{
			double		p = prob[z];
			double		t = x * p;

			if (st.occupied[z] == 0)
				continue;
			/* e^t / (e^t - 1)^2 = 1 / ((e^t - 1)(1 - e^-t)), finite for large t */
			f += st.occupied[z] * p / expm1(t);
			df -= st.occupied[z] * p * p / (expm1(t) * -expm1(-t));
		}
		if (df >= 0.0)
			break;				/* x so large that no slot's term is left */
		dx = -f / df;
		x += dx;
		if (fabs(dx) <= CHLL_ML_TOLERANCE * x)
			break;
	}
	return x * bucket_count(sk);
}

/* The estimate: exact while the set is kept, the counters' otherwise */
double
chll_estimate_sketch(const uint8 *sk)
{
	int64		exact = chll_set_distinct(sk);

	if (exact >= 0)
		return (double) exact;	/* every distinct hash is in the set */
	return chll_estimate_hll(sk);
}
