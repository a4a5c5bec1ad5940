/*-------------------------------------------------------------------------
 *
 * swr_scan.h
 *	  The state of a "Custom Scan (swr)", shared by the node's life cycle
 *	  (swr_scan.c) and its draws and fetches (swr_draw.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SWR_SCAN_H
#define SWR_SCAN_H

#include "swr.h"

#include "abtree/abtree.h"
#include "mvstore/mvstore.h"
#include "access/attmap.h"
#include "access/relscan.h"
#include "common/pg_prng.h"
#include "nodes/execnodes.h"

/* Draws per batch: memory stays bounded (swr_batch_max). */
#define SWR_BATCH_MAX			65536
#define SWR_BATCH_MIN			256
#define SWR_DRAW_OVERHEAD		(sizeof(SwrDraw) + HEAPTUPLESIZE + 64)

/*
 * Rejected draws tolerated per row returned (plus one) before we look
 * whether any row can be returned at all (README "Rejections").
 */
#define SWR_MAX_REJECTS_PER_ROW	10000

/* One table to draw from, with its index. */
typedef struct SwrTable
{
	Relation	heap;
	Relation	index;
	IndexFetchTableData *fetch;
	TupleTableSlot *slot;		/* fetches land here (the scan slot if no map) */
	AttrMap    *map;			/* scan column -> this table's, if they differ */
	MvsReader	reader;			/* weighs entries as the snapshot sees them */
	int			lo_cand;		/* range candidates bounding the draws, or -1 */
	int			hi_cand;
	bool		has_range;
	bool		empty;			/* a NULL bound: no row can qualify */
	AbtSampleRange range;
	double		total;			/* what a descent spreads u over */
	SwrCounts	cur;			/* this scan's draws from this table */
	Buffer		vmbuf;			/* visibility map page of index-only draws */
	AttrNumber *cover;			/* covered plans: the scan column each index
								 * column fills (0: none) */
} SwrTable;

typedef struct SwrDraw
{
	int32		table;
	double		u;				/* the descent's variate */
	bool		accepted;		/* the index found an entry ... */
	ItemPointerData tid;		/* ... pointing here */
	HeapTuple	row;			/* a copy of the row, if the snapshot sees it */
	Datum	   *values;			/* covered plans: the entry's index columns */
	bool	   *isnull;
} SwrDraw;

typedef struct SwrScanState
{
	CustomScanState css;
	SwrWhere	where;
	ExprState  *nexpr;
	ExprState  *seedexpr;
	int			nfixed;			/* custom_exprs before the range candidates */
	List	   *boundexprs;		/* ExprStates of the range candidates */
	ExprState  *qual;			/* the WHERE clause, evaluated by us */
	int			ntables;
	SwrTable   *tables;
	double	   *cumtotal;		/* running sums of the tables' totals */
	uint32		random_seed;	/* without REPEATABLE: chosen once per node */
	pg_prng_state prng;
	MemoryContext scancxt;		/* lives as long as the node */
	MemoryContext drawcxt;		/* reset for every batch */
	MemoryContext rangecxt;		/* the range bounds: reset for every scan */

	int64		owed;			/* draws still to make; -1 before the start */
	bool		exhausted;		/* nothing can be returned: stop */
	bool		shard;			/* swr_shard(rate): a Citus shard's part */
	bool		probe;			/* swr_shard(0): one row of NULLs */
	bool		probed;			/* and it was returned */
	SwrCounts	cur;			/* this scan */
	int64		unjudged;		/* of its tree rejections, those for pages that
								 * moved in descents of several draws */
	SwrCounts	sum;			/* every loop, for EXPLAIN ANALYZE */
	int64		loops;

	HeapTuple	empty_row;		/* the plan reads no column: every row
								 * returned is this one, of NULLs */
	bool		covered;		/* it reads only columns of every sample
								 * index (swr_plan_cover) */
	SwrDraw    *batch;			/* in the order drawn */
	int			batchmax;		/* draws per batch whose rows fit work_mem */
	int64		batches;		/* made in every loop, for EXPLAIN ANALYZE */
	int64		descents;		/* abt_sample_batch calls, every loop, likewise */
	int			batchcap;
	int			round;			/* draws per abt_sample_batch call (abt_sample_round) */
	int			nbatch;
	int			nfetch;			/* of them, those whose heap page is read */
	int			pos;
	int64		index_only;		/* draws the visibility map settled, every
								 * loop, for EXPLAIN ANALYZE */
} SwrScanState;

extern bool swr_weigh_tables(SwrScanState *st);
extern TupleTableSlot *swr_next(ScanState *ss);

/* swr_fetch.c */
extern HeapTuple swr_copy_row(SwrScanState *st, SwrTable *t, TupleTableSlot *fetched);
extern void swr_fetch_batch(SwrScanState *st);
extern void swr_plan_cover(SwrScanState *st);

#endif							/* SWR_SCAN_H */
