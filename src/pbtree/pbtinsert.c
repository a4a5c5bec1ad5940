/*-------------------------------------------------------------------------
 *
 * pbtinsert.c
 *	  Inserts into a pbtree: always into the mutable partition.
 *
 * An insert holds the index's insert lock in share mode (a heavyweight lock
 * on a block number no page uses) from reading the directory until its entry
 * is in the tree, so a seal, which takes the lock exclusively to close the
 * mutable partition, never closes it under an insert in flight (README,
 * "Sealing").  The entry goes in through the abtree engine's B-link insert
 * (splits and all) into the partition's tree, valid from the start: pbtree
 * keeps no weights.
 *
 * Every PBT_CHECK_EVERY inserts a backend measures the mutable partition
 * and asks the shared budget whether it is time to seal it.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#define PBT_CHECK_EVERY		64

/* The leftmost page on level `level` of a partition's tree, or Invalid. */
static BlockNumber
pbt_leftmost(Relation rel, BlockNumber head, uint32 level)
{
	Buffer		buf = abt_get_root(rel, head, BUFFER_LOCK_SHARE);

	if (!BufferIsValid(buf))
		return InvalidBlockNumber;
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		IndexTuple	first;
		BlockNumber blkno;

		if (opaque->level <= level)
		{
			blkno = BufferGetBlockNumber(buf);
			UnlockReleaseBuffer(buf);
			return blkno;
		}
		first = (IndexTuple) PageGetItem(page, PageGetItemId(page, AbtFirstDataOffset(opaque)));
		buf = abt_relandgetbuf(rel, buf, AbtDownlinkGetChild(first));
	}
}

BlockNumber
pbt_leftmost_leaf(Relation rel, BlockNumber head)
{
	return pbt_leftmost(rel, head, 0);
}

void
pbt_block_list_push(PbtBlockList *l, BlockNumber blkno)
{
	if (l->n == l->max)
	{
		l->max = Max(64, 2 * l->max);
		l->blocks = l->blocks ? repalloc(l->blocks, sizeof(BlockNumber) * l->max) :
			palloc(sizeof(BlockNumber) * l->max);
	}
	l->blocks[l->n++] = blkno;
}

/*
 * Walk one level of a partition's tree from blkno rightwards, one page
 * share-locked at a time, and return its data items (on level 1 the leaves
 * below, on the leaf level the entries).  Every page must be in partition
 * partno (PBT_ANY_PARTNO: not checked).  With blocks, each page's number is
 * appended; with down, it gets the first page's leftmost child
 * (InvalidBlockNumber on the leaf level).
 */
uint64
pbt_walk_level(Relation rel, BlockNumber blkno, uint32 partno,
			   PbtBlockList *blocks, BlockNumber *down)
{
	uint64		n = 0;
	bool		first = true;

	if (down)
		*down = InvalidBlockNumber;
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = ReadBuffer(rel, blkno);
		Page		page;
		AbtPageOpaque opaque;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		abt_check_page(rel, buf);
		page = BufferGetPage(buf);
		opaque = AbtPageGetOpaque(page);
		if (partno != PBT_ANY_PARTNO && PbtPageGetPartno(page) != partno)
			elog(ERROR, "pbtree: block %u is not in partition %u", blkno, partno);
		n += PageGetMaxOffsetNumber(page) - AbtFirstDataOffset(opaque) + 1;
		if (blocks)
			pbt_block_list_push(blocks, blkno);
		if (down && first && !AbtPageIsLeaf(opaque))
			*down = AbtDownlinkGetChild((IndexTuple)
										PageGetItem(page, PageGetItemId(page, AbtFirstDataOffset(opaque))));
		first = false;
		blkno = opaque->next;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	return n;
}

/*
 * Leaves of a partition's tree: the downlinks on level 1 (a few pages even
 * for a partition of thousands of leaves), or 1 for a one-page tree.
 */
uint64
pbt_tree_leaves(Relation rel, BlockNumber head)
{
	AbtMetaPageData tree;

	abt_read_meta_at(rel, head, &tree);
	if (tree.root == InvalidBlockNumber)
		return 0;
	if (tree.level == 0)
		return 1;
	return pbt_walk_level(rel, pbt_leftmost(rel, head, 1), PBT_ANY_PARTNO, NULL, NULL);
}

/* Entries of a partition's tree: the items on its leaves */
uint64
pbt_count_entries(Relation rel, BlockNumber head)
{
	return pbt_walk_level(rel, pbt_leftmost_leaf(rel, head), PBT_ANY_PARTNO, NULL, NULL);
}

bool
pbtinsert(Relation rel, Datum *values, bool *isnull, ItemPointer ht_ctid,
		  Relation heapRel, IndexUniqueCheck checkUnique,
		  bool indexUnchanged, IndexInfo *indexInfo)
{
	AbtIndexInfo *info;
	bool		check;
	BlockNumber head;
	IndexTuple	itup;
	AbtKey		key;

	abt_require_preload();
	info = abt_index_info(rel);
	/* per index: a row's inserts into several indexes must not align */
	check = ++info->inserts % PBT_CHECK_EVERY == 0;
	itup = abt_form_leaf(rel, info, values, isnull, ht_ctid, FrozenTransactionId);
	abt_key_from_tuple(rel, &key, itup, false);

	LockPage(rel, PBT_LOCK_INSERT, ShareLock);
	head = pbt_mutable_head(rel);
	key.meta = head;
	abt_insert_entry(rel, &key, itup);
	UnlockPage(rel, PBT_LOCK_INSERT, ShareLock);

	if (check && pbt_budget_exceeded(rel, pbt_tree_leaves(rel, head)))
		(void) pbt_seal(rel, false);
	pfree(itup);
	return false;
}
