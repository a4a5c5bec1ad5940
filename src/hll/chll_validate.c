/*-------------------------------------------------------------------------
 *
 * chll_validate.c
 *	  Full validation of chll bytes: input, and every stored value the SQL
 *	  functions read.
 *	  Like chll_sketch.c, nothing here allocates or raises an ERROR.
 *
 *-------------------------------------------------------------------------
 */
#include "hll/chll.h"
#include "hll/chll_layout.h"

/* ----------------------------------------------------------------
 * Validation
 * ----------------------------------------------------------------
 */

#define INVALID(...) \
	do { snprintf(why, whylen, __VA_ARGS__); return false; } while (0)

static bool
validate_header(const uint8 *sk, Size len, char *why, Size whylen)
{
	int			log2m;

	if (len < CHLL_HEADER_SIZE)
		INVALID("A chll value has at least %d bytes, this one has %zu.",
				CHLL_HEADER_SIZE, len);
	/* chll_read_format1() has converted every well-formed format-1 value */
	if (sk[CHLL_OFF_VERSION] == 1)
		INVALID("A format-1 value (abtree 0.1) has the size of its bucket count and no flag but 0x01; this one has %zu bytes and flags 0x%02x.",
				len, sk[CHLL_OFF_FLAGS]);
	if (sk[CHLL_OFF_VERSION] != CHLL_FORMAT_VERSION)
		INVALID("Format version %d is not supported (this library reads versions 1 and %d).",
				sk[CHLL_OFF_VERSION], CHLL_FORMAT_VERSION);
	log2m = sk[CHLL_OFF_LOG2M];
	if (log2m < CHLL_MIN_LOG2M || log2m > CHLL_MAX_LOG2M)
		INVALID("The bucket count exponent %d is outside %d..%d.",
				log2m, CHLL_MIN_LOG2M, CHLL_MAX_LOG2M);
	if (len != chll_sketch_size(log2m))
		INVALID("A chll value with %d buckets has %zu bytes, this one has %zu.",
				1 << log2m, chll_sketch_size(log2m), len);
	if ((sk[CHLL_OFF_FLAGS] & ~CHLL_KNOWN_FLAGS) != 0)
		INVALID("Unknown flag bits are set in the header.");
	if (sk[CHLL_OFF_LOSSY_Z] > CHLL_SLOTS)
		INVALID("Header byte 3 is %d, more than %d.", sk[CHLL_OFF_LOSSY_Z], CHLL_SLOTS);
	if (sk[CHLL_OFF_LOSSY_Z] != 0 && (sk[CHLL_OFF_FLAGS] & CHLL_FLAG_APPROX) == 0)
		INVALID("The header says removals hit approximate counts, but no count is approximate.");
	/* below the layout's space only in an index's sketch (chll_init_capacity) */
	if (chll_get16(sk + CHLL_OFF_OVF_CAPACITY) < CHLL_MIN_CAPACITY ||
		chll_get16(sk + CHLL_OFF_OVF_CAPACITY) > chll_overflow_capacity(log2m))
		INVALID("The overflow capacity is %d, not within %d..%d.",
				chll_get16(sk + CHLL_OFF_OVF_CAPACITY), CHLL_MIN_CAPACITY,
				chll_overflow_capacity(log2m));
	if (ovf_used(sk) > chll_get16(sk + CHLL_OFF_OVF_CAPACITY))
		INVALID("%d overflow entries are in use, more than the capacity of %d.",
				ovf_used(sk), chll_get16(sk + CHLL_OFF_OVF_CAPACITY));
	return true;
}

static bool
validate_entries(const uint8 *sk, char *why, Size whylen)
{
	int			log2m = chll_log2m(sk);
	int			used = ovf_used(sk);
	int			cap = chll_overflow_capacity(log2m);

	for (int e = 0; e < cap; e++)
	{
		const uint8 *ep = sk + entry_off(log2m, e);

		if (e >= used)
		{
			if (!chll_all_zero(ep, CHLL_ENTRY_SIZE))
				INVALID("Unused overflow entry %d is not zero.", e);
			continue;
		}
		if (chll_get16(ep) >= (1 << log2m) || ep[2] >= CHLL_SLOTS || ep[3] != 0)
			INVALID("Overflow entry %d names no valid slot.", e);
		if (chll_get32(ep + 4) <= CHLL_RAW_EXACT_MAX)
			INVALID("Overflow entry %d holds a count of %u, which belongs in a counter byte.",
					e, chll_get32(ep + 4));
		if (e > 0 && entry_key(ep - CHLL_ENTRY_SIZE) >= entry_key(ep))
			INVALID("Overflow entries %d and %d are out of order.", e - 1, e);
		if (sk[slot_off(chll_get16(ep), ep[2])] != CHLL_RAW_OVERFLOW)
			INVALID("Overflow entry %d belongs to a slot that does not point to it.", e);
	}
	return true;
}

/*
 * One bucket.  In a sketch whose counts are all exact (no APPROX flag), the
 * bucket count must be the sum of its slots; otherwise only an empty bucket
 * is checked to be all zero.  Overflow markers are matched with the entries
 * in order (validate_entries has checked that they are sorted by bucket and
 * z, and that each names a marker): *next is the next unmatched entry.  One
 * pass over the bytes, no search: every value a function reads is checked.
 */
static bool
validate_bucket(const uint8 *sk, int i, int *next, char *why, Size whylen)
{
	bool		approx = (sk[CHLL_OFF_FLAGS] & CHLL_FLAG_APPROX) != 0;
	uint64		bcount = chll_get32(sk + bucket_off(i));
	const uint8 *slots = sk + slot_off(i, 0);
	uint64		sum = 0;

	if (bcount == 0)
	{
		if (!chll_all_zero(slots, CHLL_SLOTS))
			INVALID("Bucket %d is empty but has nonzero counters.", i);
		return true;
	}
	for (int z = 0; z < CHLL_SLOTS; z++)
	{
		int			raw = slots[z];

		if (raw <= CHLL_RAW_EXACT_MAX)
			sum += raw;
		else if (raw <= CHLL_RAW_MAX)
		{
			if (!approx)
				INVALID("Counter %d of bucket %d is approximate, but the header says every count is exact.",
						z, i);
			sum += chll_raw_count(raw);
		}
		else if (raw == CHLL_RAW_OVERFLOW)
		{
			const uint8 *ep = sk + entry_off(chll_log2m(sk), *next);

			if (*next >= ovf_used(sk) || chll_get16(ep) != i || ep[2] != z)
				INVALID("Counter %d of bucket %d points to an overflow entry that does not exist.",
						z, i);
			sum += chll_get32(ep + 4);
			(*next)++;
		}
		else
			INVALID("Counter %d of bucket %d has the invalid value %d.", z, i, raw);
	}
	if (!approx && (bcount == CHLL_BUCKET_SATURATED || sum != bcount))
		INVALID("Bucket %d has a count of %llu, but its counters add up to %llu.",
				i, (unsigned long long) bcount, (unsigned long long) sum);
	return true;
}

/*
 * Full check of untrusted bytes (text or binary input): everything the
 * operations rely on, and every invariant they maintain.  On failure,
 * returns false with a sentence in why.
 */
bool
chll_validate(const uint8 *sk, Size len, char *why, Size whylen)
{
	uint64		sum = 0;
	bool		saturated = false;
	int			next = 0;
	int			m;

	if (!validate_header(sk, len, why, whylen) ||
		!validate_entries(sk, why, whylen))
		return false;
	m = bucket_count(sk);
	for (int i = 0; i < m; i++)
	{
		uint32		bcount = chll_get32(sk + bucket_off(i));

		if (!validate_bucket(sk, i, &next, why, whylen))
			return false;
		saturated |= bcount == CHLL_BUCKET_SATURATED;
		sum += bcount;
	}
	if (next != ovf_used(sk))
		INVALID("%d counters point to the overflow array, which has %d entries.",
				next, ovf_used(sk));
	/* bucket counts are exact until they saturate, and so is the total */
	if (!saturated && chll_total(sk) != sum)
		INVALID("The header has a count of %llu, but the buckets add up to %llu.",
				(unsigned long long) chll_total(sk), (unsigned long long) sum);
	if (chll_total(sk) == 0 &&
		(sk[CHLL_OFF_FLAGS] != 0 || chll_get64(sk + CHLL_OFF_PRNG) != CHLL_PRNG_SEED))
		INVALID("An empty sketch must have the initial flags and generator state.");
	return chll_set_validate(sk, why, whylen);
}
