/*-------------------------------------------------------------------------
 *
 * abtrange.c
 *	  Range aggregates from downlink weights: the total weight (for an
 *	  unweighted index, the number) of the entries whose first key column
 *	  lies in a range, by two root-to-leaf descents instead of a scan
 *	  (paper 004 does range sums the same way on its augmented trees).
 *
 * prefix(b) is the weight of the entries before position b in index order;
 * a range is prefix(end) - prefix(start).  One descent computes it: on
 * each internal page, the weights of the downlinks before the one followed;
 * on the leaf, the entries before the position; and the whole weight of
 * every page passed when moving right (a split moved our key right since
 * the parent was read; everything on the page passed is before it).
 *
 * What it counts: index entries that are valid (their insert's weight
 * pass finished), whatever their heap tuples' visibility: rows of running
 * or aborted transactions and dead rows not yet vacuumed are in, and
 * downlinks that overcount (after a crash, before the next VACUUM) count
 * their excess.  Exact for the index at rest after VACUUM.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "mvstore/mvstore.h"
#include "access/relation.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/*
 * Sum of the weights of the items of page before offset end; as rd's
 * snapshot sees them if rd is given (src/mvstore/README).
 */
static uint64
abt_weight_before(Page page, OffsetNumber end, bool weighted, MvsReader *rd)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber off;
	uint64		sum = 0;

	for (off = AbtFirstDataOffset(opaque); off < end; off++)
	{
		sum += abt_item_seen_weight(rd, (IndexTuple) PageGetItem(page, PageGetItemId(page, off)),
							   AbtPageIsLeaf(opaque), weighted);
	}
	return sum;
}

#define abt_weight_of_page(page, weighted, rd) \
	abt_weight_before(page, OffsetNumberNext(PageGetMaxOffsetNumber(page)), weighted, rd)

/* The whole tree's weight. */
static uint64
abt_root_weight(Relation rel, MvsReader *rd)
{
	Buffer		buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
	uint64		total;

	if (!BufferIsValid(buf))
		return 0;
	total = abt_weight_of_page(BufferGetPage(buf), abt_index_info(rel)->weighted, rd);
	UnlockReleaseBuffer(buf);
	return total;
}

/* The weight of the entries before the position of key in index order. */
static uint64
abt_prefix_weight(Relation rel, AbtKey *key, MvsReader *rd)
{
	bool		weighted = abt_index_info(rel)->weighted;
	Buffer		buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
	uint64		prefix = 0;

	if (!BufferIsValid(buf))
		return 0;
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		OffsetNumber off;

		CHECK_FOR_INTERRUPTS();
		if (abt_key_beyond_page(rel, key, page))
		{
			prefix += abt_weight_of_page(page, weighted, rd);
			buf = abt_relandgetbuf(rel, buf, opaque->next);
			continue;
		}
		if (AbtPageIsLeaf(opaque))
		{
			prefix += abt_weight_before(page, abt_binsrch_leaf(rel, key, page), weighted, rd);
			UnlockReleaseBuffer(buf);
			return prefix;
		}
		off = abt_binsrch_internal(rel, key, page);
		prefix += abt_weight_before(page, off, weighted, rd);
		buf = abt_relandgetbuf(rel, buf,
							   AbtDownlinkGetChild((IndexTuple) PageGetItem(page,
																			PageGetItemId(page, off))));
	}
}

/*
 * A position on the first key column: before (nextkey = false) or after
 * (true) every entry equal to value; a NULL value stands for the NULLs.
 */
void
abt_position_key(Relation rel, AbtKey *key, Datum value, bool isnull, Oid type, bool nextkey)
{
	Oid			proc;

	abt_key_init(rel, key);
	key->natts = 1;
	key->nextkey = nextkey;
	key->attrs[0].isnull = isnull;
	if (isnull)
		return;
	proc = get_opfamily_proc(rel->rd_opfamily[0], rel->rd_opcintype[0], type, 1);
	if (!OidIsValid(proc))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot compare the first column of index \"%s\" (type %s) with %s",
						RelationGetRelationName(rel), format_type_be(rel->rd_opcintype[0]),
						format_type_be(type)),
				 errhint("Cast the bounds to the column's type.")));
	key->attrs[0].value = value;
	abt_key_set_proc(&key->attrs[0], proc);
}

/*
 * The range of entries whose first key column is between lo and hi (NULL:
 * unbounded on that side; NULL keys are never in a range), as positioned
 * keys in index order: out->lo is where the range starts, out->hi where it
 * stops.  In index order a range starts at its smaller bound on an ASC
 * column and at its larger one on a DESC column, and an open side stops at
 * the NULLs.
 */
void
abt_range_bounds(Relation rel, Oid type, Datum lo, bool lo_null, bool lo_incl,
				 Datum hi, bool hi_null, bool hi_incl, AbtSampleRange *out)
{
	bool		desc = (rel->rd_indoption[0] & INDOPTION_DESC) != 0;
	bool		nulls_first = (rel->rd_indoption[0] & INDOPTION_NULLS_FIRST) != 0;

	/* the bound met first in index order, and whether it is included */
	Datum		first = desc ? hi : lo;
	bool		first_null = desc ? hi_null : lo_null;
	bool		first_incl = desc ? hi_incl : lo_incl;
	Datum		last = desc ? lo : hi;
	bool		last_null = desc ? lo_null : hi_null;
	bool		last_incl = desc ? lo_incl : hi_incl;

	out->has_lo = !first_null || nulls_first;
	if (!first_null)
		abt_position_key(rel, &out->lo, first, false, type, !first_incl);
	else if (nulls_first)
		abt_position_key(rel, &out->lo, (Datum) 0, true, type, true);

	out->has_hi = !last_null || !nulls_first;
	if (!last_null)
		abt_position_key(rel, &out->hi, last, false, type, last_incl);
	else if (!nulls_first)
		abt_position_key(rel, &out->hi, (Datum) 0, true, type, false);
}

/* The weight of the entries in the range of abt_range_bounds(). */
uint64
abt_range_weight(Relation rel, Oid type, Datum lo, bool lo_null, bool lo_incl,
				 Datum hi, bool hi_null, bool hi_incl, struct MvsReader *rd)
{
	AbtSampleRange *range = palloc(sizeof(AbtSampleRange));
	uint64		start;
	uint64		end;

	abt_batch_flush_rel(rel);
	abt_range_bounds(rel, type, lo, lo_null, lo_incl, hi, hi_null, hi_incl, range);
	start = range->has_lo ? abt_prefix_weight(rel, &range->lo, rd) : 0;
	end = range->has_hi ? abt_prefix_weight(rel, &range->hi, rd) : abt_root_weight(rel, rd);
	pfree(range);
	return end > start ? end - start : 0;
}

/* A uint64 as numeric, also above the int8 range. */
static Datum
abt_uint64_numeric(uint64 v)
{
	Datum		half = DirectFunctionCall1(int8_numeric, Int64GetDatum((int64) (v >> 1)));
	Datum		twice = DirectFunctionCall2(numeric_add, half, half);

	return DirectFunctionCall2(numeric_add, twice,
							   DirectFunctionCall1(int8_numeric, Int64GetDatum((int64) (v & 1))));
}

/* A bound of abtree_range_weight as SQL text: NULL, or a typed literal. */
static char *
abt_bound_sql(FunctionCallInfo fcinfo, int arg, Oid type)
{
	Oid			out;
	bool		isvarlena;

	if (PG_ARGISNULL(arg))
		return psprintf("NULL::%s", format_type_be_qualified(type));
	getTypeOutputInfo(type, &out, &isvarlena);
	return psprintf("%s::%s", quote_literal_cstr(OidOutputFunctionCall(out, PG_GETARG_DATUM(arg))),
					format_type_be_qualified(type));
}

/*
 * abtree_range_weight on the index of a Citus table: the sum of the same
 * call on every shard's index (../citus.c), each checking the caller's
 * privileges and policies on its worker as here.
 */
static Datum
abt_range_weight_over_shards(FunctionCallInfo fcinfo, Oid type, bool visible_only)
{
	Relation	index = abt_open_am_index_shell(PG_GETARG_OID(0), AccessShareLock, "abtree",
												ACL_SELECT);
	Oid			heapoid = IndexGetRelation(RelationGetRelid(index), false);
	char	   *call;
	Datum		sum;
	bool		isnull;

	call = psprintf("SELECT %s.abtree_range_weight(%%s::pg_catalog.regclass, %s, %s, %s, %s, %s)",
					quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid))),
					abt_bound_sql(fcinfo, 1, type), abt_bound_sql(fcinfo, 2, type),
					PG_GETARG_BOOL(3) ? "true" : "false", PG_GETARG_BOOL(4) ? "true" : "false",
					visible_only ? "true" : "false");
	sum = abt_citus_fold_over_shards(index, heapoid, call, NUMERICOID, numeric_add, &isnull);
	relation_close(index, AccessShareLock);
	if (isnull)
		PG_RETURN_DATUM(abt_uint64_numeric(0));
	PG_RETURN_DATUM(sum);
}

/*
 * The call's range (arguments 1-4) in one index; visible_only: through the
 * weight store, as if abtree.mvstore were on (the caller asked for it).
 */
static uint64
abt_range_weight_of(FunctionCallInfo fcinfo, Relation rel, Oid type, bool visible_only)
{
	MvsReader	rd;

	abt_refuse_invalid(rel);
	if (visible_only)
	{
		abt_refuse_newer_build(rel, GetActiveSnapshot());
		mvs_reader_init(&rd, rel, GetActiveSnapshot());
		rd.active = true;
	}
	return abt_range_weight(rel, type,
							PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1), PG_ARGISNULL(1),
							PG_GETARG_BOOL(3),
							PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2), PG_ARGISNULL(2),
							PG_GETARG_BOOL(4), visible_only ? &rd : NULL);
}

/*
 * abtree_range_weight on a partitioned abtree index: the sum over its leaf
 * partitions' indexes, each as the same call on it would answer, once they
 * are known to weigh rows alike (an index made before this check could mix
 * counts with weights).  *partitioned is false if index is not a
 * partitioned abtree index.
 */
static Datum
abt_range_weight_over_partitions(FunctionCallInfo fcinfo, Oid type, bool visible_only,
								 bool *partitioned)
{
	List	   *indexes = abt_open_partition_indexes(PG_GETARG_OID(0), AccessShareLock);
	Datum		sum = abt_uint64_numeric(0);
	ListCell   *lc;

	*partitioned = indexes != NIL;
	if (*partitioned)
		abt_check_partition_weighting(PG_GETARG_OID(0));
	foreach(lc, indexes)
	{
		Relation	rel = (Relation) lfirst(lc);
		uint64		w = abt_range_weight_of(fcinfo, rel, type, visible_only);

		sum = DirectFunctionCall2(numeric_add, sum, abt_uint64_numeric(w));
		index_close(rel, AccessShareLock);
	}
	return sum;
}

PG_FUNCTION_INFO_V1(abtree_range_weight);

/*
 * abtree_range_weight(index, lo, hi, lo_inclusive, hi_inclusive,
 *                     visible_only) → numeric
 *
 * visible_only: as the statement's snapshot sees the index, through the
 * weight store: inserts of transactions the snapshot cannot see are left
 * out.  Still counted: rows deleted (or inserts aborted) before the
 * snapshot, until VACUUM removes their entries.
 */
Datum
abtree_range_weight(PG_FUNCTION_ARGS)
{
	Relation	rel;
	Oid			type;
	uint64		w;
	bool		visible_only = PG_NARGS() > 5 && !PG_ARGISNULL(5) && PG_GETARG_BOOL(5);

	/* only the weight store (shared memory) needs the preload */
	if (visible_only)
		abt_require_preload();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("abtree_range_weight: index must not be null"),
				 errhint("Pass the abtree index, for example 'orders_placed_abtree'::regclass.")));
	if (PG_ARGISNULL(3) || PG_ARGISNULL(4) || (PG_NARGS() > 5 && PG_ARGISNULL(5)))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("abtree_range_weight: lo_inclusive, hi_inclusive and visible_only must not be null"),
				 errhint("Pass true or false; a NULL bound (lo or hi) is what makes a side open.")));
	type = get_fn_expr_argtype(fcinfo->flinfo, 1);
	if (!OidIsValid(type))
		type = get_fn_expr_argtype(fcinfo->flinfo, 2);
	if (abt_citus_partmethod(IndexGetRelation(PG_GETARG_OID(0), true)) != 0)
		return abt_range_weight_over_shards(fcinfo, type, visible_only);
	if (get_rel_relkind(PG_GETARG_OID(0)) == RELKIND_PARTITIONED_INDEX)
	{
		bool		partitioned;
		Datum		sum = abt_range_weight_over_partitions(fcinfo, type, visible_only,
														   &partitioned);

		if (partitioned)
			PG_RETURN_DATUM(sum);
	}
	rel = abt_open_index_for_reading(PG_GETARG_OID(0), AccessShareLock);
	w = abt_range_weight_of(fcinfo, rel, type, visible_only);
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(abt_uint64_numeric(w));
}
