/*-------------------------------------------------------------------------
 *
 * chll_ndistinct.h
 *	  Multi-column distinct-value estimators corrected by per-column
 *	  sketches (paper 002, sections 6.2 and 6.3): the estimators, the
 *	  frequency vector of a sample, and the sample itself.
 *
 * The estimators and the frequency-vector routines are plain C: they take
 * caller-provided arrays, never allocate and never raise an ERROR, so the
 * SQL layer checks every argument first (chll_nd_check_* and the callers
 * in chll_ndsample.c).  See src/hll/README, "Multi-column distinct counts".
 *
 *-------------------------------------------------------------------------
 */
#ifndef CHLL_NDISTINCT_H
#define CHLL_NDISTINCT_H

#include "postgres.h"

#include "access/attnum.h"
#include "fmgr.h"
#include "utils/relcache.h"

/*
 * Samples smaller than this are refused by abtree_ndistinct(): the thesis
 * saw GEE break its error bound on 4-row samples (6.4.2), and at 100 rows
 * f_1 and d already carry some information.  The estimators themselves
 * need n >= 2 (the bounds raise f_1/n to the power 1/(n-1)).
 */
#define CHLL_ND_MIN_SAMPLE			100
#define CHLL_ND_MIN_FREQ_ROWS		2
/* Largest sample abtree_ndistinct() draws: it is held in memory */
#define CHLL_ND_MAX_SAMPLE			1000000
/* Largest number of columns of one estimate */
#define CHLL_ND_MAX_COLUMNS			32

typedef enum ChllNdMethod
{
	CHLL_ND_GEE,				/* Charikar et al.'s guaranteed-error estimator */
	CHLL_ND_BC,					/* bound-corrected (6.9) */
	CHLL_ND_SCGEE,				/* sketch-corrected GEE (6.19) */
	CHLL_ND_SCBC				/* sketch-corrected BC (6.22) */
} ChllNdMethod;

/*
 * What an estimate rests on.  freq[i - 1] = f_i, the number of distinct
 * tuples seen exactly i times in a sample of n = sum i f_i rows drawn with
 * replacement from N rows.  For the sketch-corrected methods, per column j:
 * col_nd[j] = D_j (an estimate of the column's distinct count in the
 * table) and col_repeated[j] = sum_{i>=2} f_{i,j} (the column's values
 * seen at least twice in the sample), which may be NULL when not known
 * (then the singleton bound F_1 >= F_{1,j} is not used).
 */
typedef struct ChllNdInput
{
	const int64 *freq;
	int			nfreq;
	double		table_rows;		/* N */
	int			ncols;
	const double *col_nd;		/* D_j, or NULL */
	const double *col_repeated; /* sum_{i>=2} f_{i,j}, or NULL */
	const double *col_distinct; /* d_j, column j's distinct values in the
								 * sample, or NULL */
	bool		distinct_rows;	/* the sample holds each table row at most
								 * once: drawn without replacement */
	bool		has_key_count;	/* key_count is the combination's count */
	double		key_count;		/* from a sketch of the combination itself */
} ChllNdInput;

/*
 * A column whose values the sample saw at least this many times twice or
 * more, each always with the same values of the other columns, is taken
 * to determine them (src/hll/README, "Functional dependencies").
 */
#define CHLL_ND_FD_MIN_REPEATED		30

/* Summary of a frequency vector */
typedef struct ChllNdSummary
{
	double		n;				/* sample rows */
	double		d;				/* distinct tuples in the sample */
	double		f1;				/* singletons */
	double		repeated;		/* sum_{i>=2} f_i */
} ChllNdSummary;

/* chll_ndistinct.c: estimators */
extern void chll_nd_summarize(const int64 *freq, int nfreq, ChllNdSummary *s);
extern double chll_nd_lower_wr(const ChllNdSummary *s, double N);
extern double chll_nd_lower_wor(const ChllNdSummary *s, double N);
extern double chll_nd_upper_wr(const ChllNdSummary *s, double N);
extern double chll_nd_estimate(const ChllNdInput *in, ChllNdMethod method);
extern bool chll_nd_parse_method(const char *name, ChllNdMethod *method);
extern const char *chll_nd_method_name(ChllNdMethod method);
extern ChllNdMethod chll_nd_uncorrected(ChllNdMethod method);
extern bool chll_nd_is_corrected(ChllNdMethod method);

/*
 * A sample, dictionary-encoded: codes[j][r] is the code of row r's value
 * in column j, codes 0..ndist[j]-1 (NULL is a value of its own, as in
 * GROUP BY); count[j][c] is how many rows have code c in column j.
 */
typedef struct ChllNdCodes
{
	int			nrows;
	int			ncols;
	uint32	  **codes;
	uint32	  **count;
	uint32	   *ndist;
	bool	   *has_null;		/* a NULL was seen in the column */
	bool		distinct_rows;	/* rows drawn twice were kept once */
} ChllNdCodes;

/* Scratch space for the frequency vector of up to nrows rows */
typedef struct ChllNdScratch
{
	uint32	   *rows;
	struct ChllNdPair *pairs;
	int64	   *freq;			/* freq[i - 1] = f_i, i = 1..nrows */
} ChllNdScratch;

extern void chll_nd_scratch_init(ChllNdScratch *scratch, int nrows);
extern void chll_nd_freq_partition(const ChllNdCodes *codes, const int *cols, int ncols,
								   ChllNdScratch *scratch, int64 *freq);
extern void chll_nd_freq_reference(const ChllNdCodes *codes, const int *cols, int ncols,
								   ChllNdScratch *scratch, int64 *freq);
extern int	chll_nd_freq_length(const int64 *freq, int nrows);
extern double chll_nd_col_repeated(const ChllNdCodes *codes, int col);

extern double chll_nd_estimate_cols(const ChllNdCodes *codes, const int *cols, int ncols,
									ChllNdScratch *scratch, double table_rows,
									const double *col_nd, ChllNdMethod method,
									const double *key_count,
									ChllNdSummary *summary);

#endif							/* CHLL_NDISTINCT_H */
