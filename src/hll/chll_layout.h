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

#endif							/* CHLL_LAYOUT_H */
