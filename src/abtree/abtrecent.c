/*-------------------------------------------------------------------------
 *
 * abtrecent.c
 *	  Reads issued ahead, and where a block was last seen in shared
 *	  buffers, before PostgreSQL 17's read streams (issue 21).
 *
 * A draw reads a random leaf and a random heap page.  With the pages
 * cached, what such a read costs is its cache misses, and the
 * buffer-mapping look-up (a shared hash table larger than the CPU's
 * caches) was the biggest of them: a quarter of swr(1000) on 10M rows
 * (bench/results/recent_buffer_profile.md).  So the buffer each block was
 * read in is remembered, and a reader checks that buffer
 * first: ReadRecentBuffer verifies the buffer's tag under its header
 * lock before pinning, so a block evicted or moved since costs only the
 * fallback, and a remembered buffer is never more than a hint.
 *
 * The hints are one table in shared memory, four-way set associative (a
 * set is a cache line), of 2 * NBuffers entries (at least 1,024, at most
 * 2^20: 16 bytes each, 4 MB with 1 GB of shared buffers), so that a
 * backend finds the buffers other backends read (a new connection's first
 * sample too).  An entry is (block, relation file number, database,
 * buffer); any backend writes it without a lock when it read the block
 * some other way, and a torn or stale entry is only a wrong hint.
 * Temporary relations (local buffers) get no hints.  The table is read at
 * random and is larger than a core's cache (it is on huge pages when
 * shared memory is), so the readers ask for the hint of a block a few
 * blocks before they get to it (abt_hint_prefetch).  Measured in
 * bench/results/full/buffer_hints.md.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#if PG_VERSION_NUM < 170000

#include "common/hashfn.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "storage/shmem.h"
#include "utils/rel.h"


/*
 * One hint.  Written and read without a lock, by any backend: a reader
 * may see a mix of two writers' fields, which is as harmless as any other
 * wrong hint once buf is checked to be a buffer (abt_hinted).
 */
typedef struct AbtHint
{
	BlockNumber blkno;
	Oid			rel;			/* the relation file's number */
	Oid			db;
	int32		buf;			/* 0: empty */
} AbtHint;

#define ABT_HINT_WAYS		4	/* a set: one 64-byte cache line */
#define ABT_HINT_MIN		1024
#define ABT_HINT_MAX		(1 << 20)

static AbtHint *abt_hints;		/* NULL: no shared table (not preloaded) */
static uint32 abt_hint_mask;	/* entries - 1 */
static uint32 abt_hint_victim;	/* which way of a full set a new entry takes */

static uint32
abt_hint_entries(void)
{
	uint32		n = ABT_HINT_MIN;

	while (n < ABT_HINT_MAX && n < 2 * (uint32) Min(NBuffers, ABT_HINT_MAX))
		n <<= 1;
	return n;
}

/* The table's share of shared memory (shmem.c): 16 bytes an entry. */
Size
abt_hints_shmem_size(void)
{
	return add_size(mul_size(abt_hint_entries(), sizeof(AbtHint)), PG_CACHE_LINE_SIZE);
}

/* Attach to the table, making it empty the first time (shmem.c). */
void
abt_hints_shmem_init(void)
{
	bool		found;
	char	   *mem = ShmemInitStruct("abtree buffer hints", abt_hints_shmem_size(), &found);

	if (!found)
		memset(mem, 0, abt_hints_shmem_size());
	/* sets on cache-line boundaries */
	abt_hints = (AbtHint *) TYPEALIGN(PG_CACHE_LINE_SIZE, mem);
	abt_hint_mask = abt_hint_entries() - 1;
}

/* rel's set of hints for blkno, or NULL for none (local buffers) */
static inline AbtHint *
abt_hint_set(Relation rel, BlockNumber blkno)
{
	uint32		h;

	if (abt_hints == NULL || RelationUsesLocalBuffers(rel))
		return NULL;
	h = hash_combine(murmurhash32(blkno),
					 murmurhash32(abt_file_rel(rel) ^ (abt_file_db(rel) << 16)));
	return &abt_hints[h & abt_hint_mask & ~(uint32) (ABT_HINT_WAYS - 1)];
}

static inline bool
abt_hint_is(const AbtHint *h, Relation rel, BlockNumber blkno)
{
	return h->blkno == blkno && h->rel == abt_file_rel(rel) && h->db == abt_file_db(rel);
}

/*
 * The buffer (rel, blkno) was last seen in, unchecked (abt_read_recent
 * checks it), or InvalidBuffer.
 */
Buffer
abt_hinted(Relation rel, BlockNumber blkno)
{
	AbtHint    *set = abt_hint_set(rel, blkno);

	if (set == NULL)
		return InvalidBuffer;
	for (int i = 0; i < ABT_HINT_WAYS; i++)
	{
		volatile AbtHint *h = &set[i];
		int32		buf = h->buf;

		if (abt_hint_is((const AbtHint *) h, rel, blkno))
			return buf >= 1 && buf <= NBuffers ? buf : InvalidBuffer;
	}
	return InvalidBuffer;
}

static void
abt_hint_put(Relation rel, BlockNumber blkno, Buffer buf)
{
	AbtHint    *set = abt_hint_set(rel, blkno);
	int			way = -1;

	if (set == NULL || buf <= 0)
		return;
	/* the entry of this block, else an empty one, else each way in turn */
	for (int i = 0; i < ABT_HINT_WAYS; i++)
	{
		if (abt_hint_is(&set[i], rel, blkno))
		{
			way = i;
			break;
		}
		if (set[i].buf == 0 && way < 0)
			way = i;
	}
	if (way < 0)
		way = abt_hint_victim++ % ABT_HINT_WAYS;
	set[way].buf = buf;
	set[way].blkno = blkno;
	set[way].rel = abt_file_rel(rel);
	set[way].db = abt_file_db(rel);
}

/*
 * Ask the CPU for the hint of (rel, blkno), for a reader that will prepare
 * that block's read a few blocks later: the table is too large for the
 * caches (bench/results/buffer_hints_profile.md).
 */
void
abt_hint_prefetch(Relation rel, BlockNumber blkno)
{
	AbtHint    *set = abt_hint_set(rel, blkno);

	if (set != NULL)
		abt_prefetch(set);
}

/*
 * The next step for a block whose hint was asked for earlier: ask for the
 * hinted buffer's descriptor, whose tag abt_prefetch_page reads first (a
 * third of swr(1000) on 10M rows waited for it there).  The hint is not
 * checked; a wrong one costs a prefetch.
 */
void
abt_hint_prefetch_buffer(Relation rel, BlockNumber blkno)
{
	Buffer		recent = abt_hinted(rel, blkno);

	if (BufferIsValid(recent))
		abt_prefetch(GetBufferDescriptor(recent - 1));
}

/*
 * Whether buf seems to hold (rel, blkno): its tag read without the header
 * lock, which is enough for a hint (ReadRecentBuffer checks under the lock).
 */
static bool
abt_hint_holds(Relation rel, BlockNumber blkno, Buffer buf)
{
	BufferDesc *hdr = GetBufferDescriptor(buf - 1);
	BufferTag	want;
	BufferTag	seen;

#if PG_VERSION_NUM >= 160000
	InitBufferTag(&want, &abt_file_of(rel), MAIN_FORKNUM, blkno);
	seen = *(volatile BufferTag *) &hdr->tag;
	return BufferTagsEqual(&want, &seen);
#else
	INIT_BUFFERTAG(want, abt_file_of(rel), MAIN_FORKNUM, blkno);
	seen = *(volatile BufferTag *) &hdr->tag;
	return BUFFERTAGS_EQUAL(want, seen);
#endif
}

/* The hinted buffer of (rel, blkno) if it seems to hold it, else Invalid */
static Buffer
abt_hinted_holding(Relation rel, BlockNumber blkno)
{
	Buffer		recent = abt_hinted(rel, blkno);

	if (BufferIsValid(recent) && !abt_hint_holds(rel, blkno, recent))
		return InvalidBuffer;
	return recent;
}

/*
 * Prepare a read of blkno that a reader will do soon.  When the block was
 * last seen in a buffer that still seems to hold it (its tag read without
 * the lock), that buffer is returned without a look-up; otherwise
 * PrefetchBuffer looks the block up (and for a block not cached starts its
 * read, which is why a stale hint is not simply passed on) and returns the
 * buffer it found it in.  The reader passes the result to abt_read_recent.
 * For a cached block, also ask the CPU for what the reader touches first:
 * the buffer's descriptor (the pin), the page header and line pointers,
 * and with tail the end of the page (an abtree page's special space).
 * Returns InvalidBuffer for a block not cached, and always for a temporary
 * relation (ReadRecentBuffer mishandled local buffers in some minor
 * releases).
 */
Buffer
abt_prefetch_page(Relation rel, BlockNumber blkno, bool tail)
{
	Buffer		recent = abt_hinted_holding(rel, blkno);

	if (!BufferIsValid(recent))
	{
		recent = PrefetchBuffer(rel, MAIN_FORKNUM, blkno).recent_buffer;
		if (BufferIsLocal(recent))
			return InvalidBuffer;
		abt_hint_put(rel, blkno, recent);
	}
	if (BufferIsValid(recent))
	{
		char	   *page = (char *) BufferGetPage(recent);

		abt_prefetch_write(GetBufferDescriptor(recent - 1));
		abt_prefetch(page);
		abt_prefetch(page + 64);
		if (tail)
			abt_prefetch(page + BLCKSZ - 1);
	}
	return recent;
}

/*
 * ReadBuffer(rel, blkno), through recent (from abt_prefetch_page) when it
 * still holds the block, and remembering the buffer otherwise.
 * ReadRecentBuffer checks the buffer's tag under its header lock before
 * pinning, so a buffer evicted or reused since costs only the fallback.
 * It does not count the read in the relation's statistics as ReadBuffer
 * does (pg_statio_*), so this does.
 */
Buffer
abt_read_recent(Relation rel, BlockNumber blkno, Buffer recent)
{
	Buffer		buf;

	if (BufferIsValid(recent) &&
		ReadRecentBuffer(abt_file_of(rel), MAIN_FORKNUM, blkno, recent))
	{
		pgstat_count_buffer_read(rel);
		pgstat_count_buffer_hit(rel);
		return recent;
	}
	buf = ReadBuffer(rel, blkno);
	abt_hint_put(rel, blkno, buf);
	return buf;
}

/*
 * ReadBuffer(rel, blkno) for a reader that did not prepare the read: the
 * descents of inserts, passes and scans, and the sketch pages, which visit
 * the same upper pages over and over and so nearly always find them where
 * they were (bench/results/insert_hints.md).  A hint whose buffer no
 * longer seems to hold the block (its tag read without the lock) is not
 * tried, so a stale hint costs a descriptor read and the fallback, not a
 * header lock taken in vain.
 */
Buffer
abt_read_hinted(Relation rel, BlockNumber blkno)
{
	Buffer		recent = abt_hinted(rel, blkno);

	/*
	 * Ask for the page's header and special space (abt_check_page's first
	 * touches) before the descriptor's tag is read: on a leaf, which is
	 * rarely in the core's cache, their misses overlap the descriptor's
	 * instead of following it.  A wrong hint costs the prefetches.
	 */
	if (BufferIsValid(recent))
	{
		char	   *page = (char *) BufferGetPage(recent);

		abt_prefetch(page);
		abt_prefetch(page + BLCKSZ - 1);
		if (!abt_hint_holds(rel, blkno, recent))
			recent = InvalidBuffer;
	}
	return abt_read_recent(rel, blkno, recent);
}

#else							/* PG_VERSION_NUM >= 170000 */

/*
 * From 17 on, plain ReadBuffer: the hints are for 15 and 16, and a
 * descent's look-ups are left as they are.
 */
Buffer
abt_read_hinted(Relation rel, BlockNumber blkno)
{
	return ReadBuffer(rel, blkno);
}

/* From 17 on the read streams look blocks up: no hints. */
Size
abt_hints_shmem_size(void)
{
	return 0;
}

void
abt_hints_shmem_init(void)
{
}

#endif							/* PG_VERSION_NUM < 170000 */
