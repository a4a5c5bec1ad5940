/*-------------------------------------------------------------------------
 *
 * chll_sketch.c
 *	  The counting HyperLogLog sketch itself: add, remove and union.
 *	  The estimator is in chll_estimate.c, validation of untrusted bytes
 *	  in chll_validate.c.
 *
 * Nothing here allocates memory or raises an ERROR (see chll.h); problems
 * come back as a ChllStatus.  Validation of untrusted bytes is in
 * chll_validate.c.
 *
 * The operations that change a sketch work on a ChllView: where the
 * header, the overflow array and each run of bucket records are.  A value
 * of the SQL type is one contiguous run (chll_view_flat); an index keeps
 * the header and the overflow array on one page and the buckets on a few
 * others (src/abtree/abtsketch.c).  The view also records what changed, so
 * that the index can log exactly that.
 *
 *-------------------------------------------------------------------------
 */
#include "hll/chll.h"
#include "hll/chll_layout.h"


#include "port/pg_bitutils.h"

/* ----------------------------------------------------------------
 * Layout
 * ----------------------------------------------------------------
 */

/* The offsets: chll_layout.h */

/*
 * One overflow entry per bucket (and never fewer than 16): then the top
 * slot of every bucket, the one the estimate reads, can be counted exactly
 * however frequent its values are, and so can every frequent value of a
 * column with few distinct values.
 */
int
chll_overflow_capacity(int log2m)
{
	return Max(CHLL_MIN_CAPACITY, 1 << log2m);
}

/* The exact set comes after the overflow array (chll_set.c) */
Size
chll_set_offset(int log2m)
{
	return entry_off(log2m, chll_overflow_capacity(log2m));
}

Size
chll_sketch_size(int log2m)
{
	return chll_set_offset(log2m) + chll_set_size(log2m);
}

/* The header of an empty sketch */
static void
init_header(uint8 *hdr, int log2m, int capacity)
{
	memset(hdr, 0, CHLL_HEADER_SIZE);
	hdr[CHLL_OFF_VERSION] = CHLL_FORMAT_VERSION;
	hdr[CHLL_OFF_LOG2M] = (uint8) log2m;
	chll_put16(hdr + CHLL_OFF_OVF_CAPACITY, (uint16) capacity);
	chll_put64(hdr + CHLL_OFF_PRNG, CHLL_PRNG_SEED);
}

void
chll_init(uint8 *sk, int log2m)
{
	chll_init_capacity(sk, log2m, chll_overflow_capacity(log2m));
}

/*
 * An empty sketch whose overflow array may use only the first capacity
 * entries (at least CHLL_MIN_CAPACITY, at most the space the layout keeps).
 * An index whose head page cannot hold one entry per bucket uses this
 * (src/abtree/README, "Sketches"); the layout and so the size stay those of
 * the bucket count, the rest of the array stays zero.  Everything reads
 * the capacity from the header, so a capped sketch behaves the same
 * wherever it is copied.
 */
void
chll_init_capacity(uint8 *sk, int log2m, int capacity)
{
	Assert(log2m >= CHLL_MIN_LOG2M && log2m <= CHLL_MAX_LOG2M);
	Assert(capacity >= CHLL_MIN_CAPACITY && capacity <= chll_overflow_capacity(log2m));
	memset(sk, 0, chll_sketch_size(log2m));
	init_header(sk, log2m, capacity);
}

/* ----------------------------------------------------------------
 * Views
 * ----------------------------------------------------------------
 */

/* A view of a contiguous sketch; it tracks no changes */
void
chll_view_flat(ChllView *v, uint8 *sk)
{
	memset(v, 0, sizeof(ChllView));
	v->log2m = chll_log2m(sk);
	v->hdr = sk;
	v->ovf = sk + entry_off(v->log2m, 0);
	v->chunk[0] = sk + bucket_off(0);
	v->per_chunk = 1 << v->log2m;
	v->set[0] = sk + chll_set_offset(v->log2m);
	v->groups_per_set = chll_set_groups(v->log2m);
	v->ovf_lo = PG_INT32_MAX;
	v->set_range[0] = CHLL_SET_SLOTS;
	v->set_range[1] = -1;
}

static inline uint8 *
view_bucket(ChllView *v, int bucket)
{
	int			c = bucket / v->per_chunk;

	Assert(v->chunk[c] != NULL);
	return v->chunk[c] + (Size) (bucket - c * v->per_chunk) * CHLL_BUCKET_SIZE;
}

static inline uint8 *
view_slot(ChllView *v, int bucket, int z)
{
	return view_bucket(v, bucket) + 4 + z;
}

static inline uint8 *
view_entry(ChllView *v, int e)
{
	return v->ovf + (Size) e * CHLL_ENTRY_SIZE;
}

static inline int
view_ovf_used(ChllView *v)
{
	return chll_get16(v->hdr + CHLL_OFF_OVF_USED);
}

/*
 * Note changes for a caller that logs them, and for one that asked for it,
 * keep the bucket's bytes as they were before its first change.  Every
 * change of a bucket's bytes comes after this call for that bucket.
 */
static inline void
touch_bucket(ChllView *v, int bucket)
{
	uint8		bit = (uint8) (1 << (bucket % 8));

	if (v->dirty == NULL)
		return;
	if (v->bucket_before != NULL && (v->dirty[bucket / 8] & bit) == 0)
		memcpy(v->bucket_before + (Size) bucket * CHLL_BUCKET_SIZE, view_bucket(v, bucket),
			   CHLL_BUCKET_SIZE);
	v->dirty[bucket / 8] |= bit;
}

static inline void
touch_entries(ChllView *v, int lo, int hi)
{
	v->ovf_lo = Min(v->ovf_lo, lo);
	v->ovf_hi = Max(v->ovf_hi, hi);
}

static inline void
set_approx(ChllView *v)
{
	v->hdr[CHLL_OFF_FLAGS] |= CHLL_FLAG_APPROX;
}

/* ----------------------------------------------------------------
 * Hashing and coin flips
 * ----------------------------------------------------------------
 */

/*
 * A bijective 64-bit mixer (the splitmix64 finalizer).  Applied to every
 * type's extended hash so that the bucket and leading-zero bits are uniform
 * even for a weak hash function, and used for the coin flips.
 */
uint64
chll_mix64(uint64 x)
{
	x ^= x >> 30;
	x *= UINT64CONST(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64CONST(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* Next number of the sketch's own generator (splitmix64, Weyl sequence) */
static uint64
prng_next(ChllView *v)
{
	uint64		s = chll_get64(v->hdr + CHLL_OFF_PRNG) + UINT64CONST(0x9e3779b97f4a7c15);

	chll_put64(v->hdr + CHLL_OFF_PRNG, s);
	return chll_mix64(s);
}

/* true with probability 2^-k */
static bool
coin(ChllView *v, int k)
{
	if (k >= 64)
		return false;
	return (prng_next(v) >> (64 - k)) == 0;
}

/* Leading zeros of the CHLL_QBITS bits below the bucket bits, at most CHLL_QBITS */
static inline int
hash_zeros(uint64 hash, int log2m)
{
	uint64		w = hash << log2m;

	if ((w >> (64 - CHLL_QBITS)) == 0)
		return CHLL_QBITS;
	return 63 - pg_leftmost_one_pos64(w);
}

int
chll_hash_bucket(uint64 hash, int log2m)
{
	return (int) (hash >> (64 - log2m));
}

/* ----------------------------------------------------------------
 * Counters
 * ----------------------------------------------------------------
 */

/*
 * The count a counter byte stands for.  Above 128 a byte v covers the
 * thesis's range [128 + 2^(v-129), 128 + 2^(v-128)]; going from v to v+1
 * takes 2^(v-128) increments on average, so the expected count at v is
 * 128 + (2^(v-128) - 1).
 */
uint64
chll_raw_count(int raw)
{
	if (raw <= CHLL_RAW_EXACT_MAX)
		return raw;
	if (raw <= CHLL_RAW_MAX)
		return 127 + (UINT64CONST(1) << (raw - 128));
	return 0;
}

/*
 * The probabilistic byte for a count above 128, rounded up or down at
 * random so that the expected count stays exact.
 */
static uint8
encode_approx(ChllView *v, uint64 count)
{
	int			raw;
	uint64		lo;
	uint64		step;

	Assert(count > CHLL_RAW_EXACT_MAX);
	raw = 128 + pg_leftmost_one_pos64(count - 127);
	if (raw >= CHLL_RAW_MAX)
		return CHLL_RAW_MAX;
	lo = chll_raw_count(raw);
	step = UINT64CONST(1) << (raw - 128);
	if ((prng_next(v) & (step - 1)) < count - lo)
		raw++;
	return (uint8) raw;
}

/* ----------------------------------------------------------------
 * Overflow entries, sorted by (bucket, z)
 * ----------------------------------------------------------------
 */

/*
 * Position of (bucket, z), or where it would go, among the used entries
 * at base.  Every addition to a frequent slot comes here, so the loop has
 * no unpredictable branch.
 */
static int
entries_search(const uint8 *base, int used, int bucket, int z, bool *found)
{
	uint32		key = ((uint32) bucket << 8) | (uint32) z;
	int			lo = 0;
	int			n = used;

	/* invariant: entries before lo are smaller than key */
	while (n > 0)
	{
		int			half = n / 2;
		bool		less = entry_key(base + (Size) (lo + half) * CHLL_ENTRY_SIZE) < key;

		lo += less ? half + 1 : 0;
		n = less ? n - half - 1 : half;
	}
	*found = lo < used && entry_key(base + (Size) lo * CHLL_ENTRY_SIZE) == key;
	return lo;
}

static inline int
entry_search(ChllView *v, int bucket, int z, bool *found)
{
	return entries_search(v->ovf, view_ovf_used(v), bucket, z, found);
}

static void
entry_insert(ChllView *v, int pos, int bucket, int z, uint32 count)
{
	int			used = view_ovf_used(v);
	uint8	   *e = view_entry(v, pos);

	Assert(used < chll_get16(v->hdr + CHLL_OFF_OVF_CAPACITY));
	memmove(e + CHLL_ENTRY_SIZE, e, (Size) (used - pos) * CHLL_ENTRY_SIZE);
	chll_put16(e, (uint16) bucket);
	e[2] = (uint8) z;
	e[3] = 0;
	chll_put32(e + 4, count);
	chll_put16(v->hdr + CHLL_OFF_OVF_USED, (uint16) (used + 1));
	touch_entries(v, pos, used + 1);
}

/* Remove entries [pos, pos + n), keeping unused entries zero */
static void
entry_delete(ChllView *v, int pos, int n)
{
	int			used = view_ovf_used(v);

	memmove(view_entry(v, pos), view_entry(v, pos + n),
			(Size) (used - pos - n) * CHLL_ENTRY_SIZE);
	memset(view_entry(v, used - n), 0, (Size) n * CHLL_ENTRY_SIZE);
	chll_put16(v->hdr + CHLL_OFF_OVF_USED, (uint16) (used - n));
	touch_entries(v, pos, used);
}

static void
entry_set_count(ChllView *v, int pos, uint32 count)
{
	chll_put32(view_entry(v, pos) + 4, count);
	touch_entries(v, pos, pos + 1);
}

/* Give up an entry: its slot goes back to a counter byte */
static void
demote(ChllView *v, int pos)
{
	uint8	   *e = view_entry(v, pos);
	int			bucket = chll_get16(e);
	int			z = e[2];
	uint64		count = chll_get32(e + 4);

	entry_delete(v, pos, 1);
	touch_bucket(v, bucket);
	if (count <= CHLL_RAW_EXACT_MAX)
		*view_slot(v, bucket, z) = (uint8) count;
	else
	{
		*view_slot(v, bucket, z) = encode_approx(v, count);
		set_approx(v);
	}
}

static inline int
bucket_top(ChllView *v, int bucket)
{
	return slots_top(view_slot(v, bucket, 0));
}

/*
 * Which slots deserve an exact count.  The estimate reads the top slot of
 * each bucket and the CHLL_READ_DEPTH below it (chll_estimate.c), and the
 * slots below those take over when deletes empty the top; slots deeper
 * than CHLL_EXACT_DEPTH below the top count the thesis's way.  slot_rank() orders the others, smaller is more important:
 * by distance below the top, then the higher z first.
 */
static inline int
slot_rank(int top, int z)
{
	return (top - z) * CHLL_SLOTS + (CHLL_SLOTS - 1 - z);
}

/*
 * Count (bucket, z) exactly in an entry, if it deserves one.  When the
 * array is full, the entry of the least important slot (largest rank; the
 * largest count among equals, which a probabilistic counter keeps best) is
 * demoted if it is less important than this one.  Returns false when the
 * slot must stay a counter byte.  The depth test comes first so that a deep
 * slot hovering around 128 does not search for a victim on every addition.
 * Only a full array makes us read (and perhaps change) other buckets, and
 * only those the view holds (all of them but in an index's narrow locking,
 * src/abtree/README "Sketches"); a demotion makes the sketch approximate
 * either way.
 */
static bool
promote(ChllView *v, int bucket, int z, uint32 count)
{
	int			used = view_ovf_used(v);
	int			top = Max(bucket_top(v, bucket), z);
	int			pos;
	bool		found;

	if (top - z > CHLL_EXACT_DEPTH)
		return false;
	if (used >= chll_get16(v->hdr + CHLL_OFF_OVF_CAPACITY))
	{
		int			victim = -1;
		int			victim_rank = -1;
		uint32		victim_count = 0;

		for (int e = 0; e < used; e++)
		{
			const uint8 *ep = view_entry(v, e);
			int			rank;
			uint32		c = chll_get32(ep + 4);

			/* an index may hold only some chunks: victims come from those */
			if (v->chunk[chll_get16(ep) / v->per_chunk] == NULL)
				continue;
			rank = slot_rank(bucket_top(v, chll_get16(ep)), ep[2]);

			if (rank > victim_rank || (rank == victim_rank && c > victim_count))
			{
				victim = e;
				victim_rank = rank;
				victim_count = c;
			}
		}
		if (victim < 0 || victim_rank <= slot_rank(top, z))
			return false;
		demote(v, victim);
	}
	pos = entry_search(v, bucket, z, &found);
	Assert(!found);
	entry_insert(v, pos, bucket, z, count);
	*view_slot(v, bucket, z) = CHLL_RAW_OVERFLOW;
	return true;
}

/*
 * Read one slot.  Returns false if the bytes are inconsistent (an invalid
 * counter byte, or an overflow marker without its entry).
 */
static bool
view_read_slot(ChllView *v, int bucket, int z, int *raw, uint64 *count, bool *exact)
{
	bool		found;
	int			pos;

	*raw = *view_slot(v, bucket, z);
	*exact = true;
	if (*raw <= CHLL_RAW_EXACT_MAX)
	{
		*count = *raw;
		return true;
	}
	if (*raw <= CHLL_RAW_MAX)
	{
		*count = chll_raw_count(*raw);
		*exact = false;
		return true;
	}
	if (*raw != CHLL_RAW_OVERFLOW)
		return false;
	pos = entry_search(v, bucket, z, &found);
	if (!found)
		return false;
	*count = chll_get32(view_entry(v, pos) + 4);
	return true;
}

bool
chll_slot(const uint8 *sk, int bucket, int z, int *raw, uint64 *count, bool *exact)
{
	ChllView	v;

	chll_view_flat(&v, unconstify(uint8 *, sk));
	return view_read_slot(&v, bucket, z, raw, count, exact);
}

static ChllStatus
slot_increment(ChllView *v, int bucket, int z)
{
	uint8	   *slot = view_slot(v, bucket, z);
	int			raw = *slot;

	if (raw < CHLL_RAW_EXACT_MAX)
		(*slot)++;
	else if (raw == CHLL_RAW_EXACT_MAX)
	{
		if (!promote(v, bucket, z, CHLL_RAW_EXACT_MAX + 1))
		{
			*slot = CHLL_RAW_EXACT_MAX + 1;
			set_approx(v);
		}
	}
	else if (raw <= CHLL_RAW_MAX)
	{
		/* Algorithm 6.2: increment with probability 2^-(v-128) */
		if (raw < CHLL_RAW_MAX && coin(v, raw - 128))
			(*slot)++;
	}
	else if (raw == CHLL_RAW_OVERFLOW)
	{
		bool		found;
		int			pos = entry_search(v, bucket, z, &found);
		uint32		c;

		if (!found)
			return CHLL_CORRUPT;
		c = chll_get32(view_entry(v, pos) + 4);
		if (c == PG_UINT32_MAX)
		{
			/* beyond 32 bits: go on counting probabilistically */
			demote(v, pos);
			*slot = encode_approx(v, (uint64) c + 1);
		}
		else
			entry_set_count(v, pos, c + 1);
	}
	else
		return CHLL_CORRUPT;
	return CHLL_OK;
}

static ChllStatus
slot_decrement(ChllView *v, int bucket, int z)
{
	uint8	   *slot = view_slot(v, bucket, z);
	int			raw = *slot;

	if (raw <= CHLL_RAW_EXACT_MAX + 1)
	{
		Assert(raw > 0);
		(*slot)--;
	}
	else if (raw <= CHLL_RAW_MAX)
	{
		/* the mirror of the increment keeps the expected count exact */
		if (coin(v, raw - 129))
			(*slot)--;
		/* ... but not that the slot is empty exactly when its count is 0 */
		if (v->hdr[CHLL_OFF_LOSSY_Z] < z + 1)
			v->hdr[CHLL_OFF_LOSSY_Z] = (uint8) (z + 1);
	}
	else if (raw == CHLL_RAW_OVERFLOW)
	{
		bool		found;
		int			pos = entry_search(v, bucket, z, &found);
		uint32		c;

		if (!found)
			return CHLL_CORRUPT;
		c = chll_get32(view_entry(v, pos) + 4) - 1;
		if (c <= CHLL_RAW_EXACT_MAX)
		{
			entry_delete(v, pos, 1);
			*slot = (uint8) c;
		}
		else
			entry_set_count(v, pos, c);
	}
	else
		return CHLL_CORRUPT;
	return CHLL_OK;
}

/*
 * A bucket whose exact count reached zero holds nothing: clear what the
 * probabilistic counters may have left behind.
 */
static void
clear_bucket(ChllView *v, int bucket)
{
	bool		found;
	int			lo = entry_search(v, bucket, 0, &found);
	int			hi = entry_search(v, bucket + 1, 0, &found);

	memset(view_slot(v, bucket, 0), 0, CHLL_SLOTS);
	if (hi > lo)
		entry_delete(v, lo, hi - lo);
}

/*
 * Back to the empty sketch.  Every bucket is empty by then (each was
 * cleared when its exact count reached zero) unless one saturated, which
 * takes 2^32 values in one bucket; those are cleared if the view has them.
 */
static void
view_reset(ChllView *v)
{
	int			m = 1 << v->log2m;
	bool		lost = chll_set_lost(v->hdr);
	int			capacity = chll_get16(v->hdr + CHLL_OFF_OVF_CAPACITY);

	/* the capacity stays: an index's head page holds only that many */
	init_header(v->hdr, v->log2m, capacity);
	chll_set_view_reset(v, lost);
	memset(v->ovf, 0, (Size) capacity * CHLL_ENTRY_SIZE);
	touch_entries(v, 0, capacity);
	for (int i = 0; i < m; i++)
	{
		if (v->chunk[i / v->per_chunk] == NULL)
			continue;
		if (chll_get32(view_bucket(v, i)) != 0 || slots_top(view_slot(v, i, 0)) >= 0)
		{
			touch_bucket(v, i);
			memset(view_bucket(v, i), 0, CHLL_BUCKET_SIZE);
		}
	}
}

/* ----------------------------------------------------------------
 * Add, remove, union
 * ----------------------------------------------------------------
 */

ChllStatus
chll_view_add(ChllView *v, uint64 hash)
{
	int			bucket = chll_hash_bucket(hash, v->log2m);
	uint8	   *b = view_bucket(v, bucket);
	uint32		bcount = chll_get32(b);
	uint64		total = chll_get64(v->hdr + CHLL_OFF_TOTAL);
	ChllStatus	st;

	touch_bucket(v, bucket);
	st = slot_increment(v, bucket, hash_zeros(hash, v->log2m));
	if (st != CHLL_OK)
		return st;
	if (bcount != CHLL_BUCKET_SATURATED)
	{
		chll_put32(b, bcount + 1);
		if (bcount + 1 == CHLL_BUCKET_SATURATED)
			set_approx(v);
	}
	if (total != PG_UINT64_MAX)
		chll_put64(v->hdr + CHLL_OFF_TOTAL, total + 1);
	chll_set_view_add(v, hash);
	return CHLL_OK;
}

/*
 * Remove one occurrence of a hash.  CHLL_NOT_PRESENT (and no change) when
 * it certainly was not added: its bucket is empty, the exact set is kept
 * and lacks it, or every count in the sketch is exact and its slot is
 * zero.  A zero slot in an approximate sketch may be a probabilistic
 * counter that reached zero early, so the exact counts go down all the
 * same.  The set goes first: the HLL part may reset the whole sketch.
 */
ChllStatus
chll_view_remove(ChllView *v, uint64 hash)
{
	int			bucket = chll_hash_bucket(hash, v->log2m);
	int			z = hash_zeros(hash, v->log2m);
	uint8	   *b = view_bucket(v, bucket);
	uint32		bcount = chll_get32(b);
	uint64		total = chll_get64(v->hdr + CHLL_OFF_TOTAL);

	if (bcount == 0 || total == 0)
		return CHLL_NOT_PRESENT;
	if (!chll_set_lost(v->hdr) && *view_slot(v, bucket, z) == 0 &&
		(v->hdr[CHLL_OFF_FLAGS] & CHLL_FLAG_APPROX) == 0)
		return CHLL_NOT_PRESENT;	/* before the set changes */
	if (!chll_set_view_remove(v, hash))
		return CHLL_NOT_PRESENT;
	if (*view_slot(v, bucket, z) != 0)
	{
		ChllStatus	st;

		touch_bucket(v, bucket);
		st = slot_decrement(v, bucket, z);
		if (st != CHLL_OK)
			return st;
	}
	else if ((v->hdr[CHLL_OFF_FLAGS] & CHLL_FLAG_APPROX) == 0)
		return CHLL_NOT_PRESENT;

	touch_bucket(v, bucket);
	if (bcount != CHLL_BUCKET_SATURATED)
	{
		chll_put32(b, bcount - 1);
		if (bcount == 1)
			clear_bucket(v, bucket);
	}
	chll_put64(v->hdr + CHLL_OFF_TOTAL, total - 1);
	if (total == 1)
		view_reset(v);			/* the empty sketch, byte for byte */
	return CHLL_OK;
}

ChllStatus
chll_add_hash(uint8 *sk, uint64 hash)
{
	ChllView	v;

	chll_view_flat(&v, sk);
	return chll_view_add(&v, hash);
}

ChllStatus
chll_remove_hash(uint8 *sk, uint64 hash)
{
	ChllView	v;

	chll_view_flat(&v, sk);
	return chll_view_remove(&v, hash);
}

/* Every counter byte valid and every overflow marker backed by an entry? */
static bool
slots_consistent(const uint8 *sk)
{
	int			m = bucket_count(sk);

	for (int i = 0; i < m; i++)
		for (int z = 0; z < CHLL_SLOTS; z++)
		{
			int			raw;
			uint64		count;
			bool		exact;

			if (sk[slot_off(i, z)] != 0 && !chll_slot(sk, i, z, &raw, &count, &exact))
				return false;
		}
	return true;
}

/* Set a nonzero count, exact or not, choosing its representation */
static void
slot_set(ChllView *v, int bucket, int z, uint64 count, bool exact)
{
	uint8	   *slot = view_slot(v, bucket, z);
	bool		found;
	int			pos;

	if (count <= CHLL_RAW_EXACT_MAX)
		exact = true;
	if (exact && count > PG_UINT32_MAX)
		exact = false;

	if (*slot == CHLL_RAW_OVERFLOW)
	{
		pos = entry_search(v, bucket, z, &found);
		Assert(found);
		if (exact && count > CHLL_RAW_EXACT_MAX)
		{
			entry_set_count(v, pos, (uint32) count);
			return;
		}
		entry_delete(v, pos, 1);
		*slot = 0;
	}
	if (count <= CHLL_RAW_EXACT_MAX)
		*slot = (uint8) count;
	else if (!exact || !promote(v, bucket, z, (uint32) count))
	{
		*slot = encode_approx(v, count);
		set_approx(v);
	}
}

static uint64
add_sat64(uint64 a, uint64 b)
{
	return (a > PG_UINT64_MAX - b) ? PG_UINT64_MAX : a + b;
}

/*
 * dst += src, as multisets: every count adds up, so removing from the
 * result whatever was added to either input stays valid.  Both sketches
 * must have the same bucket count.  Checks everything before changing
 * anything, so a CHLL_CORRUPT result leaves dst untouched.
 */
ChllStatus
chll_union_into(uint8 *dst, const uint8 *src)
{
	int			m = bucket_count(dst);
	ChllView	v;

	if (chll_log2m(dst) != chll_log2m(src) ||
		!slots_consistent(dst) || !slots_consistent(src))
		return CHLL_CORRUPT;

	chll_view_flat(&v, dst);
	for (int i = 0; i < m; i++)
	{
		uint64		sb = chll_get32(src + bucket_off(i));
		uint64		db = chll_get32(dst + bucket_off(i));

		if (sb == 0)
			continue;
		for (int z = 0; z < CHLL_SLOTS; z++)
		{
			int			raw;
			uint64		sc,
						dc;
			bool		sexact,
						dexact;

			(void) chll_slot(src, i, z, &raw, &sc, &sexact);
			if (sc == 0)
				continue;
			(void) chll_slot(dst, i, z, &raw, &dc, &dexact);
			slot_set(&v, i, z, add_sat64(sc, dc), sexact && dexact);
		}
		if (sb == CHLL_BUCKET_SATURATED || db == CHLL_BUCKET_SATURATED ||
			sb + db >= CHLL_BUCKET_SATURATED)
		{
			chll_put32(dst + bucket_off(i), CHLL_BUCKET_SATURATED);
			set_approx(&v);
		}
		else
			chll_put32(dst + bucket_off(i), (uint32) (sb + db));
	}
	chll_set_union_into(dst, src);
	chll_put64(dst + CHLL_OFF_TOTAL, add_sat64(chll_total(dst), chll_total(src)));
	dst[CHLL_OFF_FLAGS] |= src[CHLL_OFF_FLAGS] & CHLL_FLAG_APPROX;
	dst[CHLL_OFF_LOSSY_Z] = Max(dst[CHLL_OFF_LOSSY_Z], src[CHLL_OFF_LOSSY_Z]);
	return CHLL_OK;
}
