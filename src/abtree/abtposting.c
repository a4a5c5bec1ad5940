/*-------------------------------------------------------------------------
 *
 * abtposting.c
 *	  Posting tuples: one leaf entry for the heap rows whose index columns
 *	  are the same bytes (issue 22; src/abtree/README, "Posting tuples").
 *
 * The bulk build folds runs of such entries into posting tuples as they
 * come out of its sort (abt_dedup_*); an insert folds a full leaf's runs
 * with the same machinery before it splits (abt_fold_leaf); VACUUM takes
 * dead TIDs out of them (abt_posting_without).  The layout is in abtree.h.
 * Byte equality, not the opclass's equality, decides what shares a tuple:
 * then a posting tuple stands for its rows exactly as their own entries
 * would, whatever the type (numeric's 1.0 and 1.00, nondeterministic
 * collations), the INCLUDE columns included, and index-only scans return
 * the same values.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/transam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/*
 * The largest posting tuple: half the largest item, as nbtree caps its
 * posting lists, so that a page holds several and a split has a choice.
 */
#define ABT_POSTING_MAX_SIZE	MAXALIGN_DOWN(ABT_MAX_ITEM_SIZE / 2)

/*
 * The fewest rows folded into one.  Two entries of an int4 key take 40
 * bytes with their line pointers, their posting tuple 36, while a leaf
 * with any posting tuple loses the draws' direct indexing (abtdraw.c):
 * the few duplicates of a column of nearly unique values would put one on
 * nearly every leaf.  Four rows take 48 bytes instead of 80.
 */
#define ABT_POSTING_MIN_TIDS	4

/*
 * A posting tuple of the columns of base (a plain entry of an unweighted
 * index, or a posting tuple) and the heap TIDs tids[0..n), n >= 1,
 * ascending, placed at (place, 0), with base's xid: frozen from a build,
 * the rows' own transaction's from a fold on insert.
 */
IndexTuple
abt_form_posting(Relation rel, IndexTuple base, BlockNumber place, ItemPointer tids, int n)
{
	Size		keyend = abt_leaf_key_size(rel, base);
	Size		size = MAXALIGN(keyend + ABT_POSTING_TRAILER(n) + sizeof(TransactionId));
	IndexTuple	itup = palloc0(size);
	char	   *p = (char *) itup + size - sizeof(TransactionId) - ABT_POSTING_TRAILER(n);
	uint16		n16 = (uint16) n;
	TransactionId xid = abt_leaf_xmin(base);

	Assert(n >= 1 && n <= PG_UINT16_MAX);
	Assert(TransactionIdIsValid(xid));
	memcpy(itup, base, keyend);
	itup->t_info = (base->t_info & ~INDEX_SIZE_MASK) | ABT_LEAF_POSTING | size;
	ItemPointerSetBlockNumber(&itup->t_tid, place);
	ItemPointerSetOffsetNumber(&itup->t_tid, InvalidOffsetNumber);
	memcpy(p, tids, n * sizeof(ItemPointerData));
	p += n * sizeof(ItemPointerData);
	memcpy(p, &n16, sizeof(uint16));
	memcpy(p + sizeof(uint16), &xid, sizeof(TransactionId));
	return itup;
}

/*
 * The posting tuple itup less the TIDs whose dead[i] is set, as a new
 * tuple at the same place (abtree.h: the order does not move).  *nleft is
 * their number; NULL if none is left.
 */
IndexTuple
abt_posting_without(Relation rel, IndexTuple itup, const bool *dead, int *nleft)
{
	int			n = abt_posting_count(itup);
	ItemPointerData *left = palloc(sizeof(ItemPointerData) * n);
	IndexTuple	result = NULL;
	int			m = 0;

	for (int i = 0; i < n; i++)
		if (!dead[i])
			abt_leaf_tid(itup, n, i, &left[m++]);
	*nleft = m;
	if (m > 0)
		result = abt_form_posting(rel, itup, ItemPointerGetBlockNumberNoCheck(&itup->t_tid),
								  left, m);
	pfree(left);
	return result;
}

/*
 * Do two plain entries of an unweighted index hold the same column bytes
 * (and the same validity)?  Everything after the heap TID is compared:
 * index_form_tuple and abt_form_leaf zero the padding.
 */
bool
abt_leaf_same_columns(IndexTuple a, IndexTuple b)
{
	Size		size = IndexTupleSize(a);

	if (a->t_info != b->t_info || AbtLeafIsPosting(a))
		return false;
	return memcmp((char *) a + sizeof(IndexTupleData), (char *) b + sizeof(IndexTupleData),
				  size - sizeof(IndexTupleData)) == 0;
}

/*
 * The build's folding of equal entries.  Entries arrive in the sort's
 * order, (columns, heap TID), so equal columns come as one run, its TIDs
 * ascending.  The first entry of a run is kept (base) with the run's TIDs;
 * when the run ends or fills a tuple (ABT_POSTING_MAX_SIZE), it goes out as
 * one posting tuple, or as plain entries if it has fewer than
 * ABT_POSTING_MIN_TIDS.
 *
 * A posting tuple's place, (block of its first TID, 0), must sort above the
 * entry written before it (abt_dedup_place_ok).  That only fails if that
 * entry's key compares equal and its place or TID is in the same block: a
 * run cut by a full tuple, or columns that compare equal without being the
 * same bytes (numeric 1.0 and 1.00; INCLUDE columns).  Then the run's TIDs
 * in that block go out as plain entries, and the rest as a posting tuple
 * placed at the next block.
 */
struct AbtDedup
{
	Relation	rel;
	IndexTuple	base;			/* the run's first entry, or NULL */
	bool		base_owned;		/* ours to free (else the sort's: one call) */
	int			maxtids;		/* TIDs one tuple of base's columns takes, or -1 */
	int			ntids;
	int			nout;			/* tuples to write, in order */
	int			nextout;
	IndexTuple	out[ABT_MAX_TIDS_PER_PAGE + 1];
	bool		out_owned[ABT_MAX_TIDS_PER_PAGE + 1];
	ItemPointerData tids[ABT_MAX_TIDS_PER_PAGE];
};

AbtDedup *
abt_dedup_begin(Relation rel)
{
	AbtDedup   *d = palloc0(sizeof(AbtDedup));

	d->rel = rel;
	return d;
}

static void
abt_dedup_queue(AbtDedup *d, IndexTuple itup, bool owned)
{
	Assert(d->nout < lengthof(d->out));
	d->out[d->nout] = itup;
	d->out_owned[d->nout++] = owned;
}

/* How many TIDs a posting tuple of base's columns holds (1: none fits). */
static int
abt_dedup_capacity(Relation rel, IndexTuple base)
{
	int			room = (int) ABT_POSTING_MAX_SIZE - (int) sizeof(TransactionId) -
		(int) sizeof(uint16) - (int) MAXALIGN(abt_leaf_key_size(rel, base));

	return Max(Min(room / (int) sizeof(ItemPointerData), ABT_MAX_TIDS_PER_PAGE), 1);
}

/*
 * Does posting sort above prev, the entry written before it (NULL: none)?
 * Without a comparison when prev's TID or place is in an earlier block.
 */
static bool
abt_dedup_place_ok(Relation rel, IndexTuple prev, IndexTuple posting)
{
	if (prev == NULL ||
		ItemPointerGetBlockNumberNoCheck(&prev->t_tid) <
		ItemPointerGetBlockNumberNoCheck(&posting->t_tid))
		return true;
	return abt_compare_tuples(rel, prev, false, posting, false) < 0;
}

/* The entry of base's columns for heap TID tid, a plain one. */
static IndexTuple
abt_dedup_plain(IndexTuple base, ItemPointer tid)
{
	IndexTuple	itup = CopyIndexTuple(base);

	itup->t_tid = *tid;
	return itup;
}

/* The run so far goes out after prev; the run is empty after. */
static void
abt_dedup_flush(AbtDedup *d, IndexTuple prev)
{
	IndexTuple	posting = NULL;
	int			first = 0;		/* the posting tuple's first TID */
	int			nplain;

	if (d->ntids >= ABT_POSTING_MIN_TIDS)
	{
		posting = abt_form_posting(d->rel, d->base, ItemPointerGetBlockNumber(&d->tids[0]),
								   d->tids, d->ntids);
		if (!abt_dedup_place_ok(d->rel, prev, posting))
		{
			/* the first block's TIDs as plain entries, a later place */
			BlockNumber block = ItemPointerGetBlockNumber(&d->tids[0]);

			pfree(posting);
			posting = NULL;
			while (first < d->ntids && ItemPointerGetBlockNumber(&d->tids[first]) == block)
				first++;
			if (d->ntids - first >= ABT_POSTING_MIN_TIDS)
				posting = abt_form_posting(d->rel, d->base,
										   ItemPointerGetBlockNumber(&d->tids[first]),
										   &d->tids[first], d->ntids - first);
		}
	}
	/* the TIDs no posting tuple takes, as plain entries: the base first */
	nplain = posting ? first : d->ntids;
	for (int i = 0; i < nplain; i++)
	{
		if (i == 0)
			abt_dedup_queue(d, d->base, d->base_owned);
		else
			abt_dedup_queue(d, abt_dedup_plain(d->base, &d->tids[i]), true);
	}
	if (posting)
	{
		abt_dedup_queue(d, posting, true);
		if (nplain == 0 && d->base_owned)
			pfree(d->base);
	}
	d->base = NULL;
	d->ntids = 0;
}

/*
 * Take the next entry leaf (ours to free if owned; else the caller's, valid
 * through the next call only); prev is the last entry written.  What is
 * ready to be written then comes from abt_dedup_next.
 */
void
abt_dedup_add(AbtDedup *d, IndexTuple leaf, bool owned, IndexTuple prev)
{
	if (d->base != NULL && abt_leaf_same_columns(d->base, leaf))
	{
		/*
		 * Once it is a run: its capacity (no deform per unique key), and a
		 * base of its own, which must outlive the calls the run lasts.
		 */
		if (d->maxtids < 0)
		{
			d->maxtids = abt_dedup_capacity(d->rel, d->base);
			if (!d->base_owned)
			{
				d->base = CopyIndexTuple(d->base);
				d->base_owned = true;
			}
		}
		if (d->ntids < d->maxtids)
		{
			d->tids[d->ntids++] = leaf->t_tid;
			if (owned)
				pfree(leaf);
			return;
		}
	}
	if (d->base != NULL)
		abt_dedup_flush(d, prev);
	d->base = leaf;
	d->base_owned = owned;
	d->tids[0] = leaf->t_tid;
	d->ntids = 1;
	d->maxtids = -1;
}

/* The next tuple to write, in order, and whether the caller frees it; or NULL. */
IndexTuple
abt_dedup_next(AbtDedup *d, bool *owned)
{
	IndexTuple	itup;

	if (d->nextout == d->nout)
	{
		d->nout = d->nextout = 0;
		return NULL;
	}
	itup = d->out[d->nextout];
	*owned = d->out_owned[d->nextout++];
	return itup;
}

/* No more entries: the last run goes out too, after prev. */
void
abt_dedup_finish(AbtDedup *d, IndexTuple prev)
{
	if (d->base != NULL)
		abt_dedup_flush(d, prev);
}

/*
 * Folding on insert (src/abtree/README, "Posting tuples").  An insert that
 * finds its leaf full first folds the leaf's runs of equal entries, as
 * nbtree deduplicates before it splits.  Only valid entries fold, and only
 * with entries of the same xid: a posting tuple has one xid for all its
 * rows, which weigh, for every snapshot, what their own entries weighed.
 * An entry not yet valid weighs nothing and would gain weight no downlink
 * has.  An xid older than every snapshot is frozen first (abt_fold_xid),
 * so that the rows of many old transactions share a tuple.
 */
static TransactionId
abt_fold_xid(IndexTuple itup, GlobalVisState *vis, bool any_xid)
{
	TransactionId xid;

	if (AbtLeafIsPosting(itup))
		return InvalidTransactionId;
	xid = abt_leaf_xmin(itup);
	if (TransactionIdIsNormal(xid) && GlobalVisTestIsRemovableXid(vis, xid))
		return FrozenTransactionId;
	return any_xid || xid == FrozenTransactionId ? xid : InvalidTransactionId;
}

/* Two plain entries of an unweighted index with the same column bytes */
static bool
abt_leaf_same_key(IndexTuple a, IndexTuple b)
{
	Size		size = IndexTupleSize(a);

	return a->t_info == b->t_info &&
		memcmp((char *) a + sizeof(IndexTupleData), (char *) b + sizeof(IndexTupleData),
			   size - sizeof(IndexTupleData) - sizeof(TransactionId)) == 0;
}

/*
 * The entries from off on that fold or stay together: one entry that does
 * not fold (not valid, or a posting tuple already), or a run of equal
 * columns and one fold xid (*xid).  *fold says whether the run folds: a
 * frozen one does; one of a newer xid only from ABT_FOLD_MIN_RUN_NEW
 * entries, since its posting tuples will not take the later rows of its
 * key (a tuple of one xid does not fold again), so short ones wait until
 * their xid is old enough to fold with the others.  Returns the number.
 */
#define ABT_FOLD_MIN_RUN_NEW	16

static int
abt_fold_run(Page page, OffsetNumber off, GlobalVisState *vis, bool any_xid,
			 TransactionId *xid, bool *fold)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	IndexTuple	base = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
	int			n = 1;

	*xid = abt_fold_xid(base, vis, any_xid);
	*fold = false;
	if (!TransactionIdIsValid(*xid))
		return 1;
	while (off + n <= maxoff)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off + n));

		if (abt_fold_xid(itup, vis, any_xid) != *xid || !abt_leaf_same_key(base, itup))
			break;
		n++;
	}
	*fold = *xid == FrozenTransactionId || n >= ABT_FOLD_MIN_RUN_NEW;
	return n;
}

/*
 * The bytes folding page would free at most: each run that folds, of at
 * least ABT_POSTING_MIN_TIDS entries, becomes one tuple (a cheap look
 * before any tuple is built).
 */
static Size
abt_fold_gain(Page page, GlobalVisState *vis, bool any_xid)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	Size		gain = 0;
	int			n;

	for (OffsetNumber off = AbtFirstDataOffset(AbtPageGetOpaque(page)); off <= maxoff; off += n)
	{
		TransactionId xid;
		bool		fold;
		IndexTuple	base = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		Size		each = MAXALIGN(IndexTupleSize(base)) + sizeof(ItemIdData);
		Size		posting;

		n = abt_fold_run(page, off, vis, any_xid, &xid, &fold);
		if (!fold || n < ABT_POSTING_MIN_TIDS)
			continue;
		posting = MAXALIGN(IndexTupleSize(base) + ABT_POSTING_TRAILER(n)) + sizeof(ItemIdData);
		if (n * each > posting)
			gain += n * each - posting;
	}
	return gain;
}

/* Move what d has ready onto page; *prev is the last entry written. */
static void
abt_fold_drain(AbtDedup *d, Page page, IndexTuple *prev)
{
	IndexTuple	itup;
	bool		owned;

	while ((itup = abt_dedup_next(d, &owned)) != NULL)
	{
		if (PageAddItem(page, (Item) itup, IndexTupleSize(itup), InvalidOffsetNumber,
						false, false) == InvalidOffsetNumber)
			elog(ERROR, "abtree: folded entries do not fit their leaf");
		*prev = itup;
	}
}

/*
 * page with its runs of valid entries folded, as a new page: the high key,
 * then every entry in order, valid ones through the build's folding
 * (abt_dedup_*), the others as they are.
 */
static Page
abt_fold_page(Relation rel, Page page, GlobalVisState *vis, bool any_xid)
{
	Page		folded = PageGetTempPageCopySpecial(page);
	OffsetNumber off = ABT_HIKEY;
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	AbtDedup   *d = abt_dedup_begin(rel);
	IndexTuple	prev = NULL;

	if (!AbtPageIsRightmost(AbtPageGetOpaque(page)))
	{
		ItemId		hk = PageGetItemId(page, ABT_HIKEY);

		if (PageAddItem(folded, PageGetItem(page, hk), ItemIdGetLength(hk), ABT_HIKEY,
						false, false) != ABT_HIKEY)
			elog(ERROR, "abtree: could not copy a high key");
		off = OffsetNumberNext(ABT_HIKEY);
	}

	/*
	 * A posting tuple sorts at the block of its first TID, offset 0: below
	 * that TID's own entry.  Where a run starts the page, that place must
	 * stay above the left neighbour's high key, which is only known to be
	 * below the page's first entry; taking that entry as the one before
	 * keeps the first block's TIDs plain there (abt_dedup_place_ok).
	 */
	if (off <= maxoff)
		prev = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
	while (off <= maxoff)
	{
		TransactionId xid;
		bool		fold;
		int			n = abt_fold_run(page, off, vis, any_xid, &xid, &fold);

		for (int k = 0; k < n; k++, off++)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
			IndexTuple	copy;

			if (!fold)
			{
				if (PageAddItem(folded, (Item) itup, IndexTupleSize(itup), InvalidOffsetNumber,
								false, false) == InvalidOffsetNumber)
					elog(ERROR, "abtree: folded entries do not fit their leaf");
				prev = itup;
				continue;
			}
			/* the run's columns and xid are the same bytes now */
			copy = CopyIndexTuple(itup);
			abt_set_leaf_xmin(copy, xid);
			abt_dedup_add(d, copy, true, prev);
			abt_fold_drain(d, folded, &prev);
		}
		/* the run goes out before the next */
		abt_dedup_finish(d, prev);
		abt_fold_drain(d, folded, &prev);
	}
	return folded;
}

/*
 * Fold the leaf buf (locked exclusively; an unweighted, non-pbtree index
 * whose deduplicate_items is on) if that leaves at least need bytes and
 * ABT_FOLD_MIN_FREE free; heaprel is the table, whose horizon decides which
 * xids every snapshot sees.  Returns whether the leaf changed.  The leaf's
 * weight stays, for every snapshot: each posting tuple weighs the valid
 * entries of one xid it replaces, so no downlink and no version changes.
 * Logged as a full-page image.
 */
#define ABT_FOLD_MIN_FREE	(BLCKSZ / 16)

bool
abt_fold_leaf(Relation rel, Relation heaprel, Buffer buf, Size need)
{
	Page		page = BufferGetPage(buf);
	GlobalVisState *vis = GlobalVisTestFor(heaprel);
	Size		want = Max(need, ABT_FOLD_MIN_FREE);
	MemoryContext cxt;
	MemoryContext old;
	Page		folded = NULL;

	/*
	 * First the entries every snapshot sees, which fold across transactions
	 * into frozen tuples; only if that leaves too little room, also runs of
	 * one newer xid (a transaction that loads many equal rows at once).
	 */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "abtree fold", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	for (int any_xid = 0; any_xid <= 1 && folded == NULL; any_xid++)
	{
		if (PageGetExactFreeSpace(page) + abt_fold_gain(page, vis, any_xid) < want)
			continue;
		folded = abt_fold_page(rel, page, vis, any_xid);
		if (PageGetExactFreeSpace(folded) < want)
			folded = NULL;
	}
	if (folded != NULL)
	{
		/* the header's LSN and newest valid xid (mvs_leaf_all_visible) stay */
		PageSetLSN(folded, PageGetLSN(page));
		((PageHeader) folded)->pd_prune_xid = ((PageHeader) page)->pd_prune_xid;
		AbtPageGetOpaque(folded)->flags |= ABTP_HAS_POSTING;
		AbtPageGetOpaque(folded)->sid++;	/* its items moved */
		START_CRIT_SECTION();
		memcpy(page, folded, BLCKSZ);
		MarkBufferDirty(buf);
		if (RelationNeedsWAL(rel))
			log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
		abt_count(leaf_folds);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return folded != NULL;
}
