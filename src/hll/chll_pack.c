/*-------------------------------------------------------------------------
 *
 * chll_pack.c
 *	  The packed form of a chll value: what a table, a dump or a client
 *	  gets of a sketch that is mostly zero bytes.
 *
 * A flat sketch has a fixed size (38,592 bytes for 512 buckets), and a
 * sketch of a few values is almost all zeros: empty buckets, unused
 * overflow entries and set slots.  The packed form is the flat header with
 * CHLL_FLAG_PACKED, then the rest of the flat bytes as runs: a varint count
 * of zero bytes, a varint count of literal bytes, the literal bytes, again
 * and again until the flat size is reached exactly.  Varints are unsigned
 * LEB128 (7 bits a byte, low first, the high bit saying more follow).  See
 * src/hll/README, "Packed form".
 *
 * The functions that change sketches work on the flat form only: chll_io.c
 * unpacks every argument and packs what the SQL functions return.  Like
 * chll_sketch.c, nothing here allocates or raises an ERROR.
 *
 *-------------------------------------------------------------------------
 */
#include "hll/chll.h"

/* Zero runs shorter than this stay inside a literal run: cheaper there */
#define CHLL_PACK_MIN_ZEROS		4

static inline Size
varint_size(Size v)
{
	Size		n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8 *
varint_put(uint8 *p, Size v)
{
	while (v >= 0x80)
	{
		*p++ = (uint8) (v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8) v;
	return p;
}

/* Reads a varint of at most 5 bytes from [*p, end); false if cut or too long */
static inline bool
varint_get(const uint8 **p, const uint8 *end, Size *v)
{
	Size		r = 0;

	for (int shift = 0; shift < 35; shift += 7)
	{
		uint8		b;

		if (*p >= end)
			return false;
		b = *(*p)++;
		r |= (Size) (b & 0x7F) << shift;
		if ((b & 0x80) == 0)
		{
			*v = r;
			return true;
		}
	}
	return false;
}

/* Zero bytes from body[i] on, up to n */
static Size
zeros_at(const uint8 *body, Size i, Size n)
{
	Size		j = i;

	while (j < n && body[j] == 0)
		j++;
	return j - i;
}

/*
 * The runs of body[0, n): calls emit(zeros, literal, nlit) for each, and
 * returns the packed size of the runs.  One walk serves both the size and
 * the writing, so the two cannot disagree.
 */
static Size
walk_runs(const uint8 *body, Size n, uint8 *out)
{
	Size		size = 0;
	Size		i = 0;

	while (i < n)
	{
		Size		zeros = zeros_at(body, i, n);
		Size		lit = i + zeros;
		Size		end = lit;

		/* the literal ends where a long enough zero run, or the body, starts */
		while (end < n)
		{
			Size		z = zeros_at(body, end, n);

			if (z >= CHLL_PACK_MIN_ZEROS || end + z == n)
				break;
			end += Max(z, 1);
		}
		size += varint_size(zeros) + varint_size(end - lit) + (end - lit);
		if (out != NULL)
		{
			out = varint_put(out, zeros);
			out = varint_put(out, end - lit);
			memcpy(out, body + lit, end - lit);
			out += end - lit;
		}
		i = end;
	}
	return size;
}

/* The packed size of the flat sketch sk (whose header has been checked) */
Size
chll_packed_size(const uint8 *sk)
{
	Size		len = chll_sketch_size(chll_log2m(sk));

	return CHLL_HEADER_SIZE + walk_runs(sk + CHLL_HEADER_SIZE, len - CHLL_HEADER_SIZE, NULL);
}

/* Packs the flat sketch sk into out, which has chll_packed_size(sk) bytes */
void
chll_pack(const uint8 *sk, uint8 *out)
{
	Size		len = chll_sketch_size(chll_log2m(sk));

	memcpy(out, sk, CHLL_HEADER_SIZE);
	out[CHLL_OFF_FLAGS] |= CHLL_FLAG_PACKED;
	walk_runs(sk + CHLL_HEADER_SIZE, len - CHLL_HEADER_SIZE, out + CHLL_HEADER_SIZE);
}

/*
 * Unpacks in[0, inlen), a packed value, into out, the flat sketch of
 * outlen bytes its header's bucket count gives; false if the runs do not
 * fill exactly that or anything follows them.  The flat result still
 * needs the caller's chll_validate().
 */
bool
chll_unpack(const uint8 *in, Size inlen, uint8 *out, Size outlen)
{
	const uint8 *p = in + CHLL_HEADER_SIZE;
	const uint8 *end = in + inlen;
	Size		o = CHLL_HEADER_SIZE;

	if (inlen < CHLL_HEADER_SIZE || outlen < CHLL_HEADER_SIZE)
		return false;
	memcpy(out, in, CHLL_HEADER_SIZE);
	out[CHLL_OFF_FLAGS] &= ~CHLL_FLAG_PACKED;
	while (p < end)
	{
		Size		zeros;
		Size		nlit;

		if (!varint_get(&p, end, &zeros) || zeros > outlen - o)
			return false;
		memset(out + o, 0, zeros);
		o += zeros;
		if (!varint_get(&p, end, &nlit) || nlit > outlen - o ||
			nlit > (Size) (end - p))
			return false;
		memcpy(out + o, p, nlit);
		o += nlit;
		p += nlit;
	}
	return o == outlen;
}
