/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  Shared memory of the extension.
 *
 * Requested from shmem_request_hook (PostgreSQL 15+, the only place where
 * RequestAddinShmemSpace is allowed) and initialised from
 * shmem_startup_hook, which runs again after every crash restart: nothing
 * kept here survives a crash, by design (no snapshot survives one either).
 * Both hooks chain to whatever was installed before us.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree_ext.h"

#include "abtree/abtree.h"
#include "mvstore/mvstore.h"
#include "pbtree/pbtree.h"
#include "swr/swr.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

AbtSharedState *abt_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

Size
abt_shmem_size(void)
{
	return add_size(add_size(add_size(add_size(MAXALIGN(sizeof(AbtSharedState)),
												mvs_shmem_size()),
									   swr_stats_shmem_size()),
							 pbt_shmem_size()),
					abt_hints_shmem_size());
}

static void
abt_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(MAXALIGN(sizeof(AbtSharedState)));
	mvs_shmem_request();
	swr_stats_shmem_request();
	RequestAddinShmemSpace(pbt_shmem_size());
	RequestAddinShmemSpace(abt_hints_shmem_size());
}

static void
abt_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	abt_shared = ShmemInitStruct("abtree shared state",
								 sizeof(AbtSharedState), &found);
	if (!found)
	{
		pg_atomic_init_u64(&abt_shared->wal_probes_written, 0);
		pg_atomic_init_u64(&abt_shared->wal_probes_replayed, 0);
		pg_atomic_init_u64(&abt_shared->pass_fast, 0);
		pg_atomic_init_u64(&abt_shared->pass_still_safe, 0);
		pg_atomic_init_u64(&abt_shared->pass_child_moved, 0);
		pg_atomic_init_u64(&abt_shared->pass_reset, 0);
		pg_atomic_init_u64(&abt_shared->pass_cautious_readd, 0);
		pg_atomic_init_u64(&abt_shared->pass_restart, 0);
		pg_atomic_init_u64(&abt_shared->pass_path_logged, 0);
		pg_atomic_init_u64(&abt_shared->insert_one_record, 0);
		pg_atomic_init_u64(&abt_shared->batch_records, 0);
		pg_atomic_init_u64(&abt_shared->batch_entries, 0);
		pg_atomic_init_u64(&abt_shared->batch_retries, 0);
		pg_atomic_init_u64(&abt_shared->entries_frozen, 0);
		pg_atomic_init_u64(&abt_shared->draw_pages_deferred, 0);
		pg_atomic_init_u64(&abt_shared->leaf_folds, 0);
		pg_atomic_init_u64(&abt_shared->split_value_end, 0);
		pg_atomic_init_u64(&abt_shared->split_single_value, 0);
		pg_atomic_init_u32(&abt_shared->recovered, 0);
		pg_atomic_init_u64(&abt_shared->recovery_raised, 0);
		pg_atomic_init_u64(&abt_shared->swr_scans, 0);
		pg_atomic_init_u64(&abt_shared->swr_rows, 0);
		pg_atomic_init_u64(&abt_shared->swr_tree_rejects, 0);
		pg_atomic_init_u64(&abt_shared->swr_invisible, 0);
	}
	mvs_shmem_startup();
	swr_stats_shmem_startup();
	pbt_shmem_init();
	abt_hints_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

void
abt_shmem_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = abt_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = abt_shmem_startup;
}
