/* The install script, part 40: TABLESAMPLE swr (src/swr/README). */

-- SELECT ... FROM t TABLESAMPLE swr(n) [REPEATABLE (seed)]: exactly n rows,
-- drawn independently with replacement, each with probability proportional
-- to its weight in the table's abtree index.  n is float8, like the
-- standard methods' argument, so that a fractional n can be refused rather
-- than silently rounded.
--
-- PARALLEL UNSAFE (the default, spelled out): a sample scan inside a
-- parallel plan would run in every worker, each drawing its own n rows.
CREATE FUNCTION swr(internal)
RETURNS tsm_handler
AS 'MODULE_PATHNAME', 'swr_handler'
LANGUAGE C STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION swr(internal) IS
'TABLESAMPLE swr(n): n independent weighted draws with replacement through the table''s abtree index';

-- Counters of swr per index since the server started (src/swr/swr_stats.c):
-- scans, draws (descents), rows returned, and the draws rejected because the
-- row was invisible to the scan's snapshot, because the index rejected the
-- descent (its weights overcounted while inserts or VACUUM ran), or because
-- the row failed WHERE (abtree.swr_where = redraw draws those again).
CREATE FUNCTION abtree_swr_stats(
	OUT indexrelid oid,
	OUT scans bigint,
	OUT draws bigint,
	OUT rows_returned bigint,
	OUT rejected_invisible bigint,
	OUT rejected_by_index bigint,
	OUT rejected_by_filter bigint,
	OUT last_scan timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'abtree_swr_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE VIEW abtree_swr_stats AS
SELECT s.indexrelid::regclass AS index,
	   i.indrelid::regclass AS "table",
	   s.scans, s.draws, s.rows_returned,
	   s.rejected_invisible, s.rejected_by_index, s.rejected_by_filter,
	   CASE WHEN s.draws > 0 THEN round(s.rows_returned::numeric / s.draws, 4) END
		 AS acceptance,
	   s.last_scan
  FROM abtree_swr_stats() s
  LEFT JOIN pg_index i ON i.indexrelid = s.indexrelid
 WHERE i.indexrelid IS NOT NULL OR s.indexrelid = 0;
GRANT SELECT ON abtree_swr_stats TO PUBLIC;
COMMENT ON VIEW abtree_swr_stats IS
'TABLESAMPLE swr per index since the server started: scans, draws, rows and rejections by reason (index 0: indexes beyond the first 1024)';

CREATE FUNCTION abtree_swr_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'abtree_swr_stats_reset'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION abtree_swr_stats_reset() FROM PUBLIC;
COMMENT ON FUNCTION abtree_swr_stats_reset() IS
'forgets the abtree_swr_stats counters of the current database';
