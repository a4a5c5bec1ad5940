/*-------------------------------------------------------------------------
 *
 * abtscratch.c
 *	  Work arrays of batched draws kept between queries.
 *
 * A batch of draws needs a handful of arrays of its size (the variates,
 * their sort, the groups of each level, the TIDs' fetch order): for
 * swr(100000), about 10 MB a query.  palloc hands arrays that large to
 * malloc one by one, and malloc gives them back to the kernel at pfree
 * (munmap, or a brk that shrinks the heap), so every query faulted its
 * arrays' pages in afresh, zeroed by the kernel: a tenth of swr(100000)'s
 * time on 1M rows (bench/results/draw_scratch_ab.md).  So arrays of
 * ABT_SCRATCH_MIN bytes or more come from a few blocks this backend keeps
 * in TopMemoryContext, at most ABT_SCRATCH_KEEP bytes of them; smaller ones,
 * and any that do not fit, are palloc'd as before.
 *
 * A block is busy from abt_scratch_alloc to abt_scratch_free.  An ERROR
 * between the two leaves it busy; the end of the transaction (commit or
 * abort) makes every block idle again, since no scan outlives its
 * transaction (a WITH HOLD cursor's rows are materialized before the
 * commit).  Nothing but this file knows what the blocks hold.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/xact.h"
#include "utils/memutils.h"

#define ABT_SCRATCH_MIN		(64 * 1024)
#define ABT_SCRATCH_KEEP	(32 * 1024 * 1024)
#define ABT_SCRATCH_SLOTS	16
#define ABT_SCRATCH_ROUND	(64 * 1024)

typedef struct AbtScratch
{
	char	   *mem;			/* NULL: an empty slot */
	Size		size;
	bool		busy;
} AbtScratch;

static AbtScratch abt_scratch[ABT_SCRATCH_SLOTS];
static Size abt_scratch_kept = 0;
static bool abt_scratch_registered = false;

static void
abt_scratch_xact(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			for (int i = 0; i < ABT_SCRATCH_SLOTS; i++)
				abt_scratch[i].busy = false;
			break;
		default:
			break;
	}
}

/*
 * The slot a new block of size bytes may take: an empty one, or else the
 * smallest idle block (too small for this request, or it would have been
 * taken), if the blocks kept stay within ABT_SCRATCH_KEEP.
 */
static AbtScratch *
abt_scratch_spare(Size size)
{
	AbtScratch *spare = NULL;

	for (int i = 0; i < ABT_SCRATCH_SLOTS; i++)
	{
		AbtScratch *s = &abt_scratch[i];

		if (s->mem == NULL)
		{
			spare = s;
			break;
		}
		if (!s->busy && (spare == NULL || s->size < spare->size))
			spare = s;
	}
	if (spare == NULL || abt_scratch_kept - spare->size + size > ABT_SCRATCH_KEEP)
		return NULL;
	return spare;
}

void *
abt_scratch_alloc(Size size)
{
	AbtScratch *best = NULL;
	AbtScratch *spare;

	if (size < ABT_SCRATCH_MIN)
		return palloc(size);
	for (int i = 0; i < ABT_SCRATCH_SLOTS; i++)
	{
		AbtScratch *s = &abt_scratch[i];

		if (s->mem && !s->busy && s->size >= size &&
			(best == NULL || s->size < best->size))
			best = s;
	}
	if (best)
	{
		best->busy = true;
		return best->mem;
	}
	size = TYPEALIGN(ABT_SCRATCH_ROUND, size);
	spare = abt_scratch_spare(size);
	if (spare == NULL)
		return palloc(size);
	if (!abt_scratch_registered)
	{
		RegisterXactCallback(abt_scratch_xact, NULL);
		abt_scratch_registered = true;
	}
	if (spare->mem)
	{
		pfree(spare->mem);
		abt_scratch_kept -= spare->size;
		spare->mem = NULL;
		spare->size = 0;
	}
	spare->mem = MemoryContextAlloc(TopMemoryContext, size);
	spare->size = size;
	spare->busy = true;
	abt_scratch_kept += size;
	return spare->mem;
}

void
abt_scratch_free(void *p)
{
	for (int i = 0; i < ABT_SCRATCH_SLOTS; i++)
	{
		if (abt_scratch[i].mem == p)
		{
			abt_scratch[i].busy = false;
			return;
		}
	}
	pfree(p);
}
