/*-------------------------------------------------------------------------
 *
 * abtsort.c
 *	  A least-significant-digit radix sort of (64-bit key, int32) pairs, for
 *	  the batches of draws: their variates before a batched descent, their
 *	  heap TIDs before the fetches.  Comparison sorts cost a sixth of a
 *	  batch (issue 21's profile); this one makes a pass per 11-bit digit in
 *	  which the keys differ, up to the highest bit any key has, and is
 *	  stable.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#define ABT_RADIX_BITS		11
#define ABT_RADIX_SIZE		(1 << ABT_RADIX_BITS)
#define ABT_RADIX_DIGITS	((64 + ABT_RADIX_BITS - 1) / ABT_RADIX_BITS)

/*
 * Below this many pairs an insertion sort: the radix sort's fixed cost (a
 * zeroed 48 kB of histograms and their prefix sums) dwarfs a few draws,
 * and calls of one or two draws are what samplers make under heavy inserts
 * (abt_sample_round).
 */
#define ABT_SORT_SMALL		32

static void
abt_sort_keyed_small(AbtKeyed *a, int n)
{
	for (int i = 1; i < n; i++)
	{
		AbtKeyed	x = a[i];
		int			j = i;

		for (; j > 0 && a[j - 1].key > x.key; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* Sort a[0..n) by key, ascending; equal keys keep their order. */
void
abt_sort_keyed(AbtKeyed *a, int n)
{
	uint32	   *counts;
	AbtKeyed   *buf;
	AbtKeyed   *from = a;
	AbtKeyed   *to;
	uint64		any = 0;		/* every key's bits */
	int			ndigits;

	if (n < ABT_SORT_SMALL)
	{
		abt_sort_keyed_small(a, n);
		return;
	}
	/*
	 * Only the digits below the highest key bit set: swr sorts heap block
	 * numbers (22 bits up to a 32 GB table), and abt_sort_draws makes keys
	 * of 22 or 33.  Counting and zeroing
	 * the histograms of digits every key has zero in was half a sort.
	 */
	for (int i = 0; i < n; i++)
		any |= a[i].key;
	ndigits = any == 0 ? 0 : (pg_leftmost_one_pos64(any) + ABT_RADIX_BITS) / ABT_RADIX_BITS;
	if (ndigits == 0)
		return;					/* every key is zero: already in order */
	counts = palloc0(sizeof(uint32) * ABT_RADIX_SIZE * ndigits);
	buf = abt_scratch_alloc(sizeof(AbtKeyed) * n);
	to = buf;

	/* every digit's histogram in one pass */
	for (int i = 0; i < n; i++)
		for (int d = 0; d < ndigits; d++)
			counts[d * ABT_RADIX_SIZE +
				   ((a[i].key >> (d * ABT_RADIX_BITS)) & (ABT_RADIX_SIZE - 1))]++;

	for (int d = 0; d < ndigits; d++)
	{
		uint32	   *c = counts + d * ABT_RADIX_SIZE;
		int			shift = d * ABT_RADIX_BITS;
		uint32		sum = 0;
		AbtKeyed   *swap;

		/* all keys share this digit: the pass would not move anything */
		if (c[(from[0].key >> shift) & (ABT_RADIX_SIZE - 1)] == (uint32) n)
			continue;
		for (int v = 0; v < ABT_RADIX_SIZE; v++)
		{
			uint32		k = c[v];

			c[v] = sum;
			sum += k;
		}
		for (int i = 0; i < n; i++)
			to[c[(from[i].key >> shift) & (ABT_RADIX_SIZE - 1)]++] = from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != a)
		memcpy(a, from, sizeof(AbtKeyed) * n);
	abt_scratch_free(buf);
	pfree(counts);
}
