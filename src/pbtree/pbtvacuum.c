/*-------------------------------------------------------------------------
 *
 * pbtvacuum.c
 *	  VACUUM of a pbtree: dead entries out of every live partition, closed
 *	  partitions compacted, dropped ones freed, free pages recorded.
 *
 * ambulkdelete holds the reorganisation lock, so no seal copy or merge
 * reads a partition while entries leave it (a copy made from a partition
 * must not bring back entries VACUUM removed).  It walks each live
 * partition's leaf level left to right by right-links rather than in
 * block order: the mutable partition reuses freed pages, so a split may
 * move entries to a lower block number, but always to the right (B-link),
 * where the walk is still to go.  A leaf with dead entries is cleanup-
 * locked (scans keep a pin on the page whose entries they are returning),
 * the entries removed and logged with abtree's VACUUM record.  Removing
 * entries changes no key range, so sealed partitions stay valid and their
 * filters too (a filter may say "maybe" for a key that is gone).
 *
 * amvacuumcleanup compacts closed partitions, frees dropped ones and
 * records every reusable page in the free space map.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "access/genam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

static void
pbt_vacuum_partition(Relation rel, PbtPartition *p, IndexBulkDeleteCallback callback,
					 void *callback_state, IndexBulkDeleteResult *stats)
{
	BlockNumber blkno = pbt_leftmost_leaf(rel, p->head);

	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = ReadBuffer(rel, blkno);
		Page		page;
		OffsetNumber deletable[MaxIndexTuplesPerPage];
		int			ndeletable = 0;
		OffsetNumber off;

		vacuum_delay_point_compat();
		LockBufferForCleanup(buf);
		abt_check_page(rel, buf);
		page = BufferGetPage(buf);
		for (off = AbtFirstDataOffset(AbtPageGetOpaque(page));
			 off <= PageGetMaxOffsetNumber(page); off++)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

			if (callback(&itup->t_tid, callback_state))
				deletable[ndeletable++] = off;
			else
				stats->num_index_tuples += 1;
		}
		if (ndeletable > 0)
		{
			START_CRIT_SECTION();
			PageIndexMultiDelete(page, deletable, ndeletable);
			AbtPageGetOpaque(page)->sid++;
			MarkBufferDirty(buf);
			if (RelationNeedsWAL(rel))
				abt_xlog_vacuum(buf, deletable, ndeletable, false, NULL, 0, false, NULL);
			END_CRIT_SECTION();
			stats->tuples_removed += ndeletable;
		}
		blkno = AbtPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
}

IndexBulkDeleteResult *
pbtbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	rel = info->index;
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));

	abt_require_preload();
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	stats->num_index_tuples = 0;
	LockPage(rel, PBT_LOCK_REORG, ExclusiveLock);
	pbt_read_directory(rel, dir);
	for (int i = 0; i < dir->n; i++)
	{
		PbtPartition *p = &dir->parts[i];

		if (p->state == PBT_MUTABLE || p->state == PBT_CLOSED || p->state == PBT_SEALED)
			pbt_vacuum_partition(rel, p, callback, callback_state, stats);
	}
	UnlockPage(rel, PBT_LOCK_REORG, ExclusiveLock);
	pfree(dir);
	return stats;
}

/* Record every page a partition may reuse; returns how many. */
static BlockNumber
pbt_record_free_pages(Relation rel)
{
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BlockNumber nfree = 0;

	pbt_read_directory(rel, dir);
	for (BlockNumber blkno = PBT_METAPAGE + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf = ReadBuffer(rel, blkno);

		vacuum_delay_point_compat();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		if (pbt_page_reusable(dir, BufferGetPage(buf)))
		{
			RecordFreeIndexPage(rel, blkno);
			nfree++;
		}
		UnlockReleaseBuffer(buf);
	}
	IndexFreeSpaceMapVacuum(rel);
	pfree(dir);
	return nfree;
}

IndexBulkDeleteResult *
pbtvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	rel = info->index;
	BlockNumber nfree;

	abt_require_preload();
	if (info->analyze_only)
		return stats;
	if (stats == NULL)
	{
		/* no bulkdelete pass: count the entries ourselves */
		PbtDirectory *dir = palloc(sizeof(PbtDirectory));

		stats = palloc0(sizeof(IndexBulkDeleteResult));
		pbt_read_directory(rel, dir);
		for (int i = 0; i < dir->n; i++)
			if (dir->parts[i].state == PBT_MUTABLE || dir->parts[i].state == PBT_CLOSED ||
				dir->parts[i].state == PBT_SEALED)
				stats->num_index_tuples += pbt_count_entries(rel, dir->parts[i].head);
		pfree(dir);
	}
	LockPage(rel, PBT_LOCK_REORG, ExclusiveLock);
	pbt_reorganise_locked(rel);
	nfree = pbt_record_free_pages(rel);
	UnlockPage(rel, PBT_LOCK_REORG, ExclusiveLock);
	stats->num_pages = RelationGetNumberOfBlocks(rel);
	stats->pages_free = nfree;
	stats->estimated_count = false;
	return stats;
}
