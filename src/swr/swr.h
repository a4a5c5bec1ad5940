/*-------------------------------------------------------------------------
 *
 * swr.h
 *	  TABLESAMPLE swr(n): n independent weighted draws with replacement
 *	  through a table's abtree index.
 *
 * See src/swr/README for the semantics, how draws become the block and
 * tuple callbacks of the TABLESAMPLE API, and the limits.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SWR_H
#define SWR_H

#include "abtree_ext.h"

#include "nodes/pg_list.h"
#include "utils/relcache.h"

/*
 * Largest n: a guard against typos and runaway queries (a billion draws
 * take about an hour), not a memory limit, since draws are made in batches.
 */
#define SWR_MAX_N				1000000000

/* swr_index.c */
extern bool swr_parse_index_names(const char *value, List **names);
extern Relation swr_open_index(Relation heaprel);

#endif							/* SWR_H */
