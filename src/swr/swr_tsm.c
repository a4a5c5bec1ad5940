/*-------------------------------------------------------------------------
 *
 * swr_tsm.c
 *	  The TABLESAMPLE method swr(n): its handler, the validation of n and the
 *	  planner's size estimate.
 *
 * The syntax TABLESAMPLE swr(n) needs a TsmRoutine, but the sampling itself
 * is done by "Custom Scan (swr)" (swr_plan.c, swr_scan.c): the planner hook
 * replaces every sample scan path of swr by it.  The block and tuple
 * callbacks below are therefore never called, unless the hook did not run
 * (the library was not preloaded, or another extension's hook did not
 * chain ours) or a plan uses a member of an appendrel directly (a
 * partitionwise join): then they raise an ERROR rather than draw n rows
 * per partition.
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"

#include <math.h>

#include "access/tsmapi.h"
#include "catalog/pg_type.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "utils/float.h"
#include "utils/rel.h"

/* ---- arguments and planning ---- */

/* n as a row count: a whole number from 0 to SWR_MAX_N. */
int64
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

/*
 * swr_shard(rate): a Citus shard's part of a distributed swr(n), whose
 * count the scan draws at run time (swr_citus.c).  The planner sees an
 * unknown count: the guess of a run-time n.
 */
static void
swr_shard_samplescangetsamplesize(PlannerInfo *root, RelOptInfo *baserel,
								  List *paramexprs, BlockNumber *pages, double *tuples)
{
	*pages = (BlockNumber) Min(baserel->pages, 1000);
	*tuples = 1000;
}

/* ---- the TsmRoutine callbacks ---- */

static void
swr_initsamplescan(SampleScanState *node, int eflags)
{
	abt_require_preload();
}

/* The planner hook should have replaced this sample scan: it did not. */
static void
swr_beginsamplescan(SampleScanState *node, Datum *params, int nparams,
					uint32 seed)
{
	abt_require_preload();
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("TABLESAMPLE swr on \"%s\" was planned without abtree's custom scan",
					RelationGetRelationName(node->ss.ss_currentRelation)),
			 errdetail("Every partition would draw n rows of its own."),
			 errhint("This happens in partitionwise joins (SET enable_partitionwise_join = off), or when another extension's set_rel_pathlist_hook does not call abtree's.")));
}

static BlockNumber
swr_nextsampleblock(SampleScanState *node, BlockNumber nblocks)
{
	return InvalidBlockNumber;
}

static OffsetNumber
swr_nextsampletuple(SampleScanState *node, BlockNumber blockno,
					OffsetNumber maxoffset)
{
	return InvalidOffsetNumber;
}

/* Is this TABLESAMPLE clause ours? */
bool
swr_is_swr_tablesample(TableSampleClause *tsc)
{
	return GetTsmRoutine(tsc->tsmhandler)->BeginSampleScan == swr_beginsamplescan;
}

/* Is it swr_shard(rate), a Citus shard's part? */
bool
swr_is_shard_tablesample(TableSampleClause *tsc)
{
	return GetTsmRoutine(tsc->tsmhandler)->SampleScanGetSampleSize ==
		swr_shard_samplescangetsamplesize;
}

PG_FUNCTION_INFO_V1(swr_handler);
PG_FUNCTION_INFO_V1(swr_shard_handler);

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
	tsm->EndSampleScan = NULL;

	PG_RETURN_POINTER(tsm);
}

/*
 * swr_shard(internal) RETURNS tsm_handler: TABLESAMPLE swr_shard(rate
 * float8), what a distributed swr(n) sends to every shard of a Citus table
 * (src/swr/README, "Citus distributed tables").  Same scan, another count.
 */
Datum
swr_shard_handler(PG_FUNCTION_ARGS)
{
	TsmRoutine *tsm = (TsmRoutine *) DatumGetPointer(swr_handler(fcinfo));

	tsm->SampleScanGetSampleSize = swr_shard_samplescangetsamplesize;
	PG_RETURN_POINTER(tsm);
}
