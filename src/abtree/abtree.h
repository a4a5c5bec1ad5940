/*-------------------------------------------------------------------------
 *
 * abtree.h
 *	  The abtree index access method: an aggregate B-link tree.
 *
 * See src/abtree/README for the layout, the invariants and the locking
 * protocol.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ABTREE_H
#define ABTREE_H

#include "abtree_ext.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/itup.h"
#include "access/sdir.h"
#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"
#include "fmgr.h"
#include "nodes/tidbitmap.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"

/* PostgreSQL 18 tells vacuum_delay_point whether ANALYZE is running */
#if PG_VERSION_NUM >= 180000
#define vacuum_delay_point_compat() vacuum_delay_point(false)
#else
#define vacuum_delay_point_compat() vacuum_delay_point()
#endif

/* Metapage */
#define ABT_METAPAGE			0
#define ABT_MAGIC				0xAB7EE5A1
#define ABT_VERSION				5	/* 2: sketches keep exact sets; 3: key sketches;
										 * 4: sketch_buckets; 5: posting tuples */
#define ABT_MIN_VERSION			2	/* the oldest this library reads */

#define ABT_META_WEIGHTED		0x0001	/* leaf tuples carry a weight */

typedef struct AbtMetaPageData
{
	uint32		magic;
	uint32		version;
	BlockNumber root;			/* InvalidBlockNumber: empty tree */
	uint32		level;			/* level of the root (0: the root is a leaf) */
	uint16		flags;
	AttrNumber	weight_attno;	/* index attribute of the weight, or 0 */
	uint16		sketch_mask;	/* bit k: key column k has a sketch */
	BlockNumber sketch_start;	/* first sketch page (abtsketch.c) */
	uint8		sketch_log2m;	/* version 4: buckets 2^n per sketch; before, 0 (512) */
} AbtMetaPageData;

#define AbtPageGetMeta(page) ((AbtMetaPageData *) PageGetContents(page))

/* Special space of every page */
typedef struct AbtPageOpaqueData
{
	BlockNumber prev;			/* left sibling, or InvalidBlockNumber */
	BlockNumber next;			/* right sibling, or InvalidBlockNumber */
	uint16		level;			/* 0 = leaf */
	uint16		flags;
	uint16		sid;			/* structural modification ID */
	uint16		page_id;		/* ABT_PAGE_ID, to recognise our pages */
} AbtPageOpaqueData;

typedef AbtPageOpaqueData *AbtPageOpaque;

#define ABT_PAGE_ID				0xFF8A

#define ABTP_LEAF				0x0001
#define ABTP_ROOT				0x0002
#define ABTP_META				0x0004
#define ABTP_HAS_INVALID		0x0008	/* leaf: may hold not-yet-valid entries */
#define ABTP_SKETCH				0x0010	/* a page of a column's sketch */
#define ABTP_FILTER				0x0020	/* pbtree: a Bloom filter page */
#define ABTP_HAS_POSTING		0x0040	/* leaf: may hold posting tuples */

#define AbtPageGetOpaque(page) ((AbtPageOpaque) PageGetSpecialPointer(page))
#define AbtPageIsLeaf(opaque)	(((opaque)->flags & ABTP_LEAF) != 0)
#define AbtPageIsRoot(opaque)	(((opaque)->flags & ABTP_ROOT) != 0)
#define AbtPageIsRightmost(opaque) ((opaque)->next == InvalidBlockNumber)
/* internal pages: not leaf, metapage, sketch or filter page */
#define AbtPageIsInternal(opaque) \
	(((opaque)->flags & (ABTP_LEAF | ABTP_META | ABTP_SKETCH | ABTP_FILTER)) == 0)

/* The high key, on every page but the rightmost of its level */
#define ABT_HIKEY				((OffsetNumber) 1)
#define AbtFirstDataOffset(opaque) \
	(AbtPageIsRightmost(opaque) ? ABT_HIKEY : OffsetNumberNext(ABT_HIKEY))

/*
 * Leaf tuples end with the validity xid (4 bytes) and, in weighted
 * indexes, the 64-bit weight before it.  Both are read with memcpy: they
 * are not aligned.
 */
#define ABT_LEAF_AUX_SIZE(weighted) ((weighted) ? 12 : 4)

static inline TransactionId
abt_leaf_xmin(IndexTuple itup)
{
	TransactionId xid;

	memcpy(&xid, (char *) itup + IndexTupleSize(itup) - sizeof(TransactionId),
		   sizeof(TransactionId));
	return xid;
}

/*
 * Posting tuples (issue 22; src/abtree/README, "Posting tuples"): one leaf
 * entry for several heap rows whose index columns are the same bytes.  The
 * AM's t_info bit says so on a leaf (on a pivot it means no key).  The heap
 * TIDs, ascending, follow the column data, then their number n, then the
 * validity xid:
 *
 *	 IndexTupleData | columns | padding | TIDs 1..n (6 bytes each) | n | xmin
 *
 * t_tid is not a heap TID but the entry's place in the order: (block, 0),
 * the block of its first TID when it was made.  No heap TID has offset 0,
 * so no plain entry ever sorts equal to it, and VACUUM taking TIDs out
 * (the first too) leaves it where it is.  The entry weighs n.  Only
 * unweighted indexes have them, always valid: a bulk build makes them
 * frozen, a fold on insert of entries of one xid with that xid.
 */
#define ABT_LEAF_POSTING		INDEX_AM_RESERVED_BIT
#define AbtLeafIsPosting(itup)	(((itup)->t_info & ABT_LEAF_POSTING) != 0)
#define ABT_POSTING_TRAILER(n)	((n) * sizeof(ItemPointerData) + sizeof(uint16))
/* the most TIDs a page can hold: the bound of a scan's items */
#define ABT_MAX_TIDS_PER_PAGE \
	((int) ((BLCKSZ - SizeOfPageHeaderData) / sizeof(ItemPointerData)))

static inline int
abt_posting_count(IndexTuple itup)
{
	uint16		n;

	memcpy(&n, (char *) itup + IndexTupleSize(itup) - sizeof(TransactionId) - sizeof(uint16),
		   sizeof(uint16));
	return n;
}

/* The number of heap rows of a leaf entry: 1, or a posting tuple's n. */
static inline int
abt_leaf_ntids(IndexTuple itup)
{
	return AbtLeafIsPosting(itup) ? abt_posting_count(itup) : 1;
}

/* Heap TID i (from 0) of a leaf entry of n (abt_leaf_ntids). */
static inline void
abt_leaf_tid(IndexTuple itup, int n, int i, ItemPointer out)
{
	if (!AbtLeafIsPosting(itup))
		*out = itup->t_tid;
	else
		memcpy(out, (char *) itup + IndexTupleSize(itup) - sizeof(TransactionId) -
			   ABT_POSTING_TRAILER(n) + i * sizeof(ItemPointerData),
			   sizeof(ItemPointerData));
}

/*
 * ItemPointerCompare inline: the builds sort millions of (key, TID) pairs
 * whose keys tie (a date column), and the call through the PLT was a fifth
 * of such a build (bench/results/create_index_spill.md).
 */
static inline int
abt_tid_cmp(const ItemPointerData *a, const ItemPointerData *b)
{
	uint64		x = ((uint64) ItemPointerGetBlockNumberNoCheck(a) << 16) |
		ItemPointerGetOffsetNumberNoCheck(a);
	uint64		y = ((uint64) ItemPointerGetBlockNumberNoCheck(b) << 16) |
		ItemPointerGetOffsetNumberNoCheck(b);

	return x < y ? -1 : x > y ? 1 : 0;
}

static inline uint64
abt_leaf_weight(IndexTuple itup, bool weighted)
{
	uint64		w;

	if (!weighted)
		return (uint64) abt_leaf_ntids(itup);
	memcpy(&w, (char *) itup + IndexTupleSize(itup) - 12, sizeof(uint64));
	return w;
}

/* What a leaf entry counts for in sums: nothing until it is valid. */
static inline uint64
abt_leaf_effective_weight(IndexTuple itup, bool weighted)
{
	if (!TransactionIdIsValid(abt_leaf_xmin(itup)))
		return 0;
	return abt_leaf_weight(itup, weighted);
}

/*
 * Pivot tuples (downlinks and high keys) end with this.  The weight is
 * 8-byte aligned because tuples and their sizes are MAXALIGNed.
 */
typedef struct AbtPivotAux
{
	ItemPointerData heaptid;	/* key suffix that makes keys unique */
	uint16		rid;			/* recompute ID */
	uint64		weight;			/* subtree weight (downlinks only) */
} AbtPivotAux;

#define AbtPivotGetAux(itup) \
	((AbtPivotAux *) ((char *) (itup) + IndexTupleSize(itup) - sizeof(AbtPivotAux)))

/* A pivot without key columns: the "minus infinity" first downlink. */
#define ABT_PIVOT_NOKEY			INDEX_AM_RESERVED_BIT
#define AbtPivotHasNoKey(itup)	(((itup)->t_info & ABT_PIVOT_NOKEY) != 0)

#define AbtDownlinkGetChild(itup)	ItemPointerGetBlockNumberNoCheck(&(itup)->t_tid)

/*
 * Largest leaf tuple: a third of a page, minus room for its pivot aux, so
 * that three pivots made from it fit on an internal page.
 */
#define ABT_MAX_ITEM_SIZE \
	(MAXALIGN_DOWN((BLCKSZ - MAXALIGN(SizeOfPageHeaderData + 3 * sizeof(ItemIdData)) - \
					MAXALIGN(sizeof(AbtPageOpaqueData))) / 3) - sizeof(AbtPivotAux))

/* Reloptions */
typedef struct AbtOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			fillfactor;
	int			weight_column;	/* offset of the string, 0 if not set */
	bool		sketch;			/* keep a distinct-value sketch per key column */
	bool		key_sketch;		/* and one of whole keys (2-3 key columns) */
	int			sketch_buckets; /* buckets per sketch, a power of two */
	bool		deduplicate_items;	/* builds fold equal entries (posting tuples) */
} AbtOptions;

#define ABT_DEFAULT_FILLFACTOR	90
#define ABT_MIN_FILLFACTOR		10

/*
 * An insertion-style key: the first natts key columns compared with the
 * support function 1 of the opclass (or a cross-type one), then optionally
 * the heap TID.  Missing trailing parts are minus infinity, or plus
 * infinity with nextkey.
 */
/*
 * How a key column compares: through the support function's fmgr call, or
 * inline for the same-type integer comparisons of the built-in operator
 * families (abt_key_set_proc decides from the function's OID).
 */
typedef enum AbtCmpKind
{
	ABT_CMP_FMGR,
	ABT_CMP_INT16,				/* int2 */
	ABT_CMP_INT32,				/* int4, date */
	ABT_CMP_INT64,				/* int8, timestamp, timestamptz */
	ABT_CMP_UINT32				/* oid */
} AbtCmpKind;

typedef struct AbtKeyAttr
{
	Datum		value;
	bool		isnull;
	bool		desc;
	bool		nulls_first;
	uint8		kind;			/* AbtCmpKind */
	Oid			collation;
	FmgrInfo	cmp;
} AbtKeyAttr;

typedef struct AbtKey
{
	BlockNumber meta;			/* the tree's metapage: ABT_METAPAGE, or a
								 * pbtree partition's head page */
	int			natts;
	bool		nextkey;
	bool		has_tid;
	ItemPointerData tid;
	AbtKeyAttr	attrs[INDEX_MAX_KEYS];
} AbtKey;

/* Per-index state cached in rd_amcache */
typedef struct AbtIndexInfo
{
	bool		weighted;
	AttrNumber	weight_attno;
	Oid			weight_type;
	int			nkeyatts;
	Size		max_pivot_size; /* largest pivot any insert can create */
	TupleDesc	keydesc;		/* the key columns: the shape of pivots */
	BlockNumber cached_root;	/* last root seen; checked before use */
	uint64		copy_owner;		/* names writers' page copies (abtstack.c); 0: none yet */
	bool		has_varlena;	/* some column is variable-length */
	int			fillfactor;
	bool		deduplicate;	/* reloption deduplicate_items */
	bool		partitioned;	/* a pbtree index (src/pbtree/README) */
	bool		recovery_checked;	/* abt_recovery_check() ran (or need not) */
	uint32		inserts;		/* pbtree: inserts by this backend */
	/* sketches: read from the metapage on first use (abt_sketch_info) */
	bool		sketch_loaded;
	uint16		sketch_mask;
	BlockNumber sketch_start;
	int			sketch_log2m;	/* buckets per sketch: 2^sketch_log2m */
	FmgrInfo	sketch_hash[4];	/* ABT_SKETCH_MAX_COLS */
} AbtIndexInfo;

/* abtpage.c */
extern void abt_init_page(Page page, uint16 level, uint16 flags);
extern void abt_init_metapage(Page page, bool weighted, AttrNumber weight_attno);
extern Buffer abt_new_buffer(Relation rel);
extern AbtIndexInfo *abt_index_info(Relation rel);
extern IndexTuple abt_form_leaf(Relation rel, AbtIndexInfo *info, Datum *values,
								bool *isnull, ItemPointer heaptid, TransactionId xid);
extern IndexTuple abt_make_pivot(Relation rel, IndexTuple source, bool source_is_leaf,
								 BlockNumber child, uint64 weight);
extern IndexTuple abt_make_nokey_pivot(BlockNumber child, uint64 weight, uint16 rid);
extern ItemPointer abt_tuple_heaptid(IndexTuple itup, bool pivot);
extern uint64 abt_page_weight(Page page, bool weighted);
extern bool abt_pivot_key_equal(IndexTuple a, IndexTuple b);
extern void abt_check_page(Relation rel, Buffer buf);
extern void abt_read_meta(Relation rel, AbtMetaPageData *meta);
extern void abt_check_altered_options(Relation rel);
extern void abt_check_partition_weighting(Oid parentoid);
extern void abt_rename_weight_columns(Oid relid, const char *oldname,
									  const char *newname, bool recurse);
extern void abt_install_utility_hook(void);
extern void abt_read_meta_at(Relation rel, BlockNumber blkno, AbtMetaPageData *meta);
extern uint64 abt_weight_from_datum(Datum value, bool isnull, Oid type);

/*
 * Limits of a weighted index's weights (src/abtree/README, "Weight
 * limits"): an entry weighs at most 2^40, and an insert or build that
 * would take the index's total past 2^53 fails, so that draws add and
 * compare a page's weights exactly in doubles, and no sum can wrap around
 * in 64 bits whatever inserts run at once.
 */
#define ABT_MAX_ENTRY_WEIGHT	(UINT64CONST(1) << 40)
#define ABT_MAX_TOTAL_WEIGHT	(UINT64CONST(1) << 53)
extern void abt_weight_total_error(Relation rel, uint64 total, uint64 w);
extern void abt_check_weight_room(Relation rel, Page root, uint64 w);

/* abtcompare.c */
extern void abt_key_init(Relation rel, AbtKey *key);
extern void abt_key_from_tuple(Relation rel, AbtKey *key, IndexTuple itup, bool pivot);
extern int	abt_compare(Relation rel, AbtKey *key, Page page, OffsetNumber off);
extern void abt_key_set_proc(AbtKeyAttr *attr, Oid proc);
extern OffsetNumber abt_binsrch_leaf(Relation rel, AbtKey *key, Page page);
extern void abt_page_add(Page page, IndexTuple itup, OffsetNumber off);
extern OffsetNumber abt_binsrch_internal(Relation rel, AbtKey *key, Page page);
extern bool abt_internal_offset_holds(Relation rel, AbtKey *key, Page page,
									  OffsetNumber off);
extern bool abt_key_beyond_page(Relation rel, AbtKey *key, Page page);
extern int	abt_compare_tuples(Relation rel, IndexTuple a, bool a_pivot,
							   IndexTuple b, bool b_pivot);
extern int	abt_compare_key_tuple(Relation rel, AbtKey *key, IndexTuple b, bool b_pivot);
extern int	abt_compare_keys(AbtKey *a, const AbtKey *b);
extern bool abt_key_columns_equal(Relation rel, AbtKey *key, Page page,
								  OffsetNumber off);

/*
 * The pages a writer's descent passed through, root first: the block and
 * the downlink it followed there.  Writers climb back up with it, to the
 * block or, after splits, to its right (B-link: downlinks only move right).
 */
#define ABT_MAX_HEIGHT	32

/* a relation's storage, across the PostgreSQL 16 rename (RelFileLocator) */
#if PG_VERSION_NUM >= 160000
#define abt_file_of(rel)		((rel)->rd_locator)
#define abt_file_rel(rel)		((rel)->rd_locator.relNumber)
#define abt_file_db(rel)		((rel)->rd_locator.dbOid)
#else
#define abt_file_of(rel)		((rel)->rd_node)
#define abt_file_rel(rel)		((rel)->rd_node.relNode)
#define abt_file_db(rel)		((rel)->rd_node.dbNode)
#endif

typedef struct AbtStackEntry
{
	BlockNumber blkno;
	OffsetNumber off;
	uint16		sid;			/* the page's SID when off was found */
} AbtStackEntry;

typedef struct AbtStack
{
	int			depth;
	AbtStackEntry e[ABT_MAX_HEIGHT];
} AbtStack;

/* abtstack.c: writers' descent and climb */
extern Buffer abt_search_leaf(Relation rel, AbtKey *key, AbtStack *stack);
extern Buffer abt_move_right_exclusive(Relation rel, AbtKey *key, Buffer buf);
extern bool abt_try_share_lock(Buffer buf);
extern Buffer abt_lock_parent(Relation rel, AbtStack *stack, int level_index,
							  BlockNumber child, int mode, OffsetNumber *off);
extern OffsetNumber abt_find_downlink(Page page, BlockNumber child, OffsetNumber hint);
extern OffsetNumber abt_find_downlink_from(Page page, BlockNumber child, OffsetNumber hint,
										   OffsetNumber from);
extern OffsetNumber abt_find_leaf_entry(Relation rel, AbtKey *key, Page page);
extern int	abt_lock_ancestors(Relation rel, Buffer buf, Buffer *up);
extern int	abt_lock_path_to_root(Relation rel, AbtStack *stack, Buffer leaf, Buffer *path,
								  OffsetNumber *offs);

/* abtpass.c: the second phase of an insert */
/*
 * Where phase 1 of an insert found the entry's way and put the entry: the
 * internal pages of its last descent and the leaf, each with the SID it had
 * (abt_weight_pass skips the searches on pages whose SID has not moved).
 */
typedef struct AbtPosHint
{
	AbtStack	stack;
	BlockNumber leaf;			/* InvalidBlockNumber: no hint */
	OffsetNumber leafoff;
	uint16		leafsid;
} AbtPosHint;
extern void abt_weight_pass(Relation rel, AbtKey *key, uint64 w, const AbtPosHint *hint);
extern void abt_mark_valid(Relation rel, Buffer leaf, OffsetNumber off, Buffer *path,
						   int npath, OffsetNumber *path_offs, uint64 w);
extern void abt_insert_valid(Relation rel, Buffer leaf, OffsetNumber off, IndexTuple newitup,
							 Buffer *path, int npath, OffsetNumber *path_offs, uint64 w);
extern void abt_debug_pause(int child_level);
extern void abt_debug_wait(int64 key);

/* abtsearch (abtscan.c): reader descent */
extern Buffer abt_get_root(Relation rel, BlockNumber meta, int access);
extern Buffer abt_descend_to_leaf(Relation rel, AbtKey *key);
extern Buffer abt_relandgetbuf(Relation rel, Buffer buf, BlockNumber blkno);

/* abtbuild.c */
extern IndexBuildResult *abtbuild(Relation heap, Relation index, IndexInfo *indexInfo);
extern void abtbuildempty(Relation index);
typedef struct AbtTreeWriter AbtTreeWriter;
extern AbtTreeWriter *abt_tree_writer_begin(Relation index, int fillfactor,
											int nonleaf_fillfactor, uint32 partno,
											bool log_pages);
extern void abt_tree_writer_add(AbtTreeWriter *tw, IndexTuple leaf);
extern BlockNumber abt_tree_writer_finish(AbtTreeWriter *tw, uint32 *level);
/* abtbuildsort.c: the bulk build's sort */
typedef struct AbtBuildSort AbtBuildSort;
extern AbtBuildSort *abt_bsort_begin(Relation index);
extern void abt_bsort_put(AbtBuildSort *s, ItemPointer tid, Datum *values, bool *isnull);
extern void abt_bsort_perform(AbtBuildSort *s);
extern bool abt_bsort_next(AbtBuildSort *s, Datum **values, bool **isnull, ItemPointer *tid);
extern IndexTuple abt_bsort_current_leaf(AbtBuildSort *s);

/* abtbuildrun.c: sorted runs on temporary files and their merge */
typedef struct AbtRuns AbtRuns;
extern AbtRuns *abt_runs_begin(void);
extern void abt_runs_put(AbtRuns *r, const void *data, Size len);
extern void abt_runs_close_run(AbtRuns *r);
extern int	abt_runs_count(AbtRuns *r);
extern void abt_runs_rewind(AbtRuns *r);
extern bool abt_runs_get(AbtRuns *r, int i, void *data, Size len);
extern void abt_runs_end(AbtRuns *r);
typedef int (*AbtMergeCmp) (int a, int b, void *arg);
typedef struct AbtMerge
{
	int			n;				/* sources still in the heap */
	int		   *heap;
	AbtMergeCmp cmp;
	void	   *arg;
} AbtMerge;
extern void abt_merge_begin(AbtMerge *m, int nsources, AbtMergeCmp cmp, void *arg);
extern void abt_merge_add(AbtMerge *m, int src);
extern int	abt_merge_top(AbtMerge *m);
extern void abt_merge_next(AbtMerge *m, bool more);
extern void abt_bsort_end(AbtBuildSort *s);

typedef struct AbtSorted AbtSorted;
extern AbtSorted *abt_sorted_begin(Relation heap, Relation index, IndexInfo *indexInfo,
								   double *reltuples, double *indtuples);
extern IndexTuple abt_sorted_next(AbtSorted *st);
extern void abt_sorted_end(AbtSorted *st);

/* abtinsert.c */
extern bool abtinsert(Relation rel, Datum *values, bool *isnull, ItemPointer ht_ctid,
					  Relation heapRel, IndexUniqueCheck checkUnique,
					  bool indexUnchanged, IndexInfo *indexInfo);
extern void abt_insert_entry(Relation rel, AbtKey *key, IndexTuple itup);
extern void abt_validate_entry(Relation rel, AbtKey *key, uint64 w);

/* abtbatch.c: weight_protocol = batched */
extern void abt_batch_add(Relation rel, IndexTuple itup, uint64 w, const AbtPosHint *hint);
extern void abt_batch_flush_rel(Relation rel);
extern void abt_batch_install(void);
extern void abt_split_fill_left(Page page, OffsetNumber splitoff, IndexTuple lefthikey,
								BlockNumber rightblk, Page left);

/* abtscan.c */
extern IndexScanDesc abtbeginscan(Relation rel, int nkeys, int norderbys);
extern void abtrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					  ScanKey orderbys, int norderbys);
extern bool abtgettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 abtgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void abtendscan(IndexScanDesc scan);
extern void abt_scan_set_tree(IndexScanDesc scan, BlockNumber meta);

/* abtvacuum.c */
extern void abt_recovery_check(Relation rel);
extern IndexBulkDeleteResult *abtbulkdelete(IndexVacuumInfo *info,
											IndexBulkDeleteResult *stats,
											IndexBulkDeleteCallback callback,
											void *callback_state);
extern IndexBulkDeleteResult *abtvacuumcleanup(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats);

/* abtsample.c */
typedef struct AbtSampleRange
{
	bool		has_lo;
	bool		has_hi;
	AbtKey		lo;				/* first key in the range */
	AbtKey		hi;				/* first key past the range (nextkey) */
} AbtSampleRange;

struct MvsReader;

/* abtversions.c: what abtree hands the weight store (src/mvstore) */
struct MvsReader;
struct MvsDelta;
extern uint64 abt_item_seen_weight(struct MvsReader *rd, IndexTuple itup, bool leaf,
								   bool weighted);
extern int	abt_vacuum_deltas(Page leaf, OffsetNumber *offs, int noffs, OffsetNumber *updated,
							  IndexTuple *newtups, int nupdated, bool weighted,
							  struct MvsDelta *out);
extern void abt_versions_rebuild(Relation rel, BlockNumber child, Page childpage,
								 bool weighted);

/*
 * Ask the CPU to start loading addr's cache line: sampling reads entries and
 * rows at random places, and a draw costs its cache misses (issue 21), so
 * loops over a batch ask a few items ahead.  Never faults, even on a bad
 * address.
 */
#if defined(__GNUC__) || defined(__clang__)
#define abt_prefetch(addr)	__builtin_prefetch(addr)
#define abt_prefetch_write(addr)	__builtin_prefetch(addr, 1)
#else
#define abt_prefetch(addr)	((void) 0)
#define abt_prefetch_write(addr)	((void) 0)
#endif
#define ABT_PREFETCH_AHEAD	8

/*
 * Ask for the tuple line pointer lp points to, on a page the caller may
 * not have pinned: the line pointer is read as a hint for an address only
 * (masked into the page), and a prefetch never faults.
 */
static inline void
abt_prefetch_item(Page page, ItemId lp)
{
	abt_prefetch((char *) page + (((volatile ItemIdData *) lp)->lp_off & (BLCKSZ - 1)));
}

/* abtrecent.c: reads issued ahead before PostgreSQL 17's read streams */
extern Size abt_hints_shmem_size(void);
extern void abt_hints_shmem_init(void);
extern Buffer abt_read_hinted(Relation rel, BlockNumber blkno);
#if PG_VERSION_NUM < 170000
extern Buffer abt_prefetch_page(Relation rel, BlockNumber blkno, bool tail);
extern Buffer abt_read_recent(Relation rel, BlockNumber blkno, Buffer recent);
extern Buffer abt_hinted(Relation rel, BlockNumber blkno);
extern void abt_hint_prefetch(Relation rel, BlockNumber blkno);
extern void abt_hint_prefetch_buffer(Relation rel, BlockNumber blkno);
#endif

/* abtsort.c */
typedef struct AbtKeyed
{
	uint64		key;
	int32		val;
} AbtKeyed;
extern void abt_sort_keyed(AbtKeyed *a, int n);

/* abtscratch.c */
extern void *abt_scratch_alloc(Size size);
extern void abt_scratch_free(void *p);

/* abtdraw.c: one attempt per variate u (uniform on [0, 1)), in batches */
typedef struct AbtDraw
{
	double		u;				/* in */
	bool		accepted;		/* out: u found an entry ... */
	ItemPointerData tid;		/* ... whose heap TID is this */
} AbtDraw;

/*
 * Where a batch's accepted entries' index columns go, if the caller wants
 * them (index-only draws): draw i's column k at values[i * natts + k], the
 * index's natts; values passed by reference are copied into the memory
 * context current at the call.
 */
typedef struct AbtDrawColumns
{
	Datum	   *values;
	bool	   *isnull;
} AbtDrawColumns;
extern double abt_draw_stored_share;
extern int	abt_sample_batch(Relation rel, AbtSampleRange *range, struct MvsReader *rd,
							 AbtDraw *draws, int n, AbtDrawColumns *cols, int *moved);
/*
 * How many variates the next abt_sample_batch call of a sampler should get,
 * given the last call's: issue 22 found that under heavy inserts a whole
 * batch can be rejected, because the time between reading a page and its
 * children grows with the batch, and so do the chances that an insert
 * lands in between and makes a child heavier than the downlink read.  A
 * call that has more than half of its draws rejected so (moved, as
 * abt_sample_batch counts them) quarters the next one (down to single
 * descents, whose window is a page visit); one without such rejections
 * doubles it again, up to cap.  Other rejections (entries the snapshot
 * cannot see, overcounting downlinks, ends of ranges) do not depend on the
 * call's size and leave it alone: shrinking for them only multiplies the
 * descents (issue 21, old snapshots).
 */
static inline int
abt_sample_round(int round, int tried, int moved, int cap)
{
	if (moved * 2 > tried)
		return Max(round / 4, 1);
	if (moved == 0)
		return Min(round * 2, cap);
	return round;
}
extern uint64 abt_total_weight(Relation rel);
extern double abt_sample_total(Relation rel, AbtSampleRange *range, struct MvsReader *rd);
extern Relation abt_open_index_checked(Oid indexoid, LOCKMODE lockmode);
extern void abt_refuse_invalid(Relation index);
extern void abt_refuse_newer_build(Relation index, Snapshot snapshot);
extern Relation abt_open_am_index(Oid indexoid, LOCKMODE lockmode, const char *amname,
								  AclMode mode);
extern Relation abt_open_am_index_shell(Oid indexoid, LOCKMODE lockmode,
										const char *amname, AclMode mode);
extern List *abt_open_partition_indexes(Oid indexoid, LOCKMODE lockmode);
extern Relation abt_open_index_for_reading(Oid indexoid, LOCKMODE lockmode);
struct pg_prng_state;
extern void abt_seed_prng(struct pg_prng_state *prng, bool has_seed, float8 seed);

/* abtplanner.c */
extern bool abt_range_selectivity;
typedef bool (*AbtIndexTest) (Relation index, Relation heap, const void *arg, int *keyno);
extern Relation abt_find_index(Oid relid, AbtIndexTest test, const void *arg, int *keyno);
extern bool abt_sketch_ndistinct;
extern void abt_install_planner_hooks(void);

/* abtrange.c */
extern void abt_position_key(Relation rel, AbtKey *key, Datum value, bool isnull, Oid type,
							 bool nextkey);
extern void abt_range_bounds(Relation rel, Oid type, Datum lo, bool lo_null, bool lo_incl,
							 Datum hi, bool hi_null, bool hi_incl, AbtSampleRange *out);
extern uint64 abt_range_weight(Relation rel, Oid type, Datum lo, bool lo_null, bool lo_incl,
							   Datum hi, bool hi_null, bool hi_incl, struct MvsReader *rd);

/* abtxlog.c */
#define XLOG_ABT_INSERT_LEAF	0x10
#define XLOG_ABT_SET_WEIGHT		0x20
#define XLOG_ABT_PAGES			0x30
#define XLOG_ABT_VACUUM			0x40
#define XLOG_ABT_MARK_VALID		0x50
#define XLOG_PBT_FREE			0x60	/* pbtree: partitions freed (src/pbtree) */
#define XLOG_ABT_SPLIT			0x70
#define XLOG_ABT_PATH			0x80
#define XLOG_ABT_INSERT_VALID	0x90	/* INSERT_LEAF and MARK_VALID in one */
#define XLOG_ABT_VALID_BATCH	0xA0	/* MARK_VALID of several leaves */
#define XLOG_ABT_FREEZE			0xB0	/* a leaf's old xids frozen (abtfreeze.c) */

/* a SPLIT record's first block above the parent (abtxlog.c) */
#define ABT_SPLIT_FIRST_UP		4

/* why an XLOG_ABT_PAGES record was written */
#define ABT_PAGES_SPLIT			1	/* before the SPLIT record (issue 22) */
#define ABT_PAGES_NEWROOT		2
#define ABT_PAGES_FIRSTROOT		3
#define ABT_PAGES_PBT_DIRECTORY	4	/* pbtree: a partition directory change */
#define ABT_PAGES_SKETCH		5	/* a sketch rebuilt by VACUUM (abtsketchrebuild.c) */

extern void abt_xlog_insert_leaf(Buffer buf, OffsetNumber off, IndexTuple itup);
extern void abt_xlog_reserve(Relation rel, int nblocks, int ndatas);
extern void abt_xlog_set_weight(Buffer buf, OffsetNumber off, uint64 weight, Buffer *up, int nup,
								bool weighted);
extern void abt_xlog_pages(uint8 reason, Buffer *bufs, int nbufs);
extern void abt_xlog_split(Buffer parent, OffsetNumber off, Buffer left, OffsetNumber splitoff,
						   Buffer right, Buffer sibling, Buffer *up, int nup, bool weighted);
extern void abt_xlog_path(Buffer page, Buffer *path, int npath, bool weighted);
struct AbtSketchOp;
extern void abt_xlog_vacuum(Buffer leaf, OffsetNumber *offs, int noffs, bool image,
							Buffer *path, int npath, bool weighted,
							struct AbtSketchOp *sketch);
extern void abt_xlog_mark_valid(Buffer leaf, OffsetNumber off, IndexTuple newitup,
								TransactionId xid,
								Buffer *path, int npath, bool weighted,
								struct AbtSketchOp *sketch);
extern void abt_redo_insert_leaf(XLogReaderState *record);
extern void abt_redo_finish(XLogReaderState *record, Buffer buf);

/* abtfreeze.c: VACUUM freezes old leaf xids */
extern TransactionId abt_freeze_cutoff(void);
extern bool abt_leaf_needs_freeze(Page page, TransactionId cutoff);
extern int	abt_freeze_leaf(Relation rel, BlockNumber blkno, TransactionId cutoff,
							BufferAccessStrategy strategy);
extern void abt_redo_freeze(XLogReaderState *record);
extern void abt_desc_freeze(StringInfo buf, XLogReaderState *record);
extern void abt_redo_set_weight(XLogReaderState *record);
extern void abt_redo_pages(XLogReaderState *record);
extern void abt_redo_vacuum(XLogReaderState *record);
extern void abt_redo_split(XLogReaderState *record);
extern void abt_redo_path(XLogReaderState *record);
extern void abt_redo_mark_valid(XLogReaderState *record);
extern void abt_xlog_valid_batch(Buffer *bufs, int nleaves, int npages, OffsetNumber *offs,
								 int *noffs, uint8 *children, int *nchildren,
								 TransactionId xid, bool weighted,
								 struct AbtSketchOp *sketch);
extern void abt_redo_valid_batch(XLogReaderState *record);
extern void abt_desc_valid_batch(StringInfo buf, XLogReaderState *record);
extern void abt_desc_insert_leaf(StringInfo buf, XLogReaderState *record);
extern void abt_desc_set_weight(StringInfo buf, XLogReaderState *record);
extern void abt_desc_pages(StringInfo buf, XLogReaderState *record);
extern void abt_desc_vacuum(StringInfo buf, XLogReaderState *record);
extern void abt_desc_split(StringInfo buf, XLogReaderState *record);
extern void abt_desc_path(StringInfo buf, XLogReaderState *record);
extern void abt_desc_mark_valid(StringInfo buf, XLogReaderState *record);
extern void abt_mask(char *pagedata, BlockNumber blkno);

/*
 * Leaves keep in pd_prune_xid (unused by index pages otherwise) the newest
 * xid that marked one of their entries valid, so that a sampler whose
 * snapshot's xmin follows it can skip looking at each entry's xid
 * (src/mvstore/README).  Splits copy it to both halves; redo keeps it.
 */
static inline void
abt_leaf_note_xid(Page page, TransactionId xid)
{
	PageHeader	ph = (PageHeader) page;

	if (!TransactionIdIsNormal(ph->pd_prune_xid) ||
		TransactionIdPrecedes(ph->pd_prune_xid, xid))
		ph->pd_prune_xid = xid;
}

/*
 * abtsketch.c: a counting HLL sketch per key column (src/abtree/README,
 * "Sketches").  512 buckets meet issue 7's accuracy targets (src/hll/README);
 * the head page holds the chll header and overflow array, the chunk pages
 * whole bucket records, the set pages whole groups of the exact set.
 */
#include "hll/chll.h"

#define ABT_SKETCH_MIN_LOG2M	CHLL_MIN_LOG2M	/* reloption sketch_buckets: 16 */
#define ABT_SKETCH_DEFAULT_LOG2M 9	/* 512 */
#define ABT_SKETCH_MAX_LOG2M	11	/* 2,048 */
#define ABT_SKETCH_V3_LOG2M		9	/* every sketch before version 4 (metapage byte 0) */
#define ABT_SKETCH_MAX_COLS		4
#define ABT_SKETCH_KEY_SLOT		(ABT_SKETCH_MAX_COLS - 1)	/* of 2-3 column keys */
#define ABT_SKETCH_SPACE \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(AbtPageOpaqueData)))
#define ABT_SKETCH_PER_CHUNK	(ABT_SKETCH_SPACE / (4 + 32))	/* CHLL_BUCKET_SIZE */
/* overflow entries the head page holds after the header (CHLL_HEADER_SIZE) */
#define ABT_SKETCH_HEAD_ENTRIES	((ABT_SKETCH_SPACE - 24) / 8)	/* CHLL_ENTRY_SIZE */
#define ABT_SKETCH_NCHUNKS(log2m) \
	(((1 << (log2m)) + ABT_SKETCH_PER_CHUNK - 1) / ABT_SKETCH_PER_CHUNK)
#define ABT_SKETCH_GROUPS(log2m)	CHLL_SET_GROUPS(log2m)
#define ABT_SKETCH_GROUPS_PER_PAGE	(ABT_SKETCH_SPACE / CHLL_SET_GROUP_SIZE)
#define ABT_SKETCH_SETPAGES(log2m) \
	((ABT_SKETCH_GROUPS(log2m) + ABT_SKETCH_GROUPS_PER_PAGE - 1) / ABT_SKETCH_GROUPS_PER_PAGE)
#define ABT_SKETCH_PAGES(log2m) \
	(1 + ABT_SKETCH_NCHUNKS(log2m) + ABT_SKETCH_SETPAGES(log2m))
/* array bounds: the largest bucket count */
#define ABT_SKETCH_MAX_NCHUNKS	ABT_SKETCH_NCHUNKS(ABT_SKETCH_MAX_LOG2M)
#define ABT_SKETCH_MAX_GROUPS	ABT_SKETCH_GROUPS(ABT_SKETCH_MAX_LOG2M)
#define ABT_SKETCH_MAX_PAGES	ABT_SKETCH_PAGES(ABT_SKETCH_MAX_LOG2M)

/*
 * Where the pages of one sketch are, for the index's bucket count: the head
 * page (chll header and overflow array), chunk pages 1..nchunks of whole
 * bucket records, then the set pages from first_setpage on.
 */
typedef struct AbtSketchLayout
{
	int			log2m;
	int			nchunks;
	int			groups;			/* groups of the exact set */
	int			setpages;
	int			first_setpage;
	int			pages;
	int			capacity;		/* overflow entries: one per bucket if they fit */
} AbtSketchLayout;

static inline void
abt_sketch_layout(int log2m, AbtSketchLayout *lay)
{
	lay->log2m = log2m;
	lay->nchunks = ABT_SKETCH_NCHUNKS(log2m);
	lay->groups = ABT_SKETCH_GROUPS(log2m);
	lay->setpages = ABT_SKETCH_SETPAGES(log2m);
	lay->first_setpage = 1 + lay->nchunks;
	lay->pages = ABT_SKETCH_PAGES(log2m);
	lay->capacity = Min(chll_overflow_capacity(log2m), ABT_SKETCH_HEAD_ENTRIES);
}

/* the sketch bytes of a sketch page */
static inline uint8 *
abt_sketch_data(Page page)
{
	return (uint8 *) PageGetContents(page);
}

/* the set groups on set page s: how many, and the first's number */
static inline int
abt_sketch_set_groups(const AbtSketchLayout *lay, int s, int *first)
{
	*first = s * ABT_SKETCH_GROUPS_PER_PAGE;
	return Min(ABT_SKETCH_GROUPS_PER_PAGE, lay->groups - *first);
}

typedef struct AbtSketchHashes
{
	uint64		hash[ABT_SKETCH_MAX_COLS];
	bool		present[ABT_SKETCH_MAX_COLS];	/* false: NULL or no sketch */
} AbtSketchHashes;

typedef struct AbtSketchCol
{
	int			k;				/* key column */
	Buffer		bufs[ABT_SKETCH_MAX_PAGES];	/* head, chunks, set pages; or InvalidBuffer */
	ChllView	view;
	bool		changed;
	uint8		dirty[(1 << ABT_SKETCH_MAX_LOG2M) / 8];	/* changed buckets */
	uint8		hdr_before[24];	/* CHLL_HEADER_SIZE: the header at lock time */
	int			snap_bucket;	/* the bucket saved in bucket_before, or -1 */
	uint8		bucket_before[4 + 32];	/* CHLL_BUCKET_SIZE */
	uint8		set_dirty[(ABT_SKETCH_MAX_GROUPS + 7) / 8];	/* changed set groups */
	int			snap_group;		/* the group saved in group_before, or -1 */
	/* abt_sketch_lock_batch: each chunk and set page's bytes at lock time */
	uint8	   *before[ABT_SKETCH_MAX_PAGES];
	uint8	   *runs[ABT_SKETCH_MAX_PAGES]; /* and room for its WAL runs */
	/* from here on written before read (not cleared per operation) */
	uint16		idx[ABT_SKETCH_MAX_NCHUNKS][ABT_SKETCH_PER_CHUNK + 1];	/* count, then indexes */
	uint8		group_before[CHLL_SET_GROUP_SIZE];	/* if snap_group >= 0 */
	/* WAL data (abt_sketch_xlog_register): runs built here */
	uint8		head_runs[1 + 2 * 24 + 4 + 4];
	uint8		bucket_runs[1 + 2 * (4 + 32) + 4];
	uint16		full_runs[1 << ABT_SKETCH_MAX_LOG2M][2];	/* (offset, length) */
	uint8		group_runs[1 + 2 * CHLL_SET_GROUP_SIZE + 4];
	uint16		group_full_runs[ABT_SKETCH_MAX_GROUPS][2];
} AbtSketchCol;

typedef struct AbtSketchOp	/* also declared above, for abtxlog.c */
{
	Relation	rel;
	AbtSketchLayout lay;		/* the index's, the same for every column */
	int			ncols;
	int			problems;		/* removals of values the sketch did not hold */
	AbtSketchCol cols[ABT_SKETCH_MAX_COLS];
} AbtSketchOp;

extern uint16 abt_sketch_columns(Relation index);
extern void abt_sketch_init(uint8 *sk, int log2m);
extern BlockNumber abt_sketch_first_page(AbtIndexInfo *info, int k);
extern void abt_sketch_fill_page(Page page, const AbtSketchLayout *lay, int k, int chunk,
								 const uint8 *sk);
extern Buffer abt_sketch_lock_page(Relation rel, BlockNumber blkno, int mode);
extern AbtIndexInfo *abt_sketch_info(Relation rel);
extern bool abt_sketch_has_column(Relation rel, int k);
extern bool abt_sketch_has_key(Relation rel);
extern void abt_sketch_hash_tuple(Relation rel, IndexTuple itup, AbtSketchHashes *h);
typedef struct AbtSketchBuild
{
	uint8	   *sk[ABT_SKETCH_MAX_COLS];	/* flat sketches, NULL: none */
	FmgrInfo   *hash[ABT_SKETCH_MAX_COLS];
	ChllView	view[ABT_SKETCH_MAX_COLS];	/* of each sketch, made once */
} AbtSketchBuild;

extern void abt_sketch_write_pages(Relation index, ForkNumber fork, AbtSketchBuild *sb,
								   AbtMetaPageData *meta);
extern AbtSketchBuild *abt_sketch_build_begin(Relation index);
extern void abt_sketch_build_add(Relation index, AbtSketchBuild *sb, Datum *values,
								 bool *isnull);
extern void abt_sketch_lock(AbtSketchOp *op, Relation rel, const AbtSketchHashes *one);
extern void abt_sketch_lock_narrow(AbtSketchOp *op, Relation rel, const AbtSketchHashes *one);
extern void abt_sketch_lock_batch(AbtSketchOp *op, Relation rel);
extern int	abt_sketch_batch_blocks(Relation rel);
extern int	abt_sketch_held_blocks(const AbtSketchOp *op);
extern int	abt_sketch_add_max_blocks(Relation rel);
extern int	abt_sketch_narrow_max_blocks(Relation rel);
extern void abt_sketch_none(AbtSketchOp *op, Relation rel);
extern void abt_sketch_apply(AbtSketchOp *op, const AbtSketchHashes *h, bool add);
extern void abt_sketch_mark_dirty(AbtSketchOp *op);
extern int	abt_sketch_max_blocks(Relation rel);
extern int	abt_sketch_max_rdatas(Relation rel);
extern bool abt_sketch_set_page_changed(const AbtSketchLayout *lay, AbtSketchCol *c, int s);
extern int	abt_sketch_xlog_register(AbtSketchOp *op, int block_id);
extern void abt_sketch_set_lsn(AbtSketchOp *op, XLogRecPtr lsn);
extern void abt_sketch_release(AbtSketchOp *op);
extern void abt_sketch_redo(XLogReaderState *record, int first_block_id, Buffer *bufs);
extern uint8 *abt_sketch_copy(Relation rel, int k);
extern bool abt_column_sketch(Oid relid, AttrNumber attnum, double *ndistinct,
							  uint64 *nonnull);
extern bool abt_column_sketch_ndistinct(Oid relid, AttrNumber attnum, double *ndistinct);
extern bool abt_key_sketch_ndistinct(Oid relid, const AttrNumber *attnums, int ncols,
									 double *ndistinct);
extern Buffer abt_new_buffer_fork(Relation rel, ForkNumber fork);

/* abtsketchrebuild.c: VACUUM gives a small column's sketch its set back */
extern bool abt_sketch_rebuild;
extern int	abt_sketch_rebuild_small(Relation rel, BufferAccessStrategy strategy);
extern void abt_sketch_overwrite(Relation rel, int k, const uint8 *sk);

/* abtposting.c: posting tuples */
extern IndexTuple abt_form_posting(Relation rel, IndexTuple base, BlockNumber place,
								   ItemPointer tids, int n);
extern IndexTuple abt_posting_without(Relation rel, IndexTuple itup, const bool *dead,
									  int *nleft);
extern Size abt_leaf_key_size(Relation rel, IndexTuple itup);
extern bool abt_leaf_same_columns(IndexTuple a, IndexTuple b);
typedef struct AbtDedup AbtDedup;
extern AbtDedup *abt_dedup_begin(Relation rel);
extern void abt_dedup_add(AbtDedup *d, IndexTuple leaf, bool owned, IndexTuple prev);
extern IndexTuple abt_dedup_next(AbtDedup *d, bool *owned);
extern void abt_dedup_finish(AbtDedup *d, IndexTuple prev);
extern bool abt_fold_leaf(Relation rel, Relation heaprel, Buffer buf, Size need);

/* abtpage.c: leaf validity */
extern void abt_set_leaf_xmin(IndexTuple itup, TransactionId xid);
extern void abt_leaf_update_invalid_flag(Page page);

/* abtverify.c: a pbtree partition's tree */
typedef void (*AbtVerifyLeafCallback) (void *arg, IndexTuple itup);
extern void abt_verify_partition(Relation rel, BlockNumber head, uint32 partno, bool exact,
								 AbtVerifyLeafCallback cb, void *arg);

/*
 * abtpage.c: an access method built on the abtree engine that allocates its
 * own pages (pbtree, which frees whole partitions and reuses their pages)
 * plugs its allocator in; src/init.c wires it.  abtree calls it through
 * this and knows nothing else of it.
 */
typedef struct AbtPageAllocator
{
	bool		(*owns) (Relation rel); /* is rel an index of that method? */
	Buffer		(*new_buffer) (Relation rel);	/* a new page, locked exclusively */
} AbtPageAllocator;
extern void abt_register_page_allocator(const AbtPageAllocator *allocator);

/*
 * Called from amvacuumcleanup for each abtree index of a table: by ANALYZE
 * (from SQL or autovacuum; not VACUUM ANALYZE) after the table's
 * statistics were written, with analyze_only; by VACUUM at the end of its
 * cleanup, without.  Wired in src/init.c (src/stats refreshes statistics
 * objects there).
 */
typedef void (*AbtAnalyzeHook) (Relation index, bool analyze_only);
extern void abt_register_analyze_hook(AbtAnalyzeHook hook);
extern void abt_fill_amroutine(IndexAmRoutine *amroutine);

#endif							/* ABTREE_H */
