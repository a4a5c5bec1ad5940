/*-------------------------------------------------------------------------
 *
 * mvs_shmem.c
 *	  Shared memory of the weight store: sizing, the hash table of
 *	  entries, and the entry and node pools.
 *
 * The size is fixed at server start (abtree.mvstore_size): an eighth goes
 * to entries and buckets, the rest to version nodes.  Nothing survives a
 * restart, which is right: no snapshot survives one either, and a store
 * that starts empty only means samplers subtract nothing until inserts
 * record again (src/mvstore/README, "Why missing versions are safe").
 *
 *-------------------------------------------------------------------------
 */
#include "mvs_internal.h"

#include "common/hashfn.h"
#include "port/pg_bitutils.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

/* GUCs (src/guc.c) */
bool		mvs_enabled = true;
int			mvs_size_kb = 65536;
int			mvs_gc_interval_ms = 1000;

MvsShared  *mvs = NULL;
uint32	   *mvs_buckets;
MvsEntry   *mvs_entries;
MvsNode    *mvs_nodes;
LWLockPadded *mvs_locks;

/* Pool sizes for a store of the configured size. */
static void
mvs_layout(uint32 *nbuckets, uint32 *nentries, uint32 *nnodes)
{
	Size		bytes = (Size) mvs_size_kb * 1024;
	Size		ne = bytes / 8 / (sizeof(MvsEntry) + sizeof(uint32));
	Size		rest;

	ne = Min(Max(ne, MVS_PARTITIONS), PG_INT32_MAX / 2);
	*nentries = (uint32) ne;
	*nbuckets = pg_nextpower2_32(*nentries);
	rest = bytes > *nbuckets * sizeof(uint32) + ne * sizeof(MvsEntry) ?
		bytes - *nbuckets * sizeof(uint32) - ne * sizeof(MvsEntry) : 0;
	*nnodes = (uint32) Min(Max(rest / sizeof(MvsNode), 1024), PG_INT32_MAX / 2);
}

Size
mvs_shmem_size(void)
{
	uint32		nb,
				ne,
				nn;
	Size		size;

	if (mvs_size_kb <= 0)
		return 0;
	mvs_layout(&nb, &ne, &nn);
	size = MAXALIGN(sizeof(MvsShared));
	size = add_size(size, MAXALIGN(mul_size(nb, sizeof(uint32))));
	size = add_size(size, MAXALIGN(mul_size(ne + 1, sizeof(MvsEntry))));
	size = add_size(size, MAXALIGN(mul_size(nn + 1, sizeof(MvsNode))));
	return size;
}

void
mvs_shmem_request(void)
{
	if (mvs_size_kb <= 0)
		return;
	RequestAddinShmemSpace(mvs_shmem_size());
	RequestNamedLWLockTranche(MVS_TRANCHE, MVS_PARTITIONS);
}

/* Runs under AddinShmemInitLock, in the postmaster and after crashes. */
void
mvs_shmem_startup(void)
{
	bool		found;
	char	   *base;
	uint32		nb,
				ne,
				nn;

	mvs = NULL;
	if (mvs_size_kb <= 0)
		return;
	mvs_layout(&nb, &ne, &nn);
	base = ShmemInitStruct("abtree weight store", mvs_shmem_size(), &found);
	mvs = (MvsShared *) base;
	base += MAXALIGN(sizeof(MvsShared));
	mvs_buckets = (uint32 *) base;
	base += MAXALIGN(mul_size(nb, sizeof(uint32)));
	mvs_entries = (MvsEntry *) base;
	base += MAXALIGN(mul_size(ne + 1, sizeof(MvsEntry)));
	mvs_nodes = (MvsNode *) base;
	mvs_locks = GetNamedLWLockTranche(MVS_TRANCHE);
	if (found)
		return;

	memset(mvs, 0, sizeof(MvsShared));
	mvs->nbuckets = nb;
	mvs->nentries = ne;
	mvs->nnodes = nn;
	SpinLockInit(&mvs->freelock);
	memset(mvs_buckets, 0, nb * sizeof(uint32));
	for (uint32 i = 1; i <= ne; i++)
		mvs_entries[i].next = i < ne ? i + 1 : MVS_NIL;
	mvs->free_entry = 1;
	for (uint32 i = 1; i <= nn; i++)
		mvs_nodes[i].newer = i < nn ? i + 1 : MVS_NIL;
	mvs->free_node = 1;
	pg_atomic_init_u32(&mvs->horizon, InvalidTransactionId);
	pg_atomic_init_u32(&mvs->full, 0);
	pg_atomic_init_u64(&mvs->recorded, 0);
	pg_atomic_init_u64(&mvs->rebuilt, 0);
	pg_atomic_init_u64(&mvs->collected, 0);
	pg_atomic_init_u64(&mvs->gc_runs, 0);
	pg_atomic_init_u64(&mvs->fallbacks, 0);
	pg_atomic_init_u64(&mvs->lookups, 0);
	pg_atomic_init_u64(&mvs->lowered, 0);
	for (int i = 0; i < MVS_RELFILTER; i++)
		pg_atomic_init_u32(&mvs->relfilter[i], 0);
	for (int i = 0; i < MVS_BLOCKFILTER; i++)
		pg_atomic_init_u32(&mvs->blockfilter[i], 0);
}

bool
mvs_exists(void)
{
	return mvs != NULL;
}

uint32
mvs_hash(const MvsTag *tag)
{
	return hash_bytes((const unsigned char *) tag, sizeof(MvsTag));
}

/* The presence-filter slot of the index (all fields but the block). */
uint32
mvs_relslot(const MvsTag *tag)
{
	return hash_bytes((const unsigned char *) tag, offsetof(MvsTag, blk)) &
		(MVS_RELFILTER - 1);
}

static inline bool
mvs_tag_equal(const MvsTag *a, const MvsTag *b)
{
	return a->blk == b->blk && a->relfile == b->relfile &&
		a->db == b->db && a->spc == b->spc;
}

MvsEntry *
mvs_find(const MvsTag *tag, uint32 hash)
{
	uint32		i = mvs_buckets[hash & (mvs->nbuckets - 1)];

	for (; i != MVS_NIL; i = mvs_entries[i].next)
		if (mvs_tag_equal(&mvs_entries[i].tag, tag))
			return &mvs_entries[i];
	return NULL;
}

/*
 * A new, empty entry, or NULL when the pool is exhausted.  The presence
 * filters count it before the caller can add any weight it describes: a
 * reader that sees such a weight then also sees the filters set (README).
 */
MvsEntry *
mvs_create(const MvsTag *tag, uint32 hash)
{
	uint32		i;
	MvsEntry   *e;
	uint32	   *bucket = &mvs_buckets[hash & (mvs->nbuckets - 1)];

	SpinLockAcquire(&mvs->freelock);
	i = mvs->free_entry;
	if (i != MVS_NIL)
	{
		mvs->free_entry = mvs_entries[i].next;
		mvs->entries_used++;
	}
	SpinLockRelease(&mvs->freelock);
	if (i == MVS_NIL)
		return NULL;

	e = &mvs_entries[i];
	e->tag = *tag;
	e->newest = e->oldest = MVS_NIL;
	e->nversions = 0;
	e->total = 0;
	pg_atomic_fetch_add_u32(&mvs->relfilter[mvs_relslot(tag)], 1);
	pg_atomic_fetch_add_u32(mvs_blockfilter_for(hash), 1);
	e->next = *bucket;
	*bucket = i;
	return e;
}

/* Unlink an entry whose chain is empty and give it back. */
void
mvs_drop_entry(MvsEntry *e, uint32 hash)
{
	uint32		i = e - mvs_entries;
	uint32	   *link = &mvs_buckets[hash & (mvs->nbuckets - 1)];

	Assert(e->newest == MVS_NIL);
	while (*link != i)
	{
		Assert(*link != MVS_NIL);
		link = &mvs_entries[*link].next;
	}
	*link = e->next;
	pg_atomic_fetch_sub_u32(&mvs->relfilter[mvs_relslot(&e->tag)], 1);
	pg_atomic_fetch_sub_u32(mvs_blockfilter_for(hash), 1);

	SpinLockAcquire(&mvs->freelock);
	e->next = mvs->free_entry;
	mvs->free_entry = i;
	mvs->entries_used--;
	SpinLockRelease(&mvs->freelock);
}

uint32
mvs_alloc_node(void)
{
	uint32		i;

	SpinLockAcquire(&mvs->freelock);
	i = mvs->free_node;
	if (i != MVS_NIL)
	{
		mvs->free_node = mvs_nodes[i].newer;
		mvs->nodes_used++;
		/*
		 * The next allocation reads that node's link: ask for it now.  The
		 * free list is in the collector's order, so each node read there
		 * was a cache miss (3% of a one-client pgbench of inserts).
		 */
		if (mvs->free_node != MVS_NIL)
			mvs_prefetch(&mvs_nodes[mvs->free_node]);
	}
	SpinLockRelease(&mvs->freelock);
	return i;
}

void
mvs_free_nodes(uint32 *idx, int n)
{
	if (n == 0)
		return;
	SpinLockAcquire(&mvs->freelock);
	for (int k = 0; k < n; k++)
	{
		mvs_nodes[idx[k]].newer = mvs->free_node;
		mvs->free_node = idx[k];
	}
	mvs->nodes_used -= n;
	SpinLockRelease(&mvs->freelock);
}

/* An allocation failed: say so once, until the GC makes room again. */
void
mvs_note_full(void)
{
	pg_atomic_fetch_add_u64(&mvs->fallbacks, 1);
	if (pg_atomic_exchange_u32(&mvs->full, 1) == 0)
		ereport(LOG,
				(errmsg("abtree weight store is full: new inserts are not versioned until old snapshots end"),
				 errdetail("%u of %u versions and %u of %u entries in use.",
						   mvs->nodes_used, mvs->nnodes, mvs->entries_used, mvs->nentries),
				 errhint("Samples stay correct but are rejected more often. Increase abtree.mvstore_size, or end long-running transactions.")));
}

/* After a collection: room again once an eighth of both pools is free. */
void
mvs_note_room(void)
{
	bool		room;

	if (pg_atomic_read_u32(&mvs->full) == 0)
		return;
	SpinLockAcquire(&mvs->freelock);
	room = mvs->nnodes - mvs->nodes_used >= mvs->nnodes / 8 &&
		mvs->nentries - mvs->entries_used >= mvs->nentries / 8;
	SpinLockRelease(&mvs->freelock);
	if (room && pg_atomic_exchange_u32(&mvs->full, 0) == 1)
		ereport(LOG,
				(errmsg("abtree weight store has room again: inserts are versioned again")));
}
