/*-------------------------------------------------------------------------
 *
 * abtsketchxlog.c
 *	  WAL of sketch changes: the changed bytes of each sketch page an
 *	  operation changed, as runs, and their redo (split from abtsketch.c).
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "hll/chll.h"

#include "access/xloginsert.h"
#include "access/xlogutils.h"
#include "port/pg_bitutils.h"

/* Redo data of a head page: the header, then changed entries lo..hi-1 */
typedef struct AbtSketchHeadData
{
	uint16		lo;
	uint16		hi;
} AbtSketchHeadData;

/*
 * Redo data of a sketch page (since issue 22): ABT_SKETCH_RUNS, then runs,
 * each a uint16 offset into the page's sketch bytes, a uint16 length and
 * that many bytes, applied in any order (they do not overlap).  An insert
 * changes a byte or two of its bucket and a few of the header: the runs
 * carry those instead of the whole header and bucket record (88 bytes of
 * WAL per insert before, about 30 now).  The tag cannot begin the older
 * formats, which redo still reads: a head page's data began with the
 * header's version byte (1), a chunk's with a little-endian record count
 * (at most ABT_SKETCH_PER_CHUNK < 255).
 */
#define ABT_SKETCH_RUNS		0xFF
#define ABT_RUN_HDR			(2 * sizeof(uint16))

StaticAssertDecl(ABT_SKETCH_PER_CHUNK < ABT_SKETCH_RUNS, "run tag is not a record count");
StaticAssertDecl(CHLL_FORMAT_VERSION != ABT_SKETCH_RUNS, "run tag is not a version");
StaticAssertDecl(CHLL_HEADER_SIZE == 24 && CHLL_BUCKET_SIZE == 4 + 32, "AbtSketchCol's sizes");

static void
abt_run_header(uint8 *dst, int off, int len)
{
	uint16		h[2] = {(uint16) off, (uint16) len};

	memcpy(dst, h, ABT_RUN_HDR);
}

/* Append the run now[start..end) to buf at *len, placed at offset off */
static inline void
abt_run_emit(uint8 *buf, int *len, const uint8 *now, int start, int end, int off)
{
	abt_run_header(buf + *len, off + start, end - start);
	memcpy(buf + *len + ABT_RUN_HDR, now + start, end - start);
	*len += ABT_RUN_HDR + end - start;
}

/*
 * Byte j differs: it extends the open run [*start, *end) if fewer than
 * ABT_RUN_HDR equal bytes lie between (a run header costs as much), else
 * the open run goes into buf and j starts the next.
 */
static inline void
abt_run_add_byte(uint8 *buf, int *len, const uint8 *now, int *start, int *end, int j, int off)
{
	if (*start >= 0 && j - *end < (int) ABT_RUN_HDR)
	{
		*end = j + 1;
		return;
	}
	if (*start >= 0)
		abt_run_emit(buf, len, now, *start, *end, off);
	*start = j;
	*end = j + 1;
}

/*
 * Append to buf at *len the runs of now[0..n) that differ from before,
 * placed at offset off; gaps of fewer than ABT_RUN_HDR equal bytes are
 * bridged.  At most 2n + 4 bytes.  A bucket's change is a few bytes of 36:
 * words are compared whole, and the differing bytes of a word found from
 * their XOR, without a test per byte (a byte loop that skipped equal
 * words was 0.96% of a COPY's profile, this 0.69%: copy_sketch_diff_ab.md).
 */
static void
abt_sketch_diff_runs(uint8 *buf, int *len, const uint8 *before, const uint8 *now, int n, int off)
{
	int			start = -1;		/* the open run is [start, end) */
	int			end = 0;
	int			i = 0;

#ifndef WORDS_BIGENDIAN
	for (; i + (int) sizeof(uint64) <= n; i += sizeof(uint64))
	{
		uint64		wb;
		uint64		wn;
		uint64		x;

		memcpy(&wb, before + i, sizeof(uint64));
		memcpy(&wn, now + i, sizeof(uint64));
		/* byte k of the word is bits 8k..8k+7 (little-endian) */
		for (x = wb ^ wn; x != 0;)
		{
			int			k = pg_rightmost_one_pos64(x) / 8;

			x &= ~((uint64) 0xFF << (k * 8));
			abt_run_add_byte(buf, len, now, &start, &end, i + k, off);
		}
	}
#endif
	for (; i < n; i++)
		if (before[i] != now[i])
			abt_run_add_byte(buf, len, now, &start, &end, i, off);
	if (start >= 0)
		abt_run_emit(buf, len, now, start, end, off);
}

/*
 * A page locked by abt_sketch_lock_batch: the changed bytes of each of its
 * n changed units (bucket records or set groups of size bytes, numbered
 * within the page), against before, the page's units as they were at lock
 * time.
 */
static void
abt_sketch_register_diffs(AbtSketchCol *c, int page, const uint8 *before, const uint16 *units,
						  int n, int size, int block_id)
{
	uint8	   *runs = c->runs[page];
	uint8	   *now = abt_sketch_data(BufferGetPage(c->bufs[page]));
	int			len = 1;

	runs[0] = ABT_SKETCH_RUNS;
	for (int j = 0; j < n; j++)
	{
		int			off = units[j] * size;

		abt_sketch_diff_runs(runs, &len, before + off, now + off, size, off);
	}
	XLogRegisterBufData(block_id, (char *) runs, len);
}

/* The head page: changed header bytes, then the changed overflow entries */
static void
abt_sketch_register_head(AbtSketchCol *c, int block_id)
{
	int			len = 1;
	int			lo = c->view.ovf_lo < c->view.ovf_hi ? c->view.ovf_lo : 0;
	int			hi = c->view.ovf_lo < c->view.ovf_hi ? c->view.ovf_hi : 0;

	XLogRegisterBuffer(block_id, c->bufs[0], REGBUF_STANDARD);
	c->head_runs[0] = ABT_SKETCH_RUNS;
	abt_sketch_diff_runs(c->head_runs, &len, c->hdr_before, c->view.hdr, CHLL_HEADER_SIZE, 0);
	if (hi > lo)
	{
		abt_run_header(c->head_runs + len, CHLL_HEADER_SIZE + lo * CHLL_ENTRY_SIZE,
					   (hi - lo) * CHLL_ENTRY_SIZE);
		len += ABT_RUN_HDR;
	}
	XLogRegisterBufData(block_id, (char *) c->head_runs, len);
	if (hi > lo)
		XLogRegisterBufData(block_id, (char *) c->view.ovf + lo * CHLL_ENTRY_SIZE,
							(hi - lo) * CHLL_ENTRY_SIZE);
}

/* A chunk page: the saved bucket's changed bytes, other buckets whole */
static void
abt_sketch_register_chunk(AbtSketchCol *c, int chunk, int block_id)
{
	uint16	   *idx = c->idx[chunk];
	uint8	   *data = c->view.chunk[chunk];
	int			len = 1;

	XLogRegisterBuffer(block_id, c->bufs[chunk + 1], REGBUF_STANDARD);
	if (c->view.bucket_before != NULL)
	{
		/* abt_sketch_lock_batch: the view kept each bucket before its change */
		abt_sketch_register_diffs(c, chunk + 1,
								  c->view.bucket_before +
								  (Size) chunk * ABT_SKETCH_PER_CHUNK * CHLL_BUCKET_SIZE,
								  idx + 1, idx[0], CHLL_BUCKET_SIZE, block_id);
		return;
	}
	c->bucket_runs[0] = ABT_SKETCH_RUNS;
	for (int j = 1; j <= idx[0]; j++)
	{
		if (chunk * ABT_SKETCH_PER_CHUNK + idx[j] == c->snap_bucket)
			abt_sketch_diff_runs(c->bucket_runs, &len, c->bucket_before,
								 data + idx[j] * CHLL_BUCKET_SIZE, CHLL_BUCKET_SIZE,
								 idx[j] * CHLL_BUCKET_SIZE);
	}
	XLogRegisterBufData(block_id, (char *) c->bucket_runs, len);
	for (int j = 1; j <= idx[0]; j++)
	{
		int			b = chunk * ABT_SKETCH_PER_CHUNK + idx[j];

		if (b == c->snap_bucket)
			continue;
		c->full_runs[b][0] = idx[j] * CHLL_BUCKET_SIZE;
		c->full_runs[b][1] = CHLL_BUCKET_SIZE;
		XLogRegisterBufData(block_id, (char *) c->full_runs[b], ABT_RUN_HDR);
		XLogRegisterBufData(block_id, (char *) data + idx[j] * CHLL_BUCKET_SIZE,
							CHLL_BUCKET_SIZE);
	}
}

/* A set page: the saved group's changed bytes, other groups whole */
static void
abt_sketch_register_set_page(const AbtSketchLayout *lay, AbtSketchCol *c, int s, int block_id)
{
	int			first;
	int			n = abt_sketch_set_groups(lay, s, &first);
	uint8	   *data = c->view.set[s];
	int			len = 1;

	XLogRegisterBuffer(block_id, c->bufs[lay->first_setpage + s], REGBUF_STANDARD);
	if (c->before[lay->first_setpage + s] != NULL)
	{
		uint16		groups[ABT_SKETCH_GROUPS_PER_PAGE];
		int			ng = 0;

		for (int g = first; g < first + n; g++)
			if (c->set_dirty[g / 8] & (1 << (g % 8)))
				groups[ng++] = g - first;
		abt_sketch_register_diffs(c, lay->first_setpage + s, c->before[lay->first_setpage + s],
								  groups, ng, CHLL_SET_GROUP_SIZE, block_id);
		return;
	}
	c->group_runs[0] = ABT_SKETCH_RUNS;
	if (c->snap_group >= first && c->snap_group < first + n)
	{
		int			off = (c->snap_group - first) * CHLL_SET_GROUP_SIZE;
		int			lo = c->view.set_range[0];
		int			hi = c->view.set_range[1];

		/* the key count, then only the slots the operation wrote */
		abt_sketch_diff_runs(c->group_runs, &len, c->group_before, data + off,
							 CHLL_SET_GROUP_HDR, off);
		if (lo <= hi)
		{
			int			from = CHLL_SET_GROUP_HDR + lo * CHLL_SET_SLOT_SIZE;

			abt_sketch_diff_runs(c->group_runs, &len, c->group_before + from,
								 data + off + from, (hi - lo + 1) * CHLL_SET_SLOT_SIZE,
								 off + from);
		}
	}
	XLogRegisterBufData(block_id, (char *) c->group_runs, len);
	for (int g = first; g < first + n; g++)
	{
		int			off = (g - first) * CHLL_SET_GROUP_SIZE;

		if (g == c->snap_group || (c->set_dirty[g / 8] & (1 << (g % 8))) == 0)
			continue;
		c->group_full_runs[g][0] = off;
		c->group_full_runs[g][1] = CHLL_SET_GROUP_SIZE;
		XLogRegisterBufData(block_id, (char *) c->group_full_runs[g], ABT_RUN_HDR);
		XLogRegisterBufData(block_id, (char *) data + off, CHLL_SET_GROUP_SIZE);
	}
}

/*
 * Register the changed sketch pages from block_id on; returns the next
 * free block id.  The bytes are read at XLogInsert, which must follow
 * before the locks go.
 */
int
abt_sketch_xlog_register(AbtSketchOp *op, int block_id)
{
	/* NULL: no sketches (pbtree) */
	for (int i = 0; op != NULL && i < op->ncols; i++)
	{
		AbtSketchCol *c = &op->cols[i];

		if (!c->changed)
			continue;
		abt_sketch_register_head(c, block_id++);
		for (int chunk = 0; chunk < op->lay.nchunks; chunk++)
		{
			if (c->idx[chunk][0] > 0)
				abt_sketch_register_chunk(c, chunk, block_id++);
		}
		for (int s = 0; s < op->lay.setpages; s++)
			if (abt_sketch_set_page_changed(&op->lay, c, s))
				abt_sketch_register_set_page(&op->lay, c, s, block_id++);
	}
	return block_id;
}

void
abt_sketch_set_lsn(AbtSketchOp *op, XLogRecPtr lsn)
{
	for (int i = 0; op != NULL && i < op->ncols; i++)
	{
		AbtSketchCol *c = &op->cols[i];

		if (!c->changed)
			continue;
		PageSetLSN(BufferGetPage(c->bufs[0]), lsn);
		for (int chunk = 0; chunk < op->lay.nchunks; chunk++)
			if (c->idx[chunk][0] > 0)
				PageSetLSN(BufferGetPage(c->bufs[chunk + 1]), lsn);
		for (int s = 0; s < op->lay.setpages; s++)
			if (abt_sketch_set_page_changed(&op->lay, c, s))
				PageSetLSN(BufferGetPage(c->bufs[op->lay.first_setpage + s]), lsn);
	}
}

/* ---- redo ---- */

static void
abt_sketch_redo_page(Page page, char *data, Size len)
{
	uint8	   *dst = abt_sketch_data(page);

	if (len > 0 && (uint8) data[0] == ABT_SKETCH_RUNS)
	{
		Size		pos = 1;

		while (pos + ABT_RUN_HDR <= len)
		{
			uint16		h[2];

			memcpy(h, data + pos, ABT_RUN_HDR);
			pos += ABT_RUN_HDR;
			if (pos + h[1] > len || h[0] + h[1] > ABT_SKETCH_SPACE)
				elog(PANIC, "abtree redo: sketch run out of bounds");
			memcpy(dst + h[0], data + pos, h[1]);
			pos += h[1];
		}
	}
	else if (AbtPageGetOpaque(page)->next == 0)
	{
		AbtSketchHeadData head;

		memcpy(dst, data, CHLL_HEADER_SIZE);
		memcpy(&head, data + CHLL_HEADER_SIZE, sizeof(head));
		memcpy(dst + CHLL_HEADER_SIZE + head.lo * CHLL_ENTRY_SIZE,
			   data + CHLL_HEADER_SIZE + sizeof(head),
			   (head.hi - head.lo) * CHLL_ENTRY_SIZE);
	}
	else
	{
		uint16		n;
		char	   *rec;

		memcpy(&n, data, sizeof(uint16));
		rec = data + (n + 1) * sizeof(uint16);
		for (int j = 1; j <= n; j++)
		{
			uint16		idx;

			memcpy(&idx, data + j * sizeof(uint16), sizeof(uint16));
			memcpy(dst + idx * CHLL_BUCKET_SIZE, rec, CHLL_BUCKET_SIZE);
			rec += CHLL_BUCKET_SIZE;
		}
	}
}

/* Blocks first_block_id.. of a record are sketch pages: bufs[] keeps them */
void
abt_sketch_redo(XLogReaderState *record, int first_block_id, Buffer *bufs)
{
	for (int id = first_block_id; id <= XLogRecMaxBlockId(record); id++)
	{
		if (XLogReadBufferForRedo(record, id, &bufs[id]) == BLK_NEEDS_REDO)
		{
			Size		len;
			char	   *data = XLogRecGetBlockData(record, id, &len);
			Page		page = BufferGetPage(bufs[id]);

			abt_sketch_redo_page(page, data, len);
			PageSetLSN(page, record->EndRecPtr);
			MarkBufferDirty(bufs[id]);
		}
	}
}
