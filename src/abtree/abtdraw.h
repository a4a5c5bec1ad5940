/*-------------------------------------------------------------------------
 *
 * abtdraw.h
 *	  What draws need of a page before they route through it: its items'
 *	  weights (for the reader's snapshot and key range) and the range's
 *	  first page (abtdrawweights.c), for the descents of abtdraw.c.
 *	  Private to those two files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ABTDRAW_H
#define ABTDRAW_H

#include "abtree.h"

#include "mvstore/mvstore.h"

extern bool abt_leaf_counts_entries(AbtIndexInfo *info, AbtSampleRange *range, MvsReader *rd,
									Page page);
extern void abt_leaf_clear_invalid_hint(Buffer buf);
extern int	abt_page_weights(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
							 MvsReader *rd, Page page, uint64 *ws);
extern double abt_range_page_weight(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
									MvsReader *rd, Page page);
extern bool abt_downlink_caught_up(Relation rel, AbtIndexInfo *info, AbtSampleRange *range,
								   MvsReader *rd, BlockNumber parent, BlockNumber child,
								   double total);
extern bool abt_page_ends_at(Page page, IndexTuple expected_hikey);
extern IndexTuple abt_item_hikey(Page page, OffsetNumber off);
extern Buffer abt_range_start(Relation rel, AbtSampleRange *range, Buffer buf,
							  IndexTuple *expected_hikey);

#endif							/* ABTDRAW_H */
