/*-------------------------------------------------------------------------
 *
 * chll_io.c
 *	  Text and binary I/O of the chll type, and the argument handling that
 *	  every chll SQL function shares.
 *
 * Both external forms carry the sketch bytes as they are (chll.h): the
 * text form is "\x" and their hexadecimal digits, the binary form is the
 * bytes.  The first byte is the format version.  Input is checked in full
 * by chll_validate(), and so is every value a function reads
 * (chll_getarg): what storage holds can still be corrupt (a damaged disk,
 * a binary-coercible cast from bytea), and the core functions trust
 * consistent bytes.
 *
 * These functions touch neither shared memory nor WAL, so they do not call
 * abt_require_preload(): a table of sketches stays readable without the
 * preload (src/hll/README).
 *
 *-------------------------------------------------------------------------
 */
#include "hll/chll.h"

#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(chll_in);
PG_FUNCTION_INFO_V1(chll_out);
PG_FUNCTION_INFO_V1(chll_recv);
PG_FUNCTION_INFO_V1(chll_send);

/*
 * Soft errors for input (pg_input_is_valid(), COPY ... ON_ERROR) exist from
 * PostgreSQL 16 on; before that an input error is an ERROR.
 */
#if PG_VERSION_NUM >= 160000
#define chll_input_error(fcinfo, rest) ereturn((fcinfo)->context, (Datum) 0, rest)
#else
#define chll_input_error(fcinfo, rest) ereport(ERROR, rest)
#endif

#define CHLL_INPUT_HINT \
	"A chll value is written as \\x followed by the hexadecimal digits of its bytes, as chll output prints it; new sketches come from chll_create() or chll_agg()."

/* An empty sketch in cxt */
bytea *
chll_new(MemoryContext cxt, int log2m)
{
	Size		len = chll_sketch_size(log2m);
	bytea	   *v = MemoryContextAlloc(cxt, VARHDRSZ + len);

	SET_VARSIZE(v, VARHDRSZ + len);
	chll_init(CHLL_BYTES(v), log2m);
	return v;
}

/*
 * Format 1 (abtree 0.1) is format 2 without the exact set: the same header,
 * buckets and overflow entries, the set's flag unknown.  A format-1 value
 * (stored by 0.1, or in a dump 0.1 made) is read as the format-2 value that
 * counts the same with its set given up, or, when it is empty, with an
 * empty set, which is exact.  Nothing is lost: the set only ever adds
 * knowledge to the counters.  Anything else is returned as it is, for the
 * caller's checks.  The result is written back in format 2 when changed.
 */
#define CHLL_V1_SIZE(log2m)		chll_set_offset(log2m)

static bytea *
chll_read_format1(bytea *v)
{
	const uint8 *sk = CHLL_BYTES(v);
	Size		len = VARSIZE(v) - VARHDRSZ;
	int			log2m;
	bytea	   *nv;
	uint8	   *nsk;

	if (len < CHLL_HEADER_SIZE || sk[CHLL_OFF_VERSION] != 1)
		return v;
	log2m = sk[CHLL_OFF_LOG2M];
	if (log2m < CHLL_MIN_LOG2M || log2m > CHLL_MAX_LOG2M ||
		len != CHLL_V1_SIZE(log2m) ||
		(sk[CHLL_OFF_FLAGS] & ~CHLL_FLAG_APPROX) != 0)
		return v;
	nv = palloc0(VARHDRSZ + chll_sketch_size(log2m));
	SET_VARSIZE(nv, VARHDRSZ + chll_sketch_size(log2m));
	nsk = CHLL_BYTES(nv);
	memcpy(nsk, sk, len);
	nsk[CHLL_OFF_VERSION] = CHLL_FORMAT_VERSION;
	if (chll_total(nsk) != 0)
		nsk[CHLL_OFF_FLAGS] |= CHLL_FLAG_SET_LOST;
	/* format 1 did not say where removals hit approximate counts */
	if (nsk[CHLL_OFF_FLAGS] & CHLL_FLAG_APPROX)
		nsk[CHLL_OFF_LOSSY_Z] = CHLL_SLOTS;
	return nv;
}

/*
 * The flat form of a value from outside (input, a table, a dump): format 1
 * converted, the packed form unpacked.  NULL if its packed runs do not
 * make a sketch of its bucket count.  The result still needs the caller's
 * checks of the flat bytes.
 */
bytea *
chll_flatten(bytea *v)
{
	const uint8 *sk;
	Size		len;
	Size		flatlen;
	bytea	   *flat;

	v = chll_read_format1(v);
	sk = CHLL_BYTES(v);
	len = VARSIZE(v) - VARHDRSZ;
	if (len < CHLL_HEADER_SIZE || sk[CHLL_OFF_VERSION] != CHLL_FORMAT_VERSION ||
		(sk[CHLL_OFF_FLAGS] & CHLL_FLAG_PACKED) == 0)
		return v;
	if (chll_log2m(sk) < CHLL_MIN_LOG2M || chll_log2m(sk) > CHLL_MAX_LOG2M)
		return NULL;
	flatlen = chll_sketch_size(chll_log2m(sk));
	flat = palloc(VARHDRSZ + flatlen);
	SET_VARSIZE(flat, VARHDRSZ + flatlen);
	if (!chll_unpack(sk, len, CHLL_BYTES(flat), flatlen))
	{
		pfree(flat);
		return NULL;
	}
	return flat;
}

/*
 * What a SQL function returns of the flat sketch v: its packed form where
 * that is smaller (every sketch but a full one), else v.
 */
bytea *
chll_result(bytea *v)
{
	const uint8 *sk = CHLL_BYTES(v);
	Size		packed;
	bytea	   *p;

	if ((sk[CHLL_OFF_FLAGS] & CHLL_FLAG_PACKED) != 0)
		return v;
	packed = chll_packed_size(sk);
	if (packed >= VARSIZE(v) - VARHDRSZ)
		return v;
	p = palloc(VARHDRSZ + packed);
	SET_VARSIZE(p, VARHDRSZ + packed);
	chll_pack(sk, CHLL_BYTES(p));
	return p;
}

#define CHLL_PACKED_DETAIL "The packed runs of the value do not make a sketch of its bucket count."

/*
 * A sketch argument, detoasted (and copied, to change it), flat, and
 * validated in full: the core functions assert what consistent bytes
 * guarantee (an overflow entry for every overflow marker and no other, a
 * free entry when the array is not full), and corrupt stored bytes must
 * end in an ERROR, not in a failed assertion or a write past the overflow
 * array.  The walk costs about what unpacking does.  NULL is an ERROR: a
 * function that changes a sketch must not silently turn it into NULL.
 */
bytea *
chll_getarg(FunctionCallInfo fcinfo, int argno, bool copy)
{
	bytea	   *v;
	char		why[256];

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the chll sketch passed to %s() must not be NULL",
						get_func_name(fcinfo->flinfo->fn_oid)),
				 errhint("Start a sketch with chll_create(); chll_union_agg() merges sketches that may be NULL.")));
	if (copy)
		v = (bytea *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(argno));
	else
		v = (bytea *) PG_DETOAST_DATUM(PG_GETARG_DATUM(argno));
	v = chll_flatten(v);
	if (v == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt chll value"),
				 errdetail(CHLL_PACKED_DETAIL),
				 errhint("Rebuild the sketch from its data.")));
	if (!chll_validate(CHLL_BYTES(v), VARSIZE(v) - VARHDRSZ, why, sizeof(why)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt chll value"),
				 errdetail_internal("%s", why),
				 errhint("Rebuild the sketch from its data.")));
	return v;
}

/* The ERROR for a status other than CHLL_OK of an operation on sk */
void
chll_report(ChllStatus st, const uint8 *sk)
{
	if (st == CHLL_NOT_PRESENT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot remove a value that the chll sketch does not contain"),
				 chll_total(sk) == 0 ?
				 errdetail("The sketch is empty.") :
				 !chll_set_lost(sk) ?
				 errdetail("The sketch lists every distinct value it holds, and this one is not among them.") :
				 errdetail("Nothing was added to the value's bucket, or every count in the sketch is exact and nothing was added under the value's bucket and leading-zero count."),
				 errhint("Remove only values that were added to the sketch.")));
	if (st == CHLL_CORRUPT)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt chll value"),
				 errdetail("A counter byte is invalid or does not match the overflow entries."),
				 errhint("Rebuild the sketch from its data.")));
}

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

Datum
chll_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	Size		slen = strlen(str);
	Size		len;
	bytea	   *v;
	char		why[256];

	if (slen < 2 || str[0] != '\\' || str[1] != 'x')
		chll_input_error(fcinfo,
						 (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						  errmsg("invalid input syntax for type chll"),
						  errdetail("The value does not start with \\x."),
						  errhint(CHLL_INPUT_HINT)));
	if ((slen - 2) % 2 != 0)
		chll_input_error(fcinfo,
						 (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						  errmsg("invalid input syntax for type chll"),
						  errdetail("The value has an odd number of hexadecimal digits."),
						  errhint(CHLL_INPUT_HINT)));
	len = (slen - 2) / 2;
	if (len > chll_sketch_size(CHLL_MAX_LOG2M))
		chll_input_error(fcinfo,
						 (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						  errmsg("invalid input syntax for type chll"),
						  errdetail("The value has %zu bytes; the largest chll value has %zu.",
									len, chll_sketch_size(CHLL_MAX_LOG2M)),
						  errhint(CHLL_INPUT_HINT)));

	v = palloc(VARHDRSZ + len);
	SET_VARSIZE(v, VARHDRSZ + len);
	for (Size i = 0; i < len; i++)
	{
		int			hi = hex_value(str[2 + 2 * i]);
		int			lo = hex_value(str[3 + 2 * i]);

		if (hi < 0 || lo < 0)
			chll_input_error(fcinfo,
							 (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							  errmsg("invalid input syntax for type chll"),
							  errdetail("Character %zu is not a hexadecimal digit.",
										hi < 0 ? 3 + 2 * i : 4 + 2 * i),
							  errhint(CHLL_INPUT_HINT)));
		CHLL_BYTES(v)[i] = (uint8) ((hi << 4) | lo);
	}

	v = chll_flatten(v);
	if (v == NULL)
		chll_input_error(fcinfo,
						 (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						  errmsg("invalid chll value"),
						  errdetail(CHLL_PACKED_DETAIL),
						  errhint(CHLL_INPUT_HINT)));
	len = VARSIZE(v) - VARHDRSZ;
	if (!chll_validate(CHLL_BYTES(v), len, why, sizeof(why)))
		chll_input_error(fcinfo,
						 (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						  errmsg("invalid chll value"),
						  errdetail_internal("%s", why),
						  errhint(CHLL_INPUT_HINT)));
	PG_RETURN_BYTEA_P(chll_result(v));
}

/*
 * The bytes the output functions write: the value as stored (packed, as
 * every function returns it), or, for a format-1 value, its format-2
 * reading.  Not validated: a dump must not stop at a corrupt value; its
 * restore refuses it.
 */
static bytea *
chll_output_form(FunctionCallInfo fcinfo)
{
	bytea	   *v = (bytea *) PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	bytea	   *v2 = chll_read_format1(v);

	return v2 == v ? v : chll_result(v2);
}

Datum
chll_out(PG_FUNCTION_ARGS)
{
	bytea	   *v = chll_output_form(fcinfo);
	Size		len = VARSIZE(v) - VARHDRSZ;
	char	   *out = palloc(2 * len + 3);

	out[0] = '\\';
	out[1] = 'x';
	hex_encode(VARDATA(v), len, out + 2);
	out[2 * len + 2] = '\0';
	PG_RETURN_CSTRING(out);
}

Datum
chll_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	bytea	   *v;
	char		why[256];

	if ((Size) len > chll_sketch_size(CHLL_MAX_LOG2M))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary chll value"),
				 errdetail("The value has %d bytes; the largest chll value has %zu.",
						   len, chll_sketch_size(CHLL_MAX_LOG2M)),
				 errhint("The binary form of a chll value is its bytes, as chll_send() produces them.")));
	v = palloc(VARHDRSZ + len);
	SET_VARSIZE(v, VARHDRSZ + len);
	pq_copymsgbytes(buf, VARDATA(v), len);
	v = chll_flatten(v);
	if (v == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary chll value"),
				 errdetail(CHLL_PACKED_DETAIL),
				 errhint("The binary form of a chll value is its bytes, as chll_send() produces them.")));
	len = VARSIZE(v) - VARHDRSZ;
	if (!chll_validate(CHLL_BYTES(v), len, why, sizeof(why)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary chll value"),
				 errdetail_internal("%s", why),
				 errhint("The binary form of a chll value is its bytes, as chll_send() produces them.")));
	PG_RETURN_BYTEA_P(chll_result(v));
}

Datum
chll_send(PG_FUNCTION_ARGS)
{
	bytea	   *v = chll_output_form(fcinfo);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA(v), VARSIZE(v) - VARHDRSZ);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}
