/*-------------------------------------------------------------------------
 *
 * chll_ndsample.c
 *	  Multi-column distinct counts from a TABLESAMPLE swr sample: drawing
 *	  and dictionary-encoding the sample, and the SQL functions
 *	  abtree_ndistinct(), abtree_ndistinct_from_freq() and
 *	  abtree_ndistinct_freq().
 *
 * The estimators of chll_ndistinct.c assume a uniform sample drawn with
 * replacement, which is what TABLESAMPLE swr(n) gives through an
 * unweighted abtree index; a weighted index would over-represent heavy
 * rows, so it is refused.  N is the index's total weight: its number of
 * entries, exact at rest (dead entries count until VACUUM).
 *
 * Values are dictionary-encoded by sorting each column with its type's
 * default ordering under the column's collation, so that two values get
 * the same code exactly when GROUP BY would put them into one group.  NULL
 * is a value of its own, as in GROUP BY.
 *
 *-------------------------------------------------------------------------
 */
#include "stats/stats.h"

#include <math.h>

#include "abtree/abtree.h"
#include "access/relation.h"
#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "swr/swr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/sortsupport.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(abtree_ndistinct);
PG_FUNCTION_INFO_V1(abtree_ndistinct_from_freq);
PG_FUNCTION_INFO_V1(abtree_ndistinct_freq);

/* Largest n of a frequency vector: float8 counts it exactly */
#define CHLL_ND_MAX_FREQ_ROWS	((double) (INT64CONST(1) << 53))

#define CHLL_ND_METHOD_HINT "Use one of 'gee', 'bc', 'scgee' (sketch-corrected GEE) or 'scbc' (sketch-corrected BC, the default)."

/* ----------------------------------------------------------------
 * Argument checks
 * ----------------------------------------------------------------
 */

static void
chll_nd_not_null(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what),
				 errhint("Leave the argument out to get its default, if it has one.")));
}

static ChllNdMethod
chll_nd_method_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;
	ChllNdMethod method;

	chll_nd_not_null(fcinfo, argno, "method");
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (!chll_nd_parse_method(name, &method))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown distinct-count method \"%s\"", name),
				 errhint(CHLL_ND_METHOD_HINT)));
	return method;
}

/* The elements of a one-dimensional array without NULLs */
static void
chll_nd_array_arg(ArrayType *arr, Oid elemtype, const char *what, Datum **elems, int *nelems)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	bool	   *nulls;
	int			i;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", what),
				 errhint("Pass a flat array such as '{1,2,3}'.")));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign, elems, &nulls, nelems);
	if (*nelems == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what),
				 errhint("Pass at least one element.")));
	for (i = 0; i < *nelems; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain NULL", what),
					 errdetail("Element %d is NULL.", i + 1),
					 errhint("Remove the NULL elements.")));
	}
}

/* A finite float at least lo */
static void
chll_nd_check_float(double v, double lo, const char *what, const char *hint)
{
	if (isnan(v) || isinf(v) || v < lo)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a finite number of at least %g, not %g", what, lo, v),
				 errhint("%s", hint)));
}

/*
 * The frequency vector of abtree_ndistinct_from_freq: freq[i] = f_i >= 0,
 * with n = sum i f_i at least CHLL_ND_MIN_FREQ_ROWS and small enough for
 * float8 to count exactly.
 */
static int64 *
chll_nd_freq_arg(FunctionCallInfo fcinfo, int argno, int *nfreq)
{
	Datum	   *elems;
	int64	   *freq;
	double		n = 0;
	int			i;

	chll_nd_not_null(fcinfo, argno, "the frequency vector");
	chll_nd_array_arg(PG_GETARG_ARRAYTYPE_P(argno), INT8OID, "the frequency vector", &elems, nfreq);
	freq = palloc(sizeof(int64) * *nfreq);
	for (i = 0; i < *nfreq; i++)
	{
		freq[i] = DatumGetInt64(elems[i]);
		if (freq[i] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("frequency f_%d must not be negative", i + 1),
					 errhint("freq[i] is the number of distinct tuples seen exactly i times in the sample.")));
		n += (double) (i + 1) * (double) freq[i];
	}
	if (n > CHLL_ND_MAX_FREQ_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the frequency vector describes %g sample rows, more than %g", n, CHLL_ND_MAX_FREQ_ROWS),
				 errhint("freq[i] is the number of distinct tuples seen exactly i times in the sample.")));
	if (n < CHLL_ND_MIN_FREQ_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the sample has %g rows; the estimators need at least %d", n, CHLL_ND_MIN_FREQ_ROWS),
				 errhint("n = sum of i * freq[i] is the sample size.")));
	return freq;
}

/* A float8[] argument of per-column numbers, each finite and >= lo */
static double *
chll_nd_columns_arg(FunctionCallInfo fcinfo, int argno, const char *what, double lo, int *ncols)
{
	Datum	   *elems;
	double	   *vals;
	int			i;

	chll_nd_array_arg(PG_GETARG_ARRAYTYPE_P(argno), FLOAT8OID, what, &elems, ncols);
	if (*ncols > CHLL_ND_MAX_COLUMNS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("%s has %d columns; at most %d are supported", what, *ncols, CHLL_ND_MAX_COLUMNS)));
	vals = palloc(sizeof(double) * *ncols);
	for (i = 0; i < *ncols; i++)
	{
		vals[i] = DatumGetFloat8(elems[i]);
		chll_nd_check_float(vals[i], lo, what,
							lo > 0 ? "A column's distinct count is at least 1." :
							"Pass the number of the column's values seen at least twice in the sample.");
	}
	return vals;
}

/* ----------------------------------------------------------------
 * abtree_ndistinct_from_freq(freq bigint[], table_rows float8,
 *		column_ndistinct float8[], method text, column_repeated float8[])
 * ----------------------------------------------------------------
 */
Datum
abtree_ndistinct_from_freq(PG_FUNCTION_ARGS)
{
	ChllNdInput in = {0};
	ChllNdSummary s;
	ChllNdMethod method = chll_nd_method_arg(fcinfo, 3);
	int			nrep = 0;

	in.freq = chll_nd_freq_arg(fcinfo, 0, &in.nfreq);
	chll_nd_summarize(in.freq, in.nfreq, &s);
	chll_nd_not_null(fcinfo, 1, "table_rows");
	in.table_rows = PG_GETARG_FLOAT8(1);
	chll_nd_check_float(in.table_rows, Max(s.d, 1), "table_rows",
						"The table has at least as many rows as the sample has distinct tuples.");
	if (!PG_ARGISNULL(2))
		in.col_nd = chll_nd_columns_arg(fcinfo, 2, "column_ndistinct", 1, &in.ncols);
	else if (chll_nd_is_corrected(method))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("method \"%s\" needs column_ndistinct", chll_nd_method_name(method)),
				 errhint("Pass the distinct count of each column, or use method '%s'.",
						 chll_nd_method_name(chll_nd_uncorrected(method)))));
	if (!PG_ARGISNULL(4))
	{
		if (in.col_nd == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("column_repeated needs column_ndistinct"),
					 errhint("Pass both, one element per column.")));
		in.col_repeated = chll_nd_columns_arg(fcinfo, 4, "column_repeated", 0, &nrep);
		if (nrep != in.ncols)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("column_repeated has %d elements and column_ndistinct %d", nrep, in.ncols),
					 errhint("Pass one element per column in both.")));
	}
	PG_RETURN_FLOAT8(chll_nd_estimate(&in, method));
}

/* ----------------------------------------------------------------
 * Reading and encoding rows
 * ----------------------------------------------------------------
 */

typedef struct ChllNdItem
{
	Datum		value;
	bool		isnull;
	uint32		row;
} ChllNdItem;

static int
chll_nd_item_cmp(const void *a, const void *b, void *arg)
{
	const ChllNdItem *ia = (const ChllNdItem *) a;
	const ChllNdItem *ib = (const ChllNdItem *) b;

	return ApplySortComparator(ia->value, ia->isnull, ib->value, ib->isnull,
							   (SortSupport) arg);
}

/* Sort support for the default ordering of a result column's type */
static void
chll_nd_sort_support(TupleDesc desc, int col, SortSupport ssup)
{
	Form_pg_attribute att = TupleDescAttr(desc, col);
	TypeCacheEntry *tce = lookup_type_cache(att->atttypid, TYPECACHE_LT_OPR);

	if (!OidIsValid(tce->lt_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("column \"%s\" of type %s has no default ordering",
						NameStr(att->attname), format_type_be(att->atttypid)),
				 errhint("Distinct counts need a type with a default btree operator class, as extended statistics do.")));
	memset(ssup, 0, sizeof(SortSupportData));
	ssup->ssup_cxt = CurrentMemoryContext;
	ssup->ssup_collation = att->attcollation;
	ssup->ssup_nulls_first = false;
	PrepareSortSupportFromOrderingOp(tce->lt_opr, ssup);
}

/*
 * Dictionary-encode column col of the SPI result into out (allocated in
 * cxt): equal values (by the type's ordering) get equal codes.
 */
static void
chll_nd_encode_column(SPITupleTable *tt, int nrows, int col, ChllNdCodes *out, MemoryContext cxt)
{
	SortSupportData ssup;
	ChllNdItem *items = palloc(sizeof(ChllNdItem) * Max(nrows, 1));
	uint32		ndist = 0;
	int			i;

	chll_nd_sort_support(tt->tupdesc, col, &ssup);
	for (i = 0; i < nrows; i++)
	{
		items[i].value = heap_getattr(tt->vals[i], col + 1, tt->tupdesc, &items[i].isnull);
		items[i].row = (uint32) i;
	}
	qsort_arg(items, nrows, sizeof(ChllNdItem), chll_nd_item_cmp, &ssup);
	out->codes[col] = MemoryContextAlloc(cxt, sizeof(uint32) * Max(nrows, 1));
	out->count[col] = MemoryContextAllocZero(cxt, sizeof(uint32) * Max(nrows, 1));
	out->has_null[col] = false;
	for (i = 0; i < nrows; i++)
	{
		if (i > 0 && chll_nd_item_cmp(&items[i - 1], &items[i], &ssup) != 0)
			ndist++;
		out->codes[col][items[i].row] = ndist;
		out->count[col][ndist]++;
		out->has_null[col] |= items[i].isnull;
	}
	out->ndist[col] = nrows > 0 ? ndist + 1 : 0;
	pfree(items);
}

/*
 * Run a query through SPI and return its rows dictionary-encoded, one code
 * array per result column, allocated in the caller's memory context.
 */
static ChllNdCodes *
chll_nd_encode_query(const char *query, int nargs, Oid *argtypes, Datum *args, int ncols)
{
	MemoryContext cxt = CurrentMemoryContext;
	ChllNdCodes *codes = palloc0(sizeof(ChllNdCodes));
	int			ret,
				j;

	codes->ncols = ncols;
	codes->codes = palloc0(sizeof(uint32 *) * ncols);
	codes->count = palloc0(sizeof(uint32 *) * ncols);
	codes->ndist = palloc0(sizeof(uint32) * ncols);
	codes->has_null = palloc0(sizeof(bool) * ncols);

	SPI_connect();
	ret = SPI_execute_with_args(query, nargs, argtypes, args, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args(\"%s\") returned %d", query, ret);
	if (SPI_processed > CHLL_ND_MAX_SAMPLE * (uint64) 16)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many rows for a frequency vector: " UINT64_FORMAT, SPI_processed),
				 errhint("Count a sample of the table, with abtree_ndistinct().")));
	codes->nrows = (int) SPI_processed;
	for (j = 0; j < ncols; j++)
	{
		CHECK_FOR_INTERRUPTS();
		chll_nd_encode_column(SPI_tuptable, codes->nrows, j, codes, cxt);
	}
	SPI_finish();
	return codes;
}

/*
 * "SELECT a, b FROM s.t" with every name quoted; with one_per_row,
 * "SELECT DISTINCT ON (ctid) a, b ...": each row once however often drawn.
 */
static void
chll_nd_select_list(StringInfo buf, Relation rel, const AttrNumber *attnums, int ncols,
					bool one_per_row)
{
	int			j;

	appendStringInfoString(buf, one_per_row ? "SELECT DISTINCT ON (ctid) " : "SELECT ");
	for (j = 0; j < ncols; j++)
		appendStringInfo(buf, "%s%s", j > 0 ? ", " : "",
						 quote_identifier(get_attname(RelationGetRelid(rel), attnums[j], false)));
	appendStringInfo(buf, " FROM %s",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												RelationGetRelationName(rel)));
}

/*
 * Draw nrows rows of the columns attnums with TABLESAMPLE swr and encode
 * them, each row once however often it was drawn; *table_rows gets the
 * population size, the index's total weight.
 *
 * Why once: n draws with replacement from N rows draw about n^2 / 2N rows
 * twice (2.5 of 5,000 draws from 5 million), and a row drawn twice looks
 * like a value that two rows share.  On a column combination where nearly
 * every row is distinct, those few false repeats were all the sample's
 * repeats, and the estimate swung with their Poisson count (up to 1.42x
 * too low on the full benchmark's pairs of 5-6 million nearly distinct
 * tuples, where ANALYZE's sample without replacement is exact).  The distinct rows of a
 * with-replacement sample, given their number n', are a uniform sample of
 * n' rows without replacement (every set of n' rows is equally likely), so
 * the estimators take the bounds for that case (chll_ndistinct.c).
 * fcinfo is the SQL function's call: swr is named in that function's
 * schema, the extension's, which need not be on the search path (the
 * extension is relocatable).
 */
ChllNdCodes *
chll_nd_sample(Oid extnsp, Relation rel, const AttrNumber *attnums, int ncols,
			   int nrows, bool has_seed, double seed, double *table_rows)
{
	Relation	index = swr_open_unweighted_index(rel);
	StringInfoData query;
	Oid			argtypes[2] = {FLOAT8OID, FLOAT8OID};
	Datum		args[2];
	ChllNdCodes *codes;
	int			save_nestlevel;

	if (swr_weight_column(index) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("TABLESAMPLE swr on \"%s\" would draw through the weighted index %s",
						RelationGetRelationName(rel), swr_describe(index)),
				 errdetail("The distinct-count estimators need every row drawn with the same probability."),
				 errhint("Create an unweighted abtree index on the table, and name it in abtree.swr_index if the table has several.")));
	initStringInfo(&query);
	chll_nd_select_list(&query, rel, attnums, ncols, true);
	appendStringInfo(&query, " TABLESAMPLE %s ($1)",
					 quote_qualified_identifier(get_namespace_name(extnsp), "swr"));
	if (has_seed)
		appendStringInfoString(&query, " REPEATABLE ($2)");
	args[0] = Float8GetDatum((double) nrows);
	args[1] = Float8GetDatum(seed);

	/* the sample goes through that index, whatever else the table has */
	save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("abtree.swr_index",
							 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(index)),
														RelationGetRelationName(index)),
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	codes = chll_nd_encode_query(query.data, has_seed ? 2 : 1, argtypes, args, ncols);
	codes->distinct_rows = true;
	AtEOXact_GUC(true, save_nestlevel);
	*table_rows = (double) abt_total_weight(index);
	index_close(index, NoLock);
	return codes;
}

/*
 * The columns named in a text[] as attribute numbers: each must exist, be
 * a user column, and appear once.
 */
static AttrNumber *
chll_nd_attnums_arg(FunctionCallInfo fcinfo, int argno, Relation rel, int *ncols)
{
	Datum	   *elems;
	AttrNumber *attnums;
	int			i,
				k;

	chll_nd_not_null(fcinfo, argno, "the column list");
	chll_nd_array_arg(PG_GETARG_ARRAYTYPE_P(argno), TEXTOID, "the column list", &elems, ncols);
	if (*ncols > CHLL_ND_MAX_COLUMNS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("%d columns given; at most %d are supported", *ncols, CHLL_ND_MAX_COLUMNS)));
	attnums = palloc(sizeof(AttrNumber) * *ncols);
	for (i = 0; i < *ncols; i++)
	{
		char	   *name = TextDatumGetCString(elems[i]);

		attnums[i] = get_attnum(RelationGetRelid(rel), name);
		if (attnums[i] == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of relation \"%s\" does not exist",
							name, RelationGetRelationName(rel)),
					 errhint("Column names are matched exactly, as if double-quoted.")));
		if (attnums[i] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("system column \"%s\" cannot be counted", name),
					 errhint("Name user columns of the table.")));
		for (k = 0; k < i; k++)
		{
			if (attnums[k] == attnums[i])
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("column \"%s\" is named twice", name),
						 errhint("Name each column once.")));
		}
	}
	return attnums;
}

/* Open a table we can sample or read: a plain table or materialized view */
static Relation
chll_nd_open_table(FunctionCallInfo fcinfo, int argno, LOCKMODE lockmode)
{
	Relation	rel;

	chll_nd_not_null(fcinfo, argno, "the table");
	rel = try_relation_open(PG_GETARG_OID(argno), lockmode);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", PG_GETARG_OID(argno))));
	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("\"%s\" is a partitioned table", RelationGetRelationName(rel)),
				 errhint("Estimate each partition.")));
	if (rel->rd_rel->relkind != RELKIND_RELATION && rel->rd_rel->relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(rel)),
				 errhint("Distinct counts are estimated for tables and materialized views.")));
	return rel;
}

/* The sample size argument, within [CHLL_ND_MIN_SAMPLE, CHLL_ND_MAX_SAMPLE] */
static int
chll_nd_sample_rows_arg(FunctionCallInfo fcinfo, int argno)
{
	int32		n;

	chll_nd_not_null(fcinfo, argno, "sample_rows");
	n = PG_GETARG_INT32(argno);
	if (n < CHLL_ND_MIN_SAMPLE || n > CHLL_ND_MAX_SAMPLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sample_rows must be between %d and %d, not %d",
						CHLL_ND_MIN_SAMPLE, CHLL_ND_MAX_SAMPLE, n),
				 errhint("Smaller samples make the estimators unreliable; 30000, the default, is what ANALYZE samples at the default statistics target.")));
	return n;
}

/* ----------------------------------------------------------------
 * abtree_ndistinct(tbl regclass, columns text[], sample_rows int,
 *		method text, seed float8)
 * ----------------------------------------------------------------
 */

/* D_j of each column from its sketch; false for a column without one */
static bool
chll_nd_column_sketches(Relation rel, const AttrNumber *attnums, int ncols,
						double *col_nd, bool *have)
{
	bool		all = true;
	int			j;

	for (j = 0; j < ncols; j++)
	{
		have[j] = abt_column_sketch_ndistinct(RelationGetRelid(rel), attnums[j], &col_nd[j]);
		all &= have[j];
	}
	return all;
}

static Datum
chll_nd_result(FunctionCallInfo fcinfo, double est, const char *method, int nrows,
			   const ChllNdSummary *s, double table_rows,
			   const double *col_nd, const bool *have, int ncols)
{
	TupleDesc	desc;
	Datum		values[8];
	bool		nulls[8] = {0};
	Datum	   *nd = palloc(sizeof(Datum) * ncols);
	bool	   *ndnull = palloc(sizeof(bool) * ncols);
	Datum	   *src = palloc(sizeof(Datum) * ncols);
	int			dims[1] = {ncols};
	int			lbs[1] = {1};
	int			j;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "abtree_ndistinct must return a composite type");
	for (j = 0; j < ncols; j++)
	{
		nd[j] = Float8GetDatum(have[j] ? col_nd[j] : 0);
		ndnull[j] = !have[j];
		src[j] = CStringGetTextDatum(have[j] ? "sketch" : "none");
	}
	values[0] = Float8GetDatum(est);
	values[1] = CStringGetTextDatum(method);
	values[2] = Int32GetDatum(nrows);
	values[3] = Int64GetDatum((int64) s->d);
	values[4] = Int64GetDatum((int64) s->f1);
	values[5] = Float8GetDatum(table_rows);
	values[6] = PointerGetDatum(construct_md_array(nd, ndnull, 1, dims, lbs, FLOAT8OID,
												   sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[7] = PointerGetDatum(construct_array(src, ncols, TEXTOID, -1, false, TYPALIGN_INT));
	desc = BlessTupleDesc(desc);
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

Datum
abtree_ndistinct(PG_FUNCTION_ARGS)
{
	Relation	rel;
	AttrNumber *attnums;
	int			ncols,
				nrows,
				j;
	ChllNdMethod method;
	ChllNdCodes *codes;
	ChllNdScratch scratch;
	ChllNdSummary s;
	double		table_rows,
				est,
				keynd;
	const char *method_name;
	bool		has_key;
	double		col_nd[CHLL_ND_MAX_COLUMNS];
	bool		have[CHLL_ND_MAX_COLUMNS];
	int			cols[CHLL_ND_MAX_COLUMNS];

	abt_require_preload();
	rel = chll_nd_open_table(fcinfo, 0, AccessShareLock);
	/*
	 * The estimate and table_rows speak of every row, seen or not (the
	 * sample's query applies the policies, the sketches and the index's
	 * total do not).  abtree_ndistinct_freq reads through its query only.
	 */
	abt_refuse_under_rls(RelationGetRelid(rel));
	attnums = chll_nd_attnums_arg(fcinfo, 1, rel, &ncols);
	nrows = chll_nd_sample_rows_arg(fcinfo, 2);
	method = chll_nd_method_arg(fcinfo, 3);

	codes = chll_nd_sample(get_func_namespace(fcinfo->flinfo->fn_oid), rel, attnums, ncols, nrows, !PG_ARGISNULL(4),
						   PG_ARGISNULL(4) ? 0 : PG_GETARG_FLOAT8(4), &table_rows);
	if (!chll_nd_column_sketches(rel, attnums, ncols, col_nd, have))
		method = chll_nd_uncorrected(method);
	method_name = chll_nd_method_name(method);
	for (j = 0; j < ncols; j++)
		cols[j] = j;
	/* the corrected methods read sketches, a key sketch too */
	has_key = chll_nd_is_corrected(method) &&
		abt_key_sketch_ndistinct(RelationGetRelid(rel), attnums, ncols, &keynd);
	if (has_key)
		method_name = "key_sketch";
	chll_nd_scratch_init(&scratch, codes->nrows);
	est = chll_nd_estimate_cols(codes, cols, ncols, &scratch, table_rows,
								chll_nd_is_corrected(method) ? col_nd : NULL, method,
								has_key ? &keynd : NULL, &s);
	relation_close(rel, NoLock);
	return chll_nd_result(fcinfo, est, method_name, codes->nrows, &s, Max(table_rows, s.d),
						  col_nd, have, ncols);
}

/* ----------------------------------------------------------------
 * abtree_ndistinct_freq(tbl regclass, columns text[], algorithm text):
 * the frequency vector of all the table's rows over the columns.
 * ----------------------------------------------------------------
 */
Datum
abtree_ndistinct_freq(PG_FUNCTION_ARGS)
{
	Relation	rel = chll_nd_open_table(fcinfo, 0, AccessShareLock);
	int			ncols,
				nfreq,
				j;
	AttrNumber *attnums = chll_nd_attnums_arg(fcinfo, 1, rel, &ncols);
	char	   *algorithm;
	StringInfoData query;
	ChllNdCodes *codes;
	ChllNdScratch scratch;
	int			cols[CHLL_ND_MAX_COLUMNS];
	Datum	   *elems;

	chll_nd_not_null(fcinfo, 2, "algorithm");
	algorithm = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (strcmp(algorithm, "partition") != 0 && strcmp(algorithm, "reference") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown frequency-vector algorithm \"%s\"", algorithm),
				 errhint("Use 'partition' (Algorithm 6.3) or 'reference' (sort whole rows).")));
	initStringInfo(&query);
	chll_nd_select_list(&query, rel, attnums, ncols, false);
	codes = chll_nd_encode_query(query.data, 0, NULL, NULL, ncols);
	for (j = 0; j < ncols; j++)
		cols[j] = j;
	chll_nd_scratch_init(&scratch, codes->nrows);
	if (algorithm[0] == 'p')
		chll_nd_freq_partition(codes, cols, ncols, &scratch, scratch.freq);
	else
		chll_nd_freq_reference(codes, cols, ncols, &scratch, scratch.freq);
	nfreq = chll_nd_freq_length(scratch.freq, codes->nrows);
	elems = palloc(sizeof(Datum) * Max(nfreq, 1));
	for (j = 0; j < nfreq; j++)
		elems[j] = Int64GetDatum(scratch.freq[j]);
	relation_close(rel, NoLock);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, nfreq, INT8OID, sizeof(int64),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
