/*-------------------------------------------------------------------------
 *
 * mvs_sql.c
 *	  SQL functions of the weight store.
 *
 *	  abtree_mvstore()              one row of sizes and counters (the view)
 *	  abtree_mvstore_collect()      run a collection now
 *
 *	  abtree_mvstore_check(index), which walks an index's pages, is the
 *	  index's (src/abtree/abtversions.c): the store knows no page layout.
 *
 *-------------------------------------------------------------------------
 */
#include "mvs_internal.h"

#include "access/relation.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(abtree_mvstore);
PG_FUNCTION_INFO_V1(abtree_mvstore_collect);

#define MVS_STAT_COLS	14

Datum
abtree_mvstore(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		v[MVS_STAT_COLS];
	bool		nulls[MVS_STAT_COLS];
	uint32		entries = 0,
				nodes = 0;
	TransactionId horizon;
	int			i = 0;

	abt_require_preload();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "abtree_mvstore: return type must be a row type");
	memset(nulls, mvs == NULL, sizeof(nulls));
	memset(v, 0, sizeof(v));

	v[i++] = BoolGetDatum(mvs != NULL && mvs_enabled);
	nulls[0] = false;
	if (mvs != NULL)
	{
		SpinLockAcquire(&mvs->freelock);
		entries = mvs->entries_used;
		nodes = mvs->nodes_used;
		SpinLockRelease(&mvs->freelock);
		horizon = pg_atomic_read_u32(&mvs->horizon);

		v[i++] = Int64GetDatum((int64) mvs_shmem_size());
		v[i++] = Int64GetDatum(entries);
		v[i++] = Int64GetDatum(mvs->nentries);
		v[i++] = Int64GetDatum(nodes);
		v[i++] = Int64GetDatum(mvs->nnodes);
		v[i++] = Int64GetDatum((int64) entries * sizeof(MvsEntry) +
							   (int64) nodes * sizeof(MvsNode));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->recorded));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->collected));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->rebuilt));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->gc_runs));
		v[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&mvs->fallbacks));
		v[i++] = BoolGetDatum(pg_atomic_read_u32(&mvs->full) != 0);
		v[i] = TransactionIdGetDatum(horizon);
		nulls[i] = !TransactionIdIsNormal(horizon);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, v, nulls)));
}

Datum
abtree_mvstore_collect(PG_FUNCTION_ARGS)
{
	abt_require_preload();
	if (mvs == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the abtree weight store is disabled"),
				 errhint("Set abtree.mvstore_size to more than 0 and restart the server.")));
	if (RecoveryInProgress())
		PG_RETURN_INT64(0);
	PG_RETURN_INT64((int64) mvs_collect(GetOldestNonRemovableTransactionId(NULL)));
}
