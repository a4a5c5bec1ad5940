/*-------------------------------------------------------------------------
 *
 * abtdraw.c
 *	  Weighted random draws by root-to-leaf descents (paper 000, Algorithm 1
 *	  with the B-link corrections of section 4.2), optionally restricted to a
 *	  key range, made in batches (issue 21).
 *
 * abt_sample_batch() takes n variates u, uniform on [0, 1), and makes one
 * attempt per variate: the attempt returns a heap TID drawn with probability
 * proportional to its entry's weight, or is rejected (stored weights
 * overcount while inserts and VACUUM are in flight; a range restriction
 * rejects entries outside the range).  Callers make rejected attempts again
 * with new variates.
 *
 * The variates are sorted and one descent, level by level, routes all of
 * them: each page on the way is read once for the batch (a level's pages
 * read ahead together), its weights are taken once, and one merge over its
 * items sends every variate that falls into it on to the child it falls
 * in.  Each attempt still follows its own variate through exactly the
 * steps a descent of its own would take (the same positions, the same
 * checks against the same page states), so attempts stay independent and
 * keep their probabilities: src/abtree/README, "Batched draws".  The weights a page's items have for the draws are
 * taken in abtdrawweights.c.
 *
 *-------------------------------------------------------------------------
 */
#include "abtdraw.h"
#include "abtree_ext.h"

#include <math.h>

#include "mvstore/mvstore.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#if PG_VERSION_NUM >= 170000
#include "storage/read_stream.h"
#endif
#include "utils/datum.h"
#include "utils/spccache.h"
#include "utils/rel.h"

/* A draw's place in the batch's sorted order. */
typedef struct AbtDrawKey
{
	double		u;
	int32		draw;			/* index into the caller's array */
} AbtDrawKey;

/* Radix keys of the draws' u: (u - lo) * scale, truncated */
static void
abt_draw_sort_keys(AbtKeyed *k, const AbtDraw *draws, int n, double lo, double scale)
{
	for (int i = 0; i < n; i++)
	{
		k[i].key = (uint64) ((draws[i].u - lo) * scale);
		k[i].val = i;
	}
	abt_sort_keyed(k, n);
}

/*
 * The draws by ascending u (equal u by index): a radix sort of u placed in
 * the batch's range of u at 22 bits for up to 2^16 draws (two digits: about
 * n^2 / 2^23 pairs share a key, 512 at most), 33 bits for more (three), then
 * one insertion pass that orders the draws whose u differ below that
 * resolution, so that the order is exact.  Each digit is a pass that
 * scatters the batch: the sorts were a tenth of swr(100000)'s time.
 * Should many share a key (u bunched, not spread over their range) the
 * pass could be long: then the keys are u at 63 bits, as they all were
 * before (six digits, twice the sort).
 */
#define ABT_DRAW_KEY_BITS(n)	((n) <= 65536 ? 22 : 33)
#define ABT_DRAW_MAX_TIES	64

static void
abt_sort_draws(AbtDrawKey *keys, AbtDraw *draws, int n)
{
	AbtKeyed   *k = abt_scratch_alloc(sizeof(AbtKeyed) * n);
	double		lo = 1;
	double		hi = 0;
	int			run = 1;

	for (int i = 0; i < n; i++)
	{
		lo = Min(lo, draws[i].u);
		hi = Max(hi, draws[i].u);
	}
	if (hi > lo)
	{
		/* (hi - lo) * scale < 2^bits, and u in [lo, hi] gives keys in order */
		abt_draw_sort_keys(k, draws, n, lo,
						   ((double) ((uint64) 1 << ABT_DRAW_KEY_BITS(n)) - 1) / (hi - lo));
		for (int i = 1; i < n && run <= ABT_DRAW_MAX_TIES; i++)
			run = k[i].key == k[i - 1].key ? run + 1 : 1;
		if (run > ABT_DRAW_MAX_TIES)
			abt_draw_sort_keys(k, draws, n, 0, 9223372036854775808.0);	/* u * 2^63 */
	}
	else
	{
		for (int i = 0; i < n; i++)
			k[i].val = i;		/* one u: in index order already */
	}
	for (int i = 0; i < n; i++)
	{
		AbtDrawKey	x;
		int			j = i;

		x.draw = k[i].val;
		x.u = draws[x.draw].u;
		while (j > 0 && (keys[j - 1].u > x.u ||
						 (keys[j - 1].u == x.u && keys[j - 1].draw > x.draw)))
		{
			keys[j] = keys[j - 1];
			j--;
		}
		keys[j] = x;
	}
	abt_scratch_free(k);
}

/* One batch on its way down. */
typedef struct AbtDrawCtx
{
	Relation	rel;
	AbtIndexInfo *info;
	AbtSampleRange *range;
	MvsReader  *rd;				/* weighs the pages (NULL: stored weights) */
	MvsReader  *check;			/* rejects the entries it cannot see, or NULL */
	AbtDraw    *draws;
	AbtDrawColumns *cols;		/* where accepted entries' columns go, or NULL */
	AbtDrawKey *keys;			/* the draws by ascending u */
	double	   *r;				/* r[k]: key k's position in the page it is at */
	int			accepted;
	int			moved;			/* rejected because a page grew or split */
	int			deferred;		/* groups whose page was held exclusively */
	bool		recheck;		/* a heavier child may stay so (in recovery) */
} AbtDrawCtx;

/* The draws keys[start..end) bound for one child, all within its downlink. */
typedef struct AbtDrawGroup
{
	BlockNumber parent;			/* the page of the downlink */
	OffsetNumber off;			/* the downlink */
	BlockNumber child;
	double		dw;				/* its weight as read */
	IndexTuple	hikey;			/* where its key range ends (NULL: rightmost) */
	int			start;
	int			end;
#if PG_VERSION_NUM < 170000
	Buffer		recent;			/* child's buffer as prefetched (AbtChildReads) */
#endif
} AbtDrawGroup;

/*
 * At a leaf, a draw's r holds the item it fell in, j, and where in the
 * item's weight, i = floor(r - the weight before j): i picks the TID of a
 * posting tuple, uniform over its n since r is uniform over [0, n) there
 * (src/abtree/README, "Posting tuples").  Both are whole numbers: r = j +
 * 2^16 i, exact in a double, i capped where only weighted entries go.
 */
#define ABT_DRAW_ITEM_BITS	16

static inline double
abt_draw_leaf_pos(int j, double within)
{
	double		i = floor(within);

	return (double) j + (double) (1 << ABT_DRAW_ITEM_BITS) * Min(i, (double) PG_UINT32_MAX);
}

static inline OffsetNumber
abt_draw_leaf_item(double r)
{
	return (OffsetNumber) ((uint64) r & ((1 << ABT_DRAW_ITEM_BITS) - 1));
}

/*
 * The index columns of the entry draw i accepted, for a caller that reads
 * no others (index-only draws): the leaf is share-locked, so the values
 * passed by reference are copied.  A posting tuple's columns come before
 * its TIDs, so it deforms as a plain tuple does.
 */
static void
abt_draw_copy_columns(AbtDrawCtx *cx, IndexTuple itup, int i)
{
	TupleDesc	desc = RelationGetDescr(cx->rel);
	Datum	   *values = cx->cols->values + (Size) i * desc->natts;
	bool	   *isnull = cx->cols->isnull + (Size) i * desc->natts;

	index_deform_tuple(itup, desc, values, isnull);
	for (int k = 0; k < desc->natts; k++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, k);

		if (!isnull[k] && !att->attbyval)
			values[k] = datumCopy(values[k], false, att->attlen);
	}
}

static void
abt_draw_accept(AbtDrawCtx *cx, int k, Page page, OffsetNumber first)
{
	double		r = cx->r[k];
	IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, first + abt_draw_leaf_item(r)));
	AbtDraw    *d = &cx->draws[cx->keys[k].draw];

	if (cx->check && mvs_xid_invisible(cx->check, abt_leaf_xmin(itup)))
		return;
	if (AbtLeafIsPosting(itup))
	{
		int			n = abt_posting_count(itup);
		uint64		i = (uint64) r >> ABT_DRAW_ITEM_BITS;

		/* r - acc rounds below n; this only guards the rounding */
		abt_leaf_tid(itup, n, (int) Min(i, (uint64) n - 1), &d->tid);
	}
	else
		d->tid = itup->t_tid;
	if (cx->cols)
		abt_draw_copy_columns(cx, itup, cx->keys[k].draw);
	d->accepted = true;
	cx->accepted++;
}

/*
 * Accept draws keys[start..stop) at the leaf page, draw k at the item
 * first + r[k] (r[k] a whole number).  The items and the draws are at
 * random places in memory: ask for those a few draws ahead before they are
 * read.
 */
static void
abt_draw_accept_all(AbtDrawCtx *cx, Page page, OffsetNumber first, int start, int stop)
{
	for (int k = start; k < stop; k++)
	{
		int			a = k + ABT_PREFETCH_AHEAD;

		if (a < stop)
		{
			abt_prefetch(PageGetItem(page, PageGetItemId(page, first + abt_draw_leaf_item(cx->r[a]))));
			abt_prefetch(&cx->draws[cx->keys[a].draw]);
		}
		abt_draw_accept(cx, k, page, first);
	}
}

/*
 * Route draws keys[start..end), whose positions r are ascending, over the
 * items of weights ws[0..m) of page: each goes to the item it falls in, with
 * r made relative to that item, and a draw past the page's weight is
 * rejected (the parent's downlink overcounted).  A leaf accepts its draws;
 * an internal page returns its draws grouped by child in groups (one group
 * per child reached, in key order) and their number.
 */
static int
abt_draw_route(AbtDrawCtx *cx, Page page, BlockNumber parent, const uint64 *ws, int m,
			   int start, int end, AbtDrawGroup *groups)
{
	OffsetNumber first = AbtFirstDataOffset(AbtPageGetOpaque(page));
	bool		leaf = AbtPageIsLeaf(AbtPageGetOpaque(page));
	double		acc = 0;		/* the weight of the items before j */
	int			j = 0;
	int			ngroups = 0;
	int			k;

	for (k = start; k < end; k++)
	{
		/* integer weights: acc is exact, so the comparison is too */
		while (j < m && cx->r[k] >= acc + (double) ws[j])
			acc += (double) ws[j++];
		if (j == m)
			break;				/* this and every later draw: past the page */
		if (leaf)
		{
			/* accepted below, once all are routed */
			cx->r[k] = abt_draw_leaf_pos(j, cx->r[k] - acc);
			continue;
		}
		cx->r[k] -= acc;
		if (ngroups > 0 && groups[ngroups - 1].off == first + j)
		{
			groups[ngroups - 1].end++;
			continue;
		}
		groups[ngroups].parent = parent;
		groups[ngroups].off = first + j;
		groups[ngroups].child =
			AbtDownlinkGetChild((IndexTuple) PageGetItem(page, PageGetItemId(page, first + j)));
		groups[ngroups].dw = (double) ws[j];
		groups[ngroups].hikey = abt_item_hikey(page, first + j);
		groups[ngroups].start = k;
		groups[ngroups].end = k + 1;
		ngroups++;
	}
	if (leaf)
		abt_draw_accept_all(cx, page, first, start, k);
	return ngroups;
}


/*
 * The reads of the pages of one level that groups of draws go on to, in key
 * order, issued ahead of the draws (issue 21, item 4): from PostgreSQL 17 on through a
 * read stream (on 18 asynchronous I/O, io_uring with io_method = io_uring);
 * before, PrefetchBuffer up to the tablespace's effective_io_concurrency
 * children ahead, and the buffer it finds a cached child in is read from
 * there (abt_prefetch_page, abt_read_recent: one buffer look-up a child,
 * not two).  Only pins: each child is locked and checked when its draws
 * get there, as without read-ahead.
 */
typedef struct AbtChildReads
{
	Relation	rel;
	AbtDrawGroup *groups;
	int			ngroups;
	int			next;			/* the next group to issue */
	int			distance;		/* 0: no read-ahead */
	const double *r;			/* the draws' positions in their children */
#if PG_VERSION_NUM >= 170000
	ReadStream *stream;
#endif
} AbtChildReads;

#if PG_VERSION_NUM >= 170000
static BlockNumber
abt_child_reads_cb(ReadStream *stream, void *private, void *per_buffer_data)
{
	AbtChildReads *reads = (AbtChildReads *) private;

	if (reads->next >= reads->ngroups)
		return InvalidBlockNumber;
	return reads->groups[reads->next++].child;
}
#endif

#if PG_VERSION_NUM < 170000
/*
 * The entries the first draws of a group will take, if its child is a leaf
 * whose entries weigh one each (then a draw's position is its entry's
 * index; a leaf that is not rightmost has its high key first): their line
 * pointers are asked for with the page, their tuples ABT_ENTRY_AHEAD groups
 * before the group is drawn, through the line pointers then in the cache,
 * and so is the child's high key, which sits wherever the page put it.
 * Otherwise these are wasted prefetches: the buffer is not pinned, what is
 * read of it is a hint only, and a prefetch never faults.  The leaf's
 * entries were the largest miss of swr(1000) on 10M rows once the page
 * itself came ahead (abt_draw_accept_all, 22%; one draw per leaf there).
 */
#define ABT_ENTRY_AHEAD		2
#define ABT_ENTRY_DRAWS		4

static inline void
abt_prefetch_entries(const AbtChildReads *reads, const AbtDrawGroup *grp, bool tuples)
{
	char	   *page;

	if (!BufferIsValid(grp->recent))
		return;
	page = (char *) BufferGetPage(grp->recent);
	/* the high key, which abt_page_ends_at compares first */
	if (tuples)
		abt_prefetch_item((Page) page, PageGetItemId((Page) page, ABT_HIKEY));
	for (int k = grp->start; k < grp->end && k < grp->start + ABT_ENTRY_DRAWS; k++)
	{
		double		off = 2 + reads->r[k];
		ItemId		lp;

		if (off > MaxIndexTuplesPerPage)
			break;
		lp = PageGetItemId((Page) page, (OffsetNumber) off);
		if (tuples)
			abt_prefetch_item((Page) page, lp);
		else
			abt_prefetch(lp);
	}
}
#endif

static void
abt_child_reads_begin(AbtChildReads *reads, Relation rel, AbtDrawGroup *groups, int ngroups,
					  const double *r)
{
	reads->rel = rel;
	reads->r = r;
	reads->groups = groups;
	reads->ngroups = ngroups;
	reads->next = 0;
	/* one child: nothing to read ahead of */
	reads->distance = ngroups > 1 ?
		get_tablespace_io_concurrency(rel->rd_rel->reltablespace) : 0;
#if PG_VERSION_NUM >= 170000
	reads->stream = reads->distance > 0 ?
		read_stream_begin_relation(READ_STREAM_DEFAULT, NULL, rel, MAIN_FORKNUM,
								   abt_child_reads_cb, reads, 0) : NULL;
#endif
}

/* The pinned buffer of group g's child. */
static Buffer
abt_child_reads_next(AbtChildReads *reads, int g)
{
#if PG_VERSION_NUM >= 170000
	if (reads->stream)
		return read_stream_next_buffer(reads->stream, NULL);
	return ReadBuffer(reads->rel, reads->groups[g].child);
#else
	if (reads->next <= g)
	{
		/*
		 * not issued ahead: the first child (through its hint), or no
		 * read-ahead (plain ReadBuffer, as the tests' reference)
		 */
		reads->next = g + 1;
		reads->groups[g].recent = reads->distance > 0 ?
			abt_hinted(reads->rel, reads->groups[g].child) : InvalidBuffer;
	}
	for (; reads->next < reads->ngroups && reads->next <= g + reads->distance; reads->next++)
	{
		int			later = reads->next + ABT_PREFETCH_AHEAD;

		/* the hints twice as far ahead, their buffers' descriptors here */
		if (later + ABT_PREFETCH_AHEAD < reads->ngroups)
			abt_hint_prefetch(reads->rel, reads->groups[later + ABT_PREFETCH_AHEAD].child);
		if (later < reads->ngroups)
			abt_hint_prefetch_buffer(reads->rel, reads->groups[later].child);
		reads->groups[reads->next].recent =
			abt_prefetch_page(reads->rel, reads->groups[reads->next].child, true);
		abt_prefetch_entries(reads, &reads->groups[reads->next], false);
	}
	if (g + ABT_ENTRY_AHEAD < reads->next)
		abt_prefetch_entries(reads, &reads->groups[g + ABT_ENTRY_AHEAD], true);
	return abt_read_recent(reads->rel, reads->groups[g].child, reads->groups[g].recent);
#endif
}

static void
abt_child_reads_end(AbtChildReads *reads)
{
#if PG_VERSION_NUM >= 170000
	if (reads->stream)
		read_stream_end(reads->stream);
#endif
}

/*
 * The draws keys[start..end) at the locked page buf, which it releases.  At
 * the page a batch starts from (limit < 0) r is still u, and is spread over
 * the page's weight here.  Below, r is uniform on [0, limit), the weight of
 * the downlink the draws followed.  If the page now weighs more than that
 * (an insert's weight pass added below the downlink after we read it), the
 * units past limit could not be reached, so the page's last entries would
 * be drawn too rarely: the group is rejected instead.  On a primary the
 * downlink has caught up by now (W1L holds in memory at every moment once
 * abt_recovery_check has run), so the group is rejected at once, without
 * waiting for the parent's lock, which a batched flush may hold.  In
 * recovery the weights can stay inconsistent after a second look
 * (abt_downlink_caught_up), and then the draws go on within limit.  A leaf
 * accepts its draws; an internal page appends groups for the next level to
 * next (returns how many).
 */
static int
abt_draw_page(AbtDrawCtx *cx, Buffer buf, int start, int end, double limit,
			  BlockNumber parent, AbtDrawGroup *next)
{
	Page		page = BufferGetPage(buf);
	AbtPageOpaque opaque = AbtPageGetOpaque(page);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	uint64		ws[MaxIndexTuplesPerPage];
	int			ngroups = 0;
	int			m;
	double		total = 0;
	bool		counts = abt_leaf_counts_entries(cx->info, cx->range, cx->rd, page);

	if (counts)
	{
		/* every entry weighs one: no weights to read */
		m = Max(PageGetMaxOffsetNumber(page) - AbtFirstDataOffset(opaque) + 1, 0);
		total = m;
	}
	else
	{
		m = abt_page_weights(cx->rel, cx->info, cx->range, cx->rd, page, ws);
		for (int i = 0; i < m; i++)
			total += (double) ws[i];
		if (AbtPageIsLeaf(opaque) && (opaque->flags & ABTP_HAS_INVALID) &&
			!cx->info->weighted && total == m)
			abt_leaf_clear_invalid_hint(buf);
	}
	if (limit < 0)
	{
		for (int k = start; k < end; k++)
			cx->r[k] = cx->keys[k].u * total;
	}
	else if (total > limit &&
			 (!cx->recheck ||
			  abt_downlink_caught_up(cx->rel, cx->info, cx->range, cx->rd, parent, blkno, total)))
	{
		/* the second look a primary skips would have found it caught up */
		Assert(cx->recheck ||
			   abt_downlink_caught_up(cx->rel, cx->info, cx->range, cx->rd, parent, blkno, total));
		cx->moved += end - start;
		UnlockReleaseBuffer(buf);
		return 0;
	}

	if (counts)
	{
		int			stop = start;

		/* r ascending: those before stop fall on an entry */
		while (stop < end && cx->r[stop] < m)
			stop++;
		abt_draw_accept_all(cx, page, AbtFirstDataOffset(opaque), start, stop);
	}
	else
		ngroups = abt_draw_route(cx, page, blkno, ws, m, start, end, next);
	UnlockReleaseBuffer(buf);
	return ngroups;
}

/*
 * Group grp's draws at its child, buf, share-locked; releases it and
 * appends the groups of the level below to next (returns how many).  If the
 * child split since we read its parent (its key range now spans pages),
 * every draw of the group is rejected: that does not depend on r, so the
 * accepted draws keep their probabilities (README, "Sampling").  The page's
 * weight is checked in abt_draw_page.
 */
static int
abt_draw_group(AbtDrawCtx *cx, AbtDrawGroup *grp, Buffer buf, AbtDrawGroup *next)
{
	int			n = 0;

	abt_check_page(cx->rel, buf);
	if (abt_page_ends_at(BufferGetPage(buf), grp->hikey))
		n = abt_draw_page(cx, buf, grp->start, grp->end, grp->dw, grp->parent, next);
	else
	{
		cx->moved += grp->end - grp->start;
		UnlockReleaseBuffer(buf);
	}
	if (grp->hikey)
		pfree(grp->hikey);
	return n;
}

/*
 * Take the groups of one level on to their pages, in key order, and return
 * the groups of the level below in next (how many).  For each group, r is
 * uniform on [0, dw).  A page that a writer holds exclusively when its
 * turn comes (a batched flush holds its pages until its record is written)
 * waits until the level's other pages are done, pinned, up to
 * ABT_DRAW_DEFERRED of them: the batch works meanwhile instead of sleeping
 * on the lock.  Which page a group visits when does not matter to any
 * draw's route or test (README, "Batched draws").
 */
#define ABT_DRAW_DEFERRED	16

static int
abt_draw_level(AbtDrawCtx *cx, AbtDrawGroup *groups, int ngroups, AbtDrawGroup *next)
{
	AbtChildReads reads;
	int			nnext = 0;
	int			deferred[ABT_DRAW_DEFERRED];
	Buffer		dbufs[ABT_DRAW_DEFERRED];
	int			ndeferred = 0;

	abt_child_reads_begin(&reads, cx->rel, groups, ngroups, cx->r);
	for (int g = 0; g < ngroups; g++)
	{
		Buffer		buf;

		CHECK_FOR_INTERRUPTS();
		abt_debug_wait(abt_debug_sample_pause);
		buf = abt_child_reads_next(&reads, g);
		if (ndeferred == ABT_DRAW_DEFERRED)
			LockBuffer(buf, BUFFER_LOCK_SHARE);
		else if ((abt_debug_defer_draws && g % 2 == 0) || !abt_try_share_lock(buf))
		{
			deferred[ndeferred] = g;
			dbufs[ndeferred++] = buf;
			cx->deferred++;
			continue;
		}
		nnext += abt_draw_group(cx, &groups[g], buf, next + nnext);
	}
	abt_child_reads_end(&reads);
	for (int i = 0; i < ndeferred; i++)
	{
		LockBuffer(dbufs[i], BUFFER_LOCK_SHARE);
		nnext += abt_draw_group(cx, &groups[deferred[i]], dbufs[i], next + nnext);
	}
	return nnext;
}

/*
 * Two exact ways to draw as rd's snapshot sees the index.  Weighing every
 * page as the snapshot sees it (the weight store takes off what it cannot
 * see) never rejects for that, but a leaf holding entries the snapshot
 * cannot see must then be read entry by entry.  Drawing by the stored
 * weights and rejecting an entry the snapshot cannot see gives every
 * entry it sees the same probability too (w / stored total, then
 * conditioned on acceptance: rejection sampling), indexes unweighted leaves
 * directly, and accepts the share of the stored weight that the snapshot
 * sees.  While that share, at the page a batch starts from, is at least
 * abtree.draw_stored_share, a draw by the stored weights costs less; below
 * it the rejections would (the weight store exists for that case, paper
 * 000 section 4.4).  Automatic (the setting's default, -1) is where the two
 * cost the same (bench/results/old_snapshot_crossover*.md): 1/8 where
 * draws have buffer hints and ask for leaf entries ahead (15 and 16), 1/4
 * from 17 on, where each draw costs more and a leaf read entry by entry
 * comes through a read stream.  The choice depends on the start page only,
 * not on any draw's u.  Returns the reader to weigh pages with (NULL:
 * stored weights) and sets *check to the reader that rejects entries (or
 * NULL).
 */
double		abt_draw_stored_share = -1;

#if PG_VERSION_NUM >= 170000
#define ABT_DRAW_STORED_SHARE_AUTO	0.25
#else
#define ABT_DRAW_STORED_SHARE_AUTO	0.125
#endif

static MvsReader *
abt_draw_weigh_by(AbtDrawCtx *cx, Page start, MvsReader *rd, MvsReader **check)
{
	double		seen;
	double		stored;
	double		share;

	*check = NULL;
	if (rd == NULL || !rd->active)
		return rd;
	seen = abt_range_page_weight(cx->rel, cx->info, cx->range, rd, start);
	stored = abt_range_page_weight(cx->rel, cx->info, cx->range, NULL, start);
	share = abt_draw_stored_share < 0 ? ABT_DRAW_STORED_SHARE_AUTO : abt_draw_stored_share;
	if (stored <= 0 || seen < share * stored)
		return rd;
	*check = rd;
	return NULL;
}

/*
 * Make one attempt for each of the n draws: on return, draws[i].accepted
 * says whether draws[i].u found an entry, and draws[i].tid holds its heap
 * TID; with cols, the entry's index columns too (AbtDrawColumns).  Returns
 * the number accepted, and sets *moved to the number rejected because a
 * page grew or split between the reads of its parent and of it: the
 * rejections that a smaller call makes rarer (abt_sample_round).
 */
int
abt_sample_batch(Relation rel, AbtSampleRange *range, MvsReader *rd, AbtDraw *draws, int n,
				 AbtDrawColumns *cols, int *moved)
{
	AbtDrawCtx	cx;
	Buffer		buf;
	AbtDrawGroup *groups;
	AbtDrawGroup *next;
	int			ngroups;

	for (int i = 0; i < n; i++)
		draws[i].accepted = false;
	*moved = 0;
	if (n <= 0)
		return 0;
	/* every downlink must cover its child: once after crash recovery */
	abt_recovery_check(rel);
	/* this backend's own entries waiting to become valid count (abtbatch.c) */
	abt_batch_flush_rel(rel);
	/* the true root: a draw must start from the whole tree's weight */
	buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
	if (!BufferIsValid(buf))
		return 0;
	if (range)
	{
		IndexTuple	expected_hikey = NULL;

		buf = abt_range_start(rel, range, buf, &expected_hikey);
		if (expected_hikey)
			pfree(expected_hikey);
		if (!BufferIsValid(buf))
		{
			*moved = n;			/* a page split under us: all rejected */
			return 0;
		}
	}

	cx.rel = rel;
	cx.info = abt_index_info(rel);
	cx.range = range;
	cx.rd = abt_draw_weigh_by(&cx, BufferGetPage(buf), rd, &cx.check);
	cx.draws = draws;
	cx.cols = cols;
	cx.keys = abt_scratch_alloc(sizeof(AbtDrawKey) * n);
	cx.r = abt_scratch_alloc(sizeof(double) * n);
	cx.accepted = 0;
	cx.moved = 0;
	cx.deferred = 0;
	/* set once abt_recovery_check ran, which it does not in recovery */
	cx.recheck = !cx.info->recovery_checked;
	abt_sort_draws(cx.keys, draws, n);

	/*
	 * Level by level: a group per downlink that draws follow (at most one
	 * per draw), so that each level's pages are read ahead together.
	 */
	groups = abt_scratch_alloc(sizeof(AbtDrawGroup) * n);
	next = abt_scratch_alloc(sizeof(AbtDrawGroup) * n);
	ngroups = abt_draw_page(&cx, buf, 0, n, -1, InvalidBlockNumber, groups);
	while (ngroups > 0)
	{
		AbtDrawGroup *swap = groups;

		ngroups = abt_draw_level(&cx, groups, ngroups, next);
		groups = next;
		next = swap;
	}
	abt_scratch_free(groups);
	abt_scratch_free(next);
	abt_scratch_free(cx.keys);
	abt_scratch_free(cx.r);
	if (cx.deferred > 0)
		pg_atomic_fetch_add_u64(&abt_shared->draw_pages_deferred, cx.deferred);
	*moved = cx.moved;
	return cx.accepted;
}

/*
 * The weight a draw spreads its u over: the items of the page a
 * draw starts from (the root, or for a range abt_range_start()'s page) as
 * the reader sees them, restricted to the range.  It bounds the weight of the
 * entries a draw can return, and a caller choosing between several indexes
 * (the partitions of a table) weighs each by it, so that every entry keeps
 * its probability w / (sum over the indexes).
 */
double
abt_sample_total(Relation rel, AbtSampleRange *range, MvsReader *rd)
{
	abt_recovery_check(rel);
	/* this backend's own entries waiting to become valid count (abtbatch.c) */
	abt_batch_flush_rel(rel);
	for (;;)
	{
		Buffer		buf = abt_get_root(rel, ABT_METAPAGE, BUFFER_LOCK_SHARE);
		IndexTuple	expected_hikey = NULL;
		double		total;

		if (!BufferIsValid(buf))
			return 0;
		if (range)
			buf = abt_range_start(rel, range, buf, &expected_hikey);
		if (expected_hikey)
			pfree(expected_hikey);
		if (!BufferIsValid(buf))
			continue;			/* a page split under us: look again */
		total = abt_range_page_weight(rel, abt_index_info(rel), range, rd, BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		return total;
	}
}
