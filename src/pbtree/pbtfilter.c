/*-------------------------------------------------------------------------
 *
 * pbtfilter.c
 *	  Bloom filters of sealed pbtree partitions (paper 001, section 5).
 *
 * A sealed partition has up to two filters, written after its tree when it
 * is sealed or merged: one over the whole key (for "=" on every key
 * column) and, for multi-column indexes, one over the leading column (for
 * "=" on it alone: the paper's prefix filter, which covers the range of
 * keys that share a leading value).  A lookup that a filter rules out does
 * not descend into the partition at all.
 *
 * The filters are blocked: the key's hash picks one filter page, and all
 * its bits are on that page, so a test reads one page.  With b bits per
 * entry (abtree.pbtree_filter_bits, default 10) each key sets
 * k = round(b ln 2) bits; the false-positive rate is about (set bits /
 * bits)^k, which pbtree_stats reports per partition.
 *
 * The hash of a column is its type's extended hash function, used only when
 * the type's default hash opclass has the same equality operator as the
 * index's operator class: values that are equal for the index then hash
 * alike, so a filter never rules out a key the partition holds.  Keys with
 * a NULL are left out: "=" never matches NULL.
 *
 *-------------------------------------------------------------------------
 */
#include "pbtree.h"

#include <math.h>

#include "access/hash.h"
#include "access/stratnum.h"
#include "access/xloginsert.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/typcache.h"

int			pbt_filter_bits = 10;

#define PBT_FILTER_BYTES \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(AbtPageOpaqueData)))
#define PBT_FILTER_PAGE_BITS	((uint64) PBT_FILTER_BYTES * 8)

struct PbtFilterBuild
{
	Relation	rel;
	int			nfilters;
	int			ncols;			/* key columns hashed by filter 0 */
	FmgrInfo	procs[INDEX_MAX_KEYS];
	Oid			colls[INDEX_MAX_KEYS];
	uint32		npages;			/* per filter */
	uint32		k;
	char	   *bits[2];		/* npages * PBT_FILTER_BYTES each */
};

/*
 * The extended hash function of key column i, if it is consistent with the
 * index's equality (see the file header).
 */
static bool
pbt_column_hash(Relation rel, int i, FmgrInfo *proc)
{
	Oid			type = rel->rd_opcintype[i];
	Oid			eq = get_opfamily_member(rel->rd_opfamily[i], type, type,
										 BTEqualStrategyNumber);
	TypeCacheEntry *tc;

	if (!OidIsValid(eq))
		return false;
	tc = lookup_type_cache(type, TYPECACHE_HASH_EXTENDED_PROC_FINFO |
						   TYPECACHE_HASH_OPFAMILY);
	if (!OidIsValid(tc->hash_extended_proc) || !OidIsValid(tc->hash_opf) ||
		get_opfamily_member(tc->hash_opf, type, type, HTEqualStrategyNumber) != eq)
		return false;
	if (proc)
		fmgr_info_copy(proc, &tc->hash_extended_proc_finfo, CurrentMemoryContext);
	return true;
}

/*
 * Which filters can this index have?  *nfilters: 0 none, 1 the whole key
 * (a single-column index, or the leading column only), 2 both.  Returns
 * false when there are none.
 */
bool
pbt_filter_columns(Relation rel, int *nfilters)
{
	int			nkeys = IndexRelationGetNumberOfKeyAttributes(rel);
	bool		all = true;

	for (int i = 0; i < nkeys; i++)
		if (!pbt_column_hash(rel, i, NULL))
			all = false;
	if (all)
		*nfilters = nkeys > 1 ? 2 : 1;
	else
		*nfilters = 0;
	return *nfilters > 0;
}

/* The hash of the first ncols values (none NULL) */
uint64
pbt_filter_hash(Relation rel, int ncols, Datum *values, Oid *colls, FmgrInfo *procs)
{
	uint64		h = 0;

	for (int i = 0; i < ncols; i++)
	{
		uint64		c = DatumGetUInt64(FunctionCall2Coll(&procs[i], colls[i], values[i],
														 UInt64GetDatum(0)));

		h = i == 0 ? c : hash_combine64(h, c);
	}
	return h;
}

/* The hash procedures of all key columns (false if some has none) */
bool
pbt_filter_procs(Relation rel, FmgrInfo *procs, Oid *colls)
{
	int			nkeys = IndexRelationGetNumberOfKeyAttributes(rel);

	for (int i = 0; i < nkeys; i++)
	{
		if (!pbt_column_hash(rel, i, &procs[i]))
			return false;
		colls[i] = rel->rd_indcollation[i];
	}
	return true;
}

static uint32
pbt_filter_k(void)
{
	return Max(1, (uint32) (pbt_filter_bits * 0.6931 + 0.5));
}

/*
 * Start filters for about ntuples keys (more only raise the false-positive
 * rate).  The bits are set in memory and written by pbt_filter_write.
 */
PbtFilterBuild *
pbt_filter_begin(Relation rel, uint64 ntuples)
{
	PbtFilterBuild *fb = palloc0(sizeof(PbtFilterBuild));
	uint64		npages;

	fb->rel = rel;
	if (!pbt_filter_columns(rel, &fb->nfilters) || pbt_filter_bits == 0 || ntuples == 0)
	{
		fb->nfilters = 0;
		return fb;
	}
	fb->ncols = IndexRelationGetNumberOfKeyAttributes(rel);
	(void) pbt_filter_procs(rel, fb->procs, fb->colls);
	npages = (ntuples * pbt_filter_bits + PBT_FILTER_PAGE_BITS - 1) / PBT_FILTER_PAGE_BITS;
	fb->npages = (uint32) Max(1, Min(npages, 1 << 18));
	fb->k = pbt_filter_k();
	for (int f = 0; f < fb->nfilters; f++)
		fb->bits[f] = palloc_extended((Size) fb->npages * PBT_FILTER_BYTES,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	return fb;
}

static void pbt_filter_bits_of(uint64 h, uint32 k, uint32 *bits);
static uint32 pbt_filter_page(uint64 h, uint32 npages);

static void
pbt_filter_set(PbtFilterBuild *fb, int f, uint64 h)
{
	uint32		pos[64];
	char	   *pagebits = fb->bits[f] + (Size) pbt_filter_page(h, fb->npages) * PBT_FILTER_BYTES;

	pbt_filter_bits_of(h, fb->k, pos);
	for (uint32 i = 0; i < fb->k; i++)
		pagebits[pos[i] / 8] |= 1 << (pos[i] % 8);
}

/* Add the key of a leaf tuple */
void
pbt_filter_add(PbtFilterBuild *fb, IndexTuple itup)
{
	TupleDesc	desc = RelationGetDescr(fb->rel);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	bool		anynull = false;

	if (fb->nfilters == 0)
		return;
	for (int i = 0; i < fb->ncols; i++)
	{
		values[i] = index_getattr(itup, i + 1, desc, &isnull[i]);
		anynull |= isnull[i];
	}
	if (!anynull)
		pbt_filter_set(fb, 0, pbt_filter_hash(fb->rel, fb->ncols, values, fb->colls,
											  fb->procs));
	if (fb->nfilters == 2 && !isnull[0])
		pbt_filter_set(fb, 1, pbt_filter_hash(fb->rel, 1, values, fb->colls, fb->procs));
}

/* Where a hash goes: the page, and the k bit positions on it */
static uint32
pbt_filter_page(uint64 h, uint32 npages)
{
	return (uint32) (h % npages);
}

static void
pbt_filter_bits_of(uint64 h, uint32 k, uint32 *bits)
{
	/* a second, independent-looking hash for the bits on the page */
	uint64		g = hash_bytes_uint32_extended((uint32) (h >> 32), h);
	uint32		h1 = (uint32) g;
	uint32		h2 = (uint32) (g >> 32) | 1;

	for (uint32 i = 0; i < k; i++)
		bits[i] = (uint32) (((uint64) h1 + (uint64) i * h2) % PBT_FILTER_PAGE_BITS);
}

/* A new page at the end of the index; the caller holds the extension lock */
static Buffer
pbt_extend_one(Relation rel)
{
	Buffer		buf;

#if PG_VERSION_NUM >= 160000
	buf = ExtendBufferedRel(BMR_REL(rel), MAIN_FORKNUM, NULL,
							EB_SKIP_EXTENSION_LOCK | EB_LOCK_FIRST);
#else
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
#endif
	return buf;
}

/*
 * Write the filters on contiguous new pages (WAL-logged one by one if
 * log_pages; a bulk build logs everything at its end) and describe them in
 * *part.
 */
void
pbt_filter_write(PbtFilterBuild *fb, uint32 partno, PbtPartition *part, bool log_pages)
{
	part->nfilters = 0;
	part->filter_start = InvalidBlockNumber;
	part->filter_pages = 0;
	part->hashes = 0;
	if (fb->nfilters == 0)
		return;
	/*
	 * The pages must be contiguous (a test computes its page): extend page
	 * by page holding the extension lock, writing each at once, so that no
	 * more than one buffer is locked or pinned at a time.
	 */
	LockRelationForExtension(fb->rel, ExclusiveLock);
	for (int f = 0; f < fb->nfilters; f++)
	{
		uint64		set = 0;

		for (uint32 p = 0; p < fb->npages; p++)
		{
			Buffer		buf = pbt_extend_one(fb->rel);
			Page		page = BufferGetPage(buf);
			char	   *src = fb->bits[f] + (Size) p * PBT_FILTER_BYTES;

			if (f == 0 && p == 0)
				part->filter_start = BufferGetBlockNumber(buf);
			else if (BufferGetBlockNumber(buf) != part->filter_start + f * fb->npages + p)
				elog(ERROR, "pbtree: filter pages are not contiguous");
			for (Size b = 0; b < PBT_FILTER_BYTES; b++)
				set += pg_number_of_ones[(uint8) src[b]];
			START_CRIT_SECTION();
			abt_init_page(page, 0, ABTP_FILTER);
			PbtPageGetPartno(page) = partno;
			memcpy(PageGetContents(page), src, PBT_FILTER_BYTES);
			((PageHeader) page)->pd_lower = PageGetContents(page) + PBT_FILTER_BYTES - (char *) page;
			MarkBufferDirty(buf);
			if (log_pages && RelationNeedsWAL(fb->rel))
				log_newpage_buffer(buf, true);
			END_CRIT_SECTION();
			UnlockReleaseBuffer(buf);
		}
		part->bits_set[f] = set;
		pfree(fb->bits[f]);
	}
	UnlockRelationForExtension(fb->rel, ExclusiveLock);
	part->nfilters = fb->nfilters;
	part->filter_pages = fb->npages;
	part->hashes = fb->k;
}

/* Might the partition hold a key with this hash?  which: 0 key, 1 leading */
bool
pbt_filter_test(Relation rel, PbtPartition *part, int which, uint64 hash)
{
	BlockNumber blkno;
	Buffer		buf;
	char	   *pagebits;
	uint32		pos[64];
	bool		maybe = true;

	if (part->state != PBT_SEALED || which >= part->nfilters)
		return true;
	blkno = part->filter_start + which * part->filter_pages +
		pbt_filter_page(hash, part->filter_pages);
	buf = ReadBuffer(rel, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	abt_check_page(rel, buf);
	if (!(AbtPageGetOpaque(BufferGetPage(buf))->flags & ABTP_FILTER))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has no filter page at block %u",
						RelationGetRelationName(rel), blkno),
				 errhint("REINDEX the index.")));
	pagebits = PageGetContents(BufferGetPage(buf));
	pbt_filter_bits_of(hash, part->hashes, pos);
	for (uint32 i = 0; i < part->hashes && maybe; i++)
		maybe = (pagebits[pos[i] / 8] & (1 << (pos[i] % 8))) != 0;
	UnlockReleaseBuffer(buf);
	return maybe;
}

/* Expected false-positive rate of a filter */
double
pbt_filter_fpr(PbtPartition *part, int which)
{
	double		frac;

	if (which >= part->nfilters || part->filter_pages == 0)
		return 1.0;
	frac = (double) part->bits_set[which] /
		((double) part->filter_pages * PBT_FILTER_PAGE_BITS);
	return pow(frac, part->hashes);
}
