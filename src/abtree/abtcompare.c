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
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "catalog/index.h"
#include "utils/rel.h"

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

/* Compare one column: < 0 if the key value sorts before the tuple's. */
static int
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

	/* support function 1 compares (indexed value, key value) */
	result = DatumGetInt32(FunctionCall2Coll(&attr->cmp, attr->collation,
											 value, attr->value));
	INVERT_COMPARE_RESULT(result);
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

	return ItemPointerCompare(&key->tid, abt_tuple_heaptid(itup, pivot));
}

/*
 * Compare two tuples by their full keys (used by verification).
 */
int
abt_compare_tuples(Relation rel, IndexTuple a, bool a_pivot,
				   IndexTuple b, bool b_pivot)
{
	TupleDesc	desc = RelationGetDescr(rel);
	AbtKey	   *key = palloc(sizeof(AbtKey));
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	int			i;
	int			result = 0;

	abt_key_from_tuple(rel, key, a, a_pivot);
	for (i = 0; i < nkeyatts && result == 0; i++)
	{
		bool		isnull;
		Datum		value = index_getattr(b, i + 1, desc, &isnull);

		result = abt_compare_attr(&key->attrs[i], value, isnull);
	}
	if (result == 0)
		result = ItemPointerCompare(&key->tid, abt_tuple_heaptid(b, b_pivot));
	pfree(key);
	return result;
}

/*
 * Leaf: the first data offset whose tuple is >= key (> key with nextkey),
 * or maxoff + 1 if there is none on the page.
 */
OffsetNumber
abt_binsrch_leaf(Relation rel, AbtKey *key, Page page)
{
	OffsetNumber low = AbtFirstDataOffset(AbtPageGetOpaque(page));
	OffsetNumber high = PageGetMaxOffsetNumber(page) + 1;

	/* invariant: items before low are < key, items from high on are >= key */
	while (low < high)
	{
		OffsetNumber mid = low + (high - low) / 2;

		if (abt_compare(rel, key, page, mid) > 0)
			low = mid + 1;
		else
			high = mid;
	}
	return low;
}

/*
 * Internal page: the downlink to follow, the last one whose key is < key.
 * The first data item is minus infinity, so there always is one.
 */
OffsetNumber
abt_binsrch_internal(Relation rel, AbtKey *key, Page page)
{
	OffsetNumber first = AbtFirstDataOffset(AbtPageGetOpaque(page));
	OffsetNumber low = first + 1;
	OffsetNumber high = PageGetMaxOffsetNumber(page) + 1;

	Assert(PageGetMaxOffsetNumber(page) >= first);
	/* find the first downlink whose key is >= key; follow the one before */
	while (low < high)
	{
		OffsetNumber mid = low + (high - low) / 2;

		if (abt_compare(rel, key, page, mid) > 0)
			low = mid + 1;
		else
			high = mid;
	}
	return low - 1;
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
