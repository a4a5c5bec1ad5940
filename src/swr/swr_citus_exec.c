/*-------------------------------------------------------------------------
 *
 * swr_citus_exec.c
 *	  swr_citus_sample(): TABLESAMPLE swr(n) over a Citus distributed table,
 *	  run on the coordinator in rounds of distributed queries.
 *
 * The planner hook (swr_citus.c) turns "dist TABLESAMPLE swr(n)" into a
 * call of this function.  It
 *
 *	 1. weighs every shard: swr_shard_weight() on each, in one distributed
 *		query (a probe, below);
 *	 2. makes rounds of attempts until n rows are accepted: M attempts, each
 *		given to shard i with probability W_i / W (a multinomial split), as
 *		one distributed query "TABLESAMPLE swr_shard(shard ids, attempts)",
 *		which Citus's executor sends to every shard as one task; a shard
 *		makes its attempts and returns the rows that are visible and satisfy
 *		WHERE, a failed attempt returning nothing;
 *	 3. returns the rows accepted in random order.
 *
 * Why n independent draws with the right probabilities: an attempt goes to
 * shard i with probability W_i / W and then to entry e of it with
 * probability w_e / W_i, so each attempt is one draw of the one-server
 * rejection sampler over the whole table (src/swr/README, "How a scan
 * draws").  The rows it accepts are independent draws from the target.  A
 * round that accepts K >= owed rows keeps a uniformly random owed of them:
 * the first owed acceptances of M i.i.d. attempts in a random order, which
 * is what the sequential sampler would have kept.  Redrawing a failure in
 * its own shard would not do: a shard whose rows fail WHERE more often, or
 * whose weight counts more deleted rows, would get more than its share.
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

/* Rejected attempts tolerated per accepted row (as swr_scan.c's bound). */
#define SWR_CITUS_MAX_REJECTS	10000

/* At most this many attempts in one round. */
#define SWR_CITUS_MAX_ROUND		50000000

typedef struct SwrShard
{
	int64		id;
	double		weight;			/* swr_shard_weight() of the shard */
	int64		attempts;		/* this round's */
} SwrShard;

typedef struct SwrRounds
{
	Oid			relid;
	const char *from;			/* "schema.table alias" */
	const char *alias;
	const char *conds;			/* WHERE's conditions on the table, or NULL */
	const char *schema;			/* abtree's */
	int			nargs;			/* the conditions' $1, $2, ... */
	Oid		   *argtypes;
	Datum	   *argvalues;
	char	   *argnulls;
	int			nshards;
	SwrShard   *shards;
	double	   *cum;			/* running sums of the weights */
	pg_prng_state prng;
	MemoryContext cxt;			/* the rows kept live here */
	Datum	   *rows;			/* kept rows (composite datums) */
	int64		nrows;
	int64		attempts;		/* over all rounds */
	int64		accepted;
} SwrRounds;

/* An alias for the table that no column of it is named. */
static const char *
swr_citus_alias(Oid relid)
{
	const char *alias = "swr_row";
	int			i = 0;

	while (get_attnum(relid, alias) != InvalidAttrNumber)
		alias = psprintf("swr_row_%d", ++i);
	return alias;
}

/*
 * Weigh every shard (step 1); false when nothing can be drawn.  A probe,
 * swr_shard('{}', '{}'), returns one row of NULLs per shard whose tableoid
 * is the shard's, and the target list weighs that shard on its worker: one
 * distributed query over Citus's pooled connections (run_command_on_shards
 * opens a new connection per shard, about 7 ms each).
 */
static bool
swr_citus_weigh(SwrRounds *r)
{
	const char *s = quote_identifier(r->schema);
	char	   *sql = psprintf("SELECT %s.swr_shard_id(%s.tableoid), %s.swr_shard_weight(%s.tableoid) "
							   "FROM %s TABLESAMPLE %s.swr_shard('{}'::pg_catalog.int8[], "
							   "'{}'::pg_catalog.int8[]) ORDER BY 1",
							   s, r->alias, s, r->alias, r->from, s);
	double		sum = 0;
	uint64		i;

	if (SPI_execute(sql, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "weighing the shards failed: %s", sql);
	r->nshards = (int) SPI_processed;
	r->shards = MemoryContextAllocZero(r->cxt, sizeof(SwrShard) * Max(r->nshards, 1));
	r->cum = MemoryContextAllocZero(r->cxt, sizeof(double) * Max(r->nshards, 1));
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		r->shards[i].id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		r->shards[i].weight = DatumGetFloat8(SPI_getbinval(tup, desc, 2, &isnull));
		sum += Max(r->shards[i].weight, 0);
		r->cum[i] = sum;
	}
	SPI_freetuptable(SPI_tuptable);
	return sum > 0;
}

/* Split m attempts between the shards, each with probability W_i / W. */
static void
swr_citus_split(SwrRounds *r, int64 m)
{
	double		sum = r->cum[r->nshards - 1];
	int64		j;
	int			i;

	for (i = 0; i < r->nshards; i++)
		r->shards[i].attempts = 0;
	for (j = 0; j < m; j++)
	{
		double		u = pg_prng_double(&r->prng) * sum;
		int			lo = 0;
		int			hi = r->nshards - 1;

		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (r->cum[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		r->shards[lo].attempts++;
	}
}

/* Run the split as one distributed query; the accepted rows, copied. */
static Datum *
swr_citus_attempts(SwrRounds *r, int64 *nrows)
{
	StringInfoData ids;
	StringInfoData counts;
	StringInfoData sql;
	Datum	   *rows;
	uint64		i;
	int			s;

	initStringInfo(&ids);
	initStringInfo(&counts);
	for (s = 0; s < r->nshards; s++)
	{
		if (r->shards[s].attempts == 0)
			continue;
		appendStringInfo(&ids, "%s%lld", ids.len ? "," : "", (long long) r->shards[s].id);
		appendStringInfo(&counts, "%s%lld", counts.len ? "," : "",
						 (long long) r->shards[s].attempts);
	}
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT %s FROM %s TABLESAMPLE %s.swr_shard("
					 "'{%s}'::pg_catalog.int8[], '{%s}'::pg_catalog.int8[]) REPEATABLE (%u)",
					 r->alias, r->from, quote_identifier(r->schema), ids.data, counts.data,
					 pg_prng_uint32(&r->prng));
	if (r->conds)
		appendStringInfo(&sql, " WHERE %s", r->conds);
	if (SPI_execute_with_args(sql.data, r->nargs, r->argtypes, r->argvalues, r->argnulls,
							  false, 0) != SPI_OK_SELECT)
		elog(ERROR, "distributed swr round failed: %s", sql.data);

	rows = MemoryContextAlloc(r->cxt, sizeof(Datum) * Max(SPI_processed, 1));
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext old = MemoryContextSwitchTo(r->cxt);

		rows[i] = datumCopy(d, false, -1);
		MemoryContextSwitchTo(old);
	}
	*nrows = (int64) SPI_processed;
	SPI_freetuptable(SPI_tuptable);
	return rows;
}

/* An order of rows that depends on their contents only (for REPEATABLE). */
static int
swr_citus_row_cmp(const void *a, const void *b)
{
	struct varlena *x = (struct varlena *) DatumGetPointer(*(const Datum *) a);
	struct varlena *y = (struct varlena *) DatumGetPointer(*(const Datum *) b);
	Size		lx = VARSIZE(x);
	Size		ly = VARSIZE(y);

	if (lx != ly)
		return lx < ly ? -1 : 1;
	return memcmp(x, y, lx);
}

/*
 * Shuffle rows; with keep < n, only the first keep places are filled (a
 * uniformly random subset of keep rows, in random order).  The rows arrive
 * from the shards in any order: sorted first, the result depends only on
 * the seed and the rows.
 */
static void
swr_citus_shuffle(SwrRounds *r, Datum *rows, int64 n, int64 keep)
{
	int64		i;

	qsort(rows, n, sizeof(Datum), swr_citus_row_cmp);
	for (i = 0; i < keep && i < n - 1; i++)
	{
		int64		j = i + (int64) pg_prng_uint64_range(&r->prng, 0, n - 1 - i);
		Datum		tmp = rows[i];

		rows[i] = rows[j];
		rows[j] = tmp;
	}
}

/* Is any row visible that satisfies the conditions? */
static bool
swr_citus_any_row(SwrRounds *r)
{
	char	   *sql = psprintf("SELECT 1 FROM %s%s%s LIMIT 1", r->from,
							   r->conds ? " WHERE " : "", r->conds ? r->conds : "");

	if (SPI_execute_with_args(sql, r->nargs, r->argtypes, r->argvalues, r->argnulls,
							  false, 0) != SPI_OK_SELECT)
		elog(ERROR, "distributed swr check failed");
	return SPI_processed > 0;
}

/* Too many attempts rejected: stop (nothing to find) or ERROR (too rare). */
static bool
swr_citus_give_up(SwrRounds *r)
{
	int64		rejected = r->attempts - r->accepted;

	if (rejected <= (int64) SWR_CITUS_MAX_REJECTS * (r->accepted + 1))
		return false;
	if (r->accepted == 0 && !swr_citus_any_row(r))
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("TABLESAMPLE swr rejected too many draws from the shards of \"%s\"",
					get_rel_name(r->relid)),
			 errdetail("%lld of %lld draws found rows that were invisible or failed the WHERE clause.",
					   (long long) rejected, (long long) r->attempts),
			 errhint("Fewer than 1 in %d draws finds a row. VACUUM the table, restrict it less, or SET abtree.swr_where = standard to filter n draws instead of redrawing.",
					 SWR_CITUS_MAX_REJECTS)));
	return true;				/* keep compiler quiet */
}

/* Step 2: rounds until n rows are kept. */
static void
swr_citus_rounds(SwrRounds *r, int64 n)
{
	r->rows = MemoryContextAlloc(r->cxt, sizeof(Datum) * Max(n, 1));
	while (r->nrows < n)
	{
		int64		owed = n - r->nrows;
		double		p = (r->accepted + 1.0) / (r->attempts + 1.0);
		double		m = ceil(owed / Min(p, 1.0) * 1.1) + 8;
		Datum	   *got;
		int64		ngot;

		CHECK_FOR_INTERRUPTS();
		m = Min(m, (double) owed * SWR_CITUS_MAX_REJECTS);
		m = Min(m, SWR_CITUS_MAX_ROUND);
		swr_citus_split(r, (int64) m);
		got = swr_citus_attempts(r, &ngot);
		r->attempts += (int64) m;
		r->accepted += ngot;
		if (ngot >= owed)
			swr_citus_shuffle(r, got, ngot, owed);
		memcpy(r->rows + r->nrows, got, sizeof(Datum) * Min(ngot, owed));
		r->nrows += Min(ngot, owed);
		pfree(got);
		if (r->nrows < n && swr_citus_give_up(r))
			break;
	}
}

/*
 * The values of the conditions' $1, $2, ...: the sixth argument says how
 * many follow it.
 */
static void
swr_citus_args(SwrRounds *r, FunctionCallInfo fcinfo)
{
	int			i;

	r->nargs = 0;
	if (PG_NARGS() > 5 && !PG_ARGISNULL(5) &&
		get_fn_expr_argtype(fcinfo->flinfo, 5) == INT4OID)
		r->nargs = PG_GETARG_INT32(5);
	if (r->nargs < 0 || r->nargs != PG_NARGS() - 6)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("swr_citus_sample needs the number of the conditions' parameters, then the parameters")));
	if (r->nargs == 0)
		return;
	r->argtypes = palloc(sizeof(Oid) * r->nargs);
	r->argvalues = palloc(sizeof(Datum) * r->nargs);
	r->argnulls = palloc(sizeof(char) * r->nargs);
	for (i = 0; i < r->nargs; i++)
	{
		r->argtypes[i] = get_fn_expr_argtype(fcinfo->flinfo, 6 + i);
		r->argvalues[i] = PG_GETARG_DATUM(6 + i);
		r->argnulls[i] = PG_ARGISNULL(6 + i) ? 'n' : ' ';
		if (!OidIsValid(r->argtypes[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("swr_citus_sample could not determine the type of argument %d", 7 + i)));
	}
}

PG_FUNCTION_INFO_V1(swr_citus_sample);

/*
 * swr_citus_sample(row anyelement, tbl regclass, n float8, seed float8,
 * conditions text, VARIADIC "any") RETURNS SETOF anyelement: what the
 * planner hook puts in place of "tbl TABLESAMPLE swr(n) [REPEATABLE (seed)]
 * [WHERE conditions]" on a distributed table.  row is NULL::tbl, for the
 * result type; after conditions come the number of its parameters ($1,
 * $2, ...) and their values.
 */
Datum
swr_citus_sample(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SwrRounds	r;
	int64		n;
	uint32		seed;
	int64		i;

	abt_require_preload();
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("swr_citus_sample needs a table")));
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLESAMPLE_ARGUMENT),
				 errmsg("TABLESAMPLE parameter cannot be null")));
	if (!swr_citus_needs_rounds(PG_GETARG_OID(1)))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table distributed by Citus over several shards",
						get_rel_name(PG_GETARG_OID(1)) ? get_rel_name(PG_GETARG_OID(1)) : "?"),
				 errhint("Sample it with TABLESAMPLE swr(n).")));
	n = swr_sample_size(PG_GETARG_DATUM(2));
	seed = PG_ARGISNULL(3) ? pg_prng_uint32(&pg_global_prng_state) :
		DatumGetUInt32(DirectFunctionCall1(hashfloat8, PG_GETARG_DATUM(3)));

	InitMaterializedSRF(fcinfo, 0);
	memset(&r, 0, sizeof(r));
	r.relid = PG_GETARG_OID(1);
	r.cxt = CurrentMemoryContext;
	r.alias = swr_citus_alias(r.relid);
	r.from = psprintf("%s %s",
					  quote_qualified_identifier(get_namespace_name(get_rel_namespace(r.relid)),
												 get_rel_name(r.relid)),
					  r.alias);
	r.conds = PG_ARGISNULL(4) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(4));
	swr_citus_args(&r, fcinfo);
	r.schema = get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid));
	pg_prng_seed(&r.prng, (uint64) seed);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (n > 0 && swr_citus_weigh(&r))
		swr_citus_rounds(&r, n);
	SPI_finish();

	/* step 3: random order, the same for the same seed and rows */
	swr_citus_shuffle(&r, r.rows, r.nrows, r.nrows);
	for (i = 0; i < r.nrows; i++)
	{
		HeapTupleHeader td = DatumGetHeapTupleHeader(r.rows[i]);
		HeapTupleData tuple;

		tuple.t_len = HeapTupleHeaderGetDatumLength(td);
		ItemPointerSetInvalid(&tuple.t_self);
		tuple.t_tableOid = InvalidOid;
		tuple.t_data = td;
		tuplestore_puttuple(rsinfo->setResult, &tuple);
	}
	return (Datum) 0;
}
