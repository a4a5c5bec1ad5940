/*-------------------------------------------------------------------------
 *
 * pbtpage.c
 *	  pbtree's metapage (the partition directory), partition head pages and
 *	  page reuse.
 *
 * The directory is small (one page) and changes only when a partition is
 * created, sealed, merged or freed.  Every change is one WAL record with
 * images of the metapage and of the head pages it creates (abtree's PAGES
 * record), so redo and wal_consistency_checking need nothing new.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "storage/standby.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

/* is this index a pbtree?  (its build function says so, catalogs or not) */
bool
pbt_is_pbtree(Relation rel)
{
	return rel->rd_indam != NULL && rel->rd_indam->ambuild == pbtbuild;
}

void
pbt_init_metapage(Page page)
{
	PbtMetaPageData *meta;

	abt_init_page(page, 0, ABTP_META);
	meta = PbtPageGetMeta(page);
	memset(meta, 0, offsetof(PbtMetaPageData, parts));
	meta->magic = PBT_MAGIC;
	meta->version = PBT_VERSION;
	meta->next_partno = 1;
	((PageHeader) page)->pd_lower =
		((char *) meta->parts - (char *) page);
}

static void
pbt_check_meta(Relation rel, Page page)
{
	PbtMetaPageData *meta = PbtPageGetMeta(page);

	if (meta->magic != PBT_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a pbtree index", RelationGetRelationName(rel))));
	if (meta->version != PBT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has pbtree version %u, this library reads version %d",
						RelationGetRelationName(rel), meta->version, PBT_VERSION),
				 errhint("REINDEX the index.")));
}

static void
pbt_copy_directory(PbtDirectory *dir, PbtMetaPageData *meta)
{
	dir->next_partno = meta->next_partno;
	dir->n = meta->npartitions;
	dir->nseals = meta->nseals;
	dir->nmerges = meta->nmerges;
	memcpy(dir->parts, meta->parts, sizeof(PbtPartition) * meta->npartitions);
}

/* A copy of the directory, read under a share lock. */
void
pbt_read_directory(Relation rel, PbtDirectory *dir)
{
	Buffer		buf = ReadBuffer(rel, PBT_METAPAGE);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, buf);
	pbt_check_meta(rel, BufferGetPage(buf));
	pbt_copy_directory(dir, PbtPageGetMeta(BufferGetPage(buf)));
	UnlockReleaseBuffer(buf);
}

/* The mutable partition's head page, read under a share lock (no copy). */
BlockNumber
pbt_mutable_head(Relation rel)
{
	Buffer		buf = ReadBuffer(rel, PBT_METAPAGE);
	PbtMetaPageData *meta;
	BlockNumber head = InvalidBlockNumber;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, buf);
	pbt_check_meta(rel, BufferGetPage(buf));
	meta = PbtPageGetMeta(BufferGetPage(buf));
	for (uint32 i = 0; i < meta->npartitions; i++)
		if (meta->parts[i].state == PBT_MUTABLE)
			head = meta->parts[i].head;
	UnlockReleaseBuffer(buf);
	if (head == InvalidBlockNumber)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("pbtree index \"%s\" has no mutable partition",
						RelationGetRelationName(rel)),
				 errhint("REINDEX the index.")));
	return head;
}

PbtPartition *
pbt_mutable(PbtDirectory *dir)
{
	for (int i = 0; i < dir->n; i++)
		if (dir->parts[i].state == PBT_MUTABLE)
			return &dir->parts[i];
	elog(ERROR, "pbtree: the directory has no mutable partition");
	return NULL;				/* keep compiler quiet */
}

/* The metapage, exclusively locked and checked. */
Buffer
pbt_lock_meta(Relation rel)
{
	Buffer		buf = ReadBuffer(rel, PBT_METAPAGE);

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	abt_check_page(rel, buf);
	pbt_check_meta(rel, BufferGetPage(buf));
	return buf;
}

/*
 * Log a directory change: the metapage and the other pages given, as
 * images.  Called inside the critical section, after MarkBufferDirty.
 */
void
pbt_log_meta(Relation rel, Buffer metabuf, Buffer *others, int nothers)
{
	Buffer		bufs[8];

	Assert(nothers < lengthof(bufs));
	if (!RelationNeedsWAL(rel))
		return;
	bufs[0] = metabuf;
	for (int i = 0; i < nothers; i++)
		bufs[i + 1] = others[i];
	abt_xlog_pages(ABT_PAGES_PBT_DIRECTORY, bufs, nothers + 1);
}

/*
 * Freeing partitions is where standbys must act: a query there may still
 * be reading a freed partition (nothing of the standby's holds back the
 * primary's horizon), and the primary may reuse its pages now.  So the
 * record carries the newest safexid of the freed partitions, and redo
 * cancels the standby queries whose snapshots are that old, as nbtree does
 * for its deleted pages; then it restores the directory's image.
 */
typedef struct xl_pbt_free
{
	FullTransactionId horizon;
} xl_pbt_free;

/* Log the metapage after freeing partitions; in the critical section. */
void
pbt_log_free(Relation rel, Buffer metabuf, FullTransactionId horizon)
{
	xl_pbt_free xlrec;
	XLogRecPtr	lsn;

	if (!RelationNeedsWAL(rel))
		return;
	xlrec.horizon = horizon;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, metabuf, REGBUF_STANDARD | REGBUF_FORCE_IMAGE);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_PBT_FREE);
	PageSetLSN(BufferGetPage(metabuf), lsn);
}

void
pbt_redo_free(XLogReaderState *record)
{
	xl_pbt_free *xlrec = (xl_pbt_free *) XLogRecGetData(record);
	Buffer		buf;

	if (InHotStandby)
	{
#if PG_VERSION_NUM >= 160000
		RelFileLocator locator;

		XLogRecGetBlockTag(record, 0, &locator, NULL, NULL);
		ResolveRecoveryConflictWithSnapshotFullXid(xlrec->horizon, false, locator);
#else
		RelFileNode node;

		XLogRecGetBlockTag(record, 0, &node, NULL, NULL);
		ResolveRecoveryConflictWithSnapshotFullXid(xlrec->horizon, node);
#endif
	}
	if (XLogReadBufferForRedo(record, 0, &buf) != BLK_RESTORED)
		elog(PANIC, "pbtree redo: directory image missing");
	UnlockReleaseBuffer(buf);
}

void
pbt_desc_free(StringInfo buf, XLogReaderState *record)
{
	xl_pbt_free *xlrec = (xl_pbt_free *) XLogRecGetData(record);

	appendStringInfo(buf, "horizon %u:%u",
					 EpochFromFullTransactionId(xlrec->horizon),
					 XidFromFullTransactionId(xlrec->horizon));
}

/*
 * Turn the locked page headbuf into the head page (an abtree metapage) of
 * partition partno, over root at level (root may be InvalidBlockNumber: an
 * empty tree whose first insert makes the root).  Call in a critical
 * section; the caller marks it dirty and logs it.
 */
BlockNumber
pbt_create_tree(Relation rel, uint32 partno, BlockNumber root, uint32 level,
				Buffer *headbuf)
{
	Page		page = BufferGetPage(*headbuf);
	AbtMetaPageData *meta;

	abt_init_metapage(page, false, 0);
	PbtPageGetPartno(page) = partno;
	meta = AbtPageGetMeta(page);
	meta->root = root;
	meta->level = level;
	return BufferGetBlockNumber(*headbuf);
}

/*
 * May this page be reused?  Never-initialised pages may; a page of ours may
 * if its partition is gone from the directory (freed after every snapshot
 * that could reach it had ended, README "Freeing").  The caller holds the
 * page locked.
 */
bool
pbt_page_reusable(PbtDirectory *dir, Page page)
{
	uint32		partno;

	if (PageIsNew(page))
		return true;
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(AbtPageOpaqueData)) ||
		AbtPageGetOpaque(page)->page_id != ABT_PAGE_ID)
		return false;
	partno = PbtPageGetPartno(page);
	if (partno == 0 || partno >= dir->next_partno)
		return false;			/* the metapage, or not allocated yet */
	for (int i = 0; i < dir->n; i++)
		if (dir->parts[i].partno == partno)
			return false;
	return true;
}

/*
 * A page for a partition, exclusively locked: a free one from the free space
 * map if one checks out, else a new one at the end.  The caller must not hold
 * the metapage (it is read here when a candidate turns up); it may hold
 * other pages: we only ever try-lock candidates.
 */
Buffer
pbt_new_buffer(Relation rel)
{
	PbtDirectory *dir = NULL;

	for (;;)
	{
		BlockNumber blkno = GetFreeIndexPage(rel);
		Buffer		buf;

		if (blkno == InvalidBlockNumber)
			break;
		buf = ReadBuffer(rel, blkno);
		if (ConditionalLockBuffer(buf))
		{
			if (dir == NULL)
			{
				dir = palloc(sizeof(PbtDirectory));
				pbt_read_directory(rel, dir);
			}
			if (pbt_page_reusable(dir, BufferGetPage(buf)))
			{
				pfree(dir);
				return buf;
			}
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
	}
	if (dir)
		pfree(dir);
	return abt_new_buffer_fork(rel, MAIN_FORKNUM);
}
