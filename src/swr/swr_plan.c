/*-------------------------------------------------------------------------
 *
 * swr_plan.c
 *	  Planning TABLESAMPLE swr(n) as a custom scan, "Custom Scan (swr)".
 *
 * The TABLESAMPLE syntax needs a TsmRoutine (swr_tsm.c), but its block and
 * tuple callbacks cannot see the query's WHERE clause, cannot say what they
 * did in EXPLAIN, and run once per partition.  So set_rel_pathlist_hook
 * replaces the sample scan path of every relation sampled with swr by a
 * custom path, whose executor (swr_scan.c) draws through the index itself.
 * The plan carries:
 *
 *	 custom_exprs:	 n (swr_shard's rate), then REPEATABLE's seed if there
 *					 is one, then the right-hand sides of the range
 *					 candidates;
 *	 custom_private: see the SWR_PRIV_* positions in swr.h: the WHERE mode,
 *					 whether there is a seed, the OIDs of the tables to draw
 *					 from (the table itself, or the leaf partitions of a
 *					 partitioned table or inheritance parent), and for each
 *					 range candidate its column, operator and collation.
 *
 * A range candidate is a restriction "column op expression" with a btree
 * comparison operator and an expression the scan can evaluate once (no Var
 * of the table, nothing volatile).  Which candidates bound the draws is
 * decided at execution, once the index is chosen: those on its leading
 * column, with an operator of its operator family and its collation.
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"

#include <math.h>

#include "access/stratnum.h"
#include "commands/defrem.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

static Plan *swr_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						   List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods swr_path_methods = {
	.CustomName = "swr",
	.PlanCustomPath = swr_plan_path,
};

/*
 * The pages n draws read from: the tables' heap pages, and for each table
 * the pages of its smallest abtree index (the sample index is chosen at
 * execution, among the table's abtree indexes).
 */
typedef struct SwrPages
{
	double		heap;
	double		index;
} SwrPages;

static void
swr_add_pages(RelOptInfo *rel, SwrPages *pages)
{
	Oid			amoid = get_index_am_oid("abtree", true);
	double		smallest = -1;
	ListCell   *lc;

	pages->heap += rel->pages;
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);

		if (index->relam == amoid && (smallest < 0 || index->pages < smallest))
			smallest = index->pages;
	}
	if (smallest > 0)
		pages->index += smallest;
}

/*
 * The tables an appendrel parent's scan draws from: its leaf members that
 * survived pruning and constraint exclusion, at any depth.
 */
static List *
swr_leaf_members(PlannerInfo *root, Index parent, List *leaves, SwrPages *pages)
{
	ListCell   *lc;

	foreach(lc, root->append_rel_list)
	{
		AppendRelInfo *appinfo = lfirst_node(AppendRelInfo, lc);
		Index		child = appinfo->child_relid;
		RelOptInfo *childrel = root->simple_rel_array[child];
		RangeTblEntry *childrte = root->simple_rte_array[child];

		if (appinfo->parent_relid != parent || childrel == NULL ||
			IS_DUMMY_REL(childrel))
			continue;
		if (childrte->inh)
			leaves = swr_leaf_members(root, child, leaves, pages);
		else
		{
			leaves = lappend_oid(leaves, childrte->relid);
			swr_add_pages(childrel, pages);
		}
	}
	return leaves;
}

/* Strip the relabelling of a binary-compatible cast. */
static Node *
swr_strip_relabel(Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node;
}

/*
 * Is clause "column op expression" (or the commuted form) on rel, with an
 * expression evaluable once per scan?  Returns the column, and the
 * operator as if the column were on its left.
 */
static bool
swr_range_candidate(RelOptInfo *rel, Expr *clause, AttrNumber *attno, Oid *opno,
					Oid *collid, Expr **bound)
{
	OpExpr	   *op;
	Node	   *left;
	Node	   *right;

	if (!IsA(clause, OpExpr) || list_length(((OpExpr *) clause)->args) != 2)
		return false;
	op = (OpExpr *) clause;
	left = swr_strip_relabel(linitial(op->args));
	right = swr_strip_relabel(lsecond(op->args));
	*opno = op->opno;
	if (!(left && IsA(left, Var) && ((Var *) left)->varno == rel->relid))
	{
		Node	   *swap = left;

		left = right;
		right = swap;
		*opno = get_commutator(op->opno);
		if (!OidIsValid(*opno))
			return false;
	}
	if (!(left && IsA(left, Var) && ((Var *) left)->varno == rel->relid &&
		  ((Var *) left)->varlevelsup == 0 && ((Var *) left)->varattno > 0))
		return false;
	if (bms_is_member(rel->relid, pull_varnos(NULL, right)) ||
		contain_volatile_functions(right))
		return false;
	*attno = ((Var *) left)->varattno;
	*collid = op->inputcollid;
	*bound = (Expr *) (left == swr_strip_relabel(linitial(op->args)) ?
					   lsecond(op->args) : linitial(op->args));
	return true;
}

/* The range candidates among the restrictions, for the plan. */
static void
swr_collect_ranges(RelOptInfo *rel, List **attnos, List **opnos, List **colls,
				   List **bounds)
{
	ListCell   *lc;

	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		AttrNumber	attno;
		Oid			opno;
		Oid			collid;
		Expr	   *bound;

		if (ri->pseudoconstant ||
			!swr_range_candidate(rel, ri->clause, &attno, &opno, &collid, &bound))
			continue;
		*attnos = lappend_int(*attnos, attno);
		*opnos = lappend_oid(*opnos, opno);
		*colls = lappend_oid(*colls, collid);
		*bounds = lappend(*bounds, bound);
	}
}

/* n from the plan's argument, or a guess when it is known only at run time. */
static double
swr_planned_n(PlannerInfo *root, TableSampleClause *tsc)
{
	Node	   *arg;

	if (swr_is_shard_tablesample(tsc))
		return 1000;			/* a shard's part of n: known at run time */
	arg = estimate_expression_value(root, (Node *) linitial(tsc->args));

	if (IsA(arg, Const) && !((Const *) arg)->constisnull)
	{
		double		v = DatumGetFloat8(((Const *) arg)->constvalue);

		if (v >= 0 && v <= SWR_MAX_N)
			return rint(v);
	}
	return 1000;
}

/*
 * Distinct pages that n draws into T pages read, by the Mackert-Lohman
 * formula PostgreSQL charges an index scan's heap fetches with (so repeated
 * pages count once while effective_cache_size can hold them).  other is
 * what competes for the cache beside the tables, the index's pages, as
 * cost_index (heap) and genericcostestimate (index) pass it.
 */
static double
swr_pages_fetched(PlannerInfo *root, double n, double pages, double other)
{
	if (pages < 1 || n < 1)
		return 0;
	/* index_pages_fetched's share of the cache wants pages within the total */
	if (pages > root->total_table_pages + other)
		return Min(n, pages);
	return index_pages_fetched(n, (BlockNumber) pages, other, root);
}

/*
 * The path: n rows (redraw mode: every row returned satisfies WHERE) or n
 * times the WHERE clause's selectivity (standard mode).
 *
 * The cost is an index scan's that fetches n random entries: the distinct
 * index and heap pages n draws read, each a random page read, and for each
 * draw an index tuple, a heap tuple, the WHERE clause and a descent that
 * adds weights rather than compares keys (an operator per level).  Charging
 * every draw a page read, as before, put swr(100000) on a 1M-row table at
 * 418,000, past jit_above_cost, and JIT's compile took a fifth of its run
 * (bench/results/swr_cost_jit.md); the pages it reads cost 29,000.
 */
static CustomPath *
swr_make_path(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte, List *leaves,
			  const SwrPages *pages)
{
	CustomPath *cpath = makeNode(CustomPath);
	double		n = swr_planned_n(root, rte->tablesample);
	SwrWhere	where = abt_swr_where;
	QualCost	qcost;
	List	   *attnos = NIL;
	List	   *opnos = NIL;
	List	   *colls = NIL;
	List	   *bounds = NIL;

	/* a Citus shard's part: attempts, no key range (swr_citus.c) */
	if (swr_is_shard_tablesample(rte->tablesample))
		where = SWR_WHERE_ATTEMPTS;
	if (where == SWR_WHERE_REDRAW)
		swr_collect_ranges(rel, &attnos, &opnos, &colls, &bounds);
	rel->rows = where == SWR_WHERE_REDRAW ? clamp_row_est(n) :
		clamp_row_est(n * clauselist_selectivity(root, rel->baserestrictinfo, 0,
												 JOIN_INNER, NULL));
	cost_qual_eval(&qcost, rel->baserestrictinfo, root);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.param_info = get_baserel_parampathinfo(root, rel, rel->lateral_relids);
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = rel->rows;
	cpath->path.startup_cost = qcost.startup;
	cpath->path.total_cost = qcost.startup +
		random_page_cost * (swr_pages_fetched(root, n, pages->index, pages->index) +
							swr_pages_fetched(root, n, pages->heap, pages->index)) +
		n * (cpu_index_tuple_cost + cpu_tuple_cost + qcost.per_tuple +
			 cpu_operator_cost * Max(1.0, log2(Max(rel->tuples, 2.0))));
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = NIL;
	cpath->custom_private = list_make1(makeInteger(where));
	cpath->custom_private = lappend(cpath->custom_private, leaves);
	cpath->custom_private = lappend(cpath->custom_private, attnos);
	cpath->custom_private = lappend(cpath->custom_private, opnos);
	cpath->custom_private = lappend(cpath->custom_private, colls);
	cpath->custom_private = lappend(cpath->custom_private, bounds);
	cpath->methods = &swr_path_methods;
	return cpath;
}

static Plan *
swr_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	TableSampleClause *tsc = rte->tablesample;
	List	   *priv = best_path->custom_private;
	List	   *exprs = list_make1(linitial(tsc->args));
	bool		shard = swr_is_shard_tablesample(tsc);

	if (tsc->repeatable)
		exprs = lappend(exprs, tsc->repeatable);
	exprs = list_concat(exprs, list_nth(priv, 5));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = exprs;
	/* the SWR_PRIV_* positions of swr.h */
	cscan->custom_private = list_make1(linitial(priv));
	cscan->custom_private = lappend(cscan->custom_private,
									makeBoolean(tsc->repeatable != NULL));
	cscan->custom_private = lappend(cscan->custom_private, lsecond(priv));
	cscan->custom_private = lappend(cscan->custom_private, lthird(priv));
	cscan->custom_private = lappend(cscan->custom_private, lfourth(priv));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, 4));
	cscan->custom_private = lappend(cscan->custom_private, makeBoolean(shard));
	cscan->custom_scan_tlist = NIL;
	cscan->methods = &swr_scan_methods;
	return &cscan->scan.plan;
}

/*
 * Replace the sample scan of a relation sampled with swr by our path.
 *
 * An appendrel parent (a partitioned table or an inheritance parent) gets
 * one path that draws from all its leaf tables, allocating the n draws by
 * weight, instead of an Append of n draws per member.  Its members keep
 * their paths, which raise an ERROR if anything uses them (a partitionwise
 * join would).  A partitioned parent stops looking partitioned to the rest
 * of the planner: otherwise the final target list would be pushed down to
 * the partitions and our path replaced by an Append of theirs.
 */
static void
swr_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					 RangeTblEntry *rte)
{
	List	   *leaves;
	SwrPages	pages = {0, 0};

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if (rte->rtekind != RTE_RELATION || rte->tablesample == NULL ||
		rel->reloptkind != RELOPT_BASEREL || IS_DUMMY_REL(rel) ||
		!swr_is_swr_tablesample(rte->tablesample))
		return;

	if (rte->inh)
		leaves = swr_leaf_members(root, rti, NIL, &pages);
	else
	{
		leaves = list_make1_oid(rte->relid);
		swr_add_pages(rel, &pages);
	}
	if (leaves == NIL)
		return;

	rel->pathlist = NIL;
	rel->partial_pathlist = NIL;
	rel->part_scheme = NULL;
	add_path(rel, (Path *) swr_make_path(root, rel, rte, leaves, &pages));
}

void
swr_install_planner_hook(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = swr_set_rel_pathlist;
	RegisterCustomScanMethods(&swr_scan_methods);
}
