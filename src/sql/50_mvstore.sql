/* The install script, part 50: the multi-version weight store (src/mvstore/README). */

CREATE FUNCTION abtree_mvstore(
	OUT enabled boolean,
	OUT size_bytes bigint,
	OUT entries bigint,
	OUT entries_max bigint,
	OUT versions bigint,
	OUT versions_max bigint,
	OUT bytes_used bigint,
	OUT versions_recorded bigint,
	OUT versions_collected bigint,
	OUT chains_rebuilt bigint,
	OUT gc_runs bigint,
	OUT fallbacks bigint,
	OUT is_full boolean,
	OUT gc_horizon xid)
RETURNS record
AS 'MODULE_PATHNAME', 'abtree_mvstore'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION abtree_mvstore() IS
'sizes and counters of the abtree multi-version weight store (NULLs when abtree.mvstore_size = 0)';

-- One row: what the weight store holds and has done since the server started.
CREATE VIEW abtree_mvstore AS SELECT * FROM abtree_mvstore();

-- Server-wide counters, like pg_stat_bgwriter: anyone may read them.
GRANT SELECT ON abtree_mvstore TO PUBLIC;

COMMENT ON VIEW abtree_mvstore IS
'the abtree multi-version weight store: entries, versions, bytes, collections, fallbacks';

CREATE FUNCTION abtree_mvstore_collect()
RETURNS bigint
AS 'MODULE_PATHNAME', 'abtree_mvstore_collect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION abtree_mvstore_collect() IS
'drops now the weight store versions no snapshot can need; returns how many (the collector does this every abtree.mvstore_gc_interval)';

-- It locks every partition of the store in turn: for administrators.
REVOKE ALL ON FUNCTION abtree_mvstore_collect() FROM PUBLIC;

-- Not STRICT: a NULL index gets an ERROR.
CREATE FUNCTION abtree_mvstore_check(
	index regclass,
	OUT downlinks bigint,
	OUT versioned bigint,
	OUT violations bigint,
	OUT visible_weight numeric)
RETURNS record
AS 'MODULE_PATHNAME', 'abtree_mvstore_check'
LANGUAGE C VOLATILE PARALLEL SAFE;

REVOKE ALL ON FUNCTION abtree_mvstore_check(regclass) FROM PUBLIC;

COMMENT ON FUNCTION abtree_mvstore_check(regclass) IS
'checks that every downlink of an abtree index, as the current snapshot sees it, weighs at least its child''s items (violations must be 0); visible_weight is the root''s total for the snapshot';
