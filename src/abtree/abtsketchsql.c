/*-------------------------------------------------------------------------
 *
 * abtsketchsql.c
 *	  The sketches abtree indexes keep, as their readers see them: the
 *	  planner's per-column lookup (abt_column_sketch), the key sketch's
 *	  (abt_key_sketch_ndistinct) and abtree_sketch(),
 *	  over one index, a partitioned index's leaves or a Citus table's
 *	  shards.  abtsketch.c keeps the pages; this file only copies them.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "hll/chll.h"

#include "access/relation.h"
#include "catalog/index.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/*
 * The estimate and item count of sketch slot k of index, which the caller
 * found and opened (closed here); false for no index.
 */
static bool
abt_sketch_count_of(Relation index, int k, double *ndistinct, uint64 *items)
{
	uint8	   *sk;

	if (index == NULL)
		return false;
	sk = abt_sketch_copy(index, k);
	index_close(index, AccessShareLock);
	*ndistinct = chll_estimate_sketch(sk);
	*items = chll_total(sk);
	pfree(sk);
	return true;
}

/* Does the index have a sketch of the column, in the column's collation? */
static bool
abt_index_sketches_column(Relation index, Relation heap, const void *arg, int *keyno)
{
	AttrNumber	attnum = *(const AttrNumber *) arg;
	Oid			collation = TupleDescAttr(RelationGetDescr(heap), attnum - 1)->attcollation;

	for (int k = 0; k < Min(ABT_SKETCH_MAX_COLS, IndexRelationGetNumberOfKeyAttributes(index)); k++)
	{
		if (index->rd_index->indkey.values[k] == attnum &&
			index->rd_indcollation[k] == collation &&
			abt_sketch_has_column(index, k))
		{
			*keyno = k;
			return true;
		}
	}
	return false;
}

/*
 * A column's distinct-value estimate from an abtree index's sketch, and
 * how many non-NULL values the sketch holds; false if no index has one.
 * The table must be locked by the caller (the planner has it).
 */
bool
abt_column_sketch(Oid relid, AttrNumber attnum, double *ndistinct, uint64 *nonnull)
{
	int			k = 0;
	Relation	index = abt_find_index(relid, abt_index_sketches_column, &attnum, &k);

	return abt_sketch_count_of(index, k, ndistinct, nonnull);
}

bool
abt_column_sketch_ndistinct(Oid relid, AttrNumber attnum, double *ndistinct)
{
	uint64		nonnull;

	return abt_column_sketch(relid, attnum, ndistinct, &nonnull);
}

typedef struct AbtKeyColumns
{
	const AttrNumber *attnums;
	int			ncols;
} AbtKeyColumns;

/*
 * Does the index keep a key sketch whose key columns are the given columns
 * (in any order: a count of distinct combinations does not depend on it),
 * each in its column's collation?  Every key column must be wanted and
 * every wanted column a key column: (a, a) counts a, not (a, b).
 */
static bool
abt_index_sketches_key(Relation index, Relation heap, const void *arg, int *keyno)
{
	const AbtKeyColumns *want = arg;
	int			nkeys = IndexRelationGetNumberOfKeyAttributes(index);
	const int16 *keys = index->rd_index->indkey.values;

	if (nkeys != want->ncols)
		return false;
	for (int k = 0; k < nkeys; k++)
	{
		bool		wanted = false,
					keyed = false;

		for (int j = 0; j < want->ncols; j++)
		{
			wanted |= want->attnums[j] == keys[k];
			keyed |= keys[j] == want->attnums[k];
		}
		/* an expression (attnum 0) is no column of the table */
		if (!wanted || !keyed || keys[k] <= 0 ||
			index->rd_indcollation[k] != TupleDescAttr(RelationGetDescr(heap), keys[k] - 1)->attcollation)
			return false;
	}
	*keyno = ABT_SKETCH_KEY_SLOT;
	return abt_sketch_has_key(index);
}

/*
 * The number of distinct combinations of the columns (distinct, two or
 * three) from the key sketch of an abtree index on exactly those columns;
 * false if no index keeps one.  NULL counts as a value, as in GROUP BY.
 */
bool
abt_key_sketch_ndistinct(Oid relid, const AttrNumber *attnums, int ncols, double *ndistinct)
{
	AbtKeyColumns want = {attnums, ncols};
	int			k = 0;
	uint64		items;
	Relation	index;

	if (ncols < 2 || ncols > ABT_SKETCH_KEY_SLOT)
		return false;
	index = abt_find_index(relid, abt_index_sketches_key, &want, &k);
	return abt_sketch_count_of(index, k, ndistinct, &items);
}

/* ---- SQL ---- */

PG_FUNCTION_INFO_V1(abtree_sketch);

/*
 * abtree_sketch on the index of a Citus table: the union of the shards'
 * sketches (../citus.c).  The shards hold disjoint rows, so the union of
 * their counting sketches is the sketch of the whole table's column.
 */
static Datum
abt_sketch_over_shards(FunctionCallInfo fcinfo)
{
	Relation	index = abt_open_am_index_shell(PG_GETARG_OID(0), AccessShareLock, "abtree",
												ACL_SELECT);
	char	   *call = psprintf("SELECT %s.abtree_sketch(%%s::pg_catalog.regclass, %d)",
								quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid))),
								PG_GETARG_INT32(1));
	bool		isnull;
	Datum		sketch;

	sketch = abt_citus_fold_over_shards(index, index->rd_index->indrelid, call,
										get_func_rettype(fcinfo->flinfo->fn_oid),
										chll_union, &isnull);
	relation_close(index, AccessShareLock);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(sketch);
}

/*
 * Column col's sketch in rel as a chll value (col 0: the key sketch), or
 * NULL if it keeps none; name is the index the caller asked for (a
 * partition's parent).
 */
static bytea *
abt_sketch_bytea(Relation rel, int32 col, const char *name)
{
	uint8	   *sk = NULL;
	bytea	   *result = NULL;

	if (col < 0 || col > IndexRelationGetNumberOfKeyAttributes(rel))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("index \"%s\" has no key column %d", name, col),
				 errhint("Key columns are numbered from 1 to %d; 0 asks for the sketch of whole keys.",
						 IndexRelationGetNumberOfKeyAttributes(rel))));
	if (col > 0)
		sk = abt_sketch_copy(rel, col - 1);
	else if (abt_sketch_has_key(rel))
		sk = abt_sketch_copy(rel, ABT_SKETCH_KEY_SLOT);
	if (sk)
	{
		Size		len = chll_sketch_size(chll_log2m(sk));

		result = palloc(VARHDRSZ + len);
		SET_VARSIZE(result, VARHDRSZ + len);
		memcpy(VARDATA(result), sk, len);
		pfree(sk);
	}
	return result;
}

/*
 * abtree_sketch on a partitioned abtree index: the union of its leaf
 * partitions' sketches (disjoint rows, as for shards); NULL if any keeps
 * none, since the union would then leave rows out.
 */
static bytea *
abt_sketch_over_partitions(List *indexes, int32 col, const char *name)
{
	Datum		acc = (Datum) 0;
	bool		missing = false;
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Relation	rel = (Relation) lfirst(lc);
		bytea	   *sk = abt_sketch_bytea(rel, col, name);

		if (sk == NULL)
			missing = true;
		else if (acc == (Datum) 0)
			acc = PointerGetDatum(sk);
		else if (chll_log2m((uint8 *) VARDATA_ANY(sk)) !=
				 chll_log2m((uint8 *) VARDATA_ANY(DatumGetPointer(acc))))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the partitions of index \"%s\" keep sketches of different bucket counts",
							name),
					 errdetail("Partition index \"%s\" has %d buckets, an earlier one %d.",
							   RelationGetRelationName(rel), 1 << chll_log2m((uint8 *) VARDATA_ANY(sk)),
							   1 << chll_log2m((uint8 *) VARDATA_ANY(DatumGetPointer(acc)))),
					 errhint("Give the partitions' indexes the same sketch_buckets and REINDEX them.")));
		else
			acc = DirectFunctionCall2(chll_union, acc, PointerGetDatum(sk));
		index_close(rel, AccessShareLock);
	}
	return missing || acc == (Datum) 0 ? NULL : DatumGetByteaPP(acc);
}

/*
 * abtree_sketch(index, key_column): a copy of the index's sketch of its
 * key column key_column (from 1), or with 0 of its whole keys, as a chll
 * value; NULL if it keeps none.
 */
Datum
abtree_sketch(PG_FUNCTION_ARGS)
{
	Relation	rel;
	bytea	   *result;
	List	   *parts;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("abtree_sketch: arguments must not be null")));
	if (abt_citus_partmethod(IndexGetRelation(PG_GETARG_OID(0), true)) != 0)
		return abt_sketch_over_shards(fcinfo);
	if (get_rel_relkind(PG_GETARG_OID(0)) == RELKIND_PARTITIONED_INDEX &&
		(parts = abt_open_partition_indexes(PG_GETARG_OID(0), AccessShareLock)) != NIL)
		result = abt_sketch_over_partitions(parts, PG_GETARG_INT32(1),
											get_rel_name(PG_GETARG_OID(0)));
	else
	{
		rel = abt_open_index_for_reading(PG_GETARG_OID(0), AccessShareLock);
		result = abt_sketch_bytea(rel, PG_GETARG_INT32(1), RelationGetRelationName(rel));
		relation_close(rel, AccessShareLock);
	}
	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_BYTEA_P(chll_result(result));
}
