/*-------------------------------------------------------------------------
 *
 * abtversions.c
 *	  What abtree hands the multi-version weight store (src/mvstore), and
 *	  how it weighs its pages with it.  The store keeps, per downlink
 *	  (index, child block), the weight deltas of transactions that some
 *	  snapshot may not see, and knows no page layout: abtree extracts the
 *	  (xid, weight) pairs of leaf entries and the blocks below a downlink
 *	  for it, and weighs items as a reader's snapshot sees them.
 *
 *	  abtree_mvstore_check(index)   the store's invariant (V), as this
 *	                                snapshot sees the index
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "mvstore/mvstore.h"

#include "access/relation.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(abtree_mvstore_check);

/*
 * What an item of a page weighs for the reader: a leaf entry nothing if
 * its transaction is invisible to the snapshot, a downlink its weight
 * minus the invisible deltas.  With rd NULL, the stored weights.
 */
uint64
abt_item_seen_weight(MvsReader *rd, IndexTuple itup, bool leaf, bool weighted)
{
	AbtPivotAux *aux;

	if (leaf)
		return rd && mvs_xid_invisible(rd, abt_leaf_xmin(itup)) ? 0 :
			abt_leaf_effective_weight(itup, weighted);
	aux = AbtPivotGetAux(itup);
	return rd ? mvs_weight(rd, AbtDownlinkGetChild(itup), &aux->weight, aux->rid) : aux->weight;
}

/* The (xid, weight) pairs of the leaf entries at offs (all if offs is NULL). */
static int
abt_leaf_pairs(Page leaf, OffsetNumber *offs, int noffs, bool weighted, MvsDelta *out)
{
	OffsetNumber first = AbtFirstDataOffset(AbtPageGetOpaque(leaf));

	if (offs == NULL)
		noffs = Max(PageGetMaxOffsetNumber(leaf) - first + 1, 0);
	for (int k = 0; k < noffs; k++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(leaf, PageGetItemId(leaf, offs ? offs[k] : first + k));

		out[k].xid = abt_leaf_xmin(itup);
		out[k].delta = (int64) abt_leaf_weight(itup, weighted);
	}
	return noffs;
}

/*
 * VACUUM's: the deltas of the entries at offs, which it removes, and of
 * the TIDs it takes out of the posting tuples at updated (newtups[k] keeps
 * the rest).  A posting tuple has its rows' xid: frozen from a build, their
 * transaction's from a fold on insert, which some snapshot may not see yet.
 */
int
abt_vacuum_deltas(Page leaf, OffsetNumber *offs, int noffs, OffsetNumber *updated,
				  IndexTuple *newtups, int nupdated, bool weighted, MvsDelta *out)
{
	int			n = abt_leaf_pairs(leaf, offs, noffs, weighted, out);

	for (int k = 0; k < nupdated; k++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(leaf, PageGetItemId(leaf, updated[k]));

		out[n].xid = abt_leaf_xmin(itup);
		out[n++].delta = (int64) (abt_leaf_ntids(itup) - abt_leaf_ntids(newtups[k]));
	}
	return mvs_deltas_recent(out, n);
}

/*
 * The downlink to child was set to the weight of childpage (a split or a
 * repair): have the store rebuild its chain from the leaf entries' xids, or
 * from the chains of the downlinks below.  Raises no ERROR (the arrays are
 * on the stack; src/mvstore/README, rule 3).
 */
void
abt_versions_rebuild(Relation rel, BlockNumber child, Page childpage, bool weighted)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(childpage);
	OffsetNumber first = AbtFirstDataOffset(opaque);
	int			n = Max(PageGetMaxOffsetNumber(childpage) - first + 1, 0);

	if (AbtPageIsLeaf(opaque))
	{
		MvsDelta	entries[MaxIndexTuplesPerPage];
		int			nentries = abt_leaf_pairs(childpage, NULL, 0, weighted, entries);

		mvs_rebuild(rel, child, entries, nentries, NULL, 0);
	}
	else
	{
		BlockNumber below[MaxIndexTuplesPerPage];

		for (int k = 0; k < n; k++)
			below[k] = AbtDownlinkGetChild((IndexTuple) PageGetItem(childpage,
																	PageGetItemId(childpage, first + k)));
		mvs_rebuild(rel, child, NULL, 0, below, n);
	}
}

/* Sum of the items of a locked page, as the reader sees them. */
static uint64
abt_check_seen_sum(MvsReader *rd, Page page, bool weighted)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	uint64		sum = 0;

	for (OffsetNumber off = AbtFirstDataOffset(opaque);
		 off <= PageGetMaxOffsetNumber(page); off++)
	{
		sum += abt_item_seen_weight(rd, (IndexTuple) PageGetItem(page, PageGetItemId(page, off)),
									AbtPageIsLeaf(opaque), weighted);
	}
	return sum;
}

typedef struct AbtVersionCheck
{
	int64		downlinks;
	int64		versioned;		/* downlinks the snapshot sees lighter */
	int64		violations;
} AbtVersionCheck;

/*
 * Check the downlinks of internal page blk: each, as the snapshot sees it,
 * must weigh at least its child's items as the snapshot sees them.  The
 * child is locked first, then the parent (the writers' order).
 */
static void
abt_check_seen_downlinks(Relation rel, MvsReader *rd, BlockNumber blk, Page copy,
				   AbtVersionCheck *c)
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
		below = abt_check_seen_sum(rd, BufferGetPage(cbuf), weighted);
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
	AbtVersionCheck c = {0, 0, 0};
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
			abt_check_seen_downlinks(rel, &rd, blk, copy.data, &c);
	}

	root = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
	if (BufferIsValid(root))
	{
		total = abt_check_seen_sum(&rd, BufferGetPage(root), abt_index_info(rel)->weighted);
		UnlockReleaseBuffer(root);
	}
	relation_close(rel, AccessShareLock);

	v[0] = Int64GetDatum(c.downlinks);
	v[1] = Int64GetDatum(c.versioned);
	v[2] = Int64GetDatum(c.violations);
	v[3] = DirectFunctionCall1(int8_numeric, Int64GetDatum((int64) total));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, v, nulls)));
}
