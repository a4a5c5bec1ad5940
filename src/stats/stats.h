/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  Statistics built from the layers below: distinct counts estimated
 *	  from TABLESAMPLE swr samples and the indexes' sketches, written where
 *	  the planner reads them (src/stats/README).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ABT_STATS_H
#define ABT_STATS_H

#include "hll/chll_ndistinct.h"

#include "access/htup.h"

/* chll_ndsample.c: sampling and encoding through SPI */
extern ChllNdCodes *chll_nd_sample(Oid extnsp, Relation rel,
								   const AttrNumber *attnums, int ncols,
								   int nrows, bool has_seed, double seed, double *table_rows);
/* chll_extstats.c, chll_refill.c: statistics objects */
extern int32 chll_stat_store(Oid statoid, int nrows, bool has_seed, double seed,
							 bool freeze, Oid extnsp);
extern bool chll_stat_is_owner(Oid statoid);
extern bool chll_stat_has_kind(HeapTuple tup, char kind);
extern void chll_install_utility_hook(void);
extern void chll_refresh_after_autoanalyze(Relation index, bool analyze_only);

/*
 * The distinct count of a column from the sketch an abtree index keeps of
 * it; false if there is none (src/abtree/abtsketch.c).
 */
extern bool abt_column_sketch_ndistinct(Oid relid, AttrNumber attnum, double *ndistinct);

/*
 * The distinct count of a combination of two or three columns from the key
 * sketch of an abtree index on exactly those columns; false if there is
 * none (src/abtree/abtsketchsql.c).
 */
extern bool abt_key_sketch_ndistinct(Oid relid, const AttrNumber *attnums, int ncols,
									 double *ndistinct);

#endif							/* ABT_STATS_H */
