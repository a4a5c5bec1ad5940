/*-------------------------------------------------------------------------
 *
 * abtsketch.c
 *	  A counting HyperLogLog sketch per key column, kept in index pages.
 *
 * S1 (src/abtree/README, "Sketches"): the sketch of key column k counts
 * exactly the non-NULL values of column k of the valid leaf entries.  An
 * entry counts from the moment it becomes valid (MARK_VALID) until VACUUM
 * removes it, and both changes go into the same critical section and the
 * same WAL record as the sketch's, so S1 holds after any crash.  A bulk
 * build sketches every entry it writes.
 *
 * An index on two or three key columns also keeps a sketch of its whole
 * keys, in the slot a fourth column would have (abt_sketch_slot_is_key).
 *
 * A sketch (512 buckets by default, 16 to 2,048 with the reloption
 * sketch_buckets: src/hll/README) is spread over one head page (the chll
 * header and the overflow array, capped at what the page holds), a few
 * chunk pages of whole bucket records and the pages of the exact set, as
 * AbtSketchLayout says for the index's bucket count.  An insert locks the
 * head page and the one chunk its bucket is on, unless the overflow array
 * is full (then one insert may move an entry of another bucket, so it
 * locks all chunks).  Sketch pages come last in the lock order: whoever
 * holds one asks for no other lock but the next sketch page (head before
 * chunks, columns in order).  Records log the bytes that changed, so redo
 * of each page needs nothing but that page.
 *
 *-------------------------------------------------------------------------
 */
#include "abtree.h"

#include "hll/chll.h"

#include "access/relation.h"
#include "access/xloginsert.h"
#include "access/xlogutils.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/typcache.h"

StaticAssertDecl(CHLL_HEADER_SIZE + (1 << ABT_SKETCH_DEFAULT_LOG2M) * CHLL_ENTRY_SIZE <=
				 ABT_SKETCH_SPACE, "the head page holds one entry per bucket by default");
StaticAssertDecl(ABT_SKETCH_HEAD_ENTRIES == (ABT_SKETCH_SPACE - CHLL_HEADER_SIZE) / CHLL_ENTRY_SIZE,
				 "header and entry sizes");
StaticAssertDecl(ABT_SKETCH_MAX_NCHUNKS <= CHLL_VIEW_MAX_CHUNKS, "too many chunks");
StaticAssertDecl(ABT_SKETCH_SETPAGES(ABT_SKETCH_MAX_LOG2M) <= CHLL_VIEW_MAX_CHUNKS,
				 "too many set pages");
StaticAssertDecl(ABT_SKETCH_GROUPS_PER_PAGE >= 1, "a set group fits a page");
StaticAssertDecl(ABT_SKETCH_MAX_LOG2M <= CHLL_MAX_LOG2M, "a bucket count chll has");

/* ---- layout ---- */

/*
 * Which key columns get a sketch: with the reloption on, the first
 * ABT_SKETCH_MAX_COLS key columns whose type has an extended hash function
 * (what chll hashes with, so the index and chll_agg agree).  The bound keeps
 * a VACUUM record, which may change every page of every sketch, within
 * the block references a WAL record can carry.
 */
uint16
abt_sketch_columns(Relation index)
{
	AbtOptions *opts = (AbtOptions *) index->rd_options;
	int			nkeys = IndexRelationGetNumberOfKeyAttributes(index);
	uint16		mask = 0;

	if (opts && !opts->sketch)
		return 0;
	for (int k = 0; k < Min(nkeys, ABT_SKETCH_MAX_COLS); k++)
	{
		Oid			type = TupleDescAttr(RelationGetDescr(index), k)->atttypid;
		TypeCacheEntry *tce = lookup_type_cache(type, TYPECACHE_HASH_EXTENDED_PROC);

		if (OidIsValid(tce->hash_extended_proc))
			mask |= 1 << k;
	}
	/* the key sketch: every column hashable, and the slot no column's */
	if ((opts == NULL || opts->key_sketch) &&
		nkeys >= 2 && nkeys <= ABT_SKETCH_KEY_SLOT && mask == (1 << nkeys) - 1)
		mask |= 1 << ABT_SKETCH_KEY_SLOT;
	return mask;
}

/*
 * log2 of the bucket count a build gives the sketches: reloption
 * sketch_buckets (abtoptions checked it is a power of two in range).  An
 * index keeps the count it was built with (the metapage); ALTER INDEX SET
 * takes effect at REINDEX.
 */
static int
abt_sketch_build_log2m(Relation index)
{
	AbtOptions *opts = (AbtOptions *) index->rd_options;

	if (opts == NULL || opts->sketch_buckets <= 0)
		return ABT_SKETCH_DEFAULT_LOG2M;
	return pg_leftmost_one_pos32((uint32) opts->sketch_buckets);
}

/* An empty sketch as an index keeps it: its overflow array fits the head page */
void
abt_sketch_init(uint8 *sk, int log2m)
{
	AbtSketchLayout lay;

	abt_sketch_layout(log2m, &lay);
	chll_init_capacity(sk, log2m, lay.capacity);
}

/*
 * Is slot k the key sketch?  Only an index with fewer key columns than
 * slots has one, in the last slot, which no column of it can use; so an
 * index built before key sketches existed reads as it was.
 */
static inline bool
abt_sketch_slot_is_key(Relation rel, int k)
{
	return k == ABT_SKETCH_KEY_SLOT &&
		IndexRelationGetNumberOfKeyAttributes(rel) <= ABT_SKETCH_KEY_SLOT;
}

bool
abt_sketch_has_key(Relation rel)
{
	return abt_sketch_slot_is_key(rel, ABT_SKETCH_KEY_SLOT) &&
		abt_sketch_has_column(rel, ABT_SKETCH_KEY_SLOT);
}

/*
 * The key sketch's hash of a whole key from its columns' hashes: a NULL is
 * a value of its own, as GROUP BY and DISTINCT have it, and the mix after
 * each column makes (x, y) and (y, x) two keys.  The column hashes are
 * already mixed (chll_hash_datum), so distinct keys collide only as two
 * 64-bit hashes do.
 */
static uint64
abt_sketch_key_hash(const uint64 *hash, const bool *isnull, int nkeys)
{
	uint64		h = UINT64CONST(0x6a09e667f3bcc908);

	for (int k = 0; k < nkeys; k++)
		h = chll_mix64(h ^ (isnull[k] ? UINT64CONST(0x243f6a8885a308d3) : hash[k]));
	return h;
}

/* First page of column k's sketch; the caller checked that it has one */
BlockNumber
abt_sketch_first_page(AbtIndexInfo *info, int k)
{
	int			rank = pg_popcount32(info->sketch_mask & ((1 << k) - 1));

	return info->sketch_start + rank * ABT_SKETCH_PAGES(info->sketch_log2m);
}

/*
 * Read the layout from the metapage once, and the hash functions.  The
 * type cache look-ups come first: a catalog access may process a relcache
 * invalidation of the index, which frees rd_amcache (VACUUM of the table
 * sends one), so nothing may hold the AbtIndexInfo pointer across them.
 */
AbtIndexInfo *
abt_sketch_info(Relation rel)
{
	AbtIndexInfo *info = abt_index_info(rel);
	FmgrInfo   *hash[ABT_SKETCH_MAX_COLS] = {0};
	AbtMetaPageData meta;

	if (info->sketch_loaded)
		return info;
	abt_read_meta(rel, &meta);
	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		if ((meta.sketch_mask & (1 << k)) == 0 || abt_sketch_slot_is_key(rel, k))
			continue;
		hash[k] = &lookup_type_cache(TupleDescAttr(RelationGetDescr(rel), k)->atttypid,
									 TYPECACHE_HASH_EXTENDED_PROC_FINFO)->hash_extended_proc_finfo;
	}
	/* no catalog access from here on: the pointer stays valid */
	info = abt_index_info(rel);
	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
		if (hash[k])
			fmgr_info_copy(&info->sketch_hash[k], hash[k], rel->rd_indexcxt);
	info->sketch_mask = meta.sketch_mask;
	info->sketch_start = meta.sketch_start;
	info->sketch_log2m = meta.sketch_log2m != 0 ? meta.sketch_log2m : ABT_SKETCH_V3_LOG2M;
	if (info->sketch_log2m < ABT_SKETCH_MIN_LOG2M || info->sketch_log2m > ABT_SKETCH_MAX_LOG2M)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has sketches of 2^%d buckets, not %d to %d",
						RelationGetRelationName(rel), info->sketch_log2m,
						1 << ABT_SKETCH_MIN_LOG2M, 1 << ABT_SKETCH_MAX_LOG2M),
				 errhint("REINDEX the index.")));
	info->sketch_loaded = true;
	return info;
}

bool
abt_sketch_has_column(Relation rel, int k)
{
	return k >= 0 && k < ABT_SKETCH_MAX_COLS &&
		(abt_sketch_info(rel)->sketch_mask & (1 << k)) != 0;
}

/*
 * The hashes of an entry's sketched columns (may palloc: not in a critical
 * section).  A hash function may look up its collation, and so process an
 * invalidation that frees rd_amcache: the functions are copied first.
 */
void
abt_sketch_hash_tuple(Relation rel, IndexTuple itup, AbtSketchHashes *h)
{
	AbtIndexInfo *info = abt_sketch_info(rel);
	uint16		mask = info->sketch_mask;
	FmgrInfo	hash[ABT_SKETCH_MAX_COLS];
	bool		isnull[ABT_SKETCH_MAX_COLS];

	memcpy(hash, info->sketch_hash, sizeof(hash));
	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		Datum		value;

		h->present[k] = false;
		if ((mask & (1 << k)) == 0 || abt_sketch_slot_is_key(rel, k))
			continue;
		value = index_getattr(itup, k + 1, RelationGetDescr(rel), &isnull[k]);
		if (isnull[k])
			continue;
		h->hash[k] = chll_hash_datum(&hash[k], rel->rd_indcollation[k], value);
		h->present[k] = true;
	}
	if ((mask & (1 << ABT_SKETCH_KEY_SLOT)) && abt_sketch_slot_is_key(rel, ABT_SKETCH_KEY_SLOT))
	{
		h->hash[ABT_SKETCH_KEY_SLOT] =
			abt_sketch_key_hash(h->hash, isnull, IndexRelationGetNumberOfKeyAttributes(rel));
		h->present[ABT_SKETCH_KEY_SLOT] = true;
	}
}

/* ---- pages ---- */

static void
abt_sketch_init_page(Page page, int k, int chunk, const uint8 *bytes, Size len)
{
	AbtPageOpaque opaque;

	abt_init_page(page, 0, ABTP_SKETCH);
	opaque = AbtPageGetOpaque(page);
	opaque->prev = k;			/* sketch pages: the column, the chunk */
	opaque->next = chunk;
	memcpy(abt_sketch_data(page), bytes, len);
	((PageHeader) page)->pd_lower = (char *) abt_sketch_data(page) + len - (char *) page;
}

/* Set page s (0-based): its first group and how many it holds */
static inline Size
abt_sketch_group_off(const AbtSketchLayout *lay, int g)
{
	return chll_set_offset(lay->log2m) + (Size) g * CHLL_SET_GROUP_SIZE;
}

/*
 * Pages of one sketch from its flat bytes: chunk 0 is the head page
 * (header and overflow array), chunks 1.. the bucket records, and from
 * lay->first_setpage on the groups of the exact set.
 */
void
abt_sketch_fill_page(Page page, const AbtSketchLayout *lay, int k, int chunk, const uint8 *sk)
{
	int			m = 1 << lay->log2m;
	int			first,
				n;

	if (chunk >= lay->first_setpage)
	{
		n = abt_sketch_set_groups(lay, chunk - lay->first_setpage, &first);
		abt_sketch_init_page(page, k, chunk, sk + abt_sketch_group_off(lay, first),
							 (Size) n * CHLL_SET_GROUP_SIZE);
		return;
	}
	if (chunk == 0)
	{
		PGAlignedBlock tmp;
		Size		ovf = (Size) lay->capacity * CHLL_ENTRY_SIZE;

		Assert(chll_get16(sk + CHLL_OFF_OVF_CAPACITY) == lay->capacity);
		memcpy(tmp.data, sk, CHLL_HEADER_SIZE);
		memcpy(tmp.data + CHLL_HEADER_SIZE,
			   sk + CHLL_HEADER_SIZE + (Size) m * CHLL_BUCKET_SIZE, ovf);
		abt_sketch_init_page(page, k, 0, (uint8 *) tmp.data, CHLL_HEADER_SIZE + ovf);
		return;
	}
	first = (chunk - 1) * ABT_SKETCH_PER_CHUNK;
	n = Min(ABT_SKETCH_PER_CHUNK, m - first);
	abt_sketch_init_page(page, k, chunk,
						 sk + CHLL_HEADER_SIZE + (Size) first * CHLL_BUCKET_SIZE,
						 (Size) n * CHLL_BUCKET_SIZE);
}

/*
 * Append the sketch pages of a new index (fork MAIN or INIT) after the
 * tree, from the sketches of a build (NULL: empty ones), and note where
 * they are in the metapage (held exclusively by the caller).  Build logs the pages with the rest; the init
 * fork logs them here.
 */
void
abt_sketch_write_pages(Relation index, ForkNumber fork, AbtSketchBuild *sb,
					   AbtMetaPageData *meta)
{
	uint16		mask = abt_sketch_columns(index);
	AbtSketchLayout lay;
	uint8	   *empty;

	abt_sketch_layout(abt_sketch_build_log2m(index), &lay);
	empty = palloc(chll_sketch_size(lay.log2m));
	abt_sketch_init(empty, lay.log2m);
	meta->sketch_mask = mask;
	meta->sketch_start = InvalidBlockNumber;
	meta->sketch_log2m = lay.log2m;
	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		if ((mask & (1 << k)) == 0)
			continue;
		for (int c = 0; c < lay.pages; c++)
		{
			Buffer		buf = abt_new_buffer_fork(index, fork);

			if (meta->sketch_start == InvalidBlockNumber)
				meta->sketch_start = BufferGetBlockNumber(buf);
			START_CRIT_SECTION();
			abt_sketch_fill_page(BufferGetPage(buf), &lay, k, c,
								 (sb && sb->sk[k]) ? sb->sk[k] : empty);
			MarkBufferDirty(buf);
			if (fork == INIT_FORKNUM)
				log_newpage_buffer(buf, true);
			END_CRIT_SECTION();
			UnlockReleaseBuffer(buf);
		}
	}
	pfree(empty);
}

/* Build: flat sketches in memory, one per sketched column */
AbtSketchBuild *
abt_sketch_build_begin(Relation index)
{
	uint16		mask = abt_sketch_columns(index);
	int			log2m = abt_sketch_build_log2m(index);
	AbtSketchBuild *sb = palloc0(sizeof(AbtSketchBuild));

	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		TypeCacheEntry *tce;

		if ((mask & (1 << k)) == 0)
			continue;
		sb->sk[k] = palloc(chll_sketch_size(log2m));
		abt_sketch_init(sb->sk[k], log2m);
		chll_view_flat(&sb->view[k], sb->sk[k]);
		if (abt_sketch_slot_is_key(index, k))
			continue;
		tce = lookup_type_cache(TupleDescAttr(RelationGetDescr(index), k)->atttypid,
								TYPECACHE_HASH_EXTENDED_PROC_FINFO);
		sb->hash[k] = &tce->hash_extended_proc_finfo;
	}
	return sb;
}

/*
 * The same hash as an insert's (abt_sketch_hash_tuple), added through the
 * sketch's view made once (chll_add_hash makes one per call: 1.2% of a
 * text build, bench/results/build_text_cmp_ab.md).
 */
void
abt_sketch_build_add(Relation index, AbtSketchBuild *sb, Datum *values, bool *isnull)
{
	uint64		hash[ABT_SKETCH_MAX_COLS];

	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		if (sb->sk[k] == NULL || abt_sketch_slot_is_key(index, k) || isnull[k])
			continue;
		hash[k] = chll_hash_datum(sb->hash[k], index->rd_indcollation[k], values[k]);
		(void) chll_view_add(&sb->view[k], hash[k]);
	}
	if (sb->sk[ABT_SKETCH_KEY_SLOT] && abt_sketch_slot_is_key(index, ABT_SKETCH_KEY_SLOT))
		(void) chll_view_add(&sb->view[ABT_SKETCH_KEY_SLOT],
							 abt_sketch_key_hash(hash, isnull,
												 IndexRelationGetNumberOfKeyAttributes(index)));
}

/* ---- changes ---- */

Buffer
abt_sketch_lock_page(Relation rel, BlockNumber blkno, int mode)
{
	Buffer		buf = abt_read_hinted(rel, blkno);

	LockBuffer(buf, mode);
	if (!(AbtPageGetOpaque(BufferGetPage(buf))->flags & ABTP_SKETCH))
		elog(PANIC, "abtree: block %u of index \"%s\" is not a sketch page",
			 blkno, RelationGetRelationName(rel));
	return buf;
}

static void
abt_sketch_view_chunk(AbtSketchCol *c, int chunk)
{
	c->view.chunk[chunk - 1] = abt_sketch_data(BufferGetPage(c->bufs[chunk]));
}

/*
 * The set pages an operation needs: every one for VACUUM (one == NULL),
 * none for an insert once the set is lost (the header, locked first, says
 * so and cannot change meanwhile), else the page of the hash's group,
 * whose bytes are saved for WAL of what changed.
 */
static void
abt_sketch_lock_set(AbtSketchCol *c, const AbtSketchLayout *lay, Relation rel,
					BlockNumber first, const AbtSketchHashes *one)
{
	int			g = -1;

	if (one != NULL)
	{
		if (chll_set_lost(abt_sketch_data(BufferGetPage(c->bufs[0]))))
			return;
		g = chll_set_group_of(one->hash[c->k], lay->log2m);
	}
	for (int s = 0; s < lay->setpages; s++)
	{
		int			page = lay->first_setpage + s;

		if (g >= 0 && g / ABT_SKETCH_GROUPS_PER_PAGE != s)
			continue;
		c->bufs[page] = abt_sketch_lock_page(rel, first + page, BUFFER_LOCK_EXCLUSIVE);
		c->view.set[s] = abt_sketch_data(BufferGetPage(c->bufs[page]));
	}
	if (g >= 0)
	{
		c->snap_group = g;
		memcpy(c->group_before,
			   c->view.set[g / ABT_SKETCH_GROUPS_PER_PAGE] +
			   (Size) (g % ABT_SKETCH_GROUPS_PER_PAGE) * CHLL_SET_GROUP_SIZE,
			   CHLL_SET_GROUP_SIZE);
	}
}

/*
 * Lock the pages an operation needs: for one insert (one != NULL), each
 * sketched column's head page and the chunk of its bucket (all chunks if
 * the overflow array is full, unless narrow: a promotion may demote an
 * entry of another bucket, which chll then picks among the held chunks
 * only; a removal never touches another bucket), and the set page of the
 * hash's group unless the set is lost; for VACUUM of a whole leaf
 * (one == NULL), every page.  Columns the entry has NULL in are left alone.
 */
static void
abt_sketch_lock_mode(AbtSketchOp *op, Relation rel, const AbtSketchHashes *one, bool narrow,
					 bool batch)
{
	AbtIndexInfo *info = abt_sketch_info(rel);
	const AbtSketchLayout *lay = &op->lay;

	/*
	 * Not a memset of the whole op (tens of kB): the per-chunk index lists
	 * are filled by abt_sketch_mark_dirty before anything reads them.
	 */
	op->rel = rel;
	abt_sketch_layout(info->sketch_log2m, &op->lay);
	op->ncols = 0;
	op->problems = 0;
	for (int k = 0; k < ABT_SKETCH_MAX_COLS; k++)
	{
		AbtSketchCol *c;
		BlockNumber first;
		uint8	   *hdr;
		bool		all;

		if ((info->sketch_mask & (1 << k)) == 0 || (one && !one->present[k]))
			continue;
		c = &op->cols[op->ncols++];
		memset(c, 0, offsetof(AbtSketchCol, idx));
		c->k = k;
		first = abt_sketch_first_page(info, k);
		c->bufs[0] = abt_sketch_lock_page(rel, first, BUFFER_LOCK_EXCLUSIVE);
		hdr = abt_sketch_data(BufferGetPage(c->bufs[0]));
		/* the bytes before, for WAL of what changed (abt_sketch_xlog_register) */
		memcpy(c->hdr_before, hdr, CHLL_HEADER_SIZE);
		c->snap_bucket = -1;
		c->snap_group = -1;
		all = one == NULL || (!narrow &&
							  chll_get16(hdr + CHLL_OFF_OVF_USED) >= chll_get16(hdr + CHLL_OFF_OVF_CAPACITY));
		for (int chunk = 1; chunk < lay->first_setpage; chunk++)
		{
			if (!all &&
				chll_hash_bucket(one->hash[k], lay->log2m) / ABT_SKETCH_PER_CHUNK != chunk - 1)
				continue;
			c->bufs[chunk] = abt_sketch_lock_page(rel, first + chunk, BUFFER_LOCK_EXCLUSIVE);
		}
		if (!(batch && chll_set_lost(hdr)))
			abt_sketch_lock_set(c, lay, rel, first, one);

		c->view.log2m = lay->log2m;
		c->view.hdr = hdr;
		c->view.ovf = hdr + CHLL_HEADER_SIZE;
		c->view.per_chunk = ABT_SKETCH_PER_CHUNK;
		c->view.dirty = c->dirty;
		c->view.set_dirty = c->set_dirty;
		c->view.groups_per_set = ABT_SKETCH_GROUPS_PER_PAGE;
		c->view.ovf_lo = PG_INT32_MAX;
		c->view.set_range[0] = CHLL_SET_SLOTS;
		c->view.set_range[1] = -1;
		for (int chunk = 1; chunk < lay->first_setpage; chunk++)
			if (BufferIsValid(c->bufs[chunk]))
				abt_sketch_view_chunk(c, chunk);
		if (one)
		{
			int			b = chll_hash_bucket(one->hash[k], lay->log2m);

			c->snap_bucket = b;
			memcpy(c->bucket_before,
				   c->view.chunk[b / ABT_SKETCH_PER_CHUNK] + (b % ABT_SKETCH_PER_CHUNK) * CHLL_BUCKET_SIZE,
				   CHLL_BUCKET_SIZE);
		}
	}
}

void
abt_sketch_lock(AbtSketchOp *op, Relation rel, const AbtSketchHashes *one)
{
	abt_sketch_lock_mode(op, rel, one, false, false);
}

/* Head, one chunk and one set page per column, whatever happens (tall trees) */
void
abt_sketch_lock_narrow(AbtSketchOp *op, Relation rel, const AbtSketchHashes *one)
{
	abt_sketch_lock_mode(op, rel, one, true, false);
}

/*
 * Which sketched columns' exact sets this backend last found lost, for a
 * few indexes (by their storage).  A batch's record leaves out the set
 * pages of a lost set, which adds do not change, so its room for pages of
 * the tree can count on that (abt_sketch_batch_blocks).  Only a hint: a
 * set comes back when VACUUM empties the sketch, and abtbatch.c checks
 * what abt_sketch_lock_batch held against the room it left.  Not in
 * AbtIndexInfo, which every VACUUM's statistics update invalidates.
 */
#define ABT_LOST_HINTS	8

typedef struct AbtLostHint
{
	Oid			relfile;
	uint16		lost;
} AbtLostHint;

static AbtLostHint abt_lost_hints[ABT_LOST_HINTS];
static int	abt_lost_next = 0;

static AbtLostHint *
abt_sketch_lost_hint(Relation rel)
{
	for (int i = 0; i < ABT_LOST_HINTS; i++)
		if (abt_lost_hints[i].relfile == abt_file_rel(rel))
			return &abt_lost_hints[i];
	return NULL;
}

static void
abt_sketch_note_lost(Relation rel, uint16 lost)
{
	AbtLostHint *h = abt_sketch_lost_hint(rel);

	if (h == NULL)
	{
		if (lost == 0)
			return;				/* no entry says the same */
		h = &abt_lost_hints[abt_lost_next];
		abt_lost_next = (abt_lost_next + 1) % ABT_LOST_HINTS;
		h->relfile = abt_file_rel(rel);
	}
	h->lost = lost;
}

/*
 * The sketch pages a batch's record may name: every page of each sketched
 * column's sketch, but the set pages of those this backend last found lost.
 */
int
abt_sketch_batch_blocks(Relation rel)
{
	AbtIndexInfo *info = abt_sketch_info(rel);
	AbtLostHint *h = abt_sketch_lost_hint(rel);
	int			n = abt_sketch_max_blocks(rel);

	if (h != NULL)
		n -= pg_popcount32(h->lost & info->sketch_mask) *
			ABT_SKETCH_SETPAGES(info->sketch_log2m);
	return n;
}

/* The pages an operation holds: an upper bound of those its record names */
int
abt_sketch_held_blocks(const AbtSketchOp *op)
{
	int			n = 0;

	for (int i = 0; i < op->ncols; i++)
		for (int page = 0; page < op->lay.pages; page++)
			n += BufferIsValid(op->cols[i].bufs[page]) ? 1 : 0;
	return n;
}

/*
 * For a batch of inserts (abtbatch.c): every page, as for VACUUM, except
 * the set pages of a lost set (adds leave them alone), and a copy of the
 * bytes of each chunk page and, while the set lasts, each set page, so
 * that WAL carries the bytes that changed in the buckets and groups, not
 * each whole (abtsketchxlog.c).  The room for the copies and their WAL
 * runs is allocated once per backend, outside any critical section, and
 * reused: one batch at a time holds it.  Notes which sets it found lost
 * (abt_sketch_batch_blocks).
 */
void
abt_sketch_lock_batch(AbtSketchOp *op, Relation rel)
{
	/* kept for the backend's life: palloc'd each time, they page-faulted */
	static uint8 *before[ABT_SKETCH_MAX_COLS][ABT_SKETCH_MAX_PAGES];
	static uint8 *runs[ABT_SKETCH_MAX_COLS][ABT_SKETCH_MAX_PAGES];
	static uint8 *buckets[ABT_SKETCH_MAX_COLS];
	uint16		lost_mask = 0;

	abt_sketch_lock_mode(op, rel, NULL, false, true);
	for (int i = 0; i < op->ncols; i++)
	{
		AbtSketchCol *c = &op->cols[i];
		bool		lost = chll_set_lost(abt_sketch_data(BufferGetPage(c->bufs[0])));

		if (lost)
			lost_mask |= 1 << c->k;

		/*
		 * The chunks' buckets are kept by the view as each changes first:
		 * copying the chunk pages whole at every flush was 2% of an insert,
		 * for a few buckets changed.  The set's groups are copied here.
		 */
		if (buckets[i] == NULL)
			buckets[i] = MemoryContextAlloc(TopMemoryContext,
											(Size) CHLL_BUCKET_SIZE << ABT_SKETCH_MAX_LOG2M);
		c->view.bucket_before = buckets[i];
		for (int page = 1; page < op->lay.pages; page++)
		{
			if (runs[i][page] == NULL)
				runs[i][page] = MemoryContextAlloc(TopMemoryContext, 1 + 2 * ABT_SKETCH_SPACE);
			c->runs[page] = runs[i][page];
			if (page < op->lay.first_setpage || !BufferIsValid(c->bufs[page]) || lost)
				continue;
			if (before[i][page] == NULL)
				before[i][page] = MemoryContextAlloc(TopMemoryContext, ABT_SKETCH_SPACE);
			c->before[page] = before[i][page];
			memcpy(c->before[page], abt_sketch_data(BufferGetPage(c->bufs[page])),
				   ABT_SKETCH_SPACE);
		}
	}
	abt_sketch_note_lost(rel, lost_mask);
}

/* An operation that changes no sketch */
void
abt_sketch_none(AbtSketchOp *op, Relation rel)
{
	op->rel = rel;
	abt_sketch_layout(ABT_SKETCH_DEFAULT_LOG2M, &op->lay);
	op->ncols = 0;
	op->problems = 0;
}

/*
 * Add or remove one entry's hashes.  In a critical section: a hash that
 * cannot be removed is counted in op->problems, reported after.
 */
void
abt_sketch_apply(AbtSketchOp *op, const AbtSketchHashes *h, bool add)
{
	for (int i = 0; i < op->ncols; i++)
	{
		AbtSketchCol *c = &op->cols[i];
		ChllStatus	st;

		if (!h->present[c->k])
			continue;
		st = add ? chll_view_add(&c->view, h->hash[c->k]) :
			chll_view_remove(&c->view, h->hash[c->k]);
		if (st != CHLL_OK)
			op->problems++;
		c->changed = true;
	}
}

/* Has a group on set page s changed? */
bool
abt_sketch_set_page_changed(const AbtSketchLayout *lay, AbtSketchCol *c, int s)
{
	int			first;
	int			n = abt_sketch_set_groups(lay, s, &first);

	for (int g = first; g < first + n; g++)
		if (c->set_dirty[g / 8] & (1 << (g % 8)))
			return true;
	return false;
}

/*
 * Changed bucket b joins its chunk's list.  Buckets come in order: the
 * lists of the chunks before b's are closed (their counts written) first.
 */
static inline void
abt_sketch_list_bucket(AbtSketchCol *c, int *chunk, int *first, int *n, int b)
{
	while (b >= *first + ABT_SKETCH_PER_CHUNK)
	{
		c->idx[(*chunk)++][0] = (uint16) *n;
		*first += ABT_SKETCH_PER_CHUNK;
		*n = 0;
	}
	c->idx[*chunk][++(*n)] = (uint16) (b - *first);
}

/*
 * After the changes, in the critical section: list the changed records of
 * each chunk (from the view's bitmap, a word at a time, then bit by set
 * bit) and dirty the pages that changed.  A byte at a time, this loop was
 * 3% of a one-statement insert; with a test per byte, 0.6% of a COPY.
 */
void
abt_sketch_mark_dirty(AbtSketchOp *op)
{
	const AbtSketchLayout *lay = &op->lay;
	int			nbytes = (1 << lay->log2m) / 8;

	StaticAssertStmt(sizeof(((AbtSketchCol *) NULL)->dirty) % sizeof(uint64) == 0,
					 "the bitmap is read in words");

	for (int i = 0; i < op->ncols; i++)
	{
		AbtSketchCol *c = &op->cols[i];
		int			chunk = 0;
		int			first = 0;	/* the chunk's first bucket */
		int			n = 0;		/* its changed records so far */

		if (!c->changed)
			continue;
		/* the bitmap is zero past the buckets */
		for (int word = 0; word < nbytes; word += sizeof(uint64))
		{
			uint64		bits;

			memcpy(&bits, c->dirty + word, sizeof(bits));
#ifndef WORDS_BIGENDIAN
			/* bit j of the word's byte k is its bit 8k + j (little-endian) */
			for (; bits != 0; bits &= bits - 1)
				abt_sketch_list_bucket(c, &chunk, &first, &n,
									   word * 8 + pg_rightmost_one_pos64(bits));
#else
			if (bits == 0)
				continue;
			for (int byte = word; byte < word + (int) sizeof(uint64); byte++)
				for (uint32 set = c->dirty[byte]; set != 0; set &= set - 1)
					abt_sketch_list_bucket(c, &chunk, &first, &n,
										   byte * 8 + pg_rightmost_one_pos32(set));
#endif
		}
		c->idx[chunk][0] = (uint16) n;
		while (++chunk < lay->nchunks)
			c->idx[chunk][0] = 0;
		MarkBufferDirty(c->bufs[0]);
		for (chunk = 0; chunk < lay->nchunks; chunk++)
			if (c->idx[chunk][0] > 0)
				MarkBufferDirty(c->bufs[chunk + 1]);
		for (int s = 0; s < lay->setpages; s++)
			if (abt_sketch_set_page_changed(lay, c, s))
				MarkBufferDirty(c->bufs[lay->first_setpage + s]);
	}
}

/* Upper bounds for XLogEnsureRecordSpace, before the critical section */
int
abt_sketch_max_blocks(Relation rel)
{
	AbtIndexInfo *info = abt_sketch_info(rel);

	return pg_popcount32(info->sketch_mask) * ABT_SKETCH_PAGES(info->sketch_log2m);
}

/*
 * ... for one insert: head, every chunk (a full overflow array), one set
 * page; and narrow: head, one chunk, one set page.
 */
int
abt_sketch_add_max_blocks(Relation rel)
{
	AbtIndexInfo *info = abt_sketch_info(rel);

	return pg_popcount32(info->sketch_mask) * (2 + ABT_SKETCH_NCHUNKS(info->sketch_log2m));
}

int
abt_sketch_narrow_max_blocks(Relation rel)
{
	return pg_popcount32(abt_sketch_info(rel)->sketch_mask) * 3;
}

int
abt_sketch_max_rdatas(Relation rel)
{
	AbtIndexInfo *info = abt_sketch_info(rel);
	int			log2m = info->sketch_log2m;

	return pg_popcount32(info->sketch_mask) *
		(2 + ABT_SKETCH_NCHUNKS(log2m) + 2 * (1 << log2m) +
		 ABT_SKETCH_SETPAGES(log2m) + 2 * ABT_SKETCH_GROUPS(log2m));
}

/* Unlock; say so if a removal found its value missing (S1 broken) */
void
abt_sketch_release(AbtSketchOp *op)
{
	for (int i = 0; i < op->ncols; i++)
		for (int chunk = 0; chunk < op->lay.pages; chunk++)
		{
			if (BufferIsValid(op->cols[i].bufs[chunk]))
				UnlockReleaseBuffer(op->cols[i].bufs[chunk]);
			op->cols[i].before[chunk] = NULL;	/* abt_sketch_lock_batch's */
		}
	if (op->problems > 0)
		ereport(WARNING,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("the distinct-value sketch of index \"%s\" did not contain %d removed value(s)",
						RelationGetRelationName(op->rel), op->problems),
				 errhint("REINDEX the index to rebuild its sketches.")));
	op->ncols = 0;
}

/* ---- reading ---- */

/*
 * A flat copy of column k's sketch (palloc'd), or NULL if it has none.
 * The pages are share-locked together, head first, so the copy is one
 * consistent state.
 */
uint8 *
abt_sketch_copy(Relation rel, int k)
{
	AbtIndexInfo *info;
	AbtSketchLayout lay;
	Buffer		bufs[ABT_SKETCH_MAX_PAGES];
	BlockNumber first;
	uint8	   *sk;
	int			m;

	if (!abt_sketch_has_column(rel, k))
		return NULL;
	info = abt_sketch_info(rel);
	abt_sketch_layout(info->sketch_log2m, &lay);
	m = 1 << lay.log2m;
	first = abt_sketch_first_page(info, k);
	/* zeroed: the overflow entries past the head page's capacity stay 0 */
	sk = palloc0(chll_sketch_size(lay.log2m));
	for (int c = 0; c < lay.pages; c++)
		bufs[c] = abt_sketch_lock_page(rel, first + c, BUFFER_LOCK_SHARE);
	for (int c = 0; c < lay.pages; c++)
	{
		uint8	   *src = abt_sketch_data(BufferGetPage(bufs[c]));

		if (c >= lay.first_setpage)
		{
			int			firstg;
			int			n = abt_sketch_set_groups(&lay, c - lay.first_setpage, &firstg);

			memcpy(sk + abt_sketch_group_off(&lay, firstg), src, (Size) n * CHLL_SET_GROUP_SIZE);
		}
		else if (c == 0)
		{
			memcpy(sk, src, CHLL_HEADER_SIZE);
			memcpy(sk + CHLL_HEADER_SIZE + (Size) m * CHLL_BUCKET_SIZE, src + CHLL_HEADER_SIZE,
				   (Size) lay.capacity * CHLL_ENTRY_SIZE);
		}
		else
		{
			int			firstb = (c - 1) * ABT_SKETCH_PER_CHUNK;
			int			n = Min(ABT_SKETCH_PER_CHUNK, m - firstb);

			memcpy(sk + CHLL_HEADER_SIZE + (Size) firstb * CHLL_BUCKET_SIZE, src,
				   (Size) n * CHLL_BUCKET_SIZE);
		}
	}
	for (int c = 0; c < lay.pages; c++)
		UnlockReleaseBuffer(bufs[c]);

	/*
	 * A set given up by an insert keeps stale bytes in the groups that
	 * insert did not hold (chll_set.c); the flat form of a lost set is zero.
	 */
	if (chll_set_lost(sk))
		memset(sk + chll_set_offset(lay.log2m), 0, chll_set_size(lay.log2m));
	/* ... and a sketch emptied without all its pages held keeps the flag */
	if (chll_total(sk) == 0)
		abt_sketch_init(sk, lay.log2m);
	return sk;
}
