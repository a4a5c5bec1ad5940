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

#include "utils/guc.h"

/* Log every abtree WAL record replayed, with its description. */
bool		abt_debug_redo = false;

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

	MarkGUCPrefixReserved("abtree");
}
