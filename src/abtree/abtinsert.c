/*-------------------------------------------------------------------------
 *
 * abtinsert.c
 *	  Inserting into an abtree: exclusive crabbing, weights added on the way
 *	  down, splits made top-down over the held path.
 *
 * See "Locking protocol" in src/abtree/README for why this keeps every
 * downlink weight >= the weight below it at every moment, and exact at rest.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/rel.h"

#define ABT_MAX_HEIGHT	32

typedef struct AbtPathEntry
{
	Buffer		buf;			/* exclusively locked */
	OffsetNumber off;			/* internal pages: the downlink followed */
} AbtPathEntry;

typedef struct AbtInsertState
{
	Relation	rel;
	AbtIndexInfo *info;
	AbtKey	   *key;			/* the full key of the new entry */
	AbtPathEntry path[ABT_MAX_HEIGHT];
	int			depth;			/* entries in path, root side first */
} AbtInsertState;

/* How to split a page */
typedef struct AbtSplitPlan
{
	OffsetNumber first;			/* first data item of the page being split */
	OffsetNumber splitoff;		/* first data item that goes right */
	IndexTuple	lefthikey;		/* the left half's new high key */
} AbtSplitPlan;

/*
 * Add delta to the weight of the downlink at off, WAL-logged.  The caller
 * holds an exclusive lock on buf.
 */
void
abt_add_downlink_weight(Relation rel, Buffer buf, OffsetNumber off, int64 delta)
{
	Page		page = BufferGetPage(buf);
	IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
	AbtPivotAux *aux = AbtPivotGetAux(itup);

	START_CRIT_SECTION();
	aux->weight += delta;
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
		abt_xlog_add_weight(buf, off, delta);
	END_CRIT_SECTION();
}

static void
abt_release_range(AbtInsertState *ist, int from, int to)
{
	int			i;

	for (i = from; i < to; i++)
		UnlockReleaseBuffer(ist->path[i].buf);
}

/* Keep only the last entry of the path: everything above it is released. */
static void
abt_release_ancestors(AbtInsertState *ist)
{
	abt_release_range(ist, 0, ist->depth - 1);
	ist->path[0] = ist->path[ist->depth - 1];
	ist->depth = 1;
}

/*
 * A page is safe if whatever happens below cannot make it split: a leaf
 * with room for the new tuple, an internal page with room for the largest
 * pivot an insert can create.
 */
static bool
abt_page_is_safe(AbtInsertState *ist, Page page, IndexTuple itup)
{
	Size		free = PageGetExactFreeSpace(page);

	if (AbtPageIsLeaf(AbtPageGetOpaque(page)))
		return free >= MAXALIGN(IndexTupleSize(itup)) + sizeof(ItemIdData);
	return free >= ist->info->max_pivot_size;
}

/* Create the root of an empty tree (the metapage says there is none). */
static Buffer
abt_create_first_root(Relation rel)
{
	Buffer		metabuf = ReadBuffer(rel, ABT_METAPAGE);
	AbtMetaPageData *meta;
	Buffer		rootbuf;
	Buffer		bufs[2];

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = AbtPageGetMeta(BufferGetPage(metabuf));
	if (meta->root != InvalidBlockNumber)
	{
		UnlockReleaseBuffer(metabuf);
		return InvalidBuffer;	/* somebody else made it */
	}
	rootbuf = abt_new_buffer(rel);

	START_CRIT_SECTION();
	abt_init_page(BufferGetPage(rootbuf), 0, ABTP_LEAF | ABTP_ROOT);
	meta->root = BufferGetBlockNumber(rootbuf);
	meta->level = 0;
	MarkBufferDirty(rootbuf);
	MarkBufferDirty(metabuf);
	bufs[0] = metabuf;
	bufs[1] = rootbuf;
	/* an unlogged index starts here after a crash reset: no WAL for it */
	if (RelationNeedsWAL(rel))
		abt_xlog_pages(ABT_PAGES_FIRSTROOT, bufs, 2);
	END_CRIT_SECTION();

	UnlockReleaseBuffer(metabuf);
	return rootbuf;
}

/* The root, exclusively locked (made first if the tree has none). */
static Buffer
abt_lock_root_for_write(Relation rel)
{
	for (;;)
	{
		Buffer		buf = abt_get_root(rel, BUFFER_LOCK_EXCLUSIVE);

		if (BufferIsValid(buf))
			return buf;
		buf = abt_create_first_root(rel);
		if (BufferIsValid(buf))
			return buf;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Choose where to split a full page: about half the bytes go each way, and
 * each half keeps at least one data item.
 */
static void
abt_plan_split(AbtInsertState *ist, Page page, AbtSplitPlan *plan)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber first = AbtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	Size		total = 0;
	Size		sofar = 0;
	IndexTuple	itup;

	if (maxoff < first + 1)
		elog(ERROR, "abtree: page with %d items cannot be split", maxoff - first + 1);

	for (off = first; off <= maxoff; off++)
		total += ItemIdGetLength(PageGetItemId(page, off));
	for (off = first; off < maxoff; off++)
	{
		sofar += ItemIdGetLength(PageGetItemId(page, off));
		if (sofar >= total / 2)
			break;
	}
	plan->first = first;
	plan->splitoff = off + 1;

	if (AbtPageIsLeaf(opaque))
	{
		/* the left half's high key: its last key */
		itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, plan->splitoff - 1));
		plan->lefthikey = abt_make_pivot(ist->rel, itup, true, InvalidBlockNumber, 0);
	}
	else
	{
		/* the key of the first downlink moving right (K3) */
		itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, plan->splitoff));
		plan->lefthikey = CopyIndexTuple(itup);
		ItemPointerSet(&plan->lefthikey->t_tid, InvalidBlockNumber, 1);
		AbtPivotGetAux(plan->lefthikey)->weight = 0;
		AbtPivotGetAux(plan->lefthikey)->rid = 0;
	}
}

static void
abt_page_add(Page page, IndexTuple itup, OffsetNumber off)
{
	if (PageAddItem(page, (Item) itup, IndexTupleSize(itup), off,
					false, false) == InvalidOffsetNumber)
		elog(PANIC, "abtree: failed to add item of %zu bytes", (Size) IndexTupleSize(itup));
}

/*
 * Fill temporary left and right pages from the page being split.  The right
 * page's first downlink (internal pages) loses its key: it becomes minus
 * infinity.
 */
static void
abt_fill_halves(Page page, AbtSplitPlan *plan, Page left, Page right,
				BlockNumber rightblk)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber first = AbtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	bool		leaf = AbtPageIsLeaf(opaque);
	uint16		flags = opaque->flags & ABTP_LEAF;
	OffsetNumber off;

	abt_init_page(left, opaque->level, flags);
	abt_init_page(right, opaque->level, flags);
	AbtPageGetOpaque(left)->prev = opaque->prev;
	AbtPageGetOpaque(left)->next = rightblk;
	AbtPageGetOpaque(left)->sid = opaque->sid + 1;
	/* right's prev is set by the caller, who knows the left block */
	AbtPageGetOpaque(right)->next = opaque->next;

	abt_page_add(left, plan->lefthikey, ABT_HIKEY);
	for (off = first; off < plan->splitoff; off++)
		abt_page_add(left, (IndexTuple) PageGetItem(page, PageGetItemId(page, off)),
					 InvalidOffsetNumber);

	if (!AbtPageIsRightmost(opaque))
		abt_page_add(right, (IndexTuple) PageGetItem(page, PageGetItemId(page, ABT_HIKEY)),
					 ABT_HIKEY);
	for (off = plan->splitoff; off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		if (!leaf && off == plan->splitoff)
			itup = abt_make_nokey_pivot(AbtDownlinkGetChild(itup),
										AbtPivotGetAux(itup)->weight);
		abt_page_add(right, itup, InvalidOffsetNumber);
	}
}

/*
 * Which half did the split put our way into?  For the leaf, where the new
 * key goes; for an internal page, where the downlink we follow went.
 * Returns true for the right half and adjusts path[i].off to it.
 */
static bool
abt_follow_half(AbtInsertState *ist, int i, AbtSplitPlan *plan, Page left, Page right)
{
	AbtPathEntry *e = &ist->path[i];

	if (AbtPageIsLeaf(AbtPageGetOpaque(left)))
		return abt_key_beyond_page(ist->rel, ist->key, left);
	if (e->off < plan->splitoff)
	{
		/* the left half has a high key now, even if the page had none */
		e->off = e->off - plan->first + AbtFirstDataOffset(AbtPageGetOpaque(left));
		return false;
	}
	e->off = e->off - plan->splitoff + AbtFirstDataOffset(AbtPageGetOpaque(right));
	return true;
}

/*
 * Split path[i]; its parent path[i - 1] has room for the new downlink.  One
 * WAL record with images of the parent, both halves and the old right
 * sibling: the split and the downlink insert are atomic.
 */
static void
abt_split_page(AbtInsertState *ist, int i, AbtSplitPlan *plan)
{
	Relation	rel = ist->rel;
	AbtPathEntry *pe = &ist->path[i - 1];
	Buffer		buf = ist->path[i].buf;
	Page		page = BufferGetPage(buf);
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	Page		parent = BufferGetPage(pe->buf);
	Buffer		rbuf = abt_new_buffer(rel);
	Buffer		sbuf = InvalidBuffer;
	PGAlignedBlock leftblock;
	PGAlignedBlock rightblock;
	Page		left = leftblock.data;
	Page		right = rightblock.data;
	uint64		wl;
	uint64		wr;
	IndexTuple	sep;
	IndexTuple	downlink;
	AbtPivotAux *daux;
	Buffer		bufs[4];
	int			nbufs = 0;
	bool		goright;

	if (!AbtPageIsRightmost(opaque))
	{
		sbuf = ReadBuffer(rel, opaque->next);
		LockBuffer(sbuf, BUFFER_LOCK_EXCLUSIVE);
		abt_check_page(rel, sbuf);
	}
	abt_fill_halves(page, plan, left, right, BufferGetBlockNumber(rbuf));
	AbtPageGetOpaque(right)->prev = BufferGetBlockNumber(buf);
	wl = abt_page_weight(left, ist->info->weighted);
	wr = abt_page_weight(right, ist->info->weighted);
	sep = abt_make_pivot(rel, plan->lefthikey, false, BufferGetBlockNumber(rbuf), wr);
	downlink = (IndexTuple) PageGetItem(parent, PageGetItemId(parent, pe->off));
	Assert(AbtDownlinkGetChild(downlink) == BufferGetBlockNumber(buf));
	daux = AbtPivotGetAux(downlink);
	goright = abt_follow_half(ist, i, plan, left, right);

	START_CRIT_SECTION();
	memcpy(page, left, BLCKSZ);
	memcpy(BufferGetPage(rbuf), right, BLCKSZ);
	if (BufferIsValid(sbuf))
		AbtPageGetOpaque(BufferGetPage(sbuf))->prev = BufferGetBlockNumber(rbuf);
	daux->weight = wl;
	daux->rid++;
	abt_page_add(parent, sep, OffsetNumberNext(pe->off));
	AbtPageGetOpaque(parent)->sid++;
	bufs[nbufs++] = pe->buf;
	bufs[nbufs++] = buf;
	bufs[nbufs++] = rbuf;
	if (BufferIsValid(sbuf))
		bufs[nbufs++] = sbuf;
	for (int b = 0; b < nbufs; b++)
		MarkBufferDirty(bufs[b]);
	if (RelationNeedsWAL(rel))
		abt_xlog_pages(ABT_PAGES_SPLIT, bufs, nbufs);
	END_CRIT_SECTION();

	if (BufferIsValid(sbuf))
		UnlockReleaseBuffer(sbuf);
	if (goright)
	{
		UnlockReleaseBuffer(buf);
		ist->path[i].buf = rbuf;
		pe->off = OffsetNumberNext(pe->off);
	}
	else
		UnlockReleaseBuffer(rbuf);
}

/*
 * Split the root path[0]: a new root above the two halves.  The path gains
 * an entry at the front.
 */
static void
abt_split_root(AbtInsertState *ist, AbtSplitPlan *plan)
{
	Relation	rel = ist->rel;
	Buffer		buf = ist->path[0].buf;
	Page		page = BufferGetPage(buf);
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	Buffer		rbuf = abt_new_buffer(rel);
	Buffer		nrbuf = abt_new_buffer(rel);
	Buffer		metabuf = ReadBuffer(rel, ABT_METAPAGE);
	Page		newroot = BufferGetPage(nrbuf);
	PGAlignedBlock leftblock;
	PGAlignedBlock rightblock;
	Page		left = leftblock.data;
	Page		right = rightblock.data;
	AbtMetaPageData *meta;
	uint64		wl;
	uint64		wr;
	uint16		level = opaque->level;
	Buffer		bufs[4];
	bool		goright;
	IndexTuple	first;
	IndexTuple	second;

	Assert(ist->depth < ABT_MAX_HEIGHT);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = AbtPageGetMeta(BufferGetPage(metabuf));

	abt_fill_halves(page, plan, left, right, BufferGetBlockNumber(rbuf));
	AbtPageGetOpaque(right)->prev = BufferGetBlockNumber(buf);
	wl = abt_page_weight(left, ist->info->weighted);
	wr = abt_page_weight(right, ist->info->weighted);

	memmove(&ist->path[1], &ist->path[0], sizeof(AbtPathEntry) * ist->depth);
	ist->depth++;
	ist->path[0].buf = nrbuf;
	ist->path[0].off = FirstOffsetNumber;
	goright = abt_follow_half(ist, 1, plan, left, right);

	/* no palloc inside the critical section */
	first = abt_make_nokey_pivot(BufferGetBlockNumber(buf), wl);
	second = abt_make_pivot(rel, plan->lefthikey, false, BufferGetBlockNumber(rbuf), wr);

	START_CRIT_SECTION();
	memcpy(page, left, BLCKSZ);
	memcpy(BufferGetPage(rbuf), right, BLCKSZ);
	abt_init_page(newroot, level + 1, ABTP_ROOT);
	abt_page_add(newroot, first, FirstOffsetNumber);
	abt_page_add(newroot, second, OffsetNumberNext(FirstOffsetNumber));
	meta->root = BufferGetBlockNumber(nrbuf);
	meta->level = level + 1;
	bufs[0] = buf;
	bufs[1] = rbuf;
	bufs[2] = nrbuf;
	bufs[3] = metabuf;
	for (int b = 0; b < 4; b++)
		MarkBufferDirty(bufs[b]);
	if (RelationNeedsWAL(rel))
		abt_xlog_pages(ABT_PAGES_NEWROOT, bufs, 4);
	END_CRIT_SECTION();

	UnlockReleaseBuffer(metabuf);
	if (goright)
	{
		UnlockReleaseBuffer(buf);
		ist->path[1].buf = rbuf;
		ist->path[0].off = OffsetNumberNext(FirstOffsetNumber);
	}
	else
		UnlockReleaseBuffer(rbuf);
}

/*
 * Make sure path[i] has need bytes free, splitting it (and, first, its
 * ancestors as needed) top-down.  Returns the index path[i] has afterwards
 * (a root split shifts the path by one).
 */
static int
abt_make_room(AbtInsertState *ist, int i, Size need)
{
	Page		page = BufferGetPage(ist->path[i].buf);
	AbtSplitPlan plan;

	if (PageGetExactFreeSpace(page) >= need)
		return i;

	abt_plan_split(ist, page, &plan);
	if (i == 0)
	{
		if (!AbtPageIsRoot(AbtPageGetOpaque(page)))
			elog(ERROR, "abtree: page %u must split but its parent is not held",
				 BufferGetBlockNumber(ist->path[0].buf));
		abt_split_root(ist, &plan);
		return 1;
	}
	i = 1 + abt_make_room(ist, i - 1,
						  MAXALIGN(IndexTupleSize(plan.lefthikey)) + sizeof(ItemIdData));
	abt_split_page(ist, i, &plan);
	return i;
}

/* Insert a leaf tuple with full key key and weight w. */
static void
abt_do_insert(AbtInsertState *ist, IndexTuple itup, uint64 w)
{
	Relation	rel = ist->rel;
	Page		page;
	OffsetNumber off;
	int			leaf;
	Size		need = MAXALIGN(IndexTupleSize(itup)) + sizeof(ItemIdData);

	ist->path[0].buf = abt_lock_root_for_write(rel);
	ist->depth = 1;

	/* down, adding w to each downlink followed (overcounts until the end) */
	for (;;)
	{
		AbtPathEntry *e = &ist->path[ist->depth - 1];
		IndexTuple	downlink;
		Buffer		cbuf;

		page = BufferGetPage(e->buf);
		if (AbtPageIsLeaf(AbtPageGetOpaque(page)))
			break;
		if (ist->depth >= ABT_MAX_HEIGHT)
			elog(ERROR, "abtree: index \"%s\" is too deep", RelationGetRelationName(rel));

		e->off = abt_binsrch_internal(rel, ist->key, page);
		downlink = (IndexTuple) PageGetItem(page, PageGetItemId(page, e->off));
		abt_add_downlink_weight(rel, e->buf, e->off, (int64) w);

		cbuf = ReadBuffer(rel, AbtDownlinkGetChild(downlink));
		LockBuffer(cbuf, BUFFER_LOCK_EXCLUSIVE);
		abt_check_page(rel, cbuf);
		ist->path[ist->depth].buf = cbuf;
		ist->path[ist->depth].off = InvalidOffsetNumber;
		ist->depth++;
		if (abt_page_is_safe(ist, BufferGetPage(cbuf), itup))
			abt_release_ancestors(ist);
	}

	leaf = ist->depth - 1;
	if (PageGetExactFreeSpace(page) < need)
	{
		leaf = abt_make_room(ist, leaf, need);
		/* the split recomputed the leaf's downlink without the new entry */
		if (leaf > 0)
			abt_add_downlink_weight(rel, ist->path[leaf - 1].buf, ist->path[leaf - 1].off,
									(int64) w);
		page = BufferGetPage(ist->path[leaf].buf);
	}

	off = abt_binsrch_leaf(rel, ist->key, page);
	START_CRIT_SECTION();
	abt_page_add(page, itup, off);
	AbtPageGetOpaque(page)->sid++;
	if (!TransactionIdIsValid(abt_leaf_xmin(itup)))
		AbtPageGetOpaque(page)->flags |= ABTP_HAS_INVALID;
	MarkBufferDirty(ist->path[leaf].buf);
	if (RelationNeedsWAL(rel))
		abt_xlog_insert_leaf(ist->path[leaf].buf, off, itup);
	END_CRIT_SECTION();

	abt_release_range(ist, 0, ist->depth);
	ist->depth = 0;
}

bool
abtinsert(Relation rel, Datum *values, bool *isnull, ItemPointer ht_ctid,
		  Relation heapRel, IndexUniqueCheck checkUnique,
		  bool indexUnchanged, IndexInfo *indexInfo)
{
	AbtInsertState ist;
	IndexTuple	itup;
	AbtKey		key;

	abt_require_preload();
	ist.rel = rel;
	ist.info = abt_index_info(rel);
	itup = abt_form_leaf(rel, ist.info, values, isnull, ht_ctid,
						 GetTopTransactionId());
	abt_key_from_tuple(rel, &key, itup, false);
	ist.key = &key;
	ist.depth = 0;

	abt_do_insert(&ist, itup, abt_leaf_weight(itup, ist.info->weighted));
	pfree(itup);
	return false;
}
