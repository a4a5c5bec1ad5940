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
 * abt_recovery_check() uses the same repair after crash recovery, to raise
 * the downlinks that recovery can leave lighter than their child pages.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"
#include "abtree_ext.h"

#include "mvstore/mvstore.h"

#include "access/genam.h"
#include "access/xlog.h"
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
 * What VACUUM does to one leaf: entries to remove, and posting tuples to
 * replace by what is left of them (abt_posting_without).
 */
typedef struct AbtVacLeaf
{
	OffsetNumber deletable[MaxIndexTuplesPerPage];
	int			ndeletable;
	OffsetNumber updated[MaxIndexTuplesPerPage];
	IndexTuple	newtups[MaxIndexTuplesPerPage];
	int			nupdated;
	uint64		removed;		/* the weight that goes */
	int64		tids_removed;	/* the heap TIDs that go */
} AbtVacLeaf;

/*
 * The sketch hashes of the valid heap rows that leave the leaf: an entry's
 * once per TID it loses (removed whole, newtup NULL: all of them; replaced
 * by newtup, those newtup lacks).
 */
static int
abt_vacuum_hashes(Relation rel, Page page, OffsetNumber off, IndexTuple newtup,
				  AbtSketchHashes *hashes)
{
	IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
	int			gone = abt_leaf_ntids(itup) - (newtup != NULL ? abt_leaf_ntids(newtup) : 0);

	if (!TransactionIdIsValid(abt_leaf_xmin(itup)))
		return 0;
	abt_sketch_hash_tuple(rel, itup, &hashes[0]);
	for (int i = 1; i < gone; i++)
		hashes[i] = hashes[0];
	return gone;
}

/*
 * Remove entries deletable[0..ndel) of a leaf whose path is held and
 * replace entries updated[0..nupd) by newtups, with the weight removed
 * they carried, in one critical section and one WAL record: the leaf, the
 * path's downlinks and the sketches (S1: valid entries leave them).
 * one_by_one: the record may hold only this entry's sketch pages.  A
 * replaced posting tuple has the record carry a full image of the leaf.
 */
static void
abt_vacuum_remove(Relation rel, Buffer leafbuf, Buffer *path, OffsetNumber *offs, int npath,
				  OffsetNumber *deletable, int ndel, OffsetNumber *updated,
				  IndexTuple *newtups, int nupd, uint64 removed, bool weighted,
				  bool one_by_one)
{
	Page		page = BufferGetPage(leafbuf);
	AbtSketchHashes *hashes = palloc(sizeof(AbtSketchHashes) * ABT_MAX_TIDS_PER_PAGE);
	int			nhashes = 0;
	AbtSketchOp sketch;

	for (int k = 0; k < ndel; k++)
		nhashes += abt_vacuum_hashes(rel, page, deletable[k], NULL, &hashes[nhashes]);
	for (int k = 0; k < nupd; k++)
		nhashes += abt_vacuum_hashes(rel, page, updated[k], newtups[k], &hashes[nhashes]);
	abt_xlog_reserve(rel, npath + (one_by_one ? abt_sketch_narrow_max_blocks(rel) :
								   abt_sketch_max_blocks(rel)),
					 abt_sketch_max_rdatas(rel));
	if (nhashes == 0)
		abt_sketch_none(&sketch, rel);
	else if (one_by_one)
		abt_sketch_lock_narrow(&sketch, rel, &hashes[0]);
	else
		abt_sketch_lock(&sketch, rel, NULL);
	START_CRIT_SECTION();
	for (int k = 0; k < nhashes; k++)
		abt_sketch_apply(&sketch, &hashes[k], false);
	abt_sketch_mark_dirty(&sketch);
	/* replacements first: they keep their offsets, deletions move others */
	for (int k = 0; k < nupd; k++)
		if (!PageIndexTupleOverwrite(page, updated[k], (Item) newtups[k],
									 IndexTupleSize(newtups[k])))
			elog(PANIC, "abtree: could not replace the posting tuple at offset %u of block %u",
				 updated[k], BufferGetBlockNumber(leafbuf));
	if (ndel > 0)
		PageIndexMultiDelete(page, deletable, ndel);
	AbtPageGetOpaque(page)->sid++;
	abt_leaf_update_invalid_flag(page);
	MarkBufferDirty(leafbuf);
	for (int k = 0; k < npath; k++)
	{
		Page		ppage = BufferGetPage(path[k]);

		AbtPivotGetAux((IndexTuple) PageGetItem(ppage, PageGetItemId(ppage, offs[k])))->weight -= removed;
		MarkBufferDirty(path[k]);
	}
	if (RelationNeedsWAL(rel))
		abt_xlog_vacuum(leafbuf, deletable, ndel, nupd > 0, path, npath, weighted, &sketch);
	END_CRIT_SECTION();
	abt_sketch_release(&sketch);
	pfree(hashes);
}

/*
 * Find the dead heap rows of a leaf's entry itup at off: the entry goes
 * (all its TIDs are dead), or is replaced (some are), or stays.
 */
static void
abt_vacuum_entry(Relation rel, IndexTuple itup, OffsetNumber off, bool weighted,
				 IndexBulkDeleteCallback callback, void *callback_state, AbtVacLeaf *vl)
{
	int			n;
	int			ndead = 0;
	bool		dead[ABT_MAX_TIDS_PER_PAGE];
	int			nleft;

	if (!AbtLeafIsPosting(itup))
	{
		if (callback(&itup->t_tid, callback_state))
		{
			vl->deletable[vl->ndeletable++] = off;
			/* a not yet valid entry counts nothing (only overcounts above) */
			vl->removed += abt_leaf_effective_weight(itup, weighted);
			vl->tids_removed++;
		}
		return;
	}
	n = abt_posting_count(itup);
	for (int i = 0; i < n; i++)
	{
		ItemPointerData tid;

		abt_leaf_tid(itup, n, i, &tid);
		dead[i] = callback(&tid, callback_state);
		ndead += dead[i];
	}
	if (ndead == 0)
		return;
	vl->removed += ndead;
	vl->tids_removed += ndead;
	if (ndead == n)
	{
		vl->deletable[vl->ndeletable++] = off;
		return;
	}
	vl->updated[vl->nupdated] = off;
	vl->newtups[vl->nupdated++] = abt_posting_without(rel, itup, dead, &nleft);
}

/*
 * Carry out vl on the leaf, whose path to the root is held: in one record
 * for the leaf, its path and every sketch page, unless a tall tree (wide
 * keys) leaves too few block references for that: then one record per
 * entry, the replacements first and the removals last first, so that the
 * offsets of the others stay put.  The removed weight leaves the versions
 * too.
 */
static void
abt_vacuum_apply(Relation rel, Buffer leafbuf, Buffer *path, OffsetNumber *offs, int npath,
				 AbtVacLeaf *vl, bool weighted)
{
	Page		page = BufferGetPage(leafbuf);
	MvsDelta	forgotten[MaxIndexTuplesPerPage];
	int			nforgotten = abt_vacuum_deltas(page, vl->deletable, vl->ndeletable,
											   vl->updated, vl->newtups, vl->nupdated,
											   weighted, forgotten);

	if (npath + abt_sketch_max_blocks(rel) + 1 <= XLR_MAX_BLOCK_ID)
		abt_vacuum_remove(rel, leafbuf, path, offs, npath, vl->deletable, vl->ndeletable,
						  vl->updated, vl->newtups, vl->nupdated, vl->removed, weighted, false);
	else
	{
		for (int k = 0; k < vl->nupdated; k++)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, vl->updated[k]));

			abt_vacuum_remove(rel, leafbuf, path, offs, npath, NULL, 0,
							  &vl->updated[k], &vl->newtups[k], 1,
							  abt_leaf_ntids(itup) - abt_leaf_ntids(vl->newtups[k]),
							  weighted, true);
		}
		for (int k = vl->ndeletable - 1; k >= 0; k--)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, vl->deletable[k]));

			abt_vacuum_remove(rel, leafbuf, path, offs, npath, &vl->deletable[k], 1,
							  NULL, NULL, 0, abt_leaf_effective_weight(itup, weighted),
							  weighted, true);
		}
	}

	for (int k = 0; k < npath; k++)
	{
		Page		ppage = BufferGetPage(path[k]);
		IndexTuple	dl = (IndexTuple) PageGetItem(ppage, PageGetItemId(ppage, offs[k]));

		mvs_forget(rel, AbtDownlinkGetChild(dl), forgotten, nforgotten);
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
	AbtVacLeaf *vl = palloc(sizeof(AbtVacLeaf));
	AbtStack	stack;
	Buffer		path[ABT_MAX_HEIGHT];
	OffsetNumber offs[ABT_MAX_HEIGHT];
	int			npath;
	Buffer		leafbuf;
	Page		page;
	OffsetNumber off;
	int			k;

	abt_key_from_tuple(rel, key, firstitup, false);
	for (;;)
	{
		leafbuf = abt_vac_lock_leaf(rel, key, &stack);
		if (!BufferIsValid(leafbuf))
		{
			pfree(key);
			pfree(vl);
			return;
		}
		page = BufferGetPage(leafbuf);
		vl->ndeletable = vl->nupdated = 0;
		vl->removed = 0;
		vl->tids_removed = 0;
		for (off = AbtFirstDataOffset(AbtPageGetOpaque(page));
			 off <= PageGetMaxOffsetNumber(page); off++)
			abt_vacuum_entry(rel, (IndexTuple) PageGetItem(page, PageGetItemId(page, off)), off,
							 weighted, callback, callback_state, vl);
		npath = 0;
		if (vl->tids_removed == 0 ||
			(npath = abt_lock_path_to_root(rel, &stack, leafbuf, path, offs)) >= 0)
			break;
		/* a new root since the descent: again */
		for (k = 0; k < vl->nupdated; k++)
			pfree(vl->newtups[k]);
		UnlockReleaseBuffer(leafbuf);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(key);

	if (vl->tids_removed > 0)
		abt_vacuum_apply(rel, leafbuf, path, offs, npath, vl, weighted);
	stats->tuples_removed += vl->tids_removed;
	for (k = 0; k < vl->nupdated; k++)
		pfree(vl->newtups[k]);
	pfree(vl);
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

	*nentries = 0;
	for (off = first; off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		int			n = abt_leaf_ntids(itup);

		*nentries += n;
		for (int i = 0; i < n && callback && !any_dead; i++)
		{
			ItemPointerData tid;

			abt_leaf_tid(itup, n, i, &tid);
			any_dead = callback(&tid, callback_state);
		}
	}
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
	TransactionId cutoff = abt_freeze_cutoff();

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
			bool		freeze = false;

			vacuum_delay_point_compat();
			buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, info->strategy);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			if (!PageIsNew(page) &&
				AbtPageGetOpaque(page)->page_id == ABT_PAGE_ID &&
				AbtPageIsLeaf(AbtPageGetOpaque(page)))
			{
				firstdead = abt_vac_scan_leaf(page, callback, callback_state, &nentries);
				freeze = abt_leaf_needs_freeze(page, cutoff);
			}
			UnlockReleaseBuffer(buf);

			if (firstdead)
			{
				double		before = stats->tuples_removed;

				abt_vacuum_leaf(rel, firstdead, callback, callback_state, stats);
				nentries -= stats->tuples_removed - before;
				pfree(firstdead);
			}
			/* after the removals: what is left of the leaf (README, "Freezing") */
			if (freeze)
				pg_atomic_fetch_add_u64(&abt_shared->entries_frozen,
										abt_freeze_leaf(rel, blkno, cutoff, info->strategy));
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
 * if it differs (raise_only: if it is lower).  The caller holds cbuf
 * exclusively; the parent is locked after it (bottom-up).  A recomputation
 * bumps the downlink's RID and both pages' SIDs, so that a weight pass that
 * had added on the downlink and not yet below notices the loss and adds
 * again (src/abtree/README).  An internal child's weight counts adds in
 * flight that WAL may not have: the record then names the pages above the
 * parent too, whose downlinks redo recomputes (README, "Standbys").  A
 * leaf's weight is its valid entries, which WAL has.
 */
static bool
abt_repair_downlink(Relation rel, AbtIndexInfo *info, BlockNumber pblk, Buffer cbuf,
					bool raise_only)
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
	if (raise_only ? aux->weight < actual : aux->weight != actual)
	{
		Buffer		up[ABT_MAX_HEIGHT];
		int			nup = 0;

		if (RelationNeedsWAL(rel) && !AbtPageIsLeaf(AbtPageGetOpaque(BufferGetPage(cbuf))))
		{
			nup = abt_lock_ancestors(rel, pbuf, up);
			if (nup < 0)
			{
				/* roots kept splitting: leave it to the next VACUUM */
				UnlockReleaseBuffer(pbuf);
				return false;
			}
			abt_xlog_reserve(rel, nup + 1, 0);
		}
		START_CRIT_SECTION();
		aux->weight = actual;
		aux->rid++;
		AbtPageGetOpaque(ppage)->sid++;
		MarkBufferDirty(pbuf);
		for (int k = 0; k < nup; k++)
			MarkBufferDirty(up[k]);
		if (RelationNeedsWAL(rel))
			abt_xlog_set_weight(pbuf, off, actual, up, nup, info->weighted);
		END_CRIT_SECTION();
		for (int k = 0; k < nup; k++)
			UnlockReleaseBuffer(up[k]);
		AbtPageGetOpaque(BufferGetPage(cbuf))->sid++;
		MarkBufferDirtyHint(cbuf, true);
		abt_versions_rebuild(rel, BufferGetBlockNumber(cbuf), BufferGetPage(cbuf), info->weighted);
		fixed = true;
	}
	UnlockReleaseBuffer(pbuf);
	return fixed;
}

/*
 * Check every downlink of internal page blkno against its child; fix the
 * ones that differ (raise_only: that are lower).  The comparison runs on a
 * copy under share locks; only a difference takes the exclusive locks,
 * child first.  Returns the number of fixes; *next (if given) is the
 * page's right sibling.
 */
static int
abt_repair_page(Relation rel, AbtIndexInfo *info, BlockNumber blkno,
				BufferAccessStrategy strategy, bool raise_only, BlockNumber *next)
{
	PGAlignedBlock copy;
	Page		page = copy.data;
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	OffsetNumber off;
	int			fixed = 0;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, buf);
	memcpy(page, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
	if (next)
		*next = AbtPageGetOpaque(page)->next;

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
		if (raise_only ? actual > AbtPivotGetAux(itup)->weight :
			actual != AbtPivotGetAux(itup)->weight)
		{
			LockBuffer(cbuf, BUFFER_LOCK_UNLOCK);
			LockBuffer(cbuf, BUFFER_LOCK_EXCLUSIVE);
			if (abt_repair_downlink(rel, info, blkno, cbuf, raise_only))
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
		if (abt_debug_repair_pause > 0)
			abt_debug_wait((int64) abt_debug_repair_pause + level);
		for (blkno = ABT_METAPAGE + 1; blkno < nblocks; blkno++)
		{
			if (levels[blkno] != level)
				continue;
			vacuum_delay_point_compat();
			fixed += abt_repair_page(rel, info_abt, blkno, info->strategy, false, NULL);
		}
	}
	if (fixed > 0)
		ereport(LOG,
				(errmsg("abtree: made %d downlink weights of index \"%s\" exact again",
						fixed, RelationGetRelationName(rel))));
	pfree(levels);
}

/*
 * Before a backend's first draw from or insert into an index after crash
 * recovery (or a promotion), raise every downlink that is lighter than the sum of its
 * child's stored weights (src/abtree/README, "Crash recovery").  Recovery
 * restores each page from its own last image or flush, so an upper page
 * can lack the add of a pass the crash interrupted while a lower page's
 * image carries it; a draw that enters such a child could never reach its
 * last units.  Adds live on internal downlinks only and a leaf's valid
 * entries are counted by every level-1 downlink that recovery restores
 * (their MARK_VALID recomputed it, or an image taken after it holds it), so
 * the check starts at level 2 and reads no leaf: about one page in a
 * hundred.  Bottom-up, so that a raised downlink is seen by the level
 * above.  The repair is VACUUM's (WAL-logged, RID bumped); on a standby,
 * which cannot write, the primary's repair arrives through WAL.
 */
void
abt_recovery_check(Relation rel)
{
	AbtIndexInfo *info = abt_index_info(rel);
	BlockNumber leftmost[ABT_MAX_HEIGHT];
	uint32		top;
	uint32		level;
	int			raised = 0;
	Buffer		buf;

	if (likely(info->recovery_checked) || RecoveryInProgress())
		return;
	if (info->partitioned || pg_atomic_read_u32(&abt_shared->recovered) == 0)
	{
		info->recovery_checked = true;
		return;
	}

	/* the leftmost page of each level: pages never go, so they stay leftmost */
	buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
	if (!BufferIsValid(buf))
	{
		info->recovery_checked = true;
		return;
	}
	top = AbtPageGetOpaque(BufferGetPage(buf))->level;
	if (top >= ABT_MAX_HEIGHT)
		elog(ERROR, "abtree: index \"%s\" is too deep", RelationGetRelationName(rel));
	for (level = top;; level--)
	{
		Page		page = BufferGetPage(buf);

		leftmost[level] = BufferGetBlockNumber(buf);
		if (level <= 2)
			break;
		buf = abt_relandgetbuf(rel, buf,
							   AbtDownlinkGetChild((IndexTuple) PageGetItem(page,
																			PageGetItemId(page, AbtFirstDataOffset(AbtPageGetOpaque(page))))));
	}
	UnlockReleaseBuffer(buf);

	for (level = 2; level <= top; level++)
	{
		BlockNumber blkno = leftmost[level];

		while (blkno != InvalidBlockNumber)
		{
			CHECK_FOR_INTERRUPTS();
			raised += abt_repair_page(rel, info, blkno, NULL, true, &blkno);
		}
	}
	if (raised > 0)
	{
		pg_atomic_fetch_add_u64(&abt_shared->recovery_raised, raised);
		ereport(LOG,
				(errmsg("abtree: raised %d downlink weights of index \"%s\" that crash recovery left lighter than their child pages",
						raised, RelationGetRelationName(rel))));
	}
	info->recovery_checked = true;
}

static AbtAnalyzeHook abt_analyze_hook = NULL;

void
abt_register_analyze_hook(AbtAnalyzeHook hook)
{
	abt_analyze_hook = hook;
}

IndexBulkDeleteResult *
abtvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	int			n;

	abt_require_preload();
	if (info->analyze_only)
	{
		/* the only call an auto-analyze makes into an index AM */
		if (abt_analyze_hook)
			abt_analyze_hook(info->index, true);
		return stats;
	}
	/* no bulkdelete pass happened: count the entries now */
	if (stats == NULL)
	{
		stats = palloc0(sizeof(IndexBulkDeleteResult));
		abt_vacuum_scan(info, stats, NULL, NULL);
	}
	abt_repair_weights(info);
	/* after the removals, so that the counters say how small the column is */
	n = abt_sketch_rebuild_small(info->index, info->strategy);
	if (n > 0)
		ereport(info->message_level,
				(errmsg("index \"%s\": %d distinct-value sketch(es) rebuilt with an exact set",
						RelationGetRelationName(info->index), n)));
	if (abt_analyze_hook)
		abt_analyze_hook(info->index, false);
	return stats;
}
