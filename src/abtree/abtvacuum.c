/*-------------------------------------------------------------------------
 *
 * abtvacuum.c
 *	  VACUUM of an abtree: remove dead entries, subtract their weight from
 *	  every downlink above, bottom-up.
 *
 * Leaves are visited in physical order under a share lock.  A leaf with
 * dead entries is then reached again from the root with the whole path
 * locked exclusively (the insert protocol's lock order, so no deadlock),
 * its dead entries are removed, and the removed weight is subtracted from
 * the downlinks leaf-side first, each change its own WAL record, so that a
 * standby replaying them one by one only ever sees overcounts.  Removing
 * entries needs a cleanup lock on the leaf (no scan may hold a pin there);
 * if a scan holds one, we let go of everything, wait for the pin to go, and
 * try again.  Pages are never deleted (src/abtree/README, P1).
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/genam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#define ABT_VACUUM_MAX_HEIGHT 32

#if PG_VERSION_NUM >= 180000
#define vacuum_delay_point_compat() vacuum_delay_point(false)
#else
#define vacuum_delay_point_compat() vacuum_delay_point()
#endif

typedef struct AbtVacPath
{
	Buffer		bufs[ABT_VACUUM_MAX_HEIGHT];
	OffsetNumber offs[ABT_VACUUM_MAX_HEIGHT];	/* downlink followed */
	int			depth;
} AbtVacPath;

static void
abt_vac_release(AbtVacPath *path)
{
	int			i;

	for (i = 0; i < path->depth; i++)
		UnlockReleaseBuffer(path->bufs[i]);
	path->depth = 0;
}

/*
 * Lock the path from the root to the leaf holding key, all exclusively.
 * Returns false if the tree is empty.
 */
static bool
abt_vac_lock_path(Relation rel, AbtKey *key, AbtVacPath *path)
{
	Buffer		buf = abt_get_root(rel, BUFFER_LOCK_EXCLUSIVE);

	path->depth = 0;
	if (!BufferIsValid(buf))
		return false;
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		IndexTuple	downlink;

		path->bufs[path->depth] = buf;
		if (AbtPageIsLeaf(AbtPageGetOpaque(page)))
		{
			path->depth++;
			return true;
		}
		if (path->depth + 1 >= ABT_VACUUM_MAX_HEIGHT)
			elog(ERROR, "abtree: index \"%s\" is too deep", RelationGetRelationName(rel));
		path->offs[path->depth] = abt_binsrch_internal(rel, key, page);
		downlink = (IndexTuple) PageGetItem(page, PageGetItemId(page, path->offs[path->depth]));
		path->depth++;
		buf = ReadBuffer(rel, AbtDownlinkGetChild(downlink));
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		abt_check_page(rel, buf);
	}
}

/*
 * Remove the dead entries of the leaf that holds the tuple firstitup, and
 * subtract their weight above.
 */
static void
abt_vacuum_leaf(Relation rel, IndexTuple firstitup, IndexBulkDeleteCallback callback,
				void *callback_state, IndexBulkDeleteResult *stats)
{
	AbtIndexInfo *info = abt_index_info(rel);
	AbtKey	   *key = palloc(sizeof(AbtKey));
	AbtVacPath	path;
	Buffer		leafbuf;
	Page		page;
	OffsetNumber deletable[MaxIndexTuplesPerPage];
	int			ndeletable = 0;
	uint64		removed = 0;
	OffsetNumber off;
	OffsetNumber maxoff;
	int			level;

	abt_key_from_tuple(rel, key, firstitup, false);
	for (;;)
	{
		if (!abt_vac_lock_path(rel, key, &path))
		{
			pfree(key);
			return;
		}
		leafbuf = path.bufs[path.depth - 1];
		if (IsBufferCleanupOK(leafbuf))
			break;
		/* a scan holds a pin on the leaf: wait for it without our locks */
		IncrBufferRefCount(leafbuf);
		abt_vac_release(&path);
		LockBufferForCleanup(leafbuf);
		UnlockReleaseBuffer(leafbuf);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(key);

	page = BufferGetPage(leafbuf);
	maxoff = PageGetMaxOffsetNumber(page);
	for (off = AbtFirstDataOffset(AbtPageGetOpaque(page)); off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		if (callback(&itup->t_tid, callback_state))
		{
			deletable[ndeletable++] = off;
			removed += abt_leaf_effective_weight(itup, info->weighted);
		}
	}

	if (ndeletable > 0)
	{
		START_CRIT_SECTION();
		PageIndexMultiDelete(page, deletable, ndeletable);
		AbtPageGetOpaque(page)->sid++;
		MarkBufferDirty(leafbuf);
		if (RelationNeedsWAL(rel))
			abt_xlog_vacuum(leafbuf, deletable, ndeletable);
		END_CRIT_SECTION();

		/* bottom-up: every intermediate state overcounts */
		if (removed > 0)
			for (level = path.depth - 2; level >= 0; level--)
				abt_add_downlink_weight(rel, path.bufs[level], path.offs[level],
										-(int64) removed);
		stats->tuples_removed += ndeletable;
	}

	abt_vac_release(&path);
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
 * Set each downlink of the exclusively locked internal page to the exact
 * weight of its child.  The child is locked after the parent, the writers'
 * order, and a writer that has added to a downlink holds the child until
 * it has added below, so the child's sum already contains every weight
 * the downlink legitimately carries.  Returns the number of fixes.
 */
static int
abt_repair_page(Relation rel, AbtIndexInfo *info, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	OffsetNumber off;
	int			fixed = 0;

	for (off = AbtFirstDataOffset(AbtPageGetOpaque(page));
		 off <= PageGetMaxOffsetNumber(page); off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		AbtPivotAux *aux = AbtPivotGetAux(itup);
		Buffer		cbuf = ReadBuffer(rel, AbtDownlinkGetChild(itup));
		uint64		actual;

		LockBuffer(cbuf, BUFFER_LOCK_SHARE);
		abt_check_page(rel, cbuf);
		actual = abt_page_weight(BufferGetPage(cbuf), info->weighted);
		UnlockReleaseBuffer(cbuf);
		if (actual != aux->weight)
		{
			/* a recomputation: bump the RID, as a split does */
			aux->rid++;
			abt_add_downlink_weight(rel, buf, off, (int64) (actual - aux->weight));
			fixed++;
		}
	}
	return fixed;
}

/*
 * Make every downlink weight exact again, level by level from the bottom.
 * Weights overcount after a crash in the middle of an insert (the adds on
 * the way down are in the WAL, the leaf entry is not) or after an insert
 * that failed half way; this is where W2 (README) is restored.
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
			Buffer		buf;

			if (levels[blkno] != level)
				continue;
			vacuum_delay_point_compat();
			buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, info->strategy);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			fixed += abt_repair_page(rel, info_abt, buf);
			UnlockReleaseBuffer(buf);
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
