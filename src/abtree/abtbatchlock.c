/*-------------------------------------------------------------------------
 *
 * abtbatchlock.c
 *	  Batched validation: finding and locking the pages of a group of
 *	  waiting entries, its leaves and every page above them up to the root
 *	  (src/abtree/README, "Batched validation").
 *
 * Lock order (README, "Locking protocol", extended there): the batch locks
 * its leaves left to right, then each level above left to right, then the
 * sketch pages.  Every page it asks for is on a higher level than, or to
 * the right of, every page it holds, found by a share-locked descent from
 * the metapage's root (one lock at a time, on higher levels) that leads to
 * the right of the pages held.
 *
 *-------------------------------------------------------------------------
 */
#include "abtbatch.h"

#include "utils/rel.h"

/*
 * The block on the given level whose key range held key a moment ago: a
 * descent by key from the metapage's root, share locks one at a time on
 * pages above that level, which it notes in path (as abt_search_leaf
 * does).  Not the cached root: a page the caller holds could have been
 * the root once.
 */
static BlockNumber
abt_batch_descend(Relation rel, AbtKey *key, uint16 level, AbtStack *path)
{
	AbtMetaPageData meta;
	Buffer		buf;

	path->depth = 0;
	abt_read_meta(rel, &meta);
	if (meta.level <= level)
		return meta.root;
	buf = abt_read_hinted(rel, meta.root);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, buf);
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		OffsetNumber off;
		BlockNumber child;

		if (opaque->level <= level)
		{
			/* a root read before it split: this level already */
			child = BufferGetBlockNumber(buf);
			UnlockReleaseBuffer(buf);
			return child;
		}
		if (abt_key_beyond_page(rel, key, page))
		{
			buf = abt_relandgetbuf(rel, buf, opaque->next);
			continue;
		}
		off = abt_binsrch_internal(rel, key, page);
		child = AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, off)));
		if (path->depth < ABT_MAX_HEIGHT)
		{
			path->e[path->depth].blkno = BufferGetBlockNumber(buf);
			path->e[path->depth].off = off;
			path->e[path->depth].sid = opaque->sid;
			path->depth++;
		}
		if (opaque->level == level + 1)
		{
			UnlockReleaseBuffer(buf);
			return child;
		}
		buf = abt_relandgetbuf(rel, buf, child);
	}
}

/* The entry of a leaf's path for the page on the given level, or NULL */
static inline const AbtStackEntry *
abt_batch_path_at(const AbtStack *path, int level)
{
	return level >= 1 && level <= path->depth ? &path->e[path->depth - level] : NULL;
}

static bool
abt_batch_holds(AbtBatch *b, int first, BlockNumber blk)
{
	for (int i = first; i < b->npages; i++)
		if (BufferGetBlockNumber(b->pages[i].buf) == blk)
			return true;
	return false;
}

/*
 * Lock exclusively the page where a search on the given level starts:
 * blk, where a descent led, or, if that is the last page held on the
 * level (a key equal to its high key), the page right of it.
 */
static Buffer
abt_batch_lock_start(AbtBatch *b, BlockNumber blk, uint16 level, int first_of_level)
{
	Buffer		buf;

	if (b->npages > first_of_level)
	{
		Page		last = BufferGetPage(b->pages[b->npages - 1].buf);

		if (blk == BufferGetBlockNumber(b->pages[b->npages - 1].buf))
		{
			if (AbtPageIsRightmost(AbtPageGetOpaque(last)))
				elog(ERROR, "abtree: batched validation lost its way on level %u of index \"%s\"",
					 level, RelationGetRelationName(b->rel));
			blk = AbtPageGetOpaque(last)->next;
		}
	}
	buf = abt_read_hinted(b->rel, blk);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	abt_check_page(b->rel, buf);
	return buf;
}

static void
abt_batch_hold(AbtBatch *b, Buffer buf, int entry)
{
	AbtBatchPage *pg = &b->pages[b->npages++];

	pg->buf = buf;
	pg->up = -1;
	pg->upoff = InvalidOffsetNumber;
	pg->entry = entry;
	pg->path = NULL;
}

/* Does path name another page on level k than the last leaf's path does? */
static bool
abt_batch_path_new(AbtBatch *b, const AbtStack *path, int k)
{
	const AbtStackEntry *was = b->nleaves > 0 ?
		abt_batch_path_at(b->pages[b->nleaves - 1].path, k) : NULL;

	return was == NULL || was->blkno != abt_batch_path_at(path, k)->blkno;
}

/*
 * The pages a record needs with one more leaf whose path names the pages
 * above it.  Leaves come left to right, so each level above them needs
 * the distinct pages of their paths (as they were: a split since can add
 * one, which abt_batch_lock_path catches).
 */
static int
abt_batch_leaf_cost(AbtBatch *b, const AbtStack *path)
{
	int			need = b->nleaves + 1;

	for (int k = 1; k <= path->depth; k++)
		need += b->above[k] + (abt_batch_path_new(b, path, k) ? 1 : 0);
	return need;
}

/* Count the leaf's new pages above it, before it joins the group. */
static void
abt_batch_note_leaf(AbtBatch *b, const AbtStack *path)
{
	for (int k = 1; k <= path->depth; k++)
		if (abt_batch_path_new(b, path, k))
			b->above[k]++;
}

/* blk locked exclusively if that needs no wait, else InvalidBuffer */
static Buffer
abt_batch_lock_now(AbtBatch *b, BlockNumber blk)
{
	Buffer		buf = abt_read_hinted(b->rel, blk);

	if (!ConditionalLockBuffer(buf))
	{
		ReleaseBuffer(buf);
		return InvalidBuffer;
	}
	abt_check_page(b->rel, buf);
	return buf;
}

/*
 * The leaf phase 1 put entry j on, if it still holds it and we can lock
 * it at once: then it is the entry's leaf, to the right of those held, and
 * locked in order; a conditional lock never waits, so trying a page that
 * turned out not to be it cannot deadlock.  Saves a descent per leaf, and
 * the search on it if nothing changed there (its SID).
 */
static Buffer
abt_batch_try_leaf(AbtBatch *b, int j, OffsetNumber *off)
{
	const AbtPosHint *hint = &b->e[j].hint;
	Buffer		buf;
	Page		page;

	/* not inside BufferIsValid(): assertion builds evaluate its argument twice */
	if (hint->leaf == InvalidBlockNumber || abt_batch_holds(b, 0, hint->leaf))
		return InvalidBuffer;
	buf = abt_batch_lock_now(b, hint->leaf);
	if (!BufferIsValid(buf))
		return InvalidBuffer;
	page = BufferGetPage(buf);
	if (AbtPageGetOpaque(page)->sid == hint->leafsid)
	{
		*off = hint->leafoff;
		Assert(*off == abt_find_leaf_entry(b->rel, b->keys[j], page));
		return buf;
	}
	if (!abt_key_beyond_page(b->rel, b->keys[j], page) &&
		(*off = abt_find_leaf_entry(b->rel, b->keys[j], page)) != InvalidOffsetNumber)
		return buf;
	UnlockReleaseBuffer(buf);
	return InvalidBuffer;
}

/*
 * Lock the leaves of entries 0 .. in key order, as many as a record of
 * maxpages blocks can hold with the pages above them (and at most
 * maxleaves), and find each entry on its leaf.  Returns how many entries.
 */
int
abt_batch_lock_leaves(AbtBatch *b, int n, int maxpages, int maxleaves)
{
	int			j;

	b->nleaves = 0;
	memset(b->above, 0, sizeof(b->above));
	for (j = 0; j < n; j++)
	{
		AbtKey	   *key = b->keys[j];
		Buffer		buf = InvalidBuffer;
		OffsetNumber off = InvalidOffsetNumber;

		if (b->npages > 0 &&
			!abt_key_beyond_page(b->rel, key, BufferGetPage(b->pages[b->npages - 1].buf)))
			buf = b->pages[b->npages - 1].buf;
		else
		{
			const AbtStack *path = &b->e[j].hint.stack;
			BlockNumber blk = InvalidBlockNumber;

			if (b->nleaves == maxleaves)
				break;
			if (b->e[j].hint.leaf == InvalidBlockNumber)
			{
				blk = abt_batch_descend(b->rel, key, 0, &b->paths[b->nleaves]);
				path = &b->paths[b->nleaves];
			}
			if (b->nleaves > 0 && abt_batch_leaf_cost(b, path) > maxpages)
				break;
			if (blk == InvalidBlockNumber)
				buf = abt_batch_try_leaf(b, j, &off);
			if (blk == InvalidBlockNumber && !BufferIsValid(buf))
			{
				blk = abt_batch_descend(b->rel, key, 0, &b->paths[b->nleaves]);
				path = &b->paths[b->nleaves];
				if (b->nleaves > 0 && abt_batch_leaf_cost(b, path) > maxpages)
					break;
			}
			if (!BufferIsValid(buf))
			{
				buf = abt_batch_lock_start(b, blk, 0, 0);
				buf = abt_move_right_exclusive(b->rel, key, buf);
			}
			abt_batch_note_leaf(b, path);
			abt_batch_hold(b, buf, j);
			b->pages[b->nleaves].path = path;
			b->nleaves++;
		}
		if (off == InvalidOffsetNumber)
			off = abt_find_leaf_entry(b->rel, key, BufferGetPage(buf));

		/*
		 * Not there: VACUUM took it out, so its row died (a speculative
		 * insertion that lost, ON CONFLICT): nothing to make valid.
		 */
		b->leafof[j] = off == InvalidOffsetNumber ? -1 : b->npages - 1;
		b->offof[j] = off;
	}
	return j;
}

/*
 * The page a leaf's path names on this level, if it holds the downlink to
 * child now and we can lock it at once: then it is the page we look for,
 * to the right of those held on the level (which do not hold that
 * downlink), and locked in order.  A conditional lock never waits, so
 * trying a page that turns out to be elsewhere (split since) cannot
 * deadlock; it is let go at once.  Saves a descent per page above the
 * leaves, and the path's offset saves the search.  InvalidBuffer otherwise.
 */
static Buffer
abt_batch_try_parent(AbtBatch *b, const AbtStackEntry *at, BlockNumber child, int first,
					 OffsetNumber *off)
{
	Buffer		buf;

	if (at == NULL || abt_batch_holds(b, first, at->blkno))
		return InvalidBuffer;
	buf = abt_batch_lock_now(b, at->blkno);
	if (!BufferIsValid(buf))
		return InvalidBuffer;
	*off = abt_find_downlink(BufferGetPage(buf), child, at->off);
	if (*off != InvalidOffsetNumber)
		return buf;
	UnlockReleaseBuffer(buf);
	return InvalidBuffer;
}

/*
 * The downlink to child on held page up (the last page locked on the level
 * above), or Invalid.  The children come left to right, so on that page
 * child's downlink lies right of the previous child's (prev, when that
 * one's is there too): only those are scanned, after the offset child's
 * descent followed when it went through this page (nothing moved: no
 * scan).  Scanning the whole page for every leaf was 3.5% of an insert
 * (bench/results/write_path_profile.md).
 *
 * When child's path went through another page on this level, child's
 * downlink is mostly on the next page, and scanning the rest of this one
 * to learn that read 70 downlinks a time, with the group's pages held
 * (bench/results/batch_downlink_beyond.md).  One comparison instead: an
 * entry below child (keys are unique, the heap TID is part of them) lies
 * in child's key range, which lies in the range of the page holding
 * child's downlink; if the entry's key is past up's high key, that page
 * is not up.  Both pages are held, so neither range can change meanwhile.
 * Otherwise up is scanned as before.
 */
static OffsetNumber
abt_batch_downlink_after(AbtBatch *b, const AbtBatchPage *prev, int up,
						 const AbtBatchPage *child, uint16 level)
{
	Buffer		buf = b->pages[up].buf;
	const AbtStackEntry *at = child->path ? abt_batch_path_at(child->path, level) : NULL;
	OffsetNumber hint = InvalidOffsetNumber;
	OffsetNumber from = FirstOffsetNumber;

	if (prev != NULL && prev->up == up)
		from = OffsetNumberNext(prev->upoff);
	if (at != NULL && at->blkno == BufferGetBlockNumber(buf))
		hint = at->off;
	else if (abt_key_beyond_page(b->rel, b->keys[child->entry], BufferGetPage(buf)))
		return InvalidOffsetNumber;
	return abt_find_downlink_from(BufferGetPage(buf), BufferGetBlockNumber(child->buf), hint,
								  from);
}

/*
 * Lock, for each page of the level that starts at pages[from], the page
 * above holding its downlink: left to right, moving right by child block.
 * False if that would make more than maxpages (the caller lets go).
 */
static bool
abt_batch_lock_level(AbtBatch *b, int from, int to, uint16 level, int maxpages)
{
	int			first = b->npages;
	AbtStack	path;

	for (int c = from; c < to; c++)
	{
		AbtBatchPage *child = &b->pages[c];
		BlockNumber cblk = BufferGetBlockNumber(child->buf);
		OffsetNumber off = InvalidOffsetNumber;
		Buffer		buf;

		if (b->npages > first)
			off = abt_batch_downlink_after(b, c > from ? &b->pages[c - 1] : NULL,
										   b->npages - 1, child, level);
		if (off == InvalidOffsetNumber)
		{
			if (b->npages >= maxpages)
				return false;
			buf = abt_batch_try_parent(b, abt_batch_path_at(child->path, level), cblk, first,
									   &off);
			if (BufferIsValid(buf))
			{
				abt_batch_hold(b, buf, child->entry);
				b->pages[b->npages - 1].path = child->path;
				child->up = b->npages - 1;
				child->upoff = off;
				continue;
			}
			buf = abt_batch_lock_start(b, abt_batch_descend(b->rel, b->keys[child->entry],
															level, &path),
									   level, first);
			while ((off = abt_find_downlink(BufferGetPage(buf), cblk,
											InvalidOffsetNumber)) == InvalidOffsetNumber)
			{
				BlockNumber next = AbtPageGetOpaque(BufferGetPage(buf))->next;
				Buffer		nbuf;

				if (next == InvalidBlockNumber)
					elog(ERROR, "abtree: no downlink to block %u on level %u of index \"%s\"",
						 cblk, level, RelationGetRelationName(b->rel));
				nbuf = abt_read_hinted(b->rel, next);
				LockBuffer(nbuf, BUFFER_LOCK_EXCLUSIVE);
				abt_check_page(b->rel, nbuf);
				UnlockReleaseBuffer(buf);
				buf = nbuf;
			}
			abt_batch_hold(b, buf, child->entry);
			b->pages[b->npages - 1].path = child->path;
		}
		child->up = b->npages - 1;
		child->upoff = off;
	}
	return true;
}

/*
 * Lock the levels above the leaves up to the root, which is alone on its
 * level.  False, with the pages still held, if the record would name more
 * blocks than maxpages.
 */
bool
abt_batch_lock_path(AbtBatch *b, int maxpages)
{
	int			from = 0;
	uint16		level = 0;
	for (;;)
	{
		int			to = b->npages;

		if (to - from == 1 &&
			AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(b->pages[from].buf))))
			return b->npages <= maxpages;
		if (level + 1 >= ABT_MAX_HEIGHT)
			return false;
		level++;
		if (!abt_batch_lock_level(b, from, to, level, maxpages))
			return false;
		from = to;
	}
}

void
abt_batch_release(AbtBatch *b)
{
	for (int i = b->npages - 1; i >= 0; i--)
		UnlockReleaseBuffer(b->pages[i].buf);
	b->npages = 0;
}
