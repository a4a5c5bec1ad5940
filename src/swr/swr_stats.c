/*-------------------------------------------------------------------------
 *
 * swr_stats.c
 *	  Counters of TABLESAMPLE swr per index: scans, draws, rows returned and
 *	  draws rejected by reason, in shared memory, for the view
 *	  abtree_swr_stats.
 *
 * A hash table of SWR_STATS_MAX entries keyed by (database, index), under
 * one LWLock, written once per scan and index when the scan ends (so a
 * scan's cost is one lock acquisition per index it drew from).  Like the
 * other counters of abtree_status() they start at zero with the server,
 * also after a crash.  When the table is full, a new index's counts go to
 * the entry of index 0, which the view shows as "(other indexes)".
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#define SWR_STATS_MAX			1024
#define SWR_STATS_TRANCHE		"abtree swr stats"

typedef struct SwrStatsKey
{
	Oid			dbid;
	Oid			indexid;
} SwrStatsKey;

typedef struct SwrStatsEntry
{
	SwrStatsKey key;
	int64		scans;
	SwrCounts	counts;
	TimestampTz last_scan;
} SwrStatsEntry;

static HTAB *swr_stats_hash = NULL;
static LWLock *swr_stats_lock = NULL;

Size
swr_stats_shmem_size(void)
{
	return hash_estimate_size(SWR_STATS_MAX + 1, sizeof(SwrStatsEntry));
}

void
swr_stats_shmem_request(void)
{
	RequestAddinShmemSpace(swr_stats_shmem_size());
	RequestNamedLWLockTranche(SWR_STATS_TRANCHE, 1);
}

/* Runs under AddinShmemInitLock, in the postmaster and after crashes. */
void
swr_stats_shmem_startup(void)
{
	HASHCTL		info;

	info.keysize = sizeof(SwrStatsKey);
	info.entrysize = sizeof(SwrStatsEntry);
	/* one more than the limit: the overflow entry always fits */
	swr_stats_hash = ShmemInitHash("abtree swr stats", SWR_STATS_MAX + 1,
								   SWR_STATS_MAX + 1, &info, HASH_ELEM | HASH_BLOBS);
	swr_stats_lock = &(GetNamedLWLockTranche(SWR_STATS_TRANCHE))->lock;
}

/* Add one scan's counts for an index of the current database. */
void
swr_stats_add(Oid indexid, const SwrCounts *c)
{
	SwrStatsKey key = {MyDatabaseId, indexid};
	SwrStatsEntry *e;
	bool		found;

	if (swr_stats_hash == NULL)
		return;
	LWLockAcquire(swr_stats_lock, LW_EXCLUSIVE);
	e = hash_search(swr_stats_hash, &key, HASH_FIND, NULL);
	if (e == NULL)
	{
		if (hash_get_num_entries(swr_stats_hash) >= SWR_STATS_MAX)
			key.indexid = InvalidOid;
		e = hash_search(swr_stats_hash, &key, HASH_ENTER, &found);
		if (!found)
		{
			e->scans = 0;
			memset(&e->counts, 0, sizeof(SwrCounts));
		}
	}
	e->scans++;
	e->counts.draws += c->draws;
	e->counts.rows += c->rows;
	e->counts.tree_rejects += c->tree_rejects;
	e->counts.invisible += c->invisible;
	e->counts.filtered += c->filtered;
	e->last_scan = GetCurrentTimestamp();
	LWLockRelease(swr_stats_lock);
}

PG_FUNCTION_INFO_V1(abtree_swr_stats);

/* abtree_swr_stats(): the entries of the current database, as rows. */
Datum
abtree_swr_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	SwrStatsEntry *e;

	abt_require_preload();
	InitMaterializedSRF(fcinfo, 0);
	LWLockAcquire(swr_stats_lock, LW_SHARED);
	hash_seq_init(&seq, swr_stats_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[8];
		bool		nulls[8] = {false};

		if (e->key.dbid != MyDatabaseId)
			continue;
		values[0] = ObjectIdGetDatum(e->key.indexid);
		values[1] = Int64GetDatum(e->scans);
		values[2] = Int64GetDatum(e->counts.draws);
		values[3] = Int64GetDatum(e->counts.rows);
		values[4] = Int64GetDatum(e->counts.invisible);
		values[5] = Int64GetDatum(e->counts.tree_rejects);
		values[6] = Int64GetDatum(e->counts.filtered);
		values[7] = TimestampTzGetDatum(e->last_scan);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(swr_stats_lock);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(abtree_swr_stats_reset);

/* abtree_swr_stats_reset(): forget the current database's counters. */
Datum
abtree_swr_stats_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	SwrStatsEntry *e;

	abt_require_preload();
	LWLockAcquire(swr_stats_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, swr_stats_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->key.dbid == MyDatabaseId)
			hash_search(swr_stats_hash, &e->key, HASH_REMOVE, NULL);
	}
	LWLockRelease(swr_stats_lock);
	PG_RETURN_VOID();
}
