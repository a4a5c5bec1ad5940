/*-------------------------------------------------------------------------
 *
 * abtbuildsort.c
 *	  The bulk build's sort: the index's rows in key order, then heap TID.
 *
 * The general path is tuplesort_begin_heap over the index columns plus the
 * heap TID: nbtree's index-tuple sort is not open to other access methods
 * (PrepareSortSupportFromIndexRel refuses them), so the rows go in as
 * minimal tuples, come out into a slot and are formed into index tuples
 * again.  bench/results/create_index_profile.md measured that at 1.38x
 * nbtree's CREATE INDEX time on 5M int4 keys, most of the gap in the sort.
 *
 * The common case gets a sort of its own: one key column and nothing else
 * (no INCLUDE), of a type whose comparison abtcompare.c does inline (the
 * built-in int2, int4, int8, date, timestamp(tz) and oid families).  Each
 * row is then a 16-byte (key, TID) pair in an array, the key widened to an
 * int64 that orders as the operator class does (bitwise negated for DESC,
 * which reverses the order exactly), sorted by an inline comparison;
 * NULL keys go to a list of their own, put before or after the keys as
 * NULLS FIRST says.  The order is the general path's: key, then TID
 * ascending.  When the pairs would outgrow maintenance_work_mem, they are
 * handed to the general path, which can spill to disk.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/stratnum.h"
#include "catalog/index.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

typedef struct AbtPair
{
	int64		key;
	ItemPointerData tid;
} AbtPair;

static inline int
abt_pair_cmp(const AbtPair *a, const AbtPair *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return ItemPointerCompare(unconstify(ItemPointerData *, &a->tid),
							  unconstify(ItemPointerData *, &b->tid));
}

#define ST_SORT abt_pair_sort
#define ST_ELEMENT_TYPE AbtPair
#define ST_COMPARE(a, b) abt_pair_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

static inline int
abt_tid_cmp(const ItemPointerData *a, const ItemPointerData *b)
{
	return ItemPointerCompare(unconstify(ItemPointerData *, a),
							  unconstify(ItemPointerData *, b));
}

#define ST_SORT abt_tid_sort
#define ST_ELEMENT_TYPE ItemPointerData
#define ST_COMPARE(a, b) abt_tid_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

struct AbtBuildSort
{
	Relation	index;
	int			natts;
	/* pairs mode */
	bool		pairs_mode;
	AbtCmpKind	kind;
	bool		desc;
	bool		nulls_first;
	AbtPair    *pairs;
	int64		npairs;
	int64		maxpairs;
	ItemPointerData *nulls;
	int64		nnulls;
	int64		maxnulls;
	int64		limit;			/* pairs and NULLs that fit maintenance_work_mem */
	int64		pos;			/* output: rows returned */
	/* general mode */
	Tuplesortstate *sort;
	TupleTableSlot *slot;		/* the index columns, then the heap TID */
	/* output */
	Datum		value;
	bool		isnull;
	ItemPointerData tid;
};

static int64
abt_pair_key(AbtBuildSort *s, Datum d)
{
	int64		k;

	switch (s->kind)
	{
		case ABT_CMP_INT16:
			k = DatumGetInt16(d);
			break;
		case ABT_CMP_INT32:
			k = DatumGetInt32(d);
			break;
		case ABT_CMP_UINT32:
			k = (int64) DatumGetObjectId(d);
			break;
		default:
			k = DatumGetInt64(d);
			break;
	}
	return s->desc ? ~k : k;
}

static Datum
abt_pair_datum(AbtBuildSort *s, int64 k)
{
	if (s->desc)
		k = ~k;
	switch (s->kind)
	{
		case ABT_CMP_INT16:
			return Int16GetDatum((int16) k);
		case ABT_CMP_INT32:
			return Int32GetDatum((int32) k);
		case ABT_CMP_UINT32:
			return ObjectIdGetDatum((Oid) k);
		default:
			return Int64GetDatum(k);
	}
}

/* The general path's sort: tuplesort over the index columns and the TID */
static void
abt_bsort_general_begin(AbtBuildSort *s)
{
	Relation	index = s->index;
	TupleDesc	idesc = RelationGetDescr(index);
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	int			nkeys = nkeyatts + 1;
	TupleDesc	sdesc;
	AttrNumber *attnums = palloc(sizeof(AttrNumber) * nkeys);
	Oid		   *ops = palloc(sizeof(Oid) * nkeys);
	Oid		   *colls = palloc(sizeof(Oid) * nkeys);
	bool	   *nullsfirst = palloc(sizeof(bool) * nkeys);

	sdesc = CreateTemplateTupleDesc(s->natts + 1);
	for (int i = 0; i < s->natts; i++)
		TupleDescCopyEntry(sdesc, i + 1, idesc, i + 1);
	TupleDescInitEntry(sdesc, s->natts + 1, "ctid", TIDOID, -1, 0);

	for (int i = 0; i < nkeyatts; i++)
	{
		int16		opt = index->rd_indoption[i];
		int			strategy = (opt & INDOPTION_DESC) ?
			BTGreaterStrategyNumber : BTLessStrategyNumber;

		attnums[i] = i + 1;
		ops[i] = get_opfamily_member(index->rd_opfamily[i], index->rd_opcintype[i],
									 index->rd_opcintype[i], strategy);
		if (!OidIsValid(ops[i]))
			elog(ERROR, "abtree: operator family %u has no ordering operator for type %u",
				 index->rd_opfamily[i], index->rd_opcintype[i]);
		colls[i] = index->rd_indcollation[i];
		nullsfirst[i] = (opt & INDOPTION_NULLS_FIRST) != 0;
	}
	attnums[nkeyatts] = s->natts + 1;
	ops[nkeyatts] = TIDLessOperator;
	colls[nkeyatts] = InvalidOid;
	nullsfirst[nkeyatts] = false;

	s->sort = tuplesort_begin_heap(sdesc, nkeys, attnums, ops, colls, nullsfirst,
								   maintenance_work_mem, NULL, TUPLESORT_NONE);
	s->slot = MakeSingleTupleTableSlot(sdesc, &TTSOpsMinimalTuple);
}

static void
abt_bsort_general_put(AbtBuildSort *s, ItemPointer tid, Datum *values, bool *isnull)
{
	TupleTableSlot *slot = s->slot;

	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * s->natts);
	memcpy(slot->tts_isnull, isnull, sizeof(bool) * s->natts);
	slot->tts_values[s->natts] = PointerGetDatum(tid);
	slot->tts_isnull[s->natts] = false;
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(s->sort, slot);
}

/* Too many pairs for memory: hand them all to the general path. */
static void
abt_bsort_spill(AbtBuildSort *s)
{
	bool		isnull = true;
	Datum		value;

	abt_bsort_general_begin(s);
	for (int64 i = 0; i < s->nnulls; i++)
		abt_bsort_general_put(s, &s->nulls[i], &value, &isnull);
	isnull = false;
	for (int64 i = 0; i < s->npairs; i++)
	{
		value = abt_pair_datum(s, s->pairs[i].key);
		abt_bsort_general_put(s, &s->pairs[i].tid, &value, &isnull);
	}
	if (s->pairs)
		pfree(s->pairs);
	if (s->nulls)
		pfree(s->nulls);
	s->pairs = NULL;
	s->nulls = NULL;
	s->pairs_mode = false;
}

AbtBuildSort *
abt_bsort_begin(Relation index)
{
	AbtBuildSort *s = palloc0(sizeof(AbtBuildSort));
	AbtKey		key;

	s->index = index;
	s->natts = RelationGetDescr(index)->natts;
	abt_key_init(index, &key);
	s->kind = key.attrs[0].kind;
	s->desc = key.attrs[0].desc;
	s->nulls_first = key.attrs[0].nulls_first;
	s->pairs_mode = s->natts == 1 && s->kind != ABT_CMP_FMGR;
	s->limit = Max((int64) maintenance_work_mem * 1024 / (int64) sizeof(AbtPair), 1024);
	if (!s->pairs_mode)
		abt_bsort_general_begin(s);
	return s;
}

/*
 * Room for one more in an array of *max elements of size sz: doubling, but
 * never past cap elements, the pairs that fit maintenance_work_mem
 * (abt_bsort_put spills before the pairs and NULLs together reach it).
 */
static void *
abt_bsort_grow(void *array, int64 n, int64 *max, Size sz, int64 cap)
{
	if (n < *max)
		return array;
	*max = Min(Max(*max * 2, 1024), cap);
	if (array == NULL)
		return MemoryContextAllocHuge(CurrentMemoryContext, *max * sz);
	return repalloc_huge(array, *max * sz);
}

void
abt_bsort_put(AbtBuildSort *s, ItemPointer tid, Datum *values, bool *isnull)
{
	if (s->pairs_mode && s->npairs + s->nnulls >= s->limit)
		abt_bsort_spill(s);
	if (!s->pairs_mode)
		abt_bsort_general_put(s, tid, values, isnull);
	else if (isnull[0])
	{
		s->nulls = abt_bsort_grow(s->nulls, s->nnulls, &s->maxnulls, sizeof(ItemPointerData),
								  s->limit);
		s->nulls[s->nnulls++] = *tid;
	}
	else
	{
		s->pairs = abt_bsort_grow(s->pairs, s->npairs, &s->maxpairs, sizeof(AbtPair),
								  s->limit);
		s->pairs[s->npairs].key = abt_pair_key(s, values[0]);
		s->pairs[s->npairs].tid = *tid;
		s->npairs++;
	}
}

void
abt_bsort_perform(AbtBuildSort *s)
{
	if (!s->pairs_mode)
	{
		tuplesort_performsort(s->sort);
		return;
	}
	if (s->npairs > 1)
		abt_pair_sort(s->pairs, s->npairs);
	if (s->nnulls > 1)
		abt_tid_sort(s->nulls, s->nnulls);
}

/*
 * The next row in order: its index columns (values, isnull: valid until
 * the next call) and heap TID.  False at the end.
 */
bool
abt_bsort_next(AbtBuildSort *s, Datum **values, bool **isnull, ItemPointer *tid)
{
	int64		i;

	if (!s->pairs_mode)
	{
		if (!tuplesort_gettupleslot(s->sort, true, false, s->slot, NULL))
			return false;
		slot_getallattrs(s->slot);
		*values = s->slot->tts_values;
		*isnull = s->slot->tts_isnull;
		*tid = (ItemPointer) DatumGetPointer(s->slot->tts_values[s->natts]);
		return true;
	}
	if (s->pos >= s->npairs + s->nnulls)
		return false;
	i = s->pos++;
	/* NULLS FIRST: the NULLs, then the keys; else the other way round */
	if (s->nulls_first ? i < s->nnulls : i >= s->npairs)
	{
		s->isnull = true;
		s->value = (Datum) 0;
		s->tid = s->nulls[s->nulls_first ? i : i - s->npairs];
	}
	else
	{
		AbtPair    *p = &s->pairs[s->nulls_first ? i - s->nnulls : i];

		s->isnull = false;
		s->value = abt_pair_datum(s, p->key);
		s->tid = p->tid;
	}
	*values = &s->value;
	*isnull = &s->isnull;
	*tid = &s->tid;
	return true;
}

void
abt_bsort_end(AbtBuildSort *s)
{
	if (s->sort)
		tuplesort_end(s->sort);
	if (s->slot)
		ExecDropSingleTupleTableSlot(s->slot);
	if (s->pairs)
		pfree(s->pairs);
	if (s->nulls)
		pfree(s->nulls);
	pfree(s);
}
