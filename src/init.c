/*-------------------------------------------------------------------------
 *
 * init.c
 *	  Library entry point: WAL resource manager, GUCs and hooks.
 *
 * abtree writes WAL records of its own (resource manager "abtree"), and a
 * server can only replay them if the library registered the resource manager
 * before recovery started.  That is only possible while
 * shared_preload_libraries is processed, so the library refuses to work in
 * any other way: _PG_init() then does nothing at all, and every SQL entry
 * point calls abt_require_preload(), which raises an ERROR whose HINT says
 * what to put into postgresql.conf.  We deliberately do not ERROR inside
 * _PG_init(): a library listed in session_preload_libraries by mistake
 * would then lock every user out.
 *
 * abt_refuse_under_rls() is the other guard the SQL entry points share: the
 * index functions refuse where row-level security applies to the caller.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree_ext.h"

#include "abtree/abtree.h"
#include "stats/stats.h"
#include "mvstore/mvstore.h"
#include "pbtree/pbtree.h"
#include "swr/swr.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"

#ifdef PG_MODULE_MAGIC_EXT
PG_MODULE_MAGIC_EXT(.name = "abtree",.version = ABTREE_VERSION_STRING);
#else
PG_MODULE_MAGIC;
#endif

/* pbtree allocates its own pages: the abtree engine calls it through this. */
static const AbtPageAllocator pbt_page_allocator = {
	.owns = pbt_is_pbtree,
	.new_buffer = pbt_new_buffer,
};

/* True once _PG_init() ran from shared_preload_libraries. */
bool		abt_preloaded = false;

void		_PG_init(void);

void
_PG_init(void)
{
	/* reloptions must parse wherever an abtree index is opened */
	abt_init_reloptions();
	pbt_init_reloptions();
	/* and pages must be allocated wherever one is written */
	abt_register_page_allocator(&pbt_page_allocator);

	if (!process_shared_preload_libraries_in_progress)
		return;

	abt_define_gucs();
	abt_register_rmgr();
	abt_shmem_install_hooks();
	abt_install_planner_hooks();
	abt_install_utility_hook();
	abt_batch_install();
	chll_install_utility_hook();
	abt_register_analyze_hook(chll_refresh_after_autoanalyze);
	swr_install_planner_hook();
	swr_install_executor_hook();
	swr_citus_install_hook();
	mvs_register_gc_worker();
	pbt_install_hooks();

	abt_preloaded = true;
}

/*
 * Raise an ERROR unless the library was preloaded.  The HINT spells out the
 * postgresql.conf line, keeping whatever libraries are configured already.
 */
void
abt_require_preload(void)
{
	const char *current;
	char	   *suggestion;

	if (abt_preloaded)
		return;

	current = GetConfigOption("shared_preload_libraries", true, false);
	if (current == NULL || current[0] == '\0')
		suggestion = pstrdup("abtree");
	else
		suggestion = psprintf("%s,abtree", current);

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("abtree must be loaded via shared_preload_libraries"),
			 errdetail("abtree writes WAL records of its own, and the server can only replay them when the library is loaded at server start."),
			 errhint("Add this line to postgresql.conf and restart the server: shared_preload_libraries = '%s'",
					 suggestion)));
}

/*
 * Refuse when row-level security applies to the current user on table
 * heapoid.  The index functions read every entry of an index (counts,
 * weights, sketches, sampled TIDs, verification) and cannot apply the
 * table's policies entry by entry, so under RLS they would reveal rows the
 * user cannot see (issue 25).  Like pg_stats, which hides such tables'
 * statistics, we say nothing rather than filter; the table itself,
 * TABLESAMPLE swr included, stays queryable under its policies.  The
 * table's owner (unless FORCE ROW LEVEL SECURITY) and roles with
 * BYPASSRLS are not subject to RLS and pass.
 */
void
abt_refuse_under_rls(Oid heapoid)
{
	if (check_enable_rls(heapoid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("row-level security applies to table \"%s\"", get_rel_name(heapoid)),
				 errdetail("abtree's index functions read every entry of the index and cannot apply the table's policies."),
				 errhint("Query the table itself, where the policies apply (TABLESAMPLE swr included), or use a role that bypasses row-level security.")));
}
