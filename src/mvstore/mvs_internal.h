/*-------------------------------------------------------------------------
 *
 * mvs_internal.h
 *	  The weight store's shared memory layout, shared by its files only.
 *
 * Everything lives in one fixed block of shared memory: a bucket array, a
 * pool of entries (one per downlink with a chain) and a pool of version
 * nodes.  Links are 32-bit indexes into the pools; 0 means none.  Each
 * bucket belongs to one of MVS_PARTITIONS LWLocks (bucket mod partitions);
 * an entry and its chain are read under the lock in share mode and changed
 * under it in exclusive mode.  The free lists have a spinlock of their own.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MVS_INTERNAL_H
#define MVS_INTERNAL_H

#include "mvstore/mvstore.h"

#include "storage/lwlock.h"
#include "storage/spin.h"

#define MVS_NIL				0
#define MVS_PARTITIONS		128
#define MVS_TRANCHE			"abtree_mvstore"

/* Presence filters (README "Reading without locks"); powers of two. */
#define MVS_RELFILTER		1024
#define MVS_BLOCKFILTER		65536

/* ask the CPU for a line before it is read (never faults) */
#if defined(__GNUC__) || defined(__clang__)
#define mvs_prefetch(addr)	__builtin_prefetch(addr)
#else
#define mvs_prefetch(addr)	((void) 0)
#endif

typedef struct MvsEntry
{
	MvsTag		tag;
	uint32		next;			/* in the bucket, or in the free list */
	uint32		newest;			/* chain, newest xid first */
	uint32		oldest;
	uint32		nversions;
	TransactionId newest_xid;	/* the newest node's, if any: a writer compares
								 * it without reading that node */
	int64		total;			/* sum of the chain's deltas */
} MvsEntry;

typedef struct MvsNode
{
	TransactionId xid;
	uint32		newer;			/* or the next free node */
	uint32		older;
	int64		delta;
} MvsNode;

typedef struct MvsShared
{
	uint32		nbuckets;		/* a power of two, >= MVS_PARTITIONS */
	uint32		nentries;		/* pool sizes, not counting index 0 */
	uint32		nnodes;

	slock_t		freelock;		/* protects the four fields below */
	uint32		free_entry;
	uint32		free_node;
	uint32		entries_used;
	uint32		nodes_used;

	pg_atomic_uint32 horizon;	/* GC: xids before it are visible to all */
	pg_atomic_uint32 full;		/* 1 from a failed allocation until room */
	pg_atomic_uint64 recorded;	/* deltas recorded by inserts */
	pg_atomic_uint64 rebuilt;	/* chains rebuilt by splits and repairs */
	pg_atomic_uint64 collected; /* versions dropped by the GC */
	pg_atomic_uint64 gc_runs;
	pg_atomic_uint64 fallbacks; /* passes and rebuilds left unrecorded */
	pg_atomic_uint64 lookups;	/* chains read by samplers */
	pg_atomic_uint64 lowered;	/* chains lowered by VACUUM or an undo */

	pg_atomic_uint32 relfilter[MVS_RELFILTER];
	pg_atomic_uint32 blockfilter[MVS_BLOCKFILTER];
} MvsShared;

extern MvsShared *mvs;
extern uint32 *mvs_buckets;
extern MvsEntry *mvs_entries;
extern MvsNode *mvs_nodes;
extern LWLockPadded *mvs_locks;

extern uint32 mvs_hash(const MvsTag *tag);
extern uint32 mvs_relslot(const MvsTag *tag);

static inline LWLock *
mvs_lock_for(uint32 hash)
{
	return &mvs_locks[(hash & (mvs->nbuckets - 1)) % MVS_PARTITIONS].lock;
}

static inline pg_atomic_uint32 *
mvs_blockfilter_for(uint32 hash)
{
	return &mvs->blockfilter[(hash >> 7) & (MVS_BLOCKFILTER - 1)];
}

/* The caller holds the partition lock of hash (create: exclusively). */
extern MvsEntry *mvs_find(const MvsTag *tag, uint32 hash);
extern MvsEntry *mvs_create(const MvsTag *tag, uint32 hash);
extern void mvs_drop_entry(MvsEntry *e, uint32 hash);
extern uint32 mvs_alloc_node(void);
extern void mvs_free_nodes(uint32 *idx, int n);
extern void mvs_note_full(void);
extern void mvs_note_room(void);

#endif							/* MVS_INTERNAL_H */
