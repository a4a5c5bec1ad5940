/*-------------------------------------------------------------------------
 *
 * swr_citus.c
 *	  TABLESAMPLE swr(n) on a Citus distributed table: the coordinator's
 *	  rewrite, and the shards' side (swr_shard, swr_shard_weight).
 *
 * Citus plans a query on a distributed table by sending it, with the
 * shard's name in place of the table's, to every shard: swr(n) then draws
 * n rows per shard, and a row of a small shard is drawn more often than one
 * of a large shard (issue 23).  A distributed swr(n) needs two rounds: the
 * shards' weights first, then each shard's share of the draws.  So our
 * planner_hook, which runs before Citus's (Citus must come first in
 * shared_preload_libraries, and the last hook installed runs first),
 * replaces the sampled relation by a call of the set-returning function
 * swr_citus_sample() (swr_citus_exec.c), which runs those rounds as
 * distributed queries through Citus's executor, on the table's rows type.
 * The WHERE conditions on that table alone go into the function, as SQL
 * text, so that the shards evaluate them (abtree.swr_where = redraw); the
 * rest of the query is untouched.  src/swr/README, "Citus", has the
 * argument that this gives n independent draws over the whole table.
 *
 * Nothing here needs Citus to build or run: Citus is recognised by its
 * catalog pg_dist_partition, read directly (../citus.c).
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"

#include <math.h>

#include "abtree/abtree.h"
#include "mvstore/mvstore.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/typcache.h"

static planner_hook_type prev_planner_hook = NULL;

/* ---- is a table distributed by Citus? ---- */

/*
 * Does swr(n) on relid need the distributed rounds?  Tables with more than
 * one shard do; a reference, local or single-shard table ('n') has one
 * shard, where Citus's own pushdown of swr(n) already draws n rows.
 */
bool
swr_citus_needs_rounds(Oid relid)
{
	char		method = abt_citus_partmethod(relid);

	return method != 0 && method != 'n';
}

/* ---- the rewrite ---- */

typedef struct SwrVarContext
{
	Index		rti;
	int			sublevels_up;
	bool		system_only;	/* only its system columns count */
} SwrVarContext;

/*
 * Does node refer to range table entry rti of the query it sits in (to a
 * system column of it, with system_only)?
 */
static bool
swr_refers_to(Node *node, SwrVarContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		return var->varno == cxt->rti && var->varlevelsup == cxt->sublevels_up &&
			(!cxt->system_only || var->varattno < 0);
	}
	if (IsA(node, Query))
	{
		bool		found;

		cxt->sublevels_up++;
		found = query_tree_walker((Query *) node, swr_refers_to, cxt, 0);
		cxt->sublevels_up--;
		return found;
	}
	return expression_tree_walker(node, swr_refers_to, cxt);
}

typedef struct SwrTextContext
{
	Index		rti;
	int			depth;			/* Query nodes entered below the condition */
} SwrTextContext;

/*
 * Can a subquery of a condition go to the shards as SQL text?  It may refer
 * to its own tables and, at the condition's level, to the sampled table
 * (the round's query has it); not to other tables of that level, outer
 * queries or parameters.  Citus plans it within the round's query
 * (pushed down to the shards with co-located tables, else recursively).
 */
static bool
swr_not_text(Node *node, SwrTextContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return ((Param *) node)->paramkind != PARAM_SUBLINK;	/* a sublink's own output */
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		return var->varlevelsup > cxt->depth ||
			(var->varlevelsup == cxt->depth && var->varno != cxt->rti);
	}
	if (IsA(node, Query))
	{
		bool		found;

		cxt->depth++;
		found = query_tree_walker((Query *) node, swr_not_text, cxt, 0);
		cxt->depth--;
		return found;
	}
	return expression_tree_walker(node, swr_not_text, cxt);
}

typedef struct SwrArgContext
{
	Index		rti;
	Oid			relid;
	List	   *args;			/* the expressions the $n stand for */
} SwrArgContext;

/*
 * Replace what SQL text sent to the shards cannot carry (parameters,
 * references to outer queries, subqueries that swr_not_text refuses and
 * that do not refer to the sampled row) by $1, $2, ...: the function
 * receives their values as arguments and passes them to the rounds'
 * queries as parameters.  A subquery that refers to the sampled row and
 * to something text cannot carry is an ERROR.
 */
static Node *
swr_args_mutator(Node *node, SwrArgContext *cxt)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, SubLink))
	{
		SwrTextContext text = {cxt->rti, 0};

		if (!swr_not_text(node, &text))
			return copyObject(node);	/* goes as it is */
	}
	if (IsA(node, Param) || (IsA(node, Var) && ((Var *) node)->varlevelsup > 0) ||
		IsA(node, SubLink))
	{
		SwrVarContext refs = {cxt->rti, 0, false};
		Param	   *param;

		if (IsA(node, SubLink) && swr_refers_to(node, &refs))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("TABLESAMPLE swr on distributed table \"%s\" cannot redraw for a WHERE subquery on the sampled row that uses parameters or other tables of the query",
							get_rel_name(cxt->relid)),
					 errdetail("The shards evaluate the sample's WHERE conditions, and receive them as SQL text."),
					 errhint("SET abtree.swr_where = standard to filter the n draws afterwards.")));
		param = makeNode(Param);
		param->paramkind = PARAM_EXTERN;
		param->paramid = list_length(cxt->args) + 1;
		param->paramtype = exprType(node);
		param->paramtypmod = exprTypmod(node);
		param->paramcollid = exprCollation(node);
		param->location = -1;
		cxt->args = lappend(cxt->args, copyObject(node));
		return (Node *) param;
	}
	return expression_tree_mutator(node, swr_args_mutator, cxt);
}

/*
 * Take WHERE's conditions on rti alone out of the query, and return them as
 * SQL text over the table (NULL if none), with in *args what its $n stand
 * for.  Conditions on other tables too are join conditions, not the
 * sample's, and stay.
 */
static char *
swr_take_conditions(Query *q, Index rti, Oid relid, List **args)
{
	List	   *conds = make_ands_implicit((Expr *) q->jointree->quals);
	List	   *keep = NIL;
	List	   *take = NIL;
	ListCell   *lc;
	SwrArgContext cxt = {rti, relid, NIL};
	Node	   *expr;

	foreach(lc, conds)
	{
		Node	   *cond = lfirst(lc);

		if (bms_equal(pull_varnos(NULL, cond), bms_make_singleton(rti)))
			take = lappend(take, cond);
		else
			keep = lappend(keep, cond);
	}
	if (take == NIL)
		return NULL;
	q->jointree->quals = keep == NIL ? NULL : (Node *) make_ands_explicit(keep);
	expr = swr_args_mutator((Node *) make_ands_explicit(take), &cxt);
	ChangeVarNodes(expr, rti, 1, 0);
	*args = cxt.args;
	return deparse_expression(expr, deparse_context_for(get_rel_name(relid), relid),
							  false, false);
}

/*
 * The OID of swr_citus_sample(anyelement, regclass, float8, float8, text,
 * VARIADIC "any"), in the schema of the swr handler the query names, which
 * is abtree's.
 */
static Oid
swr_citus_function(TableSampleClause *tsc)
{
	Oid			argtypes[6] = {ANYELEMENTOID, REGCLASSOID, FLOAT8OID, FLOAT8OID, TEXTOID, ANYOID};
	char	   *schema = get_namespace_name(get_func_namespace(tsc->tsmhandler));
	List	   *name = list_make1(makeString(schema));

	name = lappend(name, makeString("swr_citus_sample"));

	return LookupFuncName(name, 6, argtypes, false);
}

/*
 * Replace range table entry rti, a distributed table sampled with swr(n),
 * by swr_citus_sample(NULL::rowtype, table, n, seed, conditions, the number
 * of the conditions' parameters, the parameters...): a
 * function scan with the table's columns, numbered as the table's, so that
 * every Var of the query keeps its meaning.
 */
static void
swr_citus_replace(Query *q, Index rti)
{
	RangeTblEntry *rte = rt_fetch(rti, q->rtable);
	Oid			relid = rte->relid;
	Oid			rowtype = get_rel_type_id(relid);
	TableSampleClause *tsc = rte->tablesample;
	SwrVarContext cxt = {rti, 0, true};
	char	   *conds = NULL;
	Node	   *seed;
	Node	   *condsarg;
	List	   *condargs = NIL;
	List	   *args;
	FuncExpr   *call;
	RangeTblFunction *rtfunc = makeNode(RangeTblFunction);
	TupleDesc	desc;

	if (query_tree_walker(q, swr_refers_to, &cxt, 0))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("TABLESAMPLE swr on distributed table \"%s\" cannot return system columns",
						get_rel_name(relid)),
				 errdetail("The sample is gathered from the shards on the coordinator, where the rows have no ctid, xmin or tableoid of their own.")));
	if (abt_swr_where == SWR_WHERE_REDRAW)
		conds = swr_take_conditions(q, rti, relid, &condargs);

	seed = tsc->repeatable ? (Node *) copyObject(tsc->repeatable) :
		(Node *) makeNullConst(FLOAT8OID, -1, InvalidOid);
	condsarg = conds ? (Node *) makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1,
										  CStringGetTextDatum(conds), false, false) :
		(Node *) makeNullConst(TEXTOID, -1, DEFAULT_COLLATION_OID);
	/* one at a time: the order of a list's members is the arguments' */
	args = list_make1(makeNullConst(rowtype, -1, InvalidOid));
	args = lappend(args, makeConst(REGCLASSOID, -1, InvalidOid, sizeof(Oid),
								   ObjectIdGetDatum(relid), false, true));
	args = lappend(args, copyObject(linitial(tsc->args)));
	args = lappend(args, seed);
	args = lappend(args, condsarg);
	/* VARIADIC "any" needs one argument at least: the count comes first */
	args = lappend(args, makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
								   Int32GetDatum(list_length(condargs)), false, true));
	args = list_concat(args, condargs);
	call = makeFuncExpr(swr_citus_function(tsc), rowtype, args, InvalidOid, InvalidOid,
						COERCE_EXPLICIT_CALL);
	call->funcretset = true;
	desc = lookup_rowtype_tupdesc(rowtype, -1);
	rtfunc->funcexpr = (Node *) call;
	rtfunc->funccolcount = desc->natts;
	ReleaseTupleDesc(desc);

	/*
	 * The table's own permission entry stays (on 16 and later the query's
	 * list of them keeps it), and the rounds' queries read the table as the
	 * current user, under its policies: nothing is read that the user could
	 * not select.
	 */
	rte->rtekind = RTE_FUNCTION;
	rte->functions = list_make1(rtfunc);
	rte->funcordinality = false;
	rte->tablesample = NULL;
	rte->inh = false;
	rte->relid = InvalidOid;
	rte->relkind = 0;
	rte->rellockmode = NoLock;
	rte->securityQuals = NIL;
#if PG_VERSION_NUM >= 160000
	rte->perminfoindex = 0;
#else
	rte->requiredPerms = 0;
	rte->selectedCols = NULL;
#endif
}

/* Rewrite every distributed swr(n) of a query and of its subqueries. */
static bool
swr_citus_walker(Node *node, void *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		Query	   *q = (Query *) node;
		Index		rti;

		/* subqueries first: a replaced entry has no subquery left to visit */
		query_tree_walker(q, swr_citus_walker, cxt, 0);
		for (rti = 1; rti <= list_length(q->rtable); rti++)
		{
			RangeTblEntry *rte = rt_fetch(rti, q->rtable);

			if (rte->rtekind == RTE_RELATION && rte->tablesample &&
				swr_is_swr_tablesample(rte->tablesample) &&
				!swr_is_shard_tablesample(rte->tablesample) &&
				swr_citus_needs_rounds(rte->relid))
				swr_citus_replace(q, rti);
		}
		return false;
	}
	return expression_tree_walker(node, swr_citus_walker, cxt);
}

/* Does the query sample anything with swr?  Cheap: most queries do not. */
static bool
swr_samples(Node *node, void *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		ListCell   *lc;

		foreach(lc, ((Query *) node)->rtable)
		{
			RangeTblEntry *rte = lfirst(lc);

			if (rte->rtekind == RTE_RELATION && rte->tablesample &&
				swr_is_swr_tablesample(rte->tablesample))
				return true;
		}
		return query_tree_walker((Query *) node, swr_samples, cxt, 0);
	}
	return expression_tree_walker(node, swr_samples, cxt);
}

static PlannedStmt *
swr_citus_planner(Query *parse, const char *query_string, int cursorOptions,
				  ParamListInfo boundParams)
{
	if (OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE)) &&
		swr_samples((Node *) parse, NULL))
		swr_citus_walker((Node *) parse, NULL);
	if (prev_planner_hook)
		return prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

void
swr_citus_install_hook(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = swr_citus_planner;
}

/* ---- the shards' side ---- */

/*
 * The Citus shard id of a shard's relation: Citus names shards
 * <table>_<shardid> (a long table name is shortened before the suffix).
 */
static int64
swr_shard_id_of(Relation rel)
{
	const char *name = RelationGetRelationName(rel);
	const char *us = strrchr(name, '_');
	char	   *end;
	int64		id;

	errno = 0;
	id = us && us[1] ? strtoi64(us + 1, &end, 10) : -1;
	if (id <= 0 || errno != 0 || *end != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("TABLESAMPLE swr_shard is for the shards of a Citus table, and \"%s\" is not one",
						name),
				 errhint("Sample with TABLESAMPLE swr(n): on a distributed table, the coordinator sends each shard its part.")));
	return id;
}

/*
 * The seed of a shard's part of a distributed swr(n): the round's seed,
 * which every shard receives, mixed with the shard id, so that the shards
 * draw independently (shards on different workers can have the same OID).
 */
uint32
swr_shard_seed(Relation scanrel, uint32 seed)
{
	int64		me = swr_shard_id_of(scanrel);

	return hash_combine(seed, hash_bytes_uint32((uint32) me) ^ (uint32) (me >> 32));
}

/*
 * swr_shard(rate)'s argument: attempts per unit of weight, finite and not
 * negative; 0 is a probe, which returns one row of NULLs whose tableoid is
 * the shard's (swr_citus_exec.c weighs the shards with it).
 */
double
swr_shard_rate(Datum arg)
{
	double		rate = DatumGetFloat8(arg);

	if (isnan(rate) || rate < 0 || rate > SWR_MAX_N)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLESAMPLE_ARGUMENT),
				 errmsg("TABLESAMPLE swr_shard rate must be from 0 to %d, not %s",
						SWR_MAX_N, float8out_internal(rate))));
	return rate;
}

/*
 * A Poisson variate of the given mean: Knuth's product of uniforms below
 * 10, else Hormann's transformed rejection with squeeze (PTRS, 1993), which
 * is exact and takes about one iteration at any mean.
 */
int64
swr_poisson(pg_prng_state *prng, double mean)
{
	double		b,
				a,
				invalpha,
				vr,
				loglam;

	if (mean <= 0)
		return 0;
	if (mean > (double) SWR_MAX_N * 100)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLESAMPLE_ARGUMENT),
				 errmsg("TABLESAMPLE swr_shard would make %.0f attempts on shard", mean),
				 errhint("The rate is attempts per unit of weight: lower it.")));
	if (mean < 10)
	{
		double		limit = exp(-mean);
		double		p = 1;
		int64		k = -1;

		do
		{
			k++;
			p *= pg_prng_double(prng);
		} while (p > limit);
		return k;
	}
	loglam = log(mean);
	b = 0.931 + 2.53 * sqrt(mean);
	a = -0.059 + 0.02483 * b;
	invalpha = 1.1239 + 1.1328 / (b - 3.4);
	vr = 0.9277 - 3.6224 / (b - 2);
	for (;;)
	{
		double		u = pg_prng_double(prng) - 0.5;
		double		v = 1.0 - pg_prng_double(prng); /* (0, 1] */
		double		us = 0.5 - fabs(u);
		double		k = floor((2 * a / us + b) * u + mean + 0.43);

		if (us >= 0.07 && v <= vr)
			return (int64) k;
		if (k < 0 || (us < 0.013 && v > us))
			continue;
		if (log(v) + log(invalpha) - log(a / (us * us) + b) <=
			-mean + k * loglam - lgamma(k + 1))
			return (int64) k;
	}
}

/*
 * The weight a shard's draws spread over, as a draw of swr_shard sees it:
 * its index's (or its partitions' indexes') total visible weight.
 */
static double
swr_table_weight(Relation heap, Snapshot snapshot)
{
	Relation	index = swr_open_index(heap);
	MvsReader	reader;
	double		total;

	abt_refuse_newer_build(index, snapshot);
	mvs_reader_init(&reader, index, snapshot);
	total = abt_sample_total(index, NULL, &reader);
	index_close(index, NoLock);
	return total;
}

PG_FUNCTION_INFO_V1(swr_shard_weight);

/*
 * swr_shard_weight(regclass) RETURNS float8: what swr_citus_sample asks of
 * each shard, through a probe (swr_citus_exec.c), before splitting the draws.
 */
Datum
swr_shard_weight(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	heap;
	List	   *members;
	ListCell   *lc;
	double		total = 0;

	abt_require_preload();
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid))));
	abt_refuse_under_rls(relid);
	heap = table_open(relid, AccessShareLock);
	if (heap->rd_rel->relkind != RELKIND_RELATION &&
		heap->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(heap)),
				 errhint("swr_shard_weight weighs a table (a Citus shard) sampled with TABLESAMPLE swr.")));
	members = heap->rd_rel->relkind == RELKIND_PARTITIONED_TABLE ?
		find_all_inheritors(relid, AccessShareLock, NULL) : list_make1_oid(relid);
	foreach(lc, members)
	{
		Relation	member;

		if (get_rel_relkind(lfirst_oid(lc)) != RELKIND_RELATION)
			continue;
		member = lfirst_oid(lc) == relid ? heap : table_open(lfirst_oid(lc), AccessShareLock);
		total += swr_table_weight(member, GetActiveSnapshot());
		if (member != heap)
			table_close(member, NoLock);
	}
	table_close(heap, NoLock);
	PG_RETURN_FLOAT8(total);
}
