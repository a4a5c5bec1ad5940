/*-------------------------------------------------------------------------
 *
 * abtdrawweights.c
 *	  The weights a draw routes by: each item's weight on a page, as stored
 *	  or as the reader's snapshot sees it (the weight store's subtraction,
 *	  the leaf entries' visibility), restricted to a key range, and the
 *	  checks that a child did not outgrow its downlink; where a range's
 *	  descent starts.  The descents themselves are in abtdraw.c.
 *
 *-------------------------------------------------------------------------
 */
#include "abtdraw.h"
#include "abtree_ext.h"

#include "storage/bufmgr.h"
#include "utils/rel.h"

/* Does the key range of item off on an internal page meet the range? */
static bool
abt_item_in_range(Relation rel, AbtSampleRange *range, Page page, OffsetNumber off)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	AbtPageOpaque opaque = AbtPageGetOpaque(page);

	/* the item's keys are > its own key ... */
	if (range->has_hi && abt_compare(rel, &range->hi, page, off) <= 0)
		return false;
	/* ... and <= the next item's key (or the high key) */
	if (range->has_lo)
	{
		if (off < maxoff)
			return abt_compare(rel, &range->lo, page, off + 1) <= 0;
		if (!AbtPageIsRightmost(opaque))
			return abt_compare(rel, &range->lo, page, ABT_HIKEY) <= 0;
	}
	return true;
}

/*
 * The weight an item counts for in this draw: as the reader's snapshot
 * sees it, if there is a reader (src/mvstore/README): a leaf entry its
 * snapshot cannot see weighs nothing, and a downlink loses the deltas of
 * such entries below it.
 */
static uint64
abt_item_weight(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
				MvsReader *rd, Page page, OffsetNumber off)
{
	IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

	if (AbtPageIsLeaf(AbtPageGetOpaque(page)))
	{
		if (range && range->has_lo && abt_compare(rel, &range->lo, page, off) > 0)
			return 0;
		if (range && range->has_hi && abt_compare(rel, &range->hi, page, off) <= 0)
			return 0;
		return abt_item_seen_weight(rd, itup, true, info->weighted);
	}
	if (range && !abt_item_in_range(rel, range, page, off))
		return 0;
	return abt_item_seen_weight(rd, itup, false, info->weighted);
}

/*
 * An unweighted leaf whose entries are all valid weighs one per entry: a
 * draw indexes it directly instead of summing.  (With a not-yet-valid
 * entry on the page, positions would no longer match weights, hence the
 * flag, which splits keep for both halves; a posting tuple weighs its
 * TIDs, hence HAS_POSTING, kept the same way.)
 */
bool
abt_leaf_counts_entries(AbtIndexInfo *info, AbtSampleRange *range, MvsReader *rd, Page page)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);

	return AbtPageIsLeaf(opaque) && !info->weighted && range == NULL &&
		(rd == NULL || mvs_leaf_all_visible(rd, page)) &&
		!(opaque->flags & (ABTP_HAS_INVALID | ABTP_HAS_POSTING));
}

/*
 * HAS_INVALID is set on a leaf we hold share-locked whose entries were all
 * drawable just now (an unweighted leaf that weighed one per entry): if no
 * entry waits for its weight pass any more, clear the flag, so that the
 * next draws index the leaf directly.  MARK_VALID leaves the flag set
 * (abt_mark_valid says why).  Clearing it under a share lock is a hint, as
 * nbtree's BTP_HAS_GARBAGE is: only exclusive lockers add entries, so
 * nothing can make the leaf incomplete while we hold it, and every share
 * locker that clears it writes the same value.  rm_mask ignores the flag.
 */
void
abt_leaf_clear_invalid_hint(Buffer buf)
{
	Page		page = BufferGetPage(buf);
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	for (OffsetNumber off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
	{
		if (!TransactionIdIsValid(abt_leaf_xmin((IndexTuple) PageGetItem(page,
																		  PageGetItemId(page, off)))))
			return;
	}
	opaque->flags &= ~ABTP_HAS_INVALID;
	MarkBufferDirtyHint(buf, true);
}

/*
 * The weights of a page's items for a draw without a key range, read in one
 * tight loop, when the weight store has nothing to take off on this page:
 * decided once per page, not per item (issue 21; the per-item chain was a
 * third of a draw).  A downlink's raw weight serves when the store has no
 * version for the index at all (mvs_reader_versioned, asked after the
 * reads); a leaf entry's own weight (0 while not valid) when the reader's
 * snapshot sees every entry of the leaf.  Returns the number of items put
 * in ws, or -1 when the page needs the per-item path.
 */
static int
abt_page_raw_weights(AbtIndexInfo *info, MvsReader *rd, Page page, uint64 *ws)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	int			n = 0;

	if (AbtPageIsLeaf(opaque))
	{
		if (rd && !mvs_leaf_all_visible(rd, page))
			return -1;
		for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
			ws[n++] = abt_leaf_effective_weight((IndexTuple) PageGetItem(page, PageGetItemId(page, off)),
												info->weighted);
		return n;
	}
	for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		ws[n++] = *(volatile uint64 *) &AbtPivotGetAux(itup)->weight;
	}
	return mvs_reader_versioned(rd) ? -1 : n;
}

/*
 * The weights of a page's items as a draw counts them (as the reader's
 * snapshot sees them, restricted to the range), into ws; returns how many.
 * One tight loop when the weight store has nothing to take off the page;
 * else, without a range, one call into the store per leaf, or one per
 * downlink, and with a range one per item (abt_item_weight).
 */
int
abt_page_weights(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
				 MvsReader *rd, Page page, uint64 *ws)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	int			n = range == NULL ? abt_page_raw_weights(info, rd, page, ws) : -1;

	if (n >= 0)
		return n;
	n = 0;
	if (range != NULL)
	{
		for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
			ws[n++] = abt_item_weight(rel, info, range, rd, page, off);
		return n;
	}
	if (AbtPageIsLeaf(opaque))
	{
		/* entries the snapshot cannot see weigh nothing: one call per leaf */
		TransactionId xids[MaxIndexTuplesPerPage];
		bool		invisible[MaxIndexTuplesPerPage];

		for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++, n++)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

			xids[n] = abt_leaf_xmin(itup);
			ws[n] = abt_leaf_effective_weight(itup, info->weighted);
		}
		mvs_xids_invisible(rd, xids, n, invisible);
		for (int i = 0; i < n; i++)
			if (invisible[i])
				ws[i] = 0;
		return n;
	}
	/* downlinks, less the deltas the snapshot cannot see */
	for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		AbtPivotAux *aux = AbtPivotGetAux(itup);

		ws[n++] = mvs_weight(rd, AbtDownlinkGetChild(itup), &aux->weight, aux->rid);
	}
	return n;
}

double
abt_range_page_weight(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
					  MvsReader *rd, Page page)
{
	uint64		ws[MaxIndexTuplesPerPage];
	int			n = abt_page_weights(rel, info, range, rd, page, ws);
	double		sum = 0;

	for (int i = 0; i < n; i++)
		sum += (double) ws[i];
	return sum;
}

/*
 * A draw found the child heavier (total) than the downlink it read.  Usually
 * adds landed in between, and then the downlink has grown too: a pass adds
 * on a downlink before it adds below it.  Look again, holding the child (a
 * child and then its parent is the lock order): true if the downlink now
 * covers the child, or moved, and the draw is to be rejected.  False if it
 * still does not, which only a standby can see (a page image there carries
 * the add of a pass that the primary has not finished, or whose crash the
 * primary's abt_recovery_check has not repaired yet), and rejecting would
 * then never reach this subtree at all.
 */
bool
abt_downlink_caught_up(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
					   MvsReader *rd, BlockNumber parent, BlockNumber child, double total)
{
	Buffer		pbuf = ReadBuffer(rel, parent);
	Page		ppage;
	OffsetNumber off;
	bool		caught_up = true;

	LockBuffer(pbuf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, pbuf);
	ppage = BufferGetPage(pbuf);
	off = abt_find_downlink(ppage, child, InvalidOffsetNumber);
	if (OffsetNumberIsValid(off))
		caught_up = (double) abt_item_weight(rel, info, range, rd, ppage, off) >= total;
	UnlockReleaseBuffer(pbuf);
	return caught_up;
}

/* Does page end where its parent's downlink said, i.e. has it not split? */
bool
abt_page_ends_at(Page page, IndexTuple expected_hikey)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);

	if (expected_hikey == NULL)
		return AbtPageIsRightmost(opaque);
	return !AbtPageIsRightmost(opaque) &&
		abt_pivot_key_equal((IndexTuple) PageGetItem(page, PageGetItemId(page, ABT_HIKEY)),
							expected_hikey);
}

/* The key range of item off ends where the next item (or the page) does. */
IndexTuple
abt_item_hikey(Page page, OffsetNumber off)
{
	if (off < PageGetMaxOffsetNumber(page))
		return CopyIndexTuple((IndexTuple) PageGetItem(page, PageGetItemId(page, off + 1)));
	if (!AbtPageIsRightmost(AbtPageGetOpaque(page)))
		return CopyIndexTuple((IndexTuple) PageGetItem(page, PageGetItemId(page, ABT_HIKEY)));
	return NULL;
}

/* The only item of an internal page that meets the range, if just one does. */
static OffsetNumber
abt_only_item_in_range(Relation rel, AbtSampleRange *range, Page page)
{
	OffsetNumber off;
	OffsetNumber found = InvalidOffsetNumber;

	for (off = AbtFirstDataOffset(AbtPageGetOpaque(page));
		 off <= PageGetMaxOffsetNumber(page); off++)
	{
		if (!abt_item_in_range(rel, range, page, off))
			continue;
		if (OffsetNumberIsValid(found))
			return InvalidOffsetNumber;
		found = off;
	}
	return found;
}

/*
 * Where a range draw starts: the highest page on which more than one item
 * meets the range (or the leaf holding all of it).  Everything in the range
 * lies below it, so spreading u over that page's items is as exact as
 * spreading it over the root's, and draws are not rejected for landing in
 * the parts of the root's items outside the range.  If a page we went
 * through split after we read its parent, part of the range may have moved
 * right of it: returns InvalidBuffer and the draw is rejected.
 */
Buffer
abt_range_start(Relation rel, AbtSampleRange *range, Buffer buf, IndexTuple *expected_hikey)
{
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		OffsetNumber off;

		if (AbtPageIsLeaf(AbtPageGetOpaque(page)))
			return buf;
		off = abt_only_item_in_range(rel, range, page);
		if (!OffsetNumberIsValid(off))
			return buf;
		if (*expected_hikey)
			pfree(*expected_hikey);
		*expected_hikey = abt_item_hikey(page, off);
		buf = abt_relandgetbuf(rel, buf,
							   AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, off))));
		if (!abt_page_ends_at(BufferGetPage(buf), *expected_hikey))
		{
			UnlockReleaseBuffer(buf);
			return InvalidBuffer;
		}
	}
}

/* ---- batched descents ---- */
