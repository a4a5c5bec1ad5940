/*-------------------------------------------------------------------------
 *
 * pbtbuild.c
 *	  Bulk build of a pbtree: one sealed partition and an empty mutable one.
 *
 * The heap is sorted exactly as for abtree (abt_sorted_*), the sorted
 * entries fill partition 1's leaves completely (it will never take an
 * insert) and its Bloom filters are set on the way.  Partition 2, empty,
 * takes the inserts that follow.  Pages go through shared buffers and the
 * whole index is WAL-logged at the end with log_newpage_range.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include "access/xloginsert.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

/* Add a partition to the (locked, not yet logged) metapage. */
static PbtPartition *
pbt_build_add_partition(Page metapage, uint16 state, BlockNumber head)
{
	PbtMetaPageData *meta = PbtPageGetMeta(metapage);
	PbtPartition *p = &meta->parts[meta->npartitions++];

	memset(p, 0, sizeof(PbtPartition));
	p->partno = meta->next_partno++;
	p->state = state;
	p->head = head;
	p->filter_start = InvalidBlockNumber;
	p->created = GetCurrentTimestamp();
	((PageHeader) metapage)->pd_lower =
		(char *) &meta->parts[meta->npartitions] - (char *) metapage;
	return p;
}

/* A new head page over root, for partition partno */
static BlockNumber
pbt_build_head(Relation index, uint32 partno, BlockNumber root, uint32 level)
{
	Buffer		buf = pbt_new_buffer(index);
	BlockNumber head = pbt_create_tree(index, partno, root, level, &buf);

	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);
	return head;
}

/* Load the sorted entries into sealed partition p */
static void
pbt_build_sealed(Relation index, AbtSorted *st, double indtuples, PbtPartition *p)
{
	AbtTreeWriter *tw = abt_tree_writer_begin(index, 100, 100, p->partno, false);
	PbtFilterBuild *fb = pbt_filter_begin(index, (uint64) indtuples);
	IndexTuple	itup;
	BlockNumber root;
	uint32		level;

	while ((itup = abt_sorted_next(st)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		pbt_filter_add(fb, itup);
		abt_tree_writer_add(tw, itup);
		if (++p->ntuples % 10000 == 0)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, p->ntuples);
	}
	root = abt_tree_writer_finish(tw, &level);
	p->head = pbt_build_head(index, p->partno, root, level);
	pbt_filter_write(fb, p->partno, p, false);
}

IndexBuildResult *
pbtbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result = palloc(sizeof(IndexBuildResult));
	Buffer		metabuf;
	AbtSorted  *st;
	PbtPartition sealed;
	PbtPartition *p;
	double		reltuples;
	double		indtuples;
	uint32		mutable_partno;

	abt_require_preload();
	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	metabuf = abt_new_buffer_fork(index, MAIN_FORKNUM);
	Assert(BufferGetBlockNumber(metabuf) == PBT_METAPAGE);
	pbt_init_metapage(BufferGetPage(metabuf));
	MarkBufferDirty(metabuf);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	st = abt_sorted_begin(heap, index, indexInfo, &reltuples, &indtuples);
	memset(&sealed, 0, sizeof(sealed));
	if (indtuples > 0)
	{
		/* partition 1: the build; its number is the first one given out */
		sealed.partno = 1;
		pbt_build_sealed(index, st, indtuples, &sealed);
	}
	abt_sorted_end(st);

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	if (indtuples > 0)
	{
		p = pbt_build_add_partition(BufferGetPage(metabuf), PBT_SEALED, sealed.head);
		Assert(p->partno == 1);
		sealed.created = p->created;
		sealed.state = PBT_SEALED;
		*p = sealed;
	}
	else
		PbtPageGetMeta(BufferGetPage(metabuf))->next_partno = 2;
	mutable_partno = PbtPageGetMeta(BufferGetPage(metabuf))->next_partno;
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
	/* the head page is allocated without the metapage locked (pbt_new_buffer) */
	{
		BlockNumber head = pbt_build_head(index, mutable_partno, InvalidBlockNumber, 0);

		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		p = pbt_build_add_partition(BufferGetPage(metabuf), PBT_MUTABLE, head);
		Assert(p->partno == mutable_partno);
		MarkBufferDirty(metabuf);
		UnlockReleaseBuffer(metabuf);
	}

	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, RelationGetNumberOfBlocks(index), true);

	result->heap_tuples = reltuples;
	result->index_tuples = indtuples;
	return result;
}

/* The init fork of an unlogged index: a directory with one empty mutable partition. */
void
pbtbuildempty(Relation index)
{
	Buffer		metabuf;
	Buffer		headbuf;
	PbtPartition *p;

#if PG_VERSION_NUM >= 160000
	metabuf = ExtendBufferedRel(BMR_REL(index), INIT_FORKNUM, NULL,
								EB_SKIP_EXTENSION_LOCK | EB_LOCK_FIRST);
	headbuf = ExtendBufferedRel(BMR_REL(index), INIT_FORKNUM, NULL,
								EB_SKIP_EXTENSION_LOCK | EB_LOCK_FIRST);
#else
	metabuf = ReadBufferExtended(index, INIT_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	headbuf = ReadBufferExtended(index, INIT_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(headbuf, BUFFER_LOCK_EXCLUSIVE);
#endif
	START_CRIT_SECTION();
	pbt_init_metapage(BufferGetPage(metabuf));
	PbtPageGetMeta(BufferGetPage(metabuf))->next_partno = 2;
	p = pbt_build_add_partition(BufferGetPage(metabuf), PBT_MUTABLE,
								BufferGetBlockNumber(headbuf));
	(void) pbt_create_tree(index, p->partno, InvalidBlockNumber, 0, &headbuf);
	MarkBufferDirty(metabuf);
	MarkBufferDirty(headbuf);
	log_newpage_buffer(metabuf, true);
	log_newpage_buffer(headbuf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(headbuf);
	UnlockReleaseBuffer(metabuf);
}
