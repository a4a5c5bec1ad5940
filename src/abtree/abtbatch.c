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
 * Finding and locking a group's pages is in abtbatchlock.c.
 *
 *-------------------------------------------------------------------------
 */
#include "abtbatch.h"
#include "abtree_ext.h"
#include "mvstore/mvstore.h"

#include "access/relation.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

typedef struct AbtPendingIndex
{
	Oid			relid;
	Oid			relfile;		/* the storage the entries went into */
	int			n;
	AbtPendingEntry e[ABT_BATCH_PENDING];
	List	   *other;			/* of AbtPendingOther: for storage left */
} AbtPendingIndex;

/* an entry not valid in other storage of the index than its current one */
typedef struct AbtPendingOther
{
	Oid			relfile;
	AbtPendingEntry e;
} AbtPendingOther;

static MemoryContext abt_batch_cxt = NULL;
static List *abt_pending = NIL; /* of AbtPendingIndex, in abt_batch_cxt */
static AbtKey *abt_batch_keys = NULL;	/* a flush's keys, ABT_BATCH_PENDING */


static AbtBatch *abt_batch_state = NULL;	/* a flush's, kept with the keys */
static bool abt_batch_flushing = false; /* in abt_batch_flush_index */

/*
 * Set once the commit's (or prepare's) flush has run: an entry inserted
 * after it is made valid at once (abt_batch_add), because nothing flushes
 * the list again before the commit record.
 */
static bool abt_batch_closed = false;

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
static void abt_batch_flush_at_commit(void);
static void abt_batch_xlog(AbtBatch *b, TransactionId xid, bool weighted,
						   AbtSketchOp *sketch);

/* Is itup in rel and not valid?  A descent by its key, as an insert's. */
static bool
abt_batch_still_waits(Relation rel, IndexTuple itup)
{
	AbtKey		key;
	AbtStack	stack;
	Buffer		buf;
	OffsetNumber off;
	bool		waits = false;

	abt_key_from_tuple(rel, &key, itup, false);
	buf = abt_search_leaf(rel, &key, &stack);
	if (!BufferIsValid(buf))
		return false;			/* an empty tree: TRUNCATE */
	off = abt_find_leaf_entry(rel, &key, BufferGetPage(buf));
	if (off != InvalidOffsetNumber)
	{
		Page		page = BufferGetPage(buf);
		IndexTuple	found = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		waits = !TransactionIdIsValid(abt_leaf_xmin(found));
	}
	UnlockReleaseBuffer(buf);
	return waits;
}

/* Add e (its tuple copied) to p's entries, flushing them first if full. */
static void
abt_batch_push(Relation rel, AbtPendingIndex *p, const AbtPendingEntry *e)
{
	if (p->n == ABT_BATCH_PENDING)
		abt_batch_flush_index(rel, p);
	p->e[p->n] = *e;
	p->e[p->n].itup = (IndexTuple) MemoryContextAlloc(abt_batch_cxt, IndexTupleSize(e->itup));
	memcpy(p->e[p->n].itup, e->itup, IndexTupleSize(e->itup));
	p->n++;
}

/*
 * rel's storage is another than the one p's entries went into: made in
 * this transaction (REINDEX, TRUNCATE, a rewrite, ALTER INDEX ... SET
 * TABLESPACE), or left again by ROLLBACK TO SAVEPOINT.  An entry is not
 * valid in the storage it went into until this backend flushes it there,
 * so:
 *  - the entries of the storage left wait on, aside, should it come back
 *    (a ROLLBACK TO SAVEPOINT that undoes a TRUNCATE or a REINDEX: their
 *    rows are live again, and their entries there still not valid);
 *  - those that went into the storage now current come back from aside;
 *  - a rebuild took the other rows in valid, TRUNCATE took them away, but
 *    a copy (SET TABLESPACE) holds their entries as they were, not valid:
 *    each is looked up in the new storage and, if held there not valid,
 *    waits for it too (without phase 1's hints, pages of the old storage),
 *    and stays aside for its own.
 * Dropping the entries, as the first version did, left committed rows
 * weighing nothing for ever (regress abtree_batched).
 */
static void
abt_batch_switch(Relation rel, AbtPendingIndex *p)
{
	Oid			now = abt_file_rel(rel);
	List	   *aside = NIL;
	ListCell   *lc;

	for (int j = 0; j < p->n; j++)
	{
		AbtPendingOther *o = MemoryContextAlloc(abt_batch_cxt, sizeof(AbtPendingOther));

		o->relfile = p->relfile;
		o->e = p->e[j];
		p->other = lappend(p->other, o);
	}
	p->n = 0;
	p->relfile = now;
	foreach(lc, p->other)
	{
		AbtPendingOther *o = lfirst(lc);

		if (o->relfile == now)
		{
			abt_batch_push(rel, p, &o->e);
			continue;
		}
		if (abt_batch_still_waits(rel, o->e.itup))
		{
			AbtPendingEntry copy = o->e;

			copy.hint.leaf = InvalidBlockNumber;
			copy.hint.stack.depth = 0;
			abt_batch_push(rel, p, &copy);
		}
		aside = lappend(aside, o);
	}
	p->other = aside;
}

/* Make p follow rel's storage, if it changed. */
static inline void
abt_batch_follow(Relation rel, AbtPendingIndex *p)
{
	if (p->relfile != abt_file_rel(rel))
	{
		MemoryContext old = MemoryContextSwitchTo(abt_batch_cxt);

		abt_batch_switch(rel, p);
		MemoryContextSwitchTo(old);
	}
}

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
	if (p != NULL)
		abt_batch_follow(rel, p);
	old = MemoryContextSwitchTo(abt_batch_cxt);
	if (p == NULL)
	{
		p = palloc(sizeof(AbtPendingIndex));
		p->relid = RelationGetRelid(rel);
		p->relfile = abt_file_rel(rel);
		p->n = 0;
		p->other = NIL;
		abt_pending = lappend(abt_pending, p);
	}
	p->e[p->n].itup = CopyIndexTuple(itup);
	p->e[p->n].w = w;
	p->e[p->n].subid = GetCurrentSubTransactionId();
	p->e[p->n].hint = *hint;
	p->e[p->n].hashes = hashes;
	p->n++;
	MemoryContextSwitchTo(old);
	if (abt_batch_closed)
		abt_batch_flush_at_commit();
	else if (p->n == ABT_BATCH_PENDING)
		abt_batch_flush_index(rel, p);
}

/* Before this backend reads rel's weights: its own entries count there. */
void
abt_batch_flush_rel(Relation rel)
{
	AbtPendingIndex *p;

	if (abt_pending == NIL || (p = abt_batch_find(rel)) == NULL ||
		(p->n == 0 && p->other == NIL))
		return;
	abt_batch_follow(rel, p);
	if (p->n > 0)
		abt_batch_flush_index(rel, p);
}

/*
 * Every index's, before the transaction commits or prepares, and before a
 * parallel plan starts.
 */
static void
abt_batch_flush_all(void)
{
	ListCell   *lc;

	foreach(lc, abt_pending)
	{
		AbtPendingIndex *p = lfirst(lc);
		Relation	rel;

		if (p->n == 0 && p->other == NIL)
			continue;
		/*
		 * Dropped in this transaction: for good at the commit, which forgets
		 * the list next; before it (a parallel plan) a ROLLBACK TO SAVEPOINT
		 * may bring the index back, its entries still not valid.
		 */
		rel = try_relation_open(p->relid, RowExclusiveLock);
		if (rel == NULL)
			continue;
		if (rel->rd_rel->relkind == RELKIND_INDEX && rel->rd_indam->aminsert == abtinsert)
		{
			abt_batch_follow(rel, p);
			if (p->n > 0)
				abt_batch_flush_index(rel, p);
		}
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
	abt_batch_closed = false;
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

			/*
			 * The callbacks run newest first: one registered before ours
			 * (a library preloaded before abtree) runs after this flush,
			 * and what it inserts would wait in a list that COMMIT then
			 * forgets, not valid under a committed row (TAP 042).
			 */
			abt_batch_closed = true;
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
		ListCell   *oc;

		for (int i = 0; i < p->n; i++)
			if (p->e[i].subid < mySubid)
				p->e[m++] = p->e[i];
		p->n = m;
		foreach(oc, p->other)
		{
			if (((AbtPendingOther *) lfirst(oc))->e.subid >= mySubid)
				p->other = foreach_delete_current(p->other, oc);
		}
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
	if (weighted && b->npages > b->nleaves)
	{
		/* the root, held, and the group's weight: within the limit? */
		uint64		w = 0;

		for (int j = 0; j < b->n; j++)
			if (b->leafof[j] >= 0)
				w += b->e[j].w;
		abt_check_weight_room(rel, BufferGetPage(b->pages[b->npages - 1].buf), w);
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
