/*-------------------------------------------------------------------------
 *
 * status.c
 *	  SQL-callable functions that report on the extension itself.
 *
 *	  abtree_check_preload()  ERROR with a HINT unless preloaded
 *	  abtree_status()         one row per registered component and counter
 *	  abtree_wal_probe(text)  write a PROBE record to the abtree WAL
 *
 *-------------------------------------------------------------------------
 */
#include "abtree_ext.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/pg_lsn.h"

/* Longest message abtree_wal_probe() accepts, in bytes. */
#define ABT_PROBE_MAX_LEN	1024

PG_FUNCTION_INFO_V1(abtree_check_preload);
PG_FUNCTION_INFO_V1(abtree_status);
PG_FUNCTION_INFO_V1(abtree_wal_probe);

Datum
abtree_check_preload(PG_FUNCTION_ARGS)
{
	abt_require_preload();
	PG_RETURN_VOID();
}

static void
status_row(ReturnSetInfo *rsinfo, const char *component, const char *item,
		   const char *value)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = CStringGetTextDatum(component);
	values[1] = CStringGetTextDatum(item);
	values[2] = CStringGetTextDatum(value);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

static char *
u64_text(pg_atomic_uint64 *counter)
{
	return psprintf(UINT64_FORMAT, pg_atomic_read_u64(counter));
}

Datum
abtree_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	abt_require_preload();
	InitMaterializedSRF(fcinfo, 0);

	status_row(rsinfo, "library", "version", ABTREE_VERSION_STRING);
	status_row(rsinfo, "library", "preloaded", "yes");
	status_row(rsinfo, "wal", "resource_manager", ABTREE_RMGR_NAME);
	status_row(rsinfo, "wal", "resource_manager_id", CppAsString2(ABTREE_RMGR_ID));
	status_row(rsinfo, "wal", "probes_written",
			   u64_text(&abt_shared->wal_probes_written));
	status_row(rsinfo, "wal", "probes_replayed",
			   u64_text(&abt_shared->wal_probes_replayed));
	status_row(rsinfo, "weights", "pass_fast", u64_text(&abt_shared->pass_fast));
	status_row(rsinfo, "weights", "pass_still_safe", u64_text(&abt_shared->pass_still_safe));
	status_row(rsinfo, "weights", "pass_child_moved", u64_text(&abt_shared->pass_child_moved));
	status_row(rsinfo, "weights", "pass_reset", u64_text(&abt_shared->pass_reset));
	status_row(rsinfo, "weights", "pass_cautious_readd",
			   u64_text(&abt_shared->pass_cautious_readd));
	status_row(rsinfo, "weights", "pass_restart", u64_text(&abt_shared->pass_restart));
	status_row(rsinfo, "weights", "pass_path_logged",
			   u64_text(&abt_shared->pass_path_logged));
	status_row(rsinfo, "weights", "insert_one_record",
			   u64_text(&abt_shared->insert_one_record));
	status_row(rsinfo, "weights", "batch_records", u64_text(&abt_shared->batch_records));
	status_row(rsinfo, "weights", "batch_entries", u64_text(&abt_shared->batch_entries));
	status_row(rsinfo, "weights", "batch_retries", u64_text(&abt_shared->batch_retries));
	status_row(rsinfo, "vacuum", "entries_frozen", u64_text(&abt_shared->entries_frozen));
	status_row(rsinfo, "weights", "recovery_raised",
			   u64_text(&abt_shared->recovery_raised));
	status_row(rsinfo, "inserts", "leaf_folds", u64_text(&abt_shared->leaf_folds));
	status_row(rsinfo, "inserts", "split_value_end", u64_text(&abt_shared->split_value_end));
	status_row(rsinfo, "inserts", "split_single_value",
			   u64_text(&abt_shared->split_single_value));
	status_row(rsinfo, "draws", "pages_deferred",
			   u64_text(&abt_shared->draw_pages_deferred));
	status_row(rsinfo, "swr", "scans", u64_text(&abt_shared->swr_scans));
	status_row(rsinfo, "swr", "rows", u64_text(&abt_shared->swr_rows));
	status_row(rsinfo, "swr", "tree_rejects", u64_text(&abt_shared->swr_tree_rejects));
	status_row(rsinfo, "swr", "invisible", u64_text(&abt_shared->swr_invisible));
	status_row(rsinfo, "shmem", "bytes", psprintf("%zu", abt_shmem_size()));
	for (const char *const *name = abt_guc_names; *name; name++)
		status_row(rsinfo, "guc", *name, GetConfigOption(*name, false, false));

	return (Datum) 0;
}

Datum
abtree_wal_probe(PG_FUNCTION_ARGS)
{
	text	   *message;
	int			len;

	abt_require_preload();

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("abtree_wal_probe message must not be null"),
				 errhint("Pass a short text, for example abtree_wal_probe('ping').")));

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot write an abtree WAL probe during recovery"),
				 errhint("Call abtree_wal_probe() on the primary; the standby logs the probe when it replays it.")));

	message = PG_GETARG_TEXT_PP(0);
	len = VARSIZE_ANY_EXHDR(message);
	if (len > ABT_PROBE_MAX_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_RIGHT_TRUNCATION),
				 errmsg("abtree_wal_probe message is too long (%d bytes)", len),
				 errhint("Use at most %d bytes.", ABT_PROBE_MAX_LEN)));

	PG_RETURN_LSN(abt_log_probe(VARDATA_ANY(message), len));
}
