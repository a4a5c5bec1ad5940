/*-------------------------------------------------------------------------
 *
 * abtbatch.c
 *	  Batched validation (abtree.weight_protocol = batched; src/abtree/README,
 *	  "Batched validation"): an insert puts its entry in not valid and
 *	  leaves it in a list of this backend's; a flush makes up to a record's
 *	  worth of such entries valid at once, their weights added on the union
 *	  of their paths, held exclusively, in one critical section and one
 *	  VALID_BATCH record.  The root is then locked once per batch instead of
 *	  once per insert, and the sketch pages, the record's header and most
 *	  block references are shared.
 *
 * Entries wait at most until the transaction commits or prepares (the
 * xact callback flushes every index), or until this backend reads the
 * index's weights (a draw, a range weight, verify, stats), or until a
 * parallel plan starts (its workers read for this transaction but not
 * from this list), or until the list for the index is full.  Nobody else
 * can see them before the commit: their heap rows are not visible to any
 * other snapshot.  Not valid, they
 * weigh nothing anywhere (no pass added for them), so W1 and W2 hold while
 * they wait, and an entry whose transaction aborts just stays not valid.
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
#include "abtree.h"
#include "abtree_ext.h"
#include "mvstore/mvstore.h"

#include "access/relation.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* entries of one index that wait before a flush; a flush makes groups */
#define ABT_BATCH_PENDING	64

typedef struct AbtPendingEntry
{
	IndexTuple	itup;			/* a copy, not valid */
	uint64		w;
	SubTransactionId subid;
	AbtPosHint	hint;			/* phase 1's way there and place, if no split */
	AbtSketchHashes hashes;		/* for the sketches: made before any lock */
} AbtPendingEntry;

typedef struct AbtPendingIndex
{
	Oid			relid;
	Oid			relfile;		/* the storage the entries went into */
	int			n;
	AbtPendingEntry e[ABT_BATCH_PENDING];
} AbtPendingIndex;

static MemoryContext abt_batch_cxt = NULL;
static List *abt_pending = NIL; /* of AbtPendingIndex, in abt_batch_cxt */
static AbtKey *abt_batch_keys = NULL;	/* a flush's keys, ABT_BATCH_PENDING */

/* a page held by a group being made valid */
typedef struct AbtBatchPage
{
	Buffer		buf;
	int			up;				/* index of the page above holding our downlink */
	OffsetNumber upoff;			/* the downlink's offset there */
	int			entry;			/* an entry below it: its key finds the page above */
	const AbtStack *path;		/* a leaf's: a descent's pages above it */
} AbtBatchPage;

typedef struct AbtBatch
{
	Relation	rel;
	AbtKey	  **keys;			/* of the entries, in their order */
	AbtPendingEntry *e;
	int			n;				/* entries in this group */
	int		   *leafof;			/* per entry: its leaf's index in pages */
	OffsetNumber *offof;		/* per entry: its offset there */
	int			nleaves;
	int			above[ABT_MAX_HEIGHT];	/* distinct pages their paths name per level */
	AbtStack	paths[XLR_MAX_BLOCK_ID + 1];	/* of leaves found by a descent here */
	int			npages;			/* leaves first, then each level left to right */
	AbtBatchPage pages[XLR_MAX_BLOCK_ID + 1];
} AbtBatch;

static AbtBatch *abt_batch_state = NULL;	/* a flush's, kept with the keys */
static bool abt_batch_flushing = false; /* in abt_batch_flush_index */

/* ---- the waiting list ---- */

static AbtPendingIndex *
abt_batch_find(Relation rel)
{
	ListCell   *lc;

	foreach(lc, abt_pending)
	{
		AbtPendingIndex *p = lfirst(lc);

		if (p->relid == RelationGetRelid(rel))
			return p;
	}
	return NULL;
}

static void abt_batch_flush_index(Relation rel, AbtPendingIndex *p);
static void abt_batch_xlog(AbtBatch *b, TransactionId xid, bool weighted,
						   AbtSketchOp *sketch);

/*
 * After phase 1 put itup (not valid, weight w) into rel: let it wait for
 * the next flush.
 */
void
abt_batch_add(Relation rel, IndexTuple itup, uint64 w, const AbtPosHint *hint)
{
	AbtPendingIndex *p = abt_batch_find(rel);
	AbtSketchHashes hashes;
	MemoryContext old;

	/*
	 * The hashes now, in the statement's memory and with no lock held: in
	 * the flush they lengthened the time every page of a group, the root's
	 * and the sketches' too, stays locked against other writers.
	 */
	abt_sketch_hash_tuple(rel, itup, &hashes);
	if (abt_batch_cxt == NULL)
		abt_batch_cxt = AllocSetContextCreate(TopMemoryContext, "abtree batched validation",
											  ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(abt_batch_cxt);
	if (p != NULL && p->relfile != abt_file_rel(rel))
	{
		/* new storage (TRUNCATE, REINDEX): the old entries went with the old */
		p->n = 0;
		p->relfile = abt_file_rel(rel);
	}
	if (p == NULL)
	{
		p = palloc(sizeof(AbtPendingIndex));
		p->relid = RelationGetRelid(rel);
		p->relfile = abt_file_rel(rel);
		p->n = 0;
		abt_pending = lappend(abt_pending, p);
	}
	p->e[p->n].itup = CopyIndexTuple(itup);
	p->e[p->n].w = w;
	p->e[p->n].subid = GetCurrentSubTransactionId();
	p->e[p->n].hint = *hint;
	p->e[p->n].hashes = hashes;
	p->n++;
	MemoryContextSwitchTo(old);
	if (p->n == ABT_BATCH_PENDING)
		abt_batch_flush_index(rel, p);
}

/* Before this backend reads rel's weights: its own entries count there. */
void
abt_batch_flush_rel(Relation rel)
{
	AbtPendingIndex *p;

	if (abt_pending == NIL || (p = abt_batch_find(rel)) == NULL || p->n == 0)
		return;
	if (p->relfile != abt_file_rel(rel))
		p->n = 0;
	else
		abt_batch_flush_index(rel, p);
}

/*
 * Every index's, before the transaction commits or prepares.  An index
 * gone meanwhile (dropped in this transaction) or on new storage keeps
 * nothing to flush.
 */
static void
abt_batch_flush_all(void)
{
	ListCell   *lc;

	foreach(lc, abt_pending)
	{
		AbtPendingIndex *p = lfirst(lc);
		Relation	rel;

		if (p->n == 0)
			continue;
		rel = try_relation_open(p->relid, RowExclusiveLock);
		if (rel == NULL)
		{
			p->n = 0;
			continue;
		}
		if (rel->rd_rel->relkind == RELKIND_INDEX && abt_file_rel(rel) == p->relfile)
			abt_batch_flush_index(rel, p);
		p->n = 0;
		relation_close(rel, NoLock);
	}
}

/*
 * At the commit the statements' snapshots are gone, and an operator class
 * may compare or hash through SQL (a PL/pgSQL comparison function), which
 * SPI refuses to run without one ("cannot execute SQL without an outer
 * snapshot or portal"), failing the commit: the flush gets a snapshot of
 * its own.  Support functions are immutable: which snapshot does not
 * matter.
 */
static void
abt_batch_flush_at_commit(void)
{
	bool		pushed = false;

	if (abt_pending == NIL)
		return;
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}
	abt_batch_flush_all();
	if (pushed)
		PopActiveSnapshot();
}

static void
abt_batch_forget(void)
{
	abt_batch_flushing = false;
	abt_pending = NIL;
	if (abt_batch_cxt != NULL)
		MemoryContextReset(abt_batch_cxt);
}

static void
abt_batch_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			abt_batch_flush_at_commit();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			/* after an abort the entries stay not valid, weighing nothing */
			abt_batch_forget();
			break;
		default:
			break;
	}
}

/*
 * A subtransaction that aborts takes its entries and its children's (whose
 * ids are all at least its own) out of the list: their rows are dead.
 */
static void
abt_batch_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						   SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;

	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	abt_batch_flushing = false; /* an ERROR may have cut a flush */
	foreach(lc, abt_pending)
	{
		AbtPendingIndex *p = lfirst(lc);
		int			m = 0;

		for (int i = 0; i < p->n; i++)
			if (p->e[i].subid < mySubid)
				p->e[m++] = p->e[i];
		p->n = m;
	}
}

/*
 * A parallel plan's workers run in this transaction and see its rows, but
 * they read the indexes without this backend's list: a worker drawing or
 * weighing a range would leave out the rows inserted here, an undercount
 * (regress abtree_batched).  So everything waiting is flushed before a
 * plan that may start workers, while the leader can still write: nothing
 * is inserted in parallel mode, so nothing waits until the plan ends.  A
 * plan started from inside a flush (an operator class running a query)
 * does not start another one.
 */
static ExecutorStart_hook_type prev_ExecutorStart = NULL;

static void
abt_batch_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (queryDesc->plannedstmt->parallelModeNeeded && abt_pending != NIL &&
		!abt_batch_flushing && !IsInParallelMode())
		abt_batch_flush_all();
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

void
abt_batch_install(void)
{
	RegisterXactCallback(abt_batch_xact_callback, NULL);
	RegisterSubXactCallback(abt_batch_subxact_callback, NULL);
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = abt_batch_executor_start;
}

/* ---- finding and locking a group's pages ---- */

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
static int
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
static bool
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

static void
abt_batch_release(AbtBatch *b)
{
	for (int i = b->npages - 1; i >= 0; i--)
		UnlockReleaseBuffer(b->pages[i].buf);
	b->npages = 0;
}

/* ---- making a group valid ---- */

/*
 * With every page held: add each entry's weight on each downlink above it
 * (root side first, as a pass would, for the weight store), make the
 * entries valid, change the sketches, one record.
 */
/*
 * The group's weight on each downlink above its leaves: what the entries
 * below each page add up to, added once per downlink, root side first as
 * a pass would (mvs_add), through one writer, so that the weight store
 * records the whole group or none of it (README of mvstore, rule 2).
 * One add per entry and level was 5% of an insert in the weight store
 * (bench/results/write_path_profile.md); the group's entries share most
 * downlinks above the leaves' parents.
 */
static void
abt_batch_add_weights(AbtBatch *b, MvsWriter *versions)
{
	uint64		sums[XLR_MAX_BLOCK_ID + 1];

	memset(sums, 0, sizeof(uint64) * b->npages);
	for (int j = 0; j < b->n; j++)
		if (b->leafof[j] >= 0)
			sums[b->leafof[j]] += b->e[j].w;
	/* pages come leaves first, then each level: a page's parent comes later */
	for (int i = 0; i < b->npages; i++)
		if (b->pages[i].up >= 0)
			sums[b->pages[i].up] += sums[i];
	for (int i = b->npages - 1; i >= 0; i--)
	{
		AbtBatchPage *pg = &b->pages[i];
		Page		upage;
		IndexTuple	dl;

		if (pg->up < 0 || sums[i] == 0)
			continue;
		upage = BufferGetPage(b->pages[pg->up].buf);
		dl = (IndexTuple) PageGetItem(upage, PageGetItemId(upage, pg->upoff));
		mvs_add(versions, AbtDownlinkGetChild(dl), &AbtPivotGetAux(dl)->weight, sums[i],
				false);
	}
}

static bool
abt_batch_apply(AbtBatch *b)
{
	Relation	rel = b->rel;
	TransactionId xid = GetTopTransactionId();
	bool		weighted = abt_index_info(rel)->weighted;
	MvsWriter	versions;
	AbtSketchOp sketch;
	BlockNumber children[XLR_MAX_BLOCK_ID + 1];
	int			nchildren = 0;
	int			nsketch;
	int			made = 0;

	/* the chains abt_batch_add_weights adds to: their lines on the way */
	mvs_writer_begin(&versions, rel);
	for (int i = 0; i < b->npages; i++)
		if (b->pages[i].up >= 0)
			children[nchildren++] = BufferGetBlockNumber(b->pages[i].buf);
	mvs_writer_prefetch(&versions, children, nchildren, false);
	abt_sketch_lock_batch(&sketch, rel);
	nsketch = abt_sketch_held_blocks(&sketch);
	if (b->npages > XLR_MAX_BLOCK_ID - nsketch)
	{
		/* room was left for a lost set that is back (abt_batch_max_pages) */
		abt_sketch_release(&sketch);
		abt_count(batch_retries);
		return false;
	}
	mvs_writer_prefetch(&versions, children, nchildren, true);
	abt_xlog_reserve(rel, b->npages - 1 + nsketch, b->npages + abt_sketch_max_rdatas(rel));
	START_CRIT_SECTION();
	abt_batch_add_weights(b, &versions);
	for (int j = 0; j < b->n; j++)
	{
		Page		leaf;

		if (b->leafof[j] < 0)
			continue;			/* gone with its row */
		leaf = BufferGetPage(b->pages[b->leafof[j]].buf);
		abt_set_leaf_xmin((IndexTuple) PageGetItem(leaf, PageGetItemId(leaf, b->offof[j])), xid);
		abt_sketch_apply(&sketch, &b->e[j].hashes, true);
		made++;
	}
	for (int i = 0; i < b->npages; i++)
	{
		if (i < b->nleaves)
		{
			abt_leaf_note_xid(BufferGetPage(b->pages[i].buf), xid);
			AbtPageGetOpaque(BufferGetPage(b->pages[i].buf))->sid++;
		}
		MarkBufferDirty(b->pages[i].buf);
	}
	abt_sketch_mark_dirty(&sketch);
	if (RelationNeedsWAL(rel))
		abt_batch_xlog(b, xid, weighted, &sketch);
	END_CRIT_SECTION();
	abt_sketch_release(&sketch);
	abt_count(batch_records);
	pg_atomic_fetch_add_u64(&abt_shared->batch_entries, made);
	return true;
}

/* Write the group's record: its pages' data say what redo redoes on each. */
static void
abt_batch_xlog(AbtBatch *b, TransactionId xid, bool weighted, AbtSketchOp *sketch)
{
	Buffer		bufs[XLR_MAX_BLOCK_ID + 1];
	OffsetNumber offs[ABT_BATCH_PENDING];
	int			noffs[XLR_MAX_BLOCK_ID + 1];
	uint8		children[XLR_MAX_BLOCK_ID + 1];
	int			nchildren[XLR_MAX_BLOCK_ID + 1];
	int			j;
	int			k = 0;

	for (int i = 0; i < b->npages; i++)
	{
		bufs[i] = b->pages[i].buf;
		noffs[i] = 0;
		nchildren[i] = 0;
	}
	/* entries are in leaf order, and each page's children are adjacent */
	for (j = 0; j < b->n; j++)
		if (b->leafof[j] >= 0)
			offs[k++] = b->offof[j], noffs[b->leafof[j]]++;
	k = 0;
	for (int p = b->nleaves; p < b->npages; p++)
		for (int c = 0; c < p; c++)
			if (b->pages[c].up == p)
				children[k++] = c, nchildren[p]++;
	abt_xlog_valid_batch(bufs, b->nleaves, b->npages, offs, noffs, children, nchildren,
						 xid, weighted, sketch);
}

/* Order of the entries: the index's, so that leaves are locked left to right. */
static int
abt_batch_cmp(const void *a, const void *b, void *arg)
{
	AbtKey	   *keys = arg;

	return abt_compare_keys(&keys[*(const int *) a], &keys[*(const int *) b]);
}

/*
 * Sort p's entries into the index's order; returns their keys in that
 * order (pointers into keys, made here: the sort moves ints, not the
 * entries with their paths, about 300 bytes, nor the keys, 2 kB each).
 */
static AbtKey **
abt_batch_sort(Relation rel, AbtPendingIndex *p, AbtKey *keys)
{
	int			n = p->n;
	AbtKey	  **sorted = palloc(sizeof(AbtKey *) * n);
	AbtPendingEntry *e = palloc(sizeof(AbtPendingEntry) * n);
	int		   *order = palloc(sizeof(int) * n);

	for (int j = 0; j < n; j++)
	{
		abt_key_from_tuple(rel, &keys[j], p->e[j].itup, false);
		order[j] = j;
	}
	qsort_arg(order, n, sizeof(int), abt_batch_cmp, keys);
	for (int j = 0; j < n; j++)
	{
		e[j] = p->e[order[j]];
		sorted[j] = &keys[order[j]];
	}
	memcpy(p->e, e, sizeof(AbtPendingEntry) * n);
	pfree(e);
	pfree(order);
	return sorted;
}

/*
 * How many pages of the tree a record may name: the sketches' come first,
 * and abt_xlog_reserve asks room for one block more than it is given.
 * A lost exact set's pages are left out (abt_sketch_batch_blocks): after
 * the first batch, a large index's records name two more leaves or
 * parents per sketched column, and need fewer records.
 */
static int
abt_batch_max_pages(Relation rel)
{
	return XLR_MAX_BLOCK_ID - abt_sketch_batch_blocks(rel);
}

/*
 * Make a group of the entries from e[0] (sorted, n of them) valid: returns
 * how many, or 0, with nothing changed, if not even one leaf's pages fit a
 * record.  The leaves' paths (phase 1's, or a descent's) predict the pages
 * above them; when splits since make them more, the group tries again with
 * half the leaves.
 */
static int
abt_batch_group(AbtBatch *b, AbtPendingEntry *e, int n)
{
	int			maxleaves = XLR_MAX_BLOCK_ID + 1;

	for (;;)
	{
		int			maxpages = abt_batch_max_pages(b->rel);

		if (maxpages < 2)
			return 0;			/* sketches with many pages leave no room */
		b->e = e;
		b->npages = 0;
		b->n = abt_batch_lock_leaves(b, n, maxpages, maxleaves);
		if (abt_batch_lock_path(b, maxpages))
		{
			bool		done = abt_batch_apply(b);

			abt_batch_release(b);
			if (done)
				return b->n;
			/* a set came back: the same leaves, if they fit the smaller room */
			continue;
		}
		/* the paths were older than the tree: fewer leaves */
		maxleaves = b->nleaves / 2;
		abt_batch_release(b);
		if (maxleaves == 0)
			return 0;
	}
}

/*
 * Make p's waiting entries valid, a group per record, or one at a time
 * (abt_validate_entry) where a record has room for fewer than two leaves
 * or a group did not fit after all.  Each entry leaves the list as soon
 * as it is valid: after an ERROR the list holds exactly the others, which
 * a later flush takes (or the transaction's abort forgets).
 */
static void
abt_batch_flush_index(Relation rel, AbtPendingIndex *p)
{
	AbtBatch   *b;
	int			n = p->n;
	AbtKey	  **sorted;

	/*
	 * The keys' room is kept for the backend's life: 150 kB, which palloc
	 * would take from mmap and give back at every flush, and the page
	 * faults of touching it again were 5% of a batched insert.
	 */
	if (abt_batch_keys == NULL)
	{
		abt_batch_keys = MemoryContextAlloc(TopMemoryContext,
											sizeof(AbtKey) * ABT_BATCH_PENDING);
		abt_batch_state = MemoryContextAlloc(TopMemoryContext, sizeof(AbtBatch));
	}
	b = abt_batch_state;
	abt_batch_flushing = true;
	sorted = abt_batch_sort(rel, p, abt_batch_keys);

	b->rel = rel;
	b->leafof = palloc(sizeof(int) * n);
	b->offof = palloc(sizeof(OffsetNumber) * n);
	while (p->n > 0)
	{
		int			i = n - p->n;	/* the first one still waiting */
		int			done;

		b->keys = sorted + i;
		done = abt_batch_group(b, p->e, p->n);
		if (done == 0)
		{
			abt_validate_entry(rel, sorted[i], p->e[0].w);
			done = 1;
		}
		/* the list keeps the entries still waiting, in order */
		for (int j = 0; j < done; j++)
			pfree(p->e[j].itup);
		memmove(p->e, p->e + done, sizeof(AbtPendingEntry) * (p->n - done));
		p->n -= done;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(sorted);
	pfree(b->leafof);
	pfree(b->offof);
	abt_batch_flushing = false;
}
