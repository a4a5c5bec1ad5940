/*-------------------------------------------------------------------------
 *
 * mvs_gc.c
 *	  Garbage collection of the weight store: a background worker that,
 *	  every abtree.mvstore_gc_interval, drops the versions of transactions
 *	  that every snapshot, present or future, sees as finished.
 *
 * The horizon is GetOldestNonRemovableTransactionId(NULL): no running
 * transaction and no snapshot's xmin precedes it, and snapshots taken
 * later have a later xmin.  A snapshot never subtracts a delta older than
 * its xmin, so dropping those changes no reader's answer.  Readers and the
 * collector serialise on the partition locks: a chain is unlinked and its
 * nodes freed only under the lock in exclusive mode, and readers walk
 * chains only under it in share mode, so no reader can follow a freed node.
 *
 *-------------------------------------------------------------------------
 */
#include "mvs_internal.h"

#include "access/transam.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

PGDLLEXPORT void mvs_gc_main(Datum main_arg);

/* Drop the versions before horizon in one partition; returns how many. */
static uint64
mvs_collect_partition(int p, TransactionId horizon)
{
	uint32		batch[256];
	int			nb = 0;
	uint64		dropped = 0;

	LWLockAcquire(&mvs_locks[p].lock, LW_EXCLUSIVE);
	for (uint32 b = p; b < mvs->nbuckets; b += MVS_PARTITIONS)
	{
		uint32		i = mvs_buckets[b];

		while (i != MVS_NIL)
		{
			MvsEntry   *e = &mvs_entries[i];
			uint32		next = e->next;

			while (e->oldest != MVS_NIL &&
				   TransactionIdPrecedes(mvs_nodes[e->oldest].xid, horizon))
			{
				uint32		k = e->oldest;
				MvsNode    *n = &mvs_nodes[k];

				e->oldest = n->newer;
				if (n->newer == MVS_NIL)
					e->newest = MVS_NIL;
				else
					mvs_nodes[n->newer].older = MVS_NIL;
				e->total -= n->delta;
				e->nversions--;
				batch[nb++] = k;
				dropped++;
				if (nb == lengthof(batch))
				{
					mvs_free_nodes(batch, nb);
					nb = 0;
				}
			}
			if (e->newest == MVS_NIL)
				mvs_drop_entry(e, mvs_hash(&e->tag));
			i = next;
		}
	}
	mvs_free_nodes(batch, nb);
	LWLockRelease(&mvs_locks[p].lock);
	return dropped;
}

/*
 * One collection with the given horizon (which only moves forward).
 * Returns the number of versions dropped.
 */
uint64
mvs_collect(TransactionId horizon)
{
	TransactionId old;
	uint64		dropped = 0;

	if (mvs == NULL || !TransactionIdIsNormal(horizon))
		return 0;
	old = pg_atomic_read_u32(&mvs->horizon);
	if (TransactionIdIsNormal(old) && TransactionIdPrecedes(horizon, old))
		horizon = old;
	pg_atomic_write_u32(&mvs->horizon, horizon);

	for (int p = 0; p < MVS_PARTITIONS; p++)
	{
		dropped += mvs_collect_partition(p, horizon);
		CHECK_FOR_INTERRUPTS();
	}
	pg_atomic_fetch_add_u64(&mvs->collected, dropped);
	pg_atomic_fetch_add_u64(&mvs->gc_runs, 1);
	mvs_note_room();
	return dropped;
}

void
mvs_register_gc_worker(void)
{
	BackgroundWorker worker;

	if (mvs_size_kb <= 0)
		return;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "abtree");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "mvs_gc_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "abtree weight store collector");
	snprintf(worker.bgw_type, BGW_MAXLEN, "abtree weight store collector");
	RegisterBackgroundWorker(&worker);
}

void
mvs_gc_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	while (!ShutdownRequestPending)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 mvs_gc_interval_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (ShutdownRequestPending)
			break;
		if (!RecoveryInProgress())
			(void) mvs_collect(GetOldestNonRemovableTransactionId(NULL));
	}
	proc_exit(0);
}
