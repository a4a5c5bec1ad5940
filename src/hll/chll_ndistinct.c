/*-------------------------------------------------------------------------
 *
 * chll_ndistinct.c
 *	  Distinct-tuple estimators for column combinations (paper 002,
 *	  section 6.2) and the frequency vector of a sample (section 6.3).
 *
 * Notation (Table 6.1): a table of N rows holds D distinct tuples; a sample
 * of n rows drawn with replacement holds d distinct tuples, f_i of them
 * exactly i times.  Column j of the table has D_j distinct values.
 *
 *	GEE   f_1 sqrt(N/n) + sum_{i>=2} f_i                            (6.2)
 *	BC    sqrt(L_BC U_BC) + sum_{i>=2} f_i, with
 *	      L_BC = max(f_1, L - sum_{i>=2} f_i)                       (6.7)
 *	      U_BC = min(N f_1 / n, U - sum_{i>=2} f_i)                 (6.8)
 *	      and the with-replacement bounds of Theorems 6.1 and 6.2:
 *	      L = 1 / (1 - (f_1/n)^(1/(n-1)))  if f_1 >= n (1-1/n)^(n-1)
 *	          f_1 / (1-1/n)^(n-1)           otherwise                (6.5)
 *	      U = d / (1 - (1-1/N)^n)                                    (6.6)
 *	      both kept within [d, N].
 *	      A sample of n distinct rows (without replacement) takes L from
 *	      Theorem 6.3 instead, with q = (N-n)/(N-1) (the thesis's R):
 *	      L = N / (ln(f_1/n)/ln q + 1)        if f_1 >= n / (e q)
 *	          -(f_1 N ln q / n) e q            otherwise            (6.10)
 *	      (Theorem 6.4 keeps U as it is).
 *	SC*   the same with the singleton bounds tightened by the columns:
 *	      L_SC = max(L_*, max_j F_1j), U_SC = min(U_*, prod_j D_j),
 *	      F_1j = D_j - sum_{i>=2} f_ij (6.16-6.22), and the result kept
 *	      within [max_j D_j, prod_j D_j] (6.15).
 *
 * Every estimate is finally kept within [d, N]: the sample's tuples are in
 * the table, and the table has no more distinct tuples than rows.
 *
 * The powers are computed as exp/expm1 of logarithms: for n = 30,000 the
 * base (f_1/n)^(1/(n-1)) is within 10^-5 of 1, and 1 minus it would lose
 * most of its digits.
 *
 * Frequency vectors follow Algorithm 6.3: rows holding a value seen once
 * in any column are singleton tuples and are counted at once; the others
 * are refined column group by column group (several dictionary codes
 * packed into one 64-bit key, columns with more distinct values first) by
 * sorting each partition on its key.  chll_nd_freq_reference() sorts whole
 * rows instead; the regression test checks that both agree.
 *
 * Nothing here allocates or raises an ERROR, except chll_nd_scratch_init.
 *
 *-------------------------------------------------------------------------
 */
#include "hll/chll_ndistinct.h"

#include <math.h>

#include "port/pg_bitutils.h"

typedef struct ChllNdPair
{
	uint64		key;
	uint32		row;
} ChllNdPair;

/* ----------------------------------------------------------------
 * Estimators
 * ----------------------------------------------------------------
 */

void
chll_nd_summarize(const int64 *freq, int nfreq, ChllNdSummary *s)
{
	int			i;

	s->n = 0;
	s->d = 0;
	for (i = 0; i < nfreq; i++)
	{
		s->n += (double) (i + 1) * (double) freq[i];
		s->d += (double) freq[i];
	}
	s->f1 = nfreq > 0 ? (double) freq[0] : 0;
	s->repeated = s->d - s->f1;
}

static double
chll_nd_clamp(double x, double lo, double hi)
{
	if (isnan(x) || x < lo)
		x = lo;
	if (x > hi)
		x = hi;
	return x;
}

/*
 * L of (6.5): the D for which Theorem 6.1's bound on E(f_1) equals the
 * observed f_1.  Needs n >= 2.
 */
double
chll_nd_lower_wr(const ChllNdSummary *s, double N)
{
	double		n = s->n;
	double		log_keep = (n - 1) * log1p(-1.0 / n);	/* ln (1-1/n)^(n-1) */
	double		lower;

	if (s->f1 <= 0)
		lower = 0;
	else if (s->f1 >= n * exp(log_keep))
	{
		double		gap = -expm1(log(s->f1 / n) / (n - 1));

		lower = gap > 0 ? 1.0 / gap : N;	/* f_1 = n: no repeat, assume all distinct */
	}
	else
		lower = s->f1 / exp(log_keep);
	return chll_nd_clamp(lower, s->d, N);
}

/*
 * L of (6.10): the same for a sample of n distinct rows, from Theorem
 * 6.3's bound on E(f_1) when sampling without replacement (the form in
 * ../shared/notes: q^(-1/ln q) = 1/e).  Needs 2 <= n < N.
 */
double
chll_nd_lower_wor(const ChllNdSummary *s, double N)
{
	double		n = s->n;
	double		log_q = log((N - n) / (N - 1));	/* < 0 */
	double		lower;

	if (s->f1 <= 0)
		lower = 0;
	else if (s->f1 >= n / (M_E * exp(log_q)))
		lower = N / (log(s->f1 / n) / log_q + 1);	/* f_1 = n: N */
	else
		lower = -(s->f1 * N * log_q / n) * M_E * exp(log_q);
	return chll_nd_clamp(lower, s->d, N);
}

/* U of (6.6), from Theorem 6.2 (and of (6.11), from Theorem 6.4) */
double
chll_nd_upper_wr(const ChllNdSummary *s, double N)
{
	double		seen = -expm1(s->n * log1p(-1.0 / N));	/* 1 - (1-1/N)^n */

	return chll_nd_clamp(seen > 0 ? s->d / seen : N, s->d, N);
}

/* F_1j = D_j - sum_{i>=2} f_ij (6.16), the largest over the columns */
static double
chll_nd_column_singletons(const ChllNdInput *in)
{
	double		best = 0;
	int			j;

	if (in->col_repeated == NULL)
		return 0;
	for (j = 0; j < in->ncols; j++)
		best = Max(best, in->col_nd[j] - in->col_repeated[j]);
	return best;
}

/*
 * A column that the sample shows determining the others: it has as many
 * distinct values in the sample as the tuples (so each of its values came
 * with one tuple), and enough of them were seen repeatedly for that to be
 * evidence rather than the absence of any (values seen once each always
 * pair up one to one).  Returns the column, or -1.
 */
static int
chll_nd_determining_column(const ChllNdInput *in, const ChllNdSummary *s)
{
	int			j;

	if (in->col_distinct == NULL || in->col_repeated == NULL)
		return -1;
	for (j = 0; j < in->ncols; j++)
		if (in->col_distinct[j] == s->d &&
			in->col_repeated[j] >= CHLL_ND_FD_MIN_REPEATED)
			return j;
	return -1;
}

/*
 * The estimate of D by one of the four methods.  The caller has checked
 * the input: n >= 2, N >= d, N >= 1, and for the corrected methods ncols
 * >= 1 finite D_j >= 1.
 */
double
chll_nd_estimate(const ChllNdInput *in, ChllNdMethod method)
{
	ChllNdSummary s;
	double		N = in->table_rows;
	double		lower,
				upper,
				est;

	chll_nd_summarize(in->freq, in->nfreq, &s);

	/* distinct rows of the whole table: the sample is the table */
	if (in->distinct_rows && s.n >= N)
		return s.d;

	/* GEE's singleton bounds, or BC's tightened ones */
	lower = s.f1;
	upper = N * s.f1 / s.n;
	if (method == CHLL_ND_BC || method == CHLL_ND_SCBC)
	{
		double		L = in->distinct_rows ? chll_nd_lower_wor(&s, N) : chll_nd_lower_wr(&s, N);

		lower = Max(lower, L - s.repeated);
		upper = Min(upper, chll_nd_upper_wr(&s, N) - s.repeated);
	}

	if (chll_nd_is_corrected(method))
	{
		double		maxd = 0,
					prodd = 1;
		int			j,
					fd;

		for (j = 0; j < in->ncols; j++)
		{
			maxd = Max(maxd, in->col_nd[j]);
			prodd *= in->col_nd[j];
		}
		lower = Max(lower, chll_nd_column_singletons(in));
		upper = Min(upper, prodd);
		/*
		 * A sketch of the combination itself counts what the sample can
		 * only bound: it stands, raised to the sample's lower bound.  Where
		 * nearly every tuple is distinct that bound is all but exact (the
		 * sample sees no repeat), tighter than the sketch's few percent.
		 */
		if (in->has_key_count)
			return chll_nd_clamp(chll_nd_clamp(in->key_count, Max(maxd, lower + s.repeated),
											   prodd), s.d, N);
		est = sqrt(Max(lower, 0) * Max(upper, 0)) + s.repeated;
		/*
		 * A determining column j: every tuple of the table has one value of
		 * j and each value of j one tuple, so D = D_j, which its sketch
		 * knows.  The geometric mean with an upper bound of unseen tuples
		 * would overestimate it several times over (a Zipf column paired
		 * with itself: 3-6x).
		 */
		if ((fd = chll_nd_determining_column(in, &s)) >= 0)
			est = in->col_nd[fd];
		est = chll_nd_clamp(est, maxd, prodd);
	}
	else
		est = sqrt(Max(lower, 0) * Max(upper, 0)) + s.repeated;

	return chll_nd_clamp(est, s.d, N);
}

static const char *const chll_nd_method_names[] = {"gee", "bc", "scgee", "scbc"};

bool
chll_nd_parse_method(const char *name, ChllNdMethod *method)
{
	int			i;

	for (i = 0; i < lengthof(chll_nd_method_names); i++)
	{
		if (strcmp(name, chll_nd_method_names[i]) == 0)
		{
			*method = (ChllNdMethod) i;
			return true;
		}
	}
	return false;
}

const char *
chll_nd_method_name(ChllNdMethod method)
{
	return chll_nd_method_names[method];
}

bool
chll_nd_is_corrected(ChllNdMethod method)
{
	return method == CHLL_ND_SCGEE || method == CHLL_ND_SCBC;
}

/* The method a sketch-corrected one falls back to without sketches */
ChllNdMethod
chll_nd_uncorrected(ChllNdMethod method)
{
	if (method == CHLL_ND_SCGEE)
		return CHLL_ND_GEE;
	if (method == CHLL_ND_SCBC)
		return CHLL_ND_BC;
	return method;
}

/* ----------------------------------------------------------------
 * Frequency vectors
 * ----------------------------------------------------------------
 */

/*
 * How the columns are packed into keys: order[] lists them by descending
 * number of distinct values (so that partitions shrink fast), columns
 * order[group[g] .. group[g+1]-1] share the key of group g.  A column with
 * one value cannot split anything and is left out.
 */
typedef struct ChllNdPacking
{
	int			ngroups;
	int			order[CHLL_ND_MAX_COLUMNS];
	int			bits[CHLL_ND_MAX_COLUMNS];
	int			group[CHLL_ND_MAX_COLUMNS + 1];
} ChllNdPacking;

static int
chll_nd_code_bits(uint32 ndist)
{
	return ndist <= 1 ? 0 : pg_leftmost_one_pos32(ndist - 1) + 1;
}

static void
chll_nd_plan_packing(const ChllNdCodes *codes, const int *cols, int ncols, ChllNdPacking *pk)
{
	int			n = 0,
				used = 64,
				i,
				k;

	/* insertion sort by descending ndist: at most CHLL_ND_MAX_COLUMNS */
	for (i = 0; i < ncols; i++)
	{
		int			c = cols[i];

		if (codes->ndist[c] <= 1)
			continue;
		for (k = n; k > 0 && codes->ndist[pk->order[k - 1]] < codes->ndist[c]; k--)
			pk->order[k] = pk->order[k - 1];
		pk->order[k] = c;
		n++;
	}
	pk->ngroups = 0;
	for (i = 0; i < n; i++)
	{
		pk->bits[i] = chll_nd_code_bits(codes->ndist[pk->order[i]]);
		if (used + pk->bits[i] > 64)
		{
			pk->group[pk->ngroups++] = i;
			used = 0;
		}
		used += pk->bits[i];
	}
	pk->group[pk->ngroups] = n;
}

static uint64
chll_nd_key(const ChllNdCodes *codes, const ChllNdPacking *pk, int g, uint32 row)
{
	uint64		key = 0;
	int			i;

	for (i = pk->group[g]; i < pk->group[g + 1]; i++)
		key = (key << pk->bits[i]) | codes->codes[pk->order[i]][row];
	return key;
}

static int
chll_nd_pair_cmp(const void *a, const void *b)
{
	const ChllNdPair *pa = (const ChllNdPair *) a;
	const ChllNdPair *pb = (const ChllNdPair *) b;

	if (pa->key != pb->key)
		return pa->key < pb->key ? -1 : 1;
	return 0;
}

/*
 * Algorithm 6.3 on the rows rows[lo..hi), which agree on the groups before
 * g: sort them on group g's key and recurse into each run of equal keys.
 * The recursion only writes rows[] and pairs[] inside the run it was
 * given, so the scan of the runs here reads keys not yet overwritten.
 */
static void
chll_nd_refine(const ChllNdCodes *codes, const ChllNdPacking *pk, int g,
			   ChllNdScratch *scratch, int lo, int hi, int64 *freq)
{
	ChllNdPair *pairs = scratch->pairs;
	int			i,
				j;

	if (hi - lo == 1 || g == pk->ngroups)
	{
		freq[hi - lo - 1]++;
		return;
	}
	for (i = lo; i < hi; i++)
	{
		pairs[i].row = scratch->rows[i];
		pairs[i].key = chll_nd_key(codes, pk, g, pairs[i].row);
	}
	qsort(pairs + lo, hi - lo, sizeof(ChllNdPair), chll_nd_pair_cmp);
	for (i = lo; i < hi; i++)
		scratch->rows[i] = pairs[i].row;
	for (i = lo; i < hi; i = j)
	{
		for (j = i + 1; j < hi && pairs[j].key == pairs[i].key; j++)
			;
		chll_nd_refine(codes, pk, g + 1, scratch, i, j, freq);
	}
}

/* A row holding a value the sample has once, in any of the columns */
static bool
chll_nd_row_has_singleton(const ChllNdCodes *codes, const int *cols, int ncols, uint32 row)
{
	int			i;

	for (i = 0; i < ncols; i++)
	{
		if (codes->count[cols[i]][codes->codes[cols[i]][row]] == 1)
			return true;
	}
	return false;
}

/*
 * The frequency vector over columns cols[0..ncols) of the sample into
 * freq[0..nrows): freq[i - 1] = number of distinct tuples seen i times.
 */
void
chll_nd_freq_partition(const ChllNdCodes *codes, const int *cols, int ncols,
					   ChllNdScratch *scratch, int64 *freq)
{
	ChllNdPacking pk;
	int			m = 0;
	uint32		r;

	memset(freq, 0, sizeof(int64) * codes->nrows);
	if (codes->nrows == 0)
		return;
	for (r = 0; r < (uint32) codes->nrows; r++)
	{
		if (chll_nd_row_has_singleton(codes, cols, ncols, r))
			freq[0]++;
		else
			scratch->rows[m++] = r;
	}
	if (m == 0)
		return;
	chll_nd_plan_packing(codes, cols, ncols, &pk);
	chll_nd_refine(codes, &pk, 0, scratch, 0, m, freq);
}

typedef struct ChllNdRowOrder
{
	const ChllNdCodes *codes;
	const int  *cols;
	int			ncols;
} ChllNdRowOrder;

static int
chll_nd_row_cmp(const void *a, const void *b, void *arg)
{
	const ChllNdRowOrder *o = (const ChllNdRowOrder *) arg;
	uint32		ra = *(const uint32 *) a;
	uint32		rb = *(const uint32 *) b;
	int			i;

	for (i = 0; i < o->ncols; i++)
	{
		uint32		ca = o->codes->codes[o->cols[i]][ra];
		uint32		cb = o->codes->codes[o->cols[i]][rb];

		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	return 0;
}

/*
 * The same frequency vector the plain way: sort whole rows, count runs.
 * No pruning, no packing; it checks chll_nd_freq_partition in the tests.
 */
void
chll_nd_freq_reference(const ChllNdCodes *codes, const int *cols, int ncols,
					   ChllNdScratch *scratch, int64 *freq)
{
	ChllNdRowOrder order = {codes, cols, ncols};
	int			i,
				j;

	memset(freq, 0, sizeof(int64) * codes->nrows);
	for (i = 0; i < codes->nrows; i++)
		scratch->rows[i] = (uint32) i;
	qsort_arg(scratch->rows, codes->nrows, sizeof(uint32), chll_nd_row_cmp, &order);
	for (i = 0; i < codes->nrows; i = j)
	{
		for (j = i + 1; j < codes->nrows &&
			 chll_nd_row_cmp(&scratch->rows[i], &scratch->rows[j], &order) == 0; j++)
			;
		freq[j - i - 1]++;
	}
}

/* The length of a frequency vector without its trailing zeros */
int
chll_nd_freq_length(const int64 *freq, int nrows)
{
	while (nrows > 0 && freq[nrows - 1] == 0)
		nrows--;
	return nrows;
}

/* sum_{i>=2} f_ij: the values of column col seen at least twice */
double
chll_nd_col_repeated(const ChllNdCodes *codes, int col)
{
	double		rep = 0;
	uint32		c;

	for (c = 0; c < codes->ndist[col]; c++)
		rep += codes->count[col][c] >= 2;
	return rep;
}

void
chll_nd_scratch_init(ChllNdScratch *scratch, int nrows)
{
	int			n = Max(nrows, 1);

	scratch->rows = palloc(sizeof(uint32) * n);
	scratch->pairs = palloc(sizeof(ChllNdPair) * n);
	scratch->freq = palloc0(sizeof(int64) * n);
}

/*
 * The estimate for the columns cols[] of a sample.  col_nd[k] is D_j of
 * column cols[k], or NULL for the uncorrected methods; key_count, if not
 * NULL, the count of a sketch of the combination (the corrected methods
 * use it).  A column that
 * holds NULLs in the sample gets one more distinct value than its sketch
 * counts, since sketches skip NULLs and GROUP BY does not.
 */
double
chll_nd_estimate_cols(const ChllNdCodes *codes, const int *cols, int ncols,
					  ChllNdScratch *scratch, double table_rows,
					  const double *col_nd, ChllNdMethod method,
					  const double *key_count, ChllNdSummary *summary)
{
	double		nd[CHLL_ND_MAX_COLUMNS];
	double		rep[CHLL_ND_MAX_COLUMNS];
	double		dist[CHLL_ND_MAX_COLUMNS];
	ChllNdInput in;
	int			k;

	chll_nd_freq_partition(codes, cols, ncols, scratch, scratch->freq);
	in.freq = scratch->freq;
	in.nfreq = chll_nd_freq_length(scratch->freq, codes->nrows);
	chll_nd_summarize(in.freq, in.nfreq, summary);
	in.table_rows = Max(table_rows, summary->d);
	in.ncols = ncols;
	in.col_nd = NULL;
	in.col_repeated = NULL;
	in.col_distinct = NULL;
	in.distinct_rows = codes->distinct_rows;
	in.has_key_count = key_count != NULL;
	in.key_count = key_count ? *key_count : 0;
	if (col_nd == NULL)
		method = chll_nd_uncorrected(method);
	else
	{
		for (k = 0; k < ncols; k++)
		{
			nd[k] = Max(col_nd[k] + (codes->has_null[cols[k]] ? 1 : 0), 1.0);
			rep[k] = chll_nd_col_repeated(codes, cols[k]);
			dist[k] = codes->ndist[cols[k]];
		}
		in.col_nd = nd;
		in.col_repeated = rep;
		in.col_distinct = dist;
	}
	if (summary->n < CHLL_ND_MIN_FREQ_ROWS)
		return summary->d;
	return chll_nd_estimate(&in, method);
}
