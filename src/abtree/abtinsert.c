/*-------------------------------------------------------------------------
 *
 * abtinsert.c
 *	  Inserting into an abtree, phase 1: the new entry goes into its leaf,
 *	  not valid yet, with splits made bottom-up; then phase 2 (abtpass.c,
 *	  or the path_exclusive baseline here) adds its weight above it.
 *
 * See "Locking protocol" in src/abtree/README for the lock order and for
 * why every downlink weight stays >= the weight below it at every moment,
 * and exact at rest.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "mvstore/mvstore.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/rel.h"

typedef struct AbtPathEntry
{
	Buffer		buf;			/* exclusively locked */
	OffsetNumber off;			/* internal pages: the downlink followed */
	Buffer		sib;			/* its right sibling, locked in case it splits */
} AbtPathEntry;

typedef struct AbtInsertState
{
	Relation	rel;
	AbtIndexInfo *info;
	Relation	heaprel;		/* the table, to fold full leaves; or NULL */
	AbtKey	   *key;			/* the full key of the new entry */
	IndexTuple	newitup;		/* the new entry, while it is being placed */
	AbtPathEntry path[ABT_MAX_HEIGHT];
	int			depth;			/* entries in path, root side first */
	bool		one_record;		/* path_exclusive: valid at once if it fits */
	uint64		w;				/* ... adding this weight above it */
	bool		placed_valid;	/* out: it did */
} AbtInsertState;

/* How to split a page */
typedef struct AbtSplitPlan
{
	OffsetNumber first;			/* first data item of the page being split */
	OffsetNumber splitoff;		/* first data item that goes right */
	IndexTuple	lefthikey;		/* the left half's new high key */
	bool		at_new;			/* a leaf split at the new entry: it ends the left half */
} AbtSplitPlan;

static void
abt_release_range(AbtInsertState *ist, int from, int to)
{
	int			i;

	for (i = from; i < to; i++)
	{
		if (BufferIsValid(ist->path[i].sib))
			UnlockReleaseBuffer(ist->path[i].sib);
		UnlockReleaseBuffer(ist->path[i].buf);
	}
}

/* Create the root of an empty tree (the metapage says there is none). */
static Buffer
abt_create_first_root(Relation rel, BlockNumber metablk)
{
	Buffer		metabuf = ReadBuffer(rel, metablk);
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
	/* pbtree pages carry their partition (src/pbtree/README) */
	((PageHeader) BufferGetPage(rootbuf))->pd_prune_xid =
		((PageHeader) BufferGetPage(metabuf))->pd_prune_xid;
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

/*
 * Does a split name the pages above its parent (up to the root)?  A logged
 * abtree's do: a split's halves carry the adds of weight passes in flight,
 * and so do the parent's downlinks recomputed from them, which WAL had
 * not seen; the grandparent's downlink must count them on a standby too
 * (src/abtree/README, "Standbys").  pbtree keeps no downlink weights.
 */
static inline bool
abt_split_logs_path(AbtInsertState *ist)
{
	return RelationNeedsWAL(ist->rel) && !ist->info->partitioned;
}

/* The bytes a half of a split holds: items, line pointers and high key */
#define ABT_SPLIT_CAPACITY \
	(BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(AbtPageOpaqueData)))

/* Space an item takes on a page: its bytes and its line pointer */
static inline Size
abt_item_space(Page page, OffsetNumber off)
{
	return MAXALIGN(ItemIdGetLength(PageGetItemId(page, off))) + sizeof(ItemIdData);
}

/*
 * Leaves where a value grows.  A value's later rows come in heap order, so
 * its new entries go near the end of its run: at the very end with one
 * writer, among the last ones with several (each writes its own heap
 * page).  A balanced split of the leaf holding that end leaves a half no
 * entry comes to again (a column of 21 values was 2.1 times nbtree's
 * size).  Only where inserts fold (ist->heaprel): without posting tuples
 * a value fills its leaves one entry at a time, and they stay as before.
 *
 * The leaf holds the end of the new entry's value when it begins with
 * that value and either another value follows on the leaf, or the value's
 * largest possible entry belongs on it (the leaf is the value's last).
 */
static bool
abt_value_grows_here(AbtInsertState *ist, Page page)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	AbtKey	   *key = ist->key;
	ItemPointerData tid = key->tid;
	bool		last;

	if (!AbtPageIsLeaf(opaque) || ist->newitup == NULL || ist->heaprel == NULL ||
		!abt_key_columns_equal(ist->rel, key, page, AbtFirstDataOffset(opaque)))
		return false;
	if (!abt_key_columns_equal(ist->rel, key, page, PageGetMaxOffsetNumber(page)))
		return true;
	ItemPointerSet(&key->tid, MaxBlockNumber, PG_UINT16_MAX);
	last = !abt_key_beyond_page(ist->rel, key, page);
	key->tid = tid;
	return last;
}

/*
 * When another value follows on the leaf: split where the new entry's
 * value ends, with a high key that takes every later entry of the value
 * to the left: the value with the largest heap TID there is,
 * (MaxBlockNumber, 0xFFFF).  The left half then holds one value; the right
 * half keeps the values after it.  Returns false when the value fills the
 * leaf or the halves would not fit.
 */
static bool
abt_plan_value_end_split(AbtInsertState *ist, Page page, AbtSplitPlan *plan, Size need,
						 OffsetNumber newoff)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber first = AbtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber end = newoff;
	Size		left = need;
	Size		right = AbtPageIsRightmost(opaque) ? 0 : abt_item_space(page, ABT_HIKEY);
	IndexTuple	last;

	while (end <= maxoff && abt_key_columns_equal(ist->rel, ist->key, page, end))
		end++;
	if (end > maxoff)
		return false;
	for (OffsetNumber off = first; off <= maxoff; off++)
	{
		if (off < end)
			left += abt_item_space(page, off);
		else
			right += abt_item_space(page, off);
	}
	last = (IndexTuple) PageGetItem(page, PageGetItemId(page, end - 1));
	left += MAXALIGN(IndexTupleSize(last) + sizeof(AbtPivotAux)) + sizeof(ItemIdData);
	if (left > ABT_SPLIT_CAPACITY || right > ABT_SPLIT_CAPACITY)
		return false;
	plan->first = first;
	plan->splitoff = end;
	plan->at_new = false;
	plan->lefthikey = abt_make_pivot(ist->rel, last, true, InvalidBlockNumber, 0);
	ItemPointerSet(&AbtPivotGetAux(plan->lefthikey)->heaptid, MaxBlockNumber, PG_UINT16_MAX);
	abt_count(split_value_end);
	return true;
}

/*
 * Otherwise (the leaf holds that one value, or the rest would not fit on
 * the right) nothing comes to the left half again: it is filled as full as
 * folding leaves a page, 96%, as nbtree's single-value split.
 */
#define ABT_SINGLEVAL_FILLFACTOR	96

/*
 * Choose where to split a full page: the split that leaves both halves
 * fitting, with the incoming item of need bytes in the half it goes to
 * (left iff newoff < the split offset: for a leaf newoff is the item's
 * search position, for an internal page the downlink the new one follows,
 * as abt_follow_half decides) and the
 * left half's new high key, and that balances the bytes best; each half
 * keeps at least one data item; among equally balanced splits the one
 * with more on the left (ascending inserts leave left halves alone).
 * Splitting by bytes alone could leave the
 * incoming half full when items are near ABT_MAX_ITEM_SIZE.  A leaf's
 * high key is bounded by the item it is made from plus the pivot's aux
 * (abt_make_pivot keeps the key columns only); an internal split moves a
 * downlink to the right half without its key.  A leaf may also split at
 * the new entry itself (at_new): the items before it go left, the new
 * entry ends the left half and gives it its high key.  Without that, a
 * large entry between two large items had no half to go to.
 *
 * The rightmost leaf is the one case where balance is wrong.  Under
 * ascending keys (serial ids, times) nothing comes to its left half again,
 * which would stay half empty for ever (ascending inserts made indexes 1.8
 * times nbtree's size).  So its left half is filled to the index's
 * fillfactor instead (90 by default), as nbtree does; a fillfactor of 50 or
 * less keeps the balanced split.  That holds wherever the new entry goes,
 * as in nbtree: under random keys it matters little for the page itself,
 * but leaves split in waves set off by the first splits, and a balanced
 * first split put abtree on another phase of them than nbtree, whose size
 * it then missed by -5% to +9% depending on the row count (1.00 to 1.02
 * with the same rule; bench abtree_size).  A leaf where a value grows
 * splits by the rules above (abt_value_grows_here) instead.
 */
/* How far a split with halves of left and right bytes is from the aim */
static inline Size
abt_split_diff(Size left, Size right, bool fill_left, Size target)
{
	if (fill_left)
		return Max(left, target) - Min(left, target);
	return Max(left, right) - Min(left, right);
}

static void
abt_plan_split(AbtInsertState *ist, Page page, AbtSplitPlan *plan, Size need,
			   OffsetNumber newoff)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	bool		leaf = AbtPageIsLeaf(opaque);
	OffsetNumber first = AbtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	Size		cap = ABT_SPLIT_CAPACITY;
	Size		nokey = MAXALIGN(MAXALIGN(sizeof(IndexTupleData)) + sizeof(AbtPivotAux)) +
		sizeof(ItemIdData);
	Size		rfixed = AbtPageIsRightmost(opaque) ? 0 : abt_item_space(page, ABT_HIKEY);
	Size		total = 0;
	Size		sofar = 0;
	Size		bestdiff = SIZE_MAX;
	bool		fill_left = leaf && AbtPageIsRightmost(opaque) && ist->newitup != NULL &&
		ist->info->fillfactor > 50;
	Size		target = cap * ist->info->fillfactor / 100;
	OffsetNumber best = InvalidOffsetNumber;
	OffsetNumber off;
	IndexTuple	itup;

	if (maxoff < first + 1)
		elog(ERROR, "abtree: page with %d items cannot be split", maxoff - first + 1);
	if (abt_value_grows_here(ist, page))
	{
		if (abt_plan_value_end_split(ist, page, plan, need, newoff))
			return;
		fill_left = true;
		target = cap * ABT_SINGLEVAL_FILLFACTOR / 100;
		abt_count(split_single_value);
	}

	for (off = first; off <= maxoff; off++)
		total += abt_item_space(page, off);
	plan->at_new = false;
	for (off = first; off <= maxoff; off++)
	{
		Size		left,
					right;

		if (off > first)
			sofar += abt_item_space(page, off - 1);
		if (leaf && ist->newitup != NULL && off == newoff)
		{
			/* at_new: items [first, off) and the new entry, its pivot */
			left = sofar + 2 * need + MAXALIGN(sizeof(AbtPivotAux));
			right = rfixed + total - sofar;
			if (left <= cap && right <= cap &&
				abt_split_diff(left, right, fill_left, target) <= bestdiff)
			{
				bestdiff = abt_split_diff(left, right, fill_left, target);
				best = off;
				plan->at_new = true;
			}
		}
		if (off == first)
			continue;
		left = sofar + (leaf ?
						MAXALIGN(ItemIdGetLength(PageGetItemId(page, off - 1)) + sizeof(AbtPivotAux)) +
						sizeof(ItemIdData) :
						abt_item_space(page, off));
		right = rfixed + total - sofar;
		if (!leaf)
			right = right - abt_item_space(page, off) + nokey;
		if (newoff < off)
			left += need;
		else
			right += need;
		if (left > cap || right > cap)
			continue;
		if (abt_split_diff(left, right, fill_left, target) <= bestdiff)
		{
			bestdiff = abt_split_diff(left, right, fill_left, target);
			best = off;
			plan->at_new = false;
		}
	}
	if (best == InvalidOffsetNumber)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("abtree: no split of a page of index \"%s\" leaves room for an item of %zu bytes",
						RelationGetRelationName(ist->rel), need)));
	plan->first = first;
	plan->splitoff = best;

	if (plan->at_new)
		plan->lefthikey = abt_make_pivot(ist->rel, ist->newitup, true, InvalidBlockNumber, 0);
	else if (AbtPageIsLeaf(opaque))
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

void
abt_page_add(Page page, IndexTuple itup, OffsetNumber off)
{
	if (PageAddItem(page, (Item) itup, IndexTupleSize(itup), off,
					false, false) == InvalidOffsetNumber)
		elog(PANIC, "abtree: failed to add item of %zu bytes", (Size) IndexTupleSize(itup));
}

/*
 * Fill the temporary page left with the left half of page, split before
 * splitoff with high key lefthikey and right sibling rightblk.  Redo of a
 * leaf's SPLIT record builds the left half with it too, from the page as
 * WAL left it (abt_redo_split): the same old items in the same order give
 * the same bytes, so the record need not carry the half's image.
 */
void
abt_split_fill_left(Page page, OffsetNumber splitoff, IndexTuple lefthikey,
					BlockNumber rightblk, Page left)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);

	/*
	 * Page flags that summarize the items are kept, then recomputed for the
	 * half: a not-valid entry may go either way.
	 */
	abt_init_page(left, opaque->level,
				  opaque->flags & (ABTP_LEAF | ABTP_HAS_INVALID | ABTP_HAS_POSTING));
	/* the halves keep the leaf's newest valid xid (abt_leaf_note_xid) */
	((PageHeader) left)->pd_prune_xid = ((PageHeader) page)->pd_prune_xid;

	/*
	 * The left half is the page, changed: with its LSN, the SPLIT record
	 * images it only where the page's first change after a checkpoint needs
	 * that (with none, every split would).
	 */
	PageSetLSN(left, PageGetLSN(page));
	AbtPageGetOpaque(left)->prev = opaque->prev;
	AbtPageGetOpaque(left)->next = rightblk;
	AbtPageGetOpaque(left)->sid = opaque->sid + 1;
	abt_page_add(left, lefthikey, ABT_HIKEY);
	for (OffsetNumber off = AbtFirstDataOffset(opaque); off < splitoff; off++)
		abt_page_add(left, (IndexTuple) PageGetItem(page, PageGetItemId(page, off)),
					 InvalidOffsetNumber);
	if (AbtPageIsLeaf(opaque))
		abt_leaf_update_invalid_flag(left);
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
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	bool		leaf = AbtPageIsLeaf(opaque);
	OffsetNumber off;

	abt_split_fill_left(page, plan->splitoff, plan->lefthikey, rightblk, left);
	abt_init_page(right, opaque->level,
				  opaque->flags & (ABTP_LEAF | ABTP_HAS_INVALID | ABTP_HAS_POSTING));
	((PageHeader) right)->pd_prune_xid = ((PageHeader) page)->pd_prune_xid;
	/* right's prev is set by the caller, who knows the left block */
	AbtPageGetOpaque(right)->next = opaque->next;
	if (!AbtPageIsRightmost(opaque))
		abt_page_add(right, (IndexTuple) PageGetItem(page, PageGetItemId(page, ABT_HIKEY)),
					 ABT_HIKEY);
	for (off = plan->splitoff; off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		/* the same downlink, without its key: it keeps weight and RID */
		if (!leaf && off == plan->splitoff)
			itup = abt_make_nokey_pivot(AbtDownlinkGetChild(itup),
										AbtPivotGetAux(itup)->weight,
										AbtPivotGetAux(itup)->rid);
		abt_page_add(right, itup, InvalidOffsetNumber);
	}
	if (leaf)
		abt_leaf_update_invalid_flag(right);
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
 * The pages above the parent of path[i], parent side first, for its SPLIT
 * record (abt_split_logs_path; abt_lock_split_chain locked them up to the
 * root).  Returns how many; makes room for them in the record.
 */
static int
abt_split_pages_above(AbtInsertState *ist, int i, Buffer *up)
{
	Buffer		top = ist->path[i - 1].buf;
	int			nup = 0;

	if (!abt_split_logs_path(ist))
		return 0;
	for (int k = i - 2; k >= 0; k--)
		up[nup++] = top = ist->path[k].buf;
	if (!AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(top))))
		elog(ERROR, "abtree: split of block %u without the path to the root held",
			 BufferGetBlockNumber(ist->path[i].buf));
	abt_xlog_reserve(ist->rel, ABT_SPLIT_FIRST_UP + nup, 2);
	return nup;
}

/*
 * Split path[i]; its parent path[i - 1] has room for the new downlink.  One
 * WAL record (SPLIT: the halves, the parent's new downlink and the old
 * right sibling's left-link): the split and the downlink insert are atomic.
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
	Buffer		up[ABT_MAX_HEIGHT];
	int			nup;
	int			nbufs = 0;
	bool		goright;

	/* the climb locked the right sibling before the parent (lock order) */
	if (!AbtPageIsRightmost(opaque))
	{
		sbuf = ist->path[i].sib;
		ist->path[i].sib = InvalidBuffer;
		if (!BufferIsValid(sbuf) || BufferGetBlockNumber(sbuf) != opaque->next)
			elog(ERROR, "abtree: right sibling of block %u not locked for its split",
				 BufferGetBlockNumber(buf));
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
	nup = abt_split_pages_above(ist, i, up);

	START_CRIT_SECTION();
	memcpy(page, left, BLCKSZ);
	memcpy(BufferGetPage(rbuf), right, BLCKSZ);
	if (BufferIsValid(sbuf))
		AbtPageGetOpaque(BufferGetPage(sbuf))->prev = BufferGetBlockNumber(rbuf);
	daux->weight = wl;
	daux->rid++;
	/* a new downlink; see abt_pass_add_intact for why its RID is harmless */
	AbtPivotGetAux(sep)->rid = daux->rid;
	abt_page_add(parent, sep, OffsetNumberNext(pe->off));
	AbtPageGetOpaque(parent)->sid++;
	bufs[nbufs++] = pe->buf;
	bufs[nbufs++] = buf;
	bufs[nbufs++] = rbuf;
	if (BufferIsValid(sbuf))
		bufs[nbufs++] = sbuf;
	for (int b = 0; b < nbufs; b++)
		MarkBufferDirty(bufs[b]);
	for (int b = 0; b < nup; b++)
		MarkBufferDirty(up[b]);
	if (RelationNeedsWAL(rel))
		abt_xlog_split(pe->buf, pe->off, buf, plan->splitoff, rbuf, sbuf, up, nup,
					   ist->info->weighted);
	END_CRIT_SECTION();

	/* both downlinks were recomputed: so are their versions (parent held) */
	if (!ist->info->partitioned)
	{
		abt_versions_rebuild(rel, BufferGetBlockNumber(buf), page, ist->info->weighted);
		abt_versions_rebuild(rel, BufferGetBlockNumber(rbuf), BufferGetPage(rbuf), ist->info->weighted);
	}

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
	Buffer		metabuf = ReadBuffer(rel, ist->key->meta);
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
	first = abt_make_nokey_pivot(BufferGetBlockNumber(buf), wl, 0);
	second = abt_make_pivot(rel, plan->lefthikey, false, BufferGetBlockNumber(rbuf), wr);

	START_CRIT_SECTION();
	memcpy(page, left, BLCKSZ);
	memcpy(BufferGetPage(rbuf), right, BLCKSZ);
	abt_init_page(newroot, level + 1, ABTP_ROOT);
	if (ist->info->partitioned)
		((PageHeader) newroot)->pd_prune_xid = ((PageHeader) left)->pd_prune_xid;
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

	if (!ist->info->partitioned)
	{
		abt_versions_rebuild(rel, BufferGetBlockNumber(buf), page, ist->info->weighted);
		abt_versions_rebuild(rel, BufferGetBlockNumber(rbuf), BufferGetPage(rbuf), ist->info->weighted);
	}

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

	/* where the item goes: its search position, or beside our downlink */
	abt_plan_split(ist, page, &plan, need,
				   AbtPageIsLeaf(AbtPageGetOpaque(page)) ?
				   abt_binsrch_leaf(ist->rel, ist->key, page) :
				   ist->path[i].off);
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

/*
 * The leaf lacks room: lock, bottom-up, the pages that may have to split
 * and the first ancestor that surely will not (or the root), each page's
 * right sibling before its parent, and then, for a logged abtree, the
 * rest of the way up to the root: each SPLIT record names the pages above
 * its parent (abt_split_page).  Fills ist->path root first.  Returns
 * false, with nothing locked, if the stack does not reach the root any
 * more (the root split since the descent); the caller starts over.
 */
static bool
abt_lock_split_chain(AbtInsertState *ist, AbtStack *stack, Buffer leaf)
{
	AbtPathEntry up[ABT_MAX_HEIGHT];
	int			n = 1;
	int			level_index = stack->depth - 1;
	int			k;
	bool		may_split = true;
	bool		to_root = abt_split_logs_path(ist);

	up[0].buf = leaf;
	up[0].off = InvalidOffsetNumber;
	up[0].sib = InvalidBuffer;
	for (;;)
	{
		AbtPageOpaque opaque = AbtPageGetOpaque(BufferGetPage(up[n - 1].buf));
		Buffer		pbuf;
		OffsetNumber off;

		if (may_split && !AbtPageIsRightmost(opaque))
		{
			up[n - 1].sib = abt_read_hinted(ist->rel, opaque->next);
			LockBuffer(up[n - 1].sib, BUFFER_LOCK_EXCLUSIVE);
			abt_check_page(ist->rel, up[n - 1].sib);
		}
		if (AbtPageIsRoot(opaque))
			break;
		pbuf = InvalidBuffer;
		if (level_index >= 0 && n < ABT_MAX_HEIGHT)
			pbuf = abt_lock_parent(ist->rel, stack, level_index--,
								   BufferGetBlockNumber(up[n - 1].buf),
								   BUFFER_LOCK_EXCLUSIVE, &off);
		if (!BufferIsValid(pbuf))
		{
			for (k = 0; k < n; k++)
			{
				if (BufferIsValid(up[k].sib))
					UnlockReleaseBuffer(up[k].sib);
				UnlockReleaseBuffer(up[k].buf);
			}
			return false;
		}
		up[n].buf = pbuf;
		up[n].off = off;
		up[n].sib = InvalidBuffer;
		n++;
		if (may_split &&
			PageGetExactFreeSpace(BufferGetPage(pbuf)) >= ist->info->max_pivot_size)
		{
			may_split = false;
			if (!to_root)
				break;
		}
	}
	for (k = 0; k < n; k++)
		ist->path[k] = up[n - 1 - k];
	ist->depth = n;
	return true;
}

/* Add the leaf tuple at its place on the exclusively locked leaf: where. */
static OffsetNumber
abt_add_to_leaf(Relation rel, AbtKey *key, Buffer buf, IndexTuple itup)
{
	Page		page = BufferGetPage(buf);
	OffsetNumber off = abt_binsrch_leaf(rel, key, page);

	START_CRIT_SECTION();
	abt_page_add(page, itup, off);
	AbtPageGetOpaque(page)->sid++;
	if (!TransactionIdIsValid(abt_leaf_xmin(itup)))
		AbtPageGetOpaque(page)->flags |= ABTP_HAS_INVALID;
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
		abt_xlog_insert_leaf(buf, off, itup);
	END_CRIT_SECTION();
	return off;
}

/*
 * path_exclusive, and the leaf has room: lock the path from the leaf's
 * parent to the root exclusively, bottom-up, and put the entry in valid
 * with its weight added on the path, in one critical section and one
 * INSERT_VALID record (README, "One record per insert").  False, with the
 * leaf let go, if the root split since the descent.
 */
static bool
abt_insert_one_record(AbtInsertState *ist, AbtStack *stack, Buffer leaf, IndexTuple itup)
{
	Buffer		path[ABT_MAX_HEIGHT];
	OffsetNumber offs[ABT_MAX_HEIGHT];
	int			n = abt_lock_path_to_root(ist->rel, stack, leaf, path, offs);

	if (n < 0)
	{
		UnlockReleaseBuffer(leaf);
		return false;
	}
	abt_insert_valid(ist->rel, leaf, abt_binsrch_leaf(ist->rel, ist->key, BufferGetPage(leaf)),
					 itup, path, n, offs, ist->w);
	for (int k = 0; k < n; k++)
		UnlockReleaseBuffer(path[k]);
	UnlockReleaseBuffer(leaf);
	return true;
}

/*
 * Phase 1 of an insert: put the (not yet valid) leaf tuple in its leaf,
 * splitting bottom-up as needed.  Splits recompute the weights of the
 * downlinks they make from the pages' contents, where the new tuple
 * counts nothing yet.  Without a split, hint gets the way there and the
 * entry's place; after one, nothing (the pages' SIDs moved anyway).
 */
static void
abt_place_entry(AbtInsertState *ist, IndexTuple itup, AbtPosHint *hint)
{
	Relation	rel = ist->rel;
	Size		need = MAXALIGN(IndexTupleSize(itup)) + sizeof(ItemIdData);

	Assert(ist->newitup == itup);
	for (;;)
	{
		AbtStack	stack;
		Buffer		leaf = abt_search_leaf(rel, ist->key, &stack);
		int			i;

		if (!BufferIsValid(leaf))
		{
			leaf = abt_create_first_root(rel, ist->key->meta);
			if (BufferIsValid(leaf))
				UnlockReleaseBuffer(leaf);
			continue;
		}
		/* a full leaf folds equal entries first, if it may (abtposting.c) */
		if (PageGetExactFreeSpace(BufferGetPage(leaf)) < need && ist->heaprel != NULL)
			(void) abt_fold_leaf(rel, ist->heaprel, leaf, need);
		if (PageGetExactFreeSpace(BufferGetPage(leaf)) >= need && ist->one_record)
		{
			if ((ist->placed_valid = abt_insert_one_record(ist, &stack, leaf, itup)))
				return;
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		if (PageGetExactFreeSpace(BufferGetPage(leaf)) >= need)
		{
			hint->leafoff = abt_add_to_leaf(rel, ist->key, leaf, itup);
			hint->leaf = BufferGetBlockNumber(leaf);
			hint->leafsid = AbtPageGetOpaque(BufferGetPage(leaf))->sid;
			hint->stack = stack;
			UnlockReleaseBuffer(leaf);
			return;
		}
		if (abt_lock_split_chain(ist, &stack, leaf))
		{
			i = abt_make_room(ist, ist->depth - 1, need);
			(void) abt_add_to_leaf(rel, ist->key, ist->path[i].buf, itup);
			hint->leaf = InvalidBlockNumber;
			hint->stack.depth = 0;
			abt_release_range(ist, 0, ist->depth);
			ist->depth = 0;
			return;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Put a leaf tuple into the tree key->meta names, splitting as needed, and
 * nothing else: pbtree's insert (its entries are valid from the start and
 * its downlink weights are not maintained).
 */
void
abt_insert_entry(Relation rel, AbtKey *key, IndexTuple itup)
{
	AbtInsertState ist;
	AbtPosHint	hint;

	ist.rel = rel;
	ist.info = abt_index_info(rel);
	ist.heaprel = NULL;			/* pbtree never folds */
	ist.key = key;
	ist.newitup = itup;
	ist.depth = 0;
	ist.one_record = false;
	ist.w = 0;
	ist.placed_valid = false;
	abt_place_entry(&ist, itup, &hint);
}

/*
 * The paper's baseline for weight maintenance: lock the whole path from the
 * leaf up to the root exclusively, add the weight everywhere, mark the
 * entry (key, not valid, in the tree) valid, let go.  Every insert holds
 * the root exclusively.  Also batched validation's way for one entry.
 */
void
abt_validate_entry(Relation rel, AbtKey *key, uint64 w)
{
	for (;;)
	{
		AbtStack	stack;
		Buffer		path[ABT_MAX_HEIGHT];
		OffsetNumber offs[ABT_MAX_HEIGHT];
		Buffer		leaf = abt_search_leaf(rel, key, &stack);
		int			n = abt_lock_path_to_root(rel, &stack, leaf, path, offs);
		OffsetNumber off;
		int			k;

		if (n < 0)
		{
			/* a root split since the descent */
			UnlockReleaseBuffer(leaf);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		off = abt_find_leaf_entry(rel, key, BufferGetPage(leaf));
		if (off == InvalidOffsetNumber)
			elog(ERROR, "abtree: new entry not found in index \"%s\"",
				 RelationGetRelationName(rel));
		/* adds and validity in one critical section with their record */
		abt_mark_valid(rel, leaf, off, path, n, offs, w);
		for (k = 0; k < n; k++)
			UnlockReleaseBuffer(path[k]);
		UnlockReleaseBuffer(leaf);
		return;
	}
}

bool
abtinsert(Relation rel, Datum *values, bool *isnull, ItemPointer ht_ctid,
		  Relation heapRel, IndexUniqueCheck checkUnique,
		  bool indexUnchanged, IndexInfo *indexInfo)
{
	AbtInsertState ist;
	IndexTuple	itup;
	AbtKey		key;
	AbtPosHint	hint;
	uint64		w;

	abt_require_preload();
	ist.rel = rel;
	ist.info = abt_index_info(rel);
	/* after crash recovery: the repair reaches standbys with our first insert */
	abt_recovery_check(rel);
	/* not valid (InvalidTransactionId) until its weight is everywhere above */
	itup = abt_form_leaf(rel, ist.info, values, isnull, ht_ctid, InvalidTransactionId);
	abt_key_from_tuple(rel, &key, itup, false);
	/* weighted indexes never fold: each entry has its own weight */
	ist.heaprel = (ist.info->deduplicate && !ist.info->weighted && !ist.info->partitioned) ?
		heapRel : NULL;
	ist.key = &key;
	ist.newitup = itup;
	ist.depth = 0;
	w = abt_leaf_weight(itup, ist.info->weighted);
	ist.one_record = abt_weight_protocol == ABT_PROTOCOL_PATH_EXCLUSIVE;
	ist.w = w;
	ist.placed_valid = false;

	abt_place_entry(&ist, itup, &hint);
	if (ist.placed_valid)
		;						/* one record did it all */
	else if (abt_weight_protocol == ABT_PROTOCOL_PATH_EXCLUSIVE ||
			 (abt_weight_protocol == ABT_PROTOCOL_BATCHED && IsParallelWorker()))
		abt_validate_entry(rel, &key, w);
	else if (abt_weight_protocol == ABT_PROTOCOL_BATCHED)
		abt_batch_add(rel, itup, w, &hint); /* valid with others, later */
	else
		abt_weight_pass(rel, &key, w, &hint);
	pfree(itup);
	return false;
}
