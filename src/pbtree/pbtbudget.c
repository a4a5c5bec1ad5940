/*-------------------------------------------------------------------------
 *
 * pbtbudget.c
 *	  The buffer budget shared by all pbtree indexes, and the merge worker.
 *
 * Paper 001 keeps the mutable partitions of all indexes in one area of the
 * buffer pool and, when it is full, evicts the largest.  PostgreSQL has one
 * buffer pool, so the budget (abtree.pbtree_buffer_budget, in pages) is a
 * target for the sum of the mutable partitions' leaves: inserters report
 * their index's mutable size to a small table in shared memory, and when
 * the sum is over the budget the largest partition is sealed (its index's
 * next inserter does it), or any that holds at least its fair share, so
 * that an idle index cannot keep the others from sealing.  A DROP of the
 * index, or of its database, frees its slot (an object access hook), so a
 * dropped index does not count against the budget; reports older than
 * PBT_REPORT_TTL are ignored too (indexes no longer written, and drops
 * whose slot came back from an insert that raced with them).
 *
 * The table is lost on a restart, like everything in our shared memory;
 * the next inserts report again.
 *
 * Merges run in a dynamic background worker, started when an index has
 * abtree.pbtree_merge_threshold sealed partitions; one at a time per index.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#define PBT_BUDGET_SLOTS	128
#define PBT_REPORT_TTL_MS	(10 * 60 * 1000)

int			pbt_buffer_budget = 4096;

typedef struct PbtBudgetSlot
{
	Oid			dbid;
	Oid			relid;			/* InvalidOid: free */
	uint64		npages;
	TimestampTz reported;
	bool		merge_running;
} PbtBudgetSlot;

typedef struct PbtBudget
{
	slock_t		mutex;
	PbtBudgetSlot slots[PBT_BUDGET_SLOTS];
} PbtBudget;

static PbtBudget *pbt_budget = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

Size
pbt_shmem_size(void)
{
	return MAXALIGN(sizeof(PbtBudget));
}

/* called with AddinShmemInitLock held */
void
pbt_shmem_init(void)
{
	bool		found;

	pbt_budget = ShmemInitStruct("abtree pbtree budget", sizeof(PbtBudget), &found);
	if (!found)
	{
		memset(pbt_budget, 0, sizeof(PbtBudget));
		SpinLockInit(&pbt_budget->mutex);
	}
}

/* The slot of an index (mutex held); makes one, replacing the oldest. */
static PbtBudgetSlot *
pbt_slot(Oid relid, bool create)
{
	PbtBudgetSlot *oldest = NULL;

	for (int i = 0; i < PBT_BUDGET_SLOTS; i++)
	{
		PbtBudgetSlot *s = &pbt_budget->slots[i];

		if (s->relid == relid && s->dbid == MyDatabaseId)
			return s;
		if (oldest == NULL || s->relid == InvalidOid ||
			(oldest->relid != InvalidOid && s->reported < oldest->reported))
			oldest = s;
	}
	if (!create)
		return NULL;
	memset(oldest, 0, sizeof(PbtBudgetSlot));
	oldest->dbid = MyDatabaseId;
	oldest->relid = relid;
	return oldest;
}

/*
 * Report that rel's mutable partition has npages leaves; should it be
 * sealed now?
 */
bool
pbt_budget_exceeded(Relation rel, uint64 npages)
{
	TimestampTz now = GetCurrentTimestamp();
	uint64		total = 0;
	uint64		largest = 0;
	int			active = 0;

	if (pbt_budget == NULL)
		return false;
	SpinLockAcquire(&pbt_budget->mutex);
	{
		PbtBudgetSlot *mine = pbt_slot(RelationGetRelid(rel), true);

		mine->npages = npages;
		mine->reported = now;
		for (int i = 0; i < PBT_BUDGET_SLOTS; i++)
		{
			PbtBudgetSlot *s = &pbt_budget->slots[i];

			if (s->relid == InvalidOid ||
				TimestampDifferenceExceeds(s->reported, now, PBT_REPORT_TTL_MS))
				continue;
			total += s->npages;
			largest = Max(largest, s->npages);
			active++;
		}
	}
	SpinLockRelease(&pbt_budget->mutex);
	/*
	 * Over budget: seal the largest, or any partition holding its fair
	 * share (so that idle or dropped indexes' reports cannot stop everyone),
	 * never one of a single page.
	 */
	{
		uint64		fair = ((uint64) pbt_buffer_budget + active - 1) / Max(active, 1);

		return total > (uint64) pbt_buffer_budget &&
			npages >= Max(2, Min(largest, fair));
	}
}

/* rel's mutable partition was just sealed: it is empty */
void
pbt_budget_forget(Relation rel)
{
	if (pbt_budget == NULL)
		return;
	SpinLockAcquire(&pbt_budget->mutex);
	{
		PbtBudgetSlot *s = pbt_slot(RelationGetRelid(rel), false);

		if (s)
			s->npages = 0;
	}
	SpinLockRelease(&pbt_budget->mutex);
}

/*
 * Free the slots of a dropped relation, or of every index of a dropped
 * database (relid InvalidOid).  If the DROP rolls back, the index's next
 * inserts report again.
 */
static void
pbt_budget_drop(Oid dbid, Oid relid)
{
	SpinLockAcquire(&pbt_budget->mutex);
	for (int i = 0; i < PBT_BUDGET_SLOTS; i++)
	{
		PbtBudgetSlot *s = &pbt_budget->slots[i];

		if (s->relid == InvalidOid || s->dbid != dbid ||
			(relid != InvalidOid && s->relid != relid))
			continue;
		if (s->merge_running)
		{
			/* keep the flag for the worker; count nothing, as if stale */
			s->npages = 0;
			s->reported = 0;
		}
		else
			memset(s, 0, sizeof(PbtBudgetSlot));
	}
	SpinLockRelease(&pbt_budget->mutex);
}

static void
pbt_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				  int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || pbt_budget == NULL)
		return;
	if (classId == RelationRelationId && subId == 0)
		pbt_budget_drop(MyDatabaseId, objectId);
	else if (classId == DatabaseRelationId)
		pbt_budget_drop(objectId, InvalidOid);
}

void
pbt_install_hooks(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = pbt_object_access;
}

static void
pbt_set_merge_running(Oid dbid, Oid relid, bool running)
{
	SpinLockAcquire(&pbt_budget->mutex);
	for (int i = 0; i < PBT_BUDGET_SLOTS; i++)
	{
		PbtBudgetSlot *s = &pbt_budget->slots[i];

		if (s->relid == relid && s->dbid == dbid)
			s->merge_running = running;
	}
	SpinLockRelease(&pbt_budget->mutex);
}

/* Start a merge worker for rel, unless one runs. */
void
pbt_request_merge(Relation rel)
{
	BackgroundWorker worker;
	bool		running;
	Oid			relid = RelationGetRelid(rel);

	if (pbt_budget == NULL)
		return;
	SpinLockAcquire(&pbt_budget->mutex);
	{
		PbtBudgetSlot *s = pbt_slot(relid, true);

		running = s->merge_running;
		s->merge_running = true;
		if (s->reported == 0)
			s->reported = GetCurrentTimestamp();
	}
	SpinLockRelease(&pbt_budget->mutex);
	if (running)
		return;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "abtree");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "pbt_merge_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "abtree pbtree merge of %u", relid);
	snprintf(worker.bgw_type, BGW_MAXLEN, "abtree pbtree merge");
	worker.bgw_main_arg = ObjectIdGetDatum(relid);
	memcpy(worker.bgw_extra, &MyDatabaseId, sizeof(Oid));
	if (!RegisterDynamicBackgroundWorker(&worker, NULL))
	{
		pbt_set_merge_running(MyDatabaseId, relid, false);
		ereport(LOG,
				(errmsg("could not start a merge worker for pbtree index \"%s\"",
						RelationGetRelationName(rel)),
				 errhint("Raise max_worker_processes, or merge with pbtree_merge().")));
	}
}

PGDLLEXPORT void pbt_merge_worker_main(Datum arg);

/* however the worker ends, the index may have a merge worker again */
static void
pbt_merge_worker_exit(int code, Datum arg)
{
	Oid			dbid;

	memcpy(&dbid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	pbt_set_merge_running(dbid, DatumGetObjectId(arg), false);
}

/* The index, if it still exists and is a pbtree */
static Relation
pbt_worker_open(Oid relid)
{
	Relation	rel = try_relation_open(relid, RowExclusiveLock);

	if (rel == NULL)
		return NULL;
	if (rel->rd_rel->relkind != RELKIND_INDEX || !pbt_is_pbtree(rel))
	{
		relation_close(rel, RowExclusiveLock);
		return NULL;
	}
	return rel;
}

/* The merge worker: connect, merge the index's sealed partitions, exit. */
void
pbt_merge_worker_main(Datum arg)
{
	Oid			relid = DatumGetObjectId(arg);
	Oid			dbid;
	Relation	rel;
	int			n;

	memcpy(&dbid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	before_shmem_exit(pbt_merge_worker_exit, arg);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);
	pgstat_report_activity(STATE_RUNNING, "pbtree merge");

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	rel = pbt_worker_open(relid);
	if (rel != NULL)
	{
		/*
		 * A merge copies index entries and never looks at the heap, so it
		 * runs without a snapshot: holding one for a long merge would hold
		 * back every VACUUM's horizon, and the freeing of the partitions
		 * this very merge drops.  The catalog snapshot of the open goes too
		 * (and pbt_rewrite drops any that a cache miss takes later).
		 */
		InvalidateCatalogSnapshot();
		n = pbt_merge(rel, Max(pbt_merge_threshold, 2), true);

		if (n > 0)
			elog(LOG, "abtree: merged %d partitions of pbtree index \"%s\"",
				 n, RelationGetRelationName(rel));
		relation_close(rel, RowExclusiveLock);
	}
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}
