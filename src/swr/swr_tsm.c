/*-------------------------------------------------------------------------
 *
 * swr_tsm.c
 *	  The TABLESAMPLE method swr(n): n independent draws with replacement,
 *	  each row with probability proportional to its weight in the table's
 *	  abtree index (paper 000, sections 2.2 and 5.1).
 *
 * Draws are made in batches through abt_sample_one() and sorted by heap
 * TID; NextSampleBlock hands out the batch's blocks in order, and
 * NextSampleTuple the draws on each block, one offset per draw, repeats
 * included.  Before handing out an offset we resolve the draw ourselves
 * with heap_hot_search_buffer() under the page lock the heap AM holds: that
 * follows HOT chains (an index TID points at the chain's root, which is dead
 * or a redirect once the row was HOT-updated) and tells us right away that
 * a draw is invisible, so that we redraw it.  node->donetuples backs this
 * up: a handed-out offset that the heap AM did not return is redrawn too.
 * README has the whole story.
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"

#include <math.h>

#include "abtree/abtree.h"
#include "mvstore/mvstore.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/tsmapi.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "common/pg_prng.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* Draws per batch: sorted by block for locality, and memory stays bounded. */
#define SWR_BATCH_MAX			65536

/*
 * Rejected draws tolerated per row returned (plus one) before we look
 * whether the index has a visible row at all (README "Rejections").
 */
#define SWR_MAX_REJECTS_PER_ROW	10000

typedef struct SwrState
{
	Relation	index;			/* opened at the first BeginSampleScan */
	MemoryContext scancxt;		/* lives as long as the scan node */
	MemoryContext drawcxt;		/* reset for every batch */
	pg_prng_state prng;
	int64		owed;			/* draws still to make */
	int64		handed;			/* offsets handed out as visible */
	int64		tree_rejects;	/* attempts the index rejected */
	int64		invisible;		/* draws of rows this snapshot cannot see */
	bool		exhausted;		/* nothing visible to draw: stop */
	bool		counted;		/* the counts went to abtree_status() */
	MvsReader	versions;		/* draws weigh entries as our snapshot sees them */

	/* the current batch, sorted by TID */
	ItemPointerData *batch;
	int			batchcap;
	int			nbatch;
	int			blockpos;		/* next entry for NextSampleBlock */
	int			tuplepos;		/* next entry for NextSampleTuple */
	bool		in_block;		/* NextSampleTuple is inside a block's draws */
} SwrState;

static void swr_flush_counts(SwrState *st);

/* ---- arguments and planning ---- */

/* n as a row count: a whole number from 0 to SWR_MAX_N. */
static int64
swr_sample_size(Datum param)
{
	float8		n = DatumGetFloat8(param);

	if (isnan(n) || (n >= 0 && n <= SWR_MAX_N && n != floor(n)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLESAMPLE_ARGUMENT),
				 errmsg("TABLESAMPLE swr sample size must be a whole number, not %s",
						float8out_internal(n)),
				 errhint("swr(n) returns n rows: it takes a count, not a percentage.")));
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLESAMPLE_ARGUMENT),
				 errmsg("TABLESAMPLE swr sample size must not be negative: %s",
						float8out_internal(n))));
	if (n > SWR_MAX_N)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLESAMPLE_ARGUMENT),
				 errmsg("TABLESAMPLE swr sample size %s exceeds the limit of %d rows",
						float8out_internal(n), SWR_MAX_N),
				 errhint("Draw a large sample in several queries.")));
	return (int64) n;
}

/*
 * Estimates for the planner: n rows (it may exceed the table's row count:
 * draws are with replacement), on the number of distinct pages that n
 * uniform draws hit.  Must not fail on odd arguments.
 */
static void
swr_samplescangetsamplesize(PlannerInfo *root, RelOptInfo *baserel,
							List *paramexprs, BlockNumber *pages, double *tuples)
{
	Node	   *arg = estimate_expression_value(root, (Node *) linitial(paramexprs));
	double		n = 1000;		/* a guess when n is known only at run time */
	double		npages = baserel->pages;

	if (IsA(arg, Const) && !((Const *) arg)->constisnull)
	{
		double		v = DatumGetFloat8(((Const *) arg)->constvalue);

		if (v >= 0 && v <= SWR_MAX_N)
			n = rint(v);
	}
	if (npages > 1 && n > 0)
		npages = ceil(-npages * expm1(n * log1p(-1.0 / npages)));
	else
		npages = Min(npages, n);
	*pages = (BlockNumber) npages;
	*tuples = clamp_row_est(n);
}

/* ---- draws ---- */

static int
swr_tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/*
 * Does the index hold a row this scan can see, of positive weight?  Runs
 * only when draws keep being rejected, to tell "nothing visible" (return
 * fewer rows: none) from "very little visible" (ERROR).  An ordinary index
 * scan: it follows HOT chains and checks visibility like any other.
 */
static bool
swr_any_visible(SwrState *st, SampleScanState *node)
{
	Relation	heaprel = node->ss.ss_currentRelation;
	AbtIndexInfo *info = abt_index_info(st->index);
	AttrNumber	weightatt = 0;
	TupleTableSlot *slot = table_slot_create(heaprel, NULL);
	IndexScanDesc scan;
	bool		found = false;

	/* a weight from an expression column is not in the heap: trust it */
	if (info->weighted)
		weightatt = st->index->rd_index->indkey.values[info->weight_attno - 1];
#if PG_VERSION_NUM >= 180000
	scan = index_beginscan(heaprel, st->index, node->ss.ss_currentScanDesc->rs_snapshot,
						   NULL, 0, 0);
#else
	scan = index_beginscan(heaprel, st->index, node->ss.ss_currentScanDesc->rs_snapshot,
						   0, 0);
#endif
	index_rescan(scan, NULL, 0, NULL, 0);
	while (!found && index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		Datum		w;

		CHECK_FOR_INTERRUPTS();
		if (weightatt <= 0)
			found = true;
		else
		{
			w = slot_getattr(slot, weightatt, &isnull);
			found = abt_weight_from_datum(w, isnull, info->weight_type) > 0;
		}
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return found;
}

/*
 * Called when a draw was rejected: have there been too many?  pending is
 * the number of draws of the current batch the index accepted, not yet
 * checked against the heap.  Returns true (and stops the scan) when nothing
 * at all is visible; raises an ERROR when something is, but too little to
 * find it in reasonable time.
 */
static bool
swr_too_many_rejects(SwrState *st, SampleScanState *node, int pending)
{
	int64		rejects = st->tree_rejects + st->invisible;

	if (rejects <= (int64) SWR_MAX_REJECTS_PER_ROW * (st->handed + pending + 1))
		return false;
	if (st->handed == 0 && !swr_any_visible(st, node))
	{
		st->exhausted = true;
		st->owed = 0;
		return true;
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("TABLESAMPLE swr rejected too many draws from index \"%s\"",
					RelationGetRelationName(st->index)),
			 errdetail("%lld draws found rows this query cannot see and the index rejected %lld, while %lld rows were returned.",
					   (long long) st->invisible, (long long) st->tree_rejects,
					   (long long) st->handed),
			 errhint("Fewer than 1 in %d draws finds a visible row. VACUUM the table to remove deleted rows, or sample after large uncommitted insertions end.",
					 SWR_MAX_REJECTS_PER_ROW)));
	return false;				/* keep compiler quiet */
}

/*
 * Draw the next batch of up to SWR_BATCH_MAX owed draws and sort it.  While
 * no row has come back, a batch is no larger than the rejection bound, so
 * that an invisible table is recognised after that many draws.
 */
static void
swr_draw_batch(SwrState *st, SampleScanState *node)
{
	int64		want = Min(st->owed, SWR_BATCH_MAX);
	int			nbatch = 0;
	MemoryContext oldcxt;

	want = Min(want, (int64) SWR_MAX_REJECTS_PER_ROW * (st->handed + 1));
	if (want > st->batchcap)
	{
		if (st->batch)
			pfree(st->batch);
		st->batch = MemoryContextAlloc(st->scancxt, sizeof(ItemPointerData) * want);
		st->batchcap = want;
	}

	MemoryContextReset(st->drawcxt);
	oldcxt = MemoryContextSwitchTo(st->drawcxt);
	while (nbatch < want)
	{
		CHECK_FOR_INTERRUPTS();
		if (abt_sample_one(st->index, pg_prng_double(&st->prng), NULL, &st->versions,
						   &st->batch[nbatch]))
			nbatch++;
		else
		{
			st->tree_rejects++;
			if (swr_too_many_rejects(st, node, nbatch))
			{
				nbatch = 0;
				break;
			}
		}
	}
	MemoryContextSwitchTo(oldcxt);

	st->owed -= nbatch;
	qsort(st->batch, nbatch, sizeof(ItemPointerData), swr_tid_cmp);
	st->nbatch = nbatch;
	st->blockpos = 0;
	st->tuplepos = 0;
	st->in_block = false;
}

/*
 * The heap AM counts in node->donetuples the tuples it returned.  If it
 * returned fewer than we handed out as visible (it never should: it checks
 * visibility under the same page lock and snapshot), redraw the difference.
 */
static void
swr_reconcile(SwrState *st, SampleScanState *node)
{
	if (node->donetuples < st->handed)
	{
		int64		lost = st->handed - node->donetuples;

		st->handed -= lost;
		st->invisible += lost;
		st->owed += lost;
	}
}

/*
 * The offset of the row version that draw (blockno, off) stands for and
 * this scan sees, or InvalidOffsetNumber.  The heap AM holds the page
 * share-locked while it asks us for offsets (we turned page mode off).
 */
static OffsetNumber
swr_visible_offset(SampleScanState *node, BlockNumber blockno, OffsetNumber off,
				   OffsetNumber maxoffset)
{
	TableScanDesc scan = node->ss.ss_currentScanDesc;
	HeapScanDesc hscan = (HeapScanDesc) scan;
	ItemPointerData tid;
	HeapTupleData tuple;

	if ((scan->rs_flags & SO_ALLOW_PAGEMODE) != 0 || hscan->rs_cblock != blockno)
		elog(ERROR, "TABLESAMPLE swr: heap page %u is not locked for sampling", blockno);
	if (off < FirstOffsetNumber || off > maxoffset)
		return InvalidOffsetNumber;
	ItemPointerSet(&tid, blockno, off);
	if (!heap_hot_search_buffer(&tid, scan->rs_rd, hscan->rs_cbuf, scan->rs_snapshot,
								&tuple, NULL, true))
		return InvalidOffsetNumber;
	return ItemPointerGetOffsetNumber(&tid);
}

/* ---- the TsmRoutine callbacks ---- */

static void
swr_initsamplescan(SampleScanState *node, int eflags)
{
	SwrState   *st = palloc0(sizeof(SwrState));

	st->scancxt = CurrentMemoryContext;
	node->tsm_state = st;
}

static void
swr_beginsamplescan(SampleScanState *node, Datum *params, int nparams,
					uint32 seed)
{
	SwrState   *st = (SwrState *) node->tsm_state;
	Relation	heaprel = node->ss.ss_currentRelation;
	int64		n;

	abt_require_preload();
	n = swr_sample_size(params[0]);

	if (st->index == NULL)
	{
		if (heaprel->rd_tableam != GetHeapamTableAmRoutine())
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("TABLESAMPLE swr supports only heap tables, and \"%s\" uses access method %s",
							RelationGetRelationName(heaprel),
							get_am_name(heaprel->rd_rel->relam))));
		st->index = swr_open_index(heaprel);
		st->drawcxt = AllocSetContextCreate(st->scancxt, "swr draws",
											ALLOCSET_DEFAULT_SIZES);
	}

	/*
	 * The seed is REPEATABLE's value hashed by the executor, or a random
	 * number chosen once per plan node: a rescan repeats the sample.
	 */
	abt_seed_prng(&st->prng, true, (float8) seed);
	if (st->index && st->owed + st->handed > 0)
		swr_flush_counts(st);	/* a rescan: the last round's counts */
	st->counted = false;
	st->owed = n;
	st->handed = 0;
	st->tree_rejects = 0;
	st->invisible = 0;
	st->nbatch = st->blockpos = st->tuplepos = 0;
	st->in_block = false;
	/* the snapshot the scan will use (its scan descriptor comes later) */
	mvs_reader_init(&st->versions, st->index, node->ss.ps.state->es_snapshot);
	/* an empty index: nothing to draw, and no need to try */
	st->exhausted = n > 0 && abt_total_weight(st->index) == 0;

	/* few tuples per page: check them one by one, under the page lock */
	node->use_pagemode = false;
	node->use_bulkread = false;
}

/* The end of a scan: its counts, for debugging until EXPLAIN shows them. */
static BlockNumber
swr_finish(SwrState *st, SampleScanState *node)
{
	elog(DEBUG1, "TABLESAMPLE swr on \"%s\" through \"%s\": %lld rows, %lld draws of invisible rows, %lld draws rejected by the index",
		 RelationGetRelationName(node->ss.ss_currentRelation),
		 RelationGetRelationName(st->index), (long long) st->handed,
		 (long long) st->invisible, (long long) st->tree_rejects);
	return InvalidBlockNumber;
}

static BlockNumber
swr_nextsampleblock(SampleScanState *node, BlockNumber nblocks)
{
	SwrState   *st = (SwrState *) node->tsm_state;

	swr_reconcile(st, node);
	for (;;)
	{
		if (st->blockpos < st->nbatch)
		{
			BlockNumber blkno = ItemPointerGetBlockNumber(&st->batch[st->blockpos]);

			if (blkno >= nblocks)
			{
				/*
				 * Past the end the scan saw: the row came after the
				 * snapshot.  The batch is sorted, so the rest is too.
				 */
				st->invisible += st->nbatch - st->blockpos;
				st->owed += st->nbatch - st->blockpos;
				st->nbatch = st->blockpos;
				continue;
			}
			while (st->blockpos < st->nbatch &&
				   ItemPointerGetBlockNumber(&st->batch[st->blockpos]) == blkno)
				st->blockpos++;
			return blkno;
		}

		/*
		 * Refilling needs the rejections of the whole batch, which the core
		 * would not have reported yet if it asked for blocks ahead of the
		 * tuples it samples (no version does so far).
		 */
		if (st->tuplepos < st->nbatch)
			elog(ERROR, "TABLESAMPLE swr: next block requested before the previous ones were sampled");
		if (st->exhausted || st->owed == 0 || swr_too_many_rejects(st, node, 0))
			return swr_finish(st, node);
		swr_draw_batch(st, node);
	}
}

static OffsetNumber
swr_nextsampletuple(SampleScanState *node, BlockNumber blockno,
					OffsetNumber maxoffset)
{
	SwrState   *st = (SwrState *) node->tsm_state;

	swr_reconcile(st, node);
	if (!st->in_block)
	{
		/*
		 * A new page: its draws are the next group of the batch.  Nothing is
		 * skipped here unless the core visits blocks out of the order we gave
		 * them; skipped draws are made again, which keeps the sample exact.
		 */
		while (st->tuplepos < st->nbatch &&
			   ItemPointerGetBlockNumber(&st->batch[st->tuplepos]) != blockno)
		{
			st->tuplepos++;
			st->owed++;
		}
		st->in_block = true;
	}
	while (st->tuplepos < st->nbatch &&
		   ItemPointerGetBlockNumber(&st->batch[st->tuplepos]) == blockno)
	{
		OffsetNumber off = ItemPointerGetOffsetNumber(&st->batch[st->tuplepos]);
		OffsetNumber visible;

		st->tuplepos++;
		visible = swr_visible_offset(node, blockno, off, maxoffset);
		if (OffsetNumberIsValid(visible))
		{
			st->handed++;
			return visible;
		}
		st->invisible++;
		st->owed++;
	}
	st->in_block = false;
	return InvalidOffsetNumber;
}

/* Add a scan's counts to abtree_status() (component swr), once. */
static void
swr_flush_counts(SwrState *st)
{
	if (st->counted)
		return;
	st->counted = true;
	pg_atomic_fetch_add_u64(&abt_shared->swr_scans, 1);
	pg_atomic_fetch_add_u64(&abt_shared->swr_rows, st->handed);
	pg_atomic_fetch_add_u64(&abt_shared->swr_tree_rejects, st->tree_rejects);
	pg_atomic_fetch_add_u64(&abt_shared->swr_invisible, st->invisible);
}

static void
swr_endsamplescan(SampleScanState *node)
{
	SwrState   *st = (SwrState *) node->tsm_state;

	if (st != NULL && st->index != NULL)
	{
		swr_flush_counts(st);
		index_close(st->index, NoLock);
	}
}

PG_FUNCTION_INFO_V1(swr_handler);

/*
 * swr(internal) RETURNS tsm_handler.  No preload check here: the parser and
 * the planner call the handler, and the callbacks check instead (src/README).
 */
Datum
swr_handler(PG_FUNCTION_ARGS)
{
	TsmRoutine *tsm = makeNode(TsmRoutine);

	tsm->parameterTypes = list_make1_oid(FLOAT8OID);
	/* REPEATABLE works: the same seed gives the same draws on the same data */
	tsm->repeatable_across_queries = true;
	tsm->repeatable_across_scans = true;
	tsm->SampleScanGetSampleSize = swr_samplescangetsamplesize;
	tsm->InitSampleScan = swr_initsamplescan;
	tsm->BeginSampleScan = swr_beginsamplescan;
	tsm->NextSampleBlock = swr_nextsampleblock;
	tsm->NextSampleTuple = swr_nextsampletuple;
	tsm->EndSampleScan = swr_endsamplescan;

	PG_RETURN_POINTER(tsm);
}
