/*-------------------------------------------------------------------------
 *
 * abthandler.c
 *	  The abtree IndexAmRoutine, its reloptions, cost estimate, validation.
 *
 * abtree numbers its strategies and support functions like btree (1-5:
 * < <= = >= >; support 1: the comparison function, 2: sortsupport), so the
 * planner can treat it as an ordered index and its cost is estimated the
 * way a btree of the same shape is (btcostestimate).
 *
 * The handler must work without the library being preloaded: the relcache
 * calls it whenever an abtree index is opened, also for DROP INDEX and DROP
 * EXTENSION.  The callbacks check instead (src/README).
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/relation.h"
#include "access/reloptions.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_opclass.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/index_selfuncs.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

static relopt_kind abt_relopt_kind;
static ProcessUtility_hook_type prev_ProcessUtility_hook = NULL;
static relopt_parse_elt abt_relopt_tab[6];

/* Entry i of the parse table: the option's name, type and offset */
static void
abt_relopt_entry(int i, const char *name, relopt_type type, int offset)
{
	abt_relopt_tab[i].optname = name;
	abt_relopt_tab[i].opttype = type;
	abt_relopt_tab[i].offset = offset;
}

/* Called from _PG_init, preloaded or not: reloptions must parse anywhere. */
void
abt_init_reloptions(void)
{
	abt_relopt_kind = add_reloption_kind();
	add_int_reloption(abt_relopt_kind, "fillfactor",
					  "Packs abtree leaf pages only to this percentage when building",
					  ABT_DEFAULT_FILLFACTOR, ABT_MIN_FILLFACTOR, 100,
					  AccessExclusiveLock);
	add_string_reloption(abt_relopt_kind, "weight_column",
						 "Index column (key or INCLUDE, integer) whose value is each entry's sampling weight",
						 NULL, NULL, AccessExclusiveLock);
	add_bool_reloption(abt_relopt_kind, "sketch",
					   "Keeps a distinct-value sketch of each key column (the first four) for the planner; takes effect at the next build or REINDEX",
					   true, AccessExclusiveLock);
	add_bool_reloption(abt_relopt_kind, "key_sketch",
					   "With sketch on and two or three key columns, also keeps a sketch of whole keys (distinct combinations); takes effect at the next build or REINDEX",
					   true, AccessExclusiveLock);
	add_int_reloption(abt_relopt_kind, "sketch_buckets",
					  "Buckets of each distinct-value sketch, a power of two: more are more accurate and larger; takes effect at the next build or REINDEX",
					  1 << ABT_SKETCH_DEFAULT_LOG2M, 1 << ABT_SKETCH_MIN_LOG2M,
					  1 << ABT_SKETCH_MAX_LOG2M, AccessExclusiveLock);
	add_bool_reloption(abt_relopt_kind, "deduplicate_items",
					   "Folds entries whose columns are equal into one posting tuple when building; takes effect at the next build or REINDEX",
					   true, AccessExclusiveLock);
	abt_relopt_entry(0, "fillfactor", RELOPT_TYPE_INT, offsetof(AbtOptions, fillfactor));
	abt_relopt_entry(1, "weight_column", RELOPT_TYPE_STRING, offsetof(AbtOptions, weight_column));
	abt_relopt_entry(2, "sketch", RELOPT_TYPE_BOOL, offsetof(AbtOptions, sketch));
	abt_relopt_entry(3, "key_sketch", RELOPT_TYPE_BOOL, offsetof(AbtOptions, key_sketch));
	abt_relopt_entry(4, "sketch_buckets", RELOPT_TYPE_INT, offsetof(AbtOptions, sketch_buckets));
	abt_relopt_entry(5, "deduplicate_items", RELOPT_TYPE_BOOL,
					 offsetof(AbtOptions, deduplicate_items));
}

static bytea *
abtoptions(Datum reloptions, bool validate)
{
	AbtOptions *opts = (AbtOptions *) build_reloptions(reloptions, validate, abt_relopt_kind,
													   sizeof(AbtOptions), abt_relopt_tab,
													   lengthof(abt_relopt_tab));

	/* PostgreSQL checked the range; that it is a power of two is ours */
	if (opts && (opts->sketch_buckets & (opts->sketch_buckets - 1)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for abtree option \"sketch_buckets\": %d",
						opts->sketch_buckets),
				 errdetail("The bucket count must be a power of two from %d to %d.",
						   1 << ABT_SKETCH_MIN_LOG2M, 1 << ABT_SKETCH_MAX_LOG2M),
				 errhint("The default, %d, keeps the mean ratio error of an estimate near 1.02; each doubling divides the error by about 1.4 and adds sketch pages (src/hll/README).",
						 1 << ABT_SKETCH_DEFAULT_LOG2M)));
	return (bytea *) opts;
}

static bool
abtcanreturn(Relation index, int attno)
{
	return true;				/* key and INCLUDE columns are all in the leaf tuple */
}

static char *
abtbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
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

/*
 * Every opclass needs a comparison function (support 1) for its own type,
 * and all its operators must use strategies 1 to 5.
 */
static bool
abtvalidate_opclass(Oid opclassoid)
{
	HeapTuple	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	Form_pg_opclass opclass;
	bool		ok;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	opclass = (Form_pg_opclass) GETSTRUCT(tup);
	ok = OidIsValid(get_opfamily_proc(opclass->opcfamily, opclass->opcintype,
									  opclass->opcintype, 1));
	if (!ok)
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("abtree operator class \"%s\" lacks support function 1",
						NameStr(opclass->opcname))));
	ReleaseSysCache(tup);
	return ok;
}

/*
 * abtree's IndexAmRoutine.  pbtree (src/pbtree/pbthandler.c) starts from it:
 * the same ordered-index properties, options aside, and its own callbacks.
 */
void
abt_fill_amroutine(IndexAmRoutine *amroutine)
{

	amroutine->amstrategies = BTMaxStrategyNumber;
	amroutine->amsupport = 2;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = true;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = true;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = true;
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

	amroutine->ambuild = abtbuild;
	amroutine->ambuildempty = abtbuildempty;
	amroutine->aminsert = abtinsert;
	amroutine->ambulkdelete = abtbulkdelete;
	amroutine->amvacuumcleanup = abtvacuumcleanup;
	amroutine->amcanreturn = abtcanreturn;
	amroutine->amcostestimate = btcostestimate;
	amroutine->amoptions = abtoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = abtbuildphasename;
	amroutine->amvalidate = abtvalidate_opclass;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = abtbeginscan;
	amroutine->amrescan = abtrescan;
	amroutine->amgettuple = abtgettuple;
	amroutine->amgetbitmap = abtgetbitmap;
	amroutine->amendscan = abtendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;
#if PG_VERSION_NUM >= 180000
	amroutine->amtranslatestrategy = bttranslatestrategy;
	amroutine->amtranslatecmptype = bttranslatecmptype;
#endif
}

PG_FUNCTION_INFO_V1(abtree_am_handler);

Datum
abtree_am_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	abt_fill_amroutine(amroutine);
	PG_RETURN_POINTER(amroutine);
}


/* Is relid an abtree index (or partitioned abtree index)?  From pg_class. */
static bool
abt_is_abtree_index(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		result = false;

	if (HeapTupleIsValid(tup))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);

		result = (form->relkind == RELKIND_INDEX ||
				  form->relkind == RELKIND_PARTITIONED_INDEX) &&
			form->relam == get_index_am_oid("abtree", true);
		ReleaseSysCache(tup);
	}
	return result;
}

/*
 * ALTER INDEX (or ALTER TABLE on an index) SET / RESET / replace of an
 * abtree index's reloptions: the index; InvalidOid for any other statement
 * (which the hook then leaves entirely alone).
 */
static Oid
abt_reloptions_target(Node *stmt)
{
	AlterTableStmt *ats;
	ListCell   *lc;

	if (!IsA(stmt, AlterTableStmt))
		return InvalidOid;
	ats = (AlterTableStmt *) stmt;
	foreach(lc, ats->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_SetRelOptions || cmd->subtype == AT_ResetRelOptions ||
			cmd->subtype == AT_ReplaceRelOptions)
		{
			Oid			relid = RangeVarGetRelid(ats->relation, NoLock, true);

			return OidIsValid(relid) && abt_is_abtree_index(relid) ? relid : InvalidOid;
		}
	}
	return InvalidOid;
}

/*
 * A statement that may put an existing index under a partitioned abtree
 * index (abt_check_partition_weighting): CREATE INDEX USING abtree, or
 * ATTACH PARTITION, on a table (*is_index false) or an index.  The relation
 * named, or InvalidOid.
 */
static Oid
abt_partition_attach_target(Node *stmt, bool *is_index)
{
	*is_index = false;
	if (IsA(stmt, IndexStmt))
	{
		IndexStmt  *is = (IndexStmt *) stmt;
		Oid			relid;

		if (is->accessMethod == NULL || strcmp(is->accessMethod, "abtree") != 0)
			return InvalidOid;
		relid = RangeVarGetRelid(is->relation, NoLock, true);
		/* only a partitioned table's CREATE INDEX attaches existing indexes */
		return get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE ? relid : InvalidOid;
	}
	if (IsA(stmt, AlterTableStmt))
	{
		AlterTableStmt *ats = (AlterTableStmt *) stmt;
		ListCell   *lc;

		foreach(lc, ats->cmds)
		{
			if (lfirst_node(AlterTableCmd, lc)->subtype != AT_AttachPartition)
				continue;
			*is_index = ats->objtype == OBJECT_INDEX;
			return RangeVarGetRelid(ats->relation, NoLock, true);
		}
	}
	return InvalidOid;
}

/* ALTER TABLE (or a table-like relation) ... RENAME COLUMN: the relation. */
static Oid
abt_column_rename_target(Node *stmt)
{
	RenameStmt *rs;

	if (!IsA(stmt, RenameStmt))
		return InvalidOid;
	rs = (RenameStmt *) stmt;
	if (rs->renameType != OBJECT_COLUMN || rs->relation == NULL)
		return InvalidOid;
	return RangeVarGetRelid(rs->relation, NoLock, true);
}

/* After such a statement: check the partitioned abtree indexes it touched. */
static void
abt_check_attached(Oid relid, bool is_index)
{
	List	   *indexes;
	ListCell   *lc;

	CommandCounterIncrement();	/* see the new index or inheritance */
	if (is_index)
		indexes = list_make1_oid(relid);
	else if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
	{
		Relation	table = relation_open(relid, AccessShareLock);

		indexes = RelationGetIndexList(table);
		relation_close(table, AccessShareLock);
	}
	else
		return;
	foreach(lc, indexes)
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_PARTITIONED_INDEX &&
			abt_is_abtree_index(lfirst_oid(lc)))
			abt_check_partition_weighting(lfirst_oid(lc));
}

/*
 * Check an abtree index's reloptions after the statement that changed them
 * ran, in its transaction (abt_check_altered_options): the reloption
 * validator sees the option's text only, not the index's columns.  And
 * check the weighting of the partitioned abtree indexes a statement may
 * have attached existing indexes to, and carry a renamed column's new name
 * into the weight_column of the indexes that weigh by it.
 */
static void
abt_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					ProcessUtilityContext context, ParamListInfo params,
					QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Oid			relid = abt_reloptions_target(pstmt->utilityStmt);
	bool		attach_index;
	Oid			attach = abt_partition_attach_target(pstmt->utilityStmt, &attach_index);
	Oid			renamed = abt_column_rename_target(pstmt->utilityStmt);

	if (prev_ProcessUtility_hook)
		prev_ProcessUtility_hook(pstmt, queryString, readOnlyTree, context, params,
								 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);

	if (OidIsValid(relid))
	{
		Relation	rel;

		CommandCounterIncrement();	/* see the new reloptions */
		rel = relation_open(relid, AccessShareLock);
		abt_check_altered_options(rel);
		relation_close(rel, AccessShareLock);
	}
	if (OidIsValid(attach))
		abt_check_attached(attach, attach_index);
	if (OidIsValid(renamed))
	{
		RenameStmt *rs = (RenameStmt *) pstmt->utilityStmt;

		CommandCounterIncrement();	/* see the column's new name */
		abt_rename_weight_columns(renamed, rs->subname, rs->newname, rs->relation->inh);
	}
}

void
abt_install_utility_hook(void)
{
	prev_ProcessUtility_hook = ProcessUtility_hook;
	ProcessUtility_hook = abt_process_utility;
}
