/*-------------------------------------------------------------------------
 *
 * pbtseal.c
 *	  Sealing, compacting, merging and freeing pbtree partitions.
 *
 * Seal (paper 001, Algorithm 1, EVICT): under the insert lock in exclusive
 * mode, the mutable partition becomes CLOSED and a new, empty MUTABLE
 * partition takes the inserts: one directory record.  Then, under the
 * reorganisation lock, the closed partition is compacted: its leaves are
 * read in key order and written, full, on pages allocated in one run (a
 * sequential write), with its filters after them; one directory record
 * makes the copy SEALED and the original DROPPED.
 *
 * Merge: the same writer over several sealed partitions at once (a k-way
 * merge of their leaf levels), replacing them by one.
 *
 * A partition being written is in the directory as BUILDING from before
 * its first page is written, so a crash leaves an entry that says which
 * pages are orphans; whoever takes the reorganisation lock next drops it.
 * DROPPED partitions are freed once no snapshot that could have read the
 * directory before they were dropped remains (README, "Freeing").
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "access/transam.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

int			pbt_merge_threshold = 8;

/* Keep pd_lower past the last entry, so that page images include them. */
static void
pbt_meta_set_lower(Page page)
{
	PbtMetaPageData *meta = PbtPageGetMeta(page);

	((PageHeader) page)->pd_lower =
		(char *) &meta->parts[meta->npartitions] - (char *) page;
}

static PbtPartition *
pbt_meta_find(PbtMetaPageData *meta, uint32 partno)
{
	for (uint32 i = 0; i < meta->npartitions; i++)
		if (meta->parts[i].partno == partno)
			return &meta->parts[i];
	return NULL;
}

static void
pbt_meta_drop(PbtPartition *p)
{
	p->state = PBT_DROPPED;
	p->safexid = ReadNextFullTransactionId();
}

/* ---- sealing ---- */

/*
 * Close the mutable partition and open a new one.  With wait = false, give
 * up if inserts are in flight.  Returns whether it sealed.
 */
bool
pbt_seal(Relation rel, bool wait)
{
	static TimestampTz last_warning = 0;	/* one warning a minute at most */
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));
	uint32		partno;
	Buffer		headbuf;
	Buffer		metabuf;
	PbtMetaPageData *meta;
	PbtPartition *mut;
	PbtPartition *fresh;

	pbt_read_directory(rel, dir);
	partno = pbt_mutable(dir)->partno;
	pfree(dir);
	/* the heavyweight lock first: never wait for it holding a buffer lock */
	if (wait)
		LockPage(rel, PBT_LOCK_INSERT, ExclusiveLock);
	else if (!ConditionalLockPage(rel, PBT_LOCK_INSERT, ExclusiveLock))
		return false;
	headbuf = pbt_new_buffer(rel);
	metabuf = pbt_lock_meta(rel);
	meta = PbtPageGetMeta(BufferGetPage(metabuf));
	mut = pbt_meta_find(meta, partno);
	if (mut == NULL || mut->state != PBT_MUTABLE ||
		meta->npartitions >= PBT_MAX_PARTITIONS)
	{
		bool		full = meta->npartitions >= PBT_MAX_PARTITIONS;

		UnlockReleaseBuffer(metabuf);
		UnlockPage(rel, PBT_LOCK_INSERT, ExclusiveLock);
		RecordFreeIndexPage(rel, BufferGetBlockNumber(headbuf));
		UnlockReleaseBuffer(headbuf);
		if (full && TimestampDifferenceExceeds(last_warning, GetCurrentTimestamp(), 60 * 1000))
		{
			last_warning = GetCurrentTimestamp();
			ereport(WARNING,
					(errmsg("pbtree index \"%s\" has %d partitions and cannot seal its mutable one",
							RelationGetRelationName(rel), PBT_MAX_PARTITIONS),
					 errdetail("Dropped partitions are freed when no snapshot older than their drop remains; a long transaction keeps them."),
					 errhint("Merge them with pbtree_merge('%s'), or raise abtree.pbtree_buffer_budget.", RelationGetRelationName(rel))));
		}
		if (full)
			pbt_request_merge(rel);
		return false;
	}

	START_CRIT_SECTION();
	fresh = &meta->parts[meta->npartitions++];
	memset(fresh, 0, sizeof(PbtPartition));
	fresh->partno = meta->next_partno++;
	fresh->state = PBT_MUTABLE;
	fresh->head = pbt_create_tree(rel, fresh->partno, InvalidBlockNumber, 0, &headbuf);
	fresh->filter_start = InvalidBlockNumber;
	fresh->created = GetCurrentTimestamp();
	mut->state = PBT_CLOSED;
	meta->nseals++;
	pbt_meta_set_lower(BufferGetPage(metabuf));
	MarkBufferDirty(metabuf);
	MarkBufferDirty(headbuf);
	pbt_log_meta(rel, metabuf, &headbuf, 1);
	END_CRIT_SECTION();

	UnlockReleaseBuffer(headbuf);
	UnlockReleaseBuffer(metabuf);
	UnlockPage(rel, PBT_LOCK_INSERT, ExclusiveLock);
	pbt_budget_forget(rel);

	pbt_compact_closed(rel);
	return true;
}

/* ---- reading partitions in key order ---- */

/* One input partition's leaf level, a page at a time */
typedef struct PbtLeafCursor
{
	BlockNumber next;			/* next leaf to read */
	MemoryContext cxt;			/* the current page's tuples */
	IndexTuple	items[MaxIndexTuplesPerPage];
	int			n;
	int			pos;
} PbtLeafCursor;

static bool
pbt_cursor_fill(Relation rel, PbtLeafCursor *c)
{
	while (c->pos >= c->n)
	{
		Buffer		buf;
		Page		page;
		AbtPageOpaque opaque;
		MemoryContext old;

		if (c->next == InvalidBlockNumber)
			return false;
		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(rel, c->next);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		abt_check_page(rel, buf);
		page = BufferGetPage(buf);
		opaque = AbtPageGetOpaque(page);
		MemoryContextReset(c->cxt);
		old = MemoryContextSwitchTo(c->cxt);
		c->n = 0;
		c->pos = 0;
		for (OffsetNumber off = AbtFirstDataOffset(opaque);
			 off <= PageGetMaxOffsetNumber(page); off++)
			c->items[c->n++] = CopyIndexTuple((IndexTuple) PageGetItem(page, PageGetItemId(page, off)));
		MemoryContextSwitchTo(old);
		c->next = opaque->next;
		UnlockReleaseBuffer(buf);
	}
	return true;
}

/* Add a BUILDING partition to the directory: its head page, no tree yet. */
static uint32
pbt_begin_building(Relation rel, Buffer *headbuf)
{
	Buffer		metabuf;
	PbtMetaPageData *meta;
	PbtPartition *p;
	uint32		partno;

	*headbuf = pbt_new_buffer(rel);
	metabuf = pbt_lock_meta(rel);
	meta = PbtPageGetMeta(BufferGetPage(metabuf));
	if (meta->npartitions >= PBT_MAX_PARTITIONS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("pbtree index \"%s\" has too many partitions to build another",
						RelationGetRelationName(rel)),
				 errhint("VACUUM the index's table to free dropped partitions.")));

	START_CRIT_SECTION();
	p = &meta->parts[meta->npartitions++];
	memset(p, 0, sizeof(PbtPartition));
	p->partno = partno = meta->next_partno++;
	p->state = PBT_BUILDING;
	p->head = pbt_create_tree(rel, partno, InvalidBlockNumber, 0, headbuf);
	p->filter_start = InvalidBlockNumber;
	p->created = GetCurrentTimestamp();
	pbt_meta_set_lower(BufferGetPage(metabuf));
	MarkBufferDirty(metabuf);
	MarkBufferDirty(*headbuf);
	pbt_log_meta(rel, metabuf, headbuf, 1);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(metabuf);
	/* keep the pin only: nobody else knows the head page yet */
	LockBuffer(*headbuf, BUFFER_LOCK_UNLOCK);
	return partno;
}

/*
 * Finish a BUILDING partition: its tree and filters are written; make it
 * SEALED (or DROPPED if empty) and drop the inputs, in one record.
 */
static void
pbt_finish_building(Relation rel, Buffer headbuf, PbtPartition *out,
					BlockNumber root, uint32 level,
					uint32 *inputs, int ninputs, bool merge)
{
	Buffer		metabuf;
	PbtMetaPageData *meta;
	PbtPartition *p;
	AbtMetaPageData *tree = AbtPageGetMeta(BufferGetPage(headbuf));

	/* lock order: the head page (a tree's metapage) before the directory */
	LockBuffer(headbuf, BUFFER_LOCK_EXCLUSIVE);
	metabuf = pbt_lock_meta(rel);
	meta = PbtPageGetMeta(BufferGetPage(metabuf));
	p = pbt_meta_find(meta, out->partno);
	if (p == NULL || p->state != PBT_BUILDING)
		elog(ERROR, "pbtree: partition %u is not being built", out->partno);
	START_CRIT_SECTION();
	tree->root = root;
	tree->level = level;
	out->head = p->head;
	out->safexid = InvalidFullTransactionId;
	out->state = PBT_SEALED;
	out->created = p->created;
	*p = *out;
	if (out->ntuples == 0)
		pbt_meta_drop(p);
	for (int i = 0; i < ninputs; i++)
	{
		PbtPartition *in = pbt_meta_find(meta, inputs[i]);

		if (in)
			pbt_meta_drop(in);
	}
	if (merge)
		meta->nmerges++;
	MarkBufferDirty(metabuf);
	MarkBufferDirty(headbuf);
	pbt_log_meta(rel, metabuf, &headbuf, 1);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(metabuf);
}

/*
 * Write the partitions inputs (immutable: CLOSED or SEALED, with the
 * reorganisation lock held) as one new sealed partition, and drop them.
 */
static void
pbt_rewrite(Relation rel, uint32 *inputs, int ninputs, bool merge)
{
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));
	PbtLeafCursor *cur = palloc0(sizeof(PbtLeafCursor) * ninputs);
	uint64		expect = 0;
	Buffer		headbuf;
	AbtTreeWriter *tw;
	PbtFilterBuild *fb;
	PbtPartition out;
	uint32		level;
	BlockNumber root;

	pbt_read_directory(rel, dir);
	/* housekeeping must never fail an insert: no room, no rewrite */
	if (dir->n >= PBT_MAX_PARTITIONS)
	{
		pfree(cur);
		pfree(dir);
		return;
	}
	for (int i = 0; i < ninputs; i++)
	{
		for (int j = 0; j < dir->n; j++)
			if (dir->parts[j].partno == inputs[i])
			{
				cur[i].next = pbt_leftmost_leaf(rel, dir->parts[j].head);
				expect += dir->parts[j].state == PBT_SEALED ? dir->parts[j].ntuples :
					pbt_count_entries(rel, dir->parts[j].head);
			}
		cur[i].cxt = AllocSetContextCreate(CurrentMemoryContext, "pbtree merge input",
										   ALLOCSET_DEFAULT_SIZES);
	}

	memset(&out, 0, sizeof(out));
	out.partno = pbt_begin_building(rel, &headbuf);
	tw = abt_tree_writer_begin(rel, 100, 100, out.partno, true);
	fb = pbt_filter_begin(rel, expect);
	for (;;)
	{
		int			best = -1;
		IndexTuple	itup;

		for (int i = 0; i < ninputs; i++)
			if (pbt_cursor_fill(rel, &cur[i]) &&
				(best < 0 ||
				 abt_compare_tuples(rel, cur[i].items[cur[i].pos], false,
									cur[best].items[cur[best].pos], false) < 0))
				best = i;
		if (best < 0)
			break;
		itup = CopyIndexTuple(cur[best].items[cur[best].pos++]);
		pbt_filter_add(fb, itup);
		abt_tree_writer_add(tw, itup);
		out.ntuples++;

		/*
		 * A cache miss (comparators, hash functions) takes a catalog
		 * snapshot, which keeps an xmin until it is invalidated; the merge
		 * worker runs no commands that would do that, so a long rewrite
		 * would hold back every VACUUM's horizon.  After the first entry
		 * (the misses are there) and every 8192.
		 */
		if (out.ntuples % 8192 == 1)
			InvalidateCatalogSnapshot();
	}
	root = abt_tree_writer_finish(tw, &level);
	pbt_filter_write(fb, out.partno, &out, true);
	pbt_finish_building(rel, headbuf, &out, root, level, inputs, ninputs, merge);
	UnlockReleaseBuffer(headbuf);
	for (int i = 0; i < ninputs; i++)
		MemoryContextDelete(cur[i].cxt);
	pfree(cur);
	pfree(dir);
}

/* ---- the reorganisation lock's work ---- */

/* BUILDING partitions whose builder is gone (we hold the lock) are orphans */
static void
pbt_drop_orphans(Relation rel)
{
	Buffer		metabuf = pbt_lock_meta(rel);
	PbtMetaPageData *meta = PbtPageGetMeta(BufferGetPage(metabuf));
	bool		any = false;

	for (uint32 i = 0; i < meta->npartitions; i++)
		any |= meta->parts[i].state == PBT_BUILDING;
	if (any)
	{
		START_CRIT_SECTION();
		for (uint32 i = 0; i < meta->npartitions; i++)
			if (meta->parts[i].state == PBT_BUILDING)
				pbt_meta_drop(&meta->parts[i]);
		MarkBufferDirty(metabuf);
		pbt_log_meta(rel, metabuf, NULL, 0);
		END_CRIT_SECTION();
	}
	UnlockReleaseBuffer(metabuf);
}

/* Append the blocks of a dropped partition's tree and filters to blocks */
static void
pbt_collect_blocks(Relation rel, PbtPartition *p, PbtBlockList *blocks)
{
	AbtMetaPageData tree;
	BlockNumber level;

	pbt_block_list_push(blocks, p->head);
	for (uint32 f = 0; f < p->filter_pages * p->nfilters; f++)
		pbt_block_list_push(blocks, p->filter_start + f);
	abt_read_meta_at(rel, p->head, &tree);
	/* level by level, from the root down, each from its leftmost page */
	for (level = tree.root; level != InvalidBlockNumber;)
		(void) pbt_walk_level(rel, level, p->partno, blocks, &level);
}

/*
 * Free the DROPPED partitions no snapshot can reach any more: note their
 * pages, remove them from the directory, then give the pages to the free
 * space map (in that order: a page in the map whose partition is still
 * listed would be refused and lost until the next VACUUM).
 */
void
pbt_free_dropped(Relation rel)
{
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));
	PbtBlockList blocks = {0};
	uint32		gone[PBT_MAX_PARTITIONS];
	int			ngone = 0;
	FullTransactionId horizon = InvalidFullTransactionId;

	pbt_read_directory(rel, dir);
	for (int i = 0; i < dir->n; i++)
	{
		PbtPartition *p = &dir->parts[i];

		if (p->state != PBT_DROPPED || !GlobalVisCheckRemovableFullXid(NULL, p->safexid))
			continue;
		pbt_collect_blocks(rel, p, &blocks);
		gone[ngone++] = p->partno;
		if (!FullTransactionIdIsValid(horizon) ||
			FullTransactionIdFollows(p->safexid, horizon))
			horizon = p->safexid;
	}
	if (ngone > 0)
	{
		Buffer		metabuf = pbt_lock_meta(rel);
		Page		page = BufferGetPage(metabuf);
		PbtMetaPageData *meta = PbtPageGetMeta(page);
		uint32		keep = 0;

		START_CRIT_SECTION();
		for (uint32 i = 0; i < meta->npartitions; i++)
		{
			bool		drop = false;

			for (int g = 0; g < ngone; g++)
				drop |= meta->parts[i].partno == gone[g];
			if (!drop)
				meta->parts[keep++] = meta->parts[i];
		}
		meta->npartitions = keep;
		pbt_meta_set_lower(page);
		MarkBufferDirty(metabuf);
		pbt_log_free(rel, metabuf, horizon);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(metabuf);
		for (int i = 0; i < blocks.n; i++)
			RecordFreeIndexPage(rel, blocks.blocks[i]);
		IndexFreeSpaceMapVacuum(rel);
	}
	if (blocks.blocks)
		pfree(blocks.blocks);
	pfree(dir);
}

/* With the reorganisation lock: orphans, closed partitions, freeing. */
void
pbt_reorganise_locked(Relation rel)
{
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));

	pbt_drop_orphans(rel);
	pbt_read_directory(rel, dir);
	for (int i = 0; i < dir->n; i++)
		if (dir->parts[i].state == PBT_CLOSED)
			pbt_rewrite(rel, &dir->parts[i].partno, 1, false);
	pbt_free_dropped(rel);
	pfree(dir);
}

/* Compact closed partitions now, unless someone else is reorganising. */
void
pbt_compact_closed(Relation rel)
{
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));
	int			nsealed = 0;

	if (ConditionalLockPage(rel, PBT_LOCK_REORG, ExclusiveLock))
	{
		pbt_reorganise_locked(rel);
		UnlockPage(rel, PBT_LOCK_REORG, ExclusiveLock);
	}
	pbt_read_directory(rel, dir);
	for (int i = 0; i < dir->n; i++)
		nsealed += dir->parts[i].state == PBT_SEALED || dir->parts[i].state == PBT_CLOSED;
	if (pbt_merge_threshold > 0 && nsealed >= pbt_merge_threshold)
		pbt_request_merge(rel);
	pfree(dir);
}

static int
pbt_by_size(const void *a, const void *b)
{
	const PbtPartition *pa = (const PbtPartition *) a;
	const PbtPartition *pb = (const PbtPartition *) b;

	if (pa->ntuples != pb->ntuples)
		return pa->ntuples < pb->ntuples ? -1 : 1;
	return pa->partno < pb->partno ? -1 : 1;
}

/*
 * Merge sealed partitions into one: the max_inputs oldest (all with 0), or,
 * with smallest, the max_inputs smallest, so that the background merges
 * combine partitions of like size and a large one is not rewritten for
 * every few small ones (the write amplification of a tiered LSM, not of a
 * levelled one).  Waits for the reorganisation lock.  Returns how many
 * were merged.
 */
int
pbt_merge(Relation rel, int max_inputs, bool smallest)
{
	PbtDirectory *dir = palloc(sizeof(PbtDirectory));
	uint32		inputs[PBT_MAX_PARTITIONS];
	int			n = 0;

	LockPage(rel, PBT_LOCK_REORG, ExclusiveLock);
	pbt_reorganise_locked(rel);
	pbt_read_directory(rel, dir);
	if (smallest)
		qsort(dir->parts, dir->n, sizeof(PbtPartition), pbt_by_size);
	for (int i = 0; i < dir->n; i++)
		if (dir->parts[i].state == PBT_SEALED && (max_inputs <= 0 || n < max_inputs))
			inputs[n++] = dir->parts[i].partno;
	if (n >= 2)
	{
		pbt_rewrite(rel, inputs, n, true);
		pbt_free_dropped(rel);
	}
	else
		n = 0;
	UnlockPage(rel, PBT_LOCK_REORG, ExclusiveLock);
	pfree(dir);
	return n;
}
