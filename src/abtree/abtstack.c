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

#include "miscadmin.h"
#include "utils/rel.h"

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
 * Descend to the leaf whose key range holds key, with share locks, and
 * return it locked exclusively; the internal pages passed are in stack.
 * InvalidBuffer if the tree is empty.
 */
Buffer
abt_search_leaf(Relation rel, AbtKey *key, AbtStack *stack)
{
	Buffer		buf = abt_get_root(rel, key->meta, BUFFER_LOCK_SHARE);

	stack->depth = 0;
	if (!BufferIsValid(buf))
		return buf;
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		OffsetNumber off;
		BlockNumber child;

		if (AbtPageIsLeaf(opaque))
		{
			/* a root that is a leaf: lock it again, for writing */
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			return abt_move_right_exclusive(rel, key, buf);
		}
		if (abt_key_beyond_page(rel, key, page))
		{
			buf = abt_relandgetbuf(rel, buf, opaque->next);
			continue;
		}
		if (stack->depth >= ABT_MAX_HEIGHT)
			elog(ERROR, "abtree: index \"%s\" is too deep", RelationGetRelationName(rel));
		off = abt_binsrch_internal(rel, key, page);
		child = AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, off)));
		stack->e[stack->depth].blkno = BufferGetBlockNumber(buf);
		stack->e[stack->depth].off = off;
		stack->e[stack->depth].sid = opaque->sid;
		stack->depth++;
		if (opaque->level == 1)
		{
			UnlockReleaseBuffer(buf);
			buf = abt_read_hinted(rel, child);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			abt_check_page(rel, buf);
			return abt_move_right_exclusive(rel, key, buf);
		}
		buf = abt_relandgetbuf(rel, buf, child);
	}
}

/* The downlink to child on an internal page (try hint first), or Invalid. */
OffsetNumber
abt_find_downlink(Page page, BlockNumber child, OffsetNumber hint)
{
	OffsetNumber first = AbtFirstDataOffset(AbtPageGetOpaque(page));
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;

	if (hint >= first && hint <= maxoff &&
		AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, hint))) == child)
		return hint;
	for (off = first; off <= maxoff; off++)
		if (AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, off))) == child)
			return off;
	return InvalidOffsetNumber;
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
