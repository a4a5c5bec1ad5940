
-- ---------------------------------------------------------------------------
-- The pbtree index access method: a partitioned B-tree (src/pbtree/README)
-- ---------------------------------------------------------------------------
--
-- Its operator classes are abtree's, declared again for pbtree: the build
-- appends src/sql/20_abtree_opclasses.sql with "USING abtree" replaced by
-- "USING pbtree" after this file (Makefile).

CREATE FUNCTION pbtree_am_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'pbtree_am_handler'
LANGUAGE C;

CREATE ACCESS METHOD pbtree TYPE INDEX HANDLER pbtree_am_handler;
COMMENT ON ACCESS METHOD pbtree IS
'partitioned B-tree: inserts go to one small mutable partition, sealed partitions are written once, sequentially, with Bloom filters, and merged';

CREATE FUNCTION pbtree_stats(index regclass,
	OUT partition bigint,
	OUT state text,
	OUT entries bigint,
	OUT leaf_pages bigint,
	OUT filters integer,
	OUT filter_pages bigint,
	OUT key_filter_fpr float8,
	OUT leading_filter_fpr float8,
	OUT created timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pbtree_stats'
LANGUAGE C VOLATILE PARALLEL SAFE STRICT;
COMMENT ON FUNCTION pbtree_stats(regclass) IS
'one row per partition of a pbtree index: state, entries, leaf pages, filters and their estimated false-positive rates';

-- Checks the directory, every partition's tree, the filters (no key a
-- sealed partition holds may be ruled out), that no heap tuple has two
-- entries and, with heapallindexed, that every heap tuple has one.  Returns
-- the number of entries.  Takes a ShareLock on the index (waits for and
-- blocks inserts).
CREATE FUNCTION pbtree_verify(index regclass, heapallindexed boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'pbtree_verify'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION pbtree_verify(regclass, boolean) FROM PUBLIC;
COMMENT ON FUNCTION pbtree_verify(regclass, boolean) IS
'checks a pbtree index: partitions, trees, filters, and optionally that the heap is all indexed; ERROR on the first problem';

CREATE FUNCTION pbtree_seal(index regclass)
RETURNS boolean
AS 'MODULE_PATHNAME', 'pbtree_seal'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION pbtree_seal(regclass) IS
'seals the mutable partition of a pbtree index now (false if it is empty)';

CREATE FUNCTION pbtree_merge(index regclass, max_partitions integer DEFAULT 0)
RETURNS integer
AS 'MODULE_PATHNAME', 'pbtree_merge'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION pbtree_merge(regclass, integer) IS
'merges the sealed partitions of a pbtree index (the oldest max_partitions, 0 for all) into one; returns how many were merged';
