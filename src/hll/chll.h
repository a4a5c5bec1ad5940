/*-------------------------------------------------------------------------
 *
 * chll.h
 *	  Counting HyperLogLog sketches (paper 002, section 6.1): the byte
 *	  layout and the C API shared by the SQL type and the indexes.
 *
 * A sketch is a fixed-size byte string whose size depends only on its
 * bucket count.  It holds no pointers and no alignment requirement, and
 * multi-byte integers are little-endian, so the same bytes are valid
 * anywhere: in a varlena, in an index page, in a WAL record, on another
 * machine.  See src/hll/README for the layout and the counter scheme.
 *
 * The core functions (chll_init, chll_add_hash, chll_remove_hash,
 * chll_union_into, chll_estimate_sketch, chll_validate) never allocate
 * memory and never raise an ERROR, so they may run inside a critical
 * section.  They are deterministic: the same bytes and the same hash give
 * the same result bytes (the random numbers of the probabilistic counters
 * come from a generator whose state is part of the sketch), so WAL redo
 * can repeat an operation instead of logging its result.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CHLL_H
#define CHLL_H

#include "postgres.h"

#include "fmgr.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"				/* VARDATA and friends left postgres.h in 16 */
#endif

/* Format version: byte 0 of every sketch and of its text and binary forms */
#define CHLL_FORMAT_VERSION		2	/* 2: the exact set (chll_set.c) */

/* Bucket counts m = 2^log2m */
#define CHLL_MIN_LOG2M			4
#define CHLL_MAX_LOG2M			15
#define CHLL_DEFAULT_LOG2M		9	/* 512 buckets: see src/hll/README */

/*
 * Below the bucket bits, CHLL_QBITS bits of the hash give the leading-zero
 * count z in 0..CHLL_QBITS (CHLL_QBITS when all are zero), so each bucket
 * has CHLL_SLOTS counters and the register values run 0..CHLL_QBITS+1.
 */
#define CHLL_QBITS				31
#define CHLL_SLOTS				(CHLL_QBITS + 1)

/* Header */
#define CHLL_OFF_VERSION		0	/* uint8 */
#define CHLL_OFF_LOG2M			1	/* uint8 */
#define CHLL_OFF_FLAGS			2	/* uint8, CHLL_FLAG_* */
#define CHLL_OFF_LOSSY_Z		3	/* uint8: see below */
#define CHLL_OFF_OVF_CAPACITY	4	/* uint16 */
#define CHLL_OFF_OVF_USED		6	/* uint16 */
#define CHLL_OFF_TOTAL			8	/* uint64: values added minus removed */
#define CHLL_OFF_PRNG			16	/* uint64: state of the coin flips */
#define CHLL_HEADER_SIZE		24

/* Some count in the sketch is approximate (probabilistic or saturated) */
#define CHLL_FLAG_APPROX		0x01
/* The exact set overflowed: the estimate comes from the HLL counters */
#define CHLL_FLAG_SET_LOST		0x02
#define CHLL_KNOWN_FLAGS		(CHLL_FLAG_APPROX | CHLL_FLAG_SET_LOST)
/*
 * Header byte CHLL_OFF_LOSSY_Z: 0 while no removal hit an approximate
 * count, else 1 + the highest z of a slot where one did.  Such a slot may
 * look empty while it holds values, or the reverse; slots with z below
 * this byte are therefore not read by the estimate (chll_estimate.c).
 * Nonzero only with APPROX, at most CHLL_SLOTS.
 */
/* Only in a value's stored form: the bytes after the header are runs (chll_pack.c) */
#define CHLL_FLAG_PACKED		0x80

/* Buckets: uint32 number of values, then one counter byte per z */
#define CHLL_BUCKET_SIZE		(4 + CHLL_SLOTS)
#define CHLL_BUCKET_SATURATED	PG_UINT32_MAX	/* count no longer known */

/* Overflow entries: uint16 bucket, uint8 z, uint8 zero, uint32 count */
#define CHLL_ENTRY_SIZE			8
/* The fewest entries a header may give the overflow array */
#define CHLL_MIN_CAPACITY		16

/*
 * The exact set, after the overflow array: chll_set_groups() groups of a
 * uint16 key count, two zero bytes, and CHLL_SET_SLOTS slots of a 48-bit
 * key (the hash's top 48 bits) and a uint32 count (0: empty slot).
 */
#define CHLL_SET_SLOTS			160
#define CHLL_SET_MAX_USED		150
#define CHLL_SET_SLOT_SIZE		10
#define CHLL_SET_GROUP_HDR		4
#define CHLL_SET_GROUP_SIZE		(CHLL_SET_GROUP_HDR + CHLL_SET_SLOTS * CHLL_SET_SLOT_SIZE)
/* One group per 51 buckets or so: 10 for the default 512, at least one */
#define CHLL_SET_GROUPS(log2m)	Max(1, (10 << (log2m)) / 512)

/*
 * Counter bytes: 0..128 count exactly; 129..CHLL_RAW_MAX are the thesis's
 * probabilistic counter (see chll_raw_count); CHLL_RAW_OVERFLOW says the
 * exact count is in an overflow entry.  Other values are invalid.
 */
#define CHLL_RAW_EXACT_MAX		128
#define CHLL_RAW_MAX			191
#define CHLL_RAW_OVERFLOW		255

/* Initial state of the coin-flip generator ("chll v1") */
#define CHLL_PRNG_SEED			UINT64CONST(0x63686c6c20763100)	/* "chll v1" */

typedef enum ChllStatus
{
	CHLL_OK = 0,
	CHLL_NOT_PRESENT,			/* remove: the value is certainly not there */
	CHLL_CORRUPT				/* the bytes break the format */
} ChllStatus;

/* Little-endian accessors: the layout must not depend on the machine */
static inline uint16
chll_get16(const uint8 *p)
{
	return (uint16) (p[0] | (p[1] << 8));
}

static inline uint32
chll_get32(const uint8 *p)
{
	return (uint32) p[0] | ((uint32) p[1] << 8) |
		((uint32) p[2] << 16) | ((uint32) p[3] << 24);
}

static inline uint64
chll_get64(const uint8 *p)
{
	return (uint64) chll_get32(p) | ((uint64) chll_get32(p + 4) << 32);
}

static inline void
chll_put16(uint8 *p, uint16 v)
{
	p[0] = (uint8) v;
	p[1] = (uint8) (v >> 8);
}

static inline void
chll_put32(uint8 *p, uint32 v)
{
	p[0] = (uint8) v;
	p[1] = (uint8) (v >> 8);
	p[2] = (uint8) (v >> 16);
	p[3] = (uint8) (v >> 24);
}

static inline void
chll_put64(uint8 *p, uint64 v)
{
	chll_put32(p, (uint32) v);
	chll_put32(p + 4, (uint32) (v >> 32));
}

static inline int
chll_log2m(const uint8 *sk)
{
	return sk[CHLL_OFF_LOG2M];
}

static inline uint64
chll_total(const uint8 *sk)
{
	return chll_get64(sk + CHLL_OFF_TOTAL);
}

/*
 * Where the parts of a sketch are, for the operations that change it: the
 * header, the overflow array, the bucket records in runs ("chunks") of
 * per_chunk records each, and the exact set's groups in runs of
 * groups_per_set.  A value of the SQL type is one run of each
 * (chll_view_flat); an index spreads a sketch over pages.  A chunk or set
 * run may be NULL if the caller knows the operation will not need it.  The
 * view also notes what changed: the buckets and the set's groups (in the
 * caller's bitmaps dirty and set_dirty, if not NULL), the overflow entries
 * [ovf_lo, ovf_hi), and the set slots written, [set_range[0],
 * set_range[1]] (what an index logs of an insert's one group).
 */
#define CHLL_VIEW_MAX_CHUNKS	16

typedef struct ChllView
{
	int			log2m;
	uint8	   *hdr;
	uint8	   *ovf;
	uint8	   *chunk[CHLL_VIEW_MAX_CHUNKS];
	int			per_chunk;
	uint8	   *set[CHLL_VIEW_MAX_CHUNKS];
	int			groups_per_set;
	uint8	   *dirty;
	uint8	   *bucket_before;	/* NULL, or each touched bucket's bytes before
								 * its first change (needs dirty) */
	uint8	   *set_dirty;
	int			set_range[2];	/* slots written in the set, for one-group ops */
	int			ovf_lo;
	int			ovf_hi;
} ChllView;

/* chll_sketch.c */
extern void chll_view_flat(ChllView *v, uint8 *sk);
extern ChllStatus chll_view_add(ChllView *v, uint64 hash);
extern ChllStatus chll_view_remove(ChllView *v, uint64 hash);
extern int	chll_hash_bucket(uint64 hash, int log2m);
extern int	chll_overflow_capacity(int log2m);
extern Size chll_set_offset(int log2m);
extern Size chll_sketch_size(int log2m);
extern void chll_init(uint8 *sk, int log2m);
extern void chll_init_capacity(uint8 *sk, int log2m, int capacity);
extern uint64 chll_mix64(uint64 x);
extern ChllStatus chll_add_hash(uint8 *sk, uint64 hash);
extern ChllStatus chll_remove_hash(uint8 *sk, uint64 hash);
extern ChllStatus chll_union_into(uint8 *dst, const uint8 *src);
extern double chll_estimate_sketch(const uint8 *sk);
extern double chll_estimate_hll(const uint8 *sk);
extern uint64 chll_raw_count(int raw);
extern bool chll_slot(const uint8 *sk, int bucket, int z,
					  int *raw, uint64 *count, bool *exact);
extern bool chll_validate(const uint8 *sk, Size len, char *why, Size whylen);

/* chll_set.c: the exact set */
extern int	chll_set_groups(int log2m);
extern int	chll_set_group_of(uint64 hash, int log2m);
extern Size chll_set_size(int log2m);
extern bool chll_set_lost(const uint8 *hdr);
extern void chll_set_view_add(ChllView *v, uint64 hash);
extern bool chll_set_view_remove(ChllView *v, uint64 hash);
extern void chll_set_view_reset(ChllView *v, bool was_lost);
extern int64 chll_set_distinct(const uint8 *sk);
extern void chll_set_union_into(uint8 *dst, const uint8 *src);
extern bool chll_set_validate(const uint8 *sk, char *why, Size whylen);

/* chll_pack.c: the packed form */
extern Size chll_packed_size(const uint8 *sk);
extern void chll_pack(const uint8 *sk, uint8 *out);
extern bool chll_unpack(const uint8 *in, Size inlen, uint8 *out, Size outlen);

/* chll_io.c: shared by the SQL functions */
#define CHLL_BYTES(v)			((uint8 *) VARDATA(v))
extern bytea *chll_new(MemoryContext cxt, int log2m);
extern PGDLLEXPORT Datum chll_union(PG_FUNCTION_ARGS);
extern bytea *chll_flatten(bytea *v);
extern bytea *chll_result(bytea *v);
extern bytea *chll_getarg(FunctionCallInfo fcinfo, int argno, bool copy);
extern void chll_report(ChllStatus st, const uint8 *sk);

/* chll_funcs.c: the hash of a value under its type's extended hash function */
extern uint64 chll_hash_datum(FmgrInfo *hashfn, Oid collation, Datum value);

#endif							/* CHLL_H */
