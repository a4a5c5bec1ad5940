/*-------------------------------------------------------------------------
 *
 * swr_draw.c
 *	  The draws of a "Custom Scan (swr)" and the fetches of their rows.
 *
 *-------------------------------------------------------------------------
 */
#include "swr_scan.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/spccache.h"

/* ---- draws ---- */

/*
 * What each table's index offers the next batch; false if nothing at all.
 * A table is chosen with probability total / sum and a descent in it
 * returns an entry with probability w / total, so every entry of every
 * table is drawn with probability w / sum.
 */
bool
swr_weigh_tables(SwrScanState *st)
{
	double		sum = 0;
	int			i;

	for (i = 0; i < st->ntables; i++)
	{
		SwrTable   *t = &st->tables[i];

		t->total = t->empty ? 0 :
			abt_sample_total(t->index, t->has_range ? &t->range : NULL, &t->reader);
		sum += t->total;
		st->cumtotal[i] = sum;
	}
	return sum > 0;
}

/* The table of the next draw: each with probability total / sum. */
static int
swr_choose_table(SwrScanState *st)
{
	double		u = pg_prng_double(&st->prng) * st->cumtotal[st->ntables - 1];
	int			lo = 0;
	int			hi = st->ntables - 1;

	/* the first table whose running sum exceeds u */
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (st->cumtotal[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Make count attempts at batch[from...]: choose each one's table, then
 * descend each table's index once for all of its attempts
 * (abt_sample_batch, src/abtree/README "Batched draws").  The accepted ones
 * are kept, in the order drawn, from batch[from] on; returns how many, and
 * sets *moved to how many were rejected because a page moved under the
 * descent (abt_sample_round).  Called in drawcxt.
 */
static int
swr_attempt(SwrScanState *st, int from, int count, int *moved)
{
	SwrDraw    *b = st->batch + from;
	AbtDraw    *ad = abt_scratch_alloc(sizeof(AbtDraw) * count);
	int		   *order = abt_scratch_alloc(sizeof(int) * count);	/* attempts by table */
	int		   *start = palloc0(sizeof(int) * (st->ntables + 1));
	int		   *next = palloc(sizeof(int) * st->ntables);
	int			got = 0;
	AbtDrawColumns cols = {NULL, NULL};
	int			natts = 0;

	*moved = 0;
	for (int k = 0; k < count; k++)
	{
		b[k].table = st->ntables > 1 ? swr_choose_table(st) : 0;
		b[k].u = pg_prng_double(&st->prng);
		start[b[k].table + 1]++;
	}
	for (int i = 0; i < st->ntables; i++)
	{
		start[i + 1] += start[i];
		next[i] = start[i];
	}
	for (int k = 0; k < count; k++)
		order[next[b[k].table]++] = k;

	for (int i = 0; i < st->ntables; i++)
	{
		SwrTable   *t = &st->tables[i];
		int			n = start[i + 1] - start[i];
		int			tmoved;

		if (n == 0)
			continue;
		for (int j = start[i]; j < start[i + 1]; j++)
			ad[j].u = b[order[j]].u;
		if (st->covered)
		{
			natts = RelationGetDescr(t->index)->natts;
			cols.values = palloc(sizeof(Datum) * n * natts);
			cols.isnull = palloc(sizeof(bool) * n * natts);
		}
		abt_sample_batch(t->index, t->has_range ? &t->range : NULL, &t->reader,
						 ad + start[i], n, st->covered ? &cols : NULL, &tmoved);
		*moved += tmoved;
		if (n > 1)
			st->unjudged += tmoved;
		st->descents++;
		for (int j = start[i]; j < start[i + 1]; j++)
		{
			b[order[j]].accepted = ad[j].accepted;
			b[order[j]].tid = ad[j].tid;
			if (st->covered)
			{
				b[order[j]].values = cols.values + (j - start[i]) * natts;
				b[order[j]].isnull = cols.isnull + (j - start[i]) * natts;
			}
		}
		t->cur.draws += n;
	}
	st->cur.draws += count;

	for (int k = 0; k < count; k++)
	{
		if (b[k].accepted)
			b[got++] = b[k];
		else
		{
			st->cur.tree_rejects++;
			st->tables[b[k].table].cur.tree_rejects++;
		}
	}
	abt_scratch_free(ad);
	abt_scratch_free(order);
	pfree(start);
	pfree(next);
	return got;
}

/*
 * Draws that produce rows: in redraw mode the rows returned, in standard
 * mode also those WHERE removed (they were draws of the table all right).
 */
static int64
swr_accepted(SwrScanState *st)
{
	return st->cur.rows + (st->where == SWR_WHERE_STANDARD ? st->cur.filtered : 0);
}

/*
 * Draws rejected, as judged against the rows (swr_too_many_rejects): not
 * those rejected because a page moved under a descent of several draws,
 * which can be the descent's own doing, since a longer descent gives
 * inserts more time to land under it (abt_sample_round); under heavy
 * inserts they can outnumber the draws many times over before the descents
 * have shrunk.  Those of single descents count.
 */
static int64
swr_rejected(SwrScanState *st)
{
	return st->cur.tree_rejects - st->unjudged + st->cur.invisible +
		(st->where == SWR_WHERE_REDRAW ? st->cur.filtered : 0);
}

/* The scan slot holding row, a copy made by swr_copy_row. */
static TupleTableSlot *
swr_scan_row(SwrScanState *st, HeapTuple row)
{
	TupleTableSlot *scanslot = st->css.ss.ss_ScanTupleSlot;

	ExecStoreHeapTuple(row, scanslot, false);
	return scanslot;
}

/* Does row (in the scan slot) pass WHERE?  Counts and reports failures. */
static bool
swr_row_qualifies(SwrScanState *st, TupleTableSlot *slot)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;

	if (st->qual == NULL)
		return true;
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = slot;
	return ExecQual(st->qual, econtext);
}

/* The weight of a fetched row, from its table column (1 if unweighted). */
static bool
swr_row_has_weight(SwrTable *t, TupleTableSlot *fetched)
{
	AbtIndexInfo *info = abt_index_info(t->index);
	AttrNumber	att;
	bool		isnull;
	Datum		w;

	if (!info->weighted)
		return true;
	att = t->index->rd_index->indkey.values[info->weight_attno - 1];
	if (att <= 0)
		return true;			/* an expression: trust the index */
	w = slot_getattr(fetched, att, &isnull);
	return abt_weight_from_datum(w, isnull, info->weight_type) > 0;
}

/*
 * Could this scan return any row at all: a row of positive weight, visible
 * to the snapshot, and (redraw mode) satisfying WHERE?  An ordinary index
 * scan of every table; it runs only when draws keep being rejected, to
 * tell "nothing" (return no rows) from "very little" (ERROR).
 */
static bool
swr_any_row(SwrScanState *st)
{
	Snapshot	snapshot = st->css.ss.ps.state->es_snapshot;
	bool		found = false;
	int			i;

	for (i = 0; i < st->ntables && !found; i++)
	{
		SwrTable   *t = &st->tables[i];
		IndexScanDesc scan;

		if (t->empty)
			continue;
#if PG_VERSION_NUM >= 180000
		scan = index_beginscan(t->heap, t->index, snapshot, NULL, 0, 0);
#else
		scan = index_beginscan(t->heap, t->index, snapshot, 0, 0);
#endif
		index_rescan(scan, NULL, 0, NULL, 0);
		while (!found && index_getnext_slot(scan, ForwardScanDirection, t->slot))
		{
			CHECK_FOR_INTERRUPTS();
			if (!swr_row_has_weight(t, t->slot))
				continue;
			if (st->where == SWR_WHERE_STANDARD)
				found = true;
			else
			{
				HeapTuple	row = swr_copy_row(st, t, t->slot);

				found = swr_row_qualifies(st, swr_scan_row(st, row));
				ExecClearTuple(st->css.ss.ss_ScanTupleSlot);
				heap_freetuple(row);
			}
		}
		index_endscan(scan);
	}
	return found;
}

/*
 * Have too many draws been rejected?  pending: draws of the current batch
 * not yet resolved.  Returns true (the scan ends) when no row can be
 * returned at all; raises an ERROR when some can, but too few draws find
 * them to finish in reasonable time.
 */
static bool
swr_too_many_rejects(SwrScanState *st, int pending)
{
	SwrTable   *t = &st->tables[0];

	if (st->where == SWR_WHERE_ATTEMPTS ||
		swr_rejected(st) <= (int64) SWR_MAX_REJECTS_PER_ROW * (swr_accepted(st) + pending + 1))
		return false;
	if (swr_accepted(st) == 0 && !swr_any_row(st))
	{
		st->exhausted = true;
		st->owed = 0;
		return true;
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("TABLESAMPLE swr rejected too many draws from index \"%s\"",
					RelationGetRelationName(t->index)),
			 errdetail("%lld draws found rows this query cannot see, %lld rows failed the WHERE clause and the index rejected %lld, while %lld rows were returned.",
					   (long long) st->cur.invisible, (long long) st->cur.filtered,
					   (long long) st->cur.tree_rejects, (long long) st->cur.rows),
			 st->cur.filtered > st->cur.invisible + st->cur.tree_rejects ?
			 errhint("Fewer than 1 in %d draws satisfies WHERE. Restrict the index's first column in WHERE, or SET abtree.swr_where = standard to filter n draws instead of redrawing.",
					 SWR_MAX_REJECTS_PER_ROW) :
			 errhint("Fewer than 1 in %d draws finds a visible row. VACUUM the table to remove deleted rows, or sample after large uncommitted insertions end.",
					 SWR_MAX_REJECTS_PER_ROW)));
	return false;				/* keep compiler quiet */
}

/*
 * Draw the next batch of up to batchmax owed draws, then fetch their rows in
 * heap block order (swr_fetch_batch).  The rows go out in the order drawn,
 * never sorted: sorting them by TID made swr(n) LIMIT k return the k lowest
 * of n draws, not k draws (issue 21, item 3).  While no row has come back, a
 * batch is no larger than the rejection bound, so that a scan that can
 * return nothing is recognised after that many draws.
 */
static void
swr_draw_batch(SwrScanState *st)
{
	int64		want = Min(st->owed, st->batchmax);
	int			nbatch = 0;
	int			attempts;
	MemoryContext oldcxt;

	if (st->where != SWR_WHERE_ATTEMPTS)
		want = Min(want, (int64) SWR_MAX_REJECTS_PER_ROW * (swr_accepted(st) + 1));
	if (want > st->batchcap)
	{
		/* kept between queries (abt_scratch_alloc); given back by swr_end */
		if (st->batch)
			abt_scratch_free(st->batch);
		oldcxt = MemoryContextSwitchTo(st->scancxt);
		st->batch = abt_scratch_alloc(sizeof(SwrDraw) * want);
		MemoryContextSwitchTo(oldcxt);
		st->batchcap = want;
	}

	/* the scan slot may still show a row of the batch the reset frees */
	ExecClearTuple(st->css.ss.ss_ScanTupleSlot);
	MemoryContextReset(st->drawcxt);
	oldcxt = MemoryContextSwitchTo(st->drawcxt);
	st->batches++;
	if (!swr_weigh_tables(st))
	{
		/* no entry the snapshot can see: the sample of nothing is empty */
		st->exhausted = true;
		st->owed = 0;
	}
	if (st->exhausted)
		attempts = 0;
	else if (st->where == SWR_WHERE_ATTEMPTS)
	{
		/* every descent is one of the shard's attempts, rejected or not */
		int			moved;

		nbatch = swr_attempt(st, 0, want, &moved);
		attempts = want;
	}
	else
	{
		while (nbatch < want && !st->exhausted)
		{
			int			tried = Min(want - nbatch, st->round);
			int			moved;

			CHECK_FOR_INTERRUPTS();
			nbatch += swr_attempt(st, nbatch, tried, &moved);
			/* only rejections for pages that moved come from the round's size */
			st->round = abt_sample_round(st->round, tried, moved, st->batchmax);
			if (nbatch < want && swr_too_many_rejects(st, nbatch))
				nbatch = 0;
		}
		attempts = nbatch;
	}
	if (nbatch > 0)
	{
		st->nbatch = nbatch;
		swr_fetch_batch(st);
	}
	MemoryContextSwitchTo(oldcxt);

	if (!st->exhausted)
		st->owed -= attempts;
	st->nbatch = nbatch;
	st->pos = 0;
}

/*
 * The access method under ExecScan: the next row drawn.  Every draw ends as
 * a row returned, or as a rejection that is made again (owed++), except in
 * standard mode, where a row WHERE removes is a draw used up.
 */
TupleTableSlot *
swr_next(ScanState *ss)
{
	SwrScanState *st = (SwrScanState *) ss;

	/*
	 * A probe, swr_shard(0) (swr_citus_exec.c), gets one row of NULLs whose
	 * tableoid names the shard, so that the query's target list can weigh
	 * the shard.
	 */
	if (st->probe)
	{
		if (st->probed)
			return ExecClearTuple(ss->ss_ScanTupleSlot);
		st->probed = true;
		ExecStoreAllNullTuple(ss->ss_ScanTupleSlot);
		ss->ss_ScanTupleSlot->tts_tableOid = RelationGetRelid(ss->ss_currentRelation);
		return ss->ss_ScanTupleSlot;
	}

	for (;;)
	{
		SwrDraw    *d;
		SwrTable   *t;
		TupleTableSlot *slot;

		if (st->pos >= st->nbatch)
		{
			if (st->exhausted || st->owed == 0 || swr_too_many_rejects(st, 0))
				return ExecClearTuple(ss->ss_ScanTupleSlot);
			swr_draw_batch(st);
			continue;
		}
		CHECK_FOR_INTERRUPTS();
		/* the copies go out in draw order, not the order they were made */
		if (st->pos + ABT_PREFETCH_AHEAD < st->nbatch &&
			st->batch[st->pos + ABT_PREFETCH_AHEAD].row != NULL)
		{
			HeapTuple	ahead = st->batch[st->pos + ABT_PREFETCH_AHEAD].row;

			/* a copy is one chunk: header, then the tuple (swr_copy_row) */
			abt_prefetch(ahead);
			abt_prefetch((char *) ahead + HEAPTUPLESIZE + 32);
		}
		d = &st->batch[st->pos++];
		t = &st->tables[d->table];
		if (d->row == NULL)
		{
			st->cur.invisible++;
			t->cur.invisible++;
			if (st->where != SWR_WHERE_ATTEMPTS)
				st->owed++;
			continue;
		}
		slot = swr_scan_row(st, d->row);
		if (!swr_row_qualifies(st, slot))
		{
			st->cur.filtered++;
			t->cur.filtered++;
			InstrCountFiltered1(ss, 1);
			if (st->where == SWR_WHERE_REDRAW)
				st->owed++;
			continue;
		}
		st->cur.rows++;
		t->cur.rows++;
		return slot;
	}
}
