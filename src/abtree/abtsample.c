/*-------------------------------------------------------------------------
 *
 * abtsample.c
 *	  The SQL face of weighted random sampling: abtree_sample_tids() and
 *	  abtree_sample_tids_range(), which draw through abt_sample_batch()
 *	  (abtdraw.c: the descents), and the index opening and PRNG seeding the
 *	  sampling entry points share.
 *
 * A batch makes one attempt per variate: an attempt returns a heap TID
 * drawn with probability proportional to its entry's weight, or is
 * rejected (stored weights overcount while inserts and VACUUM are in
 * flight; a range restriction rejects entries outside the range).  Rejected
 * attempts are made again with new variates.  Every attempt is
 * independent, so the accepted draws are independent samples with
 * replacement.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "mvstore/mvstore.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "common/hashfn.h"
#include "common/pg_prng.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "catalog/index.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "executor/tuptable.h"
#include "storage/lmgr.h"

/* ---- SQL: abtree_sample_tids(index regclass, n int, seed float8) ---- */

#define ABT_SAMPLE_MAX_N		10000000
/* give up after this many rejected attempts per requested sample */
#define ABT_SAMPLE_MAX_REJECTS	1000
/* attempts per descent batch */
#define ABT_SAMPLE_BATCH		65536

PG_FUNCTION_INFO_V1(abtree_sample_tids);

/* Open an index, checking that it is an abtree and that we may read its table. */
Relation
abt_open_index_checked(Oid indexoid, LOCKMODE lockmode)
{
	Relation	rel = abt_open_am_index(indexoid, lockmode, "abtree", ACL_SELECT);

	/* what the SQL functions read counts this backend's waiting entries */
	abt_batch_flush_rel(rel);
	return rel;
}

/*
 * Open an index, checking that its access method is amname and that we have
 * privilege mode on its table; reading (ACL_SELECT) is refused when
 * row-level security applies to us (abt_refuse_under_rls).
 */
Relation
abt_open_am_index(Oid indexoid, LOCKMODE lockmode, const char *amname, AclMode mode)
{
	Relation	rel;

	abt_require_preload();
	rel = abt_open_am_index_shell(indexoid, lockmode, amname, mode);

	/* a Citus table's rows, and its index's entries, are in its shards */
	abt_refuse_citus_shell(rel, rel->rd_index->indrelid);
	return rel;
}

/*
 * Open an abtree index for a function that only reads its pages
 * (abtree_stats, abtree_sketch, abtree_range_weight without the weight
 * store): these work without the preload, which only WAL and shared memory
 * need (README, "Preloading").
 */
Relation
abt_open_index_for_reading(Oid indexoid, LOCKMODE lockmode)
{
	Relation	rel = abt_open_am_index_shell(indexoid, lockmode, "abtree", ACL_SELECT);

	abt_refuse_citus_shell(rel, rel->rd_index->indrelid);
	abt_batch_flush_rel(rel);
	return rel;
}

/*
 * abt_open_am_index, also for the index of a Citus table's shell, for the
 * functions that go on to ask the shards (abtree_range_weight), and without
 * the preload check, which the callers make where they need it.
 */
Relation
abt_open_am_index_shell(Oid indexoid, LOCKMODE lockmode, const char *amname, AclMode mode)
{
	Relation	rel;
	Oid			heapoid;
	AclResult	aclresult;

	rel = try_relation_open(indexoid, lockmode);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_INDEX &&
		rel->rd_rel->relam == get_index_am_oid(amname, false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a partitioned %s index", RelationGetRelationName(rel), amname),
				 errdetail("A partitioned index has no entries of its own; each partition has its index. abtree_range_weight and abtree_sketch add up the partitions by themselves."),
				 errhint("Call the function on the partitions' indexes: SELECT relid FROM pg_partition_tree('%s') WHERE isleaf;",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)))));
	if (rel->rd_rel->relkind != RELKIND_INDEX ||
		rel->rd_rel->relam != get_index_am_oid(amname, false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not %s %s index", RelationGetRelationName(rel),
						amname[0] == 'a' ? "an" : "a", amname),
				 errhint("Create one with CREATE INDEX ... USING %s (...).", amname)));
	heapoid = IndexGetRelation(indexoid, false);
	aclresult = pg_class_aclcheck(heapoid, GetUserId(), mode);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, get_rel_name(heapoid));
	if (mode & ACL_SELECT)
		abt_refuse_under_rls(heapoid);
	return rel;
}

/*
 * The indexes of the leaf partitions of partitioned abtree index indexoid,
 * opened with lockmode, for the functions whose answer is a sum (or union)
 * over the partitions: abtree_range_weight, abtree_sketch.  Privileges and
 * policies are the partitioned table's, as for a query on it.  NIL if
 * indexoid is not a partitioned abtree index.  A foreign partition has no
 * index, and a sum without its rows would be wrong: ERROR.
 */
List *
abt_open_partition_indexes(Oid indexoid, LOCKMODE lockmode)
{
	Relation	parent;
	Oid			heapoid;
	AclResult	aclresult;
	List	   *indexes = NIL;
	ListCell   *lc;

	parent = try_relation_open(indexoid, lockmode);
	if (parent == NULL)
		return NIL;
	if (parent->rd_rel->relkind != RELKIND_PARTITIONED_INDEX ||
		parent->rd_rel->relam != get_index_am_oid("abtree", false))
	{
		relation_close(parent, lockmode);
		return NIL;
	}
	heapoid = parent->rd_index->indrelid;
	aclresult = pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, get_rel_name(heapoid));
	abt_refuse_under_rls(heapoid);

	foreach(lc, find_all_inheritors(heapoid, AccessShareLock, NULL))
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_FOREIGN_TABLE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("partition \"%s\" of \"%s\" is a foreign table, which has no abtree index",
							get_rel_name(lfirst_oid(lc)), get_rel_name(heapoid)),
					 errdetail("A sum over the partitions' indexes of \"%s\" would leave its rows out.",
							   RelationGetRelationName(parent)),
					 errhint("Call the function on the other partitions' indexes one by one.")));
	foreach(lc, find_all_inheritors(indexoid, lockmode, NULL))
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_INDEX)
			indexes = lappend(indexes, index_open(lfirst_oid(lc), NoLock));
	relation_close(parent, lockmode);
	return indexes;
}

/* The PRNG of a sampling call: seeded from seed, or randomly if null. */
void
abt_seed_prng(pg_prng_state *prng, bool has_seed, float8 seed)
{
	if (has_seed)
		pg_prng_seed(prng, hash_bytes_extended((const unsigned char *) &seed,
											   sizeof(seed), 0));
	else
		pg_prng_seed(prng, pg_prng_uint64(&pg_global_prng_state));
}

/*
 * Is there any entry of positive weight in the range that rd's snapshot
 * does not rule out?  Walks the leaves from the range's start; used only
 * when draws keep being rejected.
 */
static bool
abt_range_has_weight(Relation rel, AbtSampleRange *range, MvsReader *rd)
{
	AbtIndexInfo *info = abt_index_info(rel);
	AbtKey	   *start = palloc(sizeof(AbtKey));
	Buffer		buf;
	bool		found = false;

	if (range && range->has_lo)
		memcpy(start, &range->lo, sizeof(AbtKey));
	else
		abt_key_init(rel, start);
	buf = abt_descend_to_leaf(rel, start);
	while (BufferIsValid(buf) && !found)
	{
		Page		page = BufferGetPage(buf);
		AbtPageOpaque opaque = AbtPageGetOpaque(page);
		OffsetNumber off;
		bool		past = false;

		for (off = abt_binsrch_leaf(rel, start, page);
			 off <= PageGetMaxOffsetNumber(page) && !found && !past; off++)
		{
			if (range && range->has_hi && abt_compare(rel, &range->hi, page, off) <= 0)
				past = true;
			else
			{
				IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

				/* what the draws weigh: not the entries the snapshot rules out */
				found = abt_leaf_effective_weight(itup, info->weighted) > 0 &&
					!mvs_xid_invisible(rd, abt_leaf_xmin(itup));
			}
		}
		if (found || past || AbtPageIsRightmost(opaque))
			break;
		buf = abt_relandgetbuf(rel, buf, opaque->next);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	pfree(start);
	return found;
}

/*
 * An entry's TID names the root of its row's HOT chain, and the version the
 * statement sees can be a later member of the chain, with another TID.  A
 * join on ctid (README's usage) then drops the draw: every row ever updated
 * in place would be left out of the sample, with no error (regress
 * abtree_sample, "HOT-updated rows").  So each accepted draw is taken to
 * the member the snapshot sees, as an index scan takes an entry, through
 * the table access method; the heap is visited in block order (a pin kept
 * from one draw to the next on the same block).  A chain of which the
 * snapshot sees no member (a deleted row) keeps the entry's TID, which a
 * join drops.  The weight is the entry's either way: the members of a
 * chain agree on every indexed column, the weight column among them.
 */
static int
abt_draw_tid_cmp(const void *a, const void *b, void *arg)
{
	AbtDraw    *draws = arg;

	return ItemPointerCompare(&draws[*(const int *) a].tid, &draws[*(const int *) b].tid);
}

static void
abt_sample_resolve(Relation heap, Snapshot snapshot, AbtDraw *draws, int n)
{
	IndexFetchTableData *fetch;
	TupleTableSlot *slot;
	int		   *order = palloc(sizeof(int) * n);
	int			m = 0;

	for (int i = 0; i < n; i++)
		if (draws[i].accepted)
			order[m++] = i;
	qsort_arg(order, m, sizeof(int), abt_draw_tid_cmp, draws);
	fetch = table_index_fetch_begin(heap);
	slot = table_slot_create(heap, NULL);
	for (int j = 0; j < m; j++)
	{
		ItemPointer tid = &draws[order[j]].tid;
		bool		call_again = false;
		bool		all_dead = false;

		if (table_index_fetch_tuple(fetch, tid, snapshot, slot, &call_again, &all_dead))
			*tid = slot->tts_tid;
	}
	ExecDropSingleTupleTableSlot(slot);
	table_index_fetch_end(fetch);
	pfree(order);
}

/*
 * Draw n samples into the result set of an SRF call, in batches; a batch's
 * rejected attempts are made again in the next one, and the samples come
 * out in the order their variates were drawn.
 */
static void
abt_sample_into(FunctionCallInfo fcinfo, Relation rel, int32 n, pg_prng_state *prng,
				AbtSampleRange *range)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		rejects = 0;	/* counted as judged (see below) */
	int			moved;
	int32		done = 0;
	int			cap = Min(Max(n, 1), ABT_SAMPLE_BATCH);
	int			round = cap;
	AbtDraw    *draws = palloc(sizeof(AbtDraw) * cap);
	MvsReader	rd;
	Snapshot	snapshot = ActiveSnapshotSet() ? GetActiveSnapshot() : NULL;
	Relation	heap = table_open(rel->rd_index->indrelid, NoLock);	/* abt_sample_open */

	/* draw as the statement's snapshot sees the index */
	mvs_reader_init(&rd, rel, snapshot);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	while (done < n)
	{
		int			want = Min(n - done, round);
		int			got;

		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < want; i++)
			draws[i].u = pg_prng_double(prng);
		got = abt_sample_batch(rel, range, &rd, draws, want, NULL, &moved);
		if (snapshot != NULL)
			abt_sample_resolve(heap, snapshot, draws, want);
		for (int i = 0; i < want; i++)
		{
			Datum		value = PointerGetDatum(&draws[i].tid);
			bool		isnull = false;

			if (draws[i].accepted)
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
		}
		done += got;
		round = abt_sample_round(round, want, moved, cap);

		/*
		 * Count and judge the rejections for pages that moved only in single
		 * descents: those of larger calls can be the call's own
		 * (abt_sample_round), and under heavy inserts they can outnumber the
		 * draws many times over before the calls have shrunk.  The others
		 * do not depend on the call's size.
		 */
		rejects += want - got - (want == 1 ? 0 : moved);
		if (rejects > (int64) ABT_SAMPLE_MAX_REJECTS * (done + 1))
		{
			/* nothing to draw: no samples, no error */
			if (done == 0 && !abt_range_has_weight(rel, range, &rd))
				break;
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("too many rejected draws in abtree index \"%s\"",
							RelationGetRelationName(rel)),
					 errhint("The stored weights overcount a lot, or the range holds a tiny part of the weight of the subtrees around it; VACUUM the table or widen the range.")));
		}
	}
	pfree(draws);
	table_close(heap, NoLock);
}

/*
 * An index that is not valid (a failed CREATE INDEX CONCURRENTLY, or one
 * still being built) lacks the entries of some rows: draws and weights
 * through it would leave them out, with no error (regress abtree_sample:
 * no draws and a weight of 0 from such an index over 1000 rows).  The
 * samplers refuse it, as TABLESAMPLE swr refuses it named and passes it
 * over otherwise.
 */
void
abt_refuse_invalid(Relation index)
{
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("abtree index \"%s\" is not valid", RelationGetRelationName(index)),
				 errdetail("An index that is not valid may lack entries of rows."),
				 errhint("A failed CREATE INDEX CONCURRENTLY leaves an invalid index; REINDEX it.")));
}

/*
 * CREATE INDEX over HOT chains whose earlier versions some snapshot can
 * still see (pg_index.indcheckxmin) gave each chain one entry, with the key
 * and weight of its newest version.  A snapshot older than the build can
 * see an earlier version, with another key or weight: its draws, range
 * draws and visible weights through the index would be biased, with no
 * error (isolation abtree_build_snapshot: ten rows weighing 100 in the
 * index and 1 as the snapshot sees them took half of its draws).  A
 * sampler has no other path than its index, so for such a snapshot it
 * refuses.  Which snapshots (src/abtree/README, "Indexes newer than the
 * snapshot"): PostgreSQL's planner leaves the index out of a transaction
 * while its pg_index row's xmin is not older than TransactionXmin; a
 * sampler also takes it for a snapshot taken after that transaction
 * committed, which sees the deletions of every version the build passed
 * over, however old the transaction's xmin (a long transaction elsewhere
 * holds it back, and would make every sampler on the table refuse).
 */
void
abt_refuse_newer_build(Relation index, Snapshot snapshot)
{
	TransactionId built;

	if (!index->rd_index->indcheckxmin)
		return;
	built = HeapTupleHeaderGetXmin(index->rd_indextuple->t_data);
	if (TransactionIdPrecedes(built, TransactionXmin))
		return;
	if (snapshot != NULL && IsMVCCSnapshot(snapshot) &&
		!TransactionIdIsCurrentTransactionId(built) &&
		!XidInMVCCSnapshot(built, snapshot) && TransactionIdDidCommit(built))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("abtree index \"%s\" was built after this transaction's snapshot",
					RelationGetRelationName(index)),
			 errdetail("The build gave rows updated in place (HOT) the keys and weights of their newest versions, and the snapshot may see older ones."),
			 errhint("Sample in a transaction that starts after the one that built the index has committed.")));
}

/*
 * Open an index to draw from, its table locked first, in the order DROP
 * TABLE locks them: a DROP waiting between the index's lock and the
 * table's would make a deadlock.  Should the index now belong to another
 * table (dropped and its OID reused meanwhile), that one is locked too.
 */
static Relation
abt_sample_open(Oid indexoid)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	rel;

	if (OidIsValid(heapoid))
		LockRelationOid(heapoid, AccessShareLock);
	rel = abt_open_index_checked(indexoid, AccessShareLock);
	if (rel->rd_index->indrelid != heapoid)
		LockRelationOid(rel->rd_index->indrelid, AccessShareLock);
	abt_refuse_invalid(rel);
	abt_refuse_newer_build(rel, ActiveSnapshotSet() ? GetActiveSnapshot() : NULL);
	return rel;
}

static int32
abt_sample_check_args(FunctionCallInfo fcinfo, const char *fname)
{
	int32		n;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: index and n must not be null", fname)));
	n = PG_GETARG_INT32(1);
	if (n < 0 || n > ABT_SAMPLE_MAX_N)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: n must be between 0 and %d, not %d",
						fname, ABT_SAMPLE_MAX_N, n)));
	if (!PG_ARGISNULL(2) && isnan(PG_GETARG_FLOAT8(2)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: seed must not be NaN", fname)));
	return n;
}

Datum
abtree_sample_tids(PG_FUNCTION_ARGS)
{
	int32		n = abt_sample_check_args(fcinfo, "abtree_sample_tids");
	Relation	rel = abt_sample_open(PG_GETARG_OID(0));
	pg_prng_state prng;

	abt_seed_prng(&prng, !PG_ARGISNULL(2), PG_ARGISNULL(2) ? 0 : PG_GETARG_FLOAT8(2));
	abt_sample_into(fcinfo, rel, n, &prng, NULL);
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(abtree_sample_tids_range);

/*
 * abtree_sample_tids_range(index, n, seed, lo, hi): draws restricted to
 * entries whose first key column is in [lo, hi]; a NULL bound is open.
 */
Datum
abtree_sample_tids_range(PG_FUNCTION_ARGS)
{
	int32		n = abt_sample_check_args(fcinfo, "abtree_sample_tids_range");
	Relation	rel = abt_sample_open(PG_GETARG_OID(0));
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, 3);
	AbtSampleRange *range = palloc(sizeof(AbtSampleRange));
	pg_prng_state prng;

	if (!OidIsValid(type))
		type = get_fn_expr_argtype(fcinfo->flinfo, 4);
	abt_range_bounds(rel, type,
					 PG_ARGISNULL(3) ? (Datum) 0 : PG_GETARG_DATUM(3), PG_ARGISNULL(3), true,
					 PG_ARGISNULL(4) ? (Datum) 0 : PG_GETARG_DATUM(4), PG_ARGISNULL(4), true,
					 range);

	abt_seed_prng(&prng, !PG_ARGISNULL(2), PG_ARGISNULL(2) ? 0 : PG_GETARG_FLOAT8(2));
	abt_sample_into(fcinfo, rel, n, &prng, range);
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

/* Sum of the root's weights (0 for an empty tree). */
uint64
abt_total_weight(Relation rel)
{
	Buffer		buf;
	uint64		total;

	abt_batch_flush_rel(rel);
	buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);

	if (!BufferIsValid(buf))
		return 0;
	total = abt_page_weight(BufferGetPage(buf), abt_index_info(rel)->weighted);
	UnlockReleaseBuffer(buf);
	return total;
}
