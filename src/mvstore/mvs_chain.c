/*-------------------------------------------------------------------------
 *
 * mvs_chain.c
 *	  Version chains: recording an insert's deltas, rebuilding a chain
 *	  after a split or a repair, forgetting what VACUUM removed, and
 *	  reading a weight as a snapshot sees it.
 *
 * The rule every writer keeps (src/mvstore/README, "The invariant"): a
 * delta is in a chain only while the weight it describes is in the
 * downlink, and a pass records at a level only if it recorded at every
 * level above.  Then, for any snapshot, a downlink's weight minus its
 * invisible deltas is at least the same sum over its child's items, so a
 * descent by those weights never overlooks a visible entry.
 *
 *-------------------------------------------------------------------------
 */
#include "mvs_internal.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

static void
mvs_tag_base(MvsTag *tag, Relation rel)
{
#if PG_VERSION_NUM >= 160000
	tag->spc = rel->rd_locator.spcOid;
	tag->db = rel->rd_locator.dbOid;
	tag->relfile = rel->rd_locator.relNumber;
#else
	tag->spc = rel->rd_node.spcNode;
	tag->db = rel->rd_node.dbNode;
	tag->relfile = rel->rd_node.relNode;
#endif
	tag->blk = InvalidBlockNumber;
}

/* xids before the GC horizon are visible to every snapshot there is */
static TransactionId
mvs_horizon(void)
{
	TransactionId h = pg_atomic_read_u32(&mvs->horizon);

	return TransactionIdIsNormal(h) ? h : FirstNormalTransactionId;
}

/* ---- chains ---- */

/* The node of xid in e's chain, inserted in xid order if missing. */
static MvsNode *
mvs_chain_node(MvsEntry *e, TransactionId xid)
{
	uint32		i = e->newest;
	uint32		newer = MVS_NIL;
	uint32		k;
	MvsNode    *n;

	/*
	 * A writer's xid is usually newer than every version of the entry: the
	 * entry's copy of the newest xid says so without reading the newest
	 * node, which was a cache miss in 4% of a one-client pgbench of inserts
	 * (bench/results/pgbench_one_client_profile.md).
	 */
	Assert(i == MVS_NIL || e->newest_xid == mvs_nodes[i].xid);
	if (i != MVS_NIL && !TransactionIdPrecedes(e->newest_xid, xid))
	{
		while (i != MVS_NIL && TransactionIdFollows(mvs_nodes[i].xid, xid))
		{
			newer = i;
			i = mvs_nodes[i].older;
		}
		if (i != MVS_NIL && mvs_nodes[i].xid == xid)
			return &mvs_nodes[i];
	}

	k = mvs_alloc_node();
	if (k == MVS_NIL)
		return NULL;
	n = &mvs_nodes[k];
	n->xid = xid;
	n->delta = 0;
	n->newer = newer;
	n->older = i;
	if (newer == MVS_NIL)
	{
		e->newest = k;
		e->newest_xid = xid;
	}
	else
		mvs_nodes[newer].older = k;
	if (i == MVS_NIL)
		e->oldest = k;
	else
		mvs_nodes[i].newer = k;
	e->nversions++;
	return n;
}

/* Take node k out of e's chain; the caller frees it. */
static void
mvs_chain_unlink(MvsEntry *e, uint32 k)
{
	MvsNode    *n = &mvs_nodes[k];

	if (n->newer == MVS_NIL)
	{
		e->newest = n->older;
		if (n->older != MVS_NIL)
			e->newest_xid = mvs_nodes[n->older].xid;
	}
	else
		mvs_nodes[n->newer].older = n->older;
	if (n->older == MVS_NIL)
		e->oldest = n->newer;
	else
		mvs_nodes[n->older].newer = n->newer;
	e->total -= n->delta;
	e->nversions--;
}

/* Empty e's chain (nodes freed). */
static void
mvs_chain_clear(MvsEntry *e)
{
	uint32		batch[256];
	int			n = 0;

	while (e->newest != MVS_NIL)
	{
		uint32		k = e->newest;

		mvs_chain_unlink(e, k);
		batch[n++] = k;
		if (n == lengthof(batch))
		{
			mvs_free_nodes(batch, n);
			n = 0;
		}
	}
	mvs_free_nodes(batch, n);
	e->total = 0;
}

/* Lower xid's delta in e by up to d (never below zero). */
static void
mvs_chain_lower(MvsEntry *e, TransactionId xid, int64 d)
{
	uint32		i;

	for (i = e->newest; i != MVS_NIL; i = mvs_nodes[i].older)
	{
		MvsNode    *n = &mvs_nodes[i];

		if (n->xid != xid)
			continue;
		d = Min(d, n->delta);
		n->delta -= d;
		e->total -= d;
		if (n->delta == 0)
		{
			mvs_chain_unlink(e, i);
			mvs_free_nodes(&i, 1);
		}
		return;
	}
}

/* ---- writers ---- */

/*
 * Does another backend of this database hold a snapshot now?  Every such
 * snapshot misses a transaction that is running, and a reader's snapshot
 * among them would count its adds without versions.  ProcArrayLock in
 * share mode: a snapshot being taken meanwhile counts as a later one.
 */
static bool
mvs_other_snapshots(void)
{
	bool		found = false;

	LWLockAcquire(ProcArrayLock, LW_SHARED);
	for (uint32 i = 0; i < ProcGlobal->allProcCount && !found; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];

		found = proc != MyProc && proc->databaseId == MyDatabaseId &&
			TransactionIdIsValid(proc->xmin);
	}
	LWLockRelease(ProcArrayLock);
	return found;
}

/*
 * Should a writer of xid record versions?  They only spare readers whose
 * snapshots miss xid the draws that land on its entries (README, "Versions
 * only where a snapshot can miss them"): without them such a reader
 * overcounts xid's weight, and rejects, never undercounts.  So a
 * transaction's first MVS_QUIET_WRITERS writers record nothing if, at its
 * first, no other backend of the database held a snapshot; a snapshot
 * taken after that misses at most their adds.  From then on every writer
 * records, as before, for readers that start during a long load.
 */
#define MVS_QUIET_WRITERS	64

static bool
mvs_versions_wanted(TransactionId xid)
{
	static TransactionId last_xid = InvalidTransactionId;
	static int	writers;
	static bool others;

	if (xid != last_xid)
	{
		last_xid = xid;
		writers = 0;
		others = mvs_other_snapshots();
	}
	return others || ++writers > MVS_QUIET_WRITERS;
}

void
mvs_writer_begin(MvsWriter *wr, Relation rel)
{
	wr->xid = GetTopTransactionIdIfAny();
	wr->active = mvs != NULL && mvs_enabled && TransactionIdIsNormal(wr->xid) &&
		!RecoveryInProgress() && mvs_versions_wanted(wr->xid);
	wr->ndone = 0;
	mvs_tag_base(&wr->base, rel);
}

/*
 * Ask the CPU for the lines the writer's adds to children's chains will
 * read: their bucket heads (entries false), or through the heads their
 * entries (entries true).  A flush adds to a few dozen downlinks, each a
 * bucket and an entry somewhere in shared memory, and those misses one
 * after another were most of mvs_find's time, 3-4% of two clients
 * inserting (bench/results/mvstore_prefetch_ab.md).  Called once each way,
 * some work apart, before the adds.  Reads without the partition locks:
 * a stale head only fetches a line nobody needs.
 */
void
mvs_writer_prefetch(MvsWriter *wr, const BlockNumber *children, int n, bool entries)
{
	MvsTag		tag = wr->base;

	if (!wr->active)
		return;
	for (int i = 0; i < n; i++)
	{
		uint32	   *head;

		tag.blk = children[i];
		head = &mvs_buckets[mvs_hash(&tag) & (mvs->nbuckets - 1)];
		if (!entries)
			mvs_prefetch(head);
		else
		{
			uint32		e = *(volatile uint32 *) head;

			if (e != MVS_NIL)
				mvs_prefetch(&mvs_entries[e]);
		}
	}
}

/* Take back what the pass recorded (always safe: less is subtracted). */
static void
mvs_writer_undo(MvsWriter *wr)
{
	/* readers' caches must not trust a chain that got lighter (README) */
	if (wr->ndone > 0)
		pg_atomic_fetch_add_u64(&mvs->lowered, 1);
	for (int k = 0; k < wr->ndone; k++)
	{
		MvsTag		tag = wr->base;
		uint32		hash;
		MvsEntry   *e;

		tag.blk = wr->done[k];
		hash = mvs_hash(&tag);
		LWLockAcquire(mvs_lock_for(hash), LW_EXCLUSIVE);
		e = mvs_find(&tag, hash);
		if (e)
		{
			mvs_chain_lower(e, wr->xid, (int64) wr->done_w[k]);
			if (e->newest == MVS_NIL)
				mvs_drop_entry(e, hash);
		}
		LWLockRelease(mvs_lock_for(hash));
	}
	wr->ndone = 0;
	wr->active = false;
}

static inline void
mvs_do_add(uint64 *weight, uint64 w, bool atomic)
{
#ifndef PG_HAVE_ATOMIC_U64_SIMULATION
	if (atomic)
	{
		pg_atomic_fetch_add_u64((pg_atomic_uint64 *) weight, w);
		return;
	}
#endif
	*weight += w;
}

/*
 * Add w to the downlink weight *weight (pointing to child) and record the
 * delta, under the chain's lock in exclusive mode, so that a reader sees
 * both or neither.  If the delta cannot be recorded, what the pass
 * recorded above is taken back first, and nothing more is recorded.
 */
void
mvs_add(MvsWriter *wr, BlockNumber child, uint64 *weight, uint64 w, bool atomic)
{
	MvsTag		tag = wr->base;
	uint32		hash;
	LWLock	   *lock;
	MvsEntry   *e;
	MvsNode    *n = NULL;

	if (!wr->active)
	{
		mvs_do_add(weight, w, atomic);
		return;
	}
	tag.blk = child;
	hash = mvs_hash(&tag);
	lock = mvs_lock_for(hash);

	LWLockAcquire(lock, LW_EXCLUSIVE);
	e = mvs_find(&tag, hash);
	if (e == NULL)
		e = mvs_create(&tag, hash);
	if (e && wr->ndone < MVS_WRITER_MAX)
		n = mvs_chain_node(e, wr->xid);
	if (n == NULL)
	{
		if (e && e->newest == MVS_NIL)
			mvs_drop_entry(e, hash);
		LWLockRelease(lock);
		mvs_note_full();
		mvs_writer_undo(wr);
		mvs_do_add(weight, w, atomic);
		return;
	}
	mvs_do_add(weight, w, atomic);
	n->delta += (int64) w;
	e->total += (int64) w;
	LWLockRelease(lock);
	wr->done[wr->ndone] = child;
	wr->done_w[wr->ndone++] = w;
	pg_atomic_fetch_add_u64(&mvs->recorded, 1);
}

static int
mvs_delta_cmp(const void *a, const void *b, void *arg)
{
	TransactionId h = *(TransactionId *) arg;
	uint32		da = ((const MvsDelta *) a)->xid - h;
	uint32		db = ((const MvsDelta *) b)->xid - h;

	/* newest first; all xids are within 2^31 after the horizon */
	return da > db ? -1 : da < db ? 1 : 0;
}

/* Sort by xid, newest first, merge equal xids, drop zeros; new length. */
static int
mvs_deltas_normalize(MvsDelta *d, int n)
{
	TransactionId h = mvs_horizon();
	int			m = 0;

	qsort_arg(d, n, sizeof(MvsDelta), mvs_delta_cmp, &h);
	for (int i = 0; i < n; i++)
	{
		if (m > 0 && d[m - 1].xid == d[i].xid)
			d[m - 1].delta += d[i].delta;
		else
			d[m++] = d[i];
		if (d[m - 1].delta == 0)
			m--;
	}
	return m;
}

/*
 * Of the (xid, weight) pairs of some index entries, keep those whose xid a
 * snapshot may still not see (at or after the horizon), summed per xid,
 * newest first; returns how many.  The index extracts the pairs: the
 * store knows no page layout.
 */
int
mvs_deltas_recent(MvsDelta *d, int n)
{
	TransactionId h = mvs_horizon();
	int			m = 0;

	for (int i = 0; i < n; i++)
		if (TransactionIdIsNormal(d[i].xid) && !TransactionIdPrecedes(d[i].xid, h))
			d[m++] = d[i];
	return mvs_deltas_normalize(d, m);
}

/*
 * Grow *d to hold more deltas, without raising an ERROR: a rebuild must
 * not fail half way (README, rule 3).  False if memory ran out.
 */
static bool
mvs_grow_deltas(MvsDelta **d, int *cap)
{
	MvsDelta   *bigger = palloc_extended(sizeof(MvsDelta) * *cap * 2, MCXT_ALLOC_NO_OOM);

	if (bigger == NULL)
		return false;
	memcpy(bigger, *d, sizeof(MvsDelta) * *cap);
	pfree(*d);
	*d = bigger;
	*cap *= 2;
	return true;
}

/*
 * Append the current deltas of child's chain to *d.  False if memory ran
 * out (the caller then installs an empty chain, which is always safe).
 */
static bool
mvs_copy_chain(const MvsTag *tag, MvsDelta **d, int *n, int *cap)
{
	uint32		hash = mvs_hash(tag);
	TransactionId h = mvs_horizon();
	bool		ok = true;
	MvsEntry   *e;

	if (pg_atomic_read_u32(mvs_blockfilter_for(hash)) == 0)
		return true;
	LWLockAcquire(mvs_lock_for(hash), LW_SHARED);
	e = mvs_find(tag, hash);
	for (uint32 i = e ? e->newest : MVS_NIL; i != MVS_NIL && ok; i = mvs_nodes[i].older)
	{
		if (TransactionIdPrecedes(mvs_nodes[i].xid, h))
			break;
		if (*n == *cap && !mvs_grow_deltas(d, cap))
			ok = false;
		else
		{
			(*d)[*n].xid = mvs_nodes[i].xid;
			(*d)[*n].delta = mvs_nodes[i].delta;
			(*n)++;
		}
	}
	LWLockRelease(mvs_lock_for(hash));
	return ok;
}

/* Replace the chain of tag by the deltas d (normalized). */
static void
mvs_install(const MvsTag *tag, MvsDelta *d, int n)
{
	uint32		hash = mvs_hash(tag);
	LWLock	   *lock = mvs_lock_for(hash);
	MvsEntry   *e;
	bool		failed = false;

	LWLockAcquire(lock, LW_EXCLUSIVE);
	e = mvs_find(tag, hash);
	if (e)
		mvs_chain_clear(e);
	else if (n > 0 && (e = mvs_create(tag, hash)) == NULL)
		failed = true;
	/* oldest first, so that each node goes to the newest end */
	for (int k = n - 1; e && k >= 0 && !failed; k--)
	{
		MvsNode    *node = mvs_chain_node(e, d[k].xid);

		if (node == NULL)
			failed = true;
		else
		{
			node->delta = d[k].delta;
			e->total += d[k].delta;
		}
	}
	if (failed && e)
		mvs_chain_clear(e);		/* an empty chain is always safe */
	if (e && e->newest == MVS_NIL)
		mvs_drop_entry(e, hash);
	LWLockRelease(lock);
	if (failed)
		mvs_note_full();
}

/*
 * The downlink to child was set to the weight of the child page (a split or
 * a repair): make its chain the sum of what is below it.  For a leaf child
 * the index passes the (xid, weight) pairs of its entries in entries (an
 * array the store may reorder); for an internal child the blocks of its
 * downlinks in below, whose chains are summed.  The caller holds the page
 * with the downlink and the child exclusively, so that no reader sees the
 * two disagree.
 */
void
mvs_rebuild(Relation rel, BlockNumber child, MvsDelta *entries, int nentries,
			const BlockNumber *below, int nbelow)
{
	MvsTag		tag;
	MvsDelta   *d = NULL;
	int			n = 0;
	int			cap = MaxIndexTuplesPerPage;
	bool		ok = true;

	if (mvs == NULL || RecoveryInProgress())
		return;
	mvs_tag_base(&tag, rel);

	/*
	 * Nothing below may raise an ERROR: the downlink was recomputed already,
	 * and its old chain must not outlive that.  Out of memory, the chain is
	 * emptied instead.
	 */
	if (below == NULL)
		n = mvs_deltas_recent(entries, nentries);
	else if (pg_atomic_read_u32(&mvs->relfilter[mvs_relslot(&tag)]) != 0)
	{
		MvsTag		under = tag;

		d = palloc_extended(sizeof(MvsDelta) * cap, MCXT_ALLOC_NO_OOM);
		ok = d != NULL;
		for (int i = 0; ok && i < nbelow; i++)
		{
			under.blk = below[i];
			ok = mvs_copy_chain(&under, &d, &n, &cap);
		}
		n = ok ? mvs_deltas_normalize(d, n) : 0;
	}
	if (!ok)
		n = 0;
	tag.blk = child;
	if (n > 0 || pg_atomic_read_u32(mvs_blockfilter_for(mvs_hash(&tag))) != 0)
		mvs_install(&tag, below == NULL ? entries : d, n);
	if (d)
		pfree(d);
	pg_atomic_fetch_add_u64(&mvs->rebuilt, 1);
}

/*
 * VACUUM removed entries with these deltas below the downlink to child
 * and subtracted their weight from it: lower the chain to match.
 */
void
mvs_forget(Relation rel, BlockNumber child, MvsDelta *deltas, int n)
{
	MvsTag		tag;
	uint32		hash;
	MvsEntry   *e;

	if (mvs == NULL || n == 0)
		return;
	mvs_tag_base(&tag, rel);
	tag.blk = child;
	hash = mvs_hash(&tag);
	if (pg_atomic_read_u32(mvs_blockfilter_for(hash)) == 0)
		return;
	pg_atomic_fetch_add_u64(&mvs->lowered, 1);
	LWLockAcquire(mvs_lock_for(hash), LW_EXCLUSIVE);
	e = mvs_find(&tag, hash);
	for (int k = 0; e && k < n; k++)
		mvs_chain_lower(e, deltas[k].xid, deltas[k].delta);
	if (e && e->newest == MVS_NIL)
		mvs_drop_entry(e, hash);
	LWLockRelease(mvs_lock_for(hash));
}

/* ---- readers ---- */

void
mvs_reader_init(MvsReader *rd, Relation rel, Snapshot snap)
{
	rd->active = mvs_enabled && snap != NULL && snap->snapshot_type == SNAPSHOT_MVCC;
	rd->snap = snap;
	mvs_tag_base(&rd->base, rel);
	rd->relslot = mvs != NULL ? mvs_relslot(&rd->base) : 0;
	rd->lookups = 0;
	rd->cxt = CurrentMemoryContext;
	rd->cache = NULL;
}

/*
 * Can the store change the weight of any downlink of the reader's index?
 * Not when the reader is inactive or the index has no versions at all.
 * Call it after reading the weights it is to vouch for: the barrier orders
 * those reads before the filter's, as in mvs_weight (a writer sets the
 * filter before it adds), so a false answer means each weight read is the
 * one mvs_weight would have returned.  Lets a reader decide once per page
 * instead of once per item (issue 21).
 */
bool
mvs_reader_versioned(MvsReader *rd)
{
	if (rd == NULL || !rd->active || mvs == NULL)
		return false;
	pg_read_barrier();
	return pg_atomic_read_u32(&mvs->relfilter[rd->relslot]) != 0;
}

/*
 * Can no entry of this leaf be invisible to the reader?  Leaves keep in
 * pd_prune_xid the newest xid that marked one of their entries valid
 * (abt_leaf_note_xid); a snapshot whose xmin follows it sees them all.
 */
bool
mvs_leaf_all_visible(MvsReader *rd, Page leaf)
{
	TransactionId newest = ((PageHeader) leaf)->pd_prune_xid;

	return !rd->active || !TransactionIdIsNormal(newest) ||
		TransactionIdPrecedes(newest, rd->snap->xmin);
}

/* Is xid one of the transactions the snapshot lists as running? */
static bool
mvs_xid_listed(Snapshot s, TransactionId xid)
{
	if (s->takenDuringRecovery)
	{
		/* a standby's snapshot lists all xids in subxip, unless it overflowed */
		if (s->suboverflowed)
			return false;		/* cannot tell: count it as visible */
		for (int i = 0; i < s->subxcnt; i++)
			if (s->subxip[i] == xid)
				return true;
		return false;
	}
	for (uint32 i = 0; i < s->xcnt; i++)
		if (s->xip[i] == xid)
			return true;
	return false;
}

/*
 * Can the reader's snapshot not see what top-level transaction xid
 * inserted?  Only "certainly not" counts: a recorded delta is subtracted,
 * and a leaf entry skipped, exactly when this says so.
 */
bool
mvs_xid_invisible(MvsReader *rd, TransactionId xid)
{
	Snapshot	s = rd->snap;

	if (!rd->active || !TransactionIdIsNormal(xid) ||
		TransactionIdPrecedes(xid, s->xmin))
		return false;
	if (TransactionIdEquals(xid, GetTopTransactionIdIfAny()))
		return false;
	if (!TransactionIdPrecedes(xid, s->xmax))
		return true;
	return mvs_xid_listed(s, xid);
}

/*
 * mvs_xid_invisible for n xids at once, the entries of a leaf: the
 * snapshot's bounds and our own xid are read once and the common cases
 * compare inline, so that a draw under an old snapshot makes one call per
 * leaf instead of one per entry (issue 21).
 */
void
mvs_xids_invisible(MvsReader *rd, const TransactionId *xids, int n, bool *out)
{
	Snapshot	s = rd->snap;
	TransactionId xmin;
	TransactionId xmax;
	TransactionId mine;

	if (!rd->active)
	{
		memset(out, 0, sizeof(bool) * n);
		return;
	}
	xmin = s->xmin;
	xmax = s->xmax;
	mine = GetTopTransactionIdIfAny();
	for (int i = 0; i < n; i++)
	{
		TransactionId xid = xids[i];

		/* normal xids compare modulo 2^32, as TransactionIdPrecedes does */
		if (!TransactionIdIsNormal(xid) || (int32) (xid - xmin) < 0 || xid == mine)
			out[i] = false;
		else if ((int32) (xid - xmax) >= 0)
			out[i] = true;
		else
			out[i] = mvs_xid_listed(s, xid);
	}
}

/*
 * The sum of e's invisible deltas.  Two walks in step, and the first to
 * finish answers: from the newest end down to the snapshot's xmin, or from
 * the oldest end up to its xmax (everything after that is invisible).  A
 * sampler on an old snapshot is quick from the oldest end, a fresh one
 * from the newest.
 */
static int64
mvs_chain_invisible(MvsReader *rd, MvsEntry *e)
{
	Snapshot	s = rd->snap;
	TransactionId own = GetTopTransactionIdIfAny();
	bool		forward = !TransactionIdIsValid(own) || TransactionIdPrecedes(own, s->xmax);
	uint32		f = e->oldest;
	uint32		b = e->newest;
	int64		vis = 0;
	int64		inv = 0;

	for (;;)
	{
		MvsNode    *n;

		if (forward)
		{
			if (f == MVS_NIL || !TransactionIdPrecedes(mvs_nodes[f].xid, s->xmax))
				return e->total - vis;
			n = &mvs_nodes[f];
			if (!mvs_xid_invisible(rd, n->xid))
				vis += n->delta;
			f = n->newer;
		}
		if (b == MVS_NIL || TransactionIdPrecedes(mvs_nodes[b].xid, s->xmin))
			return inv;
		n = &mvs_nodes[b];
		if (mvs_xid_invisible(rd, n->xid))
			inv += n->delta;
		b = n->older;
	}
}

/*
 * The weight of the downlink to child, *weight (with RID rid) on a page
 * the caller holds share-locked, as the reader's snapshot sees it.
 * Lock-free when the presence filters say no chain can exist; the weight
 * is read before the filters, which writers raise before they add
 * (README).  A downlink weighed before, whose stored weight and RID have
 * not changed since while no chain was lowered, weighs what it weighed.
 */
uint64
mvs_weight(MvsReader *rd, BlockNumber child, uint64 *weight, uint16 rid)
{
	uint64		w = *(volatile uint64 *) weight;
	MvsTag		tag;
	uint32		hash;
	MvsEntry   *e;
	int64		inv = 0;
	uint64		epoch;
	uint64		seen;
	MvsCacheSlot *slot = NULL;

	if (!rd->active || mvs == NULL)
		return w;
	pg_read_barrier();
	if (pg_atomic_read_u32(&mvs->relfilter[rd->relslot]) == 0)
		return w;
	epoch = pg_atomic_read_u64(&mvs->lowered);
	if (rd->cache)
	{
		slot = &rd->cache[child & (MVS_READER_CACHE - 1)];
		if (slot->blk == child && slot->rid == rid && slot->w == w && slot->epoch == epoch)
			return slot->seen;
	}
	tag = rd->base;
	tag.blk = child;
	hash = mvs_hash(&tag);
	if (pg_atomic_read_u32(mvs_blockfilter_for(hash)) == 0)
		return w;

	LWLockAcquire(mvs_lock_for(hash), LW_SHARED);
	e = mvs_find(&tag, hash);
	if (e)
		inv = mvs_chain_invisible(rd, e);
	w = *(volatile uint64 *) weight;
	LWLockRelease(mvs_lock_for(hash));
	rd->lookups++;
	seen = inv <= 0 ? w : (uint64) inv >= w ? 0 : w - (uint64) inv;

	if (rd->cache == NULL)
	{
		rd->cache = MemoryContextAlloc(rd->cxt, sizeof(MvsCacheSlot) * MVS_READER_CACHE);
		for (int i = 0; i < MVS_READER_CACHE; i++)
			rd->cache[i].blk = InvalidBlockNumber;
		slot = &rd->cache[child & (MVS_READER_CACHE - 1)];
	}
	slot->blk = child;
	slot->rid = rid;
	slot->epoch = epoch;
	slot->w = w;
	slot->seen = seen;
	return seen;
}

