/*-------------------------------------------------------------------------
 *
 * xlog.c
 *	  The "abtree" custom WAL resource manager: registration and dispatch.
 *
 * One resource manager serves every component.  The record type lives in
 * the high nibble of xl_info; abt_record_kinds[] maps it to a name, a redo
 * routine and a desc routine, so rm_redo, rm_desc and rm_identify are plain
 * table look-ups and a component adds a record by adding a row.  Redo
 * routines must not touch the catalogs: they run in the startup process.
 *
 * The first record kind is PROBE, written by abtree_wal_probe(): it changes
 * no page, and its redo counts and logs it.  Operators use it to check that
 * a standby (or a recovering server) has the library preloaded and replays
 * our records; the tests use it for the same.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree_ext.h"
#include "abtree/abtree.h"
#include "pbtree/pbtree.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"

/* Main data of an XLOG_ABT_PROBE record. */
typedef struct xl_abt_probe
{
	uint32		len;			/* length of message, without terminator */
	char		message[FLEXIBLE_ARRAY_MEMBER];
} xl_abt_probe;

#define SizeOfAbtProbe	offsetof(xl_abt_probe, message)

typedef struct AbtRecordKind
{
	const char *name;			/* for rm_identify, e.g. in pg_walinspect */
	void		(*redo) (XLogReaderState *record);
	void		(*desc) (StringInfo buf, XLogReaderState *record);
} AbtRecordKind;

static void abt_probe_redo(XLogReaderState *record);
static void abt_probe_desc(StringInfo buf, XLogReaderState *record);

static const AbtRecordKind abt_record_kinds[16] = {
	[XLOG_ABT_PROBE >> 4] = {"PROBE", abt_probe_redo, abt_probe_desc},
	[XLOG_ABT_INSERT_LEAF >> 4] = {"INSERT_LEAF", abt_redo_insert_leaf, abt_desc_insert_leaf},
	[XLOG_ABT_SET_WEIGHT >> 4] = {"SET_WEIGHT", abt_redo_set_weight, abt_desc_set_weight},
	[XLOG_ABT_PAGES >> 4] = {"PAGES", abt_redo_pages, abt_desc_pages},
	[XLOG_ABT_VACUUM >> 4] = {"VACUUM", abt_redo_vacuum, abt_desc_vacuum},
	[XLOG_ABT_MARK_VALID >> 4] = {"MARK_VALID", abt_redo_mark_valid, abt_desc_mark_valid},
	[XLOG_PBT_FREE >> 4] = {"PBT_FREE", pbt_redo_free, pbt_desc_free},
	[XLOG_ABT_SPLIT >> 4] = {"SPLIT", abt_redo_split, abt_desc_split},
	[XLOG_ABT_PATH >> 4] = {"PATH", abt_redo_path, abt_desc_path},
	[XLOG_ABT_INSERT_VALID >> 4] = {"INSERT_VALID", abt_redo_mark_valid, abt_desc_mark_valid},
	[XLOG_ABT_VALID_BATCH >> 4] = {"VALID_BATCH", abt_redo_valid_batch, abt_desc_valid_batch},
	[XLOG_ABT_FREEZE >> 4] = {"FREEZE", abt_redo_freeze, abt_desc_freeze},
};

static const AbtRecordKind *
abt_record_kind(uint8 info)
{
	const AbtRecordKind *kind;

	kind = &abt_record_kinds[(info & XLR_RMGR_INFO_MASK) >> 4];
	return kind->name ? kind : NULL;
}

static void
abt_rm_redo(XLogReaderState *record)
{
	const AbtRecordKind *kind = abt_record_kind(XLogRecGetInfo(record));

	if (kind == NULL)
		elog(PANIC, "abtree redo: unknown record type %u",
			 XLogRecGetInfo(record) & XLR_RMGR_INFO_MASK);

	if (abt_debug_redo)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		kind->desc(&buf, record);
		elog(LOG, "abtree redo %s at %X/%X: %s", kind->name,
			 LSN_FORMAT_ARGS(record->ReadRecPtr), buf.data);
		pfree(buf.data);
	}

	kind->redo(record);
}

static void
abt_rm_desc(StringInfo buf, XLogReaderState *record)
{
	const AbtRecordKind *kind = abt_record_kind(XLogRecGetInfo(record));

	if (kind != NULL)
		kind->desc(buf, record);
}

static const char *
abt_rm_identify(uint8 info)
{
	const AbtRecordKind *kind = abt_record_kind(info);

	return kind ? kind->name : NULL;
}

/*
 * For wal_consistency_checking: the parts of a page that may legitimately
 * differ between primary and standby.  Components refine this per page type
 * (weights in flight, for instance) as they add pages.
 */
static void
abt_rm_mask(char *pagedata, BlockNumber blkno)
{
	abt_mask(pagedata, blkno);
}

/*
 * The end of WAL replay, in the startup process (crash recovery, the end of
 * archive recovery, a promotion): it may not write WAL, so it only tells
 * the backends that the abtree indexes need their post-recovery check
 * (abt_recovery_check, src/abtree/README "Crash recovery").
 */
static void
abt_rm_cleanup(void)
{
	pg_atomic_write_u32(&abt_shared->recovered, 1);
}

static RmgrData abt_rmgr = {
	.rm_name = ABTREE_RMGR_NAME,
	.rm_redo = abt_rm_redo,
	.rm_desc = abt_rm_desc,
	.rm_identify = abt_rm_identify,
	.rm_startup = NULL,
	.rm_cleanup = abt_rm_cleanup,
	.rm_mask = abt_rm_mask,
	.rm_decode = NULL,
};

void
abt_register_rmgr(void)
{
	RegisterCustomRmgr(ABTREE_RMGR_ID, &abt_rmgr);
}

/*
 * Write and flush a PROBE record; returns the LSN just past it, so a caller
 * can wait until a standby's pg_last_wal_replay_lsn() reaches it.
 */
XLogRecPtr
abt_log_probe(const char *message, int len)
{
	xl_abt_probe hdr;
	XLogRecPtr	lsn;

	Assert(!RecoveryInProgress());
	Assert(len >= 0);

	hdr.len = (uint32) len;
	XLogBeginInsert();
	XLogRegisterData((char *) &hdr, SizeOfAbtProbe);
	if (len > 0)
		XLogRegisterData((char *) message, len);
	lsn = XLogInsert(ABTREE_RMGR_ID, XLOG_ABT_PROBE);
	XLogFlush(lsn);

	pg_atomic_fetch_add_u64(&abt_shared->wal_probes_written, 1);
	return lsn;
}

/*
 * Message length of a PROBE record, bounded by what the record really holds,
 * so that desc stays safe on damaged WAL (pg_walinspect calls it on
 * whatever it reads).
 */
static int
abt_probe_len(XLogReaderState *record)
{
	xl_abt_probe *xlrec = (xl_abt_probe *) XLogRecGetData(record);
	uint32		datalen = XLogRecGetDataLen(record);

	if (datalen < SizeOfAbtProbe)
		return -1;
	return (int) Min(xlrec->len, datalen - SizeOfAbtProbe);
}

static void
abt_probe_redo(XLogReaderState *record)
{
	xl_abt_probe *xlrec = (xl_abt_probe *) XLogRecGetData(record);
	int			len = abt_probe_len(record);

	if (len < 0)
		elog(PANIC, "abtree redo: PROBE record too short");

	pg_atomic_fetch_add_u64(&abt_shared->wal_probes_replayed, 1);
	ereport(LOG,
			(errmsg("abtree: replayed WAL probe \"%.*s\"", len, xlrec->message)));
}

static void
abt_probe_desc(StringInfo buf, XLogReaderState *record)
{
	xl_abt_probe *xlrec = (xl_abt_probe *) XLogRecGetData(record);
	int			len = abt_probe_len(record);

	if (len < 0)
		appendStringInfoString(buf, "(too short)");
	else
		appendStringInfo(buf, "message \"%.*s\"", len, xlrec->message);
}
