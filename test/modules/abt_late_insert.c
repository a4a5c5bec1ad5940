/*-------------------------------------------------------------------------
 *
 * abt_late_insert.c
 *	  A library for TAP 042, not part of abtree: it stands for another
 *	  extension that writes from its own transaction callback.  Listed
 *	  before abtree in shared_preload_libraries, it registers its callback
 *	  first, and PostgreSQL calls the callbacks newest first: at PRE_COMMIT
 *	  (and PRE_PREPARE) it runs after abtree's flush of batched entries.
 *	  It then runs the statement in abt_late_insert.sql, if set.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static char *late_sql = NULL;
static bool late_running = false;

static void
late_xact_callback(XactEvent event, void *arg)
{
	if (event != XACT_EVENT_PRE_COMMIT && event != XACT_EVENT_PRE_PREPARE)
	{
		late_running = false;
		return;
	}
	if (late_sql == NULL || late_sql[0] == '\0' || late_running)
		return;
	late_running = true;
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(late_sql, false, 0) < 0)
		elog(ERROR, "abt_late_insert.sql failed");
	SPI_finish();
	PopActiveSnapshot();
}

void
_PG_init(void)
{
	DefineCustomStringVariable("abt_late_insert.sql",
							   "A statement run at PRE_COMMIT, after abtree's callback",
							   NULL, &late_sql, "", PGC_USERSET, 0,
							   NULL, NULL, NULL);
	RegisterXactCallback(late_xact_callback, NULL);
}
