/*-------------------------------------------------------------------------
 *
 * abtsample.c
 *	  Weighted random sampling by one root-to-leaf descent (paper 000,
 *	  Algorithm 1 with the B-link corrections of section 4.2), optionally
 *	  restricted to a key range; and abtree_sample_tids() for SQL.
 *
 * abt_sample_one() makes one attempt: it returns true with a heap TID drawn
 * with probability proportional to its entry's weight, or false when the
 * attempt was rejected (stored weights overcount while inserts and VACUUM
 * are in flight; a range restriction rejects entries outside the range).
 * Callers retry with a new random number.  Every attempt is independent,
 * so the accepted draws are independent samples with replacement.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "mvstore/mvstore.h"

#include "access/relation.h"
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
#include "commands/defrem.h"

/* Does the key range of item off on an internal page meet the range? */
static bool
abt_item_in_range(Relation rel, AbtSampleRange *range, Page page, OffsetNumber off)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	AbtPageOpaque opaque = AbtPageGetOpaque(page);

	/* the item's keys are > its own key ... */
	if (range->has_hi && abt_compare(rel, &range->hi, page, off) <= 0)
		return false;
	/* ... and <= the next item's key (or the high key) */
	if (range->has_lo)
	{
		if (off < maxoff)
			return abt_compare(rel, &range->lo, page, off + 1) <= 0;
		if (!AbtPageIsRightmost(opaque))
			return abt_compare(rel, &range->lo, page, ABT_HIKEY) <= 0;
	}
	return true;
}

/*
 * The weight an item counts for in this draw: as the reader's snapshot
 * sees it, if there is a reader (src/mvstore/README): a leaf entry its
 * snapshot cannot see weighs nothing, and a downlink loses the deltas of
 * such entries below it.
 */
static uint64
abt_item_weight(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
				MvsReader *rd, Page page, OffsetNumber off)
{
	IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

	if (AbtPageIsLeaf(AbtPageGetOpaque(page)))
	{
		if (range && range->has_lo && abt_compare(rel, &range->lo, page, off) > 0)
			return 0;
		if (range && range->has_hi && abt_compare(rel, &range->hi, page, off) <= 0)
			return 0;
		return mvs_item_weight(rd, itup, true, info->weighted);
	}
	if (range && !abt_item_in_range(rel, range, page, off))
		return 0;
	return mvs_item_weight(rd, itup, false, info->weighted);
}

/*
 * An unweighted leaf whose entries are all valid weighs one per entry: a
 * draw indexes it directly instead of summing.  (With a not-yet-valid
 * entry on the page, positions would no longer match weights, hence the
 * flag, which splits keep for both halves.)
 */
static bool
abt_leaf_counts_entries(AbtIndexInfo *info, AbtSampleRange *range, MvsReader *rd, Page page)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);

	return AbtPageIsLeaf(opaque) && !info->weighted && range == NULL &&
		(rd == NULL || mvs_leaf_all_visible(rd, page)) &&
		!(opaque->flags & ABTP_HAS_INVALID);
}

/*
 * The weights of a page's items for a draw without a key range, read in one
 * tight loop, when the weight store has nothing to take off on this page:
 * decided once per page, not per item (issue 21; the per-item chain was a
 * third of a draw).  A downlink's raw weight serves when the store has no
 * version for the index at all (mvs_reader_versioned, asked after the
 * reads); a leaf entry's own weight (0 while not valid) when the reader's
 * snapshot sees every entry of the leaf.  Returns the number of items put
 * in ws, or -1 when the page needs the per-item path.
 */
static int
abt_page_raw_weights(AbtIndexInfo *info, MvsReader *rd, Page page, uint64 *ws)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	int			n = 0;

	if (AbtPageIsLeaf(opaque))
	{
		if (rd && !mvs_leaf_all_visible(rd, page))
			return -1;
		for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
			ws[n++] = abt_leaf_effective_weight((IndexTuple) PageGetItem(page, PageGetItemId(page, off)),
												info->weighted);
		return n;
	}
	for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		ws[n++] = *(volatile uint64 *) &AbtPivotGetAux(itup)->weight;
	}
	return mvs_reader_versioned(rd) ? -1 : n;
}

/*
 * One item (offset off, weight w) of abt_choose_item's scan: consume *r, or
 * note the item *r falls in.  True when the scan may stop (found, and no
 * total is wanted).
 */
static inline bool
abt_choose_step(OffsetNumber off, double w, double *r, double *chosen_w,
				bool want_total, double *sum, OffsetNumber *found)
{
	if (!OffsetNumberIsValid(*found))
	{
		if (*r < w)
		{
			*found = off;
			*chosen_w = w;
			if (!want_total)
				return true;
		}
		else
			*r -= w;
	}
	*sum += w;
	return false;
}

/*
 * Consume *r over the items of a page: returns the offset where *r falls
 * (and leaves in *r its position inside that item, in *chosen_w its
 * weight), or InvalidOffsetNumber after subtracting the whole page's weight
 * from *r.  With total, the scan goes on to the end of the page and sums
 * its weight there, so a draw checks a child and chooses in it in one scan.
 */
static OffsetNumber
abt_choose_item(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
				MvsReader *rd, Page page, double *r, double *chosen_w, double *total)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber off;
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber found = InvalidOffsetNumber;
	double		sum = 0;
	uint64		ws[MaxIndexTuplesPerPage];
	int			n;

	if (abt_leaf_counts_entries(info, range, rd, page))
	{
		n = Max(maxoff - AbtFirstDataOffset(opaque) + 1, 0);

		if (total)
			*total = n;
		*chosen_w = 1;
		if (*r < n)
			return AbtFirstDataOffset(opaque) + (OffsetNumber) *r;
		*r -= n;
		return InvalidOffsetNumber;
	}
	n = range == NULL ? abt_page_raw_weights(info, rd, page, ws) : -1;
	if (n >= 0)
	{
		for (int i = 0; i < n; i++)
			if (abt_choose_step(AbtFirstDataOffset(opaque) + i, (double) ws[i], r, chosen_w,
								total != NULL, &sum, &found))
				return found;
	}
	else
	{
		for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
			if (abt_choose_step(off, (double) abt_item_weight(rel, info, range, rd, page, off),
								r, chosen_w, total != NULL, &sum, &found))
				return found;
	}
	if (total)
		*total = sum;
	return found;
}

static double
abt_range_page_weight(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
					  MvsReader *rd, Page page)
{
	OffsetNumber off;
	double		sum = 0;

	if (range == NULL)
	{
		uint64		ws[MaxIndexTuplesPerPage];
		int			n = abt_page_raw_weights(info, rd, page, ws);

		for (int i = 0; i < n; i++)
			sum += (double) ws[i];
		if (n >= 0)
			return sum;
	}
	for (off = AbtFirstDataOffset(AbtPageGetOpaque(page));
		 off <= PageGetMaxOffsetNumber(page); off++)
		sum += (double) abt_item_weight(rel, info, range, rd, page, off);
	return sum;
}

/*
 * A draw found the child heavier (total) than the downlink it read.  Usually
 * adds landed in between, and then the downlink has grown too: a pass adds
 * on a downlink before it adds below it.  Look again, holding the child (a
 * child and then its parent is the lock order): true if the downlink now
 * covers the child, or moved, and the draw is to be rejected.  False if it
 * still does not, which only a standby can see (a page image there carries
 * the add of a pass that the primary has not finished, or whose crash the
 * primary's abt_recovery_check has not repaired yet), and rejecting would
 * then never reach this subtree at all.
 */
static bool
abt_downlink_caught_up(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
					   MvsReader *rd, BlockNumber parent, BlockNumber child, double total)
{
	Buffer		pbuf = ReadBuffer(rel, parent);
	Page		ppage;
	OffsetNumber off;
	bool		caught_up = true;

	LockBuffer(pbuf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, pbuf);
	ppage = BufferGetPage(pbuf);
	off = abt_find_downlink(ppage, child, InvalidOffsetNumber);
	if (OffsetNumberIsValid(off))
		caught_up = (double) abt_item_weight(rel, info, range, rd, ppage, off) >= total;
	UnlockReleaseBuffer(pbuf);
	return caught_up;
}

/* Does page end where its parent's downlink said, i.e. has it not split? */
static bool
abt_page_ends_at(Page page, IndexTuple expected_hikey)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);

	if (expected_hikey == NULL)
		return AbtPageIsRightmost(opaque);
	return !AbtPageIsRightmost(opaque) &&
		abt_pivot_key_equal((IndexTuple) PageGetItem(page, PageGetItemId(page, ABT_HIKEY)),
							expected_hikey);
}

/* The key range of item off ends where the next item (or the page) does. */
static IndexTuple
abt_item_hikey(Page page, OffsetNumber off)
{
	if (off < PageGetMaxOffsetNumber(page))
		return CopyIndexTuple((IndexTuple) PageGetItem(page, PageGetItemId(page, off + 1)));
	if (!AbtPageIsRightmost(AbtPageGetOpaque(page)))
		return CopyIndexTuple((IndexTuple) PageGetItem(page, PageGetItemId(page, ABT_HIKEY)));
	return NULL;
}

/* The only item of an internal page that meets the range, if just one does. */
static OffsetNumber
abt_only_item_in_range(Relation rel, AbtSampleRange *range, Page page)
{
	OffsetNumber off;
	OffsetNumber found = InvalidOffsetNumber;

	for (off = AbtFirstDataOffset(AbtPageGetOpaque(page));
		 off <= PageGetMaxOffsetNumber(page); off++)
	{
		if (!abt_item_in_range(rel, range, page, off))
			continue;
		if (OffsetNumberIsValid(found))
			return InvalidOffsetNumber;
		found = off;
	}
	return found;
}

/*
 * Where a range draw starts: the highest page on which more than one item
 * meets the range (or the leaf holding all of it).  Everything in the range
 * lies below it, so spreading u over that page's items is as exact as
 * spreading it over the root's, and draws are not rejected for landing in
 * the parts of the root's items outside the range.  If a page we went
 * through split after we read its parent, part of the range may have moved
 * right of it: returns InvalidBuffer and the draw is rejected.
 */
static Buffer
abt_range_start(Relation rel, AbtSampleRange *range, Buffer buf, IndexTuple *expected_hikey)
{
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		OffsetNumber off;

		if (AbtPageIsLeaf(AbtPageGetOpaque(page)))
			return buf;
		off = abt_only_item_in_range(rel, range, page);
		if (!OffsetNumberIsValid(off))
			return buf;
		if (*expected_hikey)
			pfree(*expected_hikey);
		*expected_hikey = abt_item_hikey(page, off);
		buf = abt_relandgetbuf(rel, buf,
							   AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, off))));
		if (!abt_page_ends_at(BufferGetPage(buf), *expected_hikey))
		{
			UnlockReleaseBuffer(buf);
			return InvalidBuffer;
		}
	}
}

bool
abt_sample_one(Relation rel, double u, AbtSampleRange *range, MvsReader *rd,
			   ItemPointer result)
{
	AbtIndexInfo *info = abt_index_info(rel);
	Buffer		buf;
	Page		page;
	double		r;
	double		dw;
	OffsetNumber off;
	IndexTuple	expected_hikey = NULL;

	/* every downlink must cover its child: once after crash recovery */
	abt_recovery_check(rel);
	/* the true root: a draw must start from the whole tree's weight */
	buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
	if (!BufferIsValid(buf))
		return false;
	if (range)
	{
		buf = abt_range_start(rel, range, buf, &expected_hikey);
		if (!BufferIsValid(buf))
		{
			if (expected_hikey)
				pfree(expected_hikey);
			return false;
		}
	}
	page = BufferGetPage(buf);
	r = u * abt_range_page_weight(rel, info, range, rd, page);
	off = abt_choose_item(rel, info, range, rd, page, &r, &dw, NULL);

	for (;;)
	{
		IndexTuple	itup;
		BlockNumber child;
		BlockNumber parent;
		double		total;

		if (off == InvalidOffsetNumber)
		{
			/* r is past this page: its parent's downlink overcounted */
			UnlockReleaseBuffer(buf);
			if (expected_hikey)
				pfree(expected_hikey);
			return false;
		}

		itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		if (AbtPageIsLeaf(AbtPageGetOpaque(page)))
		{
			*result = itup->t_tid;
			UnlockReleaseBuffer(buf);
			if (expected_hikey)
				pfree(expected_hikey);
			return true;
		}

		/* dw is the downlink's weight: remember where its key range ends */
		if (expected_hikey)
			pfree(expected_hikey);
		expected_hikey = abt_item_hikey(page, off);
		child = AbtDownlinkGetChild(itup);
		parent = BufferGetBlockNumber(buf);
		UnlockReleaseBuffer(buf);
		abt_debug_wait(abt_debug_sample_pause);
		buf = ReadBuffer(rel, child);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		abt_check_page(rel, buf);
		page = BufferGetPage(buf);

		/*
		 * r is uniform on [0, dw).  If the child now weighs more than dw
		 * (an insert's weight pass added below it after we read the
		 * downlink) the units past dw could not be reached, so the child's
		 * last entries would be drawn too rarely: reject the attempt
		 * instead.  Likewise if the child split since we read its parent
		 * (its key range now spans pages).  Neither depends on r, so the
		 * accepted draws keep their probabilities (src/abtree/README,
		 * "Sampling").  Only weights that stay inconsistent after a second
		 * look let the draw go on within dw (abt_downlink_caught_up).
		 */
		if (!abt_page_ends_at(page, expected_hikey))
			off = InvalidOffsetNumber;
		else
		{
			double		limit = dw;

			off = abt_choose_item(rel, info, range, rd, page, &r, &dw, &total);
			if (total > limit &&
				abt_downlink_caught_up(rel, info, range, rd, parent, child, total))
				off = InvalidOffsetNumber;
		}
	}
}

/*
 * The weight abt_sample_one() spreads its u over: the items of the page a
 * draw starts from (the root, or for a range abt_range_start()'s page) as
 * the reader sees them, restricted to the range.  It bounds the weight of the
 * entries a draw can return, and a caller choosing between several indexes
 * (the partitions of a table) weighs each by it, so that every entry keeps
 * its probability w / (sum over the indexes).
 */
double
abt_sample_total(Relation rel, AbtSampleRange *range, MvsReader *rd)
{
	abt_recovery_check(rel);
	for (;;)
	{
		Buffer		buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
		IndexTuple	expected_hikey = NULL;
		double		total;

		if (!BufferIsValid(buf))
			return 0;
		if (range)
			buf = abt_range_start(rel, range, buf, &expected_hikey);
		if (expected_hikey)
			pfree(expected_hikey);
		if (!BufferIsValid(buf))
			continue;			/* a page split under us: look again */
		total = abt_range_page_weight(rel, abt_index_info(rel), range, rd, BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		return total;
	}
}

/* ---- SQL: abtree_sample_tids(index regclass, n int, seed float8) ---- */

#define ABT_SAMPLE_MAX_N		10000000
/* give up after this many rejected attempts per requested sample */
#define ABT_SAMPLE_MAX_REJECTS	1000

PG_FUNCTION_INFO_V1(abtree_sample_tids);

/* Open an index, checking that it is an abtree and that we may read its table. */
Relation
abt_open_index_checked(Oid indexoid, LOCKMODE lockmode)
{
	return abt_open_am_index(indexoid, lockmode, "abtree", ACL_SELECT);
}

/*
 * Open an index, checking that its access method is amname and that we have
 * privilege mode on its table; reading (ACL_SELECT) is refused when
 * row-level security applies to us (abt_refuse_under_rls).
 */
Relation
abt_open_am_index(Oid indexoid, LOCKMODE lockmode, const char *amname, AclMode mode)
{
	Relation	rel = abt_open_am_index_shell(indexoid, lockmode, amname, mode);

	/* a Citus table's rows, and its index's entries, are in its shards */
	abt_refuse_citus_shell(rel, rel->rd_index->indrelid);
	return rel;
}

/*
 * abt_open_am_index, also for the index of a Citus table's shell, for the
 * functions that go on to ask the shards (abtree_range_weight).
 */
Relation
abt_open_am_index_shell(Oid indexoid, LOCKMODE lockmode, const char *amname, AclMode mode)
{
	Relation	rel;
	Oid			heapoid;
	AclResult	aclresult;

	abt_require_preload();
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
				 errdetail("A partitioned index has no entries of its own; each partition has its index."),
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

/* Draw n samples into the result set of an SRF call. */
static void
abt_sample_into(FunctionCallInfo fcinfo, Relation rel, int32 n, pg_prng_state *prng,
				AbtSampleRange *range)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		rejects = 0;
	int32		i;
	MvsReader	rd;

	/* draw as the statement's snapshot sees the index */
	mvs_reader_init(&rd, rel, ActiveSnapshotSet() ? GetActiveSnapshot() : NULL);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (i = 0; i < n; i++)
	{
		ItemPointerData tid;
		Datum		value;
		bool		isnull = false;

		CHECK_FOR_INTERRUPTS();
		while (!abt_sample_one(rel, pg_prng_double(prng), range, &rd, &tid))
		{
			if (++rejects > (int64) ABT_SAMPLE_MAX_REJECTS * (i + 1))
			{
				/* nothing to draw: no samples, no error */
				if (!abt_range_has_weight(rel, range, &rd))
					return;
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("too many rejected draws in abtree index \"%s\"",
								RelationGetRelationName(rel)),
						 errhint("The stored weights overcount a lot, or the range holds a tiny part of the weight of the subtrees around it; VACUUM the table or widen the range.")));
			}
			CHECK_FOR_INTERRUPTS();
		}
		value = PointerGetDatum(&tid);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
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
	Relation	rel = abt_open_index_checked(PG_GETARG_OID(0), AccessShareLock);
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
	Relation	rel = abt_open_index_checked(PG_GETARG_OID(0), AccessShareLock);
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
	Buffer		buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
	uint64		total;

	if (!BufferIsValid(buf))
		return 0;
	total = abt_page_weight(BufferGetPage(buf), abt_index_info(rel)->weighted);
	UnlockReleaseBuffer(buf);
	return total;
}
