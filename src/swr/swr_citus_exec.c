/*-------------------------------------------------------------------------
 *
 * swr_citus_exec.c
 *	  swr_citus_sample(): TABLESAMPLE swr(n) over a Citus distributed table,
 *	  run on the coordinator in rounds of distributed queries.
 *
 * The planner hook (swr_citus.c) turns "dist TABLESAMPLE swr(n)" into a
 * call of this function, which makes rounds until n rows are accepted.  A
 * round is one distributed query,
 *
 *	   SELECT t.* FROM dist t TABLESAMPLE swr_shard(rate) REPEATABLE (s) WHERE ...
 *
 * which Citus's executor sends to every shard as one task: shard i makes
 * Poisson(rate x W_i) attempts, W_i being the weight its index offers to
 * its snapshot, and returns the rows that are visible and satisfy WHERE; a
 * failed attempt returns nothing.  The rows come back in random order.
 *
 * Why n independent draws with the right probabilities.  Independent
 * Poisson counts with means proportional to W_i are, given their total M,
 * a multinomial split of M attempts with probabilities W_i / W, so the M
 * attempts are i.i.d.: shard i with probability W_i / W, then entry e with
 * w_e / W_i, one draw of the one-server rejection sampler over the whole
 * table (src/swr/README).  The rows accepted are independent draws from the
 * target, and how many there are depends on nothing else.  A round that
 * accepts K >= owed rows keeps a uniformly random owed of them (the first
 * owed acceptances in a random order of the attempts); rounds are
 * independent.  Each shard weighs itself when it draws, so no weight read
 * earlier can be stale.  Redrawing a failure in its own shard would be
 * biased: a shard whose stored weight counts deleted rows, or whose rows
 * fail WHERE more often, would get more than its share.
 *
 * The rate only decides how many rows a round brings, not which: rate =
 * mu / A, A the accepted weight per unit of rate seen before and mu a
 * little above owed, so that one round is nearly always enough.  A comes
 * from a cache per backend (table, conditions); without one, and always
 * under REPEATABLE (whose rows must depend only on the seed and the data),
 * a probe weighs the shards first: swr_shard(0) returns one row of NULLs
 * per shard whose tableoid is the shard's, and swr_shard_weight(tableoid)
 * in the target list weighs it on its worker.
 *
 *-------------------------------------------------------------------------
 */
#include "swr.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "access/htup_details.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

/* Rejected attempts tolerated per accepted row (as swr_scan.c's bound). */
#define SWR_CITUS_MAX_REJECTS	10000

/* At most this many attempts, expected, in one round. */
#define SWR_CITUS_MAX_ROUND		50000000.0

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
	double		weight;			/* W: the shards' total weight, as last seen */
	double		accepted_weight;	/* A: rows accepted per unit of rate */
	pg_prng_state prng;
	MemoryContext cxt;			/* the rows kept live here */
	TupleDesc	rowdesc;		/* the table's row type, dropped columns too */
	HeapTuple  *rows;			/* kept rows, of rowdesc */
	int64		nrows;
	double		attempts;		/* expected attempts, over all rounds */
	int64		accepted;
} SwrRounds;

/* ---- what rounds saw before: W and A per (table, conditions) ---- */

typedef struct SwrCacheKey
{
	Oid			relid;
	uint32		conds;			/* hash of the conditions' text */
} SwrCacheKey;

typedef struct SwrCacheEntry
{
	SwrCacheKey key;
	double		weight;
	double		accepted_weight;
} SwrCacheEntry;

static HTAB *swr_cache = NULL;

static SwrCacheEntry *
swr_cache_entry(SwrRounds *r, bool create)
{
	SwrCacheKey key;
	bool		found;
	SwrCacheEntry *e;

	if (swr_cache == NULL || (create && hash_get_num_entries(swr_cache) >= 1024))
	{
		HASHCTL		ctl;

		if (swr_cache)
			hash_destroy(swr_cache);
		ctl.keysize = sizeof(SwrCacheKey);
		ctl.entrysize = sizeof(SwrCacheEntry);
		swr_cache = hash_create("abtree swr Citus rates", 64, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	memset(&key, 0, sizeof(key));
	key.relid = r->relid;
	key.conds = r->conds ? hash_bytes((const unsigned char *) r->conds, strlen(r->conds)) : 0;
	e = hash_search(swr_cache, &key, create ? HASH_ENTER : HASH_FIND, &found);
	if (create && !found)
		e->weight = e->accepted_weight = 0;
	return e;
}

/* The probe: every shard's weight, summed; false when nothing can be drawn. */
static bool
swr_citus_weigh(SwrRounds *r)
{
	const char *s = quote_identifier(r->schema);
	char	   *sql = psprintf("SELECT %s.swr_shard_weight(%s.tableoid) "
							   "FROM %s TABLESAMPLE %s.swr_shard(0)",
							   s, r->alias, r->from, s);
	uint64		i;

	if (SPI_execute(sql, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "weighing the shards failed: %s", sql);
	r->weight = 0;
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		double		w = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[i],
													 SPI_tuptable->tupdesc, 1, &isnull));

		r->weight += isnull ? 0 : Max(w, 0);
	}
	SPI_freetuptable(SPI_tuptable);
	r->accepted_weight = r->weight;
	return r->weight > 0;
}

/*
 * A row of the round's result (the table's columns, without the dropped
 * ones) as a tuple of the table's row type, in r->cxt.  The columns are
 * selected one by one rather than as one record: Citus would send a record
 * as text to be parsed again, and in some paths (EXPLAIN ANALYZE of the
 * round under auto_explain) in a format record_in does not read.
 */
static HeapTuple
swr_citus_row(SwrRounds *r, HeapTuple got, TupleDesc gotdesc)
{
	int			natts = r->rowdesc->natts;
	Datum	   *values = palloc(sizeof(Datum) * natts);
	bool	   *nulls = palloc(sizeof(bool) * natts);
	MemoryContext old;
	HeapTuple	row;
	int			i;
	int			j = 0;

	for (i = 0; i < natts; i++)
	{
		if (TupleDescAttr(r->rowdesc, i)->attisdropped)
		{
			values[i] = (Datum) 0;
			nulls[i] = true;
			continue;
		}
		values[i] = heap_getattr(got, ++j, gotdesc, &nulls[i]);
	}
	old = MemoryContextSwitchTo(r->cxt);
	row = heap_form_tuple(r->rowdesc, values, nulls);
	MemoryContextSwitchTo(old);
	pfree(values);
	pfree(nulls);
	return row;
}

/* One round at the given rate: the rows the shards accepted, copied. */
static HeapTuple *
swr_citus_round(SwrRounds *r, double rate, int64 *nrows)
{
	StringInfoData sql;
	HeapTuple  *rows;
	uint64		i;

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT %s.* FROM %s TABLESAMPLE %s.swr_shard(%.17g) REPEATABLE (%u)",
					 r->alias, r->from, quote_identifier(r->schema), rate,
					 pg_prng_uint32(&r->prng));
	if (r->conds)
		appendStringInfo(&sql, " WHERE %s", r->conds);
	if (SPI_execute_with_args(sql.data, r->nargs, r->argtypes, r->argvalues, r->argnulls,
							  false, 0) != SPI_OK_SELECT)
		elog(ERROR, "distributed swr round failed: %s", sql.data);

	rows = MemoryContextAlloc(r->cxt, sizeof(HeapTuple) * Max(SPI_processed, 1));
	for (i = 0; i < SPI_processed; i++)
		rows[i] = swr_citus_row(r, SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
	*nrows = (int64) SPI_processed;
	SPI_freetuptable(SPI_tuptable);
	return rows;
}

/* An order of rows that depends on their contents only (for REPEATABLE). */
static int
swr_citus_row_cmp(const void *a, const void *b)
{
	HeapTuple	x = *(const HeapTuple *) a;
	HeapTuple	y = *(const HeapTuple *) b;

	if (x->t_len != y->t_len)
		return x->t_len < y->t_len ? -1 : 1;
	return memcmp(x->t_data, y->t_data, x->t_len);
}

/*
 * Shuffle rows; with keep < n, only the first keep places are filled (a
 * uniformly random subset of keep rows, in random order).  The rows arrive
 * from the shards in any order: sorted first, the result depends only on
 * the seed and the rows.
 */
static void
swr_citus_shuffle(SwrRounds *r, HeapTuple *rows, int64 n, int64 keep)
{
	int64		i;

	qsort(rows, n, sizeof(HeapTuple), swr_citus_row_cmp);
	for (i = 0; i < keep && i < n - 1; i++)
	{
		int64		j = i + (int64) pg_prng_uint64_range(&r->prng, 0, n - 1 - i);
		HeapTuple	tmp = rows[i];

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
	double		rejected = r->attempts - r->accepted;

	if (rejected <= (double) SWR_CITUS_MAX_REJECTS * (r->accepted + 1))
		return false;
	if (r->accepted == 0 && !swr_citus_any_row(r))
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("TABLESAMPLE swr rejected too many draws from the shards of \"%s\"",
					get_rel_name(r->relid)),
			 errdetail("About %.0f draws found %lld rows that are visible and satisfy the WHERE clause.",
					   r->attempts, (long long) r->accepted),
			 errhint("Fewer than 1 in %d draws finds a row. VACUUM the table, restrict it less, or SET abtree.swr_where = standard to filter n draws instead of redrawing.",
					 SWR_CITUS_MAX_REJECTS)));
	return true;				/* keep compiler quiet */
}

/*
 * Rounds until n rows are kept.  mu, the rows a round asks for, is owed
 * plus three standard deviations of a Poisson count and 5, so that a second
 * round is rare (about 1 in 700 when A is right).
 */
static void
swr_citus_rounds(SwrRounds *r, int64 n)
{
	r->rows = MemoryContextAlloc(r->cxt, sizeof(HeapTuple) * Max(n, 1));
	while (r->nrows < n)
	{
		int64		owed = n - r->nrows;
		double		mu = owed + 3 * sqrt((double) owed) + 5;
		double		rate = mu / Max(r->accepted_weight, 1e-300);
		double		cap = Min((double) owed * SWR_CITUS_MAX_REJECTS, SWR_CITUS_MAX_ROUND);
		HeapTuple  *got;
		int64		ngot;

		CHECK_FOR_INTERRUPTS();
		if (rate * r->weight > cap)
			rate = cap / r->weight;
		got = swr_citus_round(r, rate, &ngot);
		r->attempts += rate * r->weight;
		r->accepted += ngot;
		/* rows per unit of rate; half a row when none came, to try harder */
		r->accepted_weight = Min((ngot > 0 ? ngot : 0.5) / rate, r->weight);
		if (ngot >= owed)
			swr_citus_shuffle(r, got, ngot, owed);
		memcpy(r->rows + r->nrows, got, sizeof(HeapTuple) * Min(ngot, owed));
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
	r.rowdesc = rsinfo->setDesc;
	/* the name the conditions were deparsed with (swr_take_conditions) */
	r.alias = quote_identifier(get_rel_name(r.relid));
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
	if (n > 0)
	{
		SwrCacheEntry *e = PG_ARGISNULL(3) ? swr_cache_entry(&r, false) : NULL;

		if (e && e->weight > 0)
		{
			r.weight = e->weight;
			r.accepted_weight = e->accepted_weight;
		}
		if ((e && e->weight > 0) || swr_citus_weigh(&r))
		{
			swr_citus_rounds(&r, n);
			e = swr_cache_entry(&r, true);
			e->weight = r.weight;
			e->accepted_weight = r.accepted_weight;
		}
	}
	SPI_finish();

	/* step 3: random order, the same for the same seed and rows */
	swr_citus_shuffle(&r, r.rows, r.nrows, r.nrows);
	for (i = 0; i < r.nrows; i++)
		tuplestore_puttuple(rsinfo->setResult, r.rows[i]);
	return (Datum) 0;
}
