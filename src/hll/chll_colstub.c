/*-------------------------------------------------------------------------
 *
 * chll_colstub.c
 *	  STUB of abt_column_sketch_ndistinct() until the abtree indexes keep
 *	  a sketch per key column: it computes what such a sketch would say
 *	  by scanning the column with chll_agg (the same hashing as the index
 *	  sketches).  To be deleted when the index-maintained sketches land.
 *
 * It answers only for columns that are a key column of a valid abtree
 * index of the table, the columns the indexes will keep sketches of, so
 * that callers see the same "no sketch" cases as with the real thing.
 *
 *-------------------------------------------------------------------------
 */
#include "hll/chll_ndistinct.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/index.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/* Is attnum a key column of a valid abtree index of the table? */
static bool
chll_stub_column_indexed(Relation rel, AttrNumber attnum)
{
	Oid			amoid = get_index_am_oid("abtree", false);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	bool		found = false;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		int			k;

		if (index->rd_rel->relam == amoid && index->rd_index->indisvalid)
		{
			for (k = 0; k < index->rd_index->indnkeyatts; k++)
				found |= index->rd_index->indkey.values[k] == attnum;
		}
		index_close(index, AccessShareLock);
	}
	list_free(indexes);
	return found;
}

/* The schema abtree is installed in, quoted (get_extension_schema is 16+) */
static char *
chll_stub_schema(void)
{
	bool		isnull;
	Datum		d;

	if (SPI_execute("SELECT quote_ident(n.nspname) FROM pg_catalog.pg_extension e"
					" JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace"
					" WHERE e.extname = 'abtree'", true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "extension abtree is not installed");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return TextDatumGetCString(d);
}

bool
abt_column_sketch_ndistinct(Oid relid, AttrNumber attnum, double *ndistinct)
{
	Relation	rel = table_open(relid, AccessShareLock);
	char	   *column = get_attname(relid, attnum, false);
	char	   *table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												   RelationGetRelationName(rel));
	char	   *schema;
	bool		indexed = chll_stub_column_indexed(rel, attnum);
	bool		isnull;
	Datum		d;

	table_close(rel, AccessShareLock);
	if (!indexed)
		return false;
	SPI_connect();
	schema = chll_stub_schema();
	if (SPI_execute(psprintf("SELECT %s.chll_estimate(%s.chll_agg(%s)) FROM %s",
							 schema, schema, quote_identifier(column), table),
					true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not compute the distinct count of column %d of relation %u",
			 attnum, relid);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	*ndistinct = isnull ? 0 : DatumGetFloat8(d);
	SPI_finish();
	return true;
}
