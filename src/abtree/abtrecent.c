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
 * (bench/results/recent_buffer_profile.md).  So a backend remembers, per
 * block it read, the buffer the block was in, and checks that buffer
 * first: ReadRecentBuffer verifies the buffer's tag under its header
 * lock before pinning, so a block evicted or moved since costs only the
 * fallback, and a remembered buffer is never more than a hint.
 *
 * The hints are a backend-local table, eight-way set associative (a set
 * is a cache line: a block whose set is full is rare), of
 * 2 * NBuffers entries (at least 1,024, at most 2^18: 2 MB), made on
 * first use.  An entry is 64 bits: the block number, a relation's slot
 * in a list of the last 15 relation files read this way, and the buffer
 * (28 bits: with 2^28 or more shared buffers there are no hints).  When
 * a sixteenth file comes, the table starts over.  Temporary relations
 * (local buffers) get no hints.  The table is read at random and is
 * larger than a core's cache, so it sits on a transparent huge page where
 * the system allows that (abt_hints_alloc), and the readers ask for the
 * hint of a block a few blocks before they get to it (abt_hint_prefetch).
 * While hints keep being right they are trusted until ReadRecentBuffer
 * checks them (abt_hint_outcome).  Measured in
 * bench/results/buffer_hints_profile.md.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#if PG_VERSION_NUM < 170000

#include <sys/mman.h>

#include "common/hashfn.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#if PG_VERSION_NUM >= 160000
typedef RelFileLocator AbtFileId;
#define abt_file_of(rel)		((rel)->rd_locator)
#define abt_files_equal(a, b)	RelFileLocatorEquals(a, b)
#else
typedef RelFileNode AbtFileId;
#define abt_file_of(rel)		((rel)->rd_node)
#define abt_files_equal(a, b)	RelFileNodeEquals(a, b)
#endif

#define ABT_HINT_FILES		15
#define ABT_HINT_WAYS		8		/* a set: one 64-byte cache line */
#define ABT_HINT_BUF_BITS	28
#define ABT_HINT_MIN		1024
#define ABT_HINT_MAX		(1 << 18)

static uint64 *abt_hints;		/* NULL: not made yet, or no hints */
static uint32 abt_hint_mask;	/* entries - 1 */
static bool abt_hints_off;
static AbtFileId abt_hint_files[ABT_HINT_FILES];
static int	abt_hint_nfiles;
static int	abt_hint_last;		/* the slot found last */
static uint32 abt_hint_victim;	/* which way of a set a new entry takes */
static int	abt_hint_stale;		/* recent stale hints, weighted (below) */

/*
 * Zeroed memory for the table, for the backend's life.  Its entries are
 * read at random, one per block, so on Linux ask for transparent huge
 * pages where the system allows them on request (enabled = madvise or
 * always): with 4 kB pages, the table's 2 MB need 512 TLB entries, which
 * the random page reads keep evicting.
 */
static uint64 *
abt_hints_alloc(Size size)
{
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
	Size		huge = 2 * 1024 * 1024;

	if (size >= huge)
	{
		/* map one huge page more, to start on a huge page's boundary */
		char	   *p = mmap(NULL, size + huge, PROT_READ | PROT_WRITE,
							 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED)
		{
			char	   *aligned = (char *) TYPEALIGN(huge, p);

			(void) madvise(aligned, size, MADV_HUGEPAGE);
			return (uint64 *) aligned;	/* anonymous memory reads as zeros */
		}
	}
#endif
	/* sets on cache-line boundaries */
	return (uint64 *) TYPEALIGN(PG_CACHE_LINE_SIZE,
								MemoryContextAllocZero(TopMemoryContext,
													   size + PG_CACHE_LINE_SIZE));
}

static bool
abt_hints_make(void)
{
	uint32		n = ABT_HINT_MIN;

	if (abt_hints_off || NBuffers >= (1 << ABT_HINT_BUF_BITS))
	{
		abt_hints_off = true;
		return false;
	}
	while (n < ABT_HINT_MAX && n < 2 * (uint32) NBuffers)
		n <<= 1;
	abt_hints = abt_hints_alloc(n * sizeof(uint64));
	abt_hint_mask = n - 1;
	return true;
}

/* rel's slot (1..15), making one; 0 for no hints */
static int
abt_hint_file(Relation rel)
{
	int			i;

	if (RelationUsesLocalBuffers(rel) || (abt_hints == NULL && !abt_hints_make()))
		return 0;
	if (abt_hint_last > 0 &&
		abt_files_equal(abt_hint_files[abt_hint_last - 1], abt_file_of(rel)))
		return abt_hint_last;
	for (i = 0; i < abt_hint_nfiles; i++)
		if (abt_files_equal(abt_hint_files[i], abt_file_of(rel)))
			return abt_hint_last = i + 1;
	if (abt_hint_nfiles == ABT_HINT_FILES)
	{
		/* every slot taken: forget all hints rather than keep stale ones */
		memset(abt_hints, 0, (abt_hint_mask + 1) * sizeof(uint64));
		abt_hint_nfiles = 0;
	}
	abt_hint_files[abt_hint_nfiles++] = abt_file_of(rel);
	return abt_hint_last = abt_hint_nfiles;
}

/* the first entry of the set of (file, blkno) */
static inline uint32
abt_hint_set(int file, BlockNumber blkno)
{
	return hash_combine(murmurhash32(blkno), (uint32) file) & abt_hint_mask &
		~(uint32) (ABT_HINT_WAYS - 1);
}

static inline uint64
abt_hint_key(int file, BlockNumber blkno)
{
	return ((uint64) blkno << 32) | ((uint64) file << ABT_HINT_BUF_BITS);
}

/* The buffer (file, blkno) was last seen in, or InvalidBuffer. */
static Buffer
abt_hint_get(int file, BlockNumber blkno)
{
	uint64		key = abt_hint_key(file, blkno);
	uint64		mask = ~(uint64) 0 << ABT_HINT_BUF_BITS;
	uint64	   *set;

	if (file == 0)
		return InvalidBuffer;
	set = &abt_hints[abt_hint_set(file, blkno)];
	for (int i = 0; i < ABT_HINT_WAYS; i++)
		if ((set[i] & mask) == key)
			return (Buffer) (set[i] & ~mask);
	return InvalidBuffer;
}

static void
abt_hint_put(int file, BlockNumber blkno, Buffer buf)
{
	uint64		key = abt_hint_key(file, blkno);
	uint64		mask = ~(uint64) 0 << ABT_HINT_BUF_BITS;
	uint64	   *set;
	int			way = -1;

	if (file == 0 || buf <= 0)
		return;
	set = &abt_hints[abt_hint_set(file, blkno)];
	/* the entry of this block, else an empty one, else each way in turn */
	for (int i = 0; i < ABT_HINT_WAYS; i++)
	{
		if ((set[i] & mask) == key)
		{
			way = i;
			break;
		}
		if (set[i] == 0 && way < 0)
			way = i;
	}
	if (way < 0)
		way = abt_hint_victim++ % ABT_HINT_WAYS;
	set[way] = key | (uint64) buf;
}

/*
 * Ask the CPU for the hint of (rel, blkno), for a reader that will prepare
 * that block's read a few blocks later: the table is too large for the
 * caches, and its look-up was a sixth of swr(1000) on 10M rows.
 */
void
abt_hint_prefetch(Relation rel, BlockNumber blkno)
{
	int			file = abt_hint_file(rel);

	if (file > 0)
		abt_prefetch(&abt_hints[abt_hint_set(file, blkno)]);
}

/*
 * For a read not issued ahead (the first of a level, or no read-ahead):
 * the buffer blkno was last seen in, unchecked (abt_read_recent checks
 * it), or InvalidBuffer.
 */
Buffer
abt_hinted(Relation rel, BlockNumber blkno)
{
	return abt_hint_get(abt_hint_file(rel), blkno);
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

/*
 * Whether to trust hints without looking at their buffer first.  Checking
 * the tag of a hinted buffer is a cache miss the reader waits for (two
 * fifths of swr(1000) on 10M cached rows); trusting a stale hint skips
 * PrefetchBuffer, so a block evicted since is read without its read-ahead.
 * So trust while hints keep being right: each stale hint found counts 16,
 * each good one takes one off, and above 256 (about one stale hint in 16
 * lately) every hint is checked.
 */
#define ABT_HINT_STALE_COST	16
#define ABT_HINT_STALE_MAX	256

static inline void
abt_hint_outcome(bool good)
{
	if (!good)
		abt_hint_stale = Min(abt_hint_stale + ABT_HINT_STALE_COST, 2 * ABT_HINT_STALE_MAX);
	else if (abt_hint_stale > 0)
		abt_hint_stale--;
}

/*
 * Prepare a read of blkno that a reader will do soon.  When the block was
 * last seen in a buffer that still holds it, that buffer is returned
 * without a look-up (and while hints are good, without looking at it:
 * abt_read_recent checks it); otherwise PrefetchBuffer looks the block up
 * (and for a block not cached starts its read) and returns the buffer it
 * found it in.  The reader passes the result to abt_read_recent.  For a cached
 * block, also ask the CPU for what the reader touches first: the buffer's
 * descriptor (the pin), the page header and line pointers, and with tail
 * the end of the page (an abtree page's special space).  Returns
 * InvalidBuffer for a block not cached, and always for a temporary
 * relation (ReadRecentBuffer mishandled local buffers in some minor
 * releases).
 */
Buffer
abt_prefetch_page(Relation rel, BlockNumber blkno, bool tail)
{
	int			file = abt_hint_file(rel);
	Buffer		recent = abt_hint_get(file, blkno);

	if (BufferIsValid(recent) && abt_hint_stale > ABT_HINT_STALE_MAX)
	{
		bool		holds = abt_hint_holds(rel, blkno, recent);

		abt_hint_outcome(holds);
		if (!holds)
			recent = InvalidBuffer;
	}
	if (!BufferIsValid(recent))
	{
		recent = PrefetchBuffer(rel, MAIN_FORKNUM, blkno).recent_buffer;
		if (BufferIsLocal(recent))
			return InvalidBuffer;
		abt_hint_put(file, blkno, recent);
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

	if (BufferIsValid(recent))
	{
		bool		good = ReadRecentBuffer(abt_file_of(rel), MAIN_FORKNUM, blkno, recent);

		abt_hint_outcome(good);
		if (good)
		{
			pgstat_count_buffer_read(rel);
			pgstat_count_buffer_hit(rel);
			return recent;
		}
	}
	buf = ReadBuffer(rel, blkno);
	abt_hint_put(abt_hint_file(rel), blkno, buf);
	return buf;
}

#endif							/* PG_VERSION_NUM < 170000 */
