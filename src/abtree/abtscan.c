/*-------------------------------------------------------------------------
 *
 * abtscan.c
 *	  Ordered scans of an abtree: amgettuple in both directions,
 *	  amgetbitmap, index-only scans.
 *
 * A scan positions itself with the keys on the first index column, reads
 * one leaf page at a time under a share lock, copies the matching items,
 * and keeps only a pin while it returns them (so that VACUUM, which needs a
 * cleanup lock to remove entries, cannot pull TIDs from under it).  Keys on
 * the first column also tell when no later item can match ("stop"); keys
 * on other columns only filter.  Moving right follows the right-link saved
 * when the page was read, moving left walks right from the saved left-link
 * until it finds the page that links to where the scan was (README).
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

typedef struct AbtScanItem
{
	ItemPointerData heaptid;
	uint16		tupoff;			/* offset of the tuple copy in the workspace */
} AbtScanItem;

typedef struct AbtScanOpaqueData
{
	bool		qual_ok;		/* false if some key can never be true */
	bool		started;
	ScanKey		eqkey;			/* first-column key used for "=" stops */
	Buffer		buf;			/* pinned current leaf, or InvalidBuffer */
	BlockNumber curblk;
	BlockNumber prevblk;		/* links of curblk when it was read */
	BlockNumber nextblk;
	bool		more_left;		/* may items to the left still match? */
	bool		more_right;
	int			nitems;
	int			curitem;
	AbtScanItem items[ABT_MAX_TIDS_PER_PAGE];	/* posting tuples: one per TID */
	char	   *workspace;		/* copies of the items, for index-only scans */
	Size		workused;
	BlockNumber meta;			/* the tree: ABT_METAPAGE or a pbtree partition */
} AbtScanOpaqueData;

typedef AbtScanOpaqueData *AbtScanOpaque;

/* ---- descending (readers: one share lock at a time) ---- */

/*
 * The root, locked in the given mode, or InvalidBuffer for an empty tree.
 * The root's block number is cached per backend (rd_amcache), as nbtree
 * caches its metapage, and checked against the ROOT flag of the locked
 * page: the metapage is read only when the root has moved.  Pages are
 * never deleted, so the cached block is always one of ours.
 */
Buffer
abt_get_root(Relation rel, BlockNumber metablk, int access)
{
	AbtIndexInfo *info = abt_index_info(rel);
	bool		refreshed = false;
	BlockNumber root = metablk == ABT_METAPAGE ? info->cached_root : InvalidBlockNumber;

	for (;;)
	{
		Buffer		buf;

		if (root == InvalidBlockNumber || refreshed)
		{
			AbtMetaPageData meta;

			/* pbtree partitions (metablk > 0) are not cached */
			abt_read_meta_at(rel, metablk, &meta);
			root = meta.root;
			if (metablk == ABT_METAPAGE)
				info->cached_root = root;
			if (root == InvalidBlockNumber)
				return InvalidBuffer;
		}
		buf = abt_read_hinted(rel, root);
		LockBuffer(buf, access);
		abt_check_page(rel, buf);
		if (AbtPageIsRoot(AbtPageGetOpaque(BufferGetPage(buf))))
			return buf;
		/* the root split since we looked: ask the metapage again */
		UnlockReleaseBuffer(buf);
		refreshed = true;
		CHECK_FOR_INTERRUPTS();
	}
}

/* Release buf and lock blkno in share mode instead. */
Buffer
abt_relandgetbuf(Relation rel, Buffer buf, BlockNumber blkno)
{
	UnlockReleaseBuffer(buf);
	buf = abt_read_hinted(rel, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, buf);
	return buf;
}

/* The leaf where key belongs, share-locked; InvalidBuffer if empty tree. */
Buffer
abt_descend_to_leaf(Relation rel, AbtKey *key)
{
	Buffer		buf = abt_get_root(rel, key->meta, BUFFER_LOCK_SHARE);

	if (!BufferIsValid(buf))
		return buf;
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		IndexTuple	downlink;

		if (abt_key_beyond_page(rel, key, page))
		{
			buf = abt_relandgetbuf(rel, buf, opaque->next);
			continue;
		}
		if (AbtPageIsLeaf(opaque))
			return buf;
		downlink = (IndexTuple) PageGetItem(page,
											PageGetItemId(page, abt_binsrch_internal(rel, key, page)));
		buf = abt_relandgetbuf(rel, buf, AbtDownlinkGetChild(downlink));
	}
}

/* ---- keys ---- */

static bool
abt_attr_is_desc(Relation rel, AttrNumber attno)
{
	return (rel->rd_indoption[attno - 1] & INDOPTION_DESC) != 0;
}

/* Do NULLs of column attno come after the values in scan direction dir? */
static bool
abt_nulls_at_end(Relation rel, AttrNumber attno, ScanDirection dir)
{
	bool		nulls_first = (rel->rd_indoption[attno - 1] & INDOPTION_NULLS_FIRST) != 0;

	return nulls_first != ScanDirectionIsForward(dir);
}

/*
 * Check an item against all scan keys.  Sets *stop when the item fails a key
 * that every later item in direction dir fails too.
 */
static bool
abt_check_keys(IndexScanDesc scan, IndexTuple itup, ScanDirection dir, bool *stop)
{
	Relation	rel = scan->indexRelation;
	AbtScanOpaque so = (AbtScanOpaque) scan->opaque;
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	*stop = false;
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		bool		first_col = sk->sk_attno == 1;
		bool		isnull;
		Datum		value = index_getattr(itup, sk->sk_attno, desc, &isnull);
		bool		ascending;

		if (sk->sk_flags & SK_ISNULL)
		{
			bool		ok = (sk->sk_flags & SK_SEARCHNULL) ? isnull : !isnull;

			if (ok)
				continue;
			/* past the NULLs (IS NULL), or into them (IS NOT NULL) */
			if (first_col)
				*stop = (sk->sk_flags & SK_SEARCHNULL) ?
					!abt_nulls_at_end(rel, 1, dir) : abt_nulls_at_end(rel, 1, dir);
			return false;
		}
		if (isnull)
		{
			if (first_col)
				*stop = abt_nulls_at_end(rel, 1, dir);
			return false;
		}
		if (DatumGetBool(FunctionCall2Coll(&sk->sk_func, sk->sk_collation,
										   value, sk->sk_argument)))
			continue;
		if (!first_col)
			return false;

		/* does the column's value grow in scan direction? */
		ascending = ScanDirectionIsForward(dir) != abt_attr_is_desc(rel, 1);
		switch (sk->sk_strategy)
		{
			case BTLessStrategyNumber:
			case BTLessEqualStrategyNumber:
				*stop = ascending;
				break;
			case BTGreaterStrategyNumber:
			case BTGreaterEqualStrategyNumber:
				*stop = !ascending;
				break;
			case BTEqualStrategyNumber:
				/* we started at the first possible match of this key */
				*stop = (sk == so->eqkey);
				break;
		}
		return false;
	}
	return true;
}

/*
 * Build the key to position a scan in direction dir from the first-column
 * scan keys.  Returns false for "start at the very beginning/end".
 */
static bool
abt_start_key(IndexScanDesc scan, ScanDirection dir, AbtKey *key)
{
	Relation	rel = scan->indexRelation;
	AbtScanOpaque so = (AbtScanOpaque) scan->opaque;
	bool		forward = ScanDirectionIsForward(dir);
	bool		desc = abt_attr_is_desc(rel, 1);
	ScanKey		best = NULL;
	bool		inclusive = false;
	int			i;

	so->eqkey = NULL;
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];

		if (sk->sk_attno != 1)
			continue;
		if (sk->sk_flags & SK_ISNULL)
		{
			if ((sk->sk_flags & SK_SEARCHNULL) && abt_nulls_at_end(rel, 1, dir) && best == NULL)
			{
				best = sk;
				inclusive = true;
			}
			continue;
		}
		if (sk->sk_strategy == BTEqualStrategyNumber)
		{
			best = sk;
			inclusive = true;
			so->eqkey = sk;
			break;
		}
		if (best != NULL)
			continue;
		/* the keys that bound the start of the range in scan direction */
		if (forward != desc &&
			(sk->sk_strategy == BTGreaterEqualStrategyNumber ||
			 sk->sk_strategy == BTGreaterStrategyNumber))
		{
			best = sk;
			inclusive = sk->sk_strategy == BTGreaterEqualStrategyNumber;
		}
		else if (forward == desc &&
				 (sk->sk_strategy == BTLessEqualStrategyNumber ||
				  sk->sk_strategy == BTLessStrategyNumber))
		{
			best = sk;
			inclusive = sk->sk_strategy == BTLessEqualStrategyNumber;
		}
	}

	abt_key_init(rel, key);
	key->nextkey = !forward;	/* no key: the very beginning or end */
	if (best == NULL)
		return false;

	key->natts = 1;
	if (best->sk_flags & SK_ISNULL)
		key->attrs[0].isnull = true;
	else
	{
		Oid			subtype = OidIsValid(best->sk_subtype) ? best->sk_subtype :
			rel->rd_opcintype[0];
		Oid			cmpproc = get_opfamily_proc(rel->rd_opfamily[0], rel->rd_opcintype[0],
												subtype, 1);

		if (!OidIsValid(cmpproc))
		{
			/* cannot compare with it: scan from the beginning, stop by ops only */
			so->eqkey = NULL;
			key->natts = 0;
			return false;
		}
		abt_key_set_proc(&key->attrs[0], cmpproc);
		key->attrs[0].value = best->sk_argument;
		key->attrs[0].collation = best->sk_collation;
	}
	/* forward: first item >= key (inclusive) or > key; backward: the reverse */
	key->nextkey = inclusive ? !forward : forward;
	return true;
}

/* ---- reading pages ---- */

/*
 * Collect the matching items of the locked leaf buf, from offset start in
 * direction dir.  Items are kept in page order.  Returns the number found.
 */
static int
abt_read_page(IndexScanDesc scan, Buffer buf, OffsetNumber start, ScanDirection dir)
{
	AbtScanOpaque so = (AbtScanOpaque) scan->opaque;
	Page		page = BufferGetPage(buf);
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber first = AbtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			step = ScanDirectionIsForward(dir) ? 1 : -1;
	int			off;
	int			n = 0;
	AbtScanItem found[ABT_MAX_TIDS_PER_PAGE];

	so->curblk = BufferGetBlockNumber(buf);
	so->prevblk = opaque->prev;
	so->nextblk = opaque->next;
	so->workused = 0;

	for (off = start; off >= first && off <= maxoff; off += step)
	{
		ItemId		iid = PageGetItemId(page, off);
		IndexTuple	itup = (IndexTuple) PageGetItem(page, iid);
		bool		stop;

		if (abt_check_keys(scan, itup, dir, &stop))
		{
			int			ntids = abt_leaf_ntids(itup);

			/* a posting tuple's TIDs, in page order after the reversal below */
			for (int i = 0; i < ntids; i++)
			{
				AbtScanItem *item = &found[n++];

				abt_leaf_tid(itup, ntids, step > 0 ? i : ntids - 1 - i, &item->heaptid);
				item->tupoff = so->workused;
			}
			if (scan->xs_want_itup)
			{
				memcpy(so->workspace + so->workused, itup, IndexTupleSize(itup));
				so->workused += MAXALIGN(IndexTupleSize(itup));
			}
		}
		else if (stop)
		{
			if (step > 0)
				so->more_right = false;
			else
				so->more_left = false;
			break;
		}
	}

	/* keep page order, so that a change of direction just walks back */
	for (off = 0; off < n; off++)
		so->items[off] = found[step > 0 ? off : n - 1 - off];
	so->nitems = n;
	so->curitem = step > 0 ? -1 : n;
	return n;
}

static void
abt_drop_page(AbtScanOpaque so)
{
	if (BufferIsValid(so->buf))
		ReleaseBuffer(so->buf);
	so->buf = InvalidBuffer;
	so->nitems = 0;
}

/* Keep the pin on a page whose items we return, drop the lock. */
static void
abt_keep_page(AbtScanOpaque so, Buffer buf)
{
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	so->buf = buf;
}

/*
 * The page to the left of the page the scan was on, share-locked.  Pages
 * are never deleted, so walking right from the old left-link reaches the
 * page that links to curblk.
 */
static Buffer
abt_walk_left(IndexScanDesc scan)
{
	AbtScanOpaque so = (AbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	BlockNumber blkno = so->prevblk;
	Buffer		buf = ReadBuffer(rel, blkno);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	for (;;)
	{
		AbtPageOpaque opaque;

		abt_check_page(rel, buf);
		opaque = AbtPageGetOpaque(BufferGetPage(buf));
		if (opaque->next == so->curblk)
			return buf;
		if (opaque->next == InvalidBlockNumber)
			elog(ERROR, "abtree: lost the left sibling of block %u in index \"%s\"",
				 so->curblk, RelationGetRelationName(rel));
		CHECK_FOR_INTERRUPTS();
		buf = abt_relandgetbuf(rel, buf, opaque->next);
	}
}

/* Step to the next page with matching items in direction dir. */
static bool
abt_step_page(IndexScanDesc scan, ScanDirection dir)
{
	AbtScanOpaque so = (AbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;

	for (;;)
	{
		Buffer		buf;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		if (ScanDirectionIsForward(dir))
		{
			if (!so->more_right || so->nextblk == InvalidBlockNumber)
				break;
			abt_drop_page(so);
			buf = ReadBuffer(rel, so->nextblk);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			abt_check_page(rel, buf);
			page = BufferGetPage(buf);
			so->more_left = true;
			abt_read_page(scan, buf, AbtFirstDataOffset(AbtPageGetOpaque(page)), dir);
		}
		else
		{
			if (!so->more_left || so->prevblk == InvalidBlockNumber)
				break;
			abt_drop_page(so);
			buf = abt_walk_left(scan);
			page = BufferGetPage(buf);
			so->more_right = true;
			abt_read_page(scan, buf, PageGetMaxOffsetNumber(page), dir);
		}
		abt_keep_page(so, buf);
		if (so->nitems > 0)
			return true;
	}
	abt_drop_page(so);
	return false;
}

/* Position the scan and read its first page. */
static bool
abt_first(IndexScanDesc scan, ScanDirection dir)
{
	AbtScanOpaque so = (AbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	AbtKey	   *key = palloc(sizeof(AbtKey));
	Buffer		buf;
	Page		page;
	OffsetNumber off;

	abt_start_key(scan, dir, key);
	key->meta = so->meta;
	buf = abt_descend_to_leaf(rel, key);
	if (!BufferIsValid(buf))
	{
		pfree(key);
		return false;
	}
	page = BufferGetPage(buf);
	off = abt_binsrch_leaf(rel, key, page);
	pfree(key);

	so->more_left = true;
	so->more_right = true;
	/* backward: start at the item before the first one past the key */
	abt_read_page(scan, buf, ScanDirectionIsForward(dir) ? off : off - 1, dir);
	abt_keep_page(so, buf);
	if (so->nitems > 0)
		return true;
	return abt_step_page(scan, dir);
}

/* ---- the AM callbacks ---- */

IndexScanDesc
abtbeginscan(Relation rel, int nkeys, int norderbys)
{
	IndexScanDesc scan;
	AbtScanOpaque so;

	/* reading needs no WAL and no shared memory: no preload check */
	scan = RelationGetIndexScan(rel, nkeys, norderbys);
	so = palloc0(sizeof(AbtScanOpaqueData));
	so->buf = InvalidBuffer;
	so->workspace = palloc(BLCKSZ);
	so->meta = ABT_METAPAGE;
	scan->opaque = so;
	return scan;
}

/* Make scan read the tree whose metapage is meta (pbtree's partitions). */
void
abt_scan_set_tree(IndexScanDesc scan, BlockNumber meta)
{
	((AbtScanOpaque) scan->opaque)->meta = meta;
}

void
abtrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		  ScanKey orderbys, int norderbys)
{
	AbtScanOpaque so = (AbtScanOpaque) scan->opaque;
	int			i;

	abt_drop_page(so);
	so->started = false;
	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));

	/* "col = NULL" and the like can never be true */
	so->qual_ok = true;
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];

		if ((sk->sk_flags & SK_ISNULL) &&
			!(sk->sk_flags & (SK_SEARCHNULL | SK_SEARCHNOTNULL)))
			so->qual_ok = false;
	}
}

bool
abtgettuple(IndexScanDesc scan, ScanDirection dir)
{
	AbtScanOpaque so = (AbtScanOpaque) scan->opaque;
	AbtScanItem *item;

	if (!so->qual_ok)
		return false;
	if (!so->started)
	{
		so->started = true;
		/* a pbtree partition's scan: the pbtree scan counts itself */
		if (so->meta == ABT_METAPAGE)
			pgstat_count_index_scan(scan->indexRelation);
		if (!abt_first(scan, dir))
		{
			so->started = false;
			return false;
		}
	}

	so->curitem += ScanDirectionIsForward(dir) ? 1 : -1;
	if (so->curitem < 0 || so->curitem >= so->nitems)
	{
		/*
		 * Past the end in this direction, the scan has no position any more
		 * (abt_step_page dropped the page).  The executor asks again only in
		 * the other direction (a scrollable cursor after FETCH LAST or ALL):
		 * then the scan starts over from that end, as nbtree's does.
		 * Stepping back to the page before the one we fell off instead
		 * skipped that page's items (issue 20).
		 */
		if (!abt_step_page(scan, dir))
		{
			so->started = false;
			return false;
		}
		so->curitem += ScanDirectionIsForward(dir) ? 1 : -1;
	}

	item = &so->items[so->curitem];
	scan->xs_heaptid = item->heaptid;
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		scan->xs_itup = (IndexTuple) (so->workspace + item->tupoff);
		scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
	}
	return true;
}

int64
abtgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	int64		ntids = 0;

	while (abtgettuple(scan, ForwardScanDirection))
	{
		tbm_add_tuples(tbm, &scan->xs_heaptid, 1, false);
		ntids++;
	}
	return ntids;
}

void
abtendscan(IndexScanDesc scan)
{
	AbtScanOpaque so = (AbtScanOpaque) scan->opaque;

	abt_drop_page(so);
	pfree(so->workspace);
	pfree(so);
	scan->opaque = NULL;
}
