/*-------------------------------------------------------------------------
 *
 * abtxlog.c
 *	  WAL records of the abtree index AM: writing, redo, description, mask.
 *
 * Small logical records for the frequent changes (a leaf insert, a weight
 * added to a downlink, entries removed by VACUUM) and full-page images for
 * the structural ones (splits, new roots), whose redo then only restores
 * images.  Redo reads no catalog.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/bufmask.h"
#include "access/xloginsert.h"
#include "access/xlogutils.h"

typedef struct xl_abt_insert_leaf
{
	OffsetNumber off;
} xl_abt_insert_leaf;

typedef struct xl_abt_add_weight
{
	int64		delta;
	OffsetNumber off;
} xl_abt_add_weight;

typedef struct xl_abt_pages
{
	uint8		reason;			/* ABT_PAGES_* */
} xl_abt_pages;

typedef struct xl_abt_vacuum
{
	uint16		ndeleted;		/* offsets follow as block data */
} xl_abt_vacuum;

static const char *
abt_pages_reason(uint8 reason)
{
	switch (reason)
	{
		case ABT_PAGES_SPLIT:
			return "split";
		case ABT_PAGES_NEWROOT:
			return "new root";
		case ABT_PAGES_FIRSTROOT:
			return "first root";
	}
	return "?";
}

/* ---- writing; callers are in a critical section, buffers locked ---- */

void
abt_xlog_insert_leaf(Buffer buf, OffsetNumber off, IndexTuple itup)
{
	xl_abt_insert_leaf xlrec;
	XLogRecPtr	lsn;

	xlrec.off = off;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) itup, IndexTupleSize(itup));
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_INSERT_LEAF);
	PageSetLSN(BufferGetPage(buf), lsn);
}

void
abt_xlog_add_weight(Buffer buf, OffsetNumber off, int64 delta)
{
	xl_abt_add_weight xlrec;
	XLogRecPtr	lsn;

	xlrec.delta = delta;
	xlrec.off = off;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_ADD_WEIGHT);
	PageSetLSN(BufferGetPage(buf), lsn);
}

/* Images of up to four pages, registered in the order they were locked. */
void
abt_xlog_pages(uint8 reason, Buffer *bufs, int nbufs)
{
	xl_abt_pages xlrec;
	XLogRecPtr	lsn;
	int			i;

	Assert(nbufs <= XLR_NORMAL_MAX_BLOCK_ID);
	xlrec.reason = reason;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	for (i = 0; i < nbufs; i++)
		XLogRegisterBuffer(i, bufs[i], REGBUF_STANDARD | REGBUF_FORCE_IMAGE);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_PAGES);
	for (i = 0; i < nbufs; i++)
		PageSetLSN(BufferGetPage(bufs[i]), lsn);
}

void
abt_xlog_vacuum(Buffer buf, OffsetNumber *offs, int noffs)
{
	xl_abt_vacuum xlrec;
	XLogRecPtr	lsn;

	xlrec.ndeleted = noffs;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) offs, noffs * sizeof(OffsetNumber));
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_VACUUM);
	PageSetLSN(BufferGetPage(buf), lsn);
}

/* ---- redo ---- */

static void
abt_redo_finish(XLogReaderState *record, Buffer buf)
{
	Page		page = BufferGetPage(buf);

	PageSetLSN(page, record->EndRecPtr);
	MarkBufferDirty(buf);
}

void
abt_redo_insert_leaf(XLogReaderState *record)
{
	xl_abt_insert_leaf *xlrec = (xl_abt_insert_leaf *) XLogRecGetData(record);
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Size		len;
		char	   *itup = XLogRecGetBlockData(record, 0, &len);
		Page		page = BufferGetPage(buf);

		if (PageAddItem(page, (Item) itup, len, xlrec->off, false, false) == InvalidOffsetNumber)
			elog(PANIC, "abtree redo: failed to add leaf item");
		AbtPageGetOpaque(page)->sid++;
		if (!TransactionIdIsValid(abt_leaf_xmin((IndexTuple) itup)))
			AbtPageGetOpaque(page)->flags |= ABTP_HAS_INVALID;
		abt_redo_finish(record, buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

void
abt_redo_add_weight(XLogReaderState *record)
{
	xl_abt_add_weight *xlrec = (xl_abt_add_weight *) XLogRecGetData(record);
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, xlrec->off));

		AbtPivotGetAux(itup)->weight += xlrec->delta;
		abt_redo_finish(record, buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

void
abt_redo_pages(XLogReaderState *record)
{
	Buffer		bufs[XLR_MAX_BLOCK_ID + 1];
	int			i;

	/* lock all, in the original order, before releasing any */
	for (i = 0; i <= XLogRecMaxBlockId(record); i++)
	{
		if (XLogReadBufferForRedo(record, i, &bufs[i]) != BLK_RESTORED)
			elog(PANIC, "abtree redo: page image %d missing", i);
	}
	for (i = 0; i <= XLogRecMaxBlockId(record); i++)
		UnlockReleaseBuffer(bufs[i]);
}

void
abt_redo_vacuum(XLogReaderState *record)
{
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Size		len;
		OffsetNumber *offs = (OffsetNumber *) XLogRecGetBlockData(record, 0, &len);
		Page		page = BufferGetPage(buf);

		PageIndexMultiDelete(page, offs, len / sizeof(OffsetNumber));
		AbtPageGetOpaque(page)->sid++;
		abt_redo_finish(record, buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/* ---- desc ---- */

static void
abt_desc_block(StringInfo buf, XLogReaderState *record, int block_id)
{
	BlockNumber blkno;

	XLogRecGetBlockTag(record, block_id, NULL, NULL, &blkno);
	appendStringInfo(buf, "blk %u", blkno);
}

void
abt_desc_insert_leaf(StringInfo buf, XLogReaderState *record)
{
	xl_abt_insert_leaf *xlrec = (xl_abt_insert_leaf *) XLogRecGetData(record);

	appendStringInfo(buf, "off %u", xlrec->off);
}

void
abt_desc_add_weight(StringInfo buf, XLogReaderState *record)
{
	xl_abt_add_weight *xlrec = (xl_abt_add_weight *) XLogRecGetData(record);

	appendStringInfo(buf, "off %u, delta " INT64_FORMAT, xlrec->off, xlrec->delta);
}

void
abt_desc_pages(StringInfo buf, XLogReaderState *record)
{
	xl_abt_pages *xlrec = (xl_abt_pages *) XLogRecGetData(record);
	int			i;

	appendStringInfo(buf, "%s:", abt_pages_reason(xlrec->reason));
	for (i = 0; i <= XLogRecMaxBlockId(record); i++)
	{
		appendStringInfoChar(buf, ' ');
		abt_desc_block(buf, record, i);
	}
}

void
abt_desc_vacuum(StringInfo buf, XLogReaderState *record)
{
	xl_abt_vacuum *xlrec = (xl_abt_vacuum *) XLogRecGetData(record);

	appendStringInfo(buf, "ndeleted %u", xlrec->ndeleted);
}

/*
 * wal_consistency_checking: besides the usual, the SID and RID counters may
 * differ (the paper's protocol changes them outside WAL).
 */
void
abt_mask(char *pagedata, BlockNumber blkno)
{
	Page		page = (Page) pagedata;
	AbtPageOpaque opaque;
	OffsetNumber off;

	mask_page_lsn_and_checksum(page);
	mask_page_hint_bits(page);
	mask_unused_space(page);

	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(AbtPageOpaqueData)))
		return;
	opaque = AbtPageGetOpaque(page);
	if (opaque->page_id != ABT_PAGE_ID)
		return;
	opaque->sid = 0;
	if (AbtPageIsLeaf(opaque) || (opaque->flags & ABTP_META))
		return;
	for (off = FirstOffsetNumber; off <= PageGetMaxOffsetNumber(page); off++)
	{
		ItemId		iid = PageGetItemId(page, off);

		if (ItemIdIsUsed(iid))
			AbtPivotGetAux((IndexTuple) PageGetItem(page, iid))->rid = 0;
	}
}
