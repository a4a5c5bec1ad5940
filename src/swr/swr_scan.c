/*-------------------------------------------------------------------------
 *
 * swr_scan.c
 *	  The executor of "Custom Scan (swr)": n independent draws with
 *	  replacement, each row with probability proportional to its weight in
 *	  its table's abtree index (paper 000, sections 2.2, 5.1 and 6).
 *
 * This file holds the node's life cycle (begin, start, rescan, end,
 * EXPLAIN); the draws are swr_draw.c's and the heap fetches swr_fetch.c's.
 * Draws are made in batches: for each draw a table is chosen by the weight
 * its index offers (one table unless the scan is of a partitioned table or
 * an inheritance parent), then each index makes its draws in one batched
 * descent (abt_sample_batch).  A batch's rows are fetched in heap block
 * order and come out in the order drawn (never sorted: the first k rows of
 * swr(n), under LIMIT or a cursor, are then k independent draws; issue
 * 21).  A draw is rejected, and made again, when the index rejects it, when
 * its row is invisible, and (abtree.swr_where = redraw) when the row fails
 * the WHERE clause, which we evaluate rather than ExecScan so that we know.
 * src/swr/README has the argument that this gives exactly n independent
 * draws.
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"

#include <math.h>

#include "abtree/abtree.h"
#include "mvstore/mvstore.h"
#include "access/attmap.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/stratnum.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#endif
#include "common/pg_prng.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "optimizer/plancat.h"

#include "swr_scan.h"

static Node *swr_create_scan_state(CustomScan *cscan);
static void swr_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *swr_exec(CustomScanState *node);
static void swr_end(CustomScanState *node);
static void swr_rescan(CustomScanState *node);
static void swr_explain(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods swr_scan_methods = {
	.CustomName = "swr",
	.CreateCustomScanState = swr_create_scan_state,
};

static const CustomExecMethods swr_exec_methods = {
	.CustomName = "swr",
	.BeginCustomScan = swr_begin,
	.ExecCustomScan = swr_exec,
	.EndCustomScan = swr_end,
	.ReScanCustomScan = swr_rescan,
	.ExplainCustomScan = swr_explain,
};

static Node *
swr_create_scan_state(CustomScan *cscan)
{
	SwrScanState *st = (SwrScanState *) newNode(sizeof(SwrScanState), T_CustomScanState);

	st->css.methods = &swr_exec_methods;
#if PG_VERSION_NUM >= 160000
	/* heap tuples: swr_heap_scan_slot */
	st->css.slotOps = &TTSOpsHeapTuple;
#endif
	return (Node *) st;
}

/* ---- beginning a scan ---- */

/*
 * Which range candidates bound the draws from table t: those on the
 * leading column of its index, in the column's operator family and
 * collation.  One per side (more are still checked as WHERE clauses).
 */
static void
swr_match_ranges(SwrScanState *st, SwrTable *t, Relation scanrel)
{
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	List	   *attnos = list_nth(cscan->custom_private, SWR_PRIV_RANGE_ATTNOS);
	List	   *opnos = list_nth(cscan->custom_private, SWR_PRIV_RANGE_OPNOS);
	List	   *colls = list_nth(cscan->custom_private, SWR_PRIV_RANGE_COLLS);
	AttrNumber	keyatt = t->index->rd_index->indkey.values[0];
	int			i;

	t->lo_cand = t->hi_cand = -1;
	if (keyatt <= 0)
		return;					/* an expression leads the index */
	for (i = 0; i < list_length(attnos); i++)
	{
		AttrNumber	att = (AttrNumber) list_nth_int(attnos, i);
		int			strategy;

		if (t->heap != scanrel)
			att = get_attnum(RelationGetRelid(t->heap),
							 get_attname(RelationGetRelid(scanrel), att, false));
		if (att != keyatt ||
			list_nth_oid(colls, i) != t->index->rd_indcollation[0])
			continue;
		strategy = get_op_opfamily_strategy(list_nth_oid(opnos, i),
											t->index->rd_opfamily[0]);
		if ((strategy == BTGreaterStrategyNumber || strategy == BTGreaterEqualStrategyNumber ||
			 strategy == BTEqualStrategyNumber) && t->lo_cand < 0)
			t->lo_cand = i;
		if ((strategy == BTLessStrategyNumber || strategy == BTLessEqualStrategyNumber ||
			 strategy == BTEqualStrategyNumber) && t->hi_cand < 0)
			t->hi_cand = i;
	}
}

/* Open the tables to draw from, their indexes and their fetch state. */
static void
swr_open_tables(SwrScanState *st, EState *estate)
{
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	List	   *oids = list_nth(cscan->custom_private, SWR_PRIV_TABLES);
	Relation	scanrel = st->css.ss.ss_currentRelation;
	TupleDesc	scandesc = RelationGetDescr(scanrel);
	const char *weighting = NULL;
	int			i;

	st->ntables = list_length(oids);
	st->tables = palloc0(sizeof(SwrTable) * st->ntables);
	st->cumtotal = palloc0(sizeof(double) * st->ntables);
	for (i = 0; i < st->ntables; i++)
	{
		SwrTable   *t = &st->tables[i];
		Oid			relid = list_nth_oid(oids, i);

		t->heap = relid == RelationGetRelid(scanrel) ? scanrel :
			table_open(relid, AccessShareLock);
		if ((t->heap->rd_rel->relkind != RELKIND_RELATION &&
			 t->heap->rd_rel->relkind != RELKIND_MATVIEW) ||
			t->heap->rd_tableam != GetHeapamTableAmRoutine())
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("TABLESAMPLE swr supports only heap tables, and \"%s\" is not one",
							RelationGetRelationName(t->heap)),
					 errhint("Sample the heap partitions one by one.")));
		t->index = swr_open_index(t->heap);
		if (i == 0)
			weighting = swr_weight_column(t->index);
		else if ((weighting == NULL) != (swr_weight_column(t->index) == NULL) ||
				 (weighting && strcmp(weighting, swr_weight_column(t->index)) != 0) ||
				 (weighting && weighting[0] == '\0'))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the partitions of \"%s\" weigh rows differently",
							RelationGetRelationName(scanrel)),
					 errdetail("TABLESAMPLE swr would draw through %s and %s.",
							   swr_describe(st->tables[0].index), swr_describe(t->index)),
					 errhint("Give every partition an abtree index with the same weight column, or name them in abtree.swr_index.")));
		t->map = build_attrmap_by_name_if_req(RelationGetDescr(t->heap), scandesc
#if PG_VERSION_NUM >= 160000
											  ,false
#endif
			);
		t->slot = table_slot_create(t->heap, &estate->es_tupleTable);
		swr_match_ranges(st, t, scanrel);
	}
}

/*
 * The scan slot holds the rows a batch copied out of the heap in block
 * order (swr_draw.c), as heap tuples with their TIDs, so that system
 * columns (ctid, tableoid, xmin) can be selected.  From 16 on the slot type
 * is ours to choose (swr_create_scan_state); before, a custom scan gets a
 * virtual slot: replace it, and build the projection again for the new one.
 */
static void
swr_heap_scan_slot(SwrScanState *st, EState *estate)
{
#if PG_VERSION_NUM < 160000
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;

	ExecInitScanTupleSlot(estate, &st->css.ss,
						  RelationGetDescr(st->css.ss.ss_currentRelation),
						  &TTSOpsHeapTuple);
	ExecAssignScanProjectionInfoWithVarno(&st->css.ss, cscan->scan.scanrelid);
#endif
}

/*
 * A batch keeps a copy of each row it draws until the rows have gone out:
 * as many draws as fit work_mem at the tables' estimated row width (and
 * SWR_DRAW_OVERHEAD bytes of bookkeeping each), but at least SWR_BATCH_MIN,
 * and no more than abtree.swr_batch_size.
 */
static int
swr_batch_max(SwrScanState *st)
{
	int32		width = 0;
	int64		fit;

	for (int i = 0; i < st->ntables; i++)
		width = Max(width, get_relation_data_width(RelationGetRelid(st->tables[i].heap), NULL));
	fit = Max(SWR_BATCH_MIN, (int64) work_mem * 1024 / (width + SWR_DRAW_OVERHEAD));

	return (int) Min(Min(fit, SWR_BATCH_MAX), abt_swr_batch_size);
}

static void
swr_begin(CustomScanState *node, EState *estate, int eflags)
{
	SwrScanState *st = (SwrScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *exprs = cscan->custom_exprs;
	bool		has_seed = boolVal(list_nth(cscan->custom_private, SWR_PRIV_HAS_SEED));
	bool		shard = boolVal(list_nth(cscan->custom_private, SWR_PRIV_SHARD));
	ListCell   *lc;

	abt_require_preload();
	st->where = (SwrWhere) intVal(list_nth(cscan->custom_private, SWR_PRIV_WHERE));
	swr_heap_scan_slot(st, estate);

	/* WHERE is ours to evaluate: ExecScan must not, or we would not know */
	st->qual = ExecInitQual(cscan->scan.plan.qual, &node->ss.ps);
	node->ss.ps.qual = NULL;

	st->nfixed = has_seed ? 2 : 1;
	st->shard = shard;
	st->nexpr = ExecInitExpr(linitial(exprs), &node->ss.ps);
	if (has_seed)
		st->seedexpr = ExecInitExpr(list_nth(exprs, st->nfixed - 1), &node->ss.ps);
	for_each_from(lc, exprs, st->nfixed)
		st->boundexprs = lappend(st->boundexprs, ExecInitExpr(lfirst(lc), &node->ss.ps));

	st->random_seed = pg_prng_uint32(&pg_global_prng_state);
	st->drawcxt = AllocSetContextCreate(CurrentMemoryContext, "swr draws",
										ALLOCSET_DEFAULT_SIZES);
	st->rangecxt = AllocSetContextCreate(CurrentMemoryContext, "swr range",
										 ALLOCSET_SMALL_SIZES);
	swr_open_tables(st, estate);
	swr_plan_cover(st);
	st->batchmax = swr_batch_max(st);
	st->round = st->batchmax;
	st->scancxt = CurrentMemoryContext;
	st->owed = -1;				/* started by the first call */
}

/* Evaluate a scalar argument of the scan; NULL is refused as SampleScan does. */
static Datum
swr_eval_arg(SwrScanState *st, ExprState *expr, bool *isnull)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;

	return ExecEvalExprSwitchContext(expr, econtext, isnull);
}

/* A copy of range candidate cand's value that lives as long as the scan. */
static Datum
swr_copy_bound(SwrScanState *st, int cand, Datum value)
{
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	int			nfixed = st->nfixed;
	int16		typlen;
	bool		typbyval;
	MemoryContext oldcxt;

	get_typlenbyval(exprType(list_nth(cscan->custom_exprs, nfixed + cand)),
					&typlen, &typbyval);
	oldcxt = MemoryContextSwitchTo(st->rangecxt);
	value = datumCopy(value, typbyval, typlen);
	MemoryContextSwitchTo(oldcxt);
	return value;
}

/* Position table t's range from the evaluated bounds of its candidates. */
static void
swr_position_range(SwrScanState *st, SwrTable *t)
{
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	List	   *opnos = list_nth(cscan->custom_private, SWR_PRIV_RANGE_OPNOS);
	Datum		bound[2] = {0, 0};
	bool		incl[2] = {true, true};
	bool		open[2] = {true, true};
	Oid			type = InvalidOid;
	int			side;
	MemoryContext oldcxt;

	t->has_range = t->empty = false;
	for (side = 0; side < 2; side++)
	{
		int			cand = side == 0 ? t->lo_cand : t->hi_cand;
		int			strategy;
		Oid			lefttype;
		bool		isnull;

		if (cand < 0)
			continue;
		bound[side] = swr_eval_arg(st, list_nth(st->boundexprs, cand), &isnull);
		if (isnull)
		{
			t->empty = true;	/* a comparison with NULL is never true */
			return;
		}
		/* out of the per-tuple memory, which every row's WHERE resets */
		bound[side] = swr_copy_bound(st, cand, bound[side]);
		get_op_opfamily_properties(list_nth_oid(opnos, cand), t->index->rd_opfamily[0],
								   false, &strategy, &lefttype, &type);
		incl[side] = strategy != BTLessStrategyNumber && strategy != BTGreaterStrategyNumber;
		open[side] = false;
	}
	if (open[0] && open[1])
		return;
	oldcxt = MemoryContextSwitchTo(st->rangecxt);
	abt_range_bounds(t->index, type, bound[0], open[0], incl[0], bound[1], open[1], incl[1],
					 &t->range);
	MemoryContextSwitchTo(oldcxt);
	t->has_range = true;
}

/* (Re)start the scan: arguments, seed, ranges, counters. */
static void
swr_start(SwrScanState *st)
{
	EState	   *estate = st->css.ss.ps.state;
	uint32		seed = st->random_seed;
	bool		isnull;
	Datum		n;
	double		rate = 0;
	int			i;

	n = swr_eval_arg(st, st->nexpr, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLESAMPLE_ARGUMENT),
				 errmsg("TABLESAMPLE parameter cannot be null")));
	if (st->seedexpr)
	{
		Datum		s = swr_eval_arg(st, st->seedexpr, &isnull);

		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLESAMPLE_REPEAT),
					 errmsg("TABLESAMPLE REPEATABLE parameter cannot be null")));
		/* as SampleScan hashes it, so that REPEATABLE keeps its draws */
		seed = DatumGetUInt32(DirectFunctionCall1(hashfloat8, s));
	}
	if (st->shard)
	{
		rate = swr_shard_rate(n);
		st->probe = rate == 0;
		st->probed = false;
		seed = swr_shard_seed(st->css.ss.ss_currentRelation, seed);
		st->owed = 0;			/* drawn below, once the tables are weighed */
	}
	else
		st->owed = swr_sample_size(n);
	abt_seed_prng(&st->prng, true, (float8) seed);

	MemoryContextReset(st->rangecxt);
	for (i = 0; i < st->ntables; i++)
	{
		SwrTable   *t = &st->tables[i];

		abt_refuse_newer_build(t->index, estate->es_snapshot);
		mvs_reader_init(&t->reader, t->index, estate->es_snapshot);
		if (st->where == SWR_WHERE_REDRAW)
			swr_position_range(st, t);
		if (t->fetch == NULL)
			t->fetch = table_index_fetch_begin(t->heap);
	}
	memset(&st->cur, 0, sizeof(SwrCounts));
	st->unjudged = 0;
	st->exhausted = false;
	st->nbatch = st->pos = 0;
	st->loops++;

	/*
	 * A shard's part: Poisson(rate x its weight) attempts, so that with
	 * every shard given the same rate the attempts are split between them
	 * multinomially by weight (swr_citus_exec.c).
	 */
	if (st->shard && !st->probe && swr_weigh_tables(st))
		st->owed = swr_poisson(&st->prng, rate * st->cumtotal[st->ntables - 1]);
}

/* Sample scans have nothing to recheck (as SampleScan). */
static bool
swr_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
swr_exec(CustomScanState *node)
{
	SwrScanState *st = (SwrScanState *) node;

	if (st->owed < 0)
		swr_start(st);
	return ExecScan(&node->ss, swr_next, swr_recheck);
}

/*
 * Add the counts of the scan that ends to the node's (EXPLAIN ANALYZE), the
 * indexes' (abtree_swr_stats) and abtree_status()'s.
 */
static void
swr_finish_loop(SwrScanState *st)
{
	int			i;

	if (st->owed < 0)
		return;					/* not started, or already counted */
	for (i = 0; i < st->ntables; i++)
	{
		SwrTable   *t = &st->tables[i];

		if (t->cur.draws > 0 || st->ntables == 1)
			swr_stats_add(RelationGetRelid(t->index), &t->cur);
		memset(&t->cur, 0, sizeof(SwrCounts));
	}
	st->sum.draws += st->cur.draws;
	st->sum.rows += st->cur.rows;
	st->sum.tree_rejects += st->cur.tree_rejects;
	st->sum.invisible += st->cur.invisible;
	st->sum.filtered += st->cur.filtered;
	pg_atomic_fetch_add_u64(&abt_shared->swr_scans, 1);
	pg_atomic_fetch_add_u64(&abt_shared->swr_rows, st->cur.rows);
	pg_atomic_fetch_add_u64(&abt_shared->swr_tree_rejects, st->cur.tree_rejects);
	pg_atomic_fetch_add_u64(&abt_shared->swr_invisible, st->cur.invisible);
	memset(&st->cur, 0, sizeof(SwrCounts));
	st->owed = -1;
}

static void
swr_rescan(CustomScanState *node)
{
	SwrScanState *st = (SwrScanState *) node;

	swr_finish_loop(st);
	ExecScanReScan(&node->ss);
}

static void
swr_end(CustomScanState *node)
{
	SwrScanState *st = (SwrScanState *) node;
	int			i;

	swr_finish_loop(st);
	if (st->batch)
		abt_scratch_free(st->batch);
	st->batch = NULL;
	st->batchcap = 0;
	for (i = 0; i < st->ntables; i++)
	{
		SwrTable   *t = &st->tables[i];

		if (t->fetch)
			table_index_fetch_end(t->fetch);
		if (BufferIsValid(t->vmbuf))
			ReleaseBuffer(t->vmbuf);
		t->vmbuf = InvalidBuffer;
		if (t->index)
			index_close(t->index, NoLock);
		if (t->heap && t->heap != node->ss.ss_currentRelation)
			table_close(t->heap, NoLock);
	}
}

/* ---- EXPLAIN ---- */

/* "swr (n) REPEATABLE (seed)", as EXPLAIN shows other sampling methods. */
static void
swr_explain_sampling(SwrScanState *st, List *context, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s (%s)", st->shard ? "swr_shard" : "swr",
					 deparse_expression(linitial(cscan->custom_exprs), context, false, false));
	if (st->seedexpr)
		appendStringInfo(&buf, " REPEATABLE (%s)",
						 deparse_expression(list_nth(cscan->custom_exprs, st->nfixed - 1),
											context, false, false));
	ExplainPropertyText("Sampling", buf.data, es);
}

/* The indexes drawn through: one, or the partitions' (a few named). */
static void
swr_explain_indexes(SwrScanState *st, ExplainState *es)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < st->ntables && i < 5; i++)
		appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "",
						 quote_identifier(RelationGetRelationName(st->tables[i].index)));
	if (st->ntables > 5)
		appendStringInfo(&buf, ", ...");
	if (st->ntables > 1)
		appendStringInfo(&buf, " (%d tables)", st->ntables);
	ExplainPropertyText(st->ntables > 1 ? "Sample Indexes" : "Sample Index", buf.data, es);
}

/* The WHERE clauses that bound the draws to a key range, if any. */
static void
swr_explain_range(SwrScanState *st, List *context, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	List	   *attnos = list_nth(cscan->custom_private, SWR_PRIV_RANGE_ATTNOS);
	List	   *opnos = list_nth(cscan->custom_private, SWR_PRIV_RANGE_OPNOS);
	int			nfixed = st->nfixed;
	Relation	scanrel = st->css.ss.ss_currentRelation;
	StringInfoData buf;
	int			i;
	int			j;

	initStringInfo(&buf);
	for (i = 0; i < list_length(attnos); i++)
	{
		bool		used = false;

		for (j = 0; j < st->ntables; j++)
			used |= st->tables[j].lo_cand == i || st->tables[j].hi_cand == i;
		if (!used)
			continue;
		appendStringInfo(&buf, "%s(%s %s %s)", buf.len > 0 ? " AND " : "",
						 quote_identifier(get_attname(RelationGetRelid(scanrel),
													  list_nth_int(attnos, i), false)),
						 get_opname(list_nth_oid(opnos, i)),
						 deparse_expression(list_nth(cscan->custom_exprs, nfixed + i),
											context, false, false));
	}
	if (buf.len > 0)
		ExplainPropertyText("Sample Range", buf.data, es);
}

/* Draws and rejections, summed over the loops (EXPLAIN ANALYZE). */
static void
swr_explain_counts(SwrScanState *st, ExplainState *es)
{
	SwrCounts	c = st->sum;

	if (st->owed >= 0)
	{
		c.draws += st->cur.draws;
		c.tree_rejects += st->cur.tree_rejects;
		c.invisible += st->cur.invisible;
		c.filtered += st->cur.filtered;
	}
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		char	   *text = psprintf("%lld, rejected: %lld invisible, %lld by the index, %lld by the filter%s",
									(long long) c.draws, (long long) c.invisible,
									(long long) c.tree_rejects, (long long) c.filtered,
									st->where != SWR_WHERE_REDRAW ? " (not redrawn)" : "");

		ExplainPropertyText("Draws", text, es);
		if (st->index_only > 0)
			ExplainPropertyText("Index-Only Draws",
								psprintf("%lld (all-visible heap pages, not read)",
										 (long long) st->index_only), es);
		ExplainPropertyText("Batches",
							psprintf("%lld in %lld descents, at most %d draws each (abtree.swr_batch_size, work_mem)",
									 (long long) st->batches, (long long) st->descents,
									 st->batchmax), es);
		return;
	}
	ExplainPropertyInteger("Draws", NULL, c.draws, es);
	ExplainPropertyInteger("Draws Invisible", NULL, c.invisible, es);
	ExplainPropertyInteger("Draws Rejected by Index", NULL, c.tree_rejects, es);
	ExplainPropertyInteger("Draws Rejected by Filter", NULL, c.filtered, es);
	if (st->index_only > 0)
		ExplainPropertyInteger("Index-Only Draws", NULL, st->index_only, es);
	ExplainPropertyInteger("Batches", NULL, st->batches, es);
	ExplainPropertyInteger("Descents", NULL, st->descents, es);
	ExplainPropertyInteger("Batch Draws Max", NULL, st->batchmax, es);
}

static void
swr_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	SwrScanState *st = (SwrScanState *) node;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan,
												   ancestors);

	swr_explain_sampling(st, context, es);
	swr_explain_indexes(st, es);
	swr_explain_range(st, context, es);
	if (st->qual)
		ExplainPropertyText("Filter Mode",
							st->where == SWR_WHERE_REDRAW ? "redraw rows that fail" :
							st->where == SWR_WHERE_STANDARD ? "standard (remove rows that fail)" :
							"shard attempts (the coordinator redraws what fails)", es);
	if (es->analyze)
		swr_explain_counts(st, es);
}
