/*-------------------------------------------------------------------------
 *
 * abtree_ext.h
 *	  Extension-wide declarations: version, WAL resource manager, GUCs,
 *	  shared memory and the shared_preload_libraries requirement.
 *
 * Every component (abtree/, mvstore/, swr/, hll/, pbtree/) includes this
 * header; nothing here belongs to one component alone.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ABTREE_EXT_H
#define ABTREE_EXT_H

#include "postgres.h"

#include "fmgr.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "port/atomics.h"
#include "utils/relcache.h"

#if PG_VERSION_NUM < 150000
#error "abtree needs PostgreSQL 15 or later (custom WAL resource managers, shmem_request_hook)"
#endif

#define ABTREE_VERSION_STRING	"0.2.0"

/*
 * Our custom WAL resource manager.
 *
 * IDs 128..255 are for extensions; 128 (RM_EXPERIMENTAL_ID) is meant for
 * development only.  The registry on the PostgreSQL wiki
 * (wiki.postgresql.org/wiki/CustomWALResourceManagers) hands IDs out
 * upwards from 129 (OrioleDB 129, EnterpriseDB 130-133 and 139, Neon 134,
 * PostgresPro 135-136, pg_analytics 137, PGroonga 138, ...) and has one far
 * entry, 241 for Citus Columnar.  We take 197: well clear of the sequential
 * block and of the round numbers other projects like to pick.  Two
 * extensions with the same ID cannot be preloaded together: the second
 * RegisterCustomRmgr() call fails at server start, which is loud and safe.
 * The ID is part of the WAL format: never change it once WAL exists.
 */
#define ABTREE_RMGR_ID			197
#define ABTREE_RMGR_NAME		"abtree"

/*
 * Record types, in the high nibble of xl_info (XLR_RMGR_INFO_MASK leaves us
 * sixteen).  Each component owns a range; see src/README.
 */
#define XLOG_ABT_PROBE			0x00	/* diagnostic: proves replay works */

/* init.c */
extern bool abt_preloaded;
extern void abt_require_preload(void);
extern void abt_refuse_under_rls(Oid heapoid);

/* citus.c: Citus tables, seen without Citus */
extern char abt_citus_partmethod(Oid relid);
extern void abt_refuse_citus_shell(Relation index, Oid heapoid);
extern Datum abt_citus_fold_over_shards(Relation index, Oid heapoid, const char *call,
										Oid resulttype, PGFunction fold, bool *isnull);

/* abtree/abthandler.c */
extern void abt_init_reloptions(void);

/* guc.c */
extern bool abt_debug_redo;
extern const char *const abt_guc_names[];
extern char *abt_swr_index;
extern int	abt_weight_protocol;
extern int	abt_debug_pass_pause;
extern int	abt_debug_pass_pause_level;
extern int	abt_debug_pass_error_level;
extern bool abt_debug_path_record;
extern bool abt_debug_stale_copies;
extern bool abt_debug_defer_draws;
extern int	abt_debug_sample_pause;
extern int	abt_debug_repair_pause;
extern int	abt_debug_build_merge_runs;
extern void abt_define_gucs(void);

/* abtree.weight_protocol (src/abtree/README, "Weight maintenance") */
typedef enum AbtWeightProtocol
{
	ABT_PROTOCOL_SAFE_PAGE,		/* the paper's: share locks, atomic adds */
	ABT_PROTOCOL_PAGE_EXCLUSIVE,	/* the same pass, exclusive locks */
	ABT_PROTOCOL_PATH_EXCLUSIVE,	/* the baseline: whole path locked */
	ABT_PROTOCOL_BATCHED		/* path_exclusive, a record's worth of
								 * entries at once (abtbatch.c) */
} AbtWeightProtocol;

/* shmem.c: state shared by all backends, reset at every (crash) restart */
typedef struct AbtSharedState
{
	pg_atomic_uint64 wal_probes_written;	/* since this postmaster started */
	pg_atomic_uint64 wal_probes_replayed;	/* by the startup process */

	/*
	 * What the weight passes of abtree inserts ran into (paper 000, Figure
	 * 6): nothing changed, changes that left the page safe, the child split
	 * and our key moved right, the page split and undid the add above it,
	 * an add redone above that only may have been undone, a restart from a
	 * new root.
	 */
	pg_atomic_uint64 pass_fast;
	pg_atomic_uint64 pass_still_safe;
	pg_atomic_uint64 pass_child_moved;
	pg_atomic_uint64 pass_reset;
	pg_atomic_uint64 pass_cautious_readd;
	pg_atomic_uint64 pass_restart;
	/* PATH records written before a first hint image since a checkpoint */
	pg_atomic_uint64 pass_path_logged;
	/* inserts made valid at once, with one INSERT_VALID record */
	pg_atomic_uint64 insert_one_record;
	/* weight_protocol = batched: VALID_BATCH records and the entries in them */
	pg_atomic_uint64 batch_records;
	pg_atomic_uint64 batch_entries;
	/* groups locked again: room was left for a lost set that came back */
	pg_atomic_uint64 batch_retries;
	/* leaf entries whose xid VACUUM froze (abtfreeze.c) */
	pg_atomic_uint64 entries_frozen;
	/* draws' pages held exclusively when reached, visited later instead */
	pg_atomic_uint64 draw_pages_deferred;
	/* full leaves folded instead of split; leaf splits where a value grows */
	pg_atomic_uint64 leaf_folds;
	pg_atomic_uint64 split_value_end;
	pg_atomic_uint64 split_single_value;

	/*
	 * Set by the end of WAL replay (rm_cleanup) on a server that replayed
	 * WAL and now accepts writes: every abtree index gets the one-time
	 * check of abt_recovery_check() before its first draw or insert in each
	 * backend.
	 * recovery_raised counts the downlinks that check raised.
	 */
	pg_atomic_uint32 recovered;
	pg_atomic_uint64 recovery_raised;

	/* TABLESAMPLE swr, over all scans: rows returned and draws redrawn */
	pg_atomic_uint64 swr_scans;
	pg_atomic_uint64 swr_rows;
	pg_atomic_uint64 swr_tree_rejects;	/* the descent overshot */
	pg_atomic_uint64 swr_invisible; /* the row was invisible to the scan */
} AbtSharedState;

extern AbtSharedState *abt_shared;

/* one more of an abtree_status() counter of abt_shared */
#define abt_count(counter) pg_atomic_fetch_add_u64(&abt_shared->counter, 1)
extern void abt_shmem_install_hooks(void);
extern Size abt_shmem_size(void);

/* xlog.c */
extern void abt_register_rmgr(void);
extern XLogRecPtr abt_log_probe(const char *message, int len);

#endif							/* ABTREE_EXT_H */
