/*-------------------------------------------------------------------------
 *
 * mvs_sql.c
 *	  SQL functions of the weight store.
 *
 *	  abtree_mvstore()              one row of sizes and counters (the view)
 *	  abtree_mvstore_collect()      run a collection now
 *	  abtree_mvstore_check(index)   the invariant, as this snapshot sees it
 *
 *-------------------------------------------------------------------------
 */
#include "mvs_internal.h"

#include "abtree/abtree.h"
#include "access/relation.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(abtree_mvstore);
PG_FUNCTION_INFO_V1(abtree_mvstore_collect);
PG_FUNCTION_INFO_V1(abtree_mvstore_check);

#define MVS_STAT_COLS	14

Datum
abtree_mvstore(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		v[MVS_STAT_COLS];
	bool		nulls[MVS_STAT_COLS];
	uint32		entries = 0,
				nodes = 0;
	TransactionId horizon;
	int			i = 0;

	abt_require_preload();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "abtree_mvstore: return type must be a row type");
	memset(nulls, mvs == NULL, sizeof(nulls));
	memset(v, 0, sizeof(v));

	v[i++] = BoolGetDatum(mvs != NULL && mvs_enabled);
	nulls[0] = false;
	if (mvs != NULL)
	{
		SpinLockAcquire(&mvs->freelock);
		entries = mvs->entries_used;
		nodes = mvs->nodes_used;
		SpinLockRelease(&mvs->freelock);
		horizon = pg_atomic_read_u32(&mvs->horizon);

		v[i++] = Int64GetDatum((int64) mvs_shmem_size());
		v[i++] = Int64GetDatum(entries);
		v[i++] = Int64GetDatum(mvs->nentries);
		v[i++] = Int64GetDatum(nodes);
		v[i++] = Int64GetDatum(mvs->nnodes);
		v[i++] = Int64GetDatum((int64) entries * sizeof(MvsEntry) +
							   (int64) nodes * sizeof(MvsNode));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->recorded));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->collected));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->rebuilt));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->gc_runs));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->fallbacks));
		v[i++] = BoolGetDatum(pg_atomic_read_u32(&mvs->full) != 0);
		v[i] = TransactionIdGetDatum(horizon);
		nulls[i] = !TransactionIdIsNormal(horizon);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, v, nulls)));
}

Datum
abtree_mvstore_collect(PG_FUNCTION_ARGS)
{
	abt_require_preload();
	if (mvs == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the abtree weight store is disabled"),
				 errhint("Set abtree.mvstore_size to more than 0 and restart the server.")));
	if (RecoveryInProgress())
		PG_RETURN_INT64(0);
	PG_RETURN_INT64((int64) mvs_collect(GetOldestNonRemovableTransactionId(NULL)));
}

/* Sum of the items of a locked page, as the reader sees them. */
static uint64
mvs_check_page_sum(MvsReader *rd, Page page, bool weighted)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	uint64		sum = 0;

	for (OffsetNumber off = AbtFirstDataOffset(opaque);
		 off <= PageGetMaxOffsetNumber(page); off++)
	{
		sum += mvs_item_weight(rd, (IndexTuple) PageGetItem(page, PageGetItemId(page, off)),
							   AbtPageIsLeaf(opaque), weighted);
	}
	return sum;
}

typedef struct MvsCheckCounts
{
	int64		downlinks;
	int64		versioned;		/* downlinks the snapshot sees lighter */
	int64		violations;
} MvsCheckCounts;

/*
 * Check the downlinks of internal page blk: each, as the snapshot sees it,
 * must weigh at least its child's items as the snapshot sees them.  The
 * child is locked first, then the parent (the writers' order).
 */
static void
mvs_check_internal(Relation rel, MvsReader *rd, BlockNumber blk, Page copy,
				   MvsCheckCounts *c)
{
	bool		weighted = abt_index_info(rel)->weighted;

	for (OffsetNumber off = AbtFirstDataOffset(AbtPageGetOpaque(copy));
		 off <= PageGetMaxOffsetNumber(copy); off++)
	{
		BlockNumber child = AbtDownlinkGetChild((IndexTuple) PageGetItem(copy, PageGetItemId(copy, off)));
		Buffer		cbuf = ReadBuffer(rel, child);
		Buffer		pbuf;
		AbtStack	stack;
		OffsetNumber poff;
		uint64		below;

		LockBuffer(cbuf, BUFFER_LOCK_SHARE);
		abt_check_page(rel, cbuf);
		below = mvs_check_page_sum(rd, BufferGetPage(cbuf), weighted);
		stack.depth = 1;
		stack.e[0].blkno = blk;
		stack.e[0].off = InvalidOffsetNumber;
		pbuf = abt_lock_parent(rel, &stack, 0, child, BUFFER_LOCK_SHARE, &poff);
		if (BufferIsValid(pbuf))
		{
			Page		ppage = BufferGetPage(pbuf);
			IndexTuple	dl = (IndexTuple) PageGetItem(ppage, PageGetItemId(ppage, poff));
			uint64		raw = AbtPivotGetAux(dl)->weight;
			uint64		seen = mvs_weight(rd, child, &AbtPivotGetAux(dl)->weight,
										 AbtPivotGetAux(dl)->rid);

			c->downlinks++;
			if (seen < raw)
				c->versioned++;
			if (seen < below)
			{
				if (c->violations++ < 5)
					ereport(NOTICE,
							(errmsg("downlink to block %u in index \"%s\" weighs " UINT64_FORMAT " (stored " UINT64_FORMAT ") for this snapshot, its child " UINT64_FORMAT,
									child, RelationGetRelationName(rel), seen, raw, below)));
			}
			UnlockReleaseBuffer(pbuf);
		}
		UnlockReleaseBuffer(cbuf);
	}
}

/*
 * abtree_mvstore_check(index): for every downlink, is its weight as the
 * current snapshot sees it at least the sum of its child's items as the
 * snapshot sees them?  That is what keeps snapshot-aware sampling exact
 * (src/mvstore/README).  Returns the counts and the root's total weight
 * for the snapshot, which a test compares with count(*).
 */
Datum
abtree_mvstore_check(PG_FUNCTION_ARGS)
{
	Relation	rel;
	TupleDesc	tupdesc;
	MvsReader	rd;
	MvsCheckCounts c = {0, 0, 0};
	BlockNumber nblocks;
	Buffer		root;
	uint64		total = 0;
	Datum		v[4];
	bool		nulls[4] = {false, false, false, false};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("abtree_mvstore_check: index must not be null")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "abtree_mvstore_check: return type must be a row type");
	rel = abt_open_index_checked(PG_GETARG_OID(0), AccessShareLock);
	mvs_reader_init(&rd, rel, GetActiveSnapshot());

	nblocks = RelationGetNumberOfBlocks(rel);
	for (BlockNumber blk = ABT_METAPAGE + 1; blk < nblocks; blk++)
	{
		PGAlignedBlock copy;
		Buffer		buf = ReadBuffer(rel, blk);
		Page		page = BufferGetPage(buf);
		bool		internal;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		internal = !PageIsNew(page) && AbtPageGetOpaque(page)->page_id == ABT_PAGE_ID &&
			AbtPageIsInternal(AbtPageGetOpaque(page));
		if (internal)
			memcpy(copy.data, page, BLCKSZ);
		UnlockReleaseBuffer(buf);
		if (internal)
			mvs_check_internal(rel, &rd, blk, copy.data, &c);
	}

	root = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
	if (BufferIsValid(root))
	{
		total = mvs_check_page_sum(&rd, BufferGetPage(root), abt_index_info(rel)->weighted);
		UnlockReleaseBuffer(root);
	}
	relation_close(rel, AccessShareLock);

	v[0] = Int64GetDatum(c.downlinks);
	v[1] = Int64GetDatum(c.versioned);
	v[2] = Int64GetDatum(c.violations);
	v[3] = DirectFunctionCall1(int8_numeric, Int64GetDatum((int64) total));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, v, nulls)));
}
