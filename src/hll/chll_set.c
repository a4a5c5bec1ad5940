/*-------------------------------------------------------------------------
 *
 * chll_set.c
 *	  The exact set of a chll sketch (format version 2): every distinct
 *	  hash with its count, kept beside the HLL counters while there are
 *	  few of them, so that small distinct counts are exact, after removals
 *	  too.
 *
 * The set is a few groups of open-addressing slots: linear probing in
 * Robin Hood order with ties broken by key, and deletion by backward
 * shift.  That order makes the bytes a function of the set's contents,
 * not of the order of the operations (the layout is "history
 * independent", Blelloch and Golovin 2007): a sketch built by inserts
 * equals, byte for byte, the one a build or a union makes of the same
 * values, which abtree_verify and chll's = rely on; and a set emptied by
 * removals is all zero again.  A hash belongs to one group,
 * chosen by its low bits, and probes only within it: an index keeps a few
 * groups per page, so an insert locks one page of the set.  A group that
 * would hold more than CHLL_SET_MAX_USED keys, or a count that would pass
 * 2^32 - 1, ends the set: the header's SET_LOST flag says the estimate
 * comes from the HLL counters from then on, until the sketch empties.
 * src/hll/README, "Exact while small", says why and what it costs.
 *
 * Like chll_sketch.c, nothing here allocates or raises an ERROR.
 *
 *-------------------------------------------------------------------------
 */
#include "hll/chll.h"
#include "hll/chll_layout.h"

/* Slots: 48-bit key (the hash's top bits), uint32 count; count 0 = empty */
#define SLOT_KEY_BYTES		6

static inline uint64
slot_key(const uint8 *s)
{
	return (uint64) chll_get32(s) | ((uint64) chll_get16(s + 4) << 32);
}

static inline uint32
slot_count(const uint8 *s)
{
	return chll_get32(s + SLOT_KEY_BYTES);
}

static inline void
slot_put(uint8 *s, uint64 key, uint32 count)
{
	chll_put32(s, (uint32) key);
	chll_put16(s + 4, (uint16) (key >> 32));
	chll_put32(s + SLOT_KEY_BYTES, count);
}

static inline uint8 *
group_slot(uint8 *g, int i)
{
	return g + CHLL_SET_GROUP_HDR + (Size) i * CHLL_SET_SLOT_SIZE;
}

static inline const uint8 *
group_slot_c(const uint8 *g, int i)
{
	return g + CHLL_SET_GROUP_HDR + (Size) i * CHLL_SET_SLOT_SIZE;
}

static inline int
key_home(uint64 key)
{
	return (int) (key % CHLL_SET_SLOTS);
}

/* How far slot i is from the home of the key it holds */
static inline int
slot_dist(const uint8 *g, int i)
{
	return (i - key_home(slot_key(group_slot_c(g, i))) + CHLL_SET_SLOTS) % CHLL_SET_SLOTS;
}

static inline uint64
hash_key(uint64 hash)
{
	return hash >> 16;
}

/* 10 groups for the default 512 buckets: exact to about 1,300 values */
int
chll_set_groups(int log2m)
{
	return CHLL_SET_GROUPS(log2m);
}

int
chll_set_group_of(uint64 hash, int log2m)
{
	return (int) ((hash & 0xFFFF) % (uint64) chll_set_groups(log2m));
}

Size
chll_set_size(int log2m)
{
	return (Size) chll_set_groups(log2m) * CHLL_SET_GROUP_SIZE;
}

/* ---- one group ---- */

/*
 * The slots an operation wrote, [range[0], range[1]], for an index's WAL of
 * what changed (NULL: not tracked).  A run that wraps around the group's
 * end widens it to the whole group, which is correct, only less compact.
 */
static inline void
touch_slot(int *range, int i)
{
	if (range == NULL)
		return;
	if (i < range[0])
		range[0] = i;
	if (i > range[1])
		range[1] = i;
}

/* The slot holding key, or -1; *free gets the first empty slot on the way */
static int
group_find(const uint8 *g, uint64 key, int *free)
{
	int			i = key_home(key);

	for (int n = 0; n < CHLL_SET_SLOTS; n++, i = (i + 1) % CHLL_SET_SLOTS)
	{
		const uint8 *s = group_slot_c(g, i);

		if (slot_count(s) == 0)
		{
			*free = i;
			return -1;
		}
		if (slot_key(s) == key)
			return i;
	}
	*free = -1;
	return -1;
}

/*
 * Put a new key in Robin Hood order: walking from its home, it takes the
 * first slot whose key is nearer its own home, or as near with a larger
 * key, and that key moves on the same way.  So a run holds its keys
 * sorted by home, then by key.
 */
static void
group_insert_new(uint8 *g, uint64 key, uint32 count, int *range)
{
	int			i = key_home(key);
	int			d = 0;

	for (;;)
	{
		uint8	   *s = group_slot(g, i);
		int			sd;

		if (slot_count(s) == 0)
		{
			slot_put(s, key, count);
			touch_slot(range, i);
			return;
		}
		sd = slot_dist(g, i);
		if (sd < d || (sd == d && slot_key(s) > key))
		{
			uint64		k2 = slot_key(s);
			uint32		c2 = slot_count(s);

			slot_put(s, key, count);
			touch_slot(range, i);
			key = k2;
			count = c2;
			d = sd;
		}
		i = (i + 1) % CHLL_SET_SLOTS;
		d++;
	}
}

/* Add n to key's count; false if the group is full or the count would wrap */
static bool
group_add(uint8 *g, uint64 key, uint64 n, int *range)
{
	int			free;
	int			i = group_find(g, key, &free);
	int			used = chll_get16(g);

	if (i >= 0)
	{
		uint64		c = (uint64) slot_count(group_slot(g, i)) + n;

		if (c > PG_UINT32_MAX)
			return false;
		slot_put(group_slot(g, i), key, (uint32) c);
		touch_slot(range, i);
		return true;
	}
	if (used >= CHLL_SET_MAX_USED || n > PG_UINT32_MAX)
		return false;
	group_insert_new(g, key, (uint32) n, range);
	chll_put16(g, (uint16) (used + 1));
	return true;
}

/*
 * Empty slot i, then close the gap: the keys after it that are away from
 * their home move back one slot each, which keeps the Robin Hood order.
 */
static void
group_delete(uint8 *g, int i, int *range)
{
	chll_put16(g, (uint16) (chll_get16(g) - 1));
	for (;;)
	{
		int			j = (i + 1) % CHLL_SET_SLOTS;

		touch_slot(range, i);
		if (slot_count(group_slot(g, j)) == 0 || slot_dist(g, j) == 0)
			break;
		memcpy(group_slot(g, i), group_slot(g, j), CHLL_SET_SLOT_SIZE);
		i = j;
	}
	memset(group_slot(g, i), 0, CHLL_SET_SLOT_SIZE);
}

/* ---- through a view ---- */

static inline uint8 *
view_group(ChllView *v, int g)
{
	int			p = g / v->groups_per_set;

	if (v->set[p] == NULL)
		return NULL;
	return v->set[p] + (Size) (g - p * v->groups_per_set) * CHLL_SET_GROUP_SIZE;
}

static inline void
touch_group(ChllView *v, int g)
{
	if (v->set_dirty)
		v->set_dirty[g / 8] |= (uint8) (1 << (g % 8));
}

bool
chll_set_lost(const uint8 *hdr)
{
	return (hdr[CHLL_OFF_FLAGS] & CHLL_FLAG_SET_LOST) != 0;
}

/*
 * Zero every group the view holds that is not zero already.  After the
 * set is lost, groups the view lacks (an index locked only one page of
 * the set) keep stale bytes: readers zero them (abt_sketch_copy), so the
 * flat form of a lost set is all zero.
 */
static void
view_zero_groups(ChllView *v)
{
	int			ngroups = chll_set_groups(v->log2m);

	for (int g = 0; g < ngroups; g++)
	{
		uint8	   *gp = view_group(v, g);

		if (gp == NULL)
			continue;
		for (Size b = 0; b < CHLL_SET_GROUP_SIZE; b++)
			if (gp[b] != 0)
			{
				memset(gp, 0, CHLL_SET_GROUP_SIZE);
				touch_group(v, g);
				touch_slot(v->set_range, 0);
				touch_slot(v->set_range, CHLL_SET_SLOTS - 1);
				break;
			}
	}
}

static void
view_lose_set(ChllView *v)
{
	v->hdr[CHLL_OFF_FLAGS] |= CHLL_FLAG_SET_LOST;
	view_zero_groups(v);
}

/* After the HLL counters took the hash: count it, or give the set up */
void
chll_set_view_add(ChllView *v, uint64 hash)
{
	int			g = chll_set_group_of(hash, v->log2m);
	uint8	   *gp;

	if (chll_set_lost(v->hdr))
		return;
	gp = view_group(v, g);
	/* the caller holds the group of every hash (a NULL is a caller's bug) */
	if (gp == NULL || !group_add(gp, hash_key(hash), 1, v->set_range))
	{
		view_lose_set(v);
		return;
	}
	touch_group(v, g);
}

/*
 * Before the HLL counters give the hash up: false (and no change) if the
 * set is kept and does not hold it, so the value certainly is not there.
 */
bool
chll_set_view_remove(ChllView *v, uint64 hash)
{
	int			g = chll_set_group_of(hash, v->log2m);
	uint8	   *gp;
	int			free;
	int			i;
	uint32		c;

	if (chll_set_lost(v->hdr))
		return true;
	gp = view_group(v, g);
	if (gp == NULL)
	{
		/* a caller's bug, as above: the counts cannot go down, give up */
		Assert(false);
		view_lose_set(v);
		return true;
	}
	i = group_find(gp, hash_key(hash), &free);
	if (i < 0)
		return false;
	touch_group(v, g);
	c = slot_count(group_slot(gp, i));
	if (c > 1)
	{
		slot_put(group_slot(gp, i), hash_key(hash), c - 1);
		touch_slot(v->set_range, i);
	}
	else
		group_delete(gp, i, v->set_range);
	return true;
}

/*
 * The sketch became empty (its header is the initial one again).  A kept
 * set is all zero by now: every key was removed.  A lost one is zeroed and
 * kept again if the view holds every group; otherwise (an index removing
 * one entry at a time holds one set page) it stays lost: the groups the
 * view lacks may hold stale bytes.
 */
void
chll_set_view_reset(ChllView *v, bool was_lost)
{
	int			ngroups = chll_set_groups(v->log2m);

	if (!was_lost)
		return;
	for (int g = 0; g < ngroups; g++)
		if (view_group(v, g) == NULL)
		{
			v->hdr[CHLL_OFF_FLAGS] |= CHLL_FLAG_SET_LOST;
			return;
		}
	view_zero_groups(v);
}

/* ---- flat sketches ---- */

static inline const uint8 *
flat_group(const uint8 *sk, int g)
{
	return sk + chll_set_offset(chll_log2m(sk)) + (Size) g * CHLL_SET_GROUP_SIZE;
}

/* The number of distinct hashes held, or -1 if the set was lost */
int64
chll_set_distinct(const uint8 *sk)
{
	int			ngroups = chll_set_groups(chll_log2m(sk));
	int64		n = 0;

	if (chll_set_lost(sk))
		return -1;
	for (int g = 0; g < ngroups; g++)
		n += chll_get16(flat_group(sk, g));
	return n;
}

/*
 * dst's set += src's (same bucket count, checked by the caller).  Either
 * set lost, a group overflowing or a count wrapping: dst's set is lost.
 */
void
chll_set_union_into(uint8 *dst, const uint8 *src)
{
	int			ngroups = chll_set_groups(chll_log2m(dst));
	ChllView	v;

	chll_view_flat(&v, dst);
	if (chll_set_lost(dst))
		return;
	if (chll_set_lost(src))
	{
		view_lose_set(&v);
		return;
	}
	for (int g = 0; g < ngroups; g++)
	{
		const uint8 *sg = flat_group(src, g);
		uint8	   *dg = (uint8 *) flat_group(dst, g);

		for (int i = 0; i < CHLL_SET_SLOTS; i++)
		{
			const uint8 *s = group_slot_c(sg, i);

			if (slot_count(s) != 0 && !group_add(dg, slot_key(s), slot_count(s), NULL))
			{
				view_lose_set(&v);
				return;
			}
		}
	}
}

#define INVALID(...) \
	do { snprintf(why, whylen, __VA_ARGS__); return false; } while (0)

/*
 * Robin Hood order at slot i: right after an empty slot a key is at home;
 * after another key, it is at most one further from home, and if they
 * share a home, it is the larger key.
 */
static bool
slot_in_order(const uint8 *gp, int i)
{
	int			p = (i + CHLL_SET_SLOTS - 1) % CHLL_SET_SLOTS;
	int			d = slot_dist(gp, i);

	if (slot_count(group_slot_c(gp, p)) == 0)
		return d == 0;
	if (d > slot_dist(gp, p) + 1)
		return false;
	return d != slot_dist(gp, p) + 1 ||
		slot_key(group_slot_c(gp, p)) < slot_key(group_slot_c(gp, i));
}

static bool
validate_group(const uint8 *gp, int g, uint64 *sum, char *why, Size whylen)
{
	int			used = 0;

	if (gp[2] != 0 || gp[3] != 0)
		INVALID("The reserved bytes of exact-set group %d are not zero.", g);
	for (int i = 0; i < CHLL_SET_SLOTS; i++)
	{
		const uint8 *s = group_slot_c(gp, i);
		uint64		key = slot_key(s);
		int			free;

		if (slot_count(s) == 0)
		{
			if (key != 0)
				INVALID("Empty slot %d of exact-set group %d holds a key.", i, g);
			continue;
		}
		used++;
		*sum += slot_count(s);
		if (group_find(gp, key, &free) != i)
			INVALID("The key in slot %d of exact-set group %d cannot be found from its home slot, or is there twice.",
					i, g);
		if (!slot_in_order(gp, i))
			INVALID("The key in slot %d of exact-set group %d is out of order.", i, g);
	}
	if (used != chll_get16(gp))
		INVALID("Exact-set group %d says it holds %d keys, but holds %d.",
				g, chll_get16(gp), used);
	if (used > CHLL_SET_MAX_USED)
		INVALID("Exact-set group %d holds %d keys, more than %d.",
				g, used, CHLL_SET_MAX_USED);
	return true;
}

/*
 * A lost set is all zero; a kept one has findable, unique keys, the right
 * key counts, and counts that add up to the sketch's total.
 */
bool
chll_set_validate(const uint8 *sk, char *why, Size whylen)
{
	int			ngroups = chll_set_groups(chll_log2m(sk));
	uint64		sum = 0;

	for (int g = 0; g < ngroups; g++)
	{
		const uint8 *gp = flat_group(sk, g);

		if (chll_set_lost(sk))
		{
			if (!chll_all_zero(gp, CHLL_SET_GROUP_SIZE))
				INVALID("The exact set was given up, but group %d is not zero.", g);
			continue;
		}
		if (!validate_group(gp, g, &sum, why, whylen))
			return false;
	}
	if (!chll_set_lost(sk) && sum != chll_total(sk))
		INVALID("The exact set counts %llu values, but the header has %llu.",
				(unsigned long long) sum, (unsigned long long) chll_total(sk));
	return true;
}
