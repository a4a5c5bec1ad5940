/*-------------------------------------------------------------------------
 *
 * swr.h
 *	  TABLESAMPLE swr(n): n independent weighted draws with replacement
 *	  through a table's abtree index.
 *
 * See src/swr/README for the semantics, why a custom scan draws the sample,
 * and the limits.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SWR_H
#define SWR_H

#include "abtree_ext.h"

#include "common/pg_prng.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"

/*
 * Largest n: a guard against typos and runaway queries (a billion draws
 * take about an hour), not a memory limit, since draws are made in batches.
 */
#define SWR_MAX_N				1000000000

/* How swr(n) treats the query's WHERE clause: abtree.swr_where. */
typedef enum SwrWhere
{
	SWR_WHERE_REDRAW,			/* n rows that satisfy it: failures redrawn */
	SWR_WHERE_STANDARD,			/* SQL standard: n draws, then WHERE filters */
	SWR_WHERE_ATTEMPTS			/* a Citus shard's part (swr_shard): a Poisson
								 * number of descents, every failure a draw
								 * used up; no key range */
} SwrWhere;

extern int	abt_swr_where;
extern int	abt_swr_batch_size;

/* Positions in the custom_private list of a "Custom Scan (swr)" plan. */
#define SWR_PRIV_WHERE			0	/* Integer: SwrWhere */
#define SWR_PRIV_HAS_SEED		1	/* Boolean: REPEATABLE's seed follows n */
#define SWR_PRIV_TABLES			2	/* OID list: the tables to draw from */
#define SWR_PRIV_RANGE_ATTNOS	3	/* int list: range candidates' columns */
#define SWR_PRIV_RANGE_OPNOS	4	/* OID list: their operators */
#define SWR_PRIV_RANGE_COLLS	5	/* OID list: their collations */
#define SWR_PRIV_SHARD			6	/* Boolean: swr_shard(rate), a Citus
									 * shard's part of a distributed swr */

/* Counts of draws: of a scan, of a node's loops, of an index's scans. */
typedef struct SwrCounts
{
	int64		draws;			/* descents made */
	int64		rows;			/* rows returned */
	int64		tree_rejects;	/* descents the index rejected */
	int64		invisible;		/* draws of rows the snapshot cannot see */
	int64		filtered;		/* draws of rows WHERE rejected */
} SwrCounts;

struct CustomScanMethods;
extern const struct CustomScanMethods swr_scan_methods;

/* swr_index.c */
extern bool swr_parse_index_names(const char *value, List **names);
extern Relation swr_open_index(Relation heaprel);
extern Relation swr_open_unweighted_index(Relation heaprel);
extern const char *swr_weight_column(Relation index);
extern char *swr_describe(Relation index);

/* swr_plan.c */
extern void swr_install_planner_hook(void);

/* swr_agg_check.c */
extern void swr_install_executor_hook(void);

/* swr_citus.c */
extern void swr_citus_install_hook(void);
extern bool swr_citus_needs_rounds(Oid relid);
extern uint32 swr_shard_seed(Relation scanrel, uint32 seed);
extern double swr_shard_rate(Datum rate);
extern int64 swr_poisson(pg_prng_state *prng, double mean);

/* swr_stats.c */
extern Size swr_stats_shmem_size(void);
extern void swr_stats_shmem_request(void);
extern void swr_stats_shmem_startup(void);
extern void swr_stats_add(Oid indexid, const SwrCounts *c);

/* swr_tsm.c */
struct TableSampleClause;
extern bool swr_is_swr_tablesample(struct TableSampleClause *tsc);
extern bool swr_is_shard_tablesample(struct TableSampleClause *tsc);
extern int64 swr_sample_size(Datum param);

#endif							/* SWR_H */
