/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  The abtree.* configuration parameters.
 *
 * All parameters live under the "abtree." prefix, which is reserved: a
 * misspelt abtree.something in postgresql.conf draws a WARNING, and SET of
 * an unknown abtree.something fails.  Components add their parameters here
 * so that SHOW ALL and the documentation list them in one place.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree_ext.h"

#include "abtree/abtree.h"
#include "pbtree/pbtree.h"
#include "mvstore/mvstore.h"
#include "swr/swr.h"
#include "utils/guc.h"

/* Every parameter defined below, for abtree_status(); the guc test checks it. */
const char *const abt_guc_names[] = {
	"abtree.debug_build_merge_runs",
	"abtree.debug_defer_draws",
	"abtree.debug_pass_error_level",
	"abtree.debug_pass_pause",
	"abtree.debug_pass_pause_level",
	"abtree.debug_path_record",
	"abtree.debug_stale_copies",
	"abtree.debug_redo",
	"abtree.debug_repair_pause",
	"abtree.debug_sample_pause",
	"abtree.draw_stored_share",
	"abtree.mvstore",
	"abtree.mvstore_gc_interval",
	"abtree.mvstore_size",
	"abtree.pbtree_buffer_budget",
	"abtree.pbtree_filter_bits",
	"abtree.pbtree_merge_threshold",
	"abtree.range_selectivity",
	"abtree.sketch_ndistinct",
	"abtree.sketch_rebuild",
	"abtree.swr_batch_size",
	"abtree.swr_index",
	"abtree.swr_where",
	"abtree.weight_protocol",
	NULL
};

/* Log every abtree WAL record replayed, with its description. */
bool		abt_debug_redo = false;

/* The abtree indexes TABLESAMPLE swr draws through; '' = choose (src/swr). */
char	   *abt_swr_index = NULL;

/* How TABLESAMPLE swr treats the WHERE clause (src/swr/README). */
int			abt_swr_where = SWR_WHERE_REDRAW;
int			abt_swr_batch_size = 65536;

static const struct config_enum_entry abt_swr_where_options[] = {
	{"redraw", SWR_WHERE_REDRAW, false},
	{"standard", SWR_WHERE_STANDARD, false},
	{NULL, 0, false}
};

/* How inserts maintain downlink weights (src/abtree/README). */
int			abt_weight_protocol = ABT_PROTOCOL_BATCHED;

static const struct config_enum_entry abt_weight_protocol_options[] = {
	{"safe_page", ABT_PROTOCOL_SAFE_PAGE, false},
	{"page_exclusive", ABT_PROTOCOL_PAGE_EXCLUSIVE, false},
	{"path_exclusive", ABT_PROTOCOL_PATH_EXCLUSIVE, false},
	{"batched", ABT_PROTOCOL_BATCHED, false},
	{NULL, 0, false}
};

/*
 * Testing aid: a weight pass waits for this advisory lock key (shared
 * mode, as pg_advisory_lock_shared(bigint)) between releasing a page and
 * locking its child, when the child is on the given level (-1: any).
 */
int			abt_debug_pass_pause = 0;
int			abt_debug_pass_pause_level = -1;

/*
 * Testing aid: an insert's weight pass raises an ERROR right after its add
 * on the downlink to a page of this level (regress abtree_repair: an
 * insert that fails half way).
 */
int			abt_debug_pass_error_level = -1;

/*
 * Testing aid: off makes weight passes skip the PATH record before a
 * page's first hint image after a checkpoint (abtpass.c), recreating the
 * states that crash recovery must repair (TAP 024).  Never off for real.
 */
bool		abt_debug_path_record = true;

/*
 * Testing aid: writers' descents copy every internal page they lock and
 * route through a stale copy as if the page's lock were busy (abtstack.c),
 * so that a test reaches that path without timing.
 */
bool		abt_debug_stale_copies = false;
bool		abt_debug_defer_draws = false;

/* Testing aid: a draw waits for this key between a page and its child. */
int			abt_debug_sample_pause = 0;
int			abt_debug_repair_pause = 0;
int			abt_debug_build_merge_runs = 64;

/* Only the syntax: names are looked up when a query samples. */
static bool
abt_check_swr_index(char **newval, void **extra, GucSource source)
{
	if (swr_parse_index_names(*newval, NULL))
		return true;
	GUC_check_errdetail("List index names separated by commas, optionally schema-qualified, with SQL quoting: 'orders_w_idx, s.\"Items_idx\"'.");
	return false;
}

/* -1 (automatic) or a share from 0 to 1 */
static bool
abt_check_draw_stored_share(double *newval, void **extra, GucSource source)
{
	if (*newval >= 0 || *newval == -1)
		return true;
	GUC_check_errdetail("Use a share from 0 to 1, or -1 for the measured one for this server version.");
	return false;
}

void
abt_define_gucs(void)
{
	/*
	 * PGC_SIGHUP, not PGC_SUSET: the startup process does the replaying and
	 * only sees postgresql.conf, so a per-session value would be misleading.
	 */
	DefineCustomBoolVariable("abtree.debug_redo",
							 "Logs each abtree WAL record replayed during recovery or on a standby.",
							 "The LOG line gives the record type, its LSN and its description.",
							 &abt_debug_redo,
							 false,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	/*
	 * Per session or transaction: a query sampling several tables lists one
	 * index per table.  GUC_LIST_INPUT lets SET take a, b unquoted (an
	 * extension may not ask for GUC_LIST_QUOTE, so mixed-case names need
	 * '"Idx"' quoting inside the string).
	 */
	DefineCustomStringVariable("abtree.swr_index",
							   "Names the abtree indexes that TABLESAMPLE swr draws through.",
							   "Index names separated by commas; a sampled table uses the listed index on it, or the partition on it of a listed partitioned index. Empty: choose automatically.",
							   &abt_swr_index,
							   "",
							   PGC_USERSET,
							   GUC_LIST_INPUT,
							   abt_check_swr_index, NULL, NULL);

	/*
	 * Read when a query is planned: a prepared statement keeps the mode it
	 * was planned with, and EXPLAIN shows it.
	 */
	DefineCustomEnumVariable("abtree.swr_where",
							 "How TABLESAMPLE swr(n) treats the query's WHERE clause.",
							 "redraw: n rows that satisfy it, drawing only inside a range on the index's first column and drawing again for rows that fail the rest (paper 000). standard: n draws from the whole table, which WHERE then filters (the SQL standard's sample-then-filter rule).",
							 &abt_swr_where,
							 SWR_WHERE_REDRAW,
							 abt_swr_where_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	/*
	 * USERSET, like work_mem: it trades only the session's own query's
	 * memory and speed (1 is the one-draw-at-a-time baseline of the
	 * benchmarks); what a sample is does not depend on it.
	 */
	DefineCustomIntVariable("abtree.swr_batch_size",
							"Most draws TABLESAMPLE swr makes in one batch.",
							"A batch descends the index once for all its draws and fetches their rows in heap block order; it keeps a copy of each row, so it is also limited to what fits work_mem. 1: one draw, one descent and one fetch at a time.",
							&abt_swr_batch_size,
							65536, 1, 65536,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	/*
	 * The four protocols take their locks in the same order (bottom-up,
	 * left to right), so sessions may mix them.  batched is the default:
	 * measured the fastest with the least WAL (src/abtree/README, "Batched
	 * validation").  SUSET: path_exclusive
	 * makes every insert of the session hold the root exclusively, which
	 * stalls every other writer and sampler of the index; it is a benchmark
	 * switch, not a user's choice (GRANT SET ON PARAMETER delegates it).
	 */
	DefineCustomEnumVariable("abtree.weight_protocol",
							 "How inserts into abtree indexes add their weight to the downlinks above them.",
							 "safe_page: share locks and atomic adds (paper 000, Algorithm 3); page_exclusive: the same pass with exclusive locks; path_exclusive: the whole root-to-leaf path locked exclusively; batched: entries wait in the inserting backend and become valid a WAL record's worth at a time, at the latest before the commit.",
							 &abt_weight_protocol,
							 ABT_PROTOCOL_BATCHED,
							 abt_weight_protocol_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	/*
	 * USERSET: either way gives the snapshot's distribution exactly
	 * (src/abtree/README, "Draws under an old snapshot"); only the cost
	 * depends on it.  -1 rather than a number as the default: where the
	 * two cost the same depends on the server version (abtdraw.c).
	 */
	DefineCustomRealVariable("abtree.draw_stored_share",
							 "Smallest share of an abtree index's stored weight a snapshot must see for draws to go by the stored weights.",
							 "Under a snapshot that cannot see some entries, draws either go by the stored weights and reject the entries it cannot see, or weigh every page as it sees it, reading leaves entry by entry. The first while the snapshot sees at least this share of the weight, the second below. -1: where the two were measured to cost the same, 1/8 on PostgreSQL 15 and 16, 1/4 from 17 on; 0: always the first; 1: the second whenever the snapshot misses an entry.",
							 &abt_draw_stored_share,
							 -1.0, -1.0, 1.0,
							 PGC_USERSET,
							 0,
							 abt_check_draw_stored_share, NULL, NULL);

	DefineCustomBoolVariable("abtree.range_selectivity",
							 "Gives the planner current statistics of columns that lead an abtree index.",
							 "The histogram, the fraction of NULLs and the frequencies of the most common values are recounted from the index's weights at planning time; other statistics stay ANALYZE's. Only for columns ANALYZE has seen and unweighted, non-partial abtree indexes.",
							 &abt_range_selectivity,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("abtree.sketch_ndistinct",
							 "Gives the planner the number of distinct values of columns from the sketches abtree indexes keep.",
							 "For a column that is a key column of a valid, non-partial abtree index with a sketch (reloption sketch, on by default), n_distinct comes from the sketch, which inserts and VACUUM keep current; also for columns ANALYZE has not seen. See the view abtree_column_ndistinct.",
							 &abt_sketch_ndistinct,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("abtree.sketch_rebuild",
							 "Lets VACUUM rebuild an abtree sketch that gave its exact list of values up once the column is small again.",
							 "When a sketch's exact set was given up (more distinct values than it holds) and its counters now say the column has few enough values for one, VACUUM rebuilds the sketch from the index's entries if it can lock the table against writers at once (ShareLock, not waited for); writers that come meanwhile wait for the scan.",
							 &abt_sketch_rebuild,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.debug_pass_pause",
							"Testing aid: makes abtree weight passes wait for this advisory lock key.",
							"0 turns it off. The pass waits, holding no buffer lock, for a shared lock on the key (as pg_advisory_lock_shared) before it locks a child page; a test holds the key exclusively to stop it there.",
							&abt_debug_pass_pause,
							0, 0, INT_MAX,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.debug_sample_pause",
							"Testing aid: makes abtree draws wait for this advisory lock key.",
							"0 turns it off. A draw waits, holding no buffer lock, for a shared lock on the key (as pg_advisory_lock_shared) after it read a downlink's weight and before it locks the child page; a test holds the key exclusively to stop it there.",
							&abt_debug_sample_pause,
							0, 0, INT_MAX,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.debug_repair_pause",
							"Testing aid: makes VACUUM wait, before it repairs the downlink weights of each tree level, for this advisory lock key plus the level.",
							"0 turns it off. Before VACUUM compares the downlinks of the pages of level L with their children, it waits, holding no buffer lock, for a shared lock on the key debug_repair_pause + L (as pg_advisory_lock_shared); a test holds such a key exclusively to stop VACUUM between two levels.",
							&abt_debug_repair_pause,
							0, 0, INT_MAX - 64,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.debug_build_merge_runs",
							"Testing aid: the most sorted runs a bulk build merges at once before it merges those on disk into one.",
							"A build writes a run for each maintenance_work_mem of rows; tests lower this to make a small table take the path of a large one.",
							&abt_debug_build_merge_runs,
							64, 2, 1024,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.debug_pass_error_level",
							"Testing aid: an insert's weight pass fails right after its add on the downlink to a page of this tree level.",
							"-1: never.",
							&abt_debug_pass_error_level,
							-1, -1, 64,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("abtree.debug_defer_draws",
							 "Testing aid: batched draws visit pages as if writers held them.",
							 "On makes each level of a batch of draws put off every other page (up to as many as it would put off while writers hold them exclusively) until its other pages are done.",
							 &abt_debug_defer_draws,
							 false,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("abtree.debug_stale_copies",
							 "Testing aid: writers' descents route through stale copies of internal pages.",
							 "On makes an abtree writer's descent copy every internal page it locks, and route through its copy of a page that changed since (as it does when the page's lock is busy) instead of locking it again.",
							 &abt_debug_stale_copies,
							 false,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("abtree.debug_path_record",
							 "Testing aid: off lets a standby see a downlink lighter than its child.",
							 "Only for tests of crash recovery's repair: off makes abtree weight passes skip the record that logs a page's path before its first hint image after a checkpoint.",
							 &abt_debug_path_record,
							 true,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.debug_pass_pause_level",
							"Testing aid: the tree level of the child page before which abtree.debug_pass_pause waits.",
							"-1: before every child page.",
							&abt_debug_pass_pause_level,
							-1, -1, 64,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	/*
	 * Correctness never depends on it (src/mvstore/README): a session that
	 * does not subtract only rejects more itself.  But a session that does
	 * not record makes every other session's old-snapshot samplers reject
	 * more, so SUSET: it is the administrator's (and the benchmarks') switch.
	 */
	DefineCustomBoolVariable("abtree.mvstore",
							 "Keeps and uses the multi-version weight store of abtree indexes.",
							 "Inserts record the weight they add to each downlink by transaction, and samplers subtract what their snapshot cannot see, so that long-running samplers rarely draw rows they must reject.",
							 &mvs_enabled,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.mvstore_size",
							"Shared memory for the abtree weight store.",
							"0 disables the store and its collector. An eighth holds one entry per downlink with versions, the rest the versions (24 bytes each).",
							&mvs_size_kb,
							65536, 0, 64 * 1024 * 1024,
							PGC_POSTMASTER,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.mvstore_gc_interval",
							"Time between runs of the abtree weight store's collector.",
							"Each run drops the versions of transactions that every snapshot sees as finished.",
							&mvs_gc_interval_ms,
							1000, 10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	/*
	 * pbtree (src/pbtree/README).  SUSET, all three: the budget is shared by
	 * every pbtree index of the server (a session with a small budget seals
	 * other users' partitions), the merge threshold starts background
	 * merges of the indexes the session writes to, and the filter size
	 * shapes partitions everybody reads.  Tests and benchmarks set them per
	 * session as superusers; GRANT SET ON PARAMETER delegates them.
	 */
	DefineCustomIntVariable("abtree.pbtree_buffer_budget",
							"Leaf pages the mutable partitions of all pbtree indexes may hold together before the largest is sealed.",
							"Keep it well below shared_buffers: the mutable partitions are meant to stay in the buffer pool.",
							&pbt_buffer_budget,
							4096, 2, INT_MAX / 2,
							PGC_SUSET,
							GUC_UNIT_BLOCKS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.pbtree_merge_threshold",
							"Sealed partitions of a pbtree index that start a background merge.",
							"0 turns automatic merges off; pbtree_merge() merges on demand.",
							&pbt_merge_threshold,
							8, 0, PBT_MAX_PARTITIONS,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("abtree.pbtree_filter_bits",
							"Bits per entry in the Bloom filters of sealed pbtree partitions.",
							"0: no filters. 10 bits give about 1% false positives. Applies to partitions sealed or merged afterwards.",
							&pbt_filter_bits,
							10, 0, 64,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("abtree");
}
