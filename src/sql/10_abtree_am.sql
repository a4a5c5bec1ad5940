
-- ---------------------------------------------------------------------------
-- The abtree index access method (src/abtree/README)
-- ---------------------------------------------------------------------------

CREATE FUNCTION abtree_am_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'abtree_am_handler'
LANGUAGE C;

CREATE ACCESS METHOD abtree TYPE INDEX HANDLER abtree_am_handler;
COMMENT ON ACCESS METHOD abtree IS
'aggregate B-link tree: an ordered index whose downlinks carry subtree weights, for weighted random sampling';

-- Draws n index entries, each with probability proportional to its weight,
-- independently and with replacement; returns their heap TIDs (visible or
-- not: the caller checks).  For tests and for TABLESAMPLE swr.
CREATE FUNCTION abtree_sample_tids(index regclass, n integer, seed float8 DEFAULT NULL)
RETURNS SETOF tid
AS 'MODULE_PATHNAME', 'abtree_sample_tids'
LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1000;

-- Checks the structure and the weights of an abtree index, amcheck style.
-- exact: downlink weights must equal the weight below (takes a ShareLock,
-- which waits for and blocks writers); false: at least that (AccessShareLock,
-- next to running writers).  NULL (the default): exact with heapallindexed,
-- which needs it, else not: the light check unless asked (issue 25, item 2).
CREATE FUNCTION abtree_verify(index regclass, heapallindexed boolean DEFAULT false,
							  exact boolean DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'abtree_verify'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION abtree_stats(index regclass,
	OUT height integer,
	OUT pages bigint,
	OUT leaf_pages bigint,
	OUT empty_leaf_pages bigint,
	OUT entries bigint,
	OUT total_weight numeric,
	OUT avg_leaf_fill float8,
	OUT pages_per_level bigint[])
RETURNS record
AS 'MODULE_PATHNAME', 'abtree_stats'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION abtree_sample_tids(regclass, integer, float8) IS
'n weighted random draws with replacement from an abtree index (heap TIDs)';
-- As amcheck's: verification can take a ShareLock (exact mode waits for and
-- blocks writers) and reads every page and, with heapallindexed, the table;
-- it is an administrator's tool (GRANT EXECUTE delegates it).
REVOKE ALL ON FUNCTION abtree_verify(regclass, boolean, boolean) FROM PUBLIC;

COMMENT ON FUNCTION abtree_verify(regclass, boolean, boolean) IS
'checks order, links, levels and weights of an abtree index; ERROR on the first problem';
COMMENT ON FUNCTION abtree_stats(regclass) IS
'height, pages, entries, total weight and fill of an abtree index';

-- The same, restricted to entries whose first key column is in [lo, hi]
-- (a NULL bound is open): independent range sampling (paper 000, section 6).
CREATE FUNCTION abtree_sample_tids_range(index regclass, n integer, seed float8,
										 lo anyelement, hi anyelement)
RETURNS SETOF tid
AS 'MODULE_PATHNAME', 'abtree_sample_tids_range'
LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION abtree_sample_tids_range(regclass, integer, float8, anyelement, anyelement) IS
'n weighted random draws with replacement among the entries whose first key is in [lo, hi]';

-- The total weight (for an unweighted index: the number) of the valid
-- entries whose first key column is in the range from lo to hi, NULL
-- meaning open on that side, from two root-to-leaf descents (no scan).
-- Counts index entries, not visible rows (README, "Range aggregates").
CREATE FUNCTION abtree_range_weight(index regclass, lo anyelement, hi anyelement,
									lo_inclusive boolean DEFAULT true,
									hi_inclusive boolean DEFAULT true,
									visible_only boolean DEFAULT false)
RETURNS numeric
AS 'MODULE_PATHNAME', 'abtree_range_weight'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION abtree_range_weight(regclass, anyelement, anyelement, boolean, boolean, boolean) IS
'total weight (unweighted index: number) of the index entries whose first key is in the range, in O(log n); visible_only leaves out inserts the snapshot cannot see';
