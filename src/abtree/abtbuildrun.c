/*-------------------------------------------------------------------------
 *
 * abtbuildrun.c
 *	  Sorted runs on temporary files, and their merge, for the build sort
 *	  (abtbuildsort.c) once its rows outgrow maintenance_work_mem.
 *
 * Each run is a temporary file of its own (BufFile: its own buffer, read
 * sequentially, deleted at the end of the transaction or on error).  The
 * records are whatever the sort writes; the merge knows nothing of them:
 * it keeps a tree of losers over the sources (runs, or the sort's last run
 * still in memory) by the caller's comparison of their current records.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "storage/buffile.h"

struct AbtRuns
{
	int			nruns;
	int			maxruns;
	BufFile   **files;
	bool		open;			/* the last run is being written */
};

AbtRuns *
abt_runs_begin(void)
{
	AbtRuns    *r = palloc0(sizeof(AbtRuns));

	r->maxruns = 8;
	r->files = palloc(sizeof(BufFile *) * r->maxruns);
	return r;
}

/* Append len bytes to the run being written (a new one if none is). */
void
abt_runs_put(AbtRuns *r, const void *data, Size len)
{
	if (!r->open)
	{
		if (r->nruns == r->maxruns)
		{
			r->maxruns *= 2;
			r->files = repalloc(r->files, sizeof(BufFile *) * r->maxruns);
		}
		r->files[r->nruns++] = BufFileCreateTemp(false);
		r->open = true;
	}
	BufFileWrite(r->files[r->nruns - 1], unconstify(void *, data), len);
}

/* The run being written is complete. */
void
abt_runs_close_run(AbtRuns *r)
{
	r->open = false;
}

int
abt_runs_count(AbtRuns *r)
{
	return r->nruns;
}

/* Every run back to its start, for reading. */
void
abt_runs_rewind(AbtRuns *r)
{
	r->open = false;
	for (int i = 0; i < r->nruns; i++)
		if (BufFileSeek(r->files[i], 0, 0, SEEK_SET) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not rewind a temporary file of the abtree build: %m")));
}

/*
 * The next len bytes of run i into data; false at the run's end.  A run
 * that ends inside a record is an ERROR.
 */
bool
abt_runs_get(AbtRuns *r, int i, void *data, Size len)
{
	size_t		got = BufFileRead(r->files[i], data, len);

	if (got == 0)
		return false;
	if (got != len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of the abtree build: read only %zu of %zu bytes",
						got, (Size) len)));
	return true;
}

void
abt_runs_end(AbtRuns *r)
{
	for (int i = 0; i < r->nruns; i++)
		BufFileClose(r->files[i]);
	pfree(r->files);
	pfree(r);
}

/*
 * ---- the merge: a tree of losers over the sources ----
 *
 * The sources are the leaves of a complete binary tree (P leaves, P the
 * power of two at or above their number; those missing or exhausted
 * compare above everything).  Each inner node keeps the loser of the match
 * of its two subtrees' winners, node 0 the overall winner: when the winner
 * moves on to its next record, only its way up is replayed, one comparison
 * a level (a heap's sift-down takes two a level).
 */

/* Does source a's current record come before b's? */
static inline bool
abt_merge_less(AbtMerge *m, int a, int b)
{
	if (m->done[a])
		return false;
	if (m->done[b])
		return true;
	return m->cmp(a, b, m->arg) < 0;
}

/* A merge of up to nsources sources, compared by cmp(source, source, arg). */
void
abt_merge_begin(AbtMerge *m, int nsources, AbtMergeCmp cmp, void *arg)
{
	m->nleaves = 1;
	while (m->nleaves < nsources)
		m->nleaves *= 2;
	m->tree = palloc(sizeof(int) * m->nleaves);
	m->done = palloc(sizeof(bool) * m->nleaves);
	for (int i = 0; i < m->nleaves; i++)
		m->done[i] = true;
	m->built = false;
	m->cmp = cmp;
	m->arg = arg;
}

/* Source src has its first record: it takes part. */
void
abt_merge_add(AbtMerge *m, int src)
{
	Assert(!m->built);
	m->done[src] = false;
}

/* The winner of the subtree under node (leaves: nleaves + source). */
static int
abt_merge_build(AbtMerge *m, int node)
{
	int			a,
				b;

	if (node >= m->nleaves)
		return node - m->nleaves;
	a = abt_merge_build(m, 2 * node);
	b = abt_merge_build(m, 2 * node + 1);
	if (abt_merge_less(m, b, a))
	{
		m->tree[node] = a;
		return b;
	}
	m->tree[node] = b;
	return a;
}

/* The source with the least current record, or -1 when all are done. */
int
abt_merge_top(AbtMerge *m)
{
	if (!m->built)
	{
		m->tree[0] = m->nleaves > 1 ? abt_merge_build(m, 1) : 0;
		m->built = true;
	}
	return m->done[m->tree[0]] ? -1 : m->tree[0];
}

/*
 * The top source has moved on to its next record (more), or has none left:
 * replay its way up.
 */
void
abt_merge_next(AbtMerge *m, bool more)
{
	int			w = m->tree[0];

	if (!more)
		m->done[w] = true;
	for (int node = (m->nleaves + w) / 2; node >= 1; node /= 2)
	{
		if (abt_merge_less(m, m->tree[node], w))
		{
			int			loser = w;

			w = m->tree[node];
			m->tree[node] = loser;
		}
	}
	m->tree[0] = w;
}

void
abt_merge_end(AbtMerge *m)
{
	pfree(m->tree);
	pfree(m->done);
}
