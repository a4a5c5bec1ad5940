/*-------------------------------------------------------------------------
 *
 * chll_funcs.c
 *	  SQL functions and aggregates of the chll type: create, add, remove,
 *	  union, estimate, inspection, chll_agg and chll_union_agg.
 *
 * Values are hashed with their type's extended hash support function
 * (that of the default hash operator class, seed 0; hash_record_extended
 * for anonymous records) and then mixed by chll_mix64(), so every hashable
 * type works and values that compare equal (numeric 1.0 and 1.00, strings
 * under a nondeterministic collation) hash equally.  NULL values are not values: they are skipped,
 * as count(x) and ANALYZE's n_distinct skip them.
 *
 *-------------------------------------------------------------------------
 */
#include "hll/chll.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(chll_create);
PG_FUNCTION_INFO_V1(chll_add);
PG_FUNCTION_INFO_V1(chll_remove);
PG_FUNCTION_INFO_V1(chll_add_all);
PG_FUNCTION_INFO_V1(chll_remove_all);
PG_FUNCTION_INFO_V1(chll_add_hash_sql);
PG_FUNCTION_INFO_V1(chll_remove_hash_sql);
PG_FUNCTION_INFO_V1(chll_hash);
PG_FUNCTION_INFO_V1(chll_union);
PG_FUNCTION_INFO_V1(chll_estimate);
PG_FUNCTION_INFO_V1(chll_estimate_counters);
PG_FUNCTION_INFO_V1(chll_info);
PG_FUNCTION_INFO_V1(chll_counters);
PG_FUNCTION_INFO_V1(chll_agg_trans);
PG_FUNCTION_INFO_V1(chll_agg_combine);
PG_FUNCTION_INFO_V1(chll_agg_final);

/* ----------------------------------------------------------------
 * Arguments
 * ----------------------------------------------------------------
 */

/* log2 of a bucket count given in SQL */
static int
log2m_for_buckets(FunctionCallInfo fcinfo, int argno)
{
	int32		buckets;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the chll bucket count must not be NULL"),
				 errhint("Pass a power of two from %d to %d, or leave it out for the default of %d.",
						 1 << CHLL_MIN_LOG2M, 1 << CHLL_MAX_LOG2M,
						 1 << CHLL_DEFAULT_LOG2M)));
	buckets = PG_GETARG_INT32(argno);
	if (buckets < (1 << CHLL_MIN_LOG2M) || buckets > (1 << CHLL_MAX_LOG2M) ||
		(buckets & (buckets - 1)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid chll bucket count: %d", buckets),
				 errdetail("The bucket count must be a power of two from %d to %d.",
						   1 << CHLL_MIN_LOG2M, 1 << CHLL_MAX_LOG2M),
				 errhint("The default, %d, keeps the mean ratio error near 1.04 in %zu bytes; each doubling divides the error by about 1.4 and doubles the size.",
						 1 << CHLL_DEFAULT_LOG2M, chll_sketch_size(CHLL_DEFAULT_LOG2M))));
	return pg_leftmost_one_pos32((uint32) buckets);
}

/* What a call site keeps between calls: the hash function of one type */
typedef struct ChllHashCache
{
	Oid			type;
	FmgrInfo   *hashfn;			/* in the type cache, or record_hash below */
	FmgrInfo	record_hash;
} ChllHashCache;

static FmgrInfo *
type_hash_function(FunctionCallInfo fcinfo, Oid type)
{
	ChllHashCache *cache = (ChllHashCache *) fcinfo->flinfo->fn_extra;
	TypeCacheEntry *tce;

	if (cache != NULL && cache->type == type)
		return cache->hashfn;
	if (!OidIsValid(type))
		ereport(ERROR,
				(errcode(ERRCODE_INDETERMINATE_DATATYPE),
				 errmsg("could not determine the type of the value to sketch")));
	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
									   sizeof(ChllHashCache));
		fcinfo->flinfo->fn_extra = cache;
	}
	cache->type = InvalidOid;

	/*
	 * The type cache cannot tell whether an anonymous record (a ROW(...)
	 * expression) is hashable, so it says no; hash_record_extended() checks
	 * the actual column types when it runs and names any that cannot be
	 * hashed.  That makes chll_agg((a, b)) work for column combinations.
	 */
	if (type == RECORDOID)
	{
		fmgr_info_cxt(F_HASH_RECORD_EXTENDED, &cache->record_hash,
					  fcinfo->flinfo->fn_mcxt);
		cache->hashfn = &cache->record_hash;
	}
	else
	{
		tce = lookup_type_cache(type, TYPECACHE_HASH_EXTENDED_PROC_FINFO);
		if (!OidIsValid(tce->hash_extended_proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify an extended hash function for type %s",
							format_type_be(type)),
					 errdetail("chll hashes values with the extended hash support function of the type's default hash operator class."),
					 errhint("Sketch a hashable expression of the value instead, such as a cast to text.")));
		cache->hashfn = &tce->hash_extended_proc_finfo;
	}
	cache->type = type;
	return cache->hashfn;
}

/* The hash a sketch adds for a value; the indexes use it too */
uint64
chll_hash_datum(FmgrInfo *hashfn, Oid collation, Datum value)
{
	Datum		h = FunctionCall2Coll(hashfn, collation, value, UInt64GetDatum(0));

	return chll_mix64(DatumGetUInt64(h));
}

/* The hash of argument argno, a value of any hashable type */
static uint64
hash_arg(FunctionCallInfo fcinfo, int argno)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, argno);

	return chll_hash_datum(type_hash_function(fcinfo, type), PG_GET_COLLATION(),
					  PG_GETARG_DATUM(argno));
}

/* ----------------------------------------------------------------
 * Building sketches
 * ----------------------------------------------------------------
 */

static void
apply_hash(bytea *v, uint64 h, bool add)
{
	uint8	   *sk = CHLL_BYTES(v);

	chll_report(add ? chll_add_hash(sk, h) : chll_remove_hash(sk, h), sk);
}

Datum
chll_create(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P(chll_result(chll_new(CurrentMemoryContext, log2m_for_buckets(fcinfo, 0))));
}

static Datum
update_one(FunctionCallInfo fcinfo, bool add)
{
	bytea	   *v = chll_getarg(fcinfo, 0, true);

	if (!PG_ARGISNULL(1))
	{
		uint64		h = hash_arg(fcinfo, 1);

		apply_hash(v, h, add);
	}
	PG_RETURN_BYTEA_P(chll_result(v));
}

Datum
chll_add(PG_FUNCTION_ARGS)
{
	return update_one(fcinfo, true);
}

Datum
chll_remove(PG_FUNCTION_ARGS)
{
	return update_one(fcinfo, false);
}

/* Every non-NULL element of an array of any dimensions */
static Datum
update_all(FunctionCallInfo fcinfo, bool add)
{
	bytea	   *v = chll_getarg(fcinfo, 0, true);
	ArrayType  *arr;
	ArrayIterator it;
	FmgrInfo   *hashfn;
	Datum		elem;
	bool		isnull;
	uint32		n = 0;

	if (PG_ARGISNULL(1))
		PG_RETURN_BYTEA_P(chll_result(v));
	arr = PG_GETARG_ARRAYTYPE_P(1);
	hashfn = type_hash_function(fcinfo, ARR_ELEMTYPE(arr));
	it = array_create_iterator(arr, 0, NULL);
	while (array_iterate(it, &elem, &isnull))
	{
		uint64		h;

		if ((++n & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (isnull)
			continue;
		h = chll_hash_datum(hashfn, PG_GET_COLLATION(), elem);
		apply_hash(v, h, add);
	}
	array_free_iterator(it);
	PG_RETURN_BYTEA_P(chll_result(v));
}

Datum
chll_add_all(PG_FUNCTION_ARGS)
{
	return update_all(fcinfo, true);
}

Datum
chll_remove_all(PG_FUNCTION_ARGS)
{
	return update_all(fcinfo, false);
}

/* A 64-bit hash computed elsewhere, used as it is */
static Datum
update_hash(FunctionCallInfo fcinfo, bool add)
{
	bytea	   *v = chll_getarg(fcinfo, 0, true);

	if (!PG_ARGISNULL(1))
	{
		uint64		h = (uint64) PG_GETARG_INT64(1);

		apply_hash(v, h, add);
	}
	PG_RETURN_BYTEA_P(chll_result(v));
}

Datum
chll_add_hash_sql(PG_FUNCTION_ARGS)
{
	return update_hash(fcinfo, true);
}

Datum
chll_remove_hash_sql(PG_FUNCTION_ARGS)
{
	return update_hash(fcinfo, false);
}

Datum
chll_hash(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) hash_arg(fcinfo, 0));
}

/* dst += src, with the ERROR for sketches that cannot be combined */
static void
union_into(bytea *dst, bytea *src)
{
	int			ldst = chll_log2m(CHLL_BYTES(dst));
	int			lsrc = chll_log2m(CHLL_BYTES(src));

	if (ldst != lsrc)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine chll sketches with different bucket counts"),
				 errdetail("The sketches have %d and %d buckets.", 1 << ldst, 1 << lsrc),
				 errhint("Build the sketches with the same bucket count, e.g. chll_agg(value, %d).",
						 1 << Max(ldst, lsrc))));
	chll_report(chll_union_into(CHLL_BYTES(dst), CHLL_BYTES(src)),
				CHLL_BYTES(dst));
}

Datum
chll_union(PG_FUNCTION_ARGS)
{
	bytea	   *a = chll_getarg(fcinfo, 0, true);
	bytea	   *b = chll_getarg(fcinfo, 1, false);

	union_into(a, b);
	PG_RETURN_BYTEA_P(chll_result(a));
}

/* ----------------------------------------------------------------
 * Reading sketches
 * ----------------------------------------------------------------
 */

Datum
chll_estimate(PG_FUNCTION_ARGS)
{
	bytea	   *v = chll_getarg(fcinfo, 0, false);

	PG_RETURN_FLOAT8(chll_estimate_sketch(CHLL_BYTES(v)));
}

/* The HLL counters' estimate, even while the exact set holds the answer */
Datum
chll_estimate_counters(PG_FUNCTION_ARGS)
{
	bytea	   *v = chll_getarg(fcinfo, 0, false);

	PG_RETURN_FLOAT8(chll_estimate_hll(CHLL_BYTES(v)));
}

static int64
clamp_int64(uint64 x)
{
	return x > (uint64) PG_INT64_MAX ? PG_INT64_MAX : (int64) x;
}

Datum
chll_info(PG_FUNCTION_ARGS)
{
	bytea	   *v = chll_getarg(fcinfo, 0, false);
	const uint8 *sk = CHLL_BYTES(v);
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int32GetDatum(1 << chll_log2m(sk));
	values[1] = Int64GetDatum(clamp_int64(chll_total(sk)));
	values[2] = Float8GetDatum(chll_estimate_sketch(sk));
	values[3] = BoolGetDatum((sk[CHLL_OFF_FLAGS] & CHLL_FLAG_APPROX) == 0);
	values[4] = Int32GetDatum(chll_get16(sk + CHLL_OFF_OVF_USED));
	values[5] = Int32GetDatum(chll_get16(sk + CHLL_OFF_OVF_CAPACITY));
	values[6] = Int32GetDatum((int32) (VARSIZE(v) - VARHDRSZ));
	values[7] = BoolGetDatum(!chll_set_lost(sk));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/* One row per nonzero counter: where it is, its byte, its count */
Datum
chll_counters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bytea	   *v = chll_getarg(fcinfo, 0, false);
	const uint8 *sk = CHLL_BYTES(v);
	int			m = 1 << chll_log2m(sk);

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < m; i++)
		for (int z = 0; z < CHLL_SLOTS; z++)
		{
			Datum		values[5];
			bool		nulls[5] = {false};
			int			raw;
			uint64		count;
			bool		exact;

			if (!chll_slot(sk, i, z, &raw, &count, &exact))
				chll_report(CHLL_CORRUPT, sk);
			if (raw == 0)
				continue;
			values[0] = Int32GetDatum(i);
			values[1] = Int32GetDatum(z);
			values[2] = Int32GetDatum(raw);
			values[3] = Int64GetDatum(clamp_int64(count));
			values[4] = BoolGetDatum(exact);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * Aggregates.  The state is a chll value in the aggregate context,
 * changed in place; the final function hands out a copy, because a window
 * aggregate goes on changing its state after returning a result.
 * ----------------------------------------------------------------
 */

static MemoryContext
agg_context(FunctionCallInfo fcinfo)
{
	MemoryContext aggctx;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s() is a support function of the chll aggregates and cannot be called directly",
						get_func_name(fcinfo->flinfo->fn_oid)),
				 errhint("Use chll_agg(), chll_union_agg(), chll_add() or chll_union().")));
	return aggctx;
}

/* A copy of a (possibly toasted) sketch argument in cxt */
static bytea *
copy_into(MemoryContext cxt, FunctionCallInfo fcinfo, int argno)
{
	bytea	   *v = chll_getarg(fcinfo, argno, false);
	bytea	   *copy = MemoryContextAlloc(cxt, VARSIZE(v));

	memcpy(copy, v, VARSIZE(v));
	return copy;
}

/* chll_agg(value [, buckets]) */
Datum
chll_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo);
	int			log2m = CHLL_DEFAULT_LOG2M;
	bytea	   *state;

	if (PG_NARGS() > 2)
		log2m = log2m_for_buckets(fcinfo, 2);
	if (PG_ARGISNULL(0))
		state = chll_new(aggctx, log2m);
	else
	{
		state = (bytea *) PG_GETARG_POINTER(0);
		if (chll_log2m(CHLL_BYTES(state)) != log2m)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the bucket count of chll_agg() changed from %d to %d",
							1 << chll_log2m(CHLL_BYTES(state)), 1 << log2m),
					 errhint("Pass the same bucket count for every row.")));
	}
	if (!PG_ARGISNULL(1))
		apply_hash(state, hash_arg(fcinfo, 1), true);
	PG_RETURN_BYTEA_P(state);
}

/*
 * Combine two partial states (parallel aggregation); also the transition
 * function of chll_union_agg(), which skips NULL sketches.
 */
Datum
chll_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo);
	bytea	   *state;

	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	if (PG_ARGISNULL(0))
		PG_RETURN_BYTEA_P(copy_into(aggctx, fcinfo, 1));
	state = (bytea *) PG_GETARG_POINTER(0);
	union_into(state, chll_getarg(fcinfo, 1, false));
	PG_RETURN_BYTEA_P(state);
}

Datum
chll_agg_final(PG_FUNCTION_ARGS)
{
	(void) agg_context(fcinfo);
	PG_RETURN_BYTEA_P(chll_result(copy_into(CurrentMemoryContext, fcinfo, 0)));
}
