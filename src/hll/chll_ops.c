/*-------------------------------------------------------------------------
 *
 * chll_ops.c
 *	  Equality, an order, hashing, the union operator and the bytea
 *	  conversions of the chll type, so that DISTINCT, count(DISTINCT),
 *	  GROUP BY, set operations and joins work on chll columns.
 *
 * Two sketches are equal when they count the same: the same number of
 * buckets, flags and total, and in every bucket the same number of values
 * and the same counter in every slot (the exact count where the slot has
 * overflowed).  Not compared: the state of the coin-flip generator and
 * where the overflow entries sit, which depend on the order of past
 * operations but not on what the sketch estimates.  The hash is of the
 * same parts, so equal sketches hash alike.
 *
 * A chll value is its sketch bytes in a varlena, as a bytea is: the cast to
 * bytea is binary; chll(bytea) validates the bytes as chll_in does (a
 * function, not a cast, so that tests can still cast corrupt bytes).
 *
 *-------------------------------------------------------------------------
 */
#include "chll.h"

#include "common/hashfn.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(chll_eq);
PG_FUNCTION_INFO_V1(chll_ne);
PG_FUNCTION_INFO_V1(chll_hash_sketch);
PG_FUNCTION_INFO_V1(chll_from_bytea);
PG_FUNCTION_INFO_V1(chll_cmp);
PG_FUNCTION_INFO_V1(chll_lt);
PG_FUNCTION_INFO_V1(chll_le);
PG_FUNCTION_INFO_V1(chll_gt);
PG_FUNCTION_INFO_V1(chll_ge);

/* The bucket's number of values */
static uint32
chll_bucket_count(ChllView *v, int bucket)
{
	return chll_get32(v->chunk[0] + (Size) bucket * CHLL_BUCKET_SIZE);
}

/* The counter of a slot as compared: its exact count where it overflowed */
static uint64
chll_slot_value(const uint8 *sk, int bucket, int z)
{
	int			raw;
	uint64		count;
	bool		exact;

	if (!chll_slot(sk, bucket, z, &raw, &count, &exact))
		chll_report(CHLL_CORRUPT, sk);
	return raw == CHLL_RAW_OVERFLOW ? ((uint64) 1 << 32) + count : (uint64) raw;
}

#define CHLL_CMP(x, y) \
	do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

/*
 * Compare what two sketches count, in a fixed order of the compared parts
 * (bucket count, flags, total, then bucket by bucket): 0 exactly when they
 * count the same.  The order means nothing beyond being total and fixed,
 * which is what sorting (count(DISTINCT), merge joins) needs.
 */
static int
chll_compare(const uint8 *a, const uint8 *b)
{
	ChllView	va;
	ChllView	vb;

	CHLL_CMP(chll_log2m(a), chll_log2m(b));
	CHLL_CMP(a[CHLL_OFF_FLAGS], b[CHLL_OFF_FLAGS]);
	CHLL_CMP(chll_total(a), chll_total(b));
	chll_view_flat(&va, unconstify(uint8 *, a));
	chll_view_flat(&vb, unconstify(uint8 *, b));
	for (int bucket = 0; bucket < (1 << va.log2m); bucket++)
	{
		CHLL_CMP(chll_bucket_count(&va, bucket), chll_bucket_count(&vb, bucket));
		for (int z = 0; z < CHLL_SLOTS; z++)
			CHLL_CMP(chll_slot_value(a, bucket, z), chll_slot_value(b, bucket, z));
	}
	return 0;
}

static bool
chll_equal(const uint8 *a, const uint8 *b)
{
	return chll_compare(a, b) == 0;
}

Datum
chll_cmp(PG_FUNCTION_ARGS)
{
	bytea	   *a = chll_getarg(fcinfo, 0, false);
	bytea	   *b = chll_getarg(fcinfo, 1, false);

	PG_RETURN_INT32(chll_compare(CHLL_BYTES(a), CHLL_BYTES(b)));
}

#define CHLL_CMP_FUNC(name, test) \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	bytea	   *a = chll_getarg(fcinfo, 0, false); \
	bytea	   *b = chll_getarg(fcinfo, 1, false); \
	int			c = chll_compare(CHLL_BYTES(a), CHLL_BYTES(b)); \
\
	PG_RETURN_BOOL(test); \
}

CHLL_CMP_FUNC(chll_lt, c < 0)
CHLL_CMP_FUNC(chll_le, c <= 0)
CHLL_CMP_FUNC(chll_gt, c > 0)
CHLL_CMP_FUNC(chll_ge, c >= 0)

Datum
chll_eq(PG_FUNCTION_ARGS)
{
	bytea	   *a = chll_getarg(fcinfo, 0, false);
	bytea	   *b = chll_getarg(fcinfo, 1, false);

	PG_RETURN_BOOL(chll_equal(CHLL_BYTES(a), CHLL_BYTES(b)));
}

Datum
chll_ne(PG_FUNCTION_ARGS)
{
	bytea	   *a = chll_getarg(fcinfo, 0, false);
	bytea	   *b = chll_getarg(fcinfo, 1, false);

	PG_RETURN_BOOL(!chll_equal(CHLL_BYTES(a), CHLL_BYTES(b)));
}

Datum
chll_hash_sketch(PG_FUNCTION_ARGS)
{
	bytea	   *v = chll_getarg(fcinfo, 0, false);
	const uint8 *sk = CHLL_BYTES(v);
	ChllView	view;
	uint64		h;

	chll_view_flat(&view, unconstify(uint8 *, sk));
	h = hash_combine64(chll_total(sk), ((uint64) chll_log2m(sk) << 8) | sk[CHLL_OFF_FLAGS]);
	for (int bucket = 0; bucket < (1 << view.log2m); bucket++)
	{
		uint32		n = chll_bucket_count(&view, bucket);

		/* empty buckets are most of a small sketch: skip their slots */
		h = hash_combine64(h, n);
		for (int z = 0; n > 0 && z < CHLL_SLOTS; z++)
			h = hash_combine64(h, chll_mix64(chll_slot_value(sk, bucket, z)));
	}
	PG_RETURN_INT32((int32) (h ^ (h >> 32)));
}

#define CHLL_FROM_BYTEA_HINT \
	"Pass chll() only the bytes of a chll value (its cast to bytea, or chll_send())."

Datum
chll_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_P_COPY(0);
	Size		len = VARSIZE(b) - VARHDRSZ;
	char		why[256];

	if (len > chll_sketch_size(CHLL_MAX_LOG2M))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("bytea value is not a valid chll value"),
				 errdetail("It has %zu bytes; the largest chll value has %zu.",
						   len, chll_sketch_size(CHLL_MAX_LOG2M)),
				 errhint(CHLL_FROM_BYTEA_HINT)));
	b = chll_flatten(b);
	if (b == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("bytea value is not a valid chll value"),
				 errdetail("The packed runs of the value do not make a sketch of its bucket count."),
				 errhint(CHLL_FROM_BYTEA_HINT)));
	len = VARSIZE(b) - VARHDRSZ;
	if (!chll_validate((uint8 *) VARDATA(b), len, why, sizeof(why)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("bytea value is not a valid chll value"),
				 errdetail_internal("%s", why),
				 errhint(CHLL_FROM_BYTEA_HINT)));
	PG_RETURN_BYTEA_P(chll_result(b));
}
