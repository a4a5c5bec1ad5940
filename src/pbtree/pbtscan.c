/*-------------------------------------------------------------------------
 *
 * pbtscan.c
 *	  Scans of a pbtree: one abtree scan per partition, merged.
 *
 * At rescan the scan reads the directory once and opens an abtree scan on
 * every partition it may need: the mutable one, closed ones and sealed ones
 * whose Bloom filters do not rule the keys out ("=" on every key column
 * tests the key filter, "=" on the leading column the leading-column
 * filter).  Partitions that are dropped later stay readable until the scan's
 * snapshot is gone (README, "Freeing"), so the list stays valid.
 *
 * amgettuple merges the partitions' ordered streams: each partition scan
 * returns its entries in key order (with their tuples), and the scan
 * returns the smallest head (forward) or the largest (backward), so ORDER
 * BY, merge joins and index-only scans see one ordered index.  A scan
 * cannot change direction midway (amcanbackward is false: PostgreSQL puts a
 * Material node under scrollable cursors).  amgetbitmap just adds every
 * partition's entries.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "pgstat.h"
#include "utils/rel.h"

typedef struct PbtScanOpaqueData
{
	int			nsub;
	IndexScanDesc sub[PBT_MAX_PARTITIONS];
	bool		has_head[PBT_MAX_PARTITIONS];
	int			last;			/* sub whose head was returned last, or -1 */
	bool		started;
	uint64		skipped;		/* partitions the filters ruled out */
} PbtScanOpaqueData;

typedef PbtScanOpaqueData *PbtScanOpaque;

IndexScanDesc
pbtbeginscan(Relation rel, int nkeys, int norderbys)
{
	IndexScanDesc scan;

	abt_require_preload();
	scan = RelationGetIndexScan(rel, nkeys, norderbys);
	scan->opaque = palloc0(sizeof(PbtScanOpaqueData));
	return scan;
}

static void
pbt_close_subs(PbtScanOpaque so)
{
	for (int i = 0; i < so->nsub; i++)
	{
		abtendscan(so->sub[i]);
		if (so->sub[i]->keyData)
			pfree(so->sub[i]->keyData);
		pfree(so->sub[i]);
	}
	so->nsub = 0;
}

/*
 * The "=" argument on key column attno (1-based) usable with the filters:
 * the column's own type, not NULL, not an array.
 */
static bool
pbt_eq_arg(IndexScanDesc scan, int attno, Datum *arg)
{
	Relation	rel = scan->indexRelation;

	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];

		if (sk->sk_attno != attno || sk->sk_strategy != BTEqualStrategyNumber ||
			(sk->sk_flags & (SK_ISNULL | SK_ROW_HEADER | SK_SEARCHARRAY |
							 SK_SEARCHNULL | SK_SEARCHNOTNULL)))
			continue;
		if (OidIsValid(sk->sk_subtype) && sk->sk_subtype != rel->rd_opcintype[attno - 1])
			continue;
		*arg = sk->sk_argument;
		return true;
	}
	return false;
}

/*
 * Which filter the keys can test, and the hash to test: 0 the whole key, 1
 * the leading column; -1 none.
 */
static int
pbt_scan_probe(IndexScanDesc scan, int nfilters, uint64 *hash)
{
	Relation	rel = scan->indexRelation;
	int			nkeys = IndexRelationGetNumberOfKeyAttributes(rel);
	Datum		values[INDEX_MAX_KEYS];
	FmgrInfo	procs[INDEX_MAX_KEYS];
	Oid			colls[INDEX_MAX_KEYS];
	int			have = 0;

	if (nfilters == 0 || !pbt_filter_procs(rel, procs, colls))
		return -1;
	while (have < nkeys && pbt_eq_arg(scan, have + 1, &values[have]))
		have++;
	if (have == nkeys)
	{
		*hash = pbt_filter_hash(rel, nkeys, values, colls, procs);
		return 0;
	}
	if (have >= 1 && nfilters == 2)
	{
		*hash = pbt_filter_hash(rel, 1, values, colls, procs);
		return 1;
	}
	return -1;
}

void
pbtrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		  ScanKey orderbys, int norderbys)
{
	PbtScanOpaque so = (PbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));
	int			nfilters;
	int			probe;
	uint64		hash = 0;

	pbt_close_subs(so);
	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	so->started = false;
	so->last = -1;
	so->skipped = 0;

	(void) pbt_filter_columns(rel, &nfilters);
	probe = pbt_scan_probe(scan, nfilters, &hash);
	pbt_read_directory(rel, dir);
	/* newest first, as the paper scans them */
	for (int i = dir->n - 1; i >= 0; i--)
	{
		PbtPartition *p = &dir->parts[i];
		IndexScanDesc sub;

		if (p->state != PBT_MUTABLE && p->state != PBT_CLOSED && p->state != PBT_SEALED)
			continue;
		if (probe >= 0 && !pbt_filter_test(rel, p, probe, hash))
		{
			so->skipped++;
			continue;
		}
		sub = abtbeginscan(rel, scan->numberOfKeys, 0);
		abt_scan_set_tree(sub, p->head);
		so->sub[so->nsub++] = sub;
		abtrescan(sub, scan->keyData, scan->numberOfKeys, NULL, 0);
	}
	pfree(dir);
}

/* Is a's entry before b's in direction dir? */
static bool
pbt_before(Relation rel, IndexScanDesc a, IndexScanDesc b, ScanDirection dir)
{
	int			c = abt_compare_tuples(rel, a->xs_itup, false, b->xs_itup, false);

	return ScanDirectionIsForward(dir) ? c < 0 : c > 0;
}

bool
pbtgettuple(IndexScanDesc scan, ScanDirection dir)
{
	PbtScanOpaque so = (PbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	int			best = -1;

	if (!so->started)
	{
		so->started = true;
		pgstat_count_index_scan(rel);
		for (int i = 0; i < so->nsub; i++)
		{
			/* merging needs every partition's tuples */
			so->sub[i]->xs_want_itup = scan->xs_want_itup || so->nsub > 1;
			so->has_head[i] = abtgettuple(so->sub[i], dir);
		}
	}
	else if (so->last >= 0)
		so->has_head[so->last] = abtgettuple(so->sub[so->last], dir);

	for (int i = 0; i < so->nsub; i++)
		if (so->has_head[i] &&
			(best < 0 || (so->nsub > 1 && pbt_before(rel, so->sub[i], so->sub[best], dir))))
			best = i;
	so->last = best;
	if (best < 0)
		return false;
	scan->xs_heaptid = so->sub[best]->xs_heaptid;
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		scan->xs_itup = so->sub[best]->xs_itup;
		scan->xs_itupdesc = RelationGetDescr(rel);
	}
	return true;
}

int64
pbtgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	PbtScanOpaque so = (PbtScanOpaque) scan->opaque;
	int64		ntids = 0;

	pgstat_count_index_scan(scan->indexRelation);
	for (int i = 0; i < so->nsub; i++)
		ntids += abtgetbitmap(so->sub[i], tbm);
	return ntids;
}

void
pbtendscan(IndexScanDesc scan)
{
	PbtScanOpaque so = (PbtScanOpaque) scan->opaque;

	pbt_close_subs(so);
	pfree(so);
	scan->opaque = NULL;
}
