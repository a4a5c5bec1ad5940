/*-------------------------------------------------------------------------
 *
 * swr_fetch.c
 *	  The fetches of a "Custom Scan (swr)" batch: its rows are read in heap
 *	  block order, with the reads issued ahead (PrefetchBuffer, or a read
 *	  stream from PostgreSQL 17 on), and each visible row is copied into its
 *	  draw, so that the rows can go out in the order drawn (issue 21, item 4).
 *
 *-------------------------------------------------------------------------
 */
#include "swr_scan.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/visibilitymap.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#if PG_VERSION_NUM >= 170000
#include "storage/read_stream.h"
#endif
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/spccache.h"

/*
 * A copy of table t's fetched row as a row of the scanned table (a partition
 * may order its columns differently), in the current memory context, with
 * its TID and table.
 */
HeapTuple
swr_copy_row(SwrScanState *st, SwrTable *t, TupleTableSlot *fetched)
{
	TupleDesc	desc = st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	Datum	   *values;
	bool	   *isnull;
	HeapTuple	tuple;

	if (t->map == NULL)
		tuple = ExecCopySlotHeapTuple(fetched);
	else
	{
		slot_getallattrs(fetched);
		values = palloc(sizeof(Datum) * desc->natts);
		isnull = palloc(sizeof(bool) * desc->natts);
		for (int i = 0; i < desc->natts; i++)
		{
			AttrNumber	from = t->map->attnums[i];

			isnull[i] = from == 0 || fetched->tts_isnull[from - 1];
			values[i] = isnull[i] ? (Datum) 0 : fetched->tts_values[from - 1];
		}
		tuple = heap_form_tuple(desc, values, isnull);
		pfree(values);
		pfree(isnull);
	}
	tuple->t_self = fetched->tts_tid;
	tuple->t_tableOid = RelationGetRelid(t->heap);
	return tuple;
}


/*
 * Draw `draw` of the batch, at the place its fetch goes to: the fetch
 * order is an array of these, so that the loops that look ahead in it read
 * memory in sequence rather than the draws' slots at random places
 * (issue 21: those reads were cache misses of their own).
 */
typedef struct SwrFetchAt
{
	int32		draw;
	int32		table;
	BlockNumber block;
	OffsetNumber off;
} SwrFetchAt;

/*
 * Reads issued ahead of a batch's fetches, in their block order.  From
 * PostgreSQL 17 on, a read stream per table (and on 18 its asynchronous
 * I/O, io_uring with io_method = io_uring); before, PrefetchBuffer up to
 * the tablespace's effective_io_concurrency distinct blocks ahead, as a
 * bitmap heap scan does.  With the blocks cached either costs about a
 * buffer look-up per block; effective_io_concurrency = 0 turns prefetching
 * off.  Only for heap tables, whose TIDs name blocks of the main fork.
 */
typedef struct SwrPrefetch
{
	SwrScanState *st;
	const SwrFetchAt *order;
	bool		on;
	int			ahead;			/* the next draw (in order) to look at */
	int32		last_table;		/* the block issued last */
	BlockNumber last_block;
#if PG_VERSION_NUM >= 170000
	ReadStream *stream;			/* reading the blocks of stream_table */
	int32		stream_table;
#else
	int			distance;		/* blocks ahead */
	int64		issued;			/* distinct blocks prefetched */
	int64		reached;		/* distinct blocks the fetches reached */
	Buffer	   *recent;			/* issued block i's buffer found (or not) by
								 * PrefetchBuffer, at i % (distance + 1) */
	OffsetNumber *first_off;	/* ... and the tuple its first draw takes */
#endif
} SwrPrefetch;

/*
 * Give table t's index fetch (the heap AM's) buf, pinned by us, the buffer
 * of the block its next fetch is in; our pin becomes its pin.  Its fetch
 * then finds the block in the buffer it holds (ReleaseAndReadBuffer does no
 * look-up for the block it already has) rather than looking it up a second
 * time after the read-ahead did.  It prunes a page only when it changes
 * buffers, which it now does not see: so prune here, as it would.
 */
static void
swr_hand_over(SwrTable *t, Buffer buf)
{
	IndexFetchHeapData *h = (IndexFetchHeapData *) t->fetch;

	Assert(t->heap->rd_rel->relam == HEAP_TABLE_AM_OID);
	if (BufferIsValid(h->xs_cbuf))
		ReleaseBuffer(h->xs_cbuf);
	h->xs_cbuf = buf;
	heap_page_prune_opt(t->heap, buf);
}

static void
swr_prefetch_begin(SwrPrefetch *pf, SwrScanState *st, const SwrFetchAt *order)
{
	pf->st = st;
	pf->order = order;
	pf->on = get_tablespace_io_concurrency(st->tables[0].heap->rd_rel->reltablespace) > 0;
	for (int i = 0; i < st->ntables; i++)
		if (st->tables[i].heap->rd_rel->relam != HEAP_TABLE_AM_OID)
			pf->on = false;
	pf->ahead = 0;
	pf->last_table = -1;
	pf->last_block = InvalidBlockNumber;
#if PG_VERSION_NUM >= 170000
	pf->stream = NULL;
	pf->stream_table = -1;
#else
	pf->distance = get_tablespace_io_concurrency(st->tables[0].heap->rd_rel->reltablespace);
	pf->issued = pf->reached = 0;
	pf->recent = pf->on ? palloc(sizeof(Buffer) * (pf->distance + 1)) : NULL;
	pf->first_off = pf->on ? palloc(sizeof(OffsetNumber) * (pf->distance + 1)) : NULL;
#endif
}

/* Fetches j and k (in fetch order) in the same block of the same table? */
static inline bool
swr_same_block(const SwrFetchAt *order, int j, int k)
{
	return order[j].table == order[k].table && order[j].block == order[k].block;
}

/*
 * The next block ahead that no earlier draw (in fetch order) is in, or
 * InvalidBlockNumber when there is none (of table, if table >= 0); its
 * table in *blk_table.
 */
static BlockNumber
swr_ahead_block(SwrPrefetch *pf, int32 table, int32 *blk_table)
{
	while (pf->ahead < pf->st->nfetch)
	{
		const SwrFetchAt *at = &pf->order[pf->ahead];

		if (table >= 0 && at->table != table)
			break;
		pf->ahead++;
		if (at->table == pf->last_table && at->block == pf->last_block)
			continue;
		pf->last_table = at->table;
		pf->last_block = at->block;
		*blk_table = at->table;
		return at->block;
	}
	return InvalidBlockNumber;
}

#if PG_VERSION_NUM >= 170000

static BlockNumber
swr_stream_next(ReadStream *stream, void *private, void *per_buffer_data)
{
	SwrPrefetch *pf = (SwrPrefetch *) private;
	int32		table;

	return swr_ahead_block(pf, pf->stream_table, &table);
}

/*
 * The fetches are at draw k (in order): at a new block, hand the stream's
 * buffer of it to the table's fetch, starting a stream when the table
 * changes.
 */
static void
swr_prefetch_advance(SwrPrefetch *pf, int k)
{
	SwrScanState *st = pf->st;
	const SwrFetchAt *at = &pf->order[k];
	Buffer		buf;

	if (!pf->on || (k > 0 && swr_same_block(pf->order, k - 1, k)))
		return;
	if (pf->stream == NULL || at->table != pf->stream_table)
	{
		if (pf->stream)
			read_stream_end(pf->stream);
		pf->stream_table = at->table;
		pf->ahead = k;
		pf->last_table = -1;
		pf->stream = read_stream_begin_relation(READ_STREAM_DEFAULT, NULL,
												st->tables[at->table].heap, MAIN_FORKNUM,
												swr_stream_next, pf, 0);
	}
	buf = read_stream_next_buffer(pf->stream, NULL);
	Assert(BufferGetBlockNumber(buf) == at->block);
	swr_hand_over(&st->tables[at->table], buf);
}

static void
swr_prefetch_end(SwrPrefetch *pf)
{
	if (pf->stream)
		read_stream_end(pf->stream);
}

#else

/*
 * The fetches are at draw k (in order): keep distance blocks issued ahead
 * (asking the CPU for the line pointer of each block's first draw too), and
 * at a new block hand its buffer to the table's fetch, through the buffer
 * PrefetchBuffer found it in (abt_read_recent).
 */
static void
swr_prefetch_advance(SwrPrefetch *pf, int k)
{
	SwrScanState *st = pf->st;
	const SwrFetchAt *at = &pf->order[k];
	SwrTable   *t = &st->tables[at->table];
	int			ring = pf->distance + 1;
	int64		issued_before;

	if (!pf->on || (k > 0 && swr_same_block(pf->order, k - 1, k)))
		return;
	pf->reached++;
	issued_before = pf->issued;
	while (pf->issued < pf->reached + pf->distance)
	{
		int32		table;
		BlockNumber blk = swr_ahead_block(pf, -1, &table);
		Buffer		recent;

		if (!BlockNumberIsValid(blk))
			break;
		/* hints twice as far ahead, their buffers' descriptors half as far */
		if (pf->ahead + 2 * ABT_PREFETCH_AHEAD < st->nfetch)
		{
			const SwrFetchAt *later = &pf->order[pf->ahead + 2 * ABT_PREFETCH_AHEAD];

			abt_hint_prefetch(st->tables[later->table].heap, later->block);
		}
		if (pf->ahead + ABT_PREFETCH_AHEAD < st->nfetch)
		{
			const SwrFetchAt *later = &pf->order[pf->ahead + ABT_PREFETCH_AHEAD];

			abt_hint_prefetch_buffer(st->tables[later->table].heap, later->block);
		}
		recent = abt_prefetch_page(st->tables[table].heap, blk, false);
		if (BufferIsValid(recent))
			abt_prefetch(PageGetItemId(BufferGetPage(recent), pf->order[pf->ahead - 1].off));
		pf->recent[pf->issued % ring] = recent;
		pf->first_off[pf->issued % ring] = pf->order[pf->ahead - 1].off;
		pf->issued++;
	}
	/*
	 * The next block's first tuple, through its line pointer asked for when
	 * the block was issued, if that was in an earlier call (just asked for,
	 * reading it would wait; so not with a distance of 1): the miss on the
	 * tuple header in heap_hot_search_buffer then overlaps this fetch.
	 * Unpinned: the line pointer is a hint for an address only (prefetches
	 * do not fault).
	 */
	if (pf->reached < issued_before && BufferIsValid(pf->recent[pf->reached % ring]))
	{
		Page		page = BufferGetPage(pf->recent[pf->reached % ring]);

		abt_prefetch_item(page, PageGetItemId(page, pf->first_off[pf->reached % ring]));
	}
	/* the block of draw k was issued last time or just now */
	Assert(pf->issued >= pf->reached);
	swr_hand_over(t, abt_read_recent(t->heap, at->block,
									 pf->recent[(pf->reached - 1) % ring]));
}

static void
swr_prefetch_end(SwrPrefetch *pf)
{
	if (pf->recent)
		pfree(pf->recent);
	if (pf->first_off)
		pfree(pf->first_off);
}

#endif

/*
 * May a snapshot take a page's all-visible mark (the page's flag, or the
 * visibility map's bit) for every tuple's visibility?  heapgetpage's rule:
 * not a snapshot taken during recovery, where the mark may be ahead of it,
 * and not in a serializable transaction, whose reads owe predicate locks.
 */
static inline bool
swr_trusts_all_visible(Snapshot snapshot)
{
	return !snapshot->takenDuringRecovery && !IsolationIsSerializable();
}

/*
 * Under the block's share lock: replace each fetch's offset by that of the
 * tuple the snapshot sees, or InvalidOffsetNumber.  With the page cached a
 * fetch costs its cache misses (a line pointer and a tuple header at
 * random places in the page): ask for those two and four fetches ahead,
 * and for each tuple found, which the copies then read.
 */
static void
swr_block_find(SwrScanState *st, SwrFetchAt *order, int k, int end, SwrTable *t,
			   Snapshot snapshot)
{
	Buffer		buf = ((IndexFetchHeapData *) t->fetch)->xs_cbuf;
	Page		page = BufferGetPage(buf);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	bool		all_visible = PageIsAllVisible(page) && swr_trusts_all_visible(snapshot);
	bool		read_tuples = !all_visible || st->empty_row == NULL;

	for (int j = k; j < end; j++)
	{
		OffsetNumber off = order[j].off;

		if (j + 4 < end)
			abt_prefetch(PageGetItemId(page, order[j + 4].off));
		if (read_tuples && j + 2 < end && order[j + 2].off <= maxoff &&
			ItemIdIsNormal(PageGetItemId(page, order[j + 2].off)))
			abt_prefetch(PageGetItem(page, PageGetItemId(page, order[j + 2].off)));
		if (!all_visible)
		{
			ItemPointerData tid;
			HeapTupleData tuple;

			ItemPointerSet(&tid, order[j].block, off);
			off = heap_hot_search_buffer(&tid, t->heap, buf, snapshot, &tuple, NULL, true) ?
				ItemPointerGetOffsetNumber(&tid) : InvalidOffsetNumber;
		}
		else
		{
			if (off >= FirstOffsetNumber && off <= maxoff &&
				ItemIdIsRedirected(PageGetItemId(page, off)))
				off = ItemIdGetRedirect(PageGetItemId(page, off));
			if (off < FirstOffsetNumber || off > maxoff ||
				!ItemIdIsNormal(PageGetItemId(page, off)))
				off = InvalidOffsetNumber;
		}
		order[j].off = off;
		if (off != InvalidOffsetNumber && st->empty_row == NULL)
			abt_prefetch(PageGetItem(page, PageGetItemId(page, off)));
	}
}

/*
 * After the lock: each found row into its draw, a copy (as a row of the
 * scanned table), or the row of NULLs of a plan that reads no column.
 */
static void
swr_block_copy(SwrScanState *st, const SwrFetchAt *order, int k, int end, SwrTable *t)
{
	Buffer		buf = ((IndexFetchHeapData *) t->fetch)->xs_cbuf;
	Page		page = BufferGetPage(buf);

	for (int j = k; j < end; j++)
	{
		SwrDraw    *d = &st->batch[order[j].draw];
		HeapTupleData tuple;
		ItemId		lp;

		if (j + ABT_PREFETCH_AHEAD < st->nfetch)
			abt_prefetch_write(&st->batch[order[j + ABT_PREFETCH_AHEAD].draw].row);
		d->row = NULL;
		if (order[j].off == InvalidOffsetNumber)
			continue;
		if (st->empty_row != NULL)
		{
			d->row = st->empty_row;
			continue;
		}
		lp = PageGetItemId(page, order[j].off);
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		tuple.t_len = ItemIdGetLength(lp);
		ItemPointerSet(&tuple.t_self, order[j].block, order[j].off);
		tuple.t_tableOid = RelationGetRelid(t->heap);
		if (t->map == NULL)
			d->row = heap_copytuple(&tuple);
		else
		{
			ExecStoreBufferHeapTuple(&tuple, t->slot, buf);
			d->row = swr_copy_row(st, t, t->slot);
		}
	}
}

/*
 * The fetches order[k..end), all in one block of t, a heap table, each
 * found as heapam's index fetch finds it (heap_hot_search_buffer: the
 * member of the row's HOT chain the snapshot sees) but under one share
 * lock for the block instead of one per fetch.  On an all-visible page
 * every tuple is visible to every snapshot and there are no dead ones, so
 * a draw's row is the tuple its line pointer leads to, through the
 * redirect a pruned chain's root became: no tuple header is read for
 * visibility (heapgetpage's rule, so not for a snapshot taken during
 * recovery, where the flag may be ahead of it, nor in a serializable
 * transaction, whose reads take predicate locks in the search).  The
 * fetches were a third of a swr(100000) on 1M rows
 * (bench/results/block_fetch.md).  The copies are made after the lock
 * goes: the pin keeps the tuples where they are.  A plan that reads no
 * column (st->empty_row) gets no copies, and on an all-visible page no
 * tuple is read.
 */
static void
swr_fetch_block(SwrScanState *st, SwrFetchAt *order, int k, int end, SwrTable *t,
				Snapshot snapshot)
{
	IndexFetchHeapData *h = (IndexFetchHeapData *) t->fetch;
	BlockNumber blk = order[k].block;

	if (!BufferIsValid(h->xs_cbuf) || BufferGetBlockNumber(h->xs_cbuf) != blk)
	{
		/* no read-ahead handed it over: read it as the heap's fetch would */
		h->xs_cbuf = ReleaseAndReadBuffer(h->xs_cbuf, t->heap, blk);
		heap_page_prune_opt(t->heap, h->xs_cbuf);
	}
	LockBuffer(h->xs_cbuf, BUFFER_LOCK_SHARE);
	swr_block_find(st, order, k, end, t, snapshot);
	LockBuffer(h->xs_cbuf, BUFFER_LOCK_UNLOCK);
	swr_block_copy(st, order, k, end, t);
}

/*
 * What the plan reads of its rows, decided once at the start of the scan.
 *
 * A plan that reads no column (count(*): no Var in the output, no WHERE; a
 * row mark or a whole-row reference is a Var): the fetches only decide
 * which draws are visible, and each row returned is the same row of NULLs
 * instead of a copy (st->empty_row; swr_fetch_block, swr_index_only).
 *
 * Otherwise, when every column the plan reads, in its output and in its
 * WHERE, is a plain column of every table's sample index with the table's
 * own type (key or INCLUDE: abtree returns them all), index-only draws
 * give rows made of those columns (swr_cover_row) and NULL elsewhere,
 * which nothing reads.  Not for system columns or a whole-row reference
 * (attno <= 0), nor a column an index has only inside an expression, nor
 * under a snapshot that may not take the visibility map's word (then no
 * draw is index-only, and copying the entries' columns would be wasted).
 * Sets st->covered and each table's cover; the draws then copy their
 * entries' columns.
 */
void
swr_plan_cover(SwrScanState *st)
{
	Plan	   *plan = st->css.ss.ps.plan;
	Index		scanrelid = ((Scan *) plan)->scanrelid;
	TupleDesc	scandesc = st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	Snapshot	snapshot = st->css.ss.ps.state->es_snapshot;
	int			flags = PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS |
		PVC_RECURSE_PLACEHOLDERS;
	List	   *vars;
	Bitmapset  *read = NULL;
	ListCell   *lc;

	st->covered = false;
	if (plan->qual == NIL && !contain_var_clause((Node *) plan->targetlist))
	{
		Datum	   *values = palloc0(sizeof(Datum) * Max(scandesc->natts, 1));
		bool	   *isnull = palloc(sizeof(bool) * Max(scandesc->natts, 1));

		memset(isnull, true, sizeof(bool) * Max(scandesc->natts, 1));
		st->empty_row = heap_form_tuple(scandesc, values, isnull);
		return;
	}
	if (!IsMVCCSnapshot(snapshot) || !swr_trusts_all_visible(snapshot))
		return;
	vars = list_concat(pull_var_clause((Node *) plan->targetlist, flags),
					   pull_var_clause((Node *) plan->qual, flags));
	foreach(lc, vars)
	{
		Var		   *var = lfirst_node(Var, lc);

		if (var->varno != scanrelid || var->varlevelsup != 0 || var->varattno <= 0)
			return;
		read = bms_add_member(read, var->varattno);
	}
	for (int i = 0; i < st->ntables; i++)
	{
		SwrTable   *t = &st->tables[i];
		TupleDesc	idesc = RelationGetDescr(t->index);
		Bitmapset  *missing = bms_copy(read);
		int			a = -1;

		t->cover = palloc0(sizeof(AttrNumber) * idesc->natts);
		while ((a = bms_next_member(read, a)) >= 0)
		{
			AttrNumber	tattno = t->map ? t->map->attnums[a - 1] : a;

			for (int k = 0; k < idesc->natts; k++)
			{
				if (t->index->rd_index->indkey.values[k] != tattno || tattno == 0 ||
					TupleDescAttr(idesc, k)->atttypid != TupleDescAttr(scandesc, a - 1)->atttypid)
					continue;
				t->cover[k] = a;
				missing = bms_del_member(missing, a);
			}
		}
		if (!bms_is_empty(missing))
			return;
	}
	st->covered = true;
}

/*
 * The row of draw d of table t made of its entry's columns (swr_plan_cover),
 * in the current memory context, with its TID and table.  values and
 * isnull are work arrays of the scan's width.
 */
static HeapTuple
swr_cover_row(SwrScanState *st, SwrTable *t, SwrDraw *d, Datum *values, bool *isnull)
{
	TupleDesc	desc = st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	int			natts = RelationGetDescr(t->index)->natts;
	HeapTuple	row;

	memset(isnull, true, sizeof(bool) * desc->natts);
	for (int k = 0; k < natts; k++)
	{
		if (t->cover[k] == 0)
			continue;
		values[t->cover[k] - 1] = d->values[k];
		isnull[t->cover[k] - 1] = d->isnull[k];
	}
	row = heap_form_tuple(desc, values, isnull);
	row->t_self = d->tid;
	row->t_tableOid = RelationGetRelid(t->heap);
	return row;
}

/*
 * Index-only draws (index-only scans' rule).  A plan that reads no column
 * (st->empty_row) needs to know only that a draw's row is visible, and one
 * that reads only its sample indexes' columns (st->covered) gets them from
 * the entry (a HOT chain's members agree on every indexed column).  On a
 * heap page the visibility map marks all-visible every tuple is visible to
 * every snapshot, and a valid index entry's row is there (VACUUM removes
 * the entries of dead rows before it can mark the page), so such a draw
 * gets the row of NULLs, or the row made of its entry's columns, and its
 * heap page is not read.  The map is read without a lock on the heap
 * page, as index-only scans read it: the draw
 * read its entry under the leaf's share lock, after the flush that made
 * the entry valid under the leaf's exclusive lock, which came after the
 * heap insert cleared the page's bit, so a recent insert's cleared bit is
 * seen; a delete clears the bit before its transaction can commit, and a
 * snapshot that sees the delete was taken after that.  Not in a
 * serializable transaction (a read without the heap would owe the page a
 * predicate lock), nor for a snapshot taken during recovery (as the
 * all-visible shortcut of swr_block_find).  Sets batch[i].row of the draws
 * settled; returns how many are left, with keys[0..m) their places.
 */
static int
swr_index_only(SwrScanState *st, Snapshot snapshot, AbtKeyed *keys)
{
	bool		on = (st->empty_row != NULL || st->covered) && IsMVCCSnapshot(snapshot) &&
		swr_trusts_all_visible(snapshot);
	int			natts = st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts;
	Datum	   *values = st->covered ? palloc0(sizeof(Datum) * Max(natts, 1)) : NULL;
	bool	   *isnull = st->covered ? palloc(sizeof(bool) * Max(natts, 1)) : NULL;
	int			m = 0;

	for (int i = 0; i < st->nbatch; i++)
	{
		SwrDraw    *d = &st->batch[i];
		SwrTable   *t = &st->tables[d->table];
		BlockNumber blk = ItemPointerGetBlockNumber(&d->tid);

		if (on && t->heap->rd_rel->relam == HEAP_TABLE_AM_OID &&
			VM_ALL_VISIBLE(t->heap, blk, &t->vmbuf))
		{
			d->row = st->covered ? swr_cover_row(st, t, d, values, isnull) : st->empty_row;
			st->index_only++;
			continue;
		}
		keys[m].key = blk;
		keys[m].val = i;
		m++;
	}
	return m;
}

/*
 * Fetch the rows of batch[0..nbatch) in heap block order, each as the
 * snapshot sees it (following HOT chains), and keep a copy of each in its
 * draw: the rows go out in the order drawn (swr_next), not in this one.  A
 * draw whose row the snapshot cannot see keeps no row.  Called in drawcxt.
 */
void
swr_fetch_batch(SwrScanState *st)
{
	Snapshot	snapshot = st->css.ss.ps.state->es_snapshot;
	SwrFetchAt *order = abt_scratch_alloc(sizeof(SwrFetchAt) * Max(st->nbatch, 1));
	AbtKeyed   *keys = abt_scratch_alloc(sizeof(AbtKeyed) * Max(st->nbatch, 1));
	SwrPrefetch pf;

	/*
	 * The fetch order: by table, then block, so that draws of one block
	 * share one buffer look-up and the reads can be issued ahead.  Radix
	 * sorts are stable: by block, then by table.  Within a block the draws
	 * stay in the order drawn: sorting by offset too took one more pass
	 * (a block number of a table under 16 GB has at most 21 bits, two
	 * digits; with the offset three) and gained nothing, the page being
	 * in the cache after its first draw.
	 */
	st->nfetch = swr_index_only(st, snapshot, keys);
	abt_sort_keyed(keys, st->nfetch);
	if (st->ntables > 1)
	{
		for (int i = 0; i < st->nfetch; i++)
			keys[i].key = st->batch[keys[i].val].table;
		abt_sort_keyed(keys, st->nfetch);
	}
	for (int i = 0; i < st->nfetch; i++)
	{
		SwrDraw    *d = &st->batch[keys[i].val];

		order[i].draw = keys[i].val;
		order[i].table = d->table;
		order[i].block = ItemPointerGetBlockNumber(&d->tid);
		order[i].off = ItemPointerGetOffsetNumber(&d->tid);
	}
	abt_scratch_free(keys);
	swr_prefetch_begin(&pf, st, order);
	for (int k = 0; k < st->nfetch; k++)
	{
		SwrDraw    *d = &st->batch[order[k].draw];
		SwrTable   *t = &st->tables[order[k].table];
		ItemPointerData tid;
		bool		call_again = false;
		bool		all_dead = false;

		CHECK_FOR_INTERRUPTS();
		/* the slot the row goes to, a few draws ahead */
		if (k + ABT_PREFETCH_AHEAD < st->nfetch)
			abt_prefetch_write(&st->batch[order[k + ABT_PREFETCH_AHEAD].draw].row);
		swr_prefetch_advance(&pf, k);
		if (t->heap->rd_rel->relam == HEAP_TABLE_AM_OID && IsMVCCSnapshot(snapshot))
		{
			int			end = k + 1;

			while (end < st->nfetch && swr_same_block(order, k, end))
				end++;
			swr_fetch_block(st, order, k, end, t, snapshot);
			/* the read-ahead has nothing to do within a block */
			k = end - 1;
			continue;
		}
		ItemPointerSet(&tid, order[k].block, order[k].off);
		d->row = NULL;
		if (table_index_fetch_tuple(t->fetch, &tid, snapshot, t->slot,
									&call_again, &all_dead))
			d->row = swr_copy_row(st, t, t->slot);
	}
	swr_prefetch_end(&pf);
	abt_scratch_free(order);
}
