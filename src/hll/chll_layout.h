/*-------------------------------------------------------------------------
 *
 * chll_layout.h
 *	  Offsets within a flat chll sketch, for the files of src/hll that read
 *	  its bytes directly (chll_sketch.c, chll_validate.c).  See
 *	  src/hll/README, "Layout".
 *
 *-------------------------------------------------------------------------
 */
#ifndef CHLL_LAYOUT_H
#define CHLL_LAYOUT_H

#include "hll/chll.h"

#include "port/pg_bitutils.h"

/*
 * How far below the top slot of its bucket a slot still deserves an exact
 * count (an overflow entry when it passes 128: chll_sketch.c).
 */
#define CHLL_EXACT_DEPTH	4

/*
 * How far below the top the estimator reads (chll_estimate.c), where no
 * removal hit an approximate count (header byte CHLL_OFF_LOSSY_Z).  One
 * less than CHLL_EXACT_DEPTH, so that after deletes empty a bucket's top
 * slot the slots the estimator then reads were still entitled to exact
 * counts while values arrived.
 */
#define CHLL_READ_DEPTH		(CHLL_EXACT_DEPTH - 1)

static inline int
bucket_count(const uint8 *sk)
{
	return 1 << chll_log2m(sk);
}

static inline Size
bucket_off(int bucket)
{
	return CHLL_HEADER_SIZE + (Size) bucket * CHLL_BUCKET_SIZE;
}

static inline Size
slot_off(int bucket, int z)
{
	return bucket_off(bucket) + 4 + z;
}

static inline Size
entry_off(int log2m, int e)
{
	return bucket_off(1 << log2m) + (Size) e * CHLL_ENTRY_SIZE;
}

static inline int
ovf_used(const uint8 *sk)
{
	return chll_get16(sk + CHLL_OFF_OVF_USED);
}

static inline uint32
entry_key(const uint8 *e)
{
	return ((uint32) chll_get16(e) << 8) | e[2];
}

/* Whether n bytes are all zero, eight at a time: validation's common case */
static inline bool
chll_all_zero(const uint8 *p, Size n)
{
	Size		i = 0;

	for (; i + 8 <= n; i += 8)
	{
		uint64		w;

		memcpy(&w, p + i, 8);
		if (w != 0)
			return false;
	}
	for (; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/*
 * The highest z with a nonzero counter among a bucket's counters, or -1.
 * Eight counters at a time: the estimate and every eviction decision need
 * it.
 */
static inline int
slots_top(const uint8 *slots)
{
	StaticAssertStmt(CHLL_SLOTS % 8 == 0, "counters must fill whole words");
	for (int w = CHLL_SLOTS / 8 - 1; w >= 0; w--)
	{
		uint64		x;

		memcpy(&x, slots + 8 * w, sizeof(x));
		if (x != 0)
#ifdef WORDS_BIGENDIAN
			return 8 * w + 7 - pg_rightmost_one_pos64(x) / 8;
#else
			return 8 * w + pg_leftmost_one_pos64(x) / 8;
#endif
	}
	return -1;
}

#endif							/* CHLL_LAYOUT_H */
