/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  The abtree.* configuration parameters.
 *
 * All parameters live under the "abtree." prefix, which is reserved: a
 * misspelt abtree.something in postgresql.conf draws a WARNING, and SET of
 * an unknown abtree.something fails.  Components add their parameters here
 * so that SHOW ALL and the documentation list them in one place.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree_ext.h"

#include "swr/swr.h"
#include "utils/guc.h"

/* Every parameter defined below, for abtree_status(); the guc test checks it. */
const char *const abt_guc_names[] = {
	"abtree.debug_redo",
	"abtree.swr_index",
	NULL
};

/* Log every abtree WAL record replayed, with its description. */
bool		abt_debug_redo = false;

/* The abtree indexes TABLESAMPLE swr draws through; '' = choose (src/swr). */
char	   *abt_swr_index = NULL;

/* Only the syntax: names are looked up when a query samples. */
static bool
abt_check_swr_index(char **newval, void **extra, GucSource source)
{
	if (swr_parse_index_names(*newval, NULL))
		return true;
	GUC_check_errdetail("List index names separated by commas, optionally schema-qualified, with SQL quoting: 'orders_w_idx, s.\"Items_idx\"'.");
	return false;
}

void
abt_define_gucs(void)
{
	/*
	 * PGC_SIGHUP, not PGC_SUSET: the startup process does the replaying and
	 * only sees postgresql.conf, so a per-session value would be misleading.
	 */
	DefineCustomBoolVariable("abtree.debug_redo",
							 "Logs each abtree WAL record replayed during recovery or on a standby.",
							 "The LOG line gives the record type, its LSN and its description.",
							 &abt_debug_redo,
							 false,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	/*
	 * Per session or transaction: a query sampling several tables lists one
	 * index per table.  GUC_LIST_INPUT lets SET take a, b unquoted (an
	 * extension may not ask for GUC_LIST_QUOTE, so mixed-case names need
	 * '"Idx"' quoting inside the string).
	 */
	DefineCustomStringVariable("abtree.swr_index",
							   "Names the abtree indexes that TABLESAMPLE swr draws through.",
							   "Index names separated by commas; a sampled table uses the listed index on it, or the partition on it of a listed partitioned index. Empty: choose automatically.",
							   &abt_swr_index,
							   "",
							   PGC_USERSET,
							   GUC_LIST_INPUT,
							   abt_check_swr_index, NULL, NULL);

	MarkGUCPrefixReserved("abtree");
}
