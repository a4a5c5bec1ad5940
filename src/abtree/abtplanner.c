/*-------------------------------------------------------------------------
 *
 * abtplanner.c
 *	  Current column statistics for the planner from an abtree index.
 *
 * With abtree.range_selectivity on, the planner's statistics of a column
 * that is the first key column of an unweighted abtree index are taken from
 * the index instead of from the last ANALYZE alone (get_relation_stats_hook):
 *
 *  - the histogram is rebuilt from the index: its bounds are the keys at
 *    equally spaced ranks, each found by one weight-guided descent (the
 *    downlink weights are counts), so range estimates follow inserts made
 *    since ANALYZE, also outside its old histogram;
 *  - the fraction of NULLs and the frequencies of ANALYZE's most common
 *    values are recounted, each by two descents (abt_range_weight);
 *  - everything else (width, correlation) stays ANALYZE's.
 *
 * With abtree.sketch_ndistinct on (the default), n_distinct comes from the
 * distinct-value sketch of an abtree index that has the column as a key
 * column (abtsketch.c), for any such column and also for columns ANALYZE
 * has not seen yet (a tuple with no slots is made for them).
 *
 * The counts are of index entries (README, "Range aggregates"), which is
 * what an estimate wants.  No histogram is made for a column that ANALYZE
 * has never seen, for partial or weighted indexes, or when the index's
 * ordering is not the column type's default one.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

bool		abt_range_selectivity = false;
bool		abt_sketch_ndistinct = true;

/* reltuples as the planner's estimates read it (-1: never vacuumed or analyzed) */
static double
abt_reltuples(Oid relid)
{
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	double		reltuples = -1;

	if (HeapTupleIsValid(tp))
	{
		reltuples = ((Form_pg_class) GETSTRUCT(tp))->reltuples;
		ReleaseSysCache(tp);
	}
	return reltuples;
}

static get_relation_stats_hook_type prev_get_relation_stats_hook = NULL;

/*
 * One planning asks for a column's statistics several times (each clause,
 * each index's cost estimate): recounts are kept for the rest of the
 * statement, a few columns at a time.
 */
#define ABT_STATS_CACHE_SIZE 8

typedef struct AbtStatsCacheEntry
{
	Oid			relid;
	AttrNumber	attnum;
	TimestampTz stmt_start;		/* of the statement that recounted */
	HeapTuple	tuple;			/* in TopMemoryContext; NULL: nothing to say */
} AbtStatsCacheEntry;

static AbtStatsCacheEntry abt_stats_cache[ABT_STATS_CACHE_SIZE];
static int	abt_stats_cache_next = 0;

/*
 * The first key column of the valid entry at weight rank r (from 0) in
 * index order, copied.  False if the tree has fewer entries.  Concurrent
 * changes make the answer approximate, which is all a statistic needs.
 */
static bool
abt_key_at_rank(Relation rel, uint64 r, Datum *value, bool *isnull)
{
	bool		weighted = abt_index_info(rel)->weighted;
	Buffer		buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);

	while (BufferIsValid(buf))
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		OffsetNumber off;

		for (off = AbtFirstDataOffset(opaque); off <= PageGetMaxOffsetNumber(page); off++)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
			uint64		w = AbtPageIsLeaf(opaque) ? abt_leaf_effective_weight(itup, weighted)
				: AbtPivotGetAux(itup)->weight;

			if (r < w)
				break;
			r -= w;
		}
		if (off > PageGetMaxOffsetNumber(page))
		{
			/* not on this page: moved right by a split, or past the end */
			if (AbtPageIsRightmost(opaque))
				break;
			buf = abt_relandgetbuf(rel, buf, opaque->next);
			continue;
		}
		if (AbtPageIsLeaf(opaque))
		{
			Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), 0);
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

			*value = index_getattr(itup, 1, RelationGetDescr(rel), isnull);
			if (!*isnull)
				*value = datumCopy(*value, att->attbyval, att->attlen);
			UnlockReleaseBuffer(buf);
			return true;
		}
		buf = abt_relandgetbuf(rel, buf,
							   AbtDownlinkGetChild((IndexTuple) PageGetItem(page,
																			PageGetItemId(page, off))));
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	return false;
}

/*
 * Does the index order its first column like the type's default btree
 * opclass, in the column's collation, so that its ranks make a histogram
 * the planner can use with the type's "<"?
 */
static bool
abt_index_usable_for_stats(Relation index, Relation heap, const void *arg, int *keyno)
{
	AttrNumber	attnum = *(const AttrNumber *) arg;
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(heap), attnum - 1);
	Oid			opclass;
	Oid			btfamily;

	if (index->rd_index->indkey.values[0] != attnum ||
		abt_index_info(index)->weighted ||
		index->rd_indcollation[0] != att->attcollation)
		return false;
	opclass = GetDefaultOpClass(att->atttypid, BTREE_AM_OID);
	if (!OidIsValid(opclass))
		return false;
	btfamily = get_opclass_family(opclass);
	*keyno = 0;
	return get_opfamily_proc(btfamily, att->atttypid, att->atttypid, BTORDER_PROC) ==
		get_opfamily_proc(index->rd_opfamily[0], att->atttypid, att->atttypid, 1);
}

/*
 * The first valid, non-partial abtree index of the table that test accepts
 * (given arg: the column, say; test sets the key column, from 0), opened
 * with AccessShareLock; NULL if there is none.  Partial indexes describe
 * only some rows, so they never stand for the table's columns.
 */
Relation
abt_find_index(Oid relid, AbtIndexTest test, const void *arg, int *keyno)
{
	Relation	heap = relation_open(relid, AccessShareLock);
	Relation	found = NULL;
	ListCell   *lc;

	foreach(lc, RelationGetIndexList(heap))
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);

		if (index->rd_indam->ambuild == abtbuild &&
			index->rd_index->indisvalid && index->rd_index->indisready &&
			heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL) &&
			test(index, heap, arg, keyno))
		{
			found = index;
			break;
		}
		index_close(index, AccessShareLock);
	}
	relation_close(heap, AccessShareLock);
	return found;
}

/* The histogram: nbounds keys at equal ranks among the non-NULL entries. */
static Datum
abt_histogram(Relation index, Form_pg_attribute att, uint64 first, uint64 n, int nbounds)
{
	bool		desc = (index->rd_indoption[0] & INDOPTION_DESC) != 0;
	Datum	   *bounds = palloc(sizeof(Datum) * nbounds);
	int			nfound = 0;
	int			i;

	for (i = 0; i < nbounds; i++)
	{
		uint64		rank = first + (uint64) ((double) (n - 1) * i / (nbounds - 1));
		bool		isnull;

		if (abt_key_at_rank(index, rank, &bounds[nfound], &isnull) && !isnull)
			nfound++;
	}
	/* the planner wants them ascending by "<" */
	if (desc)
		for (i = 0; i < nfound / 2; i++)
		{
			Datum		tmp = bounds[i];

			bounds[i] = bounds[nfound - 1 - i];
			bounds[nfound - 1 - i] = tmp;
		}
	return PointerGetDatum(construct_array(bounds, nfound, att->atttypid, att->attlen,
										   att->attbyval, att->attalign));
}

/* Slot k's columns of pg_statistic (kinds, operators, ... are consecutive). */
#define ABT_STA(anum, k)	((anum) - 1 + (k))

/* The new frequencies of the slot's most common values, counted in the index. */
static Datum
abt_mcv_numbers(Relation index, Form_pg_attribute att, AttStatsSlot *sslot, uint64 total)
{
	Datum	   *freqs = palloc(sizeof(Datum) * sslot->nvalues);
	int			i;

	for (i = 0; i < sslot->nvalues; i++)
	{
		Datum		v = sslot->values[i];

		freqs[i] = Float4GetDatum((float4) ((double) abt_range_weight(index, att->atttypid,
																	  v, false, true,
																	  v, false, true, NULL) / total));
	}
	return PointerGetDatum(construct_array(freqs, sslot->nvalues, FLOAT4OID,
										   sizeof(float4), true, TYPALIGN_INT));
}

/*
 * ANALYZE's statistics tuple for the column, with the histogram, the NULL
 * fraction and the MCV frequencies made current from the index; NULL if
 * the index has too little to say.
 */
static HeapTuple
abt_current_stats(HeapTuple old, Relation index, Form_pg_attribute att)
{
	Form_pg_statistic st = (Form_pg_statistic) GETSTRUCT(old);
	Datum		values[Natts_pg_statistic];
	bool		nulls[Natts_pg_statistic];
	bool		replace[Natts_pg_statistic] = {0};
	uint64		total = abt_total_weight(index);
	uint64		nonnull = abt_range_weight(index, att->atttypid, (Datum) 0, true, true,
										   (Datum) 0, true, true, NULL);
	uint64		first;
	int			hist_slot = -1;
	int			mcv_slot = -1;
	int			nbounds = 101;
	int			k;
	AttStatsSlot sslot;
	Relation	statrel;
	HeapTuple	result;

	if (total == 0 || nonnull < 2)
		return NULL;
	for (k = STATISTIC_NUM_SLOTS - 1; k >= 0; k--)
	{
		int16		kind = (&st->stakind1)[k];

		if (kind == STATISTIC_KIND_MCV)
			mcv_slot = k;
		if (kind == STATISTIC_KIND_HISTOGRAM || (kind == 0 && (hist_slot < 0 ||
															   (&st->stakind1)[hist_slot] == 0)))
			hist_slot = k;
	}
	if (hist_slot < 0)
		return NULL;
	if (get_attstatsslot(&sslot, old, STATISTIC_KIND_HISTOGRAM, InvalidOid, ATTSTATSSLOT_VALUES))
	{
		nbounds = Max(sslot.nvalues, 2);
		free_attstatsslot(&sslot);
	}
	/* NULLs come first or last in index order */
	first = (index->rd_indoption[0] & INDOPTION_NULLS_FIRST) ? total - nonnull : 0;

	statrel = table_open(StatisticRelationId, AccessShareLock);
	heap_deform_tuple(old, RelationGetDescr(statrel), values, nulls);

	values[Anum_pg_statistic_stanullfrac - 1] = Float4GetDatum((float4) (total - nonnull) / total);
	replace[Anum_pg_statistic_stanullfrac - 1] = true;

	values[ABT_STA(Anum_pg_statistic_stakind1, hist_slot)] = Int16GetDatum(STATISTIC_KIND_HISTOGRAM);
	values[ABT_STA(Anum_pg_statistic_staop1, hist_slot)] =
		ObjectIdGetDatum(lookup_type_cache(att->atttypid, TYPECACHE_LT_OPR)->lt_opr);
	values[ABT_STA(Anum_pg_statistic_stacoll1, hist_slot)] = ObjectIdGetDatum(att->attcollation);
	nulls[ABT_STA(Anum_pg_statistic_stanumbers1, hist_slot)] = true;
	values[ABT_STA(Anum_pg_statistic_stavalues1, hist_slot)] =
		abt_histogram(index, att, first, nonnull, nbounds);
	nulls[ABT_STA(Anum_pg_statistic_stavalues1, hist_slot)] = false;
	replace[ABT_STA(Anum_pg_statistic_stakind1, hist_slot)] = true;
	replace[ABT_STA(Anum_pg_statistic_staop1, hist_slot)] = true;
	replace[ABT_STA(Anum_pg_statistic_stacoll1, hist_slot)] = true;
	replace[ABT_STA(Anum_pg_statistic_stanumbers1, hist_slot)] = true;
	replace[ABT_STA(Anum_pg_statistic_stavalues1, hist_slot)] = true;

	if (mcv_slot >= 0 &&
		get_attstatsslot(&sslot, old, STATISTIC_KIND_MCV, InvalidOid,
						 ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
	{
		values[ABT_STA(Anum_pg_statistic_stanumbers1, mcv_slot)] =
			abt_mcv_numbers(index, att, &sslot, total);
		replace[ABT_STA(Anum_pg_statistic_stanumbers1, mcv_slot)] = true;
		free_attstatsslot(&sslot);
	}

	result = heap_modify_tuple(old, RelationGetDescr(statrel), values, nulls, replace);
	table_close(statrel, AccessShareLock);
	return result;
}

/* May the user see every row of the column (so any operator may see stats)? */
static bool
abt_stats_acl_ok(Oid relid, AttrNumber attnum)
{
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		return false;
	return pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck(relid, attnum, GetUserId(), ACL_SELECT) == ACLCHECK_OK;
}

/*
 * A statistics tuple for a column ANALYZE has not seen, for the sketch's
 * n_distinct to go in: the fraction of NULLs from the sketch's count of
 * non-NULL values against reltuples (if known), the type's typical width,
 * no slots.
 */
static HeapTuple
abt_blank_stats(Oid relid, AttrNumber attnum, uint64 nonnull)
{
	Relation	heap = relation_open(relid, AccessShareLock);
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(heap), attnum - 1);
	double		reltuples = heap->rd_rel->reltuples;
	Datum		values[Natts_pg_statistic] = {0};
	bool		nulls[Natts_pg_statistic] = {0};
	Relation	statrel;
	HeapTuple	tuple;
	int			k;

	values[Anum_pg_statistic_starelid - 1] = ObjectIdGetDatum(relid);
	values[Anum_pg_statistic_staattnum - 1] = Int16GetDatum(attnum);
	values[Anum_pg_statistic_stainherit - 1] = BoolGetDatum(false);
	values[Anum_pg_statistic_stanullfrac - 1] =
		Float4GetDatum(reltuples > 0 ? Max(0.0, 1.0 - nonnull / reltuples) : 0.0);
	values[Anum_pg_statistic_stawidth - 1] =
		Int32GetDatum(get_typavgwidth(att->atttypid, att->atttypmod));
	values[Anum_pg_statistic_stadistinct - 1] = Float4GetDatum(0);
	for (k = 0; k < STATISTIC_NUM_SLOTS; k++)
	{
		values[ABT_STA(Anum_pg_statistic_stakind1, k)] = Int16GetDatum(0);
		values[ABT_STA(Anum_pg_statistic_staop1, k)] = ObjectIdGetDatum(InvalidOid);
		values[ABT_STA(Anum_pg_statistic_stacoll1, k)] = ObjectIdGetDatum(InvalidOid);
		nulls[ABT_STA(Anum_pg_statistic_stanumbers1, k)] = true;
		nulls[ABT_STA(Anum_pg_statistic_stavalues1, k)] = true;
	}
	statrel = table_open(StatisticRelationId, AccessShareLock);
	tuple = heap_form_tuple(RelationGetDescr(statrel), values, nulls);
	table_close(statrel, AccessShareLock);
	relation_close(heap, AccessShareLock);
	return tuple;
}

/*
 * n_distinct from a sketch, in ANALYZE's convention: a count, or minus a
 * fraction of the rows when it is more than a tenth of them (so that the
 * planner scales it as the table grows).
 */
static float4
abt_sketch_stadistinct(Oid relid, double ndistinct)
{
	double		reltuples = abt_reltuples(relid);

	if (reltuples > 0 && ndistinct > 0.1 * reltuples)
		return (float4) -Min(1.0, ndistinct / reltuples);
	return (float4) Max(1.0, rint(ndistinct));
}

/*
 * The column's statistics as the index knows them, or NULL if it adds
 * nothing to ANALYZE's; palloc'd in the caller's context.
 */
static HeapTuple
abt_recount(Oid relid, AttrNumber attnum)
{
	HeapTuple	old = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
									  Int16GetDatum(attnum), BoolGetDatum(false));
	HeapTuple	current = NULL;
	double		ndistinct;
	uint64		nonnull;

	if (abt_range_selectivity && HeapTupleIsValid(old))
	{
		int			keyno;
		Relation	index = abt_find_index(relid, abt_index_usable_for_stats, &attnum,
										   &keyno);

		if (index)
		{
			Relation	heap = relation_open(relid, AccessShareLock);

			current = abt_current_stats(old, index,
										TupleDescAttr(RelationGetDescr(heap), attnum - 1));
			relation_close(heap, AccessShareLock);
			index_close(index, AccessShareLock);
		}
	}
	if (abt_sketch_ndistinct && abt_column_sketch(relid, attnum, &ndistinct, &nonnull) &&
		nonnull > 0)
	{
		if (current == NULL)
			current = HeapTupleIsValid(old) ? heap_copytuple(old) :
				abt_blank_stats(relid, attnum, nonnull);
		((Form_pg_statistic) GETSTRUCT(current))->stadistinct =
			abt_sketch_stadistinct(relid, ndistinct);
	}
	if (HeapTupleIsValid(old))
		ReleaseSysCache(old);
	return current;
}

/* abt_recount, once per statement and column. */
static HeapTuple
abt_recount_cached(Oid relid, AttrNumber attnum)
{
	TimestampTz now = GetCurrentStatementStartTimestamp();
	AbtStatsCacheEntry *e;
	HeapTuple	tuple;
	MemoryContext old;
	int			i;

	for (i = 0; i < ABT_STATS_CACHE_SIZE; i++)
	{
		e = &abt_stats_cache[i];
		if (e->relid == relid && e->attnum == attnum && e->stmt_start == now)
			return e->tuple ? heap_copytuple(e->tuple) : NULL;
	}
	e = &abt_stats_cache[abt_stats_cache_next];
	abt_stats_cache_next = (abt_stats_cache_next + 1) % ABT_STATS_CACHE_SIZE;
	if (e->tuple)
		heap_freetuple(e->tuple);
	e->relid = InvalidOid;
	e->tuple = NULL;
	tuple = abt_recount(relid, attnum);
	if (tuple)
	{
		old = MemoryContextSwitchTo(TopMemoryContext);
		e->tuple = heap_copytuple(tuple);
		MemoryContextSwitchTo(old);
	}
	e->relid = relid;
	e->attnum = attnum;
	e->stmt_start = now;
	return tuple;
}

static bool
abt_relation_stats(PlannerInfo *root, RangeTblEntry *rte, AttrNumber attnum,
				   VariableStatData *vardata)
{
	if ((abt_range_selectivity || abt_sketch_ndistinct) &&
		rte->rtekind == RTE_RELATION && !rte->inh && attnum > 0)
	{
		HeapTuple	current = abt_recount_cached(rte->relid, attnum);

		if (current)
		{
			vardata->statsTuple = current;
			vardata->freefunc = heap_freetuple;
			vardata->acl_ok = abt_stats_acl_ok(rte->relid, attnum);
			return true;
		}
	}
	if (prev_get_relation_stats_hook)
		return prev_get_relation_stats_hook(root, rte, attnum, vardata);
	return false;
}

void
abt_install_planner_hooks(void)
{
	prev_get_relation_stats_hook = get_relation_stats_hook;
	get_relation_stats_hook = abt_relation_stats;
}
