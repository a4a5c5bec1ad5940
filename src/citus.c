/*-------------------------------------------------------------------------
 *
 * citus.c
 *	  What abtree needs to know of Citus, without needing Citus: which
 *	  tables it distributes, and summing an index function over the shards.
 *
 * A Citus distributed, reference or local table is a shell on the
 * coordinator (and on workers with metadata): its rows, and the entries of
 * its indexes, live in shard tables named <table>_<shardid>, with indexes
 * named <index>_<shardid>.  An index function called on the shell's index
 * would answer for an empty index, silently (issue 23, item 2).  So the
 * index functions refuse a shell's index (abt_refuse_citus_shell), and those
 * whose answer combines over the rows add up the shards' answers
 * (abt_citus_fold_over_shards): abtree_range_weight's sums, abtree_sketch's
 * sketches (counting HLL sketches of disjoint row sets merge exactly).
 *
 * Citus is recognised by its catalogs, read directly or through SPI; no
 * symbol of Citus is used, so abtree builds and runs without it.  A service
 * below the access methods: it knows nothing of their tuples.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree_ext.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/*
 * The Citus partition method of relid ('h' hash, 'r' range, 'a' append, 'n'
 * none: a reference, local or single-shard table), or 0 when Citus does
 * not know it or is not installed.
 */
char
abt_citus_partmethod(Oid relid)
{
	Oid			catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	char		method = 0;

	if (!OidIsValid(catalog))
		return 0;
	rel = table_open(catalog, AccessShareLock);
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	if ((tuple = systable_getnext(scan)) != NULL)
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, 2, RelationGetDescr(rel), &isnull);

		if (!isnull)
			method = DatumGetChar(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return method;
}

/*
 * Refuse an index function on the index of a Citus shell table: its rows
 * are in the shards.
 */
void
abt_refuse_citus_shell(Relation index, Oid heapoid)
{
	if (abt_citus_partmethod(heapoid) == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("\"%s\" is the index of Citus table \"%s\", whose rows are in its shards",
					RelationGetRelationName(index), get_rel_name(heapoid)),
			 errdetail("Here the index is empty; each shard has an index of its own, named %s_<shardid>.",
					   RelationGetRelationName(index)),
			 errhint("abtree_range_weight adds up the shards; for this function, call it on the shards' indexes, for example with run_command_on_shards('%s', ...).",
					 get_rel_name(heapoid))));
}

/*
 * An index function's answers on the shards of Citus table heapoid, folded
 * into one: call is the function's SQL call with one %s, where the shard
 * index's qualified name goes as a string literal; each answer is read with
 * resulttype's input function and folded in with fold (numeric_add for
 * sums, chll_union for sketches).  The calls run on the workers through
 * Citus's master_run_on_worker, one per shard (on one placement of it), in
 * parallel.  *isnull when no shard answered with a value.
 */
Datum
abt_citus_fold_over_shards(Relation index, Oid heapoid, const char *call, Oid resulttype,
						   PGFunction fold, bool *isnull)
{
	const char *nsp = get_namespace_name(RelationGetNamespace(index));
	const char *idxname = RelationGetRelationName(index);
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(heapoid)};
	StringInfoData nodes,
				ports,
				calls;
	Datum		acc = (Datum) 0;
	Oid			infunc;
	Oid			ioparam;
	MemoryContext caller = CurrentMemoryContext;
	uint64		i;

	*isnull = true;
	getTypeInputInfo(resulttype, &infunc, &ioparam);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT DISTINCT ON (s.shardid) s.shardid, p.nodename, p.nodeport "
							  "FROM pg_catalog.pg_dist_shard s "
							  "JOIN pg_catalog.pg_dist_shard_placement p USING (shardid) "
							  "WHERE s.logicalrelid = $1 AND p.shardstate = 1 "
							  "ORDER BY s.shardid, p.nodeport",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "reading the shards of \"%s\" failed", get_rel_name(heapoid));
	initStringInfo(&nodes);
	initStringInfo(&ports);
	initStringInfo(&calls);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *shard = psprintf("%s_%s", idxname, SPI_getvalue(tup, desc, 1));

		if (strlen(shard) >= NAMEDATALEN)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the shards of index \"%s\" have names Citus shortened", idxname),
					 errhint("Rename the index to a name of at most %d characters.",
							 NAMEDATALEN - 1 - (int) strlen(SPI_getvalue(tup, desc, 1)) - 1)));
		appendStringInfo(&nodes, "%s%s", i ? "," : "", quote_literal_cstr(SPI_getvalue(tup, desc, 2)));
		appendStringInfo(&ports, "%s%s", i ? "," : "", SPI_getvalue(tup, desc, 3));
		appendStringInfo(&calls, "%s%s", i ? "," : "",
						 quote_literal_cstr(psprintf(call,
													 quote_literal_cstr(quote_qualified_identifier(nsp, shard)))));
	}
	if (SPI_processed > 0)
	{
		char	   *sql = psprintf("SELECT success, result FROM pg_catalog.master_run_on_worker("
								   "ARRAY[%s]::text[], ARRAY[%s]::int[], ARRAY[%s]::text[], true)",
								   nodes.data, ports.data, calls.data);

		if (SPI_execute(sql, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "running on the shards of \"%s\" failed", get_rel_name(heapoid));
		for (i = 0; i < SPI_processed; i++)
		{
			bool		null;
			char	   *result = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
			Datum		value;

			if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1,
											&null)))
				ereport(ERROR,
						(errcode(ERRCODE_CONNECTION_FAILURE),
						 errmsg("a shard of \"%s\" could not answer", idxname),
						 errdetail("Its worker said: %s", result ? result : "nothing")));
			if (result == NULL || result[0] == '\0')
				continue;		/* NULL: a shard without a sketch, say */
			value = OidInputFunctionCall(infunc, result, ioparam, -1);
			acc = *isnull ? value : DirectFunctionCall2(fold, acc, value);
			*isnull = false;
		}
	}
	if (!*isnull)
	{
		MemoryContext old = MemoryContextSwitchTo(caller);

		acc = datumCopy(acc, false, -1);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	return acc;
}
