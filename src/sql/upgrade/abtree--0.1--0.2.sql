-- abtree 0.1 -> 0.2: ALTER EXTENSION abtree UPDATE TO '0.2'.
--
-- After it, the extension's objects are those of a fresh 0.2 install (test
-- t/030_upgrade.pl compares the two, object by object).  What it cannot do
-- is on disk: abtree and pbtree indexes built by a 0.1 library have index
-- format version 1 and must be rebuilt (REINDEX; README, "Upgrading"); chll
-- values stored by 0.1 (format 1) are read as they are and written back in
-- format 2 when changed.
\echo Use "ALTER EXTENSION abtree UPDATE TO '0.2'" to load this file. \quit

-- abtree_verify: the light check (AccessShareLock) unless asked for exact or
-- heapallindexed, and an administrator's tool, as amcheck's (issue 25, item 2)
CREATE OR REPLACE FUNCTION abtree_verify(index regclass, heapallindexed boolean DEFAULT false,
										 exact boolean DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'abtree_verify'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION abtree_verify(regclass, boolean, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION abtree_mvstore_check(regclass) FROM PUBLIC;
REVOKE ALL ON FUNCTION pbtree_verify(regclass, boolean) FROM PUBLIC;

-- chll: the exact set (format 2)
CREATE FUNCTION chll_estimate_counters(sketch chll) RETURNS float8
AS 'MODULE_PATHNAME', 'chll_estimate_counters'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION chll_estimate(chll) IS
'number of distinct values: exact while the sketch lists them (chll_info(s).exact_distinct), else the counters'' maximum-likelihood estimate';
COMMENT ON FUNCTION chll_estimate_counters(chll) IS
'the HyperLogLog counters'' estimate of the number of distinct values, ignoring the exact set';

-- chll_info has a new output column; the view over it goes and comes back
DROP VIEW abtree_column_ndistinct;
DROP FUNCTION chll_info(chll);
CREATE FUNCTION chll_info(sketch chll,
	OUT buckets integer,
	OUT items bigint,
	OUT estimate float8,
	OUT exact boolean,
	OUT overflow_used integer,
	OUT overflow_capacity integer,
	OUT bytes integer,
	OUT exact_distinct boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'chll_info'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION chll_info(chll) IS
'bucket count, values held, estimate, whether every count is exact, overflow use and size of a sketch';

-- chll: equality, hash and btree operator classes, ||, casts to and from bytea
CREATE FUNCTION chll_eq(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_eq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_ne(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_ne'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll_hash_sketch(chll) RETURNS integer
AS 'MODULE_PATHNAME', 'chll_hash_sketch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION chll(bytea) RETURNS chll
AS 'MODULE_PATHNAME', 'chll_from_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR = (
	LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES
);

CREATE OPERATOR <> (
	LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE OPERATOR || (
	LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_union
);

CREATE FUNCTION chll_cmp(chll, chll) RETURNS integer
AS 'MODULE_PATHNAME', 'chll_cmp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION chll_lt(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_lt'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION chll_le(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_le'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION chll_gt(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_gt'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION chll_ge(chll, chll) RETURNS boolean
AS 'MODULE_PATHNAME', 'chll_ge'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR < (LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = chll, RIGHTARG = chll, FUNCTION = chll_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR CLASS chll_btree_ops DEFAULT FOR TYPE chll USING btree AS
	OPERATOR 1 < (chll, chll),
	OPERATOR 2 <= (chll, chll),
	OPERATOR 3 = (chll, chll),
	OPERATOR 4 >= (chll, chll),
	OPERATOR 5 > (chll, chll),
	FUNCTION 1 chll_cmp(chll, chll);

CREATE OPERATOR CLASS chll_hash_ops DEFAULT FOR TYPE chll USING hash AS
	OPERATOR 1 = (chll, chll),
	FUNCTION 1 chll_hash_sketch(chll);

CREATE CAST (chll AS bytea) WITHOUT FUNCTION;

COMMENT ON FUNCTION chll_eq(chll, chll) IS
'whether two sketches count the same (bucket count, flags, totals and every counter)';
COMMENT ON FUNCTION chll_hash_sketch(chll) IS
'hash of what chll_eq compares (hash operator class chll_hash_ops)';
COMMENT ON FUNCTION chll(bytea) IS
'the chll value whose bytes these are (from a cast of chll to bytea), validated';

-- abtree_column_ndistinct: guarded against other access methods, partitioned
-- indexes and row-level security (issue 25, items 1 and 4), and usable
-- without the preload
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

-- TABLESAMPLE swr on Citus distributed tables (src/swr/README, "Citus")
CREATE FUNCTION swr_shard(internal)
RETURNS tsm_handler
AS 'MODULE_PATHNAME', 'swr_shard_handler'
LANGUAGE C STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION swr_shard(internal) IS
'TABLESAMPLE swr_shard(rate): a Citus shard''s part of a distributed TABLESAMPLE swr(n)';

CREATE FUNCTION swr_shard_weight(regclass)
RETURNS float8
AS 'MODULE_PATHNAME', 'swr_shard_weight'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION swr_shard_weight(regclass) IS
'The weight TABLESAMPLE swr draws a table''s rows from, as the current snapshot sees it (a Citus shard''s, for a distributed swr(n))';

CREATE FUNCTION swr_citus_sample(anyelement, regclass, float8, float8, text, VARIADIC "any")
RETURNS SETOF anyelement
AS 'MODULE_PATHNAME', 'swr_citus_sample'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION swr_citus_sample(anyelement, regclass, float8, float8, text, VARIADIC "any") IS
'TABLESAMPLE swr(n) over a Citus distributed table: what the planner puts in its place';
