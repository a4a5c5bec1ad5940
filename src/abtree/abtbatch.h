/*-------------------------------------------------------------------------
 *
 * abtbatch.h
 *	  Batched validation's groups, shared by abtbatch.c (the waiting list,
 *	  making a group valid) and abtbatchlock.c (finding and locking a
 *	  group's pages).  Private to those two files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ABTBATCH_H
#define ABTBATCH_H

#include "abtree.h"

/* entries of one index that wait before a flush; a flush makes groups */
#define ABT_BATCH_PENDING	64

typedef struct AbtPendingEntry
{
	IndexTuple	itup;			/* a copy, not valid */
	uint64		w;
	SubTransactionId subid;
	AbtPosHint	hint;			/* phase 1's way there and place, if no split */
	AbtSketchHashes hashes;		/* for the sketches: made before any lock */
} AbtPendingEntry;

/* a page held by a group being made valid */
typedef struct AbtBatchPage
{
	Buffer		buf;
	int			up;				/* index of the page above holding our downlink */
	OffsetNumber upoff;			/* the downlink's offset there */
	int			entry;			/* an entry below it: its key finds the page above */
	const AbtStack *path;		/* a leaf's: a descent's pages above it */
} AbtBatchPage;

typedef struct AbtBatch
{
	Relation	rel;
	AbtKey	  **keys;			/* of the entries, in their order */
	AbtPendingEntry *e;
	int			n;				/* entries in this group */
	int		   *leafof;			/* per entry: its leaf's index in pages */
	OffsetNumber *offof;		/* per entry: its offset there */
	int			nleaves;
	int			above[ABT_MAX_HEIGHT];	/* distinct pages their paths name per level */
	AbtStack	paths[XLR_MAX_BLOCK_ID + 1];	/* of leaves found by a descent here */
	int			npages;			/* leaves first, then each level left to right */
	AbtBatchPage pages[XLR_MAX_BLOCK_ID + 1];
} AbtBatch;

extern int	abt_batch_lock_leaves(AbtBatch *b, int n, int maxpages, int maxleaves);
extern bool abt_batch_lock_path(AbtBatch *b, int maxpages);
extern void abt_batch_release(AbtBatch *b);

#endif							/* ABTBATCH_H */
