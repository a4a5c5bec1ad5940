/*-------------------------------------------------------------------------
 *
 * abtxlog.c
 *	  WAL records of the abtree index AM: writing, redo, description, mask.
 *
 * Small logical records for the frequent changes (a leaf insert, a weight
 * added to a downlink, entries removed by VACUUM) and full-page images for
 * the structural ones (new roots), whose redo then only restores images.
 * A split logs images of its two halves only: the parent's new downlink
 * and the right sibling's left-link are logical (issue 22: the images of
 * those two full pages were most of a split's WAL).  Redo reads no catalog.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/bufmask.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlogutils.h"
#include "utils/rel.h"

typedef struct xl_abt_insert_leaf
{
	OffsetNumber off;
} xl_abt_insert_leaf;

/*
 * SET_WEIGHT: block 0's downlink at off gets weight; blocks 1 and up, if
 * any, are the pages above block 0 up to the root, on which redo
 * recomputes the downlink to the block below (README, "Standbys").
 * weighted was padding before those blocks existed and is read only when
 * they do.
 */
typedef struct xl_abt_set_weight
{
	uint64		weight;
	OffsetNumber off;
	bool		weighted;		/* only with blocks above block 0 */
} xl_abt_set_weight;

typedef struct xl_abt_pages
{
	uint8		reason;			/* ABT_PAGES_* */
} xl_abt_pages;

/*
 * SPLIT: block 0 the parent, whose downlink at off to the left half gets
 * weight and rid and which gets the new downlink to the right half (block
 * 0's data) at off + 1; blocks 1 and 2 the left and right halves.  The
 * right half is an image.  So is the left half of an internal page, whose
 * downlinks carry adds that WAL never saw; a leaf's left half is block 1's
 * data instead, its new high key and the split offset, from which redo
 * builds it out of the old page (abt_split_fill_left; records before
 * issue 22's change imaged it, and have no block 1 data).  Block 3, if
 * there is one, the old right sibling, whose left-link becomes
 * block 2; blocks 4 and up, if any, the pages above the parent up to the
 * root, parent side first, on which redo recomputes the downlink to the
 * block below (src/abtree/README, "Standbys").  weighted takes what was
 * padding before those blocks existed: it is read only when they do, so
 * the older records (no blocks above 3) replay as before.
 */
typedef struct xl_abt_split
{
	uint64		weight;
	uint16		rid;
	OffsetNumber off;
	bool		weighted;		/* only with blocks above the parent */
} xl_abt_split;

/* how many pages above the parent a SPLIT record names */
static int
abt_split_nup(XLogReaderState *record)
{
	return Max(0, XLogRecMaxBlockId(record) - ABT_SPLIT_FIRST_UP + 1);
}

/*
 * PATH: block 0 an internal page, blocks 1 .. npath the pages above it up
 * to the root, held exclusively by the writer.  Nothing changes on the
 * primary; redo recomputes each path page's downlink to the block before
 * it, as for MARK_VALID.  Written before a weight pass's add would give
 * block 0 its first hint image after a checkpoint (abtpass.c).
 */
typedef struct xl_abt_path
{
	bool		weighted;
	uint8		npath;
} xl_abt_path;

/*
 * VACUUM and MARK_VALID: block 0 is the leaf, blocks 1..npath the pages
 * above it on which the weight changed, leaf side first; redo recomputes,
 * on each, the downlink to the block before it (abt_redo_recompute_path).
 * The blocks after them are the sketch pages that changed (abtsketch.c),
 * whose data are the changed bytes.
 */
typedef struct xl_abt_vacuum
{
	uint16		ndeleted;		/* offsets follow as block 0 data */
	bool		weighted;
	uint8		npath;			/* blocks after the path: sketch pages */
} xl_abt_vacuum;

typedef struct xl_abt_mark_valid
{
	TransactionId xid;
	OffsetNumber off;
	bool		weighted;
	uint8		npath;			/* blocks after the path: sketch pages */
} xl_abt_mark_valid;

/*
 * VALID_BATCH (weight_protocol = batched, abtbatch.c): blocks 0 .. nleaves
 * - 1 are leaves, left to right, each with the offsets of its entries
 * made valid (xid) as data; the next npath blocks are the pages above
 * them, level by level from the leaves' parents to the root, each with
 * the block ids (uint8) of its children in the record as data: redo sets
 * the downlink to each to that child's weight.  Then the sketch pages.
 */
typedef struct xl_abt_valid_batch
{
	TransactionId xid;
	bool		weighted;
	uint8		nleaves;
	uint8		npath;
} xl_abt_valid_batch;

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
		case ABT_PAGES_PBT_DIRECTORY:
			return "pbtree directory";
		case ABT_PAGES_SKETCH:
			return "sketch rebuilt";
	}
	return "?";
}

/* ---- writing; callers are in a critical section, buffers locked ---- */

/*
 * Records with a path register one block per level, and one per changed
 * sketch page, each with data; more than the defaults need room made
 * before the critical section.
 */
void
abt_xlog_reserve(Relation rel, int nblocks, int ndatas)
{
	if (RelationNeedsWAL(rel) &&
		(nblocks + 1 > XLR_NORMAL_MAX_BLOCK_ID || ndatas + 4 > XLR_NORMAL_RDATAS))
		XLogEnsureRecordSpace(Max(nblocks + 1, XLR_NORMAL_MAX_BLOCK_ID),
							  Max(ndatas + 4, XLR_NORMAL_RDATAS));
}

/*
 * Register n path pages as blocks first .. first + n - 1, ordinary
 * registration (an image after a checkpoint), and, once the record is in,
 * set their LSNs: the pages above a record's own pages that redo
 * recomputes (README, "Standbys").
 */
static void
abt_xlog_register_path(int first, Buffer *path, int n)
{
	for (int i = 0; i < n; i++)
		XLogRegisterBuffer(first + i, path[i], REGBUF_STANDARD);
}

static void
abt_xlog_path_lsn(Buffer *path, int n, XLogRecPtr lsn)
{
	for (int i = 0; i < n; i++)
		PageSetLSN(BufferGetPage(path[i]), lsn);
}

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

/* up[]: the pages above buf, parent first, held and dirtied by the caller */
void
abt_xlog_set_weight(Buffer buf, OffsetNumber off, uint64 weight, Buffer *up, int nup,
					bool weighted)
{
	xl_abt_set_weight xlrec;
	XLogRecPtr	lsn;

	memset(&xlrec, 0, sizeof(xlrec));
	xlrec.weight = weight;
	xlrec.off = off;
	xlrec.weighted = weighted;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	abt_xlog_register_path(1, up, nup);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_SET_WEIGHT);
	PageSetLSN(BufferGetPage(buf), lsn);
	abt_xlog_path_lsn(up, nup, lsn);
}

/*
 * Images of pages, registered in the order they were locked; more than
 * XLR_NORMAL_MAX_BLOCK_ID (4) only after XLogEnsureRecordSpace.
 */
void
abt_xlog_pages(uint8 reason, Buffer *bufs, int nbufs)
{
	xl_abt_pages xlrec;
	XLogRecPtr	lsn;
	int			i;

	Assert(nbufs <= XLR_MAX_BLOCK_ID + 1);
	xlrec.reason = reason;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	for (i = 0; i < nbufs; i++)
		XLogRegisterBuffer(i, bufs[i], REGBUF_STANDARD | REGBUF_FORCE_IMAGE);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_PAGES);
	for (i = 0; i < nbufs; i++)
		PageSetLSN(BufferGetPage(bufs[i]), lsn);
}

/*
 * A split (abt_split_page), after the parent got the new downlink; up[]
 * the pages above the parent, parent side first, held exclusively and
 * marked dirty by the caller (nothing changes on them here).
 */
void
abt_xlog_split(Buffer parent, OffsetNumber off, Buffer left, OffsetNumber splitoff,
			   Buffer right, Buffer sibling, Buffer *up, int nup, bool weighted)
{
	Page		ppage = BufferGetPage(parent);
	Page		lpage = BufferGetPage(left);
	AbtPivotAux *aux = AbtPivotGetAux((IndexTuple) PageGetItem(ppage, PageGetItemId(ppage, off)));
	IndexTuple	sep = (IndexTuple) PageGetItem(ppage, PageGetItemId(ppage, OffsetNumberNext(off)));
	xl_abt_split xlrec;
	XLogRecPtr	lsn;

	memset(&xlrec, 0, sizeof(xlrec));
	xlrec.weight = aux->weight;
	xlrec.rid = aux->rid;
	xlrec.off = off;
	xlrec.weighted = weighted;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, parent, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) sep, IndexTupleSize(sep));
	if (AbtPageIsLeaf(AbtPageGetOpaque(lpage)))
	{
		IndexTuple	hikey = (IndexTuple) PageGetItem(lpage, PageGetItemId(lpage, ABT_HIKEY));

		/* an image after a checkpoint, as for any page; else rebuilt */
		XLogRegisterBuffer(1, left, REGBUF_STANDARD);
		XLogRegisterBufData(1, (char *) hikey, IndexTupleSize(hikey));
		XLogRegisterBufData(1, (char *) &splitoff, sizeof(OffsetNumber));
	}
	else
		XLogRegisterBuffer(1, left, REGBUF_STANDARD | REGBUF_FORCE_IMAGE);
	XLogRegisterBuffer(2, right, REGBUF_STANDARD | REGBUF_FORCE_IMAGE);
	if (BufferIsValid(sibling))
		XLogRegisterBuffer(3, sibling, REGBUF_STANDARD);
	abt_xlog_register_path(ABT_SPLIT_FIRST_UP, up, nup);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_SPLIT);
	PageSetLSN(ppage, lsn);
	PageSetLSN(lpage, lsn);
	PageSetLSN(BufferGetPage(right), lsn);
	if (BufferIsValid(sibling))
		PageSetLSN(BufferGetPage(sibling), lsn);
	abt_xlog_path_lsn(up, nup, lsn);
}

/*
 * An internal page and the pages above it up to the root, parent side
 * first, all held exclusively and marked dirty by the caller.
 */
void
abt_xlog_path(Buffer page, Buffer *path, int npath, bool weighted)
{
	xl_abt_path xlrec;
	XLogRecPtr	lsn;

	xlrec.weighted = weighted;
	xlrec.npath = npath;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, page, REGBUF_STANDARD);
	abt_xlog_register_path(1, path, npath);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_PATH);
	PageSetLSN(BufferGetPage(page), lsn);
	abt_xlog_path_lsn(path, npath, lsn);
}

void
abt_xlog_vacuum(Buffer leaf, OffsetNumber *offs, int noffs, bool image, Buffer *path,
				int npath, bool weighted, AbtSketchOp *sketch)
{
	xl_abt_vacuum xlrec;
	XLogRecPtr	lsn;

	xlrec.ndeleted = noffs;
	xlrec.weighted = weighted;
	xlrec.npath = npath;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	/* posting tuples replaced: the leaf's image, which redo restores */
	XLogRegisterBuffer(0, leaf, REGBUF_STANDARD | (image ? REGBUF_FORCE_IMAGE : 0));
	XLogRegisterBufData(0, (char *) offs, noffs * sizeof(OffsetNumber));
	abt_xlog_register_path(1, path, npath);
	(void) abt_sketch_xlog_register(sketch, npath + 1);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_VACUUM);
	abt_sketch_set_lsn(sketch, lsn);
	PageSetLSN(BufferGetPage(leaf), lsn);
	abt_xlog_path_lsn(path, npath, lsn);
}

/*
 * The path is the leaf's parent up to the root, held exclusively by the
 * caller: an ordinary registration, with full-page images after a
 * checkpoint and the page LSNs set (src/abtree/README, "Weights and WAL").
 */
void
abt_xlog_mark_valid(Buffer leaf, OffsetNumber off, IndexTuple newitup, TransactionId xid,
					Buffer *path, int npath, bool weighted, AbtSketchOp *sketch)
{
	xl_abt_mark_valid xlrec;
	XLogRecPtr	lsn;

	xlrec.xid = xid;
	xlrec.off = off;
	xlrec.weighted = weighted;
	xlrec.npath = npath;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, leaf, REGBUF_STANDARD);
	if (newitup)
		XLogRegisterBufData(0, (char *) newitup, IndexTupleSize(newitup));
	abt_xlog_register_path(1, path, npath);
	(void) abt_sketch_xlog_register(sketch, npath + 1);
	lsn = XLogInsert(ABTREE_RMGR_ID, newitup ? XLOG_ABT_INSERT_VALID : XLOG_ABT_MARK_VALID);
	abt_sketch_set_lsn(sketch, lsn);
	PageSetLSN(BufferGetPage(leaf), lsn);
	abt_xlog_path_lsn(path, npath, lsn);
}

/*
 * A batch's pages, all held exclusively, registered in the order they
 * were locked (leaves left to right, then each level up to the root).
 */
void
abt_xlog_valid_batch(Buffer *bufs, int nleaves, int npages, OffsetNumber *offs, int *noffs,
					 uint8 *children, int *nchildren, TransactionId xid, bool weighted,
					 AbtSketchOp *sketch)
{
	xl_abt_valid_batch xlrec;
	XLogRecPtr	lsn;
	int			k = 0;

	xlrec.xid = xid;
	xlrec.weighted = weighted;
	xlrec.nleaves = nleaves;
	xlrec.npath = npages - nleaves;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	for (int i = 0; i < nleaves; i++)
	{
		XLogRegisterBuffer(i, bufs[i], REGBUF_STANDARD);
		XLogRegisterBufData(i, (char *) (offs + k), noffs[i] * sizeof(OffsetNumber));
		k += noffs[i];
	}
	k = 0;
	for (int i = nleaves; i < npages; i++)
	{
		XLogRegisterBuffer(i, bufs[i], REGBUF_STANDARD);
		XLogRegisterBufData(i, (char *) (children + k), nchildren[i]);
		k += nchildren[i];
	}
	(void) abt_sketch_xlog_register(sketch, npages);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_VALID_BATCH);
	abt_sketch_set_lsn(sketch, lsn);
	for (int i = 0; i < npages; i++)
		PageSetLSN(BufferGetPage(bufs[i]), lsn);
}

/* ---- redo ---- */

static void abt_redo_recompute_path(XLogReaderState *record, Buffer *bufs, int npath,
									bool weighted);
static void abt_redo_release(XLogReaderState *record, Buffer *bufs);

/* A redone page: its LSN the record's end, dirty (abtfreeze.c too). */
void
abt_redo_finish(XLogReaderState *record, Buffer buf)
{
	Page		page = BufferGetPage(buf);

	PageSetLSN(page, record->EndRecPtr);
	MarkBufferDirty(buf);
}

/* The leaf tuple that is block 0's data, at off; returns it */
static IndexTuple
abt_redo_add_leaf_item(XLogReaderState *record, Page page, OffsetNumber off)
{
	Size		len;
	char	   *itup = XLogRecGetBlockData(record, 0, &len);

	if (PageAddItem(page, (Item) itup, len, off, false, false) == InvalidOffsetNumber)
		elog(PANIC, "abtree redo: failed to add leaf item");
	return (IndexTuple) itup;
}

void
abt_redo_insert_leaf(XLogReaderState *record)
{
	xl_abt_insert_leaf *xlrec = (xl_abt_insert_leaf *) XLogRecGetData(record);
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		IndexTuple	itup = abt_redo_add_leaf_item(record, page, xlrec->off);

		AbtPageGetOpaque(page)->sid++;
		if (!TransactionIdIsValid(abt_leaf_xmin(itup)))
			AbtPageGetOpaque(page)->flags |= ABTP_HAS_INVALID;
		abt_redo_finish(record, buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

void
abt_redo_set_weight(XLogReaderState *record)
{
	xl_abt_set_weight *xlrec = (xl_abt_set_weight *) XLogRecGetData(record);
	Buffer		bufs[XLR_MAX_BLOCK_ID + 1];

	if (XLogReadBufferForRedo(record, 0, &bufs[0]) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(bufs[0]);
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, xlrec->off));

		AbtPivotGetAux(itup)->weight = xlrec->weight;
		abt_redo_finish(record, bufs[0]);
	}
	/* the pages above, if named: the new weight counts there too */
	abt_redo_recompute_path(record, bufs, XLogRecMaxBlockId(record), xlrec->weighted);
	abt_redo_release(record, bufs);
}

/*
 * Blocks first .. first + n - 1 of a record are a path upwards from block
 * below: each holds the downlink to the block before it (the first, to
 * block below).  Set each such downlink to that block's weight, bottom-up.
 * The writer held the path exclusively, up to the root.  Every path goes
 * up to the root: another record's redo may have recomputed an upper
 * downlink from a page that did not count this change yet, so this redo
 * must recompute every level, not trust what is there.  All stay locked
 * until the caller releases them, so no reader on a standby sees a page
 * whose ancestors do not count it yet.
 */
static void
abt_redo_set_downlink(XLogReaderState *record, Buffer *bufs, int child_block, Page page,
					  bool weighted)
{
	BlockNumber child;
	OffsetNumber off;

	XLogRecGetBlockTag(record, child_block, NULL, NULL, &child);
	off = abt_find_downlink(page, child, InvalidOffsetNumber);
	if (off == InvalidOffsetNumber)
		elog(WARNING, "abtree redo: no downlink to block %u; VACUUM the index to repair its weights",
			 child);
	else if (BufferIsValid(bufs[child_block]))
		AbtPivotGetAux((IndexTuple) PageGetItem(page, PageGetItemId(page, off)))->weight =
			abt_page_weight(BufferGetPage(bufs[child_block]), weighted);
}

static void
abt_redo_recompute_chain(XLogReaderState *record, Buffer *bufs, int below, int first, int n,
						 bool weighted)
{
	for (int i = first; i < first + n; i++)
	{
		int			child_block = i == first ? below : i - 1;

		if (XLogReadBufferForRedo(record, i, &bufs[i]) != BLK_NEEDS_REDO)
			continue;
		abt_redo_set_downlink(record, bufs, child_block, BufferGetPage(bufs[i]), weighted);
		abt_redo_finish(record, bufs[i]);
	}
}

/* Blocks 1 .. npath of a VACUUM, MARK_VALID or PATH record: above block 0. */
static void
abt_redo_recompute_path(XLogReaderState *record, Buffer *bufs, int npath, bool weighted)
{
	abt_redo_recompute_chain(record, bufs, 0, 1, npath, weighted);
}

static void
abt_redo_release(XLogReaderState *record, Buffer *bufs)
{
	int			i;

	for (i = 0; i <= XLogRecMaxBlockId(record); i++)
		if (BufferIsValid(bufs[i]))
			UnlockReleaseBuffer(bufs[i]);
}

/*
 * MARK_VALID, and INSERT_VALID, whose leaf entry comes in the record,
 * valid already (its xmin in the tuple).  Then both recompute the path and
 * apply the sketch pages' changes.
 */
void
abt_redo_mark_valid(XLogReaderState *record)
{
	xl_abt_mark_valid *xlrec = (xl_abt_mark_valid *) XLogRecGetData(record);
	Buffer		bufs[XLR_MAX_BLOCK_ID + 1];

	if (XLogReadBufferForRedo(record, 0, &bufs[0]) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(bufs[0]);

		if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_ABT_INSERT_VALID)
			abt_redo_add_leaf_item(record, page, xlrec->off);
		else
			abt_set_leaf_xmin((IndexTuple) PageGetItem(page, PageGetItemId(page, xlrec->off)),
							  xlrec->xid);
		abt_leaf_note_xid(page, xlrec->xid);
		AbtPageGetOpaque(page)->sid++;
		/* HAS_INVALID stays, as on the primary (abt_mark_valid) */
		abt_redo_finish(record, bufs[0]);
	}
	abt_redo_recompute_path(record, bufs, xlrec->npath, xlrec->weighted);
	abt_sketch_redo(record, xlrec->npath + 1, bufs);
	abt_redo_release(record, bufs);
}

/*
 * VALID_BATCH: the leaves' entries valid, then each page above recomputes
 * its downlinks to its children in the record (children come first in the
 * record, so they are done), then the sketch pages.  Everything is locked
 * in the record's order, the primary's, until the end.
 */
void
abt_redo_valid_batch(XLogReaderState *record)
{
	xl_abt_valid_batch *xlrec = (xl_abt_valid_batch *) XLogRecGetData(record);
	Buffer		bufs[XLR_MAX_BLOCK_ID + 1];
	int			npages = xlrec->nleaves + xlrec->npath;

	for (int i = 0; i < npages; i++)
	{
		Size		len;
		char	   *data;
		Page		page;

		if (XLogReadBufferForRedo(record, i, &bufs[i]) != BLK_NEEDS_REDO)
			continue;
		page = BufferGetPage(bufs[i]);
		data = XLogRecGetBlockData(record, i, &len);
		if (i < xlrec->nleaves)
		{
			for (Size k = 0; k < len / sizeof(OffsetNumber); k++)
			{
				OffsetNumber off;

				memcpy(&off, data + k * sizeof(OffsetNumber), sizeof(OffsetNumber));
				abt_set_leaf_xmin((IndexTuple) PageGetItem(page, PageGetItemId(page, off)),
								  xlrec->xid);
			}
			abt_leaf_note_xid(page, xlrec->xid);
			AbtPageGetOpaque(page)->sid++;
		}
		else
			for (Size k = 0; k < len; k++)
				abt_redo_set_downlink(record, bufs, (uint8) data[k], page, xlrec->weighted);
		abt_redo_finish(record, bufs[i]);
	}
	abt_sketch_redo(record, npages, bufs);
	abt_redo_release(record, bufs);
}

/*
 * Redo locks a record's pages in the order the primary's writer did, bottom
 * up: a split's halves and the old right sibling before the parent.  A
 * standby's readers can hold a child and ask for its parent
 * (abtree_verify's at-least mode, abt_downlink_caught_up): the startup
 * process holding the parent while it waits for that child would wait for
 * ever, and so would the reader (buffer locks have no deadlock detection).
 * Registration order is the record's layout (block 0 is a split's parent),
 * not the lock order.
 */
void
abt_redo_pages(XLogReaderState *record)
{
	xl_abt_pages *xlrec = (xl_abt_pages *) XLogRecGetData(record);
	Buffer		bufs[XLR_MAX_BLOCK_ID + 1];
	int			nblocks = XLogRecMaxBlockId(record) + 1;
	int			i;

	/* lock all, in the primary's order, before releasing any */
	for (i = 0; i < nblocks; i++)
	{
		/* an old split record: parent, halves, sibling; the parent last */
		int			block = xlrec->reason == ABT_PAGES_SPLIT ? (i + 1) % nblocks : i;

		if (XLogReadBufferForRedo(record, block, &bufs[block]) != BLK_RESTORED)
			elog(PANIC, "abtree redo: page image %d missing", block);
	}
	for (i = 0; i < nblocks; i++)
		UnlockReleaseBuffer(bufs[i]);
}

/* the parent's new downlink, the old one's new weight and RID */
static void
abt_redo_split_parent(XLogReaderState *record, Buffer buf)
{
	xl_abt_split *xlrec = (xl_abt_split *) XLogRecGetData(record);
	Page		page = BufferGetPage(buf);
	AbtPivotAux *aux = AbtPivotGetAux((IndexTuple) PageGetItem(page, PageGetItemId(page, xlrec->off)));
	Size		len;
	char	   *sep = XLogRecGetBlockData(record, 0, &len);

	aux->weight = xlrec->weight;
	aux->rid = xlrec->rid;
	if (PageAddItem(page, (Item) sep, len, OffsetNumberNext(xlrec->off),
					false, false) == InvalidOffsetNumber)
		elog(PANIC, "abtree redo: failed to add a split's downlink");
	AbtPageGetOpaque(page)->sid++;
	abt_redo_finish(record, buf);
}

/*
 * A leaf's left half from the page as WAL left it: block 1's data is the
 * half's high key, then the split offset; block 2, the right half, is the
 * left half's right-link.
 */
static void
abt_redo_split_left(XLogReaderState *record, Buffer buf, BlockNumber rightblk)
{
	Page		page = BufferGetPage(buf);
	PGAlignedBlock leftblock;
	OffsetNumber splitoff;
	Size		len;
	char	   *data = XLogRecGetBlockData(record, 1, &len);

	if (data == NULL || len <= sizeof(OffsetNumber))
		elog(PANIC, "abtree redo: split of block %u has neither image nor data",
			 BufferGetBlockNumber(buf));
	memcpy(&splitoff, data + len - sizeof(OffsetNumber), sizeof(OffsetNumber));
	abt_split_fill_left(page, splitoff, (IndexTuple) data, rightblk, leftblock.data);
	memcpy(page, leftblock.data, BLCKSZ);
	abt_redo_finish(record, buf);
}

/*
 * All pages are locked, halves and sibling first and then the parent (the
 * primary's order, see above), before any is let go, as the primary held
 * them: a reader on a standby sees the split whole.
 */
void
abt_redo_split(XLogReaderState *record)
{
	xl_abt_split *xlrec = (xl_abt_split *) XLogRecGetData(record);
	Buffer		bufs[XLR_MAX_BLOCK_ID + 1];
	BlockNumber rightblk;

	for (int i = 0; i <= XLR_MAX_BLOCK_ID; i++)
		bufs[i] = InvalidBuffer;
	XLogRecGetBlockTag(record, 2, NULL, NULL, &rightblk);
	/* an image, or a leaf's left half built from the old page */
	if (XLogReadBufferForRedo(record, 1, &bufs[1]) == BLK_NEEDS_REDO)
		abt_redo_split_left(record, bufs[1], rightblk);
	if (XLogReadBufferForRedo(record, 2, &bufs[2]) != BLK_RESTORED)
		elog(PANIC, "abtree redo: split image of the right half missing");
	if (XLogRecHasBlockRef(record, 3) &&
		XLogReadBufferForRedo(record, 3, &bufs[3]) == BLK_NEEDS_REDO)
	{
		AbtPageGetOpaque(BufferGetPage(bufs[3]))->prev = rightblk;
		abt_redo_finish(record, bufs[3]);
	}
	if (XLogReadBufferForRedo(record, 0, &bufs[0]) == BLK_NEEDS_REDO)
		abt_redo_split_parent(record, bufs[0]);
	/* the halves' adds in flight now count above the parent too */
	abt_redo_recompute_chain(record, bufs, 0, ABT_SPLIT_FIRST_UP, abt_split_nup(record),
							 xlrec->weighted);
	abt_redo_release(record, bufs);
}

/* PATH: nothing to change on block 0 but its LSN (its image, if any) */
void
abt_redo_path(XLogReaderState *record)
{
	xl_abt_path *xlrec = (xl_abt_path *) XLogRecGetData(record);
	Buffer		bufs[XLR_MAX_BLOCK_ID + 1];

	if (XLogReadBufferForRedo(record, 0, &bufs[0]) == BLK_NEEDS_REDO)
		abt_redo_finish(record, bufs[0]);
	abt_redo_recompute_path(record, bufs, xlrec->npath, xlrec->weighted);
	abt_redo_release(record, bufs);
}

void
abt_redo_vacuum(XLogReaderState *record)
{
	xl_abt_vacuum *xlrec = (xl_abt_vacuum *) XLogRecGetData(record);
	Buffer		bufs[XLR_MAX_BLOCK_ID + 1];

	if (XLogReadBufferForRedo(record, 0, &bufs[0]) == BLK_NEEDS_REDO)
	{
		Size		len;
		OffsetNumber *offs = (OffsetNumber *) XLogRecGetBlockData(record, 0, &len);
		Page		page = BufferGetPage(bufs[0]);

		PageIndexMultiDelete(page, offs, len / sizeof(OffsetNumber));
		AbtPageGetOpaque(page)->sid++;
		abt_leaf_update_invalid_flag(page);
		abt_redo_finish(record, bufs[0]);
	}
	abt_redo_recompute_path(record, bufs, xlrec->npath, xlrec->weighted);
	abt_sketch_redo(record, xlrec->npath + 1, bufs);
	abt_redo_release(record, bufs);
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
abt_desc_set_weight(StringInfo buf, XLogReaderState *record)
{
	xl_abt_set_weight *xlrec = (xl_abt_set_weight *) XLogRecGetData(record);

	appendStringInfo(buf, "off %u, weight " UINT64_FORMAT ", path above of %d", xlrec->off,
					 xlrec->weight, XLogRecMaxBlockId(record));
}

void
abt_desc_mark_valid(StringInfo buf, XLogReaderState *record)
{
	xl_abt_mark_valid *xlrec = (xl_abt_mark_valid *) XLogRecGetData(record);

	appendStringInfo(buf, "off %u, xid %u, path of %d, sketch pages %d", xlrec->off, xlrec->xid,
					 xlrec->npath, XLogRecMaxBlockId(record) - xlrec->npath);
}

void
abt_desc_valid_batch(StringInfo buf, XLogReaderState *record)
{
	xl_abt_valid_batch *xlrec = (xl_abt_valid_batch *) XLogRecGetData(record);

	appendStringInfo(buf, "xid %u, leaves %d, pages above %d, sketch pages %d", xlrec->xid,
					 xlrec->nleaves, xlrec->npath,
					 XLogRecMaxBlockId(record) + 1 - xlrec->nleaves - xlrec->npath);
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
abt_desc_split(StringInfo buf, XLogReaderState *record)
{
	xl_abt_split *xlrec = (xl_abt_split *) XLogRecGetData(record);
	char	   *data;
	Size		len;

	appendStringInfo(buf, "downlink at %u: weight " UINT64_FORMAT ", rid %u, path above of %d;",
					 xlrec->off, xlrec->weight, xlrec->rid, abt_split_nup(record));
	if (XLogRecHasBlockRef(record, 1) && (data = XLogRecGetBlockData(record, 1, &len)) != NULL &&
		len >= sizeof(OffsetNumber))
	{
		OffsetNumber splitoff;

		memcpy(&splitoff, data + len - sizeof(OffsetNumber), sizeof(OffsetNumber));
		appendStringInfo(buf, " left half built up to %u;", splitoff);
	}
	for (int i = 0; i <= XLogRecMaxBlockId(record); i++)
	{
		appendStringInfoChar(buf, ' ');
		abt_desc_block(buf, record, i);
	}
}

void
abt_desc_path(StringInfo buf, XLogReaderState *record)
{
	xl_abt_path *xlrec = (xl_abt_path *) XLogRecGetData(record);

	appendStringInfo(buf, "path of %d above ", xlrec->npath);
	abt_desc_block(buf, record, 0);
}

void
abt_desc_vacuum(StringInfo buf, XLogReaderState *record)
{
	xl_abt_vacuum *xlrec = (xl_abt_vacuum *) XLogRecGetData(record);

	appendStringInfo(buf, "ndeleted %u, path of %d, sketch pages %d", xlrec->ndeleted,
					 xlrec->npath, XLogRecMaxBlockId(record) - xlrec->npath);
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
	opaque->flags &= ~ABTP_HAS_INVALID;
	/* only internal pages carry weights; pbtree filter pages have no items */
	if (AbtPageIsLeaf(opaque) || (opaque->flags & (ABTP_META | ABTP_SKETCH | ABTP_FILTER)))
		return;
	for (off = FirstOffsetNumber; off <= PageGetMaxOffsetNumber(page); off++)
	{
		ItemId		iid = PageGetItemId(page, off);

		if (ItemIdIsUsed(iid))
		{
			AbtPivotAux *aux = AbtPivotGetAux((IndexTuple) PageGetItem(page, iid));

			/* weights: the primary's carry adds in flight, redo recomputes */
			aux->rid = 0;
			aux->weight = 0;
		}
	}
}
