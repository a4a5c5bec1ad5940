/*-------------------------------------------------------------------------
 *
 * abtpage.c
 *	  Pages, tuples and the metapage of the abtree index AM.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "access/genam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

void
abt_init_page(Page page, uint16 level, uint16 flags)
{
	AbtPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(AbtPageOpaqueData));
	opaque = AbtPageGetOpaque(page);
	opaque->prev = InvalidBlockNumber;
	opaque->next = InvalidBlockNumber;
	opaque->level = level;
	opaque->flags = flags;
	opaque->sid = 0;
	opaque->page_id = ABT_PAGE_ID;
}

void
abt_init_metapage(Page page, bool weighted, AttrNumber weight_attno)
{
	AbtMetaPageData *meta;

	abt_init_page(page, 0, ABTP_META);
	meta = AbtPageGetMeta(page);
	memset(meta, 0, sizeof(AbtMetaPageData));
	meta->magic = ABT_MAGIC;
	meta->version = ABT_VERSION;
	meta->root = InvalidBlockNumber;
	meta->level = 0;
	meta->flags = weighted ? ABT_META_WEIGHTED : 0;
	meta->weight_attno = weight_attno;
	/* so that the page has the standard layout (and compresses in FPIs) */
	((PageHeader) page)->pd_lower =
		((char *) meta + sizeof(AbtMetaPageData)) - (char *) page;
}

/*
 * Complain about a page that is not ours, or damaged.  Called on every
 * page we read, cheap enough.
 */
void
abt_check_page(Relation rel, Buffer buf)
{
	Page		page = BufferGetPage(buf);

	if (PageIsNew(page))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains unexpected zero page at block %u",
						RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
				 errhint("Please REINDEX it.")));
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(AbtPageOpaqueData)) ||
		AbtPageGetOpaque(page)->page_id != ABT_PAGE_ID)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
				 errhint("Please REINDEX it.")));
}

void
abt_read_meta(Relation rel, AbtMetaPageData *meta)
{
	abt_read_meta_at(rel, ABT_METAPAGE, meta);
}

/* The metapage of the tree whose metapage is blkno (pbtree: a partition) */
void
abt_read_meta_at(Relation rel, BlockNumber blkno, AbtMetaPageData *meta)
{
	Buffer		buf = abt_read_hinted(rel, blkno);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, buf);
	memcpy(meta, AbtPageGetMeta(BufferGetPage(buf)), sizeof(AbtMetaPageData));
	UnlockReleaseBuffer(buf);
	if (meta->magic != ABT_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not an abtree index",
						RelationGetRelationName(rel))));
	/*
	 * Version 3 only adds key sketches, which a version-2 index cannot have
	 * (abt_sketch_slot_is_key); version 4 only the bucket count of the
	 * sketches, 0 before it, which reads as the 512 they had.  An older
	 * index reads as it was.  An older library refuses a newer index rather
	 * than take a key sketch for a fourth column or misplace sketch pages.
	 */
	if (meta->version < ABT_MIN_VERSION || meta->version > ABT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has abtree version %u, this library reads versions %d to %d",
						RelationGetRelationName(rel), meta->version, ABT_MIN_VERSION, ABT_VERSION),
				 errhint("REINDEX the index.")));
}

/* The allocator of the method built on abtree that has one (pbtree). */
static const AbtPageAllocator *abt_page_allocator = NULL;

void
abt_register_page_allocator(const AbtPageAllocator *allocator)
{
	abt_page_allocator = allocator;
}

/*
 * A new page at the end of the index, returned exclusively locked.  abtree
 * never deletes pages, so there is no free space map to consult; pbtree
 * frees whole partitions and reuses their pages (its allocator).
 */
Buffer
abt_new_buffer(Relation rel)
{
	if (abt_index_info(rel)->partitioned)
		return abt_page_allocator->new_buffer(rel);
	return abt_new_buffer_fork(rel, MAIN_FORKNUM);
}

/* A new page at the end of a fork, locked exclusively */
Buffer
abt_new_buffer_fork(Relation rel, ForkNumber fork)
{
	Buffer		buf;

#if PG_VERSION_NUM >= 160000
	buf = ExtendBufferedRel(BMR_REL(rel), fork, NULL,
							EB_LOCK_FIRST | (fork == INIT_FORKNUM ? EB_SKIP_EXTENSION_LOCK : 0));
#else
	bool		needLock = !RELATION_IS_LOCAL(rel) && fork != INIT_FORKNUM;

	if (needLock)
		LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBufferExtended(rel, fork, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(rel, ExclusiveLock);
#endif
	return buf;
}

/* Weight of a datum of the weight column; ERROR on NULL or negative. */
uint64
abt_weight_from_datum(Datum value, bool isnull, Oid type)
{
	int64		w;

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("abtree weight must not be null"),
				 errhint("Add NOT NULL to the weight column, or use COALESCE in the data.")));
	switch (type)
	{
		case INT2OID:
			w = DatumGetInt16(value);
			break;
		case INT4OID:
			w = DatumGetInt32(value);
			break;
		case INT8OID:
			w = DatumGetInt64(value);
			break;
		default:
			elog(ERROR, "unexpected abtree weight type %u", type);
			w = 0;				/* keep compiler quiet */
	}
	if (w < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("abtree weight must not be negative: " INT64_FORMAT, w),
				 errhint("Weights are sampling probabilities up to a factor; a CHECK (weight >= 0) constraint keeps them valid.")));
	return (uint64) w;
}

/*
 * An insert or build would take rel's total weight (total, as last seen)
 * past ABT_MAX_TOTAL_WEIGHT with an entry of weight w.
 */
void
abt_weight_total_error(Relation rel, uint64 total, uint64 w)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("abtree index \"%s\" would weigh more than " UINT64_FORMAT " in all",
					RelationGetRelationName(rel), ABT_MAX_TOTAL_WEIGHT),
			 errdetail("Its entries weigh " UINT64_FORMAT ", and the new one " UINT64_FORMAT ".",
					   total, w),
			 errhint("Weights are sampling probabilities up to a factor: scale them down, and REINDEX.")));
}

/*
 * Check, holding rel's root (root, locked), that adding w below it keeps
 * the index's total within ABT_MAX_TOTAL_WEIGHT: before a weighted entry
 * (or a group of them) is added anywhere.
 */
void
abt_check_weight_room(Relation rel, Page root, uint64 w)
{
	uint64		total = abt_page_weight(root, true);

	if (w > ABT_MAX_TOTAL_WEIGHT || total > ABT_MAX_TOTAL_WEIGHT - w)
		abt_weight_total_error(rel, total, w);
}

/* Make index attribute attno (from 1) the weight, checking its type. */
static void
abt_set_weight_attr(Relation rel, AbtIndexInfo *info, AttrNumber attno)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attno - 1);
	Oid			type = getBaseType(att->atttypid);

	if (type != INT2OID && type != INT4OID && type != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("abtree weight column \"%s\" has type %s, not an integer type",
						NameStr(att->attname), format_type_be(att->atttypid)),
				 errhint("Use a smallint, integer or bigint column; scale fractional weights to integers.")));
	info->weighted = true;
	info->weight_attno = attno;
	info->weight_type = type;
}

/*
 * The index attribute a weight_column value names, or 0: by the name its
 * table column has now, else by the index column's own name.  Renaming a
 * table column leaves the index's column names as they were, while
 * pg_get_indexdef, and so pg_dump, prints the table's: the utility hook
 * renames the reloption with the column (abt_rename_weight_columns), so the
 * value is a table column's name, and the table's names come first (after
 * renames an index column's old name can be another column's table name).
 * The index's own names serve expressions and options left from renames
 * before the hook.
 */
static AttrNumber
abt_find_weight_attr(Relation rel, const char *colname)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		AttrNumber	heapattno = rel->rd_index->indkey.values[i];
		char	   *name;

		if (heapattno <= 0)
			continue;			/* an expression */
		name = get_attname(rel->rd_index->indrelid, heapattno, true);
		if (name != NULL && strcmp(name, colname) == 0)
			return i + 1;
	}
	for (int i = 0; i < desc->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), colname) == 0)
			return i + 1;
	return 0;
}

/* The table's name for index attribute attno (the index's, for an expression). */
static const char *
abt_att_table_name(Relation rel, AttrNumber attno)
{
	AttrNumber	heapattno = rel->rd_index->indkey.values[attno - 1];

	if (heapattno > 0)
		return get_attname(rel->rd_index->indrelid, heapattno, false);
	return NameStr(TupleDescAttr(RelationGetDescr(rel), attno - 1)->attname);
}

/*
 * Resolve the weight_column reloption to an index attribute and check it.
 */
static void
abt_resolve_weight_column(Relation rel, AbtIndexInfo *info, const char *colname)
{
	AttrNumber	attno = abt_find_weight_attr(rel, colname);

	if (attno != 0)
	{
		abt_set_weight_attr(rel, info, attno);
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("abtree weight column \"%s\" is not a column of index \"%s\"",
					colname, RelationGetRelationName(rel)),
			 errhint("Name a key or INCLUDE column of the index, e.g. CREATE INDEX ... USING abtree (k) INCLUDE (w) WITH (weight_column = 'w').")));
}

/* How an index weighs its entries, for messages: by attribute attno, or 1 each */
static char *
abt_weighting_text(Relation rel, AttrNumber attno)
{
	if (attno == 0)
		return "1 each";
	return psprintf("their column \"%s\"",
					NameStr(TupleDescAttr(RelationGetDescr(rel), attno - 1)->attname));
}

/*
 * After ALTER INDEX ... SET or RESET of the reloptions (abthandler.c's
 * utility hook): the weight_column now set must name an integer column of
 * the index, checked as REINDEX would check it, or pg_dump would carry it
 * into a CREATE INDEX that fails on restore (issue 25); the ERROR undoes the
 * ALTER.  A valid value that differs from what the index was built with
 * takes effect at the next REINDEX: say so.
 */
void
abt_check_altered_options(Relation rel)
{
	AbtOptions *opts = (AbtOptions *) rel->rd_options;
	AbtIndexInfo probe = {0};
	AttrNumber	built = 0;

	if (opts && opts->weight_column != 0)
		abt_resolve_weight_column(rel, &probe, (char *) opts + opts->weight_column);
	if (rel->rd_rel->relkind != RELKIND_INDEX)
		return;					/* a partitioned index has no tree of its own */
	if (RelationGetNumberOfBlocks(rel) > ABT_METAPAGE)
	{
		AbtMetaPageData meta;

		abt_read_meta(rel, &meta);
		if (meta.flags & ABT_META_WEIGHTED)
			built = meta.weight_attno;
	}
	if (probe.weight_attno != built)
		ereport(NOTICE,
				(errmsg("index \"%s\" keeps its current weighting until it is rebuilt",
						RelationGetRelationName(rel)),
				 errdetail("Its entries weigh %s now, and will weigh %s after REINDEX.",
						   abt_weighting_text(rel, built),
						   abt_weighting_text(rel, probe.weight_attno)),
				 errhint("REINDEX INDEX %s;",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)))));
}

/* The weight_column reloption's value, or NULL if unset or empty. */
static const char *
abt_weight_reloption(Relation rel)
{
	AbtOptions *opts = (AbtOptions *) rel->rd_options;

	if (opts == NULL || opts->weight_column == 0 ||
		((char *) opts + opts->weight_column)[0] == '\0')
		return NULL;
	return (char *) opts + opts->weight_column;
}

/*
 * The table column an index weighs rows by, or NULL for 1 each: a leaf
 * index's weighting as built (abt_index_info), a partitioned index's
 * reloption (it has no tree of its own).  By the table's names, which the
 * partitions share (their index columns may be named otherwise).
 */
static const char *
abt_weight_column_name(Relation rel)
{
	AbtIndexInfo *info;

	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
	{
		const char *declared = abt_weight_reloption(rel);
		AttrNumber	attno;

		if (declared == NULL)
			return NULL;
		attno = abt_find_weight_attr(rel, declared);
		return attno != 0 ? abt_att_table_name(rel, attno) : declared;
	}
	info = abt_index_info(rel);
	if (!info->weighted)
		return NULL;
	return abt_att_table_name(rel, info->weight_attno);
}

/*
 * Every index under a partitioned abtree index must weigh rows by the weight
 * column it declares.  PostgreSQL attaches a partition's existing index that
 * has the same columns whatever its options (CREATE INDEX on the parent,
 * ATTACH PARTITION), so an index weighing 1 each could stand under one
 * WITH (weight_column = 'w'): abtree_range_weight's sum over the partitions
 * then mixed counts with weights, and the partitions' draws were not the
 * parent index's.  Called after those statements (the ERROR undoes them)
 * and by the functions that add up over the partitions.
 */
void
abt_check_partition_weighting(Oid parentoid)
{
	Relation	parent = index_open(parentoid, AccessShareLock);
	const char *declared = abt_weight_column_name(parent);
	Oid			amoid = parent->rd_rel->relam;
	ListCell   *lc;

	foreach(lc, find_all_inheritors(parentoid, AccessShareLock, NULL))
	{
		Relation	child;
		const char *own;

		if (lfirst_oid(lc) == parentoid)
			continue;
		child = index_open(lfirst_oid(lc), AccessShareLock);
		own = child->rd_rel->relam == amoid ? abt_weight_column_name(child) : declared;
		if ((own == NULL) != (declared == NULL) ||
			(own != NULL && strcmp(own, declared) != 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("abtree index \"%s\" does not weigh rows as partitioned index \"%s\" does",
							RelationGetRelationName(child), RelationGetRelationName(parent)),
					 errdetail("\"%s\" weighs its entries %s, \"%s\" %s.",
							   RelationGetRelationName(child),
							   own ? psprintf("by column \"%s\"", own) : "1 each",
							   RelationGetRelationName(parent),
							   declared ? psprintf("by column \"%s\"", declared) : "1 each"),
					 errhint("Give \"%s\" the weight_column of \"%s\" and REINDEX it, or drop it: PostgreSQL attaches a partition's existing index with the same columns whatever its options.",
							 RelationGetRelationName(child), RelationGetRelationName(parent))));
		index_close(child, AccessShareLock);
	}
	index_close(parent, AccessShareLock);
}

/*
 * Set an index's weight_column reloption to newname in pg_class, as ALTER
 * INDEX ... SET would.
 */
static void
abt_set_weight_reloption(Oid indexoid, const char *newname)
{
	Relation	pg_class = table_open(RelationRelationId, RowExclusiveLock);
	HeapTuple	tuple = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(indexoid));
	Datum		values[Natts_pg_class] = {0};
	bool		nulls[Natts_pg_class] = {0};
	bool		replace[Natts_pg_class] = {0};
	DefElem    *def = makeDefElem("weight_column", (Node *) makeString(pstrdup(newname)), -1);
	Datum		old;
	bool		isnull;
	HeapTuple	newtuple;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", indexoid);
	old = SysCacheGetAttr(RELOID, tuple, Anum_pg_class_reloptions, &isnull);
	values[Anum_pg_class_reloptions - 1] =
		transformRelOptions(isnull ? (Datum) 0 : old, list_make1(def), NULL, NULL, false, false);
	replace[Anum_pg_class_reloptions - 1] = true;
	newtuple = heap_modify_tuple(tuple, RelationGetDescr(pg_class), values, nulls, replace);
	CatalogTupleUpdate(pg_class, &newtuple->t_self, newtuple);
	InvokeObjectPostAlterHook(RelationRelationId, indexoid, 0);
	heap_freetuple(newtuple);
	heap_freetuple(tuple);
	table_close(pg_class, RowExclusiveLock);
}

/* Does the index index table column attnum (as a column, not in an expression)? */
static bool
abt_indexes_column(Relation index, AttrNumber attnum)
{
	for (int i = 0; i < index->rd_index->indnatts; i++)
		if (index->rd_index->indkey.values[i] == attnum)
			return true;
	return false;
}

/*
 * Does weight_column value declared name the renamed table column (attnum
 * renamed, formerly oldname) in index?  By the old name, or by the index
 * column's own name (an option that a rename before this hook left behind:
 * it still resolves to the index column, abt_find_weight_attr).
 */
static bool
abt_names_renamed_column(Relation index, const char *declared, const char *oldname,
						 AttrNumber renamed)
{
	AttrNumber	attno;

	if (strcmp(declared, oldname) == 0)
		return abt_indexes_column(index, renamed);
	attno = abt_find_weight_attr(index, declared);
	return attno != 0 && index->rd_index->indkey.values[attno - 1] == renamed;
}

/*
 * After ALTER TABLE ... RENAME COLUMN oldname TO newname on relid (and,
 * with recurse, the tables under it): each abtree index whose weight_column
 * names that column says newname now.  Before,
 * pg_dump printed such an index with the column's new name and the old
 * weight_column, a CREATE INDEX that failed on restore (TAP 010): the index
 * was lost, and with it the table's weighted draws.
 */
void
abt_rename_weight_columns(Oid relid, const char *oldname, const char *newname, bool recurse)
{
	Oid			amoid = get_index_am_oid("abtree", true);
	List	   *tables;
	ListCell   *lc;

	if (!OidIsValid(amoid))
		return;
	tables = recurse ? find_all_inheritors(relid, AccessExclusiveLock, NULL) :
		list_make1_oid(relid);
	foreach(lc, tables)
	{
		AttrNumber	renamed = get_attnum(lfirst_oid(lc), newname);
		Relation	table;
		List	   *indexes;
		ListCell   *ic;

		if (renamed == InvalidAttrNumber)
			continue;
		table = relation_open(lfirst_oid(lc), AccessExclusiveLock);
		indexes = RelationGetIndexList(table);
		relation_close(table, NoLock);
		foreach(ic, indexes)
		{
			Relation	index = index_open(lfirst_oid(ic), AccessExclusiveLock);
			const char *declared = index->rd_rel->relam == amoid ?
				abt_weight_reloption(index) : NULL;
			bool		rename = declared != NULL &&
				abt_names_renamed_column(index, declared, oldname, renamed);

			index_close(index, NoLock);
			if (rename)
				abt_set_weight_reloption(lfirst_oid(ic), newname);
		}
	}
}

/* Largest pivot tuple an insert can ask a parent page to take. */
static Size
abt_max_pivot_size(Relation rel, int nkeyatts)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Size		size;
	int			i;

	size = MAXALIGN(sizeof(IndexTupleData) + sizeof(IndexAttributeBitMapData));
	for (i = 0; i < nkeyatts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attlen <= 0)
			return ABT_MAX_ITEM_SIZE + sizeof(AbtPivotAux) + sizeof(ItemIdData);
		size = att_align_nominal(size, att->attalign) + att->attlen;
	}
	return MAXALIGN(size) + sizeof(AbtPivotAux) + sizeof(ItemIdData);
}

/*
 * Per-index information, cached in rd_amcache (rebuilt with the relcache
 * entry, so a changed reloption is seen after the ALTER's invalidation).
 */
AbtIndexInfo *
abt_index_info(Relation rel)
{
	AbtIndexInfo *info = (AbtIndexInfo *) rel->rd_amcache;
	AbtOptions *opts = (AbtOptions *) rel->rd_options;

	if (info != NULL)
		return info;

	info = MemoryContextAllocZero(rel->rd_indexcxt, sizeof(AbtIndexInfo));
	info->nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	info->cached_root = InvalidBlockNumber;
	info->fillfactor = opts ? opts->fillfactor : ABT_DEFAULT_FILLFACTOR;
	info->deduplicate = opts ? opts->deduplicate_items : true;
	info->partitioned = abt_page_allocator != NULL && abt_page_allocator->owns(rel);

	/*
	 * The leaf tuples' shape follows the weighting the index was built with,
	 * which the metapage records: ALTER INDEX ... SET (weight_column) changes
	 * only the reloption, which takes effect at the next REINDEX (taking it
	 * from the reloption here read and wrote tuples of the wrong shape).
	 * Before the build writes the metapage, the reloption is all there is.
	 * Reading a buffer processes no invalidations, so info stays ours.
	 */
	if (info->partitioned)
		;						/* pbtree: unweighted, block 0 is its directory */
	else if (RelationGetNumberOfBlocks(rel) > ABT_METAPAGE)
	{
		AbtMetaPageData meta;

		abt_read_meta(rel, &meta);
		if ((meta.flags & ABT_META_WEIGHTED) &&
			(meta.weight_attno < 1 || meta.weight_attno > RelationGetDescr(rel)->natts))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("abtree index \"%s\" has an invalid weight column number %d in its metapage",
							RelationGetRelationName(rel), meta.weight_attno),
					 errhint("Please REINDEX it.")));
		if (meta.flags & ABT_META_WEIGHTED)
			abt_set_weight_attr(rel, info, meta.weight_attno);
	}
	else if (opts && opts->weight_column != 0)
		abt_resolve_weight_column(rel, info,
								  (char *) opts + opts->weight_column);
	info->max_pivot_size = abt_max_pivot_size(rel, info->nkeyatts);
	for (int i = 0; i < RelationGetDescr(rel)->natts; i++)
		if (TupleDescAttr(RelationGetDescr(rel), i)->attlen < 0)
			info->has_varlena = true;
	/*
	 * The key columns only: the shape of pivot tuples.  Built entry by entry
	 * (PostgreSQL 18 places the attributes after an array sized by natts,
	 * so a copy with natts lowered would not do).
	 */
	{
		MemoryContext old = MemoryContextSwitchTo(rel->rd_indexcxt);
		int			i;

		info->keydesc = CreateTemplateTupleDesc(info->nkeyatts);
		for (i = 1; i <= info->nkeyatts; i++)
			TupleDescCopyEntry(info->keydesc, i, RelationGetDescr(rel), i);
		MemoryContextSwitchTo(old);
	}
	rel->rd_amcache = info;
	return info;
}

/* Length of the tuple's header and data, without the final padding. */
static Size
abt_tuple_data_end(TupleDesc desc, IndexTuple itup)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	index_deform_tuple(itup, desc, values, isnull);
	return IndexInfoFindDataOffset(itup->t_info) +
		heap_compute_data_size(desc, values, isnull);
}

/* Where a leaf tuple's column data ends (a posting tuple's TIDs follow). */
Size
abt_leaf_key_size(Relation rel, IndexTuple itup)
{
	return abt_tuple_data_end(RelationGetDescr(rel), itup);
}

/*
 * Form a leaf tuple: the index columns, then the aux (weight and xid) at the
 * end, in what would otherwise be alignment padding where possible.
 */
IndexTuple
abt_form_leaf(Relation rel, AbtIndexInfo *info, Datum *values, bool *isnull,
			  ItemPointer heaptid, TransactionId xid)
{
	TupleDesc	desc = RelationGetDescr(rel);
	IndexTuple	itup;
	IndexTuple	result;
	Size		end;
	Size		auxsize = ABT_LEAF_AUX_SIZE(info->weighted);
	Size		size;
	char	   *aux;

	itup = index_form_tuple(desc, values, isnull);
	/*
	 * Where the data ends.  index_form_tuple may detoast or compress
	 * varlena values, so those need a look at the tuple as formed.
	 */
	if (info->has_varlena)
		end = abt_tuple_data_end(desc, itup);
	else
		end = IndexInfoFindDataOffset(itup->t_info) +
			heap_compute_data_size(desc, values, isnull);
	size = MAXALIGN(end + auxsize);

	if (size > ABT_MAX_ITEM_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index row size %zu exceeds abtree maximum %zu for index \"%s\"",
						size, (Size) ABT_MAX_ITEM_SIZE, RelationGetRelationName(rel)),
				 errhint("Values larger than a third of a page cannot be indexed; consider an index on a hash or prefix of the value.")));

	if (size <= IndexTupleSize(itup))
	{
		/* the aux fits into the alignment padding: no copy */
		result = itup;
		memset((char *) result + end, 0, size - end);
	}
	else
	{
		result = palloc0(size);
		memcpy(result, itup, end);
		pfree(itup);
	}
	result->t_info = (result->t_info & ~INDEX_SIZE_MASK) | size;
	result->t_tid = *heaptid;
	aux = (char *) result + size - auxsize;
	if (info->weighted)
	{
		uint64		w = abt_weight_from_datum(values[info->weight_attno - 1],
											  isnull[info->weight_attno - 1],
											  info->weight_type);

		if (w > ABT_MAX_ENTRY_WEIGHT)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("abtree weight " UINT64_FORMAT " of index \"%s\" is larger than an entry may weigh, " UINT64_FORMAT,
							w, RelationGetRelationName(rel), ABT_MAX_ENTRY_WEIGHT),
					 errhint("Weights are sampling probabilities up to a factor: scale them down, e.g. to thousandths of the largest.")));

		memcpy(aux, &w, sizeof(uint64));
		aux += sizeof(uint64);
	}
	memcpy(aux, &xid, sizeof(TransactionId));
	return result;
}

/* The heap TID of a leaf tuple, or the key suffix of a pivot. */
ItemPointer
abt_tuple_heaptid(IndexTuple itup, bool pivot)
{
	return pivot ? &AbtPivotGetAux(itup)->heaptid : &itup->t_tid;
}

/*
 * Make a pivot tuple from a leaf tuple or another pivot: the key columns and
 * the heap TID of source, pointing to child with the given weight.
 */
IndexTuple
abt_make_pivot(Relation rel, IndexTuple source, bool source_is_leaf,
			   BlockNumber child, uint64 weight)
{
	AbtIndexInfo *info = abt_index_info(rel);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	IndexTuple	keys;
	IndexTuple	pivot;
	AbtPivotAux *aux;
	Size		keysize;

	Assert(source_is_leaf || !AbtPivotHasNoKey(source));
	index_deform_tuple(source,
					   source_is_leaf ? RelationGetDescr(rel) : info->keydesc,
					   values, isnull);
	keys = index_form_tuple(info->keydesc, values, isnull);
	keysize = IndexTupleSize(keys);
	pivot = palloc0(keysize + sizeof(AbtPivotAux));
	memcpy(pivot, keys, keysize);
	pivot->t_info = (pivot->t_info & ~INDEX_SIZE_MASK) | (keysize + sizeof(AbtPivotAux));
	ItemPointerSet(&pivot->t_tid, child, 1);
	aux = AbtPivotGetAux(pivot);
	aux->heaptid = *abt_tuple_heaptid(source, !source_is_leaf);
	aux->rid = 0;
	aux->weight = weight;
	pfree(keys);
	return pivot;
}

/*
 * The "minus infinity" downlink.  rid is the RID of the downlink it
 * replaces, when a split moves a downlink to the front of a right half:
 * it is the same downlink, and RIDs never go back (src/abtree/README,
 * "Weight maintenance").
 */
IndexTuple
abt_make_nokey_pivot(BlockNumber child, uint64 weight, uint16 rid)
{
	Size		size = MAXALIGN(sizeof(IndexTupleData)) + sizeof(AbtPivotAux);
	IndexTuple	pivot = palloc0(size);
	AbtPivotAux *aux;

	pivot->t_info = size | ABT_PIVOT_NOKEY;
	ItemPointerSet(&pivot->t_tid, child, 1);
	aux = AbtPivotGetAux(pivot);
	ItemPointerSetInvalid(&aux->heaptid);
	aux->rid = rid;
	aux->weight = weight;
	return pivot;
}

/* Sum of the weights on a page: valid leaf entries, or downlinks. */
uint64
abt_page_weight(Page page, bool weighted)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber off;
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	uint64		sum = 0;

	for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		if (AbtPageIsLeaf(opaque))
			sum += abt_leaf_effective_weight(itup, weighted);
		else
			sum += AbtPivotGetAux(itup)->weight;
	}
	return sum;
}

/*
 * Are two pivots the same key?  Byte comparison of the key columns and the
 * heap TID; the child pointer, RID and weight do not take part.  Pivots
 * made from the same source tuple are byte-identical in these parts.
 */
bool
abt_pivot_key_equal(IndexTuple a, IndexTuple b)
{
	Size		size = IndexTupleSize(a);
	Size		keyend = size - sizeof(AbtPivotAux);

	if (size != IndexTupleSize(b) ||
		(a->t_info & ~INDEX_SIZE_MASK) != (b->t_info & ~INDEX_SIZE_MASK))
		return false;
	if (memcmp((char *) a + sizeof(IndexTupleData), (char *) b + sizeof(IndexTupleData),
			   keyend - sizeof(IndexTupleData)) != 0)
		return false;
	/* not ItemPointerEquals: a posting tuple's place has offset 0 */
	return ItemPointerCompare(&AbtPivotGetAux(a)->heaptid, &AbtPivotGetAux(b)->heaptid) == 0;
}

/*
 * Mark a leaf entry valid (paper section 4.1): its inserting xid goes where
 * InvalidTransactionId was.  A 4-byte aligned store, so a reader sees the
 * old or the new value, never a mix.
 */
void
abt_set_leaf_xmin(IndexTuple itup, TransactionId xid)
{
	memcpy((char *) itup + IndexTupleSize(itup) - sizeof(TransactionId), &xid,
		   sizeof(TransactionId));
}

/*
 * Clear HAS_INVALID on a leaf once no entry on it waits for its weight
 * pass, so that sampling indexes the leaf directly again.  The caller holds
 * an exclusive lock (or is redo).
 */
void
abt_leaf_update_invalid_flag(Page page)
{
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	OffsetNumber off;
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	if (!(opaque->flags & ABTP_HAS_INVALID))
		return;
	for (off = AbtFirstDataOffset(opaque); off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		if (!TransactionIdIsValid(abt_leaf_xmin(itup)))
			return;
	}
	opaque->flags &= ~ABTP_HAS_INVALID;
}
