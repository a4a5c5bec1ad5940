/*-------------------------------------------------------------------------
 *
 * abtcompare.c
 *	  Keys, comparisons and binary search on abtree pages.
 *
 * A key (AbtKey) holds up to all key columns and optionally the heap TID.
 * The parts it does not hold compare as minus infinity, or as plus
 * infinity when key->nextkey is set: with minus infinity a search finds
 * the first tuple >= the given prefix, with plus infinity the first tuple
 * > it.  Comparisons call the operator class's support function 1, which
 * takes (indexed value, key value) for cross-type keys, as in nbtree.
 * The same-type integer comparisons of the built-in families are done
 * inline instead (issue 22: the fmgr call was a fifth of an insert's
 * comparison time); they compute exactly what those functions return.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "catalog/index.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

/* How a support function with this OID can be compared inline, if at all */
static AbtCmpKind
abt_cmp_kind(Oid proc)
{
	switch (proc)
	{
		case F_BTINT2CMP:
			return ABT_CMP_INT16;
		case F_BTINT4CMP:
		case F_DATE_CMP:
			return ABT_CMP_INT32;
		case F_BTINT8CMP:
		case F_TIMESTAMP_CMP:
		case F_TIMESTAMPTZ_CMP:
			return ABT_CMP_INT64;
		case F_BTOIDCMP:
			return ABT_CMP_UINT32;
		default:
			return ABT_CMP_FMGR;
	}
}

/* Compare a key column through support function proc (key->attrs[i]) */
void
abt_key_set_proc(AbtKeyAttr *attr, Oid proc)
{
	fmgr_info(proc, &attr->cmp);
	attr->kind = abt_cmp_kind(proc);
}

/* An empty key: minus infinity.  Fills in collations, options, cmp procs. */
void
abt_key_init(Relation rel, AbtKey *key)
{
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	int			i;

	key->meta = ABT_METAPAGE;
	key->natts = 0;
	key->nextkey = false;
	key->has_tid = false;
	ItemPointerSetInvalid(&key->tid);
	for (i = 0; i < nkeyatts; i++)
	{
		AbtKeyAttr *attr = &key->attrs[i];
		int16		opt = rel->rd_indoption[i];

		attr->value = (Datum) 0;
		attr->isnull = false;
		attr->desc = (opt & INDOPTION_DESC) != 0;
		attr->nulls_first = (opt & INDOPTION_NULLS_FIRST) != 0;
		attr->collation = rel->rd_indcollation[i];
		fmgr_info_copy(&attr->cmp, index_getprocinfo(rel, i + 1, 1),
					   CurrentMemoryContext);
		attr->kind = abt_cmp_kind(attr->cmp.fn_oid);
	}
}

/* The full key of a tuple: all key columns and the heap TID. */
void
abt_key_from_tuple(Relation rel, AbtKey *key, IndexTuple itup, bool pivot)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	abt_key_init(rel, key);
	key->natts = IndexRelationGetNumberOfKeyAttributes(rel);
	for (i = 0; i < key->natts; i++)
		key->attrs[i].value = index_getattr(itup, i + 1, desc, &key->attrs[i].isnull);
	key->has_tid = true;
	key->tid = *abt_tuple_heaptid(itup, pivot);
}

#define ABT_CMP3(a, b)	(((a) > (b)) - ((a) < (b)))

/* Compare one column: < 0 if the key value sorts before the tuple's. */
static inline int
abt_compare_attr(AbtKeyAttr *attr, Datum value, bool isnull)
{
	int32		result;

	if (attr->isnull || isnull)
	{
		if (attr->isnull && isnull)
			return 0;
		/* NULLs sort after values, or before them with NULLS FIRST */
		result = attr->isnull ? 1 : -1;
		return attr->nulls_first ? -result : result;
	}

	switch ((AbtCmpKind) attr->kind)
	{
		case ABT_CMP_INT16:
			result = ABT_CMP3(DatumGetInt16(attr->value), DatumGetInt16(value));
			break;
		case ABT_CMP_INT32:
			result = ABT_CMP3(DatumGetInt32(attr->value), DatumGetInt32(value));
			break;
		case ABT_CMP_INT64:
			result = ABT_CMP3(DatumGetInt64(attr->value), DatumGetInt64(value));
			break;
		case ABT_CMP_UINT32:
			result = ABT_CMP3(DatumGetObjectId(attr->value), DatumGetObjectId(value));
			break;
		default:
			/* support function 1 compares (indexed value, key value) */
			result = DatumGetInt32(FunctionCall2Coll(&attr->cmp, attr->collation,
													 value, attr->value));
			INVERT_COMPARE_RESULT(result);
			break;
	}
	if (attr->desc)
		INVERT_COMPARE_RESULT(result);
	return result;
}

/*
 * Compare key with the tuple at off: < 0, 0, > 0 as key sorts before, equal
 * to, after it.  The first data item of an internal page is minus infinity.
 */
int
abt_compare(Relation rel, AbtKey *key, Page page, OffsetNumber off)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
	bool		pivot = !AbtPageIsLeaf(opaque) ||
		(off == ABT_HIKEY && !AbtPageIsRightmost(opaque));
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	if (pivot && AbtPivotHasNoKey(itup))
		return 1;

	for (i = 0; i < key->natts; i++)
	{
		bool		isnull;
		Datum		value = index_getattr(itup, i + 1, desc, &isnull);
		int			result = abt_compare_attr(&key->attrs[i], value, isnull);

		if (result != 0)
			return result;
	}

	if (key->natts < IndexRelationGetNumberOfKeyAttributes(rel) || !key->has_tid)
		return key->nextkey ? 1 : -1;

	return abt_tid_cmp(&key->tid, abt_tuple_heaptid(itup, pivot));
}

/*
 * Do key's columns all equal those of the data item at off?  The heap TID
 * is not compared: a leaf split asks whether a page holds one key value.
 */
bool
abt_key_columns_equal(Relation rel, AbtKey *key, Page page, OffsetNumber off)
{
	IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < key->natts; i++)
	{
		bool		isnull;
		Datum		value = index_getattr(itup, i + 1, desc, &isnull);

		if (abt_compare_attr(&key->attrs[i], value, isnull) != 0)
			return false;
	}
	return true;
}

/*
 * Compare two tuples by their full keys (used by verification).
 */
int
abt_compare_tuples(Relation rel, IndexTuple a, bool a_pivot,
				   IndexTuple b, bool b_pivot)
{
	AbtKey	   *key = palloc(sizeof(AbtKey));
	int			result;

	abt_key_from_tuple(rel, key, a, a_pivot);
	result = abt_compare_key_tuple(rel, key, b, b_pivot);
	pfree(key);
	return result;
}

/* The same with a's full key made already (abt_key_from_tuple). */
int
abt_compare_key_tuple(Relation rel, AbtKey *key, IndexTuple b, bool b_pivot)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			result = 0;

	for (int i = 0; i < key->natts && result == 0; i++)
	{
		bool		isnull;
		Datum		value = index_getattr(b, i + 1, desc, &isnull);

		result = abt_compare_attr(&key->attrs[i], value, isnull);
	}
	if (result == 0)
		result = abt_tid_cmp(&key->tid, abt_tuple_heaptid(b, b_pivot));
	return result;
}

/*
 * Compare two full keys (abt_key_from_tuple) of the same index, as
 * abt_compare_key_tuple compares a with b's tuple, without reading the
 * tuple again: a batched flush sorts its entries with it.
 */
int
abt_compare_keys(AbtKey *a, const AbtKey *b)
{
	for (int i = 0; i < a->natts; i++)
	{
		int			result = abt_compare_attr(&a->attrs[i], b->attrs[i].value,
											  b->attrs[i].isnull);

		if (result != 0)
			return result;
	}
	return abt_tid_cmp(&a->tid, &b->tid);
}

/*
 * Ask for what a binary search of [low, high) on page will read: all its
 * line pointers now (a few cache lines, loaded in parallel instead of one
 * miss per step), and at each step the tuples of both halves' middles,
 * one of which the next step compares.  A leaf visited by an insert is
 * rarely in the core's cache, and its tuples lie in the order they came,
 * so each step's tuple was a cache miss the next step waited for: the
 * tuple's first byte was three quarters of abt_compare's time, and the
 * leaf's search a fifth of an insert's (bench/results/write_path_profile.md).
 */
static inline void
abt_prefetch_line_pointers(Page page, OffsetNumber low, OffsetNumber high)
{
	char	   *from = (char *) PageGetItemId(page, low);
	char	   *to = (char *) PageGetItemId(page, high);

	for (char *p = from; p < to; p += PG_CACHE_LINE_SIZE)
		abt_prefetch(p);
}

static inline void
abt_prefetch_halves(Page page, OffsetNumber low, OffsetNumber mid, OffsetNumber high)
{
	if (mid > low)
		abt_prefetch_item(page, PageGetItemId(page, low + (mid - low) / 2));
	if (high > mid + 1)
		abt_prefetch_item(page, PageGetItemId(page, mid + 1 + (high - mid - 1) / 2));
}

/*
 * The first offset in [low, high) whose tuple is >= key (> key with
 * nextkey), or high if there is none.
 */
static inline OffsetNumber
abt_binsrch(Relation rel, AbtKey *key, Page page, OffsetNumber low, OffsetNumber high)
{
	abt_prefetch_line_pointers(page, low, high);
	/* invariant: items before low are < key, items from high on are >= key */
	while (low < high)
	{
		OffsetNumber mid = low + (high - low) / 2;

		abt_prefetch_halves(page, low, mid, high);
		if (abt_compare(rel, key, page, mid) > 0)
			low = mid + 1;
		else
			high = mid;
	}
	return low;
}

/*
 * Leaf: the first data offset whose tuple is >= key (> key with nextkey),
 * or maxoff + 1 if there is none on the page.
 */
OffsetNumber
abt_binsrch_leaf(Relation rel, AbtKey *key, Page page)
{
	return abt_binsrch(rel, key, page, AbtFirstDataOffset(AbtPageGetOpaque(page)),
					   PageGetMaxOffsetNumber(page) + 1);
}

/*
 * Internal page: the downlink to follow, the last one whose key is < key.
 * The first data item is minus infinity, so there always is one.
 */
OffsetNumber
abt_binsrch_internal(Relation rel, AbtKey *key, Page page)
{
	OffsetNumber first = AbtFirstDataOffset(AbtPageGetOpaque(page));

	Assert(PageGetMaxOffsetNumber(page) >= first);
	/* find the first downlink whose key is >= key; follow the one before */
	return abt_binsrch(rel, key, page, first + 1, PageGetMaxOffsetNumber(page) + 1) - 1;
}

/*
 * Is off the downlink abt_binsrch_internal would follow for key?  Two
 * comparisons: the downlink's key is < key (or it is the first, minus
 * infinity), and the next one's is >= key (or there is none).
 */
bool
abt_internal_offset_holds(Relation rel, AbtKey *key, Page page, OffsetNumber off)
{
	OffsetNumber first = AbtFirstDataOffset(AbtPageGetOpaque(page));
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	if (off < first || off > maxoff)
		return false;
	if (off > first && abt_compare(rel, key, page, off) <= 0)
		return false;
	return off == maxoff || abt_compare(rel, key, page, off + 1) <= 0;
}

/* Has the key moved right of this page (key > high key)? */
bool
abt_key_beyond_page(Relation rel, AbtKey *key, Page page)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);

	if (AbtPageIsRightmost(opaque))
		return false;
	return abt_compare(rel, key, page, ABT_HIKEY) > 0;
}
