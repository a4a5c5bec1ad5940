/*-------------------------------------------------------------------------
 *
 * pbthandler.c
 *	  The pbtree IndexAmRoutine and its reloptions.
 *
 * pbtree uses abtree's operator classes' numbering (btree's strategies and
 * support function 1), so its operator classes are declared like abtree's
 * and the planner treats it as an ordered index.  It has no reloptions of
 * its own (unknown ones are refused); the GUCs abtree.pbtree_* govern it.
 * Unique indexes are refused: a uniqueness check would have to search
 * every partition under a lock that keeps inserts of the same key out,
 * which pbtree does not have yet.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "access/nbtree.h"
#include "access/reloptions.h"
#include "commands/vacuum.h"
#include "utils/index_selfuncs.h"

static relopt_kind pbt_relopt_kind;

/* Called from _PG_init, preloaded or not: reloptions must parse anywhere. */
void
pbt_init_reloptions(void)
{
	pbt_relopt_kind = add_reloption_kind();
}

static bytea *
pbtoptions(Datum reloptions, bool validate)
{
	return (bytea *) build_reloptions(reloptions, validate, pbt_relopt_kind,
									  sizeof(AbtOptions), NULL, 0);
}

static bool
pbtcanreturn(Relation index, int attno)
{
	return true;
}

static char *
pbtbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case 1:
			return "initializing";
		case 2:
			return "scanning table";
		case 3:
			return "sorting live tuples";
		case 4:
			return "loading tuples in tree";
		default:
			return NULL;
	}
}

PG_FUNCTION_INFO_V1(pbtree_am_handler);

Datum
pbtree_am_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = BTMaxStrategyNumber;
	amroutine->amsupport = 2;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = true;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = false;	/* no change of direction midway */
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = true;
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;
#if PG_VERSION_NUM >= 160000
	amroutine->amsummarizing = false;
#endif
#if PG_VERSION_NUM >= 170000
	amroutine->amcanbuildparallel = false;
#endif
#if PG_VERSION_NUM >= 180000
	amroutine->amcanhash = false;
	amroutine->amconsistentequality = true;
	amroutine->amconsistentordering = true;
#endif

	amroutine->ambuild = pbtbuild;
	amroutine->ambuildempty = pbtbuildempty;
	amroutine->aminsert = pbtinsert;
	amroutine->ambulkdelete = pbtbulkdelete;
	amroutine->amvacuumcleanup = pbtvacuumcleanup;
	amroutine->amcanreturn = pbtcanreturn;
	amroutine->amcostestimate = btcostestimate;
	amroutine->amoptions = pbtoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = pbtbuildphasename;
	amroutine->amvalidate = abtvalidate_opclass;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = pbtbeginscan;
	amroutine->amrescan = pbtrescan;
	amroutine->amgettuple = pbtgettuple;
	amroutine->amgetbitmap = pbtgetbitmap;
	amroutine->amendscan = pbtendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;
#if PG_VERSION_NUM >= 180000
	amroutine->amtranslatestrategy = bttranslatestrategy;
	amroutine->amtranslatecmptype = bttranslatecmptype;
#endif

	PG_RETURN_POINTER(amroutine);
}
