/*-------------------------------------------------------------------------
 *
 * abtsketchrebuild.c
 *	  VACUUM gives a sketch its exact set back once the column is small
 *	  again (src/abtree/README, "Sketches", "Getting the set back").
 *
 * An insert gives a sketch's exact set up when one of its groups fills, and
 * removals cannot bring it back: the set's bytes in groups the insert did
 * not hold are stale, and no sketch knows which values are left.  Only
 * the entries know.  So at the end of a VACUUM, when a sketch has no set
 * and its counters say the column now has few enough distinct values for
 * one, the sketch is rebuilt from the valid entries, as a build makes it.
 *
 * S1 needs the rebuilt sketch to count exactly the valid entries when it
 * is written.  Entries become valid only in an insert (MARK_VALID, in the
 * inserting backend, which holds RowExclusiveLock on the table) and stop
 * counting only in VACUUM (which this one is, and which excludes any
 * other).  A ShareLock on the table excludes every insert; VACUUM takes it
 * only if it can do so at once, so that it never waits behind writers, and
 * holds it while it reads the leaves and writes the sketch.  Writers that
 * come meanwhile wait for it (a scan of the leaves), or, if this is
 * autovacuum, cancel it after deadlock_timeout as they would for its own
 * lock.  Each rebuilt sketch is written as one record of page images, so a
 * crash leaves either the old sketch or the new one.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "hll/chll.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

bool		abt_sketch_rebuild = true;

/*
 * Mean keys per set group below which a rebuild is tried: a group holds at
 * most CHLL_SET_MAX_USED (150), and with 110 on average one of 10 groups
 * overflows with probability about 2e-4 (binomial), when the rebuild just
 * gives the set up again.  About 1,100 distinct values for 512 buckets.
 */
#define ABT_REBUILD_KEYS_PER_GROUP	110

/* Does slot k's sketch lack its set while the column is small again? */
static bool
abt_sketch_rebuild_wanted(Relation rel, int k)
{
	uint8	   *sk = abt_sketch_copy(rel, k);
	bool		wanted;

	if (sk == NULL)
		return false;
	wanted = chll_set_lost(sk) &&
		chll_estimate_sketch(sk) <=
		(double) ABT_REBUILD_KEYS_PER_GROUP * chll_set_groups(chll_log2m(sk));
	pfree(sk);
	return wanted;
}

/* Add every valid entry of every leaf to the sketches fresh[k] != NULL */
static void
abt_sketch_rebuild_scan(Relation rel, uint8 **fresh, BufferAccessStrategy strategy)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);

	for (BlockNumber blkno = ABT_METAPAGE + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;
		AbtPageOpaque opaque;

		vacuum_delay_point_compat();
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		/* a new page (a split cut by a crash) has no special space */
		opaque = PageIsNew(page) ? NULL : AbtPageGetOpaque(page);
		if (opaque && opaque->page_id == ABT_PAGE_ID && AbtPageIsLeaf(opaque))
		{
			for (OffsetNumber off = AbtFirstDataOffset(opaque);
				 off <= PageGetMaxOffsetNumber(page); off++)
			{
				IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
				AbtSketchHashes h;

				if (!TransactionIdIsValid(abt_leaf_xmin(itup)))
					continue;	/* not yet valid: it does not count (S1) */
				abt_sketch_hash_tuple(rel, itup, &h);
				/* a row each: a posting tuple's TIDs count one by one */
				for (int i = abt_leaf_ntids(itup); i > 0; i--)
					for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
						if (fresh[k] && h.present[k])
							(void) chll_add_hash(fresh[k], h.hash[k]);
			}
		}
		UnlockReleaseBuffer(buf);
	}
}

/*
 * At the end of VACUUM: rebuild the sketches that gave their set up, if
 * the column is small enough for one again and no writer is in the way.
 * Returns the number of sketches rebuilt.
 */
int
abt_sketch_rebuild_small(Relation rel, BufferAccessStrategy strategy)
{
	uint8	   *fresh[ABT_SKETCH_MAX_COLS] = {0};
	Oid			heapoid;
	int			log2m;
	int			n = 0;

	if (!abt_sketch_rebuild || IsParallelWorker() || RecoveryInProgress())
		return 0;
	log2m = abt_sketch_info(rel)->sketch_log2m;
	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		if (!abt_sketch_rebuild_wanted(rel, k))
			continue;
		fresh[k] = palloc(chll_sketch_size(log2m));
		abt_sketch_init(fresh[k], log2m);
		n++;
	}
	if (n == 0)
		return 0;
	heapoid = IndexGetRelation(RelationGetRelid(rel), false);
	if (!ConditionalLockRelationOid(heapoid, ShareLock))
	{
		elog(DEBUG1, "abtree: writers are active, sketches of \"%s\" keep no exact set",
			 RelationGetRelationName(rel));
		return 0;
	}
	abt_sketch_rebuild_scan(rel, fresh, strategy);
	n = 0;
	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		/* a group overflowed again: keep the sketch as it is */
		if (fresh[k] == NULL || chll_set_lost(fresh[k]))
			continue;
		abt_sketch_overwrite(rel, k, fresh[k]);
		n++;
	}
	UnlockRelationOid(heapoid, ShareLock);
	return n;
}

/*
 * Replace slot k's sketch by sk: every page of it locked exclusively, head
 * first (the order inserts use), rewritten and logged as one record of
 * page images, so that a crash or a standby sees the old sketch or the new
 * one.  At most ABT_SKETCH_MAX_PAGES (19) blocks, within a record's 33.
 */
void
abt_sketch_overwrite(Relation rel, int k, const uint8 *sk)
{
	AbtIndexInfo *info = abt_sketch_info(rel);
	AbtSketchLayout lay;
	Buffer		bufs[ABT_SKETCH_MAX_PAGES];
	BlockNumber first = abt_sketch_first_page(info, k);

	StaticAssertStmt(ABT_SKETCH_MAX_PAGES <= XLR_MAX_BLOCK_ID + 1, "one record per sketch");
	abt_sketch_layout(info->sketch_log2m, &lay);
	Assert(chll_log2m(sk) == lay.log2m);
	if (RelationNeedsWAL(rel))
		XLogEnsureRecordSpace(lay.pages, 0);
	for (int c = 0; c < lay.pages; c++)
		bufs[c] = abt_sketch_lock_page(rel, first + c, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	for (int c = 0; c < lay.pages; c++)
	{
		abt_sketch_fill_page(BufferGetPage(bufs[c]), &lay, k, c, sk);
		MarkBufferDirty(bufs[c]);
	}
	if (RelationNeedsWAL(rel))
		abt_xlog_pages(ABT_PAGES_SKETCH, bufs, lay.pages);
	END_CRIT_SECTION();
	for (int c = 0; c < lay.pages; c++)
		UnlockReleaseBuffer(bufs[c]);
}
