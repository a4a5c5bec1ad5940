/*-------------------------------------------------------------------------
 *
 * pbthandler.c
 *	  The pbtree IndexAmRoutine and its reloptions.
 *
 * pbtree starts from abtree's IndexAmRoutine: the same operator class
 * numbering (btree's strategies and support function 1), so its operator
 * classes are declared like abtree's and the planner treats it as an
 * ordered index; only the callbacks and backward scans differ.  It has no reloptions of
 * its own (unknown ones are refused); the GUCs abtree.pbtree_* govern it.
 * Unique indexes are refused: a uniqueness check would have to search
 * every partition under a lock that keeps inserts of the same key out,
 * which pbtree does not have yet.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "access/reloptions.h"

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

PG_FUNCTION_INFO_V1(pbtree_am_handler);

Datum
pbtree_am_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	abt_fill_amroutine(amroutine);
	amroutine->amcanbackward = false;	/* no change of direction midway */
	amroutine->amoptions = pbtoptions;
	amroutine->ambuild = pbtbuild;
	amroutine->ambuildempty = pbtbuildempty;
	amroutine->aminsert = pbtinsert;
	amroutine->ambulkdelete = pbtbulkdelete;
	amroutine->amvacuumcleanup = pbtvacuumcleanup;
	amroutine->ambeginscan = pbtbeginscan;
	amroutine->amrescan = pbtrescan;
	amroutine->amgettuple = pbtgettuple;
	amroutine->amgetbitmap = pbtgetbitmap;
	amroutine->amendscan = pbtendscan;
	PG_RETURN_POINTER(amroutine);
}
