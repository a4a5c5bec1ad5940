/*-------------------------------------------------------------------------
 *
 * mvstore.h
 *	  The multi-version weight store (paper 000, section 4.4): for each
 *	  abtree downlink, the deltas that recent transactions added to its
 *	  weight, so that a sampler can subtract the ones its snapshot cannot
 *	  see.  src/mvstore/README states the invariant and the locking.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MVSTORE_H
#define MVSTORE_H

#include "abtree_ext.h"

#include "access/itup.h"
#include "nodes/pg_list.h"
#include "storage/block.h"
#include "storage/bufpage.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

/*
 * A downlink is named by the child block it points to, which survives
 * splits of the page holding the downlink, and by the index's physical
 * file (so REINDEX and TRUNCATE start afresh), in its database.
 */
typedef struct MvsTag
{
	Oid			spc;
	Oid			db;
	Oid			relfile;
	BlockNumber blk;
} MvsTag;

/* One transaction's contribution to a weight. */
typedef struct MvsDelta
{
	TransactionId xid;
	int64		delta;
} MvsDelta;

/*
 * The adds of one insert's weight pass, or of a batched flush's group:
 * recorded all or none (README).  A fixed array, because path_exclusive
 * and the flush record inside a critical section.
 */
#define MVS_WRITER_MAX		64

typedef struct MvsWriter
{
	bool		active;			/* still recording */
	TransactionId xid;			/* the inserting top-level transaction */
	MvsTag		base;			/* the index; blk varies */
	int			ndone;
	BlockNumber done[MVS_WRITER_MAX];	/* downlinks recorded, to undo */
	uint64		done_w[MVS_WRITER_MAX]; /* what was added on each */
} MvsWriter;

/*
 * A reader's memory of downlinks it weighed: valid while the downlink's
 * stored weight and RID and the store's count of lowered chains are those
 * it saw (README, "The reader's cache").
 */
typedef struct MvsCacheSlot
{
	BlockNumber blk;
	uint16		rid;
	uint64		epoch;
	uint64		w;				/* the stored weight */
	uint64		seen;			/* the weight for the snapshot */
} MvsCacheSlot;

#define MVS_READER_CACHE	4096	/* slots, a power of two */

/* A sampler's view: its snapshot, and the index it reads. */
typedef struct MvsReader
{
	bool		active;			/* subtract invisible deltas */
	Snapshot	snap;
	MvsTag		base;
	uint32		relslot;
	uint64		lookups;		/* chains read under their lock */
	MemoryContext cxt;			/* where the cache is allocated */
	MvsCacheSlot *cache;		/* NULL until the first lookup */
} MvsReader;

/* GUCs */
extern bool mvs_enabled;
extern int	mvs_size_kb;
extern int	mvs_gc_interval_ms;

/* mvs_shmem.c */
extern Size mvs_shmem_size(void);
extern void mvs_shmem_request(void);
extern void mvs_shmem_startup(void);
extern bool mvs_exists(void);

/* mvs_chain.c: writers (insert passes, splits, repairs, VACUUM) */
extern void mvs_writer_begin(MvsWriter *wr, Relation rel);
extern void mvs_writer_prefetch(MvsWriter *wr, const BlockNumber *children, int n,
								bool entries);
extern void mvs_add(MvsWriter *wr, BlockNumber child, uint64 *weight, uint64 w,
					bool atomic);
extern void mvs_rebuild(Relation rel, BlockNumber child, MvsDelta *entries, int nentries,
						const BlockNumber *below, int nbelow);
extern void mvs_forget(Relation rel, BlockNumber child, MvsDelta *deltas, int n);
extern int	mvs_deltas_recent(MvsDelta *d, int n);

/* mvs_chain.c: readers (samplers, range weights, checks) */
extern void mvs_reader_init(MvsReader *rd, Relation rel, Snapshot snap);
extern uint64 mvs_weight(MvsReader *rd, BlockNumber child, uint64 *weight, uint16 rid);
extern bool mvs_xid_invisible(MvsReader *rd, TransactionId xid);
extern void mvs_xids_invisible(MvsReader *rd, const TransactionId *xids, int n, bool *out);
extern bool mvs_leaf_all_visible(MvsReader *rd, Page leaf);
extern bool mvs_reader_versioned(MvsReader *rd);

/* mvs_gc.c */
extern void mvs_register_gc_worker(void);
extern uint64 mvs_collect(TransactionId horizon);

#endif							/* MVSTORE_H */
