/*-------------------------------------------------------------------------
 *
 * swr_agg_check.c
 *	  Refuse estimate aggregates that do not match how their sample was drawn.
 *
 * swr_avg, swr_sum and swr_count come in two forms: without a weight they
 * assume every row was drawn alike, with one they assume each row was drawn
 * with probability proportional to that weight (Hansen-Hurwitz).  Fed the
 * other kind of sample they are biased, and nothing in their result shows
 * it: a weighted sample's swr_avg(x) is the weight-biased mean, with an
 * interval as narrow as a correct one (issue 25, item 8: 465.9 in
 * [460, 472] against a true 332.8).
 *
 * The aggregates see only values, so the check is made where both ends are
 * known: after ExecutorStart, when every TABLESAMPLE swr scan has opened
 * the index it draws through (chosen at execution: abtree.swr_index may
 * change between PREPARE and EXECUTE).  For each node that aggregates
 * (Agg, WindowAgg), the swr scans whose rows reach it (below it, through
 * joins, subqueries, appends and CTE scans, but not through another Agg,
 * whose output rows are no longer sample rows) must all weigh rows the way
 * each of its swr aggregates assumes.  A weighted aggregate whose weight is
 * a constant is the unweighted one.  What this cannot see: a sample stored
 * in a table first and aggregated later, a weight argument that is another
 * column than the index's weight column, and a Citus distributed table's
 * sample (a function scan of swr_citus_sample on the coordinator).
 *
 * An aggregate is ours when its transition function is one of this
 * library's swr_*_trans functions, which survives schema relocation.
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"
#include "swr_scan.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

static ExecutorStart_hook_type prev_ExecutorStart_hook = NULL;

/* an swr aggregate found in an aggregating node */
typedef struct SwrAggUse
{
	const char *name;			/* swr_avg, swr_sum, swr_count */
	bool		weighted;		/* has a weight argument, not a constant */
	bool		constant;		/* has a constant weight argument */
} SwrAggUse;

typedef struct SwrAggFind
{
	List	   *uses;			/* of SwrAggUse */
} SwrAggFind;

/* our aggregates' transition functions, and their arguments without a weight */
static const struct
{
	const char *prosrc;
	const char *name;
	int			plain_nargs;
}			swr_aggs[] = {
	{"swr_avg_trans", "swr_avg", 1},
	{"swr_sum_trans", "swr_sum", 2},
	{"swr_count_trans", "swr_count", 2},
};

/*
 * If aggfnoid is one of ours, its name; its number of arguments without a
 * weight goes to *plain_nargs.
 */
static const char *
swr_agg_kind(Oid aggfnoid, int *plain_nargs)
{
	HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Oid			transfn;
	const char *kind = NULL;

	if (!HeapTupleIsValid(tup))
		return NULL;
	transfn = ((Form_pg_aggregate) GETSTRUCT(tup))->aggtransfn;
	ReleaseSysCache(tup);

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(transfn));
	if (!HeapTupleIsValid(tup))
		return NULL;
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId)
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
		char	   *prosrc = isnull ? NULL : TextDatumGetCString(src);

		for (int i = 0; prosrc && i < lengthof(swr_aggs); i++)
			if (strcmp(prosrc, swr_aggs[i].prosrc) == 0)
			{
				kind = swr_aggs[i].name;
				*plain_nargs = swr_aggs[i].plain_nargs;
			}
	}
	ReleaseSysCache(tup);
	return kind;
}

static void
swr_agg_note(SwrAggFind *find, Oid fnoid, List *args, bool targetentries)
{
	int			plain_nargs;
	const char *kind = swr_agg_kind(fnoid, &plain_nargs);
	SwrAggUse  *use;
	Node	   *weight;

	if (kind == NULL)
		return;
	use = palloc(sizeof(SwrAggUse));
	use->name = kind;
	use->weighted = use->constant = false;
	if (list_length(args) > plain_nargs)
	{
		weight = (Node *) lsecond(args);
		if (targetentries)
			weight = (Node *) ((TargetEntry *) weight)->expr;
		use->constant = IsA(strip_implicit_coercions(weight), Const);
		use->weighted = !use->constant;
	}
	find->uses = lappend(find->uses, use);
}

static bool
swr_agg_find_walker(Node *node, SwrAggFind *find)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		swr_agg_note(find, ((Aggref *) node)->aggfnoid, ((Aggref *) node)->args, true);
		return false;			/* no aggregate inside an aggregate */
	}
	if (IsA(node, WindowFunc))
	{
		swr_agg_note(find, ((WindowFunc *) node)->winfnoid, ((WindowFunc *) node)->args, false);
		return false;
	}
	return expression_tree_walker(node, swr_agg_find_walker, (void *) find);
}

/* the swr scans whose rows reach an aggregating node */
typedef struct SwrScanFind
{
	List	   *scans;			/* of SwrScanState */
} SwrScanFind;

static void
swr_scan_find_walker(PlanState *ps, SwrScanFind *find)
{
	if (ps == NULL || IsA(ps, AggState))
		return;
	if (IsA(ps, CustomScanState) &&
		((CustomScan *) ps->plan)->methods == &swr_scan_methods)
	{
		find->scans = lappend(find->scans, ps);
		return;
	}
	if (IsA(ps, CteScanState) && ((CteScanState *) ps)->cteplanstate)
		swr_scan_find_walker(((CteScanState *) ps)->cteplanstate, find);
	/* the rows come from the outer side and special children, not subplans */
	swr_scan_find_walker(outerPlanState(ps), find);
	swr_scan_find_walker(innerPlanState(ps), find);
	switch (nodeTag(ps))
	{
		case T_AppendState:
			for (int i = 0; i < ((AppendState *) ps)->as_nplans; i++)
				swr_scan_find_walker(((AppendState *) ps)->appendplans[i], find);
			break;
		case T_MergeAppendState:
			for (int i = 0; i < ((MergeAppendState *) ps)->ms_nplans; i++)
				swr_scan_find_walker(((MergeAppendState *) ps)->mergeplans[i], find);
			break;
		case T_SubqueryScanState:
			swr_scan_find_walker(((SubqueryScanState *) ps)->subplan, find);
			break;
		default:
			break;
	}
}

static void
swr_agg_mismatch(SwrAggUse *use, SwrScanState *st)
{
	Relation	heap = st->css.ss.ss_currentRelation;
	Relation	index = st->tables[0].index;

	if (use->weighted)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s with a weight estimates from a weighted sample, but TABLESAMPLE swr on \"%s\" draws every row alike",
						use->name, RelationGetRelationName(heap)),
				 errdetail("The draws go through %s; the weighted estimate would be biased.",
						   swr_describe(index)),
				 errhint("Leave out the weight argument, or draw through an index with a weight column (abtree.swr_index).")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s %s estimates from a uniform sample, but TABLESAMPLE swr on \"%s\" draws rows by weight",
					use->name, use->constant ? "with a constant weight" : "without a weight",
					RelationGetRelationName(heap)),
			 errdetail("The draws go through %s; the unweighted estimate would be biased.",
					   swr_describe(index)),
			 errhint("Pass the weight column as the aggregate's second argument, or draw through an unweighted index (abtree.swr_index).")));
}

/* Check one aggregating node against the swr scans below it. */
static void
swr_agg_check_node(PlanState *ps)
{
	SwrAggFind afind = {NIL};
	SwrScanFind sfind = {NIL};
	ListCell   *la;
	ListCell   *ls;

	swr_agg_find_walker((Node *) ps->plan->targetlist, &afind);
	swr_agg_find_walker((Node *) ps->plan->qual, &afind);
	if (afind.uses == NIL)
		return;
	swr_scan_find_walker(outerPlanState(ps), &sfind);
	foreach(ls, sfind.scans)
	{
		SwrScanState *st = (SwrScanState *) lfirst(ls);
		bool		weighted;

		if (st->ntables == 0)
			continue;
		weighted = swr_weight_column(st->tables[0].index) != NULL;
		foreach(la, afind.uses)
		{
			SwrAggUse  *use = (SwrAggUse *) lfirst(la);

			if (use->weighted != weighted)
				swr_agg_mismatch(use, st);
		}
	}
}

static bool
swr_agg_check_walker(PlanState *ps, void *context)
{
	if (ps == NULL)
		return false;
	if (IsA(ps, AggState) || IsA(ps, WindowAggState))
		swr_agg_check_node(ps);
	return planstate_tree_walker(ps, swr_agg_check_walker, context);
}

static void
swr_executor_start(QueryDesc *queryDesc, int eflags)
{
	ListCell   *lc;

	if (prev_ExecutorStart_hook)
		prev_ExecutorStart_hook(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	/* plain EXPLAIN computes nothing: let it show the plan */
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	/* CTEs' plans are reached only through es_subplanstates */
	swr_agg_check_walker(queryDesc->planstate, NULL);
	foreach(lc, queryDesc->estate->es_subplanstates)
		swr_agg_check_walker((PlanState *) lfirst(lc), NULL);
}

void
swr_install_executor_hook(void)
{
	prev_ExecutorStart_hook = ExecutorStart_hook;
	ExecutorStart_hook = swr_executor_start;
}
