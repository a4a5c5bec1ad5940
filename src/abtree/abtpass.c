/*-------------------------------------------------------------------------
 *
 * abtpass.c
 *	  The second phase of an abtree insert: add the new entry's weight to
 *	  every downlink above it, top-down, and then mark the entry valid.
 *
 * This is paper 000's Algorithm 2 with our own way of establishing safe
 * pages (Algorithm 3); src/abtree/README, "Weight maintenance", gives the
 * argument.  In short: the pass holds at most a page and its child (and,
 * to check, the page above), never locks downwards while holding a lock,
 * and after every moment without locks it asks whether a split (or a
 * VACUUM recomputation) undid its last add.  Only the add on the lowest
 * level done so far can be undone by such an event: a recomputation sums
 * the child's downlinks, and those below an add already carry the weight.
 *
 * With abtree.weight_protocol = safe_page the adds are atomic
 * fetch-and-adds under share locks; page_exclusive runs the same pass with
 * exclusive locks.  The adds are not WAL-logged one by one: they are like
 * hint bits (the page marked dirty without a record, but never with a hint
 * image below the root: abt_pass_dirty_no_image), and the MARK_VALID
 * record that ends the pass makes redo recompute the downlinks along the
 * path.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "executor/instrument.h"
#include "mvstore/mvstore.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/rel.h"

/* One level on which the pass has added the weight. */
typedef struct AbtPassLevel
{
	Buffer		buf;			/* pinned, not locked: the page added on */
	OffsetNumber off;			/* where the downlink was (a hint only) */
	uint16		sid;			/* its SID just after the add */
	uint16		rid;			/* the downlink's RID just after the add */
	BlockNumber child;			/* the downlink's child: (child, rid) names
								 * the downlink state that has the add */
} AbtPassLevel;

typedef struct AbtPass
{
	Relation	rel;
	AbtKey	   *key;
	uint64		w;
	int			mode;			/* lock mode for internal pages */
	bool		logged;			/* the index is WAL-logged */
	const AbtPosHint *hint;		/* phase 1's positions, or NULL */
	int			n;				/* levels added on, root side first */
	AbtPassLevel lv[ABT_MAX_HEIGHT];
	MvsWriter	versions;		/* the weight store's record of the adds */
} AbtPass;

/* What settling a changed page decided. */
typedef enum AbtSettle
{
	ABT_SETTLE_ADD,				/* add on p at *off, then go on with c */
	ABT_SETTLE_DESCEND,			/* p is safe but c is not the child: look again */
	ABT_SETTLE_RESTART			/* a new root: start from the top */
} AbtSettle;


/*
 * Testing aid (abtree.debug_pass_pause, abtree.debug_sample_pause,
 * abtree.debug_repair_pause): wait
 * for the advisory lock key in share mode, the way
 * pg_advisory_lock_shared(bigint) would, and let go at once.  The caller
 * holds no buffer lock.
 */
void
abt_debug_wait(int64 key)
{
	LOCKTAG		tag;

	if (key == 0)
		return;
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) (key >> 32), (uint32) key, 1);
	(void) LockAcquire(&tag, ShareLock, false, false);
	LockRelease(&tag, ShareLock, false);
}

void
abt_debug_pause(int child_level)
{

	if (abt_debug_pass_pause_level >= 0 && abt_debug_pass_pause_level != child_level)
		return;
	abt_debug_wait(abt_debug_pass_pause);
}

static int
abt_pass_mode(AbtPass *pass, uint16 level)
{
	return level == 0 ? BUFFER_LOCK_EXCLUSIVE : pass->mode;
}

static void
abt_pass_drop_levels(AbtPass *pass)
{
	while (pass->n > 0)
		ReleaseBuffer(pass->lv[--pass->n].buf);
}

/*
 * The downlink to follow on the locked internal page buf.  Phase 1 found it
 * on this page moments ago, or on its copy: if the page's SID has not moved
 * since, no item of it changed (every change of an item moves the SID, the
 * assumption the pass's checks rest on too), so the same search would give
 * the same offset; two comparisons confirm it (below).  Issue 22: the second
 * search was a tenth of an insert with the leaf's.  Assertion builds check
 * the hint against the search.
 */
static OffsetNumber
abt_pass_downlink(AbtPass *pass, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blkno = BufferGetBlockNumber(buf);

	for (int i = 0; pass->hint && i < pass->hint->stack.depth; i++)
	{
		const AbtStackEntry *e = &pass->hint->stack.e[i];

		/*
		 * The SID is 16 bits: a copy of the page that phase 1 routed
		 * through (abtstack.c) can be old enough for the page's SID to have
		 * come back to the copy's, so the offset is checked, not trusted.
		 */
		if (e->blkno == blkno && e->sid == AbtPageGetOpaque(page)->sid &&
			abt_internal_offset_holds(pass->rel, pass->key, page, e->off))
		{
			Assert(e->off == abt_binsrch_internal(pass->rel, pass->key, page));
			return e->off;
		}
	}
	return abt_binsrch_internal(pass->rel, pass->key, page);
}

/* The new entry on the exclusively locked leaf (hint: as above). */
static OffsetNumber
abt_pass_leaf_entry(AbtPass *pass, Buffer leaf)
{
	Page		page = BufferGetPage(leaf);
	const AbtPosHint *hint = pass->hint;

	if (hint && hint->leaf == BufferGetBlockNumber(leaf) &&
		hint->leafsid == AbtPageGetOpaque(page)->sid)
	{
		Assert(hint->leafoff == abt_find_leaf_entry(pass->rel, pass->key, page));
		return hint->leafoff;
	}
	return abt_find_leaf_entry(pass->rel, pass->key, page);
}

/*
 * Mark the share-locked internal page buf dirty after an add, as
 * MarkBufferDirtyHint does, but never with a hint image of it: such an
 * image would carry every add in flight on buf without the pages above
 * (src/abtree/README, "Standbys").  Returns false, and does nothing, when
 * buf would need its first image since the checkpoint began (its LSN is
 * not past the redo pointer): the caller then logs buf with its path, a
 * PATH record, which images buf.
 *
 * abt_pass_relock looked at the LSN already, but a checkpoint can begin
 * between that look and the add.  Here the look and the dirty bit are one
 * step for a checkpoint, through DELAY_CHKPT_START, as for
 * MarkBufferDirtyHint's own look: a checkpoint whose redo pointer passes
 * the look waits for us before it writes any buffer, and writes buf with
 * the add, whole, before its checkpoint record; the next change of buf
 * after that sees buf's LSN behind the new redo pointer and images it.
 */
static bool
abt_pass_dirty_no_image(Buffer buf)
{
	BufferDesc *hdr = GetBufferDescriptor(buf - 1);
	int			saved_flags = MyProc->delayChkptFlags;
	bool		done;

	Assert(!BufferIsLocal(buf));
	MyProc->delayChkptFlags |= DELAY_CHKPT_START;
	done = !XLogHintBitIsNeeded() || BufferGetLSNAtomic(buf) > GetRedoRecPtr();
	if (done)
	{
		uint32		state = LockBufHdr(hdr);

		if ((state & BM_DIRTY) == 0)
			pgBufferUsage.shared_blks_dirtied++;
		state |= BM_DIRTY | BM_JUST_DIRTIED;
		UnlockBufHdr(hdr, state);
	}
	MyProc->delayChkptFlags = saved_flags;
	return done;
}

/*
 * Add the weight on the downlink at off of the locked page buf, keep buf.
 * Returns true if buf, an internal page below the root, now needs a PATH
 * record (abt_pass_dirty_no_image), which abt_pass_relock means to have
 * written first but cannot when a checkpoint begins just after its look.
 * Until then buf stays pinned, so the add cannot be lost with the page.
 */
static bool
abt_pass_add(AbtPass *pass, Buffer buf, OffsetNumber off)
{
	Page		page = BufferGetPage(buf);
	IndexTuple	dl = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
	AbtPivotAux *aux = AbtPivotGetAux(dl);
	AbtPassLevel *lv;
	bool		needs_path = false;

	/* the add and its version in the weight store, as one step for readers */
	mvs_add(&pass->versions, AbtDownlinkGetChild(dl), &aux->weight, pass->w,
			pass->mode == BUFFER_LOCK_SHARE);
	if (!pass->logged)
		MarkBufferDirty(buf);	/* exclusive: see abt_weight_pass */
	else if (AbtPageIsRoot(AbtPageGetOpaque(page)) || !abt_debug_path_record)
		MarkBufferDirtyHint(buf, true); /* nothing above the root */
	else
		needs_path = !abt_pass_dirty_no_image(buf);

	if (pass->n >= ABT_MAX_HEIGHT)
		elog(ERROR, "abtree: index \"%s\" is too deep", RelationGetRelationName(pass->rel));
	lv = &pass->lv[pass->n++];
	lv->buf = buf;
	lv->off = off;
	lv->sid = AbtPageGetOpaque(page)->sid;
	lv->rid = aux->rid;
	lv->child = AbtDownlinkGetChild(dl);
	return needs_path;
}

/* The root, locked in the pass's mode (exclusively if it is a leaf). */
static Buffer
abt_pass_lock_root(AbtPass *pass)
{
	for (;;)
	{
		Buffer		buf = abt_get_root(pass->rel, ABT_METAPAGE, pass->mode);
		AbtPageOpaque opaque;

		if (!BufferIsValid(buf))
			elog(ERROR, "abtree: index \"%s\" lost its root during an insert",
				 RelationGetRelationName(pass->rel));
		opaque = AbtPageGetOpaque(BufferGetPage(buf));
		if (!AbtPageIsLeaf(opaque) || pass->mode == BUFFER_LOCK_EXCLUSIVE)
			return buf;
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		if (AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(buf))))
			return buf;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Is the add on the level above the page p (level lv[n-1]) still counted
 * by the downlink that now leads to p?  Locks that page (B-link order:
 * above what we hold), moving right if the downlink to p moved.  It is if
 * that downlink is the one we added on (same child) and was not
 * recomputed since (same RID: RIDs only go up, also when a split copies a
 * downlink, and the downlink to a block is made once, so (child, RID)
 * names one state of one downlink).  If it is, the level is re-based on
 * where the downlink now is and nothing stays locked; if not, *q is the
 * locked page that has the downlink to p.  A downlink to p that is not the
 * one we added on (p is a right half made after the add, defect 2 of
 * issue 20) may or may not count the add: treated as lost, so at worst an
 * overcount.
 */
static bool
abt_pass_add_intact(AbtPass *pass, BlockNumber p, Buffer *q)
{
	AbtPassLevel *top = &pass->lv[pass->n - 1];
	Buffer		buf = top->buf;
	OffsetNumber off;
	uint16		rid;

	LockBuffer(buf, pass->mode);
	if (top->child == p && AbtPageGetOpaque(BufferGetPage(buf))->sid == top->sid)
	{
		/* no item of the page changed: no recomputation of any downlink */
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		return true;
	}
	while ((off = abt_find_downlink(BufferGetPage(buf), p, InvalidOffsetNumber)) ==
		   InvalidOffsetNumber)
	{
		Buffer		next;

		if (AbtPageIsRightmost(AbtPageGetOpaque(BufferGetPage(buf))))
			elog(ERROR, "abtree: downlink to block %u vanished from index \"%s\"",
				 p, RelationGetRelationName(pass->rel));
		next = abt_read_hinted(pass->rel, AbtPageGetOpaque(BufferGetPage(buf))->next);
		LockBuffer(next, pass->mode);
		abt_check_page(pass->rel, next);
		if (buf == top->buf)
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		else
			UnlockReleaseBuffer(buf);
		buf = next;
	}
	rid = AbtPivotGetAux((IndexTuple) PageGetItem(BufferGetPage(buf),
												  PageGetItemId(BufferGetPage(buf), off)))->rid;
	/* the level now lives in buf, whatever we decide */
	if (buf != top->buf)
	{
		ReleaseBuffer(top->buf);
		top->buf = buf;
	}
	top->off = off;
	if (top->child == p && rid == top->rid)
	{
		top->sid = AbtPageGetOpaque(BufferGetPage(buf))->sid;
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		return true;
	}
	*q = buf;
	return false;
}

/*
 * The page p changed while we held no lock (its SID moved).  We hold p and
 * its believed child c, both locked.  Find the page to add on next:
 * p itself if the add above p is intact, else the page above (its add was
 * undone: Figure 6 case 4), and so on up.  Above the first undone add an
 * add can only have been undone if its page split after the undoing one;
 * its changed RID cannot tell before from after, so we redo it then too:
 * at worst an overcount, which VACUUM repairs, never an undercount.
 */
static AbtSettle
abt_pass_settle(AbtPass *pass, Buffer *p, Buffer *c, OffsetNumber *off)
{
	bool		first = true;

	for (;;)
	{
		Buffer		q = InvalidBuffer;

		if (pass->n == 0)
		{
			if (AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(*p))))
				break;
			/* the root split: nothing added yet, so start over cleanly */
			if (BufferIsValid(*c))
				UnlockReleaseBuffer(*c);
			UnlockReleaseBuffer(*p);
			*c = InvalidBuffer;
			abt_count(pass_restart);
			return ABT_SETTLE_RESTART;
		}
		if (abt_pass_add_intact(pass, BufferGetBlockNumber(*p), &q))
			break;
		if (first)
			abt_count(pass_reset);
		else
			abt_count(pass_cautious_readd);
		/* take q (and its pin) off the levels: it is where we add again */
		pass->n--;
		if (BufferIsValid(*c))
			UnlockReleaseBuffer(*c);
		*c = *p;
		*p = q;
		first = false;
	}

	*off = abt_binsrch_internal(pass->rel, pass->key, BufferGetPage(*p));
	if (BufferIsValid(*c) &&
		AbtDownlinkGetChild((IndexTuple) PageGetItem(BufferGetPage(*p),
													 PageGetItemId(BufferGetPage(*p), *off))) ==
		BufferGetBlockNumber(*c))
	{
		if (first)
			abt_count(pass_still_safe);
		return ABT_SETTLE_ADD;
	}
	/* case 5: the child split and our key went to its new right half */
	if (first)
		abt_count(pass_child_moved);
	if (BufferIsValid(*c))
		UnlockReleaseBuffer(*c);
	*c = InvalidBuffer;
	return ABT_SETTLE_DESCEND;
}

/*
 * A stack for the levels above "level" on the way to key, by a descent
 * from the root with share locks (one at a time).  The caller holds pages
 * of "level" and below, exclusively: locking pages above them is the
 * lock order (src/abtree/README).
 */
static void
abt_pass_stack_above(AbtPass *pass, uint16 level, AbtStack *stack)
{
	AbtMetaPageData meta;
	Buffer		buf;

	/*
	 * Not abt_get_root: it may try the cached root, which can be the old
	 * root the caller holds.  A root from the metapage is above "level"
	 * even if it has split since.
	 */
	abt_read_meta(pass->rel, &meta);
	buf = abt_read_hinted(pass->rel, meta.root);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	abt_check_page(pass->rel, buf);
	stack->depth = 0;
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		OffsetNumber off;

		if (opaque->level <= level)
			elog(ERROR, "abtree: root of index \"%s\" is at level %u, not above %u",
				 RelationGetRelationName(pass->rel), opaque->level, level);
		if (abt_key_beyond_page(pass->rel, pass->key, page))
		{
			buf = abt_relandgetbuf(pass->rel, buf, opaque->next);
			continue;
		}
		if (stack->depth >= ABT_MAX_HEIGHT)
			elog(ERROR, "abtree: index \"%s\" is too deep", RelationGetRelationName(pass->rel));
		off = abt_binsrch_internal(pass->rel, pass->key, page);
		stack->e[stack->depth].blkno = BufferGetBlockNumber(buf);
		stack->e[stack->depth].off = off;
		stack->depth++;
		/* never lock a page of "level": the caller holds one exclusively */
		if (opaque->level == level + 1)
		{
			UnlockReleaseBuffer(buf);
			break;
		}
		buf = abt_relandgetbuf(pass->rel, buf,
							   AbtDownlinkGetChild((IndexTuple) PageGetItem(page,
																			PageGetItemId(page, off))));
	}
}

/*
 * Lock exclusively, bottom-up, the pages from the parent of leaf (the
 * leaf, or a page the pass is about to add on, held exclusively) to the
 * real root as they are now: path[k] holds the downlink to the page below
 * it.  On each level the search starts at the page the pass added on
 * (downlinks only move right); above the highest of those (the root split
 * since the pass began), or should a level end without the downlink, a
 * descent by key finds the way.  Returns the number of pages.
 */
static int
abt_pass_lock_path(AbtPass *pass, Buffer leaf, Buffer *path)
{
	AbtStack	stack;
	Buffer		cur = leaf;
	int			level_index;
	int			n = 0;
	int			k;
	bool		searched = false;

	stack.depth = pass->n;
	for (k = 0; k < pass->n; k++)
	{
		stack.e[k].blkno = BufferGetBlockNumber(pass->lv[k].buf);
		/* abt_find_downlink tries it first: no scan while nothing moved */
		stack.e[k].off = pass->lv[k].off;
	}
	level_index = stack.depth - 1;
	while (!AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(cur))))
	{
		OffsetNumber off;
		Buffer		parent = InvalidBuffer;

		if (n >= ABT_MAX_HEIGHT)
			elog(ERROR, "abtree: index \"%s\" is too deep", RelationGetRelationName(pass->rel));
		if (level_index >= 0)
			parent = abt_lock_parent(pass->rel, &stack, level_index, BufferGetBlockNumber(cur),
									 BUFFER_LOCK_EXCLUSIVE, &off);
		if (!BufferIsValid(parent))
		{
			if (searched)
				elog(ERROR, "abtree: no downlink to block %u in index \"%s\"",
					 BufferGetBlockNumber(cur), RelationGetRelationName(pass->rel));
			abt_pass_stack_above(pass, AbtPageGetOpaque(BufferGetPage(cur))->level, &stack);
			level_index = stack.depth - 1;
			searched = true;
			continue;
		}
		level_index--;
		searched = false;
		path[n++] = parent;
		cur = parent;
	}
	return n;
}

/*
 * At the leaf: find the entry and mark it valid.  The record names the
 * path from the leaf to the root as it is now, held exclusively: redo
 * recomputes every downlink on it (other passes' redo may have recomputed
 * them without our entry), and the exclusive locks order the record after
 * every hint-style image of those pages that was copied before our adds.
 */
static void
abt_pass_finish(AbtPass *pass, Buffer leaf)
{
	Buffer		path[ABT_MAX_HEIGHT];
	OffsetNumber off;
	int			npath = 0;
	int			k;

	off = abt_pass_leaf_entry(pass, leaf);
	if (off == InvalidOffsetNumber)
		elog(ERROR, "abtree: new entry not found in index \"%s\"",
			 RelationGetRelationName(pass->rel));
	if (pass->logged)
		npath = abt_pass_lock_path(pass, leaf, path);
	abt_mark_valid(pass->rel, leaf, off, path, npath, NULL, 0);
	for (k = 0; k < npath; k++)
		UnlockReleaseBuffer(path[k]);
	UnlockReleaseBuffer(leaf);
	abt_pass_drop_levels(pass);
}

/*
 * Would an add on the locked page p give it its first hint image since the
 * checkpoint began (MarkBufferDirtyHint with data checksums or
 * wal_log_hints)?  The image carries every add in flight on p, which the
 * WAL of the pages above does not have: a standby (and crash recovery)
 * would restore p heavier than its downlink.  The root has nothing above.
 */
static bool
abt_pass_needs_path(AbtPass *pass, Buffer p)
{
	if (!pass->logged || !XLogHintBitIsNeeded() || !abt_debug_path_record ||
		AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(p))))
		return false;
	return BufferGetLSNAtomic(p) <= GetRedoRecPtr();
}

/*
 * Log p (its image: it is p's first WAL since the checkpoint) with the
 * path above it to the root, all held exclusively, so that redo recomputes
 * the downlinks above p from p as the image has it (src/abtree/README,
 * "Standbys").  p's LSN is then past the redo pointer: the add that
 * follows writes no image.  Nothing changes on the primary.  The caller
 * holds no lock.
 */
static void
abt_pass_log_path(AbtPass *pass, Buffer p)
{
	Buffer		path[ABT_MAX_HEIGHT];
	int			npath;

	LockBuffer(p, BUFFER_LOCK_EXCLUSIVE);
	npath = abt_pass_lock_path(pass, p, path);
	abt_xlog_reserve(pass->rel, npath + 1, 0);
	START_CRIT_SECTION();
	MarkBufferDirty(p);
	for (int k = 0; k < npath; k++)
		MarkBufferDirty(path[k]);
	abt_xlog_path(p, path, npath, abt_index_info(pass->rel)->weighted);
	END_CRIT_SECTION();
	for (int k = 0; k < npath; k++)
		UnlockReleaseBuffer(path[k]);
	LockBuffer(p, BUFFER_LOCK_UNLOCK);
	abt_count(pass_path_logged);
}

/*
 * Lock the child c and then p again (B-link order: p was let go before c
 * was locked), and settle what changed on p since sid.  If the add on p
 * would write p's first hint image since the checkpoint, log p's path
 * first, with nothing held, and look again.
 */
static AbtSettle
abt_pass_relock(AbtPass *pass, Buffer *p, Buffer *c, OffsetNumber *off, uint16 sid,
				uint16 clevel)
{
	for (bool first = true;; first = false)
	{
		AbtSettle	settle;

		LockBuffer(*c, abt_pass_mode(pass, clevel));
		abt_check_page(pass->rel, *c);
		LockBuffer(*p, pass->mode);
		if (AbtPageGetOpaque(BufferGetPage(*p))->sid == sid)
		{
			if (first)
				abt_count(pass_fast);	/* Figure 6 case 1 */
		}
		else if ((settle = abt_pass_settle(pass, p, c, off)) != ABT_SETTLE_ADD)
			return settle;
		if (!abt_pass_needs_path(pass, *p))
			return ABT_SETTLE_ADD;
		sid = AbtPageGetOpaque(BufferGetPage(*p))->sid;
		clevel = AbtPageGetOpaque(BufferGetPage(*c))->level;
		LockBuffer(*c, BUFFER_LOCK_UNLOCK);
		LockBuffer(*p, BUFFER_LOCK_UNLOCK);
		abt_pass_log_path(pass, *p);
	}
}

/*
 * Add w above the entry with key (already in its leaf, not valid), then
 * mark it valid.  hint (may be NULL): where phase 1 put it.
 */
void
abt_weight_pass(Relation rel, AbtKey *key, uint64 w, const AbtPosHint *hint)
{
	AbtPass		pass;
	Buffer		p;

	pass.rel = rel;
	pass.key = key;
	pass.hint = hint;
	pass.w = w;
	pass.n = 0;
	pass.logged = RelationNeedsWAL(rel);
	mvs_writer_begin(&pass.versions, rel);

	/*
	 * Share locks need true 64-bit atomics on the page, and WAL: an index
	 * that skips WAL (unlogged, or created in this transaction under
	 * wal_level = minimal) marks its buffers dirty the ordinary way, which
	 * takes an exclusive lock.
	 */
	pass.mode = BUFFER_LOCK_EXCLUSIVE;
#ifndef PG_HAVE_ATOMIC_U64_SIMULATION
	if (abt_weight_protocol == ABT_PROTOCOL_SAFE_PAGE && pass.logged)
		pass.mode = BUFFER_LOCK_SHARE;
#endif

restart:
	p = abt_pass_lock_root(&pass);
	/* nothing added yet: room for w? (a share-locked root: README, "Weight limits") */
	if (abt_index_info(rel)->weighted &&
		!AbtPageIsLeaf(AbtPageGetOpaque(BufferGetPage(p))))
		abt_check_weight_room(rel, BufferGetPage(p), w);
	for (;;)
	{
		Page		page = BufferGetPage(p);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		OffsetNumber off;
		uint16		sid;
		uint16		clevel;
		Buffer		c;
		bool		needs_path;

		if (AbtPageIsLeaf(opaque))
		{
			abt_pass_finish(&pass, p);
			return;
		}
		off = abt_pass_downlink(&pass, p);
		sid = opaque->sid;
		clevel = opaque->level - 1;
		c = abt_read_hinted(rel, AbtDownlinkGetChild((IndexTuple) PageGetItem(page,
																		 PageGetItemId(page, off))));
		LockBuffer(p, BUFFER_LOCK_UNLOCK);
		abt_debug_pause(clevel);
		switch (abt_pass_relock(&pass, &p, &c, &off, sid, clevel))
		{
			case ABT_SETTLE_ADD:
				break;
			case ABT_SETTLE_DESCEND:
				continue;
			case ABT_SETTLE_RESTART:
				abt_pass_drop_levels(&pass);
				CHECK_FOR_INTERRUPTS();
				goto restart;
		}
		needs_path = abt_pass_add(&pass, p, off);
		LockBuffer(p, BUFFER_LOCK_UNLOCK);
		if (needs_path)
		{
			/* the levels above p, without p's own */
			pass.n--;
			abt_pass_log_path(&pass, p);
			pass.n++;
		}
		if (abt_debug_pass_error_level == clevel)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("abtree weight pass stopped after its add above level %d (abtree.debug_pass_error_level)",
							clevel)));
		p = c;
	}
}

/*
 * Mark the entry at off of the exclusively locked leaf valid, and log it
 * with the pages from the leaf's parent to the root, leaf side first,
 * which the caller holds exclusively (redo recomputes their downlinks).
 * With path_offs (path_exclusive), w is added here, at path_offs[k] on
 * path[k], in the same critical section as the record; otherwise the pass
 * has added already.  Either way the path pages are marked dirty here for
 * real: MarkBufferDirtyHint, which the pass's adds used, may leave a page
 * clean, and the record relies on the adds.
 *
 * With newitup (path_exclusive, the leaf has room), the entry is not on
 * the leaf yet: it goes in at off already valid (its xmin is ours), in the
 * same critical section and the one INSERT_VALID record (README, "One
 * record per insert").
 */
static void
abt_validate(Relation rel, Buffer leaf, OffsetNumber off, IndexTuple newitup, Buffer *path,
			 int npath, OffsetNumber *path_offs, uint64 w)
{
	Page		page = BufferGetPage(leaf);
	IndexTuple	itup = newitup ? newitup :
		(IndexTuple) PageGetItem(page, PageGetItemId(page, off));
	TransactionId xid = GetTopTransactionId();
	bool		weighted = abt_index_info(rel)->weighted;
	MvsWriter	versions;
	AbtSketchHashes hashes;
	AbtSketchOp sketch;
	bool		narrow;
	int			k;

	/* path_exclusive adds here, the root held: room for w? */
	if (path_offs && weighted && npath > 0)
		abt_check_weight_room(rel, BufferGetPage(path[npath - 1]), w);
	if (path_offs)
		mvs_writer_begin(&versions, rel);
	/* the entry's values join the sketches as it becomes valid (S1) */
	abt_sketch_hash_tuple(rel, itup, &hashes);
	/* a tall tree (wide keys) leaves room for fewer sketch pages */
	narrow = npath + abt_sketch_add_max_blocks(rel) + 1 > XLR_MAX_BLOCK_ID;
	abt_xlog_reserve(rel, npath + (narrow ? abt_sketch_narrow_max_blocks(rel) :
								   abt_sketch_add_max_blocks(rel)),
					 abt_sketch_max_rdatas(rel));
	if (narrow)
		abt_sketch_lock_narrow(&sketch, rel, &hashes);
	else
		abt_sketch_lock(&sketch, rel, &hashes);
	START_CRIT_SECTION();
	/* root side first, as a pass would: see mvs_add */
	for (k = npath - 1; path_offs && k >= 0; k--)
	{
		Page		ppage = BufferGetPage(path[k]);
		IndexTuple	dl = (IndexTuple) PageGetItem(ppage, PageGetItemId(ppage, path_offs[k]));

		mvs_add(&versions, AbtDownlinkGetChild(dl), &AbtPivotGetAux(dl)->weight, w, false);
	}
	for (k = 0; k < npath; k++)
		MarkBufferDirty(path[k]);
	if (newitup)
	{
		/* formed not valid, in case it had to go the two-record way */
		abt_set_leaf_xmin(newitup, xid);
		abt_page_add(page, newitup, off);
	}
	else
		abt_set_leaf_xmin(itup, xid);
	abt_leaf_note_xid(page, xid);
	AbtPageGetOpaque(page)->sid++;

	/*
	 * HAS_INVALID stays set: it only says the leaf may hold entries that are
	 * not valid yet, and finding out whether this was the last one would
	 * take a scan of the leaf (a tenth of an insert, issue 22).  Splits and
	 * VACUUM recompute it, and a draw that finds the leaf complete clears
	 * it (abt_leaf_clear_invalid_hint).
	 */
	MarkBufferDirty(leaf);
	abt_sketch_apply(&sketch, &hashes, true);
	abt_sketch_mark_dirty(&sketch);
	if (RelationNeedsWAL(rel))
		abt_xlog_mark_valid(leaf, off, newitup, xid, path, npath, weighted, &sketch);
	END_CRIT_SECTION();
	abt_sketch_release(&sketch);
}

void
abt_mark_valid(Relation rel, Buffer leaf, OffsetNumber off, Buffer *path, int npath,
			   OffsetNumber *path_offs, uint64 w)
{
	abt_validate(rel, leaf, off, NULL, path, npath, path_offs, w);
}

/*
 * Insert newitup (formed valid, with our xid) at off of the exclusively
 * held leaf, which has room for it, and add its weight w at path_offs[k]
 * on path[k], the whole path to the root held exclusively: one critical
 * section, one record.
 */
void
abt_insert_valid(Relation rel, Buffer leaf, OffsetNumber off, IndexTuple newitup,
				 Buffer *path, int npath, OffsetNumber *path_offs, uint64 w)
{
	abt_validate(rel, leaf, off, newitup, path, npath, path_offs, w);
	abt_count(insert_one_record);
}
