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
 * nbtree's CREATE INDEX time on 5M int4 keys, most of the gap in the sort,
 * and 1.58x on 10M text keys.
 *
 * So every other index whose rows fit maintenance_work_mem is sorted in
 * memory first: each row formed once, as the leaf tuple the build writes
 * (its heap TID in t_tid), and an array of (first key, tuple) entries
 * sorted with the sort support of the same ordering operators the general
 * path would use, the first key abbreviated where its type can (text), as
 * tuplesort does (bench/results/create_index_tuples.md).
 *
 * The common case gets a sort of its own: one key column and nothing else
 * (no INCLUDE), of a type whose comparison abtcompare.c does inline (the
 * built-in int2, int4, int8, date, timestamp(tz) and oid families).  Each
 * row is then a 16-byte (key, TID) pair in an array, the key widened to an
 * int64 that orders as the operator class does (bitwise negated for DESC,
 * which reverses the order exactly), sorted by an inline comparison;
 * NULL keys go to a list of their own, put before or after the keys as
 * NULLS FIRST says.  The order is the general path's: key, then TID
 * ascending.
 *
 * Rows that outgrow maintenance_work_mem: each memory's worth of pairs or
 * tuples is sorted as above and written out as a run (abtbuildrun.c); the
 * last one stays in memory, and the runs are merged as they are read back.
 * Only a pairs sort whose NULLs (their TIDs stay in memory) reach half of
 * it goes to the general path instead, with the runs written so far.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"
#include "abtree_ext.h"

#include "access/stratnum.h"
#include "catalog/index.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "access/tupmacs.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/sortsupport.h"
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
	return abt_tid_cmp(&a->tid, &b->tid);
}

#define ST_SORT abt_pair_sort
#define ST_ELEMENT_TYPE AbtPair
#define ST_COMPARE(a, b) abt_pair_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT abt_tid_sort
#define ST_ELEMENT_TYPE ItemPointerData
#define ST_COMPARE(a, b) abt_tid_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Tuples mode: an index tuple (heap TID in t_tid) and its first key, in 16
 * bytes: the tuple's address is MAXALIGNed, so its lowest bit says whether
 * the first key is NULL.  The tuples themselves lie back to back in blocks
 * of ABT_TUP_BLOCK, without a chunk header each: 10M rows of 32-byte text
 * then fit 1GB of maintenance_work_mem, as they do in nbtree's sort.
 */
typedef struct AbtTupEntry
{
	Datum		datum1;			/* first key, abbreviated if the sort can */
	uintptr_t	tup;			/* the IndexTuple | first key is NULL */
} AbtTupEntry;

#define ABT_TUP(e)			((IndexTuple) ((e)->tup & ~(uintptr_t) 1))
#define ABT_TUP_NULL1(e)	(((e)->tup & 1) != 0)
#define ABT_TUP_BLOCK		((Size) 1024 * 1024)
#define ABT_TUP_AHEAD		16	/* rows read back ahead of the one returned */

static int	abt_tup_cmp(const AbtTupEntry *a, const AbtTupEntry *b, AbtBuildSort *s);

/* A source of the pairs merge: a run's pairs read a batch at a time. */
#define ABT_PAIR_BATCH		4096
typedef struct AbtPairSrc
{
	AbtPair    *buf;
	int			n;
	int			pos;
} AbtPairSrc;

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
	/* tuples mode (neither pairs nor general) */
	bool		tuples_mode;
	AbtIndexInfo *info;			/* for abt_form_leaf */
	int			nkeyatts;
	SortSupport ssup;			/* one per key column */
	bool		abbreviated;	/* ssup[0] compares abbreviated keys */
	bool		unsigned1;		/* ... as unsigned integers */
	MemoryContext tupcxt;		/* the tuples' blocks */
	char	   *block;			/* free space in the current block */
	Size		blockfree;
	Size		tupbytes;		/* blocks allocated */
	AbtTupEntry *tups;
	int64		ntups;
	int64		maxtups;
	IndexTuple	current;		/* output of tuples mode: the last row's leaf */
	Datum	   *tvalues;
	bool	   *tisnull;
	/* runs on temporary files (abtbuildrun.c) and their merge */
	AbtRuns    *runs;
	bool		merging;
	AbtMerge	merge;
	AbtRuns    *from;			/* the runs being merged */
	int			memsrc;			/* the source that is the run in memory, or -1 */
	int64		mempos;			/* its next element */
	AbtPairSrc *psrc;			/* pairs: each source's buffered pairs */
	AbtTupEntry *theads;		/* tuples: each source's current entry */
	char	  **tbufs;			/* tuples: each file source's current tuple */
	char	   *tspare[2];		/* tuples: the last two returned from files */
	int			tspare_next;	/* the one to hand back to a source next */
	int64		nullpos;		/* pairs output: NULLs returned */
	/* general mode */
	Tuplesortstate *sort;
	TupleTableSlot *slot;		/* the index columns, then the heap TID */
	/* output */
	Datum		value;
	bool		isnull;
	ItemPointerData tid;
};

/*
 * abt_tup_cmp with its most frequent case inline: first keys that the sort
 * compares as unsigned integers (text's abbreviated keys, ...), neither
 * NULL, and different, which decide nearly every comparison of a sort or
 * a merge, as in tuplesort's qsort_tuple_unsigned.  The rest (equal
 * abbreviations, NULLs, other comparators) takes the whole comparison.
 */
static pg_attribute_always_inline int
abt_tup_cmp_fast(const AbtTupEntry *a, const AbtTupEntry *b, AbtBuildSort *s)
{
	if (s->unsigned1 && ((a->tup | b->tup) & 1) == 0 && a->datum1 != b->datum1)
	{
		int			r = a->datum1 > b->datum1 ? 1 : -1;

		return s->ssup[0].ssup_reverse ? -r : r;
	}
	return abt_tup_cmp(a, b, s);
}

#define ST_SORT abt_tup_sort
#define ST_ELEMENT_TYPE AbtTupEntry
#define ST_COMPARE_ARG_TYPE AbtBuildSort
#define ST_COMPARE(a, b, arg) abt_tup_cmp_fast(a, b, arg)
#define ST_SCOPE static
#define ST_DECLARE
#define ST_DEFINE
#include "lib/sort_template.h"

static void *abt_bsort_grow(void *array, int64 n, int64 *max, Size sz, int64 cap);
static void abt_bsort_merge_begin(AbtBuildSort *s);
static void abt_bsort_collapse_runs(AbtBuildSort *s);
static bool abt_bsort_pairs_next(AbtBuildSort *s, AbtPair *out);

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

/* The ordering operator of key column i: ASC or DESC as the index says */
static Oid
abt_bsort_order_op(Relation index, int i)
{
	int			strategy = (index->rd_indoption[i] & INDOPTION_DESC) ?
		BTGreaterStrategyNumber : BTLessStrategyNumber;
	Oid			op = get_opfamily_member(index->rd_opfamily[i], index->rd_opcintype[i],
										 index->rd_opcintype[i], strategy);

	if (!OidIsValid(op))
		elog(ERROR, "abtree: operator family %u has no ordering operator for type %u",
			 index->rd_opfamily[i], index->rd_opcintype[i]);
	return op;
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
		attnums[i] = i + 1;
		ops[i] = abt_bsort_order_op(index, i);
		colls[i] = index->rd_indcollation[i];
		nullsfirst[i] = (index->rd_indoption[i] & INDOPTION_NULLS_FIRST) != 0;
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

/*
 * Too many NULLs for memory: hand every row to the general path, the
 * pairs of the runs on disk too.
 */
static void
abt_bsort_spill(AbtBuildSort *s)
{
	bool		isnull = true;
	Datum		value;
	AbtPair		pair;

	abt_bsort_general_begin(s);
	for (int64 i = 0; i < s->nnulls; i++)
		abt_bsort_general_put(s, &s->nulls[i], &value, &isnull);
	isnull = false;
	for (int64 i = 0; i < s->npairs; i++)
	{
		value = abt_pair_datum(s, s->pairs[i].key);
		abt_bsort_general_put(s, &s->pairs[i].tid, &value, &isnull);
	}
	if (s->runs)
	{
		abt_runs_rewind(s->runs);
		for (int r = 0; r < abt_runs_count(s->runs); r++)
			while (abt_runs_get(s->runs, r, &pair, sizeof(AbtPair)))
			{
				value = abt_pair_datum(s, pair.key);
				abt_bsort_general_put(s, &pair.tid, &value, &isnull);
			}
		abt_runs_end(s->runs);
		s->runs = NULL;
	}
	if (s->pairs)
		pfree(s->pairs);
	if (s->nulls)
		pfree(s->nulls);
	s->pairs = NULL;
	s->nulls = NULL;
	s->pairs_mode = false;
}

/*
 * Tuples mode: sort support for each key column from the ordering operator
 * the general path would use (so the order is the same), the first one
 * abbreviated if its type can.
 */
static void
abt_bsort_tuples_begin(AbtBuildSort *s)
{
	Relation	index = s->index;

	s->tuples_mode = true;
	s->info = abt_index_info(index);
	s->nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	s->ssup = palloc0(sizeof(SortSupportData) * s->nkeyatts);
	for (int i = 0; i < s->nkeyatts; i++)
	{
		SortSupport ssup = &s->ssup[i];

		ssup->ssup_cxt = CurrentMemoryContext;
		ssup->ssup_collation = index->rd_indcollation[i];
		ssup->ssup_nulls_first = (index->rd_indoption[i] & INDOPTION_NULLS_FIRST) != 0;
		ssup->ssup_attno = i + 1;
		ssup->abbreviate = (i == 0);
		PrepareSortSupportFromOrderingOp(abt_bsort_order_op(index, i), ssup);
	}
	s->abbreviated = s->ssup[0].abbrev_converter != NULL;
	s->unsigned1 = s->ssup[0].comparator == ssup_datum_unsigned_cmp;
	s->tupcxt = AllocSetContextCreate(CurrentMemoryContext, "abtree build tuples",
									  ALLOCSET_DEFAULT_SIZES);
	s->tvalues = palloc(sizeof(Datum) * s->natts);
	s->tisnull = palloc(sizeof(bool) * s->natts);
}

/* Key columns, then heap TID, as the general path's sort keys say */
static int
abt_tup_cmp(const AbtTupEntry *a, const AbtTupEntry *b, AbtBuildSort *s)
{
	TupleDesc	desc = RelationGetDescr(s->index);
	int			r;

	if (s->unsigned1 && !ABT_TUP_NULL1(a) && !ABT_TUP_NULL1(b))
	{
		/* ssup_datum_unsigned_cmp inline (text's abbreviated keys, ...) */
		r = (a->datum1 > b->datum1) - (a->datum1 < b->datum1);
		if (s->ssup[0].ssup_reverse)
			INVERT_COMPARE_RESULT(r);
	}
	else
		r = ApplySortComparator(a->datum1, ABT_TUP_NULL1(a), b->datum1, ABT_TUP_NULL1(b),
								&s->ssup[0]);
	if (r != 0)
		return r;
	if (s->abbreviated && !ABT_TUP_NULL1(a))
	{
		bool		n1,
					n2;
		Datum		d1 = index_getattr(ABT_TUP(a), 1, desc, &n1);
		Datum		d2 = index_getattr(ABT_TUP(b), 1, desc, &n2);

		r = ApplySortAbbrevFullComparator(d1, n1, d2, n2, &s->ssup[0]);
		if (r != 0)
			return r;
	}
	for (int i = 1; i < s->nkeyatts; i++)
	{
		bool		n1,
					n2;
		Datum		d1 = index_getattr(ABT_TUP(a), i + 1, desc, &n1);
		Datum		d2 = index_getattr(ABT_TUP(b), i + 1, desc, &n2);

		r = ApplySortComparator(d1, n1, d2, n2, &s->ssup[i]);
		if (r != 0)
			return r;
	}
	return abt_tid_cmp(&ABT_TUP(a)->t_tid, &ABT_TUP(b)->t_tid);
}

/* Would one more row take tuples mode past maintenance_work_mem? */
static bool
abt_bsort_tuples_full(AbtBuildSort *s)
{
	Size		used = s->tupbytes + (Size) s->maxtups * sizeof(AbtTupEntry);

	return used >= (Size) maintenance_work_mem * 1024;
}

static void
abt_bsort_tuples_put(AbtBuildSort *s, ItemPointer tid, Datum *values, bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(s->index);
	/* the leaf tuple itself (bulk-loaded: valid for every snapshot) */
	IndexTuple	formed = abt_form_leaf(s->index, s->info, values, isnull, tid,
									   FrozenTransactionId);
	Size		sz = MAXALIGN(IndexTupleSize(formed));
	IndexTuple	itup;
	AbtTupEntry *e;
	bool		isnull1;

	if (s->blockfree < sz)
	{
		/* an eighth of the memory at most: the runs are that close to it */
		s->blockfree = Max(Min(ABT_TUP_BLOCK, (Size) maintenance_work_mem * 1024 / 8), sz);
		s->block = MemoryContextAlloc(s->tupcxt, s->blockfree);
		s->tupbytes += s->blockfree;
	}
	itup = (IndexTuple) s->block;
	s->block += sz;
	s->blockfree -= sz;
	memcpy(itup, formed, IndexTupleSize(formed));
	pfree(formed);

	s->tups = abt_bsort_grow(s->tups, s->ntups, &s->maxtups, sizeof(AbtTupEntry),
							 (int64) (MaxAllocHugeSize / sizeof(AbtTupEntry)));
	e = &s->tups[s->ntups++];
	/* the tuple's own copy: values[] may be freed after this call */
	e->datum1 = index_getattr(itup, 1, desc, &isnull1);
	e->tup = (uintptr_t) itup | (isnull1 ? 1 : 0);
	if (s->abbreviated && !isnull1)
		e->datum1 = s->ssup[0].abbrev_converter(e->datum1, &s->ssup[0]);
}

/* Is the first key of tuple itup NULL? */
static inline bool
abt_tup_null1(IndexTuple itup)
{
	return IndexTupleHasNulls(itup) &&
		att_isnull(0, (bits8 *) ((char *) itup + sizeof(IndexTupleData)));
}

/*
 * Memory is full: the tuples, sorted, become a run on disk (each its first
 * key as the sort has it, then the tuple; an unabbreviated key is taken
 * from the tuple again when read), and memory is free again.
 */
static void
abt_bsort_tuples_flush(AbtBuildSort *s)
{
	if (s->runs == NULL)
		s->runs = abt_runs_begin();
	abt_tup_sort(s->tups, s->ntups, s);
	for (int64 i = 0; i < s->ntups; i++)
	{
		IndexTuple	itup = ABT_TUP(&s->tups[i]);

		abt_runs_put(s->runs, &s->tups[i].datum1, sizeof(Datum));
		abt_runs_put(s->runs, itup, IndexTupleSize(itup));
	}
	abt_runs_close_run(s->runs);
	if (abt_runs_count(s->runs) >= abt_debug_build_merge_runs)
		abt_bsort_collapse_runs(s);
	/* the entries' array too: its size counts against the memory */
	pfree(s->tups);
	s->tups = NULL;
	s->maxtups = 0;
	s->ntups = 0;
	MemoryContextReset(s->tupcxt);
	s->block = NULL;
	s->blockfree = 0;
	s->tupbytes = 0;
}

/* The same for pairs; the NULLs stay in memory (sorted at the end). */
static void
abt_bsort_pairs_flush(AbtBuildSort *s)
{
	if (s->runs == NULL)
		s->runs = abt_runs_begin();
	abt_pair_sort(s->pairs, s->npairs);
	abt_runs_put(s->runs, s->pairs, sizeof(AbtPair) * s->npairs);
	abt_runs_close_run(s->runs);
	s->npairs = 0;
	if (abt_runs_count(s->runs) >= abt_debug_build_merge_runs)
		abt_bsort_collapse_runs(s);
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
		abt_bsort_tuples_begin(s);
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
	{
		/*
		 * Half the memory in NULLs, whose TIDs stay in memory: tuplesort,
		 * which spills them too.  Else the pairs, at least half of it, make
		 * a run.
		 */
		if (s->nnulls >= s->limit / 2)
			abt_bsort_spill(s);
		else
			abt_bsort_pairs_flush(s);
	}
	if (s->tuples_mode && s->ntups > 0 && abt_bsort_tuples_full(s))
		abt_bsort_tuples_flush(s);
	if (s->tuples_mode)
		abt_bsort_tuples_put(s, tid, values, isnull);
	else if (!s->pairs_mode)
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
	if (s->tuples_mode)
	{
		if (s->ntups > 1)
			abt_tup_sort(s->tups, s->ntups, s);
		if (s->runs)
			abt_bsort_merge_begin(s);
		return;
	}
	if (!s->pairs_mode)
	{
		tuplesort_performsort(s->sort);
		return;
	}
	if (s->npairs > 1)
		abt_pair_sort(s->pairs, s->npairs);
	if (s->nnulls > 1)
		abt_tid_sort(s->nulls, s->nnulls);
	if (s->runs)
		abt_bsort_merge_begin(s);
}

/* ---- merging the runs ---- */

/* Source i's next pair into psrc[i].buf[pos]; false when it has none. */
static bool
abt_pair_src_advance(AbtBuildSort *s, int i)
{
	AbtPairSrc *src = &s->psrc[i];

	if (++src->pos < src->n)
		return true;
	if (i == s->memsrc)
		return false;			/* the run in memory is the whole buffer */
	src->n = 0;
	src->pos = 0;
	while (src->n < ABT_PAIR_BATCH &&
		   abt_runs_get(s->from, i, &src->buf[src->n], sizeof(AbtPair)))
		src->n++;
	return src->n > 0;
}

static int
abt_pair_src_cmp(int a, int b, void *arg)
{
	AbtBuildSort *s = (AbtBuildSort *) arg;

	return abt_pair_cmp(&s->psrc[a].buf[s->psrc[a].pos], &s->psrc[b].buf[s->psrc[b].pos]);
}

/* Source i's next tuple into theads[i]; false when it has none. */
static bool
abt_tup_src_advance(AbtBuildSort *s, int i)
{
	char	   *buf;
	Datum		datum1;
	IndexTuple	itup;

	if (i == s->memsrc)
	{
		if (s->mempos >= s->ntups)
			return false;
		s->theads[i] = s->tups[s->mempos++];
		return true;
	}
	if (!abt_runs_get(s->from, i, &datum1, sizeof(Datum)))
		return false;
	buf = s->tbufs[i];
	itup = (IndexTuple) buf;
	if (!abt_runs_get(s->from, i, buf, sizeof(IndexTupleData)) ||
		IndexTupleSize(itup) > BLCKSZ ||
		!abt_runs_get(s->from, i, buf + sizeof(IndexTupleData),
					  IndexTupleSize(itup) - sizeof(IndexTupleData)))
		elog(ERROR, "abtree build: a run ends inside a tuple");
	/*
	 * An abbreviated key is a value; else the first key may point into the
	 * tuple (text), which now lies here.
	 */
	if (!s->abbreviated)
	{
		bool		isnull1;

		datum1 = index_getattr(itup, 1, RelationGetDescr(s->index), &isnull1);
	}
	s->theads[i].datum1 = datum1;
	s->theads[i].tup = (uintptr_t) itup | (abt_tup_null1(itup) ? 1 : 0);
	return true;
}

static int
abt_tup_src_cmp(int a, int b, void *arg)
{
	AbtBuildSort *s = (AbtBuildSort *) arg;

	return abt_tup_cmp_fast(&s->theads[a], &s->theads[b], s);
}

/*
 * Read the runs of from back in one order, through a heap of their current
 * elements, and with memory, the run still in memory too (source memsrc,
 * after the files).
 */
static void
abt_bsort_merge_setup(AbtBuildSort *s, AbtRuns *from, bool memory)
{
	int			nfiles = abt_runs_count(from);
	int			nsrc = nfiles + (memory ? 1 : 0);

	abt_runs_rewind(from);
	s->from = from;
	s->memsrc = memory ? nfiles : -1;
	s->mempos = 0;
	if (s->pairs_mode)
	{
		s->psrc = palloc0(sizeof(AbtPairSrc) * nsrc);
		for (int i = 0; i < nfiles; i++)
			s->psrc[i].buf = palloc(sizeof(AbtPair) * ABT_PAIR_BATCH);
		if (memory)
		{
			s->psrc[s->memsrc].buf = s->pairs;
			s->psrc[s->memsrc].n = (int) s->npairs;
			s->psrc[s->memsrc].pos = -1;
		}
		abt_merge_begin(&s->merge, nsrc, abt_pair_src_cmp, s);
		for (int i = 0; i < nsrc; i++)
			if (abt_pair_src_advance(s, i))
				abt_merge_add(&s->merge, i);
	}
	else
	{
		s->theads = palloc(sizeof(AbtTupEntry) * nsrc);
		s->tbufs = palloc(sizeof(char *) * nsrc);
		for (int i = 0; i < nfiles; i++)
			s->tbufs[i] = palloc(BLCKSZ);
		s->tspare[0] = palloc(BLCKSZ);
		s->tspare[1] = palloc(BLCKSZ);
		s->tspare_next = 0;
		abt_merge_begin(&s->merge, nsrc, abt_tup_src_cmp, s);
		for (int i = 0; i < nsrc; i++)
			if (abt_tup_src_advance(s, i))
				abt_merge_add(&s->merge, i);
	}
}

/* Let go of what abt_bsort_merge_setup allocated for the runs of from. */
static void
abt_bsort_merge_cleanup(AbtBuildSort *s)
{
	int			nfiles = abt_runs_count(s->from);

	if (s->psrc)
	{
		for (int i = 0; i < nfiles; i++)
			pfree(s->psrc[i].buf);
		pfree(s->psrc);
	}
	if (s->tbufs)
	{
		for (int i = 0; i < nfiles; i++)
			pfree(s->tbufs[i]);
		pfree(s->tbufs);
		pfree(s->tspare[0]);
		pfree(s->tspare[1]);
		pfree(s->theads);
	}
	pfree(s->merge.heap);
	s->psrc = NULL;
	s->tbufs = NULL;
	s->theads = NULL;
}

/*
 * Too many runs to merge at once (each reads through a buffer of its own):
 * merge those on disk into one.  A build makes that many only with little
 * memory for many rows; this keeps the merge's memory bounded, at the cost
 * of writing the rows so far once more.
 */
static void
abt_bsort_collapse_runs(AbtBuildSort *s)
{
	AbtRuns    *old = s->runs;
	int			top;

	s->runs = abt_runs_begin();
	abt_bsort_merge_setup(s, old, false);
	while ((top = abt_merge_top(&s->merge)) >= 0)
	{
		bool		more;

		if (s->pairs_mode)
		{
			abt_runs_put(s->runs, &s->psrc[top].buf[s->psrc[top].pos], sizeof(AbtPair));
			more = abt_pair_src_advance(s, top);
		}
		else
		{
			IndexTuple	itup = ABT_TUP(&s->theads[top]);

			abt_runs_put(s->runs, &s->theads[top].datum1, sizeof(Datum));
			abt_runs_put(s->runs, itup, IndexTupleSize(itup));
			more = abt_tup_src_advance(s, top);
		}
		abt_merge_next(&s->merge, more);
		CHECK_FOR_INTERRUPTS();
	}
	abt_runs_close_run(s->runs);
	abt_bsort_merge_cleanup(s);
	abt_runs_end(old);
}

/* The final merge: the runs on disk and the one in memory. */
static void
abt_bsort_merge_begin(AbtBuildSort *s)
{
	abt_bsort_merge_setup(s, s->runs, true);
	s->merging = true;
}

/* The next pair in order, from memory or from the merge; false at the end. */
static bool
abt_bsort_pairs_next(AbtBuildSort *s, AbtPair *out)
{
	int			top;

	if (!s->merging)
	{
		if (s->pos >= s->npairs)
			return false;
		*out = s->pairs[s->pos++];
		return true;
	}
	if ((top = abt_merge_top(&s->merge)) < 0)
		return false;
	*out = s->psrc[top].buf[s->psrc[top].pos];
	abt_merge_next(&s->merge, abt_pair_src_advance(s, top));
	return true;
}

/*
 * The next tuple merged from the runs, or NULL.  It stays valid through the
 * next call, not longer (the leaf writer and the posting-list builder hold
 * the previous row that long; abtbuild.c, abtposting.c).  A file source
 * reads its next tuple into a buffer of its own, so the tuple returned is
 * not copied: its buffer is swapped for the one returned two calls ago,
 * which the source then reads into.  A copy per row was 5% of a text
 * build past memory (bench/results/build_merge_copy_ab.md).
 */
static IndexTuple
abt_bsort_tuples_merged(AbtBuildSort *s)
{
	int			top = abt_merge_top(&s->merge);
	IndexTuple	itup;

	if (top < 0)
		return NULL;
	itup = ABT_TUP(&s->theads[top]);
	if (top != s->memsrc)
	{
		Assert((char *) itup == s->tbufs[top]);
		s->tbufs[top] = s->tspare[s->tspare_next];
		s->tspare[s->tspare_next] = (char *) itup;
		s->tspare_next ^= 1;
	}
	abt_merge_next(&s->merge, abt_tup_src_advance(s, top));
	return itup;
}

/*
 * The next row in order: its index columns (values, isnull: valid until
 * the next call) and heap TID.  False at the end.
 */
bool
abt_bsort_next(AbtBuildSort *s, Datum **values, bool **isnull, ItemPointer *tid)
{
	AbtPair		pair;

	if (s->tuples_mode)
	{
		IndexTuple	itup;

		if (s->merging)
			itup = abt_bsort_tuples_merged(s);
		else if (s->pos >= s->ntups)
			return false;
		else
		{
			/* sorted, the tuples lie at random: ask for one a few rows ahead */
			if (s->pos + ABT_TUP_AHEAD < s->ntups)
				abt_prefetch(ABT_TUP(&s->tups[s->pos + ABT_TUP_AHEAD]));
			itup = ABT_TUP(&s->tups[s->pos++]);
		}
		if (itup == NULL)
			return false;
		s->current = itup;
		index_deform_tuple(itup, RelationGetDescr(s->index), s->tvalues, s->tisnull);
		*values = s->tvalues;
		*isnull = s->tisnull;
		*tid = &itup->t_tid;
		return true;
	}
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
	/* NULLS FIRST: the NULLs, then the keys; else the other way round */
	if ((s->nulls_first && s->nullpos < s->nnulls) || !abt_bsort_pairs_next(s, &pair))
	{
		if (s->nullpos >= s->nnulls)
			return false;
		s->isnull = true;
		s->value = (Datum) 0;
		s->tid = s->nulls[s->nullpos++];
	}
	else
	{
		s->isnull = false;
		s->value = abt_pair_datum(s, pair.key);
		s->tid = pair.tid;
	}
	*values = &s->value;
	*isnull = &s->isnull;
	*tid = &s->tid;
	return true;
}

/*
 * The leaf tuple (abt_form_leaf's, with FrozenTransactionId) of the row
 * abt_bsort_next returned last, if the sort formed it already (tuples
 * mode); else NULL.  It is the sort's, and valid through the next call of
 * abt_bsort_next (merged from runs; else until abt_bsort_end).
 */
IndexTuple
abt_bsort_current_leaf(AbtBuildSort *s)
{
	return s->tuples_mode ? s->current : NULL;
}

void
abt_bsort_end(AbtBuildSort *s)
{
	if (s->runs)
		abt_runs_end(s->runs);
	if (s->sort)
		tuplesort_end(s->sort);
	if (s->slot)
		ExecDropSingleTupleTableSlot(s->slot);
	if (s->pairs)
		pfree(s->pairs);
	if (s->nulls)
		pfree(s->nulls);
	if (s->tups)
		pfree(s->tups);
	if (s->tupcxt)
		MemoryContextDelete(s->tupcxt);
	pfree(s);
}
