/*-------------------------------------------------------------------------
 *
 * abtvacuum.c
 *	  VACUUM of an abtree: remove dead entries, subtract their weight from
 *	  every downlink above, bottom-up.
 *
 * Leaves are visited in physical order under a share lock.  A leaf with
 * dead entries is then found again by a descent, locked exclusively, and
 * the path above it locked exclusively bottom-up to the root (the lock
 * order of src/abtree/README); the dead entries go and their weight is
 * subtracted from every downlink of the path in one critical section and
 * one WAL record.  Removing entries needs a cleanup lock on the leaf (no
 * scan may hold a pin there); if a scan holds one, we let go, wait for the
 * pin to go, and try again.  Pages are never deleted (README, P1).
 *
 * amvacuumcleanup then makes every downlink weight exact again (W2).
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "mvstore/mvstore.h"

#include "access/genam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"


/*
 * Find the leaf holding key, locked exclusively with no other pin on it (a
 * cleanup lock), and its dead entries.  InvalidBuffer for an empty tree.
 */
static Buffer
abt_vac_lock_leaf(Relation rel, AbtKey *key, AbtStack *stack)
{
	for (;;)
	{
		Buffer		leaf = abt_search_leaf(rel, key, stack);

		if (!BufferIsValid(leaf) || IsBufferCleanupOK(leaf))
			return leaf;
		/* a scan holds a pin on the leaf: wait for it without our lock */
		IncrBufferRefCount(leaf);
		UnlockReleaseBuffer(leaf);
		LockBufferForCleanup(leaf);
		UnlockReleaseBuffer(leaf);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Remove the dead entries of the leaf that holds the tuple firstitup, and
 * subtract their weight above.  The whole path from the leaf to the root
 * is locked exclusively, bottom-up, for the change and its one WAL record,
 * whose redo recomputes the path.
 */
static void
abt_vacuum_leaf(Relation rel, IndexTuple firstitup, IndexBulkDeleteCallback callback,
				void *callback_state, IndexBulkDeleteResult *stats)
{
	/* not the AbtIndexInfo pointer: hashing below may reset rd_amcache */
	bool		weighted = abt_index_info(rel)->weighted;
	AbtKey	   *key = palloc(sizeof(AbtKey));
	AbtStack	stack;
	Buffer		path[ABT_MAX_HEIGHT];
	OffsetNumber offs[ABT_MAX_HEIGHT];
	int			npath;
	Buffer		leafbuf;
	Page		page;
	OffsetNumber deletable[MaxIndexTuplesPerPage];
	int			ndeletable;
	uint64		removed;
	OffsetNumber off;
	int			k;

	abt_key_from_tuple(rel, key, firstitup, false);
	for (;;)
	{
		leafbuf = abt_vac_lock_leaf(rel, key, &stack);
		if (!BufferIsValid(leafbuf))
		{
			pfree(key);
			return;
		}
		page = BufferGetPage(leafbuf);
		ndeletable = 0;
		removed = 0;
		for (off = AbtFirstDataOffset(AbtPageGetOpaque(page));
			 off <= PageGetMaxOffsetNumber(page); off++)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

			if (callback(&itup->t_tid, callback_state))
			{
				deletable[ndeletable++] = off;
				/* a not yet valid entry counts nothing (only overcounts above) */
				removed += abt_leaf_effective_weight(itup, weighted);
			}
		}
		npath = 0;
		if (ndeletable == 0 ||
			(npath = abt_lock_path_to_root(rel, &stack, leafbuf, path, offs)) >= 0)
			break;
		/* a new root since the descent: again */
		UnlockReleaseBuffer(leafbuf);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(key);

	if (ndeletable > 0)
	{
		MvsDelta	forgotten[MaxIndexTuplesPerPage];
		int			nforgotten = mvs_collect_leaf(page, deletable, ndeletable,
												  weighted, forgotten);
		AbtSketchHashes *hashes = palloc(sizeof(AbtSketchHashes) * ndeletable);
		int			nhashes = 0;
		AbtSketchOp sketch;

		/* valid entries leave the sketches with the page (S1) */
		for (k = 0; k < ndeletable; k++)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, deletable[k]));

			if (TransactionIdIsValid(abt_leaf_xmin(itup)))
				abt_sketch_hash_tuple(rel, itup, &hashes[nhashes++]);
		}
		abt_xlog_reserve(rel, npath + abt_sketch_max_blocks(rel), abt_sketch_max_rdatas(rel));
		if (nhashes > 0)
			abt_sketch_lock(&sketch, rel, NULL);
		else
			abt_sketch_none(&sketch, rel);
		START_CRIT_SECTION();
		for (k = 0; k < nhashes; k++)
			abt_sketch_apply(&sketch, &hashes[k], false);
		abt_sketch_mark_dirty(&sketch);
		PageIndexMultiDelete(page, deletable, ndeletable);
		AbtPageGetOpaque(page)->sid++;
		abt_leaf_update_invalid_flag(page);
		MarkBufferDirty(leafbuf);
		for (k = 0; k < npath; k++)
		{
			Page		ppage = BufferGetPage(path[k]);

			AbtPivotGetAux((IndexTuple) PageGetItem(ppage, PageGetItemId(ppage, offs[k])))->weight -= removed;
			MarkBufferDirty(path[k]);
		}
		if (RelationNeedsWAL(rel))
			abt_xlog_vacuum(leafbuf, deletable, ndeletable, path, npath, weighted,
							&sketch);
		END_CRIT_SECTION();
		abt_sketch_release(&sketch);
		pfree(hashes);

		/* the removed weight leaves the versions too (whole path held) */
		for (k = 0; k < npath; k++)
		{
			Page		ppage = BufferGetPage(path[k]);
			IndexTuple	dl = (IndexTuple) PageGetItem(ppage, PageGetItemId(ppage, offs[k]));

			mvs_forget(rel, AbtDownlinkGetChild(dl), forgotten, nforgotten);
		}
		stats->tuples_removed += ndeletable;
	}
	for (k = 0; k < npath; k++)
		UnlockReleaseBuffer(path[k]);
	UnlockReleaseBuffer(leafbuf);
}

/* Count the entries of a leaf, and find whether any is dead. */
static IndexTuple
abt_vac_scan_leaf(Page page, IndexBulkDeleteCallback callback, void *callback_state,
				  double *nentries)
{
	OffsetNumber off;
	OffsetNumber first = AbtFirstDataOffset(AbtPageGetOpaque(page));
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	bool		any_dead = false;

	for (off = first; off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		if (callback && callback(&itup->t_tid, callback_state))
			any_dead = true;
	}
	*nentries = maxoff >= first ? maxoff - first + 1 : 0;
	if (!any_dead)
		return NULL;
	return CopyIndexTuple((IndexTuple) PageGetItem(page, PageGetItemId(page, first)));
}

/* Visit every leaf; with a callback, vacuum the ones with dead entries. */
static void
abt_vacuum_scan(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	rel = info->index;
	BlockNumber blkno = ABT_METAPAGE + 1;
	BlockNumber nblocks;

	stats->num_index_tuples = 0;
	/* pages added while we scan are scanned too (they hold moved entries) */
	while (blkno < (nblocks = RelationGetNumberOfBlocks(rel)))
	{
		for (; blkno < nblocks; blkno++)
		{
			Buffer		buf;
			Page		page;
			IndexTuple	firstdead = NULL;
			double		nentries = 0;

			vacuum_delay_point_compat();
			buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, info->strategy);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			if (!PageIsNew(page) &&
				AbtPageGetOpaque(page)->page_id == ABT_PAGE_ID &&
				AbtPageIsLeaf(AbtPageGetOpaque(page)))
				firstdead = abt_vac_scan_leaf(page, callback, callback_state, &nentries);
			UnlockReleaseBuffer(buf);

			if (firstdead)
			{
				double		before = stats->tuples_removed;

				abt_vacuum_leaf(rel, firstdead, callback, callback_state, stats);
				nentries -= stats->tuples_removed - before;
				pfree(firstdead);
			}
			stats->num_index_tuples += Max(nentries, 0);
		}
	}
	stats->num_pages = nblocks;
	stats->estimated_count = false;
}

IndexBulkDeleteResult *
abtbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	abt_require_preload();
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	abt_vacuum_scan(info, stats, callback, callback_state);
	return stats;
}

/*
 * Set the downlink on page pblk (or to its right) to child cbuf's weight,
 * if it differs.  The caller holds cbuf exclusively; the parent is locked
 * after it (bottom-up).  A recomputation bumps the downlink's RID and both
 * pages' SIDs, so that a weight pass that had added on the downlink and not
 * yet below notices the loss and adds again (src/abtree/README).
 */
static bool
abt_repair_downlink(Relation rel, AbtIndexInfo *info, BlockNumber pblk, Buffer cbuf)
{
	AbtStack	stack;
	OffsetNumber off;
	Buffer		pbuf;
	Page		ppage;
	AbtPivotAux *aux;
	uint64		actual = abt_page_weight(BufferGetPage(cbuf), info->weighted);
	bool		fixed = false;

	stack.depth = 1;
	stack.e[0].blkno = pblk;
	stack.e[0].off = InvalidOffsetNumber;
	pbuf = abt_lock_parent(rel, &stack, 0, BufferGetBlockNumber(cbuf),
						   BUFFER_LOCK_EXCLUSIVE, &off);
	if (!BufferIsValid(pbuf))
		return false;
	ppage = BufferGetPage(pbuf);
	aux = AbtPivotGetAux((IndexTuple) PageGetItem(ppage, PageGetItemId(ppage, off)));
	if (aux->weight != actual)
	{
		START_CRIT_SECTION();
		aux->weight = actual;
		aux->rid++;
		AbtPageGetOpaque(ppage)->sid++;
		MarkBufferDirty(pbuf);
		if (RelationNeedsWAL(rel))
			abt_xlog_set_weight(pbuf, off, actual);
		END_CRIT_SECTION();
		AbtPageGetOpaque(BufferGetPage(cbuf))->sid++;
		MarkBufferDirtyHint(cbuf, true);
		mvs_rebuild(rel, BufferGetBlockNumber(cbuf), BufferGetPage(cbuf), info->weighted);
		fixed = true;
	}
	UnlockReleaseBuffer(pbuf);
	return fixed;
}

/*
 * Check every downlink of internal page blkno against its child; fix the
 * ones that differ.  The comparison runs on a copy under share locks; only
 * a difference takes the exclusive locks, child first.  Returns the number
 * of fixes.
 */
static int
abt_repair_page(Relation rel, AbtIndexInfo *info, BlockNumber blkno,
				BufferAccessStrategy strategy)
{
	PGAlignedBlock copy;
	Page		page = copy.data;
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	OffsetNumber off;
	int			fixed = 0;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(page, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);

	for (off = AbtFirstDataOffset(AbtPageGetOpaque(page));
		 off <= PageGetMaxOffsetNumber(page); off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		Buffer		cbuf = ReadBufferExtended(rel, MAIN_FORKNUM, AbtDownlinkGetChild(itup),
											  RBM_NORMAL, strategy);
		uint64		actual;

		LockBuffer(cbuf, BUFFER_LOCK_SHARE);
		abt_check_page(rel, cbuf);
		actual = abt_page_weight(BufferGetPage(cbuf), info->weighted);
		if (actual != AbtPivotGetAux(itup)->weight)
		{
			LockBuffer(cbuf, BUFFER_LOCK_UNLOCK);
			LockBuffer(cbuf, BUFFER_LOCK_EXCLUSIVE);
			if (abt_repair_downlink(rel, info, blkno, cbuf))
				fixed++;
		}
		UnlockReleaseBuffer(cbuf);
	}
	return fixed;
}

/*
 * Make every downlink weight exact again, level by level from the bottom.
 * Weights overcount after a crash in the middle of a weight pass (adds
 * that reached the disk, for an entry that never became valid), after an
 * insert that failed half way, and after a pass's cautious re-add; this is
 * where W2 (README) is restored.
 */
static void
abt_repair_weights(IndexVacuumInfo *info)
{
	Relation	rel = info->index;
	AbtIndexInfo *info_abt = abt_index_info(rel);
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BlockNumber blkno;
	uint16	   *levels = palloc0(sizeof(uint16) * Max(nblocks, 1));
	uint16		maxlevel = 0;
	uint16		level;
	int			fixed = 0;

	for (blkno = ABT_METAPAGE + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
											 info->strategy);
		Page		page;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!PageIsNew(page) && AbtPageGetOpaque(page)->page_id == ABT_PAGE_ID)
			levels[blkno] = AbtPageGetOpaque(page)->level;
		maxlevel = Max(maxlevel, levels[blkno]);
		UnlockReleaseBuffer(buf);
	}
	for (level = 1; level <= maxlevel; level++)
	{
		for (blkno = ABT_METAPAGE + 1; blkno < nblocks; blkno++)
		{
			if (levels[blkno] != level)
				continue;
			vacuum_delay_point_compat();
			fixed += abt_repair_page(rel, info_abt, blkno, info->strategy);
		}
	}
	if (fixed > 0)
		ereport(LOG,
				(errmsg("abtree: made %d downlink weights of index \"%s\" exact again",
						fixed, RelationGetRelationName(rel))));
	pfree(levels);
}

IndexBulkDeleteResult *
abtvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	abt_require_preload();
	if (info->analyze_only)
		return stats;
	/* no bulkdelete pass happened: count the entries now */
	if (stats == NULL)
	{
		stats = palloc0(sizeof(IndexBulkDeleteResult));
		abt_vacuum_scan(info, stats, NULL, NULL);
	}
	abt_repair_weights(info);
	return stats;
}
