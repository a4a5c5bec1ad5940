/*-------------------------------------------------------------------------
 *
 * swr_index.c
 *	  Which abtree index TABLESAMPLE swr draws through, and the syntax of
 *	  the abtree.swr_index parameter that names it.
 *
 * The rule (README "Choosing the index"): an index listed in
 * abtree.swr_index that belongs to the sampled table, or whose partition
 * does, wins.  Otherwise the valid, non-partial abtree indexes of the table
 * are the candidates; if they all weigh rows the same way (all unweighted,
 * or all by the same column) they draw from the same distribution and the
 * one with the lowest OID is used; if they weigh rows differently, which
 * one is meant cannot be guessed, and we raise an ERROR naming two of them.
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"

#include "abtree/abtree.h"
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "commands/defrem.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "nodes/value.h"
#include "parser/scansup.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

/* ---- abtree.swr_index syntax ---- */

/*
 * Read one identifier at *p: "quoted" (with "" for a quote, case kept) or
 * unquoted (downcased).  Appends it to *name unless name is NULL, in which
 * case nothing is allocated (the GUC check hook only validates).
 */
static bool
swr_parse_identifier(const char **p, List **name)
{
	const char *s = *p;

	if (*s == '"')
	{
		StringInfoData buf;
		int			len = 0;

		if (name)
			initStringInfo(&buf);
		for (s++;; s++)
		{
			if (*s == '\0')
				return false;	/* unterminated */
			if (*s == '"')
			{
				if (s[1] != '"')
					break;
				s++;
			}
			if (name)
				appendStringInfoChar(&buf, *s);
			len++;
		}
		s++;
		if (len == 0)
			return false;		/* "" is not a name */
		if (name)
		{
			truncate_identifier(buf.data, buf.len, false);
			*name = lappend(*name, makeString(buf.data));
		}
	}
	else
	{
		const char *start = s;

		while (*s != '\0' && *s != '.' && *s != ',' && *s != '"' &&
			   !scanner_isspace(*s))
			s++;
		if (s == start)
			return false;
		if (name)
			*name = lappend(*name,
							makeString(downcase_truncate_identifier(start, s - start,
																	false)));
	}
	*p = s;
	return true;
}

static const char *
swr_skip_spaces(const char *p)
{
	while (scanner_isspace(*p))
		p++;
	return p;
}

/*
 * Parse abtree.swr_index: index names separated by commas, each optionally
 * qualified (schema.index), quoted as in SQL.  Returns false on a syntax
 * error.  With names != NULL, appends one List of String nodes per name.
 * An empty or blank value is a valid empty list.
 */
bool
swr_parse_index_names(const char *value, List **names)
{
	const char *p = swr_skip_spaces(value ? value : "");
	List	   *name = NIL;
	int			nparts = 0;

	if (*p == '\0')
		return true;
	for (;;)
	{
		if (!swr_parse_identifier(&p, names ? &name : NULL))
			return false;
		nparts++;
		p = swr_skip_spaces(p);
		if (*p == '.')
		{
			if (nparts == 3)
				return false;	/* at most database.schema.index */
			p = swr_skip_spaces(p + 1);
			continue;
		}
		if (names)
			*names = lappend(*names, name);
		name = NIL;
		nparts = 0;
		if (*p == '\0')
			return true;
		if (*p != ',')
			return false;
		p = swr_skip_spaces(p + 1);
	}
}

/* ---- choosing the index ---- */

static void
swr_relkind_and_am(Oid relid, char *relkind, Oid *relam)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	*relkind = ((Form_pg_class) GETSTRUCT(tup))->relkind;
	*relam = ((Form_pg_class) GETSTRUCT(tup))->relam;
	ReleaseSysCache(tup);
}

/*
 * The OID of a name listed in abtree.swr_index, which must be an abtree
 * index, or InvalidOid when the name resolves to nothing (an index dropped
 * since the setting was made): swr_named_index decides what that means.
 */
static Oid
swr_lookup_named(List *name, Oid amoid)
{
	Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(name), NoLock, true);
	char		relkind;
	Oid			relam;

	if (!OidIsValid(relid))
		return InvalidOid;
	swr_relkind_and_am(relid, &relkind, &relam);
	if ((relkind != RELKIND_INDEX && relkind != RELKIND_PARTITIONED_INDEX) ||
		relam != amoid)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" named in abtree.swr_index is not an abtree index",
						NameListToString(name))));
	return relid;
}

/* Is index indexoid the named index, or a partition of it (at any depth)? */
static bool
swr_index_matches(Oid indexoid, Oid named)
{
	if (indexoid == named)
		return true;
	return get_rel_relispartition(indexoid) &&
		list_member_oid(get_partition_ancestors(indexoid), named);
}

/* The index of the table that abtree.swr_index names, or InvalidOid. */
static Oid
swr_named_index(Relation heaprel, List *indexes, Oid amoid)
{
	List	   *names = NIL;
	List	   *missing = NIL;
	Oid			found = InvalidOid;
	ListCell   *lc;

	if (!swr_parse_index_names(abt_swr_index, &names))
		elog(ERROR, "invalid abtree.swr_index value \"%s\"", abt_swr_index);
	foreach(lc, names)
	{
		Oid			named = swr_lookup_named((List *) lfirst(lc), amoid);
		ListCell   *lc2;

		if (!OidIsValid(named))
		{
			missing = (List *) lfirst(lc);
			continue;
		}
		foreach(lc2, indexes)
		{
			Oid			indexoid = lfirst_oid(lc2);

			if (!swr_index_matches(indexoid, named) || indexoid == found)
				continue;
			if (OidIsValid(found))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("abtree.swr_index names two indexes of table \"%s\": \"%s\" and \"%s\"",
								RelationGetRelationName(heaprel),
								get_rel_name(found), get_rel_name(indexoid)),
						 errhint("List one abtree index per sampled table.")));
			found = indexoid;
		}
	}

	/*
	 * A name that resolves to nothing is an ERROR only for a table the list
	 * names no index of: it may have been meant for this table (an index
	 * dropped since), and drawing through another could weigh rows
	 * differently.  A table the list names an index of samples whatever
	 * became of the other names (issue 25, item 8).
	 */
	if (!OidIsValid(found) && missing != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("index \"%s\" named in abtree.swr_index does not exist",
						NameListToString(missing)),
				 errdetail("abtree.swr_index names no index of table \"%s\", and that name may have been meant for it.",
						   RelationGetRelationName(heaprel)),
				 errhint("Name abtree indexes of the sampled tables, or SET abtree.swr_index = '' to choose automatically.")));
	if (OidIsValid(found) && !get_index_isvalid(found))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("abtree index \"%s\" named in abtree.swr_index is not valid",
						get_rel_name(found)),
				 errhint("A failed CREATE INDEX CONCURRENTLY leaves an invalid index; REINDEX it.")));
	return found;
}

/*
 * How an index weighs rows: 0 unweighted, else the table column of the
 * weight, or -1 for a weight we cannot compare (an expression column).
 */
static AttrNumber
swr_weighting(Relation index)
{
	AbtIndexInfo *info = abt_index_info(index);
	AttrNumber	heapattno;

	if (!info->weighted)
		return 0;
	heapattno = index->rd_index->indkey.values[info->weight_attno - 1];
	return heapattno > 0 ? heapattno : -1;
}

/*
 * How an index weighs rows, comparable across tables (the partitions of a
 * table may number their columns differently): NULL when every row weighs
 * 1, else the name of the weight's table column, or "" for an expression.
 */
const char *
swr_weight_column(Relation index)
{
	AttrNumber	heapattno = swr_weighting(index);

	if (heapattno == 0)
		return NULL;
	if (heapattno < 0)
		return "";
	return get_attname(index->rd_index->indrelid, heapattno, false);
}

char *
swr_describe(Relation index)
{
	AbtIndexInfo *info = abt_index_info(index);

	if (!info->weighted)
		return psprintf("\"%s\" (every row weighs 1)", RelationGetRelationName(index));
	return psprintf("\"%s\" (weight column \"%s\")", RelationGetRelationName(index),
					NameStr(TupleDescAttr(RelationGetDescr(index),
										  info->weight_attno - 1)->attname));
}

static void
swr_no_index_error(Relation heaprel, int nskipped)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("table \"%s\" has no abtree index for TABLESAMPLE swr",
					RelationGetRelationName(heaprel)),
			 nskipped > 0 ?
			 errdetail("Partial abtree indexes are used only when named in abtree.swr_index, invalid ones never.") : 0,
			 errhint("Create one with CREATE INDEX ON %s USING abtree (...), adding WITH (weight_column = ...) for weighted draws.",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(heaprel)),
												RelationGetRelationName(heaprel)))));
}

/*
 * Index indexoid opened, if it is an abtree index TABLESAMPLE swr may choose
 * by itself: valid and not partial.  NULL otherwise; *skipped counts the
 * abtree indexes passed over.
 */
static Relation
swr_open_candidate(Oid indexoid, Oid amoid, int *skipped)
{
	char		relkind;
	Oid			relam;
	Relation	index;

	swr_relkind_and_am(indexoid, &relkind, &relam);
	if (relam != amoid)
		return NULL;
	index = index_open(indexoid, AccessShareLock);
	if (index->rd_index->indisvalid &&
		heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
		return index;
	(*skipped)++;
	index_close(index, NoLock);
	return NULL;
}

/*
 * The automatic choice: the lowest-OID valid, non-partial abtree index,
 * provided every such index weighs rows the same way.  The index list is
 * sorted by OID.  Returns the chosen index opened.
 */
static Relation
swr_automatic_index(Relation heaprel, List *indexes, Oid amoid)
{
	Relation	chosen = NULL;
	int			nskipped = 0;
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Relation	index = swr_open_candidate(lfirst_oid(lc), amoid, &nskipped);

		if (index == NULL)
			continue;
		if (chosen == NULL)
		{
			chosen = index;
			continue;
		}
		if (swr_weighting(index) != swr_weighting(chosen) || swr_weighting(index) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("table \"%s\" has abtree indexes that weigh rows differently",
							RelationGetRelationName(heaprel)),
					 errdetail("TABLESAMPLE swr could draw through %s or %s.",
							   swr_describe(chosen), swr_describe(index)),
					 errhint("Choose one with SET abtree.swr_index = '%s'.",
							 RelationGetRelationName(chosen))));
		index_close(index, NoLock);
	}
	if (chosen == NULL)
		swr_no_index_error(heaprel, nskipped);
	return chosen;
}

/*
 * Open the abtree index that TABLESAMPLE swr on heaprel draws through,
 * with AccessShareLock (held until the end of the transaction, as every
 * index scan does).
 */
Relation
swr_open_index(Relation heaprel)
{
	Oid			amoid = get_index_am_oid("abtree", false);
	List	   *indexes = RelationGetIndexList(heaprel);
	Oid			named = swr_named_index(heaprel, indexes, amoid);
	Relation	index;

	if (OidIsValid(named))
		index = index_open(named, AccessShareLock);
	else
		index = swr_automatic_index(heaprel, indexes, amoid);
	list_free(indexes);
	return index;
}

/*
 * For callers that need every row drawn alike (the distinct-count
 * estimators, src/stats/chll_ndsample.c): the index abtree.swr_index names
 * for the table, whatever it weighs; else an unweighted, valid,
 * non-partial abtree index of the table (the lowest OID), even if
 * weighted ones exist beside it (issue 25, item 8); else swr_open_index's
 * choice, which the caller refuses if it weighs rows.
 */
Relation
swr_open_unweighted_index(Relation heaprel)
{
	Oid			amoid = get_index_am_oid("abtree", false);
	List	   *indexes = RelationGetIndexList(heaprel);
	Oid			named = swr_named_index(heaprel, indexes, amoid);
	ListCell   *lc;

	if (OidIsValid(named))
	{
		list_free(indexes);
		return index_open(named, AccessShareLock);
	}
	foreach(lc, indexes)
	{
		int			skipped = 0;
		Relation	index = swr_open_candidate(lfirst_oid(lc), amoid, &skipped);

		if (index == NULL)
			continue;
		if (swr_weighting(index) == 0)
		{
			list_free(indexes);
			return index;
		}
		index_close(index, NoLock);
	}
	list_free(indexes);
	return swr_open_index(heaprel);
}
