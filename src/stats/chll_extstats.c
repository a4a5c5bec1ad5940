/*-------------------------------------------------------------------------
 *
 * chll_extstats.c
 *	  abtree_ndistinct_store(): write sketch-corrected distinct counts into
 *	  a CREATE STATISTICS (ndistinct) object, where the planner reads them.
 *
 * PostgreSQL 15 to 18 have no hook in estimate_num_groups(); a GROUP BY
 * (or DISTINCT, or a hash join's bucket size) over several columns of one
 * table gets its group count from the MVNDistinct of a statistics object
 * covering them, pg_statistic_ext_data.stxdndistinct (selfuncs.c,
 * estimate_multivariate_ndistinct).  We compute SCBC for every
 * combination of two or more of the object's columns from one
 * TABLESAMPLE swr sample, serialize the items with PostgreSQL's own
 * statext_ndistinct_serialize() (so the bytes are exactly what ANALYZE
 * would write), and insert or update the object's row with stxdinherit =
 * false (a plain table's statistics).
 *
 * ANALYZE, including auto-analyze, would overwrite them: it rebuilds every
 * statistics object of the table.  But BuildRelationExtStatistics() skips
 * an object whose statistics target is 0 ("we just leave the existing
 * values around", extended_stats.c in 15 and 18), so unless asked not to,
 * we set the object's target to 0, as ALTER STATISTICS ... SET STATISTICS
 * 0 does.  The catch: other kinds in the same object (mcv, dependencies)
 * are then not refreshed either, so keep ndistinct in an object of its
 * own; we say so in a NOTICE.
 *
 *-------------------------------------------------------------------------
 */
#include "stats/stats.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_statistic_ext.h"
#include "catalog/pg_statistic_ext_data.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "statistics/extended_stats_internal.h"
#include "statistics/statistics.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "abtree_ext.h"

PG_FUNCTION_INFO_V1(abtree_ndistinct_store);

/* The statistics object named by argument 0, given as text or oid */
static Oid
chll_stat_oid_arg(FunctionCallInfo fcinfo)
{
	Oid			statoid;
	char	   *name;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the statistics object must not be NULL"),
				 errhint("Name a statistics object created with CREATE STATISTICS ... (ndistinct).")));
	if (get_fn_expr_argtype(fcinfo->flinfo, 0) == OIDOID)
	{
		statoid = PG_GETARG_OID(0);
		if (!SearchSysCacheExists1(STATEXTOID, ObjectIdGetDatum(statoid)))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("statistics object with OID %u does not exist", statoid),
					 errhint("pg_statistic_ext lists the statistics objects.")));
		return statoid;
	}
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
#if PG_VERSION_NUM >= 160000
	statoid = get_statistics_object_oid(stringToQualifiedNameList(name, NULL), true);
#else
	statoid = get_statistics_object_oid(stringToQualifiedNameList(name), true);
#endif
	if (!OidIsValid(statoid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("statistics object \"%s\" does not exist", name),
				 errhint("Create it with CREATE STATISTICS name (ndistinct) ON col1, col2 FROM tbl; \\dX lists the existing ones.")));
	return statoid;
}

/* Does the current user own the statistics object (or is superuser)? */
bool
chll_stat_is_owner(Oid statoid)
{
#if PG_VERSION_NUM >= 160000
	return object_ownercheck(StatisticExtRelationId, statoid, GetUserId());
#else
	return pg_statistics_object_ownercheck(statoid, GetUserId());
#endif
}

static void
chll_stat_check_owner(Oid statoid, const char *name)
{
	if (!chll_stat_is_owner(statoid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of statistics object \"%s\"", name),
				 errhint("Only the owner of a statistics object (or a superuser) may replace its data, as for ALTER STATISTICS.")));
}

/* Does the object's stxkind array hold kind? */
bool
chll_stat_has_kind(HeapTuple tup, char kind)
{
	bool		isnull;
	Datum		d = SysCacheGetAttr(STATEXTOID, tup, Anum_pg_statistic_ext_stxkind, &isnull);
	ArrayType  *arr;
	char	   *kinds;
	int			i;

	if (isnull)
		return false;
	arr = DatumGetArrayTypeP(d);
	kinds = (char *) ARR_DATA_PTR(arr);
	for (i = 0; i < ARR_DIMS(arr)[0]; i++)
	{
		if (kinds[i] == kind)
			return true;
	}
	return false;
}

/*
 * The next combination of k out of n indexes in lexicographic order, as
 * PostgreSQL's generator makes them; false after the last.
 */
static bool
chll_stat_next_combination(int *c, int k, int n)
{
	int			i = k - 1;

	while (i >= 0 && c[i] == n - k + i)
		i--;
	if (i < 0)
		return false;
	c[i]++;
	for (i++; i < k; i++)
		c[i] = c[i - 1] + 1;
	return true;
}

static int
chll_stat_num_combinations(int n)
{
	return (1 << n) - (n + 1);
}

/*
 * One item per combination of two or more of the sample's columns: SCBC
 * where every column of the combination has a sketch (with the count of
 * the key sketch of an abtree index on exactly those columns where there
 * is one), BC otherwise.
 */
static MVNDistinct *
chll_stat_build(Oid relid, const ChllNdCodes *codes, const AttrNumber *attnums,
				double table_rows, const double *col_nd, const bool *have)
{
	int			n = codes->ncols;
	MVNDistinct *mv = palloc0(offsetof(MVNDistinct, items) +
							  chll_stat_num_combinations(n) * sizeof(MVNDistinctItem));
	ChllNdScratch scratch;
	int			k,
				i;

	mv->magic = STATS_NDISTINCT_MAGIC;
	mv->type = STATS_NDISTINCT_TYPE_BASIC;
	chll_nd_scratch_init(&scratch, codes->nrows);
	for (k = 2; k <= n; k++)
	{
		int			c[STATS_MAX_DIMENSIONS];

		for (i = 0; i < k; i++)
			c[i] = i;
		do
		{
			MVNDistinctItem *item = &mv->items[mv->nitems++];
			double		nd[STATS_MAX_DIMENSIONS];
			double		keynd;
			bool		all = true,
						has_key;
			ChllNdSummary s;

			item->nattributes = k;
			item->attributes = palloc(sizeof(AttrNumber) * k);
			for (i = 0; i < k; i++)
			{
				item->attributes[i] = attnums[c[i]];
				nd[i] = col_nd[c[i]];
				all &= have[c[i]];
			}
			has_key = all && abt_key_sketch_ndistinct(relid, item->attributes, k, &keynd);
			/* the planner expects at least one group */
			item->ndistinct = Max(1.0, chll_nd_estimate_cols(codes, c, k, &scratch, table_rows,
															 all ? nd : NULL, CHLL_ND_SCBC,
															 has_key ? &keynd : NULL, &s));
		} while (chll_stat_next_combination(c, k, n));
	}
	return mv;
}

/* Insert or update the object's pg_statistic_ext_data row (not inherited) */
static void
chll_stat_write(Oid statoid, bytea *data)
{
	Relation	rel = table_open(StatisticExtDataRelationId, RowExclusiveLock);
	HeapTuple	old = SearchSysCache2(STATEXTDATASTXOID, ObjectIdGetDatum(statoid),
									  BoolGetDatum(false));
	Datum		values[Natts_pg_statistic_ext_data] = {0};
	bool		nulls[Natts_pg_statistic_ext_data];
	bool		repl[Natts_pg_statistic_ext_data] = {0};
	HeapTuple	tup;

	memset(nulls, true, sizeof(nulls));
	values[Anum_pg_statistic_ext_data_stxdndistinct - 1] = PointerGetDatum(data);
	nulls[Anum_pg_statistic_ext_data_stxdndistinct - 1] = false;
	repl[Anum_pg_statistic_ext_data_stxdndistinct - 1] = true;
	if (HeapTupleIsValid(old))
	{
		tup = heap_modify_tuple(old, RelationGetDescr(rel), values, nulls, repl);
		CatalogTupleUpdate(rel, &tup->t_self, tup);
		ReleaseSysCache(old);
	}
	else
	{
		values[Anum_pg_statistic_ext_data_stxoid - 1] = ObjectIdGetDatum(statoid);
		nulls[Anum_pg_statistic_ext_data_stxoid - 1] = false;
		values[Anum_pg_statistic_ext_data_stxdinherit - 1] = BoolGetDatum(false);
		nulls[Anum_pg_statistic_ext_data_stxdinherit - 1] = false;
		tup = heap_form_tuple(RelationGetDescr(rel), values, nulls);
		CatalogTupleInsert(rel, tup);
	}
	heap_freetuple(tup);
	table_close(rel, RowExclusiveLock);
}

/*
 * Statistics target 0, so that ANALYZE leaves the data alone: an int4 in
 * 15 and 16, a nullable int2 (NULL = default) from 17 on.
 */
static void
chll_stat_freeze(Oid statoid)
{
	Relation	rel = table_open(StatisticExtRelationId, RowExclusiveLock);
	HeapTuple	old = SearchSysCache1(STATEXTOID, ObjectIdGetDatum(statoid));
	Datum		values[Natts_pg_statistic_ext] = {0};
	bool		nulls[Natts_pg_statistic_ext] = {0};
	bool		repl[Natts_pg_statistic_ext] = {0};
	HeapTuple	tup;

	if (!HeapTupleIsValid(old))
		elog(ERROR, "cache lookup failed for statistics object %u", statoid);
#if PG_VERSION_NUM >= 170000
	values[Anum_pg_statistic_ext_stxstattarget - 1] = Int16GetDatum(0);
#else
	values[Anum_pg_statistic_ext_stxstattarget - 1] = Int32GetDatum(0);
#endif
	repl[Anum_pg_statistic_ext_stxstattarget - 1] = true;
	tup = heap_modify_tuple(old, RelationGetDescr(rel), values, nulls, repl);
	CatalogTupleUpdate(rel, &tup->t_self, tup);
	InvokeObjectPostAlterHook(StatisticExtRelationId, statoid, 0);
	ReleaseSysCache(old);
	heap_freetuple(tup);
	table_close(rel, RowExclusiveLock);
}

/* The object's columns, after checking it is one we can fill */
static AttrNumber *
chll_stat_columns(HeapTuple tup, const char *name, int *ncols)
{
	Form_pg_statistic_ext st = (Form_pg_statistic_ext) GETSTRUCT(tup);
	AttrNumber *attnums;
	int			i;

	if (!chll_stat_has_kind(tup, STATS_EXT_NDISTINCT))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("statistics object \"%s\" has no ndistinct statistics", name),
				 errhint("Create one with CREATE STATISTICS name (ndistinct) ON col1, col2 FROM tbl.")));
	if (!heap_attisnull(tup, Anum_pg_statistic_ext_stxexprs, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("statistics object \"%s\" covers expressions", name),
				 errhint("Only statistics objects on plain columns are supported; create one without the expressions.")));
	*ncols = st->stxkeys.dim1;
	attnums = palloc(sizeof(AttrNumber) * *ncols);
	for (i = 0; i < *ncols; i++)
		attnums[i] = st->stxkeys.values[i];
	return attnums;
}

/*
 * Fill statistics object statoid from a sample of nrows rows (seeded if
 * has_seed), setting its target to 0 if freeze; extnsp is the extension's
 * schema (for TABLESAMPLE swr).  Returns the number of combinations
 * written.  Also run after ANALYZE by chll_refill.c.
 */
int32
chll_stat_store(Oid statoid, int nrows, bool has_seed, double seed, bool freeze, Oid extnsp)
{
	HeapTuple	tup;
	char	   *name;
	Oid			relid;
	Relation	rel;
	AttrNumber *attnums;
	int			ncols,
				j;
	double		table_rows;
	double		col_nd[STATS_MAX_DIMENSIONS];
	bool		have[STATS_MAX_DIMENSIONS];
	ChllNdCodes *codes;
	MVNDistinct *mv;

	tup = SearchSysCache1(STATEXTOID, ObjectIdGetDatum(statoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for statistics object %u", statoid);
	name = pstrdup(NameStr(((Form_pg_statistic_ext) GETSTRUCT(tup))->stxname));
	relid = ((Form_pg_statistic_ext) GETSTRUCT(tup))->stxrelid;
	chll_stat_check_owner(statoid, name);
	attnums = chll_stat_columns(tup, name, &ncols);
	if (freeze && (chll_stat_has_kind(tup, STATS_EXT_MCV) ||
				   chll_stat_has_kind(tup, STATS_EXT_DEPENDENCIES)))
		ereport(NOTICE,
				(errmsg("ANALYZE will no longer refresh the other kinds of statistics object \"%s\"", name),
				 errhint("Keep ndistinct in a statistics object of its own.")));
	ReleaseSysCache(tup);

	/* the lock ANALYZE takes: no ANALYZE writes the object meanwhile */
	rel = relation_open(relid, ShareUpdateExclusiveLock);
	if (rel->rd_rel->relkind != RELKIND_RELATION && rel->rd_rel->relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("statistics object \"%s\" is on \"%s\", which is not a plain table",
						name, RelationGetRelationName(rel)),
				 errhint("Partitioned tables are not supported; create the statistics object on each partition.")));
	codes = chll_nd_sample(extnsp, rel, attnums, ncols, nrows, has_seed, seed, &table_rows);
	for (j = 0; j < ncols; j++)
		have[j] = abt_column_sketch_ndistinct(relid, attnums[j], &col_nd[j]);
	mv = chll_stat_build(relid, codes, attnums, table_rows, col_nd, have);
	chll_stat_write(statoid, statext_ndistinct_serialize(mv));
	if (freeze)
		chll_stat_freeze(statoid);
	CommandCounterIncrement();
	relation_close(rel, NoLock);
	return (int32) mv->nitems;
}

/*
 * abtree_ndistinct_store(stat text | oid, sample_rows int, seed float8,
 *		keep_across_analyze bool) returns the number of combinations written.
 */
Datum
abtree_ndistinct_store(PG_FUNCTION_ARGS)
{
	Oid			statoid;
	int			nrows,
				j;

	abt_require_preload();
	statoid = chll_stat_oid_arg(fcinfo);
	for (j = 1; j <= 3; j++)
	{
		if (PG_ARGISNULL(j) && j != 2)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be NULL", j == 1 ? "sample_rows" : "keep_across_analyze"),
					 errhint("Leave the argument out to get its default.")));
	}
	nrows = PG_GETARG_INT32(1);
	if (nrows < CHLL_ND_MIN_SAMPLE || nrows > CHLL_ND_MAX_SAMPLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sample_rows must be between %d and %d, not %d",
						CHLL_ND_MIN_SAMPLE, CHLL_ND_MAX_SAMPLE, nrows),
				 errhint("Smaller samples make the estimators unreliable; 30000, the default, is what ANALYZE samples at the default statistics target.")));
	PG_RETURN_INT32(chll_stat_store(statoid, nrows, !PG_ARGISNULL(2),
									PG_ARGISNULL(2) ? 0 : PG_GETARG_FLOAT8(2),
									PG_GETARG_BOOL(3),
									get_func_namespace(fcinfo->flinfo->fn_oid)));
}
