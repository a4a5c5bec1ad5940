/*-------------------------------------------------------------------------
 *
 * pbtree.h
 *	  The pbtree index access method: a partitioned B-tree (paper 001).
 *
 * See src/pbtree/README for the layout, the invariants and the locking
 * protocol.  Each partition is a B-link tree of the abtree engine
 * (src/abtree) whose metapage is the partition's head page; the pbtree
 * metapage (block 0) is the partition directory.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PBTREE_H
#define PBTREE_H

#include "abtree/abtree.h"

#include "access/transam.h"
#include "storage/lock.h"

#define PBT_METAPAGE			0
#define PBT_MAGIC				0x9B7EE5A2
#define PBT_VERSION				1

/* Partition states */
#define PBT_MUTABLE				1	/* takes every insert */
#define PBT_CLOSED				2	/* no more inserts, not compacted yet */
#define PBT_SEALED				3	/* compacted, contiguous, with filters */
#define PBT_BUILDING			4	/* being written by a seal or merge */
#define PBT_DROPPED				5	/* replaced; pages free once safexid is */

#define PBT_MAX_PARTITIONS		96

typedef struct PbtPartition
{
	uint32		partno;			/* never reused; also in every page's
								 * pd_prune_xid */
	uint16		state;
	uint16		nfilters;		/* 0, 1 (full key) or 2 (and leading column) */
	BlockNumber head;			/* the tree's metapage (AbtMetaPageData) */
	BlockNumber filter_start;	/* first filter page */
	uint32		filter_pages;	/* pages per filter */
	uint32		hashes;			/* bits set per key */
	uint64		ntuples;		/* entries when sealed or built */
	uint64		bits_set[2];	/* per filter, for the false-positive rate */
	FullTransactionId safexid;	/* DROPPED: pages reusable when this is
								 * older than every snapshot */
	TimestampTz created;
} PbtPartition;

typedef struct PbtMetaPageData
{
	uint32		magic;
	uint32		version;
	uint32		next_partno;
	uint32		npartitions;
	uint64		nseals;			/* statistics */
	uint64		nmerges;
	PbtPartition parts[FLEXIBLE_ARRAY_MEMBER];
} PbtMetaPageData;

#define PbtPageGetMeta(page) ((PbtMetaPageData *) PageGetContents(page))

/* page number of a page's partition */
#define PbtPageGetPartno(page)	(((PageHeader) (page))->pd_prune_xid)

/* heavyweight locks on the index, on block numbers no page uses */
#define PBT_LOCK_INSERT			((BlockNumber) 0xFFFFFFF0)	/* share: insert;
															 * exclusive: switch */
#define PBT_LOCK_REORG			((BlockNumber) 0xFFFFFFF1)	/* seal copy, merge,
															 * VACUUM, free */

/* GUCs */
extern int	pbt_buffer_budget;	/* pages, shared by all pbtree indexes */
extern int	pbt_merge_threshold;	/* sealed partitions before a merge */
extern int	pbt_filter_bits;	/* bits per entry in each filter */

/* pbtpage.c: the directory */
typedef struct PbtDirectory
{
	uint32		next_partno;
	int			n;
	uint64		nseals;
	uint64		nmerges;
	PbtPartition parts[PBT_MAX_PARTITIONS];
} PbtDirectory;

extern void pbt_read_directory(Relation rel, PbtDirectory *dir);
extern PbtPartition *pbt_mutable(PbtDirectory *dir);
extern BlockNumber pbt_mutable_head(Relation rel);
extern Buffer pbt_lock_meta(Relation rel);
extern void pbt_log_meta(Relation rel, Buffer metabuf, Buffer *others, int nothers);
extern BlockNumber pbt_create_tree(Relation rel, uint32 partno, BlockNumber root,
								   uint32 level, Buffer *headbuf);
extern void pbt_init_metapage(Page page);
extern bool pbt_page_reusable(PbtDirectory *dir, Page page);
extern void pbt_log_free(Relation rel, Buffer metabuf, FullTransactionId horizon);
extern void pbt_redo_free(XLogReaderState *record);
extern void pbt_desc_free(StringInfo buf, XLogReaderState *record);

/* pbtfilter.c: Bloom filters of sealed partitions */
typedef struct PbtFilterBuild PbtFilterBuild;
extern bool pbt_filter_columns(Relation rel, int *nfilters);
extern bool pbt_filter_procs(Relation rel, FmgrInfo *procs, Oid *colls);
extern PbtFilterBuild *pbt_filter_begin(Relation rel, uint64 ntuples);
extern void pbt_filter_add(PbtFilterBuild *fb, IndexTuple itup);
extern void pbt_filter_write(PbtFilterBuild *fb, uint32 partno, PbtPartition *part,
							 bool log_pages);
extern bool pbt_filter_test(Relation rel, PbtPartition *part, int which, uint64 hash);
extern uint64 pbt_filter_hash(Relation rel, int ncols, Datum *values, Oid *colls,
							  FmgrInfo *procs);
extern double pbt_filter_fpr(PbtPartition *part, int which);

/* pbtinsert.c */
extern uint64 pbt_tree_leaves(Relation rel, BlockNumber head);
extern uint64 pbt_count_entries(Relation rel, BlockNumber head);

/* a growing list of block numbers (pbt_walk_level's output) */
typedef struct PbtBlockList
{
	BlockNumber *blocks;
	int			n;
	int			max;
} PbtBlockList;

#define PBT_ANY_PARTNO	0xFFFFFFFF	/* pbt_walk_level: no partition check */

extern void pbt_block_list_push(PbtBlockList *l, BlockNumber blkno);
extern uint64 pbt_walk_level(Relation rel, BlockNumber blkno, uint32 partno,
							 PbtBlockList *blocks, BlockNumber *down);
extern BlockNumber pbt_leftmost_leaf(Relation rel, BlockNumber head);
extern bool pbtinsert(Relation rel, Datum *values, bool *isnull, ItemPointer ht_ctid,
					  Relation heapRel, IndexUniqueCheck checkUnique,
					  bool indexUnchanged, IndexInfo *indexInfo);

/* pbtseal.c: seal, merge, free */
extern bool pbt_seal(Relation rel, bool wait);
extern void pbt_compact_closed(Relation rel);
extern void pbt_reorganise_locked(Relation rel);
extern int	pbt_merge(Relation rel, int max_inputs, bool smallest);
extern void pbt_free_dropped(Relation rel);
extern void pbt_write_partition_from(Relation rel, PbtDirectory *dir, int *inputs,
									 int ninputs, PbtPartition *out);

/* pbtbuild.c */
extern IndexBuildResult *pbtbuild(Relation heap, Relation index, IndexInfo *indexInfo);
extern void pbtbuildempty(Relation index);

/* pbtscan.c */
extern IndexScanDesc pbtbeginscan(Relation rel, int nkeys, int norderbys);
extern void pbtrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					  ScanKey orderbys, int norderbys);
extern bool pbtgettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 pbtgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void pbtendscan(IndexScanDesc scan);

/* pbtvacuum.c */
extern IndexBulkDeleteResult *pbtbulkdelete(IndexVacuumInfo *info,
											IndexBulkDeleteResult *stats,
											IndexBulkDeleteCallback callback,
											void *callback_state);
extern IndexBulkDeleteResult *pbtvacuumcleanup(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats);

/* pbtbudget.c: the shared buffer budget and the merge worker */
extern Size pbt_shmem_size(void);
extern void pbt_shmem_init(void);
extern bool pbt_budget_exceeded(Relation rel, uint64 npages);
extern void pbt_budget_forget(Relation rel);
extern void pbt_install_hooks(void);
extern bool pbt_is_pbtree(Relation rel);
extern Buffer pbt_new_buffer(Relation rel);
extern void pbt_request_merge(Relation rel);
extern void pbt_init_reloptions(void);

#endif							/* PBTREE_H */
