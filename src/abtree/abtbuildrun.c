/*-------------------------------------------------------------------------
 *
 * abtbuildrun.c
 *	  Sorted runs on temporary files, and their merge, for the build sort
 *	  (abtbuildsort.c) once its rows outgrow maintenance_work_mem.
 *
 * Each run is a temporary file of its own (BufFile: its own buffer, read
 * sequentially, deleted at the end of the transaction or on error).  The
 * records are whatever the sort writes; the merge knows nothing of them:
 * it keeps a binary heap of sources (runs, or the sort's last run still in
 * memory) ordered by the caller's comparison of their current records.
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

/* ---- the merge: a binary heap of sources, the least on top ---- */

static inline bool
abt_merge_less(AbtMerge *m, int a, int b)
{
	return m->cmp(m->heap[a], m->heap[b], m->arg) < 0;
}

static void
abt_merge_sift_down(AbtMerge *m, int i)
{
	for (;;)
	{
		int			least = i;
		int			l = 2 * i + 1;
		int			tmp;

		if (l < m->n && abt_merge_less(m, l, least))
			least = l;
		if (l + 1 < m->n && abt_merge_less(m, l + 1, least))
			least = l + 1;
		if (least == i)
			return;
		tmp = m->heap[i];
		m->heap[i] = m->heap[least];
		m->heap[least] = tmp;
		i = least;
	}
}

/* A merge of up to nsources sources, compared by cmp(source, source, arg). */
void
abt_merge_begin(AbtMerge *m, int nsources, AbtMergeCmp cmp, void *arg)
{
	m->n = 0;
	m->heap = palloc(sizeof(int) * Max(nsources, 1));
	m->cmp = cmp;
	m->arg = arg;
}

/* Source src has its first record: it joins the heap. */
void
abt_merge_add(AbtMerge *m, int src)
{
	int			i = m->n++;

	m->heap[i] = src;
	while (i > 0 && abt_merge_less(m, i, (i - 1) / 2))
	{
		int			parent = (i - 1) / 2;
		int			tmp = m->heap[i];

		m->heap[i] = m->heap[parent];
		m->heap[parent] = tmp;
		i = parent;
	}
}

/* The source with the least current record, or -1 when all are done. */
int
abt_merge_top(AbtMerge *m)
{
	return m->n > 0 ? m->heap[0] : -1;
}

/*
 * The top source has moved on to its next record (more), or has none left:
 * the heap follows.
 */
void
abt_merge_next(AbtMerge *m, bool more)
{
	if (!more)
		m->heap[0] = m->heap[--m->n];
	if (m->n > 1)
		abt_merge_sift_down(m, 0);
}
