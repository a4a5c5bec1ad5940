/*-------------------------------------------------------------------------
 *
 * abtstack.c
 *	  Writers' way down and back up: a share-locked descent that remembers
 *	  its path, the leaf locked exclusively, and the climb to a parent.
 *
 * Lock order (src/abtree/README, "Locking protocol"): a backend that holds
 * a lock only ever locks a page on a higher level, or the right sibling of
 * a page it holds.  The descent therefore holds one lock at a time, and
 * the climb locks a parent while holding its child.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/*
 * Writers' descents route through copies of internal pages (src/abtree/
 * README, "Copies of internal pages"): a batched flush holds the root and
 * the pages above its leaves exclusively for its record, and every other
 * writer's descent queued behind it for share locks there (issue 22: the
 * root had 73% of the waits of two inserting clients, and the level above
 * the leaves most of the rest).  The root is copied whenever a descent
 * locks it, other internal pages when their share lock had to wait, and
 * again when a descent locks a page whose copy it found stale; a stale copy
 * of a page other than the root routes the descent when the page's lock is
 * busy.  Copies per backend in slots that are never freed: a slot belongs
 * to an index while it names the owner number its AbtIndexInfo drew (never
 * reused), so a slot outlives the AbtIndexInfo, which the relcache may free
 * in the middle of a descent (a comparison function can process
 * invalidations).  Not for pbtree's partitions or temporary indexes.
 */
#define ABT_PAGE_COPIES		256		/* a power of 2 */
#define ABT_COPY_WAYS		4		/* slots a page may take; a power of 2 */

typedef struct AbtPageCopy
{
	uint64		owner;			/* AbtIndexInfo.copy_owner */
	uint64		version;		/* moves at every save into the slot */
	BlockNumber blkno;
	PGAlignedBlock page;
} AbtPageCopy;

/*
 * Slots in sets of four by hash of (owner, block), each allocated at its
 * first save: a backend pays 8 kB for each page it had to wait for, up to
 * 2 MB.  (32 slots, reused in turn, were fewer than the pages above the
 * leaves of a 4M-row index, 83: each wait then evicted a copy that a later
 * descent waited for again.)
 */
static AbtPageCopy **abt_copies = NULL;
static uint64 abt_copy_owners = 0;
static uint64 abt_copy_versions = 0;

/* Whose copies a descent for key in rel uses, or 0 for none. */
static uint64
abt_copy_owner(Relation rel, AbtKey *key)
{
	AbtIndexInfo *info = abt_index_info(rel);

	if (key->meta != ABT_METAPAGE || info->partitioned || RelationUsesLocalBuffers(rel))
		return 0;
	if (info->copy_owner == 0)
		info->copy_owner = ++abt_copy_owners;
	return info->copy_owner;
}

/* The first of the ABT_COPY_WAYS slots where (owner, blkno) may be. */
static inline AbtPageCopy **
abt_copy_set(uint64 owner, BlockNumber blkno)
{
	uint32		h = murmurhash32((uint32) owner * 0x9E3779B1u ^ blkno);

	return &abt_copies[h & (ABT_PAGE_COPIES - ABT_COPY_WAYS)];
}

static AbtPageCopy *
abt_copy_find(uint64 owner, BlockNumber blkno)
{
	AbtPageCopy **set;

	if (abt_copies == NULL || owner == 0)
		return NULL;
	set = abt_copy_set(owner, blkno);
	for (int i = 0; i < ABT_COPY_WAYS; i++)
		if (set[i] != NULL && set[i]->owner == owner && set[i]->blkno == blkno)
			return set[i];
	return NULL;
}

/*
 * Copy the internal page share-locked in buf: into its own slot, else an
 * empty one of its set, else the one saved longest ago.
 */
static void
abt_copy_save(uint64 owner, Buffer buf)
{
	BlockNumber blkno = BufferGetBlockNumber(buf);
	AbtPageCopy *pc;

	if (abt_copies == NULL)
		abt_copies = MemoryContextAllocZero(TopMemoryContext,
											sizeof(AbtPageCopy *) * ABT_PAGE_COPIES);
	pc = abt_copy_find(owner, blkno);
	if (pc == NULL)
	{
		AbtPageCopy **set = abt_copy_set(owner, blkno);
		AbtPageCopy **victim = &set[0];

		for (int i = 0; i < ABT_COPY_WAYS && *victim != NULL; i++)
			if (set[i] == NULL || set[i]->version < (*victim)->version)
				victim = &set[i];
		if (*victim == NULL)
			*victim = MemoryContextAlloc(TopMemoryContext, sizeof(AbtPageCopy));
		pc = *victim;
	}
	pc->owner = owner;
	pc->blkno = blkno;
	pc->version = ++abt_copy_versions;
	memcpy(pc->page.data, BufferGetPage(buf), BLCKSZ);
}

/*
 * Is the copy the page as it is now?  The page is read under a pin only,
 * as heap_page_prune_opt reads a page's pd_prune_xid: its flags (ROOT
 * among them), its SID, which every change of its items moves (README,
 * "Positions from phase 1"), and its line pointer count.  A change in
 * progress shows the values from before it or some from after; with all of
 * them from before, the copy routes as a descent that read the page just
 * before the change, under the lock the change then waited for.  Weight
 * adds change none of them, and do not matter for routing.
 */
static bool
abt_copy_current(Relation rel, AbtPageCopy *pc)
{
	Buffer		buf = abt_read_hinted(rel, pc->blkno);
	volatile PageHeaderData *live = (volatile PageHeaderData *) BufferGetPage(buf);
	volatile AbtPageOpaqueData *lo = (volatile AbtPageOpaqueData *) AbtPageGetOpaque((Page) live);
	AbtPageOpaque co = AbtPageGetOpaque(pc->page.data);
	bool		same;

	same = lo->page_id == ABT_PAGE_ID && lo->flags == co->flags && lo->sid == co->sid &&
		lo->level == co->level && live->pd_lower == ((PageHeader) pc->page.data)->pd_lower;
	ReleaseBuffer(buf);
	return same;
}

#ifdef USE_ASSERT_CHECKING
/* The copy routed to the downlink at off as the page, locked now, does if unchanged. */
static void
abt_copy_check(Relation rel, AbtPageCopy *pc, OffsetNumber off)
{
	Buffer		buf = abt_read_hinted(rel, pc->blkno);
	Page		page = BufferGetPage(buf);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (AbtPageGetOpaque(page)->sid == AbtPageGetOpaque(pc->page.data)->sid &&
		AbtPageGetOpaque(page)->flags == AbtPageGetOpaque(pc->page.data)->flags)
		Assert(AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, off))) ==
			   AbtDownlinkGetChild((IndexTuple) PageGetItem(pc->page.data,
															PageGetItemId(pc->page.data, off))));
	UnlockReleaseBuffer(buf);
}
#endif

/*
 * A share lock on pinned buffer buf if nobody holds it exclusively now;
 * false, and no lock, otherwise (ConditionalLockBuffer only asks for an
 * exclusive one).  A temporary index's buffers are this backend's alone
 * and take no locks (LockBuffer does nothing for them).
 */
bool
abt_try_share_lock(Buffer buf)
{
	if (BufferIsLocal(buf))
		return true;
	return LWLockConditionalAcquire(BufferDescriptorGetContentLock(GetBufferDescriptor(buf - 1)),
									LW_SHARED);
}

/*
 * An internal page on the way down, share-locked (owner != 0: through
 * copies), or InvalidBuffer when the backend has a stale copy of it and
 * its lock would have to wait: the caller routes through the stale copy,
 * a descent that read the page before its last changes (README, "Copies
 * of internal pages").  Otherwise the page is copied if its lock had to
 * wait, or if the backend's copy was stale, so that a page once waited for
 * stays copied across its splits.
 */
static Buffer
abt_lock_for_descent(Relation rel, BlockNumber blkno, uint64 owner, bool stale)
{
	Buffer		buf;
	bool		copy = stale || (owner != 0 && abt_debug_stale_copies);

	if (stale && abt_debug_stale_copies)
		return InvalidBuffer;
	buf = abt_read_hinted(rel, blkno);
	if (owner == 0)
		LockBuffer(buf, BUFFER_LOCK_SHARE);
	else if (!abt_try_share_lock(buf))
	{
		if (stale)
		{
			ReleaseBuffer(buf);
			return InvalidBuffer;
		}
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		copy = true;
	}
	abt_check_page(rel, buf);
	if (copy && !AbtPageIsLeaf(AbtPageGetOpaque(BufferGetPage(buf))))
		abt_copy_save(owner, buf);
	return buf;
}

/*
 * Move right from the exclusively locked leaf buf until the leaf whose key
 * range holds key, coupling left to right.  Returns the locked buffer.
 */
Buffer
abt_move_right_exclusive(Relation rel, AbtKey *key, Buffer buf)
{
	while (abt_key_beyond_page(rel, key, BufferGetPage(buf)))
	{
		Buffer		next = abt_read_hinted(rel, AbtPageGetOpaque(BufferGetPage(buf))->next);

		LockBuffer(next, BUFFER_LOCK_EXCLUSIVE);
		abt_check_page(rel, next);
		UnlockReleaseBuffer(buf);
		buf = next;
	}
	return buf;
}

/*
 * Descend to the leaf whose key range holds key, with share locks (or
 * through current copies of the internal pages, above), and return it
 * locked exclusively; the internal pages passed are in stack.
 * InvalidBuffer if the tree is empty.
 */
Buffer
abt_search_leaf(Relation rel, AbtKey *key, AbtStack *stack)
{
	uint64		owner = abt_copy_owner(rel, key);
	BlockNumber blkno = owner != 0 ? abt_index_info(rel)->cached_root : InvalidBlockNumber;
	Buffer		buf = InvalidBuffer;

	stack->depth = 0;
	for (;;)
	{
		AbtPageCopy *pc = abt_copy_find(owner, blkno);
		uint64		version = 0;
		Page		page;
		AbtPageOpaque opaque;
		OffsetNumber off;
		BlockNumber child;

		/* the first step needs a copy of the root (cached_root may be an old one) */
		if (pc != NULL && (stack->depth > 0 || AbtPageIsRoot(AbtPageGetOpaque(pc->page.data))) &&
			abt_copy_current(rel, pc))
		{
			page = pc->page.data;
			version = pc->version;
		}
		else
		{
			AbtPageCopy *stale = pc;

			pc = NULL;
			if (stack->depth == 0)
			{
				/* the root: the metapage says where, if the cached one moved */
				buf = abt_get_root(rel, key->meta, BUFFER_LOCK_SHARE);
				if (!BufferIsValid(buf))
					return buf;
				if (owner != 0 && !AbtPageIsLeaf(AbtPageGetOpaque(BufferGetPage(buf))))
					abt_copy_save(owner, buf);
			}
			else
				buf = abt_lock_for_descent(rel, blkno, owner, stale != NULL);
			if (BufferIsValid(buf))
				page = BufferGetPage(buf);
			else
			{
				/* busy, and we have a stale copy: route through it */
				pc = stale;
				page = pc->page.data;
				version = pc->version;
			}
		}
		opaque = AbtPageGetOpaque(page);

		if (AbtPageIsLeaf(opaque))
		{
			/* a root that is a leaf: lock it again, for writing */
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			return abt_move_right_exclusive(rel, key, buf);
		}
		if (abt_key_beyond_page(rel, key, page))
			child = InvalidBlockNumber;
		else
		{
			if (stack->depth >= ABT_MAX_HEIGHT)
				elog(ERROR, "abtree: index \"%s\" is too deep", RelationGetRelationName(rel));
			off = abt_binsrch_internal(rel, key, page);
			/* a comparison function that wrote to another index may reuse the slot */
			if (pc != NULL && pc->version != version)
				continue;		/* this step again */
#ifdef USE_ASSERT_CHECKING
			if (pc != NULL)
				abt_copy_check(rel, pc, off);
#endif
			child = AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, off)));
			stack->e[stack->depth].blkno = pc != NULL ? pc->blkno : BufferGetBlockNumber(buf);
			stack->e[stack->depth].off = off;
			stack->e[stack->depth].sid = opaque->sid;
			stack->depth++;
		}
		if (child == InvalidBlockNumber)
			blkno = opaque->next;	/* move right */
		else if (opaque->level == 1)
		{
			if (BufferIsValid(buf))
				UnlockReleaseBuffer(buf);
			buf = abt_read_hinted(rel, child);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			abt_check_page(rel, buf);
			return abt_move_right_exclusive(rel, key, buf);
		}
		else
			blkno = child;
		if (BufferIsValid(buf))
			UnlockReleaseBuffer(buf);
		buf = InvalidBuffer;
	}
}

/*
 * The downlink to child on an internal page at offset from or right of it
 * (try hint first), or Invalid.  A caller that knows child's downlink is
 * not left of from (a batched flush, whose children come left to right)
 * saves the scan of the offsets before it.
 */
OffsetNumber
abt_find_downlink_from(Page page, BlockNumber child, OffsetNumber hint, OffsetNumber from)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;

	from = Max(from, AbtFirstDataOffset(AbtPageGetOpaque(page)));
	if (hint >= from && hint <= maxoff &&
		AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, hint))) == child)
		return hint;
	for (off = from; off <= maxoff; off++)
		if (AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, off))) == child)
			return off;
	return InvalidOffsetNumber;
}

/* The downlink to child on an internal page (try hint first), or Invalid. */
OffsetNumber
abt_find_downlink(Page page, BlockNumber child, OffsetNumber hint)
{
	return abt_find_downlink_from(page, child, hint, FirstOffsetNumber);
}

/*
 * Lock (in mode) the page that holds the downlink to child, starting at
 * stack level level_index and moving right.  The caller holds child.
 * Returns InvalidBuffer if the level ends without it, which only a tree
 * changed beyond what the stack knows (a new root) explains.
 */
Buffer
abt_lock_parent(Relation rel, AbtStack *stack, int level_index, BlockNumber child,
				int mode, OffsetNumber *off)
{
	Buffer		buf = abt_read_hinted(rel, stack->e[level_index].blkno);
	OffsetNumber hint = stack->e[level_index].off;

	LockBuffer(buf, mode);
	abt_check_page(rel, buf);
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		Buffer		next;

		*off = abt_find_downlink(page, child, hint);
		if (*off != InvalidOffsetNumber)
			return buf;
		if (AbtPageIsRightmost(opaque))
		{
			UnlockReleaseBuffer(buf);
			return InvalidBuffer;
		}
		next = abt_read_hinted(rel, opaque->next);
		LockBuffer(next, mode);
		abt_check_page(rel, next);
		UnlockReleaseBuffer(buf);
		buf = next;
		hint = InvalidOffsetNumber;
	}
}

/*
 * The offset of the entry with exactly key (heap TID included) on a leaf
 * whose range holds it, or InvalidOffsetNumber.
 */
OffsetNumber
abt_find_leaf_entry(Relation rel, AbtKey *key, Page page)
{
	OffsetNumber off = abt_binsrch_leaf(rel, key, page);

	if (off > PageGetMaxOffsetNumber(page) || abt_compare(rel, key, page, off) != 0)
		return InvalidOffsetNumber;
	return off;
}

/*
 * Lock, bottom-up and exclusively, every page from the locked leaf's parent
 * to the root, holding all of them: path[k] holds the downlink at offs[k]
 * to the page below it.  Returns how many, or -1 (with only the leaf still
 * locked) if the stack no longer reaches the root.
 */
int
abt_lock_path_to_root(Relation rel, AbtStack *stack, Buffer leaf, Buffer *path,
					  OffsetNumber *offs)
{
	BlockNumber child = BufferGetBlockNumber(leaf);
	int			level_index = stack->depth - 1;
	int			n = 0;
	bool		complete = AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(leaf)));

	while (!complete && level_index >= 0)
	{
		path[n] = abt_lock_parent(rel, stack, level_index--, child,
								  BUFFER_LOCK_EXCLUSIVE, &offs[n]);
		if (!BufferIsValid(path[n]))
			break;
		child = BufferGetBlockNumber(path[n]);
		complete = AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(path[n])));
		n++;
	}
	if (complete)
		return n;
	while (n > 0)
		UnlockReleaseBuffer(path[--n]);
	return -1;
}

/*
 * The leftmost page of each level above "level", root first, by a descent
 * along first downlinks with share locks, one at a time, that stops above
 * "level" (the caller may hold a page of it exclusively).  Pages are never
 * deleted, so they stay leftmost.  The metapage's root, not a cached one:
 * that could be a page the caller holds.
 */
static void
abt_leftmost_above(Relation rel, uint16 level, AbtStack *stack)
{
	AbtMetaPageData meta;
	Buffer		buf;

	abt_read_meta(rel, &meta);
	buf = abt_read_hinted(rel, meta.root);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, buf);
	stack->depth = 0;
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);

		if (opaque->level <= level || stack->depth >= ABT_MAX_HEIGHT)
			break;
		stack->e[stack->depth].blkno = BufferGetBlockNumber(buf);
		stack->e[stack->depth].off = InvalidOffsetNumber;
		stack->depth++;
		if (opaque->level == level + 1)
			break;
		buf = abt_relandgetbuf(rel, buf,
							   AbtDownlinkGetChild((IndexTuple) PageGetItem(page,
																			PageGetItemId(page, AbtFirstDataOffset(opaque)))));
	}
	UnlockReleaseBuffer(buf);
}

/*
 * Lock, bottom-up and exclusively, every page above the exclusively locked
 * internal page buf up to the root, holding all of them: up[0] is buf's
 * parent.  For writers that came without a descent (VACUUM's repairs,
 * abtvacuum.c): each parent is searched from the leftmost page of its
 * level, moving right, which costs a walk of the levels above buf, few
 * pages in a tree tall enough to need it.  Returns how many, or -1 with
 * nothing more locked if a new root keeps appearing meanwhile.
 */
int
abt_lock_ancestors(Relation rel, Buffer buf, Buffer *up)
{
	for (int attempt = 0; attempt < 3; attempt++)
	{
		AbtStack	stack;
		Buffer		cur = buf;
		int			n = 0;
		int			k;

		if (AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(buf))))
			return 0;
		abt_leftmost_above(rel, AbtPageGetOpaque(BufferGetPage(buf))->level, &stack);
		for (k = stack.depth - 1; k >= 0; k--)
		{
			OffsetNumber off;
			Buffer		parent = abt_lock_parent(rel, &stack, k, BufferGetBlockNumber(cur),
												 BUFFER_LOCK_EXCLUSIVE, &off);

			if (!BufferIsValid(parent))
				break;
			up[n++] = cur = parent;
			if (AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(cur))))
				return n;
		}
		/* the root split since the descent: let go above buf, look again */
		while (n > 0)
			UnlockReleaseBuffer(up[--n]);
		CHECK_FOR_INTERRUPTS();
	}
	return -1;
}
