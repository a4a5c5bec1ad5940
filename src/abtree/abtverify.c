/*-------------------------------------------------------------------------
 *
 * abtverify.c
 *	  abtree_verify() and abtree_stats(): checking and describing an index.
 *
 * abtree_verify walks every level from its leftmost page along the
 * right-links, as amcheck does for nbtree, and checks the invariants of
 * src/abtree/README: page kind and level, sibling links, key order within
 * and across pages (K1, K2), that each level's pages are exactly the
 * children of the level above in order and that downlink keys equal the
 * children's left neighbours' high keys (K3, K4), and weights: each
 * downlink equals its child's total (W2, "exact", under a ShareLock that
 * keeps writers out) or is at least that (W1, "at least", under an
 * AccessShareLock, next to running writers; the parent and the child are
 * then held together while compared).  With heapallindexed, every
 * heap tuple that should be indexed must be found by its TID.  The first
 * problem raises an ERROR with ERRCODE_INDEX_CORRUPTED.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/rel.h"

typedef struct AbtVerifyChild
{
	BlockNumber blkno;
	uint64		weight;
	IndexTuple	key;			/* downlink key; NULL for minus infinity */
} AbtVerifyChild;

typedef struct AbtVerifyState
{
	Relation	rel;
	AbtIndexInfo *info;
	bool		exact;
	/* the children the level being walked must consist of */
	AbtVerifyChild *expect;
	int			nexpect;
	/* what the walk of this level collects for the next one */
	AbtVerifyChild *next;
	int			nnext;
	int			maxnext;
	/* leaf level */
	ItemPointerData *tids;
	int64		ntids;
	int64		maxtids;
	/* the TIDs of entries not valid yet, to tell heapallindexed */
	ItemPointerData *waiting;
	int64		nwaiting;
	int64		maxwaiting;
	uint64		leaf_weight;
	/* exact mode: sketches of the valid leaf entries, to compare (S1) */
	uint8	   *fresh[ABT_SKETCH_MAX_COLS];
	/* pbtree partitions: no weights; pages carry partno; entries to cb */
	bool		weights;
	uint32		partno;
	AbtVerifyLeafCallback leaf_cb;
	void	   *leaf_arg;
} AbtVerifyState;

static void abt_verify_sketch_add(AbtVerifyState *vs, IndexTuple itup);
static void abt_verify_levels(AbtVerifyState *vs, AbtMetaPageData *meta);

#define abt_corrupt(rel, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("abtree index \"%s\" is corrupted", RelationGetRelationName(rel)), \
			 errdetail(__VA_ARGS__)))

static void
abt_verify_add_next(AbtVerifyState *vs, BlockNumber blkno, uint64 weight, IndexTuple key)
{
	if (vs->nnext == vs->maxnext)
	{
		vs->maxnext = Max(64, vs->maxnext * 2);
		vs->next = vs->next ? repalloc(vs->next, sizeof(AbtVerifyChild) * vs->maxnext) :
			palloc(sizeof(AbtVerifyChild) * vs->maxnext);
	}
	vs->next[vs->nnext].blkno = blkno;
	vs->next[vs->nnext].weight = weight;
	vs->next[vs->nnext].key = key ? CopyIndexTuple(key) : NULL;
	vs->nnext++;
}

static void
abt_verify_push_tid(ItemPointerData **tids, int64 *n, int64 *max, ItemPointer tid)
{
	if (*n == *max)
	{
		*max = Max(1024, *max * 2);
		*tids = *tids ? repalloc_huge(*tids, sizeof(ItemPointerData) * *max) :
			palloc(sizeof(ItemPointerData) * *max);
	}
	(*tids)[(*n)++] = *tid;
}

static void
abt_verify_add_tid(AbtVerifyState *vs, ItemPointer tid, bool valid)
{
	abt_verify_push_tid(&vs->tids, &vs->ntids, &vs->maxtids, tid);
	if (!valid)
		abt_verify_push_tid(&vs->waiting, &vs->nwaiting, &vs->maxwaiting, tid);
}

/*
 * A posting tuple (abtree.h): in an unweighted index, valid (frozen from a
 * build, its rows' xid from a fold on insert), placed at offset 0 of a
 * block, of one or more TIDs, valid, ascending and above its place, whose
 * trailer fits after the columns.
 */
static void
abt_verify_posting(AbtVerifyState *vs, IndexTuple itup, BlockNumber blkno, OffsetNumber off)
{
	Relation	rel = vs->rel;
	int			n = abt_posting_count(itup);
	ItemPointerData prev = itup->t_tid;

	if (vs->info->weighted)
		abt_corrupt(rel, "Leaf block %u of a weighted index holds a posting tuple at offset %u.",
					blkno, off);
	if (!TransactionIdIsValid(abt_leaf_xmin(itup)))
		abt_corrupt(rel, "The posting tuple at offset %u of block %u is not valid.",
					off, blkno);
	if (ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) != 0)
		abt_corrupt(rel, "The posting tuple at offset %u of block %u has a heap TID for its place.",
					off, blkno);
	if (n < 1 || MAXALIGN(abt_leaf_key_size(rel, itup) + ABT_POSTING_TRAILER(n) +
						  sizeof(TransactionId)) != IndexTupleSize(itup))
		abt_corrupt(rel, "The posting tuple at offset %u of block %u has a bad count of TIDs (%d) for its size (%zu).",
					off, blkno, n, (Size) IndexTupleSize(itup));
	for (int i = 0; i < n; i++)
	{
		ItemPointerData tid;

		abt_leaf_tid(itup, n, i, &tid);
		if (!ItemPointerIsValid(&tid) || ItemPointerCompare(&prev, &tid) >= 0)
			abt_corrupt(rel, "TID %d of the posting tuple at offset %u of block %u is not above the one before it.",
						i + 1, off, blkno);
		prev = tid;
	}
}

/* K1 and K2 inside one page, and against the left neighbour's high key. */
static void
abt_verify_order(AbtVerifyState *vs, Page page, BlockNumber blkno, IndexTuple prev_hikey)
{
	Relation	rel = vs->rel;
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	bool		leaf = AbtPageIsLeaf(opaque);
	OffsetNumber first = AbtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	IndexTuple	prev = NULL;
	bool		prev_pivot = true;

	/* the first keyed item must be above the left neighbour's high key */
	if (prev_hikey)
		prev = prev_hikey;

	for (off = first; off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		if (!leaf && off == first)
		{
			if (!AbtPivotHasNoKey(itup))
				abt_corrupt(rel, "First downlink on block %u has a key.", blkno);
			continue;
		}
		if (!leaf && AbtPivotHasNoKey(itup))
			abt_corrupt(rel, "Downlink %u on block %u has no key.", off, blkno);
		if (prev && abt_compare_tuples(rel, prev, prev_pivot, itup, !leaf) >= 0)
			abt_corrupt(rel, "Item %u on block %u is not above the item before it.", off, blkno);
		prev = itup;
		prev_pivot = !leaf;
	}
	if (!AbtPageIsRightmost(opaque) && prev != NULL && prev != prev_hikey)
	{
		IndexTuple	hikey = (IndexTuple) PageGetItem(page, PageGetItemId(page, ABT_HIKEY));
		int			cmp = abt_compare_tuples(rel, prev, prev_pivot, hikey, true);

		/* leaves: the high key is the largest key; internal: above all */
		if (leaf ? cmp > 0 : cmp >= 0)
			abt_corrupt(rel, "The high key of block %u is below its last item.", blkno);
	}
}

/* Check one page (a private copy) of the level being walked. */
static void
abt_verify_page(AbtVerifyState *vs, Page page, BlockNumber blkno, int index,
				uint16 level, BlockNumber prev_blkno, IndexTuple prev_hikey)
{
	Relation	rel = vs->rel;
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	uint64		weight = abt_page_weight(page, vs->info->weighted);
	OffsetNumber off;

	if (vs->partno != 0 && ((PageHeader) page)->pd_prune_xid != vs->partno)
		abt_corrupt(rel, "Block %u belongs to partition %u, not %u.", blkno,
					((PageHeader) page)->pd_prune_xid, vs->partno);
	if (opaque->level != level)
		abt_corrupt(rel, "Block %u has level %u, expected %u.", blkno, opaque->level, level);
	if (AbtPageIsLeaf(opaque) != (level == 0))
		abt_corrupt(rel, "Block %u at level %u has the wrong leaf flag.", blkno, level);
	/* next to writers, the left neighbour may have split since we read it */
	if (vs->exact && opaque->prev != prev_blkno)
		abt_corrupt(rel, "Block %u links left to %u, expected %u.", blkno, opaque->prev, prev_blkno);

	if (vs->expect)
	{
		AbtVerifyChild *c = index < vs->nexpect ? &vs->expect[index] : NULL;

		if (vs->exact && (c == NULL || c->blkno != blkno))
			abt_corrupt(rel, "Block %u at level %u has no downlink in the right place.", blkno, level);
		if (c && c->blkno == blkno)
		{
			/* an overcount at rest is W2 failing, repairable; less is W1 */
			if (vs->exact && vs->weights && c->weight > weight)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("abtree index \"%s\" has inexact weights",
								RelationGetRelationName(rel)),
						 errdetail("Downlink to block %u has weight " UINT64_FORMAT ", the block has " UINT64_FORMAT ".",
								   blkno, c->weight, weight),
						 errhint("An insert that failed half way or a crash leaves weights that overcount; VACUUM the table to make them exact again.")));
			if (vs->exact && vs->weights && c->weight < weight)
				abt_corrupt(rel, "Downlink to block %u has weight " UINT64_FORMAT ", the block has " UINT64_FORMAT ".",
							blkno, c->weight, weight);
			/* a keyed downlink carries the left sibling's high key (K3) */
			if (vs->exact && c->key &&
				(prev_hikey == NULL || !abt_pivot_key_equal(c->key, prev_hikey)))
				abt_corrupt(rel, "Downlink key of block %u differs from the high key of its left sibling.", blkno);
			if (index == 0 && c->key)
				abt_corrupt(rel, "The leftmost block %u of level %u has a keyed downlink.", blkno, level);
		}
	}

	abt_verify_order(vs, page, blkno, prev_hikey);

	for (off = AbtFirstDataOffset(opaque); off <= PageGetMaxOffsetNumber(page); off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		/* draws index such a leaf directly: the entry would get draws */
		if (AbtPageIsLeaf(opaque) && !(opaque->flags & ABTP_HAS_INVALID) &&
			!TransactionIdIsValid(abt_leaf_xmin(itup)))
			abt_corrupt(rel, "Leaf block %u holds a not-yet-valid entry at offset %u without the HAS_INVALID flag.",
						blkno, off);
		if (AbtPageIsLeaf(opaque) && vs->leaf_cb)
			vs->leaf_cb(vs->leaf_arg, itup);
		else if (AbtPageIsLeaf(opaque))
		{
			int			n = abt_leaf_ntids(itup);

			if (AbtLeafIsPosting(itup))
			{
				abt_verify_posting(vs, itup, blkno, off);
				/* draws would index the leaf entry by entry */
				if (!(opaque->flags & ABTP_HAS_POSTING))
					abt_corrupt(rel, "Leaf block %u holds a posting tuple at offset %u without the HAS_POSTING flag.",
								blkno, off);
			}
			for (int i = 0; i < n; i++)
			{
				ItemPointerData tid;

				abt_leaf_tid(itup, n, i, &tid);
				abt_verify_add_tid(vs, &tid, TransactionIdIsValid(abt_leaf_xmin(itup)));
				/* the sketches count rows: a posting tuple's once per TID */
				if (vs->exact && TransactionIdIsValid(abt_leaf_xmin(itup)))
					abt_verify_sketch_add(vs, itup);
			}
		}
		else
			abt_verify_add_next(vs, AbtDownlinkGetChild(itup), AbtPivotGetAux(itup)->weight,
								AbtPivotHasNoKey(itup) ? NULL : itup);
	}
	if (AbtPageIsLeaf(opaque))
		vs->leaf_weight += weight;
}

/*
 * One look at the downlink at off of page blkno and its child, holding both,
 * the child locked first (the writers' bottom-up order).  Returns false if
 * the downlink moved; else *stored and *weight are the downlink's weight
 * and the child's items' sum, and *level the child's level.
 */
static bool
abt_verify_couple(AbtVerifyState *vs, BlockNumber blkno, OffsetNumber off, BlockNumber child,
				  uint64 *stored, uint64 *weight, uint16 *level)
{
	Relation	rel = vs->rel;
	Buffer		cbuf = ReadBuffer(rel, child);
	Buffer		buf;
	Page		page;
	OffsetNumber poff;

	LockBuffer(cbuf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, cbuf);
	*weight = abt_page_weight(BufferGetPage(cbuf), vs->info->weighted);
	*level = AbtPageGetOpaque(BufferGetPage(cbuf))->level;
	buf = ReadBuffer(rel, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	poff = abt_find_downlink(page, child, off);
	if (poff != InvalidOffsetNumber)
		*stored = AbtPivotGetAux((IndexTuple) PageGetItem(page, PageGetItemId(page, poff)))->weight;
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(cbuf);
	return poff != InvalidOffsetNumber;
}

/*
 * On a standby a downlink to an internal page can be lighter than that
 * page's items while a weight pass is in flight on the primary: a lower
 * page's full-page image, or the downlinks a SPLIT record recomputes from
 * the halves, carry the pass's add, the page above it does not yet, and
 * the pass's MARK_VALID, whose redo recomputes the path, has not been
 * replayed ("Sampling", src/abtree/README).  No valid entry is
 * uncounted then.  Look again for up to ABT_VERIFY_STANDBY_WAIT_MS while
 * replay goes on: true once the downlink covers its child (or moved).
 * A lasting deficit (a primary that crashed mid-pass and has not written
 * its repair yet also makes one) is reported.
 */
#define ABT_VERIFY_STANDBY_WAIT_MS	10000

static bool
abt_verify_standby_catches_up(AbtVerifyState *vs, BlockNumber blkno, OffsetNumber off,
							  BlockNumber child)
{
	for (int waited = 0; waited < ABT_VERIFY_STANDBY_WAIT_MS; waited += 10)
	{
		uint64		stored;
		uint64		weight;
		uint16		level;

		CHECK_FOR_INTERRUPTS();
		pg_usleep(10 * 1000L);
		if (!abt_verify_couple(vs, blkno, off, child, &stored, &weight, &level) ||
			stored >= weight)
			return true;
	}
	return false;
}

/*
 * At-least mode next to running writers: compare each downlink with its
 * child while holding both (abt_verify_couple).  A weight pass adds on the
 * parent before it adds inside the child, so a parent read after the child
 * counts every add the child shows; splits, VACUUM and repairs need the
 * child exclusively.  At that moment the downlink must be at least the
 * child's weight (W1L), except for the standby's passing deficit above,
 * which a leaf never has (its weight is its valid entries, and the redo
 * that makes one valid recomputes the path).  A downlink that moved right
 * meanwhile is skipped.  Values read at different moments would prove
 * nothing.
 */
static void
abt_verify_coupled_weights(AbtVerifyState *vs, BlockNumber blkno, Page copy)
{
	OffsetNumber off;

	for (off = AbtFirstDataOffset(AbtPageGetOpaque(copy));
		 off <= PageGetMaxOffsetNumber(copy); off++)
	{
		BlockNumber child = AbtDownlinkGetChild((IndexTuple) PageGetItem(copy,
																		 PageGetItemId(copy, off)));
		uint64		stored = 0;
		uint64		weight = 0;
		uint16		level = 0;

		if (!abt_verify_couple(vs, blkno, off, child, &stored, &weight, &level) ||
			stored >= weight)
			continue;
		if (RecoveryInProgress() && level > 0 &&
			abt_verify_standby_catches_up(vs, blkno, off, child))
			continue;
		abt_corrupt(vs->rel, "Downlink to block %u (level %u) has weight " UINT64_FORMAT ", less than the block's " UINT64_FORMAT ".",
					child, level, stored, weight);
	}
}

/* Walk one level from its leftmost page; returns the leftmost child. */
static BlockNumber
abt_verify_level(AbtVerifyState *vs, BlockNumber leftmost, uint16 level)
{
	Relation	rel = vs->rel;
	BlockNumber blkno = leftmost;
	BlockNumber prev = InvalidBlockNumber;
	IndexTuple	prev_hikey = NULL;
	PGAlignedBlock copy;
	int			index = 0;

	vs->next = NULL;
	vs->nnext = vs->maxnext = 0;
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page = copy.data;
		AbtPageOpaque opaque;

		CHECK_FOR_INTERRUPTS();
		if (blkno == ABT_METAPAGE || blkno >= RelationGetNumberOfBlocks(rel))
			abt_corrupt(rel, "Link to block %u, which is not an index page.", blkno);
		buf = ReadBuffer(rel, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		abt_check_page(rel, buf);
		memcpy(page, BufferGetPage(buf), BLCKSZ);
		UnlockReleaseBuffer(buf);

		abt_verify_page(vs, page, blkno, index++, level, prev, prev_hikey);
		opaque = AbtPageGetOpaque(page);
		if (!vs->exact && vs->weights && !AbtPageIsLeaf(opaque))
			abt_verify_coupled_weights(vs, blkno, page);
		prev_hikey = AbtPageIsRightmost(opaque) ? NULL :
			CopyIndexTuple((IndexTuple) PageGetItem(page, PageGetItemId(page, ABT_HIKEY)));
		prev = blkno;
		blkno = opaque->next;
	}
	if (vs->exact && vs->expect && index != vs->nexpect)
		abt_corrupt(rel, "Level %u has %d pages but %d downlinks point to it.",
					level, index, vs->nexpect);
	return vs->nnext > 0 ? vs->next[0].blkno : InvalidBlockNumber;
}

static int
abt_verify_tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

static void
abt_verify_heap_callback(Relation index, ItemPointer tid, Datum *values,
						 bool *isnull, bool tupleIsAlive, void *state)
{
	AbtVerifyState *vs = (AbtVerifyState *) state;

	if (!bsearch(tid, vs->tids, vs->ntids, sizeof(ItemPointerData), abt_verify_tid_cmp))
		abt_corrupt(vs->rel, "Heap tuple (%u,%u) is not in the index.",
					ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));

	/*
	 * Its entry must be valid, or its row weighs nothing: never drawn, not
	 * counted (an undercount).  Every writer makes its entries valid before
	 * it commits, and ShareLock waited for every transaction that inserted
	 * into the index, so the scan's tuples (none of an aborted insert) all
	 * come from committed inserts or our own, flushed.  Not on a standby,
	 * where the primary's open transactions' entries wait in WAL's state.
	 */
	if (vs->nwaiting > 0 && !RecoveryInProgress() &&
		bsearch(tid, vs->waiting, vs->nwaiting, sizeof(ItemPointerData), abt_verify_tid_cmp))
		abt_corrupt(vs->rel, "The index entry of heap tuple (%u,%u) is not valid: its row weighs nothing in the index.",
					ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));
}

/* Exact mode: the entry counts in the sketches (S1 of src/abtree/README) */
static void
abt_verify_sketch_add(AbtVerifyState *vs, IndexTuple itup)
{
	AbtSketchHashes h;

	abt_sketch_hash_tuple(vs->rel, itup, &h);
	/* hashing may have reset rd_amcache (abt_sketch_hash_tuple) */
	vs->info = abt_index_info(vs->rel);
	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		if (vs->fresh[k] && h.present[k])
			(void) chll_add_hash(vs->fresh[k], h.hash[k]);
	}
}

/*
 * Byte for byte, except that the stored sketch may have given its exact set
 * up while the entries' sketch keeps one: the stored one once held more
 * distinct values than a set holds, and removals do not bring a set back.
 */
static bool
abt_verify_same_sketch(uint8 *stored, uint8 *fresh)
{
	Size		set = chll_set_offset(chll_log2m(stored));
	bool		same;

	if (chll_set_lost(stored) == chll_set_lost(fresh))
		return memcmp(stored, fresh, chll_sketch_size(chll_log2m(stored))) == 0;
	if (!chll_set_lost(stored))
		return false;
	fresh[CHLL_OFF_FLAGS] |= CHLL_FLAG_SET_LOST;
	same = memcmp(stored, fresh, set) == 0;
	fresh[CHLL_OFF_FLAGS] &= ~CHLL_FLAG_SET_LOST;
	return same;
}

/*
 * Each stored sketch must hold as many values as the valid entries have
 * non-NULL keys in its column (the key sketch: entries), and, if neither
 * sketch has approximate
 * counts, be the very sketch of those values, byte for byte.
 */
static void
abt_verify_sketches(AbtVerifyState *vs)
{
	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		uint8	   *stored = abt_sketch_copy(vs->rel, k);
		uint8	   *fresh = vs->fresh[k];
		const char *what;

		if (stored == NULL || fresh == NULL)
			continue;
		if (k >= IndexRelationGetNumberOfKeyAttributes(vs->rel))
			what = "whole keys";
		else
			what = psprintf("key column %d", k + 1);
		if (chll_total(stored) != chll_total(fresh))
			abt_corrupt(vs->rel, "The sketch of %s counts " UINT64_FORMAT " values, the valid entries have " UINT64_FORMAT ".",
						what, chll_total(stored), chll_total(fresh));
		if (((stored[CHLL_OFF_FLAGS] | fresh[CHLL_OFF_FLAGS]) & CHLL_FLAG_APPROX) == 0 &&
			!abt_verify_same_sketch(stored, fresh))
			abt_corrupt(vs->rel, "The sketch of %s differs from the sketch of the valid entries' values.",
						what);
	}
}

/* Every level of the tree meta describes, root first. */
static void
abt_verify_levels(AbtVerifyState *vs, AbtMetaPageData *meta)
{
	BlockNumber leftmost = meta->root;

	if (meta->root == InvalidBlockNumber)
		return;
	for (int level = meta->level; level >= 0; level--)
	{
		vs->ntids = 0;
		vs->nwaiting = 0;
		leftmost = abt_verify_level(vs, leftmost, level);
		vs->expect = vs->next;
		vs->nexpect = vs->nnext;
		if (level > 0 && leftmost == InvalidBlockNumber)
			abt_corrupt(vs->rel, "Level %d has no downlinks.", level);
	}
}

/*
 * Check the tree of a pbtree partition (head: its metapage): structure and
 * order as for abtree, no weights; every page must belong to partno, and
 * every leaf entry goes to cb.
 */
void
abt_verify_partition(Relation rel, BlockNumber head, uint32 partno, bool exact,
					 AbtVerifyLeafCallback cb, void *arg)
{
	AbtVerifyState vs;
	AbtMetaPageData meta;

	memset(&vs, 0, sizeof(vs));
	vs.rel = rel;
	vs.info = abt_index_info(rel);
	vs.exact = exact;
	vs.weights = false;
	vs.partno = partno;
	vs.leaf_cb = cb;
	vs.leaf_arg = arg;
	abt_read_meta_at(rel, head, &meta);
	abt_verify_levels(&vs, &meta);
}

PG_FUNCTION_INFO_V1(abtree_verify);

Datum
abtree_verify(PG_FUNCTION_ARGS)
{
	AbtVerifyState vs;
	AbtMetaPageData meta;
	bool		heapallindexed;
	LOCKMODE	lockmode;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("abtree_verify: index and heapallindexed must not be null")));
	heapallindexed = PG_GETARG_BOOL(1);
	memset(&vs, 0, sizeof(vs));
	vs.weights = true;

	/*
	 * exact NULL (the default): the light check, next to writers, unless the
	 * heap check asks for exact mode (as amcheck, whose default check takes
	 * only AccessShareLock; issue 25, item 2).
	 */
	vs.exact = PG_ARGISNULL(2) ? heapallindexed : PG_GETARG_BOOL(2);
	if (heapallindexed && !vs.exact)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("abtree_verify: heapallindexed needs exact => true"),
				 errhint("The heap check must not race with inserts; exact mode keeps them out.")));
	/*
	 * A standby cannot take ShareLock, and has no writers but the startup
	 * process: exact mode there is right when replay is idle (a caught-up
	 * standby whose primary is quiet); during replay it may see a record
	 * half applied across pages.
	 */
	lockmode = vs.exact && !RecoveryInProgress() ? ShareLock : AccessShareLock;
	vs.rel = abt_open_index_checked(PG_GETARG_OID(0), lockmode);
	/* check what draws see: after crash recovery, after their one-time repair */
	abt_recovery_check(vs.rel);
	abt_batch_flush_rel(vs.rel);
	for (int k = 0; vs.exact && k < ABT_SKETCH_MAX_COLS; k++)
	{
		int			log2m = abt_sketch_info(vs.rel)->sketch_log2m;

		if (!abt_sketch_has_column(vs.rel, k))
			continue;
		vs.fresh[k] = palloc(chll_sketch_size(log2m));
		abt_sketch_init(vs.fresh[k], log2m);
	}
	/* after abt_sketch_info's catalog look-ups, which may rebuild rd_amcache */
	vs.info = abt_index_info(vs.rel);

	abt_read_meta(vs.rel, &meta);
	abt_verify_levels(&vs, &meta);

	if (vs.exact && meta.root != InvalidBlockNumber)
	{
		uint64		total = abt_total_weight(vs.rel);

		if (total != vs.leaf_weight)
			abt_corrupt(vs.rel, "The root's weights sum to " UINT64_FORMAT ", the leaves to " UINT64_FORMAT ".",
						total, vs.leaf_weight);
	}
	if (vs.exact)
		abt_verify_sketches(&vs);

	if (heapallindexed)
	{
		Relation	heap = table_open(IndexGetRelation(RelationGetRelid(vs.rel), false),
									  AccessShareLock);
		IndexInfo  *indexInfo = BuildIndexInfo(vs.rel);

		qsort(vs.tids, vs.ntids, sizeof(ItemPointerData), abt_verify_tid_cmp);
		qsort(vs.waiting, vs.nwaiting, sizeof(ItemPointerData), abt_verify_tid_cmp);
		table_index_build_scan(heap, vs.rel, indexInfo, true, false,
							   abt_verify_heap_callback, &vs, NULL);
		table_close(heap, AccessShareLock);
	}

	relation_close(vs.rel, lockmode);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(abtree_stats);

/*
 * abtree_stats(index): height, pages, leaf pages, empty leaf pages,
 * entries, total weight, average leaf fill, pages per level.
 */
Datum
abtree_stats(PG_FUNCTION_ARGS)
{
	Relation	rel;
	AbtMetaPageData meta;
	TupleDesc	tupdesc;
	BlockNumber nblocks;
	BlockNumber blkno;
	int64		per_level[64] = {0};
	int64		leaf_pages = 0;
	int64		empty_leaves = 0;
	int64		entries = 0;
	double		fill = 0;
	int			height;
	Datum		values[8];
	bool		nulls[8] = {false};
	Datum	   *levels;
	int			i;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("abtree_stats: index must not be null")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	rel = abt_open_index_for_reading(PG_GETARG_OID(0), AccessShareLock);
	abt_read_meta(rel, &meta);
	height = meta.root == InvalidBlockNumber ? 0 : meta.level + 1;

	nblocks = RelationGetNumberOfBlocks(rel);
	for (blkno = ABT_METAPAGE + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf = ReadBuffer(rel, blkno);
		Page		page;
		AbtPageOpaque opaque;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		/* a page added by a split that a crash interrupted: unused */
		if (PageIsNew(page))
		{
			UnlockReleaseBuffer(buf);
			continue;
		}
		abt_check_page(rel, buf);
		opaque = AbtPageGetOpaque(page);
		if (opaque->flags & ABTP_SKETCH)
		{
			UnlockReleaseBuffer(buf);
			continue;
		}
		if (opaque->level < lengthof(per_level))
			per_level[opaque->level]++;
		if (AbtPageIsLeaf(opaque))
		{
			int			n = PageGetMaxOffsetNumber(page) - AbtFirstDataOffset(opaque) + 1;

			leaf_pages++;
			/* heap rows: a posting tuple counts its TIDs */
			for (OffsetNumber off = AbtFirstDataOffset(opaque); off <= PageGetMaxOffsetNumber(page); off++)
				entries += abt_leaf_ntids((IndexTuple) PageGetItem(page, PageGetItemId(page, off)));
			if (n <= 0)
				empty_leaves++;
			fill += 1.0 - (double) PageGetExactFreeSpace(page) /
				(BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(AbtPageOpaqueData)));
		}
		UnlockReleaseBuffer(buf);
	}

	values[0] = Int32GetDatum(height);
	values[1] = Int64GetDatum((int64) nblocks);
	values[2] = Int64GetDatum(leaf_pages);
	values[3] = Int64GetDatum(empty_leaves);
	values[4] = Int64GetDatum(entries);
	values[5] = DirectFunctionCall1(int8_numeric, Int64GetDatum((int64) abt_total_weight(rel)));
	values[6] = Float8GetDatum(leaf_pages > 0 ? fill / leaf_pages : 0);
	levels = palloc(sizeof(Datum) * Max(height, 1));
	for (i = 0; i < height; i++)
		levels[i] = Int64GetDatum(per_level[i]);
	values[7] = PointerGetDatum(construct_array(levels, height, INT8OID, 8, true, TYPALIGN_DOUBLE));

	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
