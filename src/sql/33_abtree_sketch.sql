-- Distinct-value sketches kept by abtree indexes (src/abtree/README, "Sketches")

CREATE FUNCTION abtree_sketch(index regclass, key_column integer DEFAULT 1)
RETURNS chll
AS 'MODULE_PATHNAME', 'abtree_sketch'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION abtree_sketch(regclass, integer) IS
'The counting HyperLogLog sketch an abtree index keeps of a key column (numbered from 1), as inserts and VACUUM leave it; NULL if the index keeps none (reloption sketch = off, a column past the fourth, or a type without an extended hash function)';

-- One row per sketched key column of every abtree index the user may read:
-- the sketch's estimate beside ANALYZE's (pg_stats.n_distinct, made a count).
-- The planner may run the lateral call before the joins that filter the rows,
-- so its guard repeats them: an abtree index proper (not a partitioned one,
-- not another access method's), a table the user may read, and no row-level
-- security applying to the user (like pg_stats, the view then shows nothing).
CREATE VIEW abtree_column_ndistinct AS
SELECT n.nspname AS schemaname,
       t.relname AS tablename,
       i.relname AS indexname,
       a.attname,
       k.key_column,
       round(s.estimate) AS sketch_ndistinct,
       s.items AS sketch_items,
       s.exact AS sketch_exact,
       CASE WHEN ps.n_distinct < 0 THEN round(-ps.n_distinct * t.reltuples)
            ELSE round(ps.n_distinct) END AS analyze_ndistinct,
       -- without the preload the setting is unknown and no planner hook runs
       coalesce(current_setting('abtree.sketch_ndistinct', true)::boolean, false)
           AND pg_index.indisvalid AND pg_index.indpred IS NULL
           AND coll.ok AS used_by_planner
FROM pg_index
JOIN pg_class i ON i.oid = pg_index.indexrelid
JOIN pg_am am ON am.oid = i.relam AND am.amname = 'abtree'
JOIN pg_class t ON t.oid = pg_index.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
CROSS JOIN LATERAL generate_series(1, least(pg_index.indnkeyatts, 4)) AS k(key_column)
JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = pg_index.indkey[k.key_column - 1]
CROSS JOIN LATERAL (SELECT pg_index.indcollation[k.key_column - 1] = a.attcollation AS ok) coll
CROSS JOIN LATERAL chll_info(CASE WHEN i.relkind = 'i'
                                   AND i.relam = (SELECT oid FROM pg_am WHERE amname = 'abtree')
                                   AND has_table_privilege(t.oid, 'SELECT')
                                   AND NOT row_security_active(t.oid)
                              THEN abtree_sketch(i.oid, k.key_column) END) s
LEFT JOIN pg_stats ps ON ps.schemaname = n.nspname AND ps.tablename = t.relname
                     AND ps.attname = a.attname AND NOT ps.inherited
WHERE s.buckets IS NOT NULL;

GRANT SELECT ON abtree_column_ndistinct TO PUBLIC;

COMMENT ON VIEW abtree_column_ndistinct IS
'Distinct values of each column that an abtree index sketches: the sketch''s estimate, ANALYZE''s, and whether the planner uses the sketch (abtree.sketch_ndistinct)';
