/*-------------------------------------------------------------------------
 *
 * pbtsql.c
 *	  SQL functions of pbtree: pbtree_stats, pbtree_verify, pbtree_seal,
 *	  pbtree_merge.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

static const char *
pbt_state_name(uint16 state)
{
	switch (state)
	{
		case PBT_MUTABLE:
			return "mutable";
		case PBT_CLOSED:
			return "closed";
		case PBT_SEALED:
			return "sealed";
		case PBT_BUILDING:
			return "building";
		case PBT_DROPPED:
			return "dropped";
	}
	return "?";
}

static Oid
pbt_arg_index(FunctionCallInfo fcinfo, const char *fname)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: the index must not be null", fname)));
	return PG_GETARG_OID(0);
}

PG_FUNCTION_INFO_V1(pbtree_stats);

/*
 * pbtree_stats(index): one row per partition: number, state, entries
 * (counted on the leaves for live partitions), leaf pages, filters, filter
 * pages, the filters' estimated false-positive rates, creation time.
 */
Datum
pbtree_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			indexoid = pbt_arg_index(fcinfo, "pbtree_stats");
	Relation	rel = abt_open_am_index(indexoid, AccessShareLock, "pbtree", ACL_SELECT);
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));

	InitMaterializedSRF(fcinfo, 0);
	pbt_read_directory(rel, dir);
	for (int i = 0; i < dir->n; i++)
	{
		PbtPartition *p = &dir->parts[i];
		bool		live = p->state == PBT_MUTABLE || p->state == PBT_CLOSED ||
			p->state == PBT_SEALED;
		Datum		values[9];
		bool		nulls[9];

		memset(nulls, 0, sizeof(nulls));
		values[0] = Int64GetDatum(p->partno);
		values[1] = CStringGetTextDatum(pbt_state_name(p->state));
		if (live)
		{
			values[2] = Int64GetDatum((int64) pbt_count_entries(rel, p->head));
			values[3] = Int64GetDatum((int64) pbt_tree_leaves(rel, p->head));
		}
		else
			nulls[2] = nulls[3] = true;
		values[4] = Int32GetDatum(p->nfilters);
		values[5] = Int64GetDatum((int64) p->filter_pages * p->nfilters);
		if (p->nfilters >= 1)
			values[6] = Float8GetDatum(pbt_filter_fpr(p, 0));
		else
			nulls[6] = true;
		if (p->nfilters >= 2)
			values[7] = Float8GetDatum(pbt_filter_fpr(p, 1));
		else
			nulls[7] = true;
		values[8] = TimestampTzGetDatum(p->created);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

/* ---- pbtree_verify ---- */

typedef struct PbtVerifyState
{
	Relation	rel;
	PbtPartition *part;
	ItemPointerData *tids;
	int64		ntids;
	int64		maxtids;
	int			nfilters;
	FmgrInfo	procs[INDEX_MAX_KEYS];
	Oid			colls[INDEX_MAX_KEYS];
	int64		checked_filters;
} PbtVerifyState;

#define pbt_corrupt(rel, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("pbtree index \"%s\" is corrupted", RelationGetRelationName(rel)), \
			 errdetail(__VA_ARGS__)))

/* Each leaf entry: remember its TID; a sealed partition's filters hold it. */
static void
pbt_verify_entry(void *arg, IndexTuple itup)
{
	PbtVerifyState *vs = (PbtVerifyState *) arg;
	PbtPartition *p = vs->part;
	TupleDesc	desc = RelationGetDescr(vs->rel);
	int			nkeys = IndexRelationGetNumberOfKeyAttributes(vs->rel);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	bool		anynull = false;

	if (vs->ntids == vs->maxtids)
	{
		vs->maxtids *= 2;
		vs->tids = repalloc_huge(vs->tids, sizeof(ItemPointerData) * vs->maxtids);
	}
	vs->tids[vs->ntids++] = itup->t_tid;
	if (p->state != PBT_SEALED || p->nfilters == 0)
		return;
	for (int i = 0; i < nkeys; i++)
	{
		values[i] = index_getattr(itup, i + 1, desc, &isnull[i]);
		anynull |= isnull[i];
	}
	if (!anynull &&
		!pbt_filter_test(vs->rel, p, 0, pbt_filter_hash(vs->rel, nkeys, values, vs->colls, vs->procs)))
		pbt_corrupt(vs->rel, "The key filter of partition %u lacks the key of heap tuple (%u,%u).",
					p->partno, ItemPointerGetBlockNumber(&itup->t_tid),
					ItemPointerGetOffsetNumber(&itup->t_tid));
	if (p->nfilters == 2 && !isnull[0] &&
		!pbt_filter_test(vs->rel, p, 1, pbt_filter_hash(vs->rel, 1, values, vs->colls, vs->procs)))
		pbt_corrupt(vs->rel, "The leading-column filter of partition %u lacks the key of heap tuple (%u,%u).",
					p->partno, ItemPointerGetBlockNumber(&itup->t_tid),
					ItemPointerGetOffsetNumber(&itup->t_tid));
	vs->checked_filters++;
}

static int
pbt_tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

static void
pbt_verify_heap_callback(Relation index, ItemPointer tid, Datum *values,
						 bool *isnull, bool tupleIsAlive, void *state)
{
	PbtVerifyState *vs = (PbtVerifyState *) state;

	if (!bsearch(tid, vs->tids, vs->ntids, sizeof(ItemPointerData), pbt_tid_cmp))
		pbt_corrupt(vs->rel, "Heap tuple (%u,%u) is not in the index.",
					ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));
}

/* The directory: one mutable partition, numbers unique and given out. */
static void
pbt_verify_directory(Relation rel, PbtDirectory *dir)
{
	int			nmutable = 0;

	for (int i = 0; i < dir->n; i++)
	{
		PbtPartition *p = &dir->parts[i];

		nmutable += p->state == PBT_MUTABLE;
		if (p->partno == 0 || p->partno >= dir->next_partno)
			pbt_corrupt(rel, "Partition number %u is out of range.", p->partno);
		if (p->state < PBT_MUTABLE || p->state > PBT_DROPPED)
			pbt_corrupt(rel, "Partition %u has state %u.", p->partno, p->state);
		for (int j = 0; j < i; j++)
			if (dir->parts[j].partno == p->partno)
				pbt_corrupt(rel, "Partition %u is listed twice.", p->partno);
	}
	if (nmutable != 1)
		pbt_corrupt(rel, "The directory has %d mutable partitions.", nmutable);
}

PG_FUNCTION_INFO_V1(pbtree_verify);

/*
 * pbtree_verify(index, heapallindexed): the directory, every live
 * partition's tree (as abtree_verify checks a tree, without weights, and
 * that each page belongs to its partition), that sealed partitions'
 * filters hold every key they have, that no heap TID is in two partitions
 * and, with heapallindexed, that every heap tuple is in the index.  Takes
 * ShareLock (no inserts meanwhile), AccessShareLock on a standby.
 */
Datum
pbtree_verify(PG_FUNCTION_ARGS)
{
	Oid			indexoid = pbt_arg_index(fcinfo, "pbtree_verify");
	bool		heapallindexed = !PG_ARGISNULL(1) && PG_GETARG_BOOL(1);
	LOCKMODE	lockmode = RecoveryInProgress() ? AccessShareLock : ShareLock;
	PbtVerifyState vs;
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));

	memset(&vs, 0, sizeof(vs));
	vs.rel = abt_open_am_index(indexoid, lockmode, "pbtree", ACL_SELECT);
	vs.maxtids = 1024;
	vs.tids = palloc(sizeof(ItemPointerData) * vs.maxtids);
	if (pbt_filter_columns(vs.rel, &vs.nfilters))
		(void) pbt_filter_procs(vs.rel, vs.procs, vs.colls);

	pbt_read_directory(vs.rel, dir);
	pbt_verify_directory(vs.rel, dir);
	for (int i = 0; i < dir->n; i++)
	{
		PbtPartition *p = &dir->parts[i];

		if (p->state != PBT_MUTABLE && p->state != PBT_CLOSED && p->state != PBT_SEALED)
			continue;
		vs.part = p;
		abt_verify_partition(vs.rel, p->head, p->partno, !RecoveryInProgress(),
							 pbt_verify_entry, &vs);
	}
	qsort(vs.tids, vs.ntids, sizeof(ItemPointerData), pbt_tid_cmp);
	for (int64 j = 1; j < vs.ntids; j++)
		if (ItemPointerEquals(&vs.tids[j - 1], &vs.tids[j]))
			pbt_corrupt(vs.rel, "Heap tuple (%u,%u) has two entries.",
						ItemPointerGetBlockNumber(&vs.tids[j]),
						ItemPointerGetOffsetNumber(&vs.tids[j]));
	if (heapallindexed)
	{
		Relation	heap = table_open(IndexGetRelation(indexoid, false), AccessShareLock);
		IndexInfo  *indexInfo = BuildIndexInfo(vs.rel);

		table_index_build_scan(heap, vs.rel, indexInfo, true, false,
							   pbt_verify_heap_callback, &vs, NULL);
		table_close(heap, AccessShareLock);
	}
	relation_close(vs.rel, lockmode);
	PG_RETURN_INT64(vs.ntids);
}

PG_FUNCTION_INFO_V1(pbtree_seal);

/* pbtree_seal(index): seal the mutable partition now; false if empty */
Datum
pbtree_seal(PG_FUNCTION_ARGS)
{
	Oid			indexoid = pbt_arg_index(fcinfo, "pbtree_seal");
	Relation	rel = abt_open_am_index(indexoid, RowExclusiveLock, "pbtree", ACL_INSERT);
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));
	bool		sealed = false;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("pbtree_seal cannot run during recovery")));
	pbt_read_directory(rel, dir);
	if (pbt_count_entries(rel, pbt_mutable(dir)->head) > 0)
		sealed = pbt_seal(rel, true);
	relation_close(rel, RowExclusiveLock);
	PG_RETURN_BOOL(sealed);
}

PG_FUNCTION_INFO_V1(pbtree_merge);

/* pbtree_merge(index, max_partitions): merge sealed partitions into one */
Datum
pbtree_merge(PG_FUNCTION_ARGS)
{
	Oid			indexoid = pbt_arg_index(fcinfo, "pbtree_merge");
	int32		maxp = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1);
	Relation	rel;
	int			n;

	if (maxp < 0 || maxp == 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pbtree_merge: max_partitions must be 0 (all) or at least 2, not %d", maxp)));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("pbtree_merge cannot run during recovery")));
	rel = abt_open_am_index(indexoid, RowExclusiveLock, "pbtree", ACL_INSERT);
	n = pbt_merge(rel, maxp, false);
	relation_close(rel, RowExclusiveLock);
	PG_RETURN_INT32(n);
}
