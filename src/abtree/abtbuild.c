/*-------------------------------------------------------------------------
 *
 * abtbuild.c
 *	  Bulk build of an abtree index from sorted input.
 *
 * The heap is scanned into a sort (abtbuildsort.c) that orders by the
 * index's key columns and then by heap TID (nbtree's order).  The sorted
 * tuples fill leaf pages left to right up
 * to the fillfactor; each level is then built from the (block, weight, high
 * key) of the pages below, until one page remains: the root.  Weights are
 * therefore exact from the start.  Pages go through shared buffers and are
 * WAL-logged at the end with log_newpage_range, as pgvector does.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/tableam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/rel.h"
#include "access/stratnum.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "utils/lsyscache.h"
#include "utils/tuplesort.h"

/* ambuildphasename's phases, reported in pg_stat_progress_create_index */
#define ABT_PHASE_TABLESCAN		2
#define ABT_PHASE_SORT			3
#define ABT_PHASE_LOAD			4

#define ABT_NONLEAF_FILLFACTOR	70

/* A finished page, as its parent level needs it */
typedef struct AbtChild
{
	BlockNumber blkno;
	uint64		weight;
	IndexTuple	hikey;			/* NULL for the rightmost page */
} AbtChild;

/* The page being filled on one level */
typedef struct AbtLevelWriter
{
	Relation	index;
	uint16		level;
	Buffer		buf;			/* current page's buffer, pinned, not locked */
	Page		page;			/* its contents, built in local memory */
	uint64		weight;			/* of the current page */
	uint64		total;			/* of the level so far */
	IndexTuple	last;			/* last item added (leaf: its pivot is the high key;
								 * the copy in page) */
	IndexTuple	last_hikey;		/* internal: high key of the last child */
	AbtChild   *pages;			/* finished pages of this level */
	int			npages;
	int			maxpages;
	Size		limit;			/* stop filling when free space drops below */
	uint32		partno;			/* pbtree: the partition the pages belong to */
	bool		log_pages;		/* WAL-log each page when done (live index) */
} AbtLevelWriter;

/*
 * Let go of a finished page.  A bulk build WAL-logs the whole index at the
 * end; a pbtree seal or merge writes into a live index and logs each page
 * as it is done (the partition becomes visible only later, through a
 * logged directory change).
 */
static void
abt_writer_release(AbtLevelWriter *w, Buffer buf, Page contents)
{
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	memcpy(BufferGetPage(buf), contents, BLCKSZ);
	MarkBufferDirty(buf);
	if (w->log_pages)
		log_newpage_buffer(buf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
}

typedef struct AbtBuildState
{
	AbtBuildSort *sort;			/* abtbuildsort.c */
	double		indtuples;
	AbtSketchBuild *sketches;
} AbtBuildState;

/*
 * The writer fills pages in local memory and copies each into its buffer
 * when it is done, so that it holds no buffer lock while it reads its input
 * (which may be cancelled, or read other pages of the index).  Nobody else
 * knows the pages before they are linked in, so the pin is enough.
 */
static Buffer
abt_writer_alloc(AbtLevelWriter *w)
{
	Buffer		buf = abt_new_buffer(w->index);

	/*
	 * pbtree: the free space map can hand the same block to two backends
	 * (GetFreeIndexPage is not atomic), and a page counts as free by its
	 * partition number (pbt_page_reusable).  Claim it for our partition,
	 * which the directory lists, before letting go of the lock: an empty
	 * page of ours (a new, all-zero page would count as free whatever its
	 * number).  The page is not marked dirty: our pin keeps the buffer in
	 * memory until its real contents are written, and if we fail first, the
	 * old contents on disk are as free as before.
	 */
	if (w->partno != 0)
	{
		Page		page = BufferGetPage(buf);

		abt_init_page(page, w->level, w->level == 0 ? ABTP_LEAF : 0);
		((PageHeader) page)->pd_prune_xid = w->partno;
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return buf;
}

static void
abt_writer_init_page(AbtLevelWriter *w, BlockNumber prev)
{
	Page		page = w->page;

	abt_init_page(page, w->level, w->level == 0 ? ABTP_LEAF : 0);
	/* pbtree pages carry their partition number (src/pbtree/README) */
	((PageHeader) page)->pd_prune_xid = w->partno;
	AbtPageGetOpaque(page)->prev = prev;
	w->weight = 0;
	w->last = NULL;
	w->last_hikey = NULL;
}

static void
abt_writer_init(AbtLevelWriter *w, Relation index, uint16 level, int fillfactor,
				uint32 partno, bool log_pages)
{
	w->index = index;
	w->level = level;
	w->npages = 0;
	w->total = 0;
	w->maxpages = 64;
	w->pages = palloc(sizeof(AbtChild) * w->maxpages);
	w->limit = BLCKSZ * (100 - fillfactor) / 100;
	w->partno = partno;
	w->log_pages = log_pages;
	w->page = (Page) palloc(BLCKSZ);	/* MAXALIGNed, enough for page code */
	w->buf = abt_writer_alloc(w);
	abt_writer_init_page(w, InvalidBlockNumber);
}

/*
 * Finish the current page.  If it is not the last of its level, it gets a
 * high key at offset 1 and a right-link to the page that comes next, which
 * is allocated here (usually the next block, but a live pbtree index may
 * be extended by others meanwhile).
 */
static void
abt_writer_finish_page(AbtLevelWriter *w, bool last_of_level)
{
	Page		page = w->page;
	BlockNumber blkno = BufferGetBlockNumber(w->buf);
	Buffer		done = w->buf;
	Buffer		next = InvalidBuffer;
	AbtChild   *child;
	IndexTuple	hikey = NULL;

	if (!last_of_level)
	{
		if (w->level == 0)
			hikey = abt_make_pivot(w->index, w->last, true, InvalidBlockNumber, 0);
		else
			hikey = CopyIndexTuple(w->last_hikey);
		if (PageAddItem(page, (Item) hikey, IndexTupleSize(hikey), ABT_HIKEY,
						false, false) == InvalidOffsetNumber)
			elog(ERROR, "abtree build: no room for the high key");
	}

	if (w->npages == w->maxpages)
	{
		w->maxpages *= 2;
		w->pages = repalloc(w->pages, sizeof(AbtChild) * w->maxpages);
	}
	child = &w->pages[w->npages++];
	child->blkno = blkno;
	child->weight = w->weight;
	child->hikey = hikey;

	/* a level of one page is the top: the root */
	if (last_of_level && w->npages == 1)
		AbtPageGetOpaque(page)->flags |= ABTP_ROOT;
	if (!last_of_level)
	{
		next = abt_writer_alloc(w);
		AbtPageGetOpaque(page)->next = BufferGetBlockNumber(next);
	}
	abt_writer_release(w, done, page);
	w->buf = next;
	if (!last_of_level)
		abt_writer_init_page(w, blkno);
}

/*
 * Does an item of this size still go on the current page?  reserve is the
 * room to keep for the high key the item implies if it ends up last.
 */
static bool
abt_writer_fits(AbtLevelWriter *w, IndexTuple itup, Size reserve)
{
	Page		page = w->page;
	Size		need = MAXALIGN(IndexTupleSize(itup)) + sizeof(ItemIdData) + reserve;
	Size		free = PageGetExactFreeSpace(page);

	if (PageGetMaxOffsetNumber(page) == InvalidOffsetNumber)
		return true;			/* an empty page takes anything */
	return free >= need && free - need >= w->limit;
}

static void
abt_writer_put(AbtLevelWriter *w, IndexTuple itup)
{
	if (PageAddItem(w->page, (Item) itup, IndexTupleSize(itup),
					InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
		elog(ERROR, "abtree build: item of %zu bytes does not fit on an empty page",
			 (Size) IndexTupleSize(itup));
	/* draws must not index such a leaf entry by entry (abt_leaf_counts_entries) */
	if (w->level == 0 && AbtLeafIsPosting(itup))
		AbtPageGetOpaque(w->page)->flags |= ABTP_HAS_POSTING;
}

static void
abt_build_callback(Relation index, ItemPointer tid, Datum *values,
				   bool *isnull, bool tupleIsAlive, void *state)
{
	AbtBuildState *bs = (AbtBuildState *) state;

	abt_bsort_put(bs->sort, tid, values, isnull);
	bs->indtuples += 1;
}

/*
 * Add the next leaf tuple, in key order, and free it if owned.  The leaf
 * need not outlive the call: the writer's last is the copy on its page,
 * which stays until the page's high key is made from it (the sort's
 * tuples merged from runs live only that long, abt_bsort_tuples_merged).
 */
static void
abt_writer_add_leaf(AbtLevelWriter *w, IndexTuple leaf, bool weighted, bool owned)
{
	/* its pivot, should it end the page, is at most this much larger */
	Size		keysize = IndexTupleSize(leaf) - (AbtLeafIsPosting(leaf) ?
												  ABT_POSTING_TRAILER(abt_posting_count(leaf)) : 0);
	uint64		lw = abt_leaf_weight(leaf, weighted);

	if (!abt_writer_fits(w, leaf, MAXALIGN(keysize) +
						 sizeof(AbtPivotAux) + sizeof(ItemIdData)))
		abt_writer_finish_page(w, false);
	abt_writer_put(w, leaf);
	w->weight += lw;
	/* entries weigh at most 2^40 each: the sum stops long before it wraps */
	w->total += lw;
	if (w->total > ABT_MAX_TOTAL_WEIGHT)
		abt_weight_total_error(w->index, w->total - lw, lw);
	w->last = (IndexTuple) PageGetItem(w->page,
									   PageGetItemId(w->page, PageGetMaxOffsetNumber(w->page)));
	if (owned)
		pfree(leaf);
}

/*
 * Does the build fold equal entries into posting tuples?  Unweighted
 * abtree indexes do, unless deduplicate_items is off; a weighted index's
 * entries each carry their own weight, and pbtree builds its partitions
 * elsewhere.
 */
static bool
abt_build_dedups(AbtIndexInfo *info)
{
	return !info->weighted && !info->partitioned && info->deduplicate;
}

/* Fill the leaf level from the sorted tuples. */
static void
abt_build_leaves(Relation index, AbtIndexInfo *info, AbtBuildState *bs,
				 AbtLevelWriter *w)
{
	int64		done = 0;
	Datum	   *values;
	bool	   *isnull;
	ItemPointer tid;
	AbtDedup   *dedup = abt_build_dedups(info) ? abt_dedup_begin(index) : NULL;
	IndexTuple	out;
	bool		out_owned;

	while (abt_bsort_next(bs->sort, &values, &isnull, &tid))
	{
		/* the sort's own leaf tuple, if it formed one */
		IndexTuple	leaf = abt_bsort_current_leaf(bs->sort);
		bool		owned = false;

		CHECK_FOR_INTERRUPTS();
		abt_sketch_build_add(index, bs->sketches, values, isnull);
		/* bulk-loaded entries are valid from the start, for every snapshot */
		if (leaf == NULL)
		{
			leaf = abt_form_leaf(index, info, values, isnull, tid, FrozenTransactionId);
			owned = true;
		}
		if (dedup == NULL)
			abt_writer_add_leaf(w, leaf, info->weighted, owned);
		else
		{
			abt_dedup_add(dedup, leaf, owned, w->last);
			while ((out = abt_dedup_next(dedup, &out_owned)) != NULL)
				abt_writer_add_leaf(w, out, info->weighted, out_owned);
		}
		if (++done % 10000 == 0)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
	}
	if (dedup)
	{
		abt_dedup_finish(dedup, w->last);
		while ((out = abt_dedup_next(dedup, &out_owned)) != NULL)
			abt_writer_add_leaf(w, out, info->weighted, out_owned);
	}
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
}

/*
 * Build one internal level over the pages of the level below.  Downlink i
 * carries the high key of child i - 1; the first downlink of every page is
 * minus infinity (its key is the parent's downlink key for the page).
 */
static void
abt_build_parent_level(Relation index, AbtLevelWriter *below, AbtLevelWriter *w)
{
	int			i;

	for (i = 0; i < below->npages; i++)
	{
		AbtChild   *child = &below->pages[i];
		IndexTuple	downlink = NULL;
		Size		reserve = child->hikey ?
			MAXALIGN(IndexTupleSize(child->hikey)) + sizeof(ItemIdData) : 0;

		if (i > 0)
		{
			downlink = abt_make_pivot(index, below->pages[i - 1].hikey, false,
									  child->blkno, child->weight);
			if (!abt_writer_fits(w, downlink, reserve))
				abt_writer_finish_page(w, false);
		}
		if (PageGetMaxOffsetNumber(w->page) == InvalidOffsetNumber)
			downlink = abt_make_nokey_pivot(child->blkno, child->weight, 0);
		abt_writer_put(w, downlink);
		w->weight += child->weight;
		w->last = downlink;
		w->last_hikey = child->hikey;
	}
	abt_writer_finish_page(w, true);
}

/*
 * The leaf level has all its tuples: finish it and build the levels above,
 * until one page remains, the root.  *w describes the root's level after.
 */
static void
abt_writer_finish_levels(AbtLevelWriter *w, int nonleaf_fillfactor)
{
	abt_writer_finish_page(w, true);
	while (w->npages > 1)
	{
		AbtLevelWriter parent;

		abt_writer_init(&parent, w->index, w->level + 1, nonleaf_fillfactor,
						w->partno, w->log_pages);
		abt_build_parent_level(w->index, w, &parent);
		*w = parent;
	}
}

/*
 * A bottom-up writer of a whole tree from leaf tuples in key order, for
 * pbtree's builds, seals and merges: pages are allocated as they fill,
 * WAL-logged one by one if log_pages, and belong to partition partno.
 */
struct AbtTreeWriter
{
	AbtLevelWriter w;
	bool		weighted;
	int			nonleaf_fillfactor;
};

AbtTreeWriter *
abt_tree_writer_begin(Relation index, int fillfactor, int nonleaf_fillfactor,
					  uint32 partno, bool log_pages)
{
	AbtTreeWriter *tw = palloc0(sizeof(AbtTreeWriter));

	abt_writer_init(&tw->w, index, 0, fillfactor, partno,
					log_pages && RelationNeedsWAL(index));
	tw->weighted = abt_index_info(index)->weighted;
	tw->nonleaf_fillfactor = nonleaf_fillfactor;
	return tw;
}

/* Add a leaf tuple (palloc'd; the writer frees it). */
void
abt_tree_writer_add(AbtTreeWriter *tw, IndexTuple leaf)
{
	abt_writer_add_leaf(&tw->w, leaf, tw->weighted, true);
}

/* Finish the tree; returns the root's block and sets *level to its level. */
BlockNumber
abt_tree_writer_finish(AbtTreeWriter *tw, uint32 *level)
{
	BlockNumber root;

	abt_writer_finish_levels(&tw->w, tw->nonleaf_fillfactor);
	root = tw->w.pages[0].blkno;
	*level = tw->w.level;
	return root;
}

/*
 * pbtree's bulk build: the heap's entries as leaf tuples in key order.
 * abt_sorted_begin scans and sorts; abt_sorted_next returns the tuples one
 * by one (palloc'd), NULL at the end.
 */
struct AbtSorted
{
	AbtBuildState bs;
	AbtIndexInfo *info;
	Relation	index;
};

AbtSorted *
abt_sorted_begin(Relation heap, Relation index, IndexInfo *indexInfo,
				 double *reltuples, double *indtuples)
{
	AbtSorted  *st = palloc0(sizeof(AbtSorted));

	st->index = index;
	st->info = abt_index_info(index);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, ABT_PHASE_TABLESCAN);
	st->bs.sort = abt_bsort_begin(index);
	*reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
										abt_build_callback, &st->bs, NULL);
	*indtuples = st->bs.indtuples;
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, ABT_PHASE_SORT);
	abt_bsort_perform(st->bs.sort);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, ABT_PHASE_LOAD);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, (int64) st->bs.indtuples);
	return st;
}

IndexTuple
abt_sorted_next(AbtSorted *st)
{
	Datum	   *values;
	bool	   *isnull;
	ItemPointer tid;
	IndexTuple	leaf;

	if (!abt_bsort_next(st->bs.sort, &values, &isnull, &tid))
		return NULL;
	leaf = abt_bsort_current_leaf(st->bs.sort);
	if (leaf != NULL)
		return CopyIndexTuple(leaf);
	return abt_form_leaf(st->index, st->info, values, isnull, tid, FrozenTransactionId);
}

void
abt_sorted_end(AbtSorted *st)
{
	abt_bsort_end(st->bs.sort);
	pfree(st);
}

IndexBuildResult *
abtbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	AbtIndexInfo *info;
	AbtBuildState bs;
	AbtLevelWriter writer;
	IndexBuildResult *result;
	Buffer		metabuf;
	Page		metapage;
	AbtMetaPageData *meta;
	double		reltuples;

	abt_require_preload();
	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
	info = abt_index_info(index);

	/* the metapage is block 0; filled in when the root is known */
	metabuf = abt_new_buffer(index);
	Assert(BufferGetBlockNumber(metabuf) == ABT_METAPAGE);
	abt_init_metapage(BufferGetPage(metabuf), info->weighted, info->weight_attno);
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, ABT_PHASE_TABLESCAN);
	bs.sort = abt_bsort_begin(index);
	bs.indtuples = 0;
	bs.sketches = abt_sketch_build_begin(index);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   abt_build_callback, &bs, NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, ABT_PHASE_SORT);
	abt_bsort_perform(bs.sort);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, ABT_PHASE_LOAD);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, (int64) bs.indtuples);
	abt_writer_init(&writer, index, 0, info->fillfactor, 0, false);
	abt_build_leaves(index, info, &bs, &writer);
	abt_bsort_end(bs.sort);
	abt_writer_finish_levels(&writer, ABT_NONLEAF_FILLFACTOR);

	metabuf = ReadBuffer(index, ABT_METAPAGE);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	metapage = BufferGetPage(metabuf);
	meta = AbtPageGetMeta(metapage);
	meta->root = writer.pages[0].blkno;
	meta->level = writer.level;
	abt_sketch_write_pages(index, MAIN_FORKNUM, bs.sketches, meta);
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0,
						  RelationGetNumberOfBlocks(index), true);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/* The init fork of an unlogged index: a metapage over an empty tree. */
void
abtbuildempty(Relation index)
{
	AbtIndexInfo *info = abt_index_info(index);
	Buffer		buf;

#if PG_VERSION_NUM >= 160000
	buf = ExtendBufferedRel(BMR_REL(index), INIT_FORKNUM, NULL,
							EB_SKIP_EXTENSION_LOCK | EB_LOCK_FIRST);
#else
	buf = ReadBufferExtended(index, INIT_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
#endif
	START_CRIT_SECTION();
	abt_init_metapage(BufferGetPage(buf), info->weighted, info->weight_attno);
	MarkBufferDirty(buf);
	END_CRIT_SECTION();
	/* empty sketches after it; then the metapage, which points to them */
	abt_sketch_write_pages(index, INIT_FORKNUM, NULL, AbtPageGetMeta(BufferGetPage(buf)));
	START_CRIT_SECTION();
	MarkBufferDirty(buf);
	log_newpage_buffer(buf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
}
