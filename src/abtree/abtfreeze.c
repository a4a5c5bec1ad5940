/*-------------------------------------------------------------------------
 *
 * abtfreeze.c
 *	  Freezing leaf entries' xids in VACUUM, and its WAL record FREEZE.
 *
 * A valid leaf entry keeps the xid that made it valid, and a leaf keeps
 * in pd_prune_xid the newest of them (abt_leaf_note_xid).  Snapshots
 * compare them modulo 2^32: an xid more than 2^31 transactions old looks
 * like one in the future, so a draw took such an entry for a row its
 * snapshot cannot see and rejected it, for ever (src/abtree/README,
 * "Freezing").  VACUUM therefore replaces every normal xid older than
 * vacuum_freeze_min_age before the oldest snapshot with
 * FrozenTransactionId, which every snapshot sees, as the heap does.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/transam.h"
#include "access/xloginsert.h"
#include "access/xlogutils.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "utils/rel.h"

/* Main data of an XLOG_ABT_FREEZE record: block 0 is the leaf. */
typedef struct xl_abt_freeze
{
	TransactionId cutoff;		/* normal xids before it become frozen */
} xl_abt_freeze;

/*
 * The xids VACUUM freezes: those before every snapshot's xmin (so that
 * each snapshot already counts them as seen; the conservative horizon of
 * all databases), by vacuum_freeze_min_age more, so that an entry is
 * rewritten once, old, and not at every VACUUM.
 */
TransactionId
abt_freeze_cutoff(void)
{
	TransactionId cutoff = GetOldestNonRemovableTransactionId(NULL) - vacuum_freeze_min_age;

	if (!TransactionIdIsNormal(cutoff))
		cutoff = FirstNormalTransactionId;
	return cutoff;
}

static inline bool
abt_xid_freezable(TransactionId xid, TransactionId cutoff)
{
	return TransactionIdIsNormal(xid) && TransactionIdPrecedes(xid, cutoff);
}

/* Does the leaf hold an xid (an entry's or its newest) before cutoff? */
bool
abt_leaf_needs_freeze(Page page, TransactionId cutoff)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);

	if (abt_xid_freezable(((PageHeader) page)->pd_prune_xid, cutoff))
		return true;
	for (OffsetNumber off = AbtFirstDataOffset(opaque); off <= PageGetMaxOffsetNumber(page); off++)
		if (abt_xid_freezable(abt_leaf_xmin((IndexTuple) PageGetItem(page, PageGetItemId(page, off))),
							  cutoff))
			return true;
	return false;
}

/*
 * Freeze the leaf's xids before cutoff, and make its newest xid that of
 * the entries left unfrozen (none: InvalidTransactionId, which
 * mvs_leaf_all_visible reads as "all seen").  The same on the primary and
 * in redo.  Not-valid entries (InvalidTransactionId) stay as they are.
 */
static int
abt_freeze_page(Page page, TransactionId cutoff)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	TransactionId newest = InvalidTransactionId;
	int			n = 0;

	for (OffsetNumber off = AbtFirstDataOffset(opaque); off <= PageGetMaxOffsetNumber(page); off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		TransactionId xid = abt_leaf_xmin(itup);

		if (abt_xid_freezable(xid, cutoff))
		{
			abt_set_leaf_xmin(itup, FrozenTransactionId);
			n++;
		}
		else if (TransactionIdIsNormal(xid) &&
				 (!TransactionIdIsValid(newest) || TransactionIdPrecedes(newest, xid)))
			newest = xid;
	}
	((PageHeader) page)->pd_prune_xid = newest;
	return n;
}

/*
 * Freeze leaf blkno of rel, if it still needs it.  An exclusive lock, as
 * for any change of an entry's xid; weights do not change (a frozen entry
 * is as valid as before), so nothing above is locked.  Returns the entries
 * frozen.
 */
int
abt_freeze_leaf(Relation rel, BlockNumber blkno, TransactionId cutoff,
				BufferAccessStrategy strategy)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	Page		page = BufferGetPage(buf);
	int			n = 0;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (!PageIsNew(page) && AbtPageGetOpaque(page)->page_id == ABT_PAGE_ID &&
		AbtPageIsLeaf(AbtPageGetOpaque(page)) && abt_leaf_needs_freeze(page, cutoff))
	{
		START_CRIT_SECTION();
		n = abt_freeze_page(page, cutoff);
		MarkBufferDirty(buf);
		if (RelationNeedsWAL(rel))
		{
			xl_abt_freeze xlrec;
			XLogRecPtr	lsn;

			xlrec.cutoff = cutoff;
			XLogBeginInsert();
			XLogRegisterData((char *) &xlrec, sizeof(xlrec));
			XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
			lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_FREEZE);
			PageSetLSN(page, lsn);
		}
		END_CRIT_SECTION();
	}
	UnlockReleaseBuffer(buf);
	return n;
}

/*
 * Redo: the same freeze of the same page.  Readers of a standby whose
 * snapshots are older than the primary's horizon only see frozen entries
 * as seen sooner: more weight, never less (rejections, not bias), so no
 * recovery conflict is needed.
 */
void
abt_redo_freeze(XLogReaderState *record)
{
	xl_abt_freeze *xlrec = (xl_abt_freeze *) XLogRecGetData(record);
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		(void) abt_freeze_page(BufferGetPage(buf), xlrec->cutoff);
		abt_redo_finish(record, buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

void
abt_desc_freeze(StringInfo buf, XLogReaderState *record)
{
	xl_abt_freeze *xlrec = (xl_abt_freeze *) XLogRecGetData(record);

	appendStringInfo(buf, "xids before %u frozen", xlrec->cutoff);
}
