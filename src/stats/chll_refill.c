/*-------------------------------------------------------------------------
 *
 * chll_refill.c
 *	  After ANALYZE, fill again the statistics objects that
 *	  abtree_ndistinct_store froze and that have lost their data.
 *
 * abtree_ndistinct_store sets the object's statistics target to 0 so that
 * ANALYZE keeps its values (chll_extstats.c).  pg_dump dumps that target
 * but not the data (pg_statistic_ext_data never is), so after a restore
 * the object is empty, ANALYZE skips it, and the planner had nothing
 * better than before the store (issue 25, item 5).  The usual step after
 * a restore is ANALYZE (vacuumdb --analyze-in-stages does it): so after
 * every ANALYZE, and VACUUM (ANALYZE), run from SQL, the objects of the
 * analyzed tables that are frozen (target 0), have the ndistinct kind and
 * hold no ndistinct data are filled again, with the store's defaults
 * (30,000 sample rows, a random seed), and stay frozen.
 *
 * Which objects: those three marks are what the store leaves and a
 * restore turns into "empty"; an object a user froze by hand before any
 * data was written is treated alike, and gets our estimates instead of
 * none.  Only tables with an abtree index are looked at (the sample needs
 * one), and only objects the current user owns, as ANALYZE skips tables it
 * may not analyze.  A failure (a weighted index only, say) becomes a
 * WARNING: ANALYZE has done its own work and must not be undone by ours.
 *
 * Auto-analyze (issue 24, item 3) goes through no utility hook, but it
 * calls each index AM's amvacuumcleanup with analyze_only, after the
 * table's statistics are written (an ANALYZE without VACUUM; autovacuum's
 * combined VACUUM and ANALYZE runs make no such call).  There, in an
 * autovacuum worker, every frozen ndistinct object of the table is
 * refreshed, empty or not: that is what keeps abtree's multi-column
 * estimates current without a manual call.  The worker runs it as the
 * table's owner under ANALYZE's security restrictions, once per table.
 * An ANALYZE from SQL keeps filling only the empty ones, so that values a
 * user stored with a fixed seed stay until the next auto-analyze.
 *
 * Autovacuum's combined VACUUM and ANALYZE of a table (a table with both
 * dead rows and changes: the common case for one that is updated) makes
 * no analyze-only call.  Its only call into the index AM is inside the
 * lazy VACUUM, whose transaction must not write catalogs (PROC_IN_VACUUM:
 * other backends' horizons leave it out).  There the table is only noted;
 * vacuum() then runs the table's ANALYZE in a transaction of its own, and
 * as that commits, if it analyzed the table (its pg_statistic rows are
 * that transaction's), the objects are refreshed, as the table's owner
 * under ANALYZE's security restrictions, as above.  Any other transaction
 * (a VACUUM without ANALYZE) forgets the note.
 *
 *-------------------------------------------------------------------------
 */
#include "stats/stats.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_statistic_ext.h"
#include "catalog/pg_statistic_ext_data.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "postmaster/autovacuum.h"
#include "statistics/statistics.h"
#include "storage/proc.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#define CHLL_REFILL_SAMPLE_ROWS 30000

/* PostgreSQL 17 renamed it */
#if PG_VERSION_NUM >= 170000
#define chll_in_autovacuum_worker() AmAutoVacuumWorkerProcess()
#else
#define chll_in_autovacuum_worker() IsAutoVacuumWorkerProcess()
#endif

static ProcessUtility_hook_type prev_ProcessUtility_hook = NULL;

/* The schema of extension ext (get_extension_schema is static before 16) */
static Oid
chll_extension_schema(Oid ext)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

/* ANALYZE, or VACUUM with the ANALYZE option; *verbose from VERBOSE */
static bool
chll_is_analyze(VacuumStmt *stmt, bool *verbose)
{
	bool		analyze = !stmt->is_vacuumcmd;
	ListCell   *lc;

	*verbose = false;
	foreach(lc, stmt->options)
	{
		DefElem    *opt = (DefElem *) lfirst(lc);

		if (strcmp(opt->defname, "analyze") == 0)
			analyze = defGetBoolean(opt);
		else if (strcmp(opt->defname, "verbose") == 0)
			*verbose = defGetBoolean(opt);
	}
	return analyze;
}

/*
 * Frozen (statistics target 0) with the ndistinct kind and no such data?
 * With refresh, whether it holds data or not.
 */
static bool
chll_refill_candidate(HeapTuple tup, bool refresh)
{
	Form_pg_statistic_ext st = (Form_pg_statistic_ext) GETSTRUCT(tup);
	bool		isnull;
	HeapTuple	data;
#if PG_VERSION_NUM >= 170000
	Datum		d;
#endif

#if PG_VERSION_NUM >= 170000
	d = SysCacheGetAttr(STATEXTOID, tup, Anum_pg_statistic_ext_stxstattarget, &isnull);
	if (isnull || DatumGetInt16(d) != 0)
		return false;
#else
	if (st->stxstattarget != 0)
		return false;
#endif
	if (!chll_stat_has_kind(tup, STATS_EXT_NDISTINCT))
		return false;
	if (refresh)
		return true;
	data = SearchSysCache2(STATEXTDATASTXOID, ObjectIdGetDatum(st->oid), BoolGetDatum(false));
	if (!HeapTupleIsValid(data))
		return true;
	(void) SysCacheGetAttr(STATEXTDATASTXOID, data, Anum_pg_statistic_ext_data_stxdndistinct,
						   &isnull);
	ReleaseSysCache(data);
	return isnull;
}

/* Has the table an abtree index, and may the current user fill its objects? */
static bool
chll_refill_table_ok(Oid relid, Oid statoid, Oid amoid)
{
	Relation	rel;
	List	   *indexes;
	bool		found = false;
	ListCell   *lc;

	if (!chll_stat_is_owner(statoid))
		return false;
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		return false;
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(lfirst_oid(lc)));

		if (HeapTupleIsValid(tup))
		{
			found |= ((Form_pg_class) GETSTRUCT(tup))->relam == amoid;
			ReleaseSysCache(tup);
		}
	}
	list_free(indexes);
	relation_close(rel, AccessShareLock);
	return found;
}

/* Fill one object in a subtransaction; a failure becomes a WARNING. */
static void
chll_refill_one(Oid statoid, const char *name, Oid extnsp, int elevel)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		int32		n = chll_stat_store(statoid, CHLL_REFILL_SAMPLE_ROWS, false, 0, true, extnsp);

		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ereport(elevel,
				(errmsg("abtree: filled statistics object %s again (%d combinations)", name, n)));
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ereport(WARNING,
				(errmsg("abtree: could not fill statistics object %s again: %s", name, edata->message),
				 errhint("Fill it with abtree_ndistinct_store('%s').", name)));
		FreeErrorData(edata);
	}
	PG_END_TRY();
}

/*
 * Fill the candidate objects (refresh: frozen ndistinct ones, with data or
 * not) of the tables relids, or of every table if NIL.
 */
static void
chll_refill_relids(List *relids, bool refresh, int elevel)
{
	Oid			ext = get_extension_oid("abtree", true);
	Oid			extnsp;
	Oid			amoid;
	List	   *todo = NIL;
	List	   *names = NIL;
	Relation	catalog;
	SysScanDesc scan;
	HeapTuple	tup;

	if (!OidIsValid(ext) || !OidIsValid(amoid = get_am_oid("abtree", true)))
		return;
	extnsp = chll_extension_schema(ext);
	catalog = table_open(StatisticExtRelationId, AccessShareLock);
	scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_statistic_ext st = (Form_pg_statistic_ext) GETSTRUCT(tup);

		if ((relids == NIL || list_member_oid(relids, st->stxrelid)) &&
			chll_refill_candidate(tup, refresh) &&
			chll_refill_table_ok(st->stxrelid, st->oid, amoid))
		{
			todo = lappend_oid(todo, st->oid);
			names = lappend(names,
							quote_qualified_identifier(get_namespace_name(st->stxnamespace),
													   NameStr(st->stxname)));
		}
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);

	for (int i = 0; i < list_length(todo); i++)
		chll_refill_one(list_nth_oid(todo, i), (char *) list_nth(names, i), extnsp, elevel);
}

/* rels: the statement's VacuumRelations, NIL for every table */
static void
chll_refill_after_analyze(List *rels, bool verbose)
{
	List	   *relids = NIL;
	ListCell   *lc;

	foreach(lc, rels)
	{
		VacuumRelation *vrel = (VacuumRelation *) lfirst(lc);

		relids = lappend_oid(relids, OidIsValid(vrel->oid) ? vrel->oid :
							 RangeVarGetRelid(vrel->relation, NoLock, true));
	}
	chll_refill_relids(relids, false, verbose ? INFO : DEBUG1);
}

/* Refresh the frozen objects of relid, after ANALYZE wrote its statistics */
static void
chll_refresh_relid(Oid relid)
{
	bool		pushed;

	/* ANALYZE's catalog updates: visible, their invalidations processed */
	CommandCounterIncrement();
	pushed = !ActiveSnapshotSet();
	if (pushed)
		PushActiveSnapshot(GetTransactionSnapshot());
	chll_refill_relids(list_make1_oid(relid), true, LOG);
	if (pushed)
		PopActiveSnapshot();
}

/* Tables a combined autovacuum VACUUM noted, in TopMemoryContext */
static List *chll_vacuumed = NIL;

/* Did this transaction write the statistics (ANALYZE) of relid, of natts? */
static bool
chll_analyzed_here(Oid relid, int natts)
{
	TransactionId xid = GetCurrentTransactionIdIfAny();

	if (!TransactionIdIsValid(xid))
		return false;
	for (AttrNumber att = 1; att <= natts; att++)
	{
		HeapTuple	tup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
										  Int16GetDatum(att), BoolGetDatum(false));
		bool		ours;

		if (!HeapTupleIsValid(tup))
			continue;
		ours = TransactionIdEquals(HeapTupleHeaderGetXmin(tup->t_data), xid);
		ReleaseSysCache(tup);
		return ours;
	}
	return false;
}

/*
 * If this transaction analyzed relid, refresh its objects as ANALYZE runs
 * index cleanup: as the table's owner, restricted.
 */
static void
chll_refresh_if_analyzed(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;
	int			natts;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;

	if (!HeapTupleIsValid(tup))
		return;
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	natts = ((Form_pg_class) GETSTRUCT(tup))->relnatts;
	ReleaseSysCache(tup);
	if (!chll_analyzed_here(relid, natts))
		return;
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();
#if PG_VERSION_NUM >= 170000
	RestrictSearchPath();
#endif
	chll_refresh_relid(relid);
	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
}

/*
 * The end of a transaction in an autovacuum worker that noted tables: not
 * a VACUUM's own (nor its TOAST table's), which comes first; the ANALYZE's
 * that follows refreshes the tables it analyzed.  Either way the note is
 * used up.
 */
static void
chll_xact_callback(XactEvent event, void *arg)
{
	List	   *relids = chll_vacuumed;

	if (relids == NIL || (MyProc->statusFlags & PROC_IN_VACUUM) ||
		(event != XACT_EVENT_PRE_COMMIT && event != XACT_EVENT_ABORT))
		return;
	chll_vacuumed = NIL;
	if (event == XACT_EVENT_PRE_COMMIT)
	{
		ListCell   *lc;

		foreach(lc, relids)
			chll_refresh_if_analyzed(lfirst_oid(lc));
	}
	list_free(relids);
}

/*
 * abtree's cleanup hook (src/init.c), in an autovacuum worker: after an
 * analyze-only call, refresh the frozen ndistinct objects of the index's
 * table, once per table and transaction (the hook runs for each abtree
 * index of the table); inside a VACUUM, note the table for the ANALYZE
 * that may follow.
 */
void
chll_refresh_after_autoanalyze(Relation index, bool analyze_only)
{
	static Oid	last_relid = InvalidOid;
	static TimestampTz last_xact = 0;
	static bool registered = false;
	Oid			relid = index->rd_index->indrelid;

	if (!chll_in_autovacuum_worker())
		return;
	if (!analyze_only)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		if (!registered)
			RegisterXactCallback(chll_xact_callback, NULL);
		registered = true;
		chll_vacuumed = list_append_unique_oid(chll_vacuumed, relid);
		MemoryContextSwitchTo(old);
		return;
	}
	if (relid == last_relid && last_xact == GetCurrentTransactionStartTimestamp())
		return;
	last_relid = relid;
	last_xact = GetCurrentTransactionStartTimestamp();
	chll_refresh_relid(relid);
}

static void
chll_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					 ProcessUtilityContext context, ParamListInfo params,
					 QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;
	bool		verbose;
	bool		analyze = IsA(stmt, VacuumStmt) && chll_is_analyze((VacuumStmt *) stmt, &verbose);
	List	   *rels = analyze ? copyObject(((VacuumStmt *) stmt)->rels) : NIL;

	if (prev_ProcessUtility_hook)
		prev_ProcessUtility_hook(pstmt, queryString, readOnlyTree, context, params,
								 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);

	if (analyze && IsTransactionState())
	{
		/* VACUUM (ANALYZE) ends with a fresh transaction and no snapshot */
		bool		pushed = !ActiveSnapshotSet();

		if (pushed)
			PushActiveSnapshot(GetTransactionSnapshot());
		chll_refill_after_analyze(rels, verbose);
		if (pushed)
			PopActiveSnapshot();
	}
}

void
chll_install_utility_hook(void)
{
	prev_ProcessUtility_hook = ProcessUtility_hook;
	ProcessUtility_hook = chll_process_utility;
}
