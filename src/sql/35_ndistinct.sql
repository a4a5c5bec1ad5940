-- ---------------------------------------------------------------------------
-- Multi-column distinct counts: sampling estimators corrected by per-column
-- sketches (paper 002, sections 6.2 and 6.3; src/hll/README)
-- ---------------------------------------------------------------------------

-- The estimate of the number of distinct tuples from a sample's frequency
-- vector: freq[i] is the number of distinct tuples seen exactly i times in
-- a sample drawn with replacement from table_rows rows.  column_ndistinct
-- gives each column's distinct count in the table (needed by 'scgee' and
-- 'scbc'), column_repeated each column's values seen at least twice in the
-- sample (optional; it tightens the lower bound).  Not STRICT: a NULL
-- argument that needs a value is an ERROR.
CREATE FUNCTION abtree_ndistinct_from_freq(
	freq bigint[],
	table_rows float8,
	column_ndistinct float8[] DEFAULT NULL,
	method text DEFAULT 'scbc',
	column_repeated float8[] DEFAULT NULL)
RETURNS float8
AS 'MODULE_PATHNAME', 'abtree_ndistinct_from_freq'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION abtree_ndistinct_from_freq(bigint[], float8, float8[], text, float8[]) IS
'estimated number of distinct tuples from a with-replacement sample''s frequency vector (gee, bc, scgee, scbc)';

-- The estimate for a column combination of a table from a TABLESAMPLE swr
-- sample, each row counted once (sample_rows: the distinct rows drawn),
-- corrected by the columns' sketches.  column_source says, per
-- column, where its distinct count came from ('sketch') or that there was
-- none ('none'), in which case method is the uncorrected one used instead.
CREATE FUNCTION abtree_ndistinct(
	tbl regclass,
	columns text[],
	sample_rows integer DEFAULT 30000,
	method text DEFAULT 'scbc',
	seed float8 DEFAULT NULL,
	OUT estimate float8,
	OUT method text,
	OUT sample_rows integer,
	OUT sample_distinct bigint,
	OUT sample_singletons bigint,
	OUT table_rows float8,
	OUT column_ndistinct float8[],
	OUT column_source text[])
RETURNS record
AS 'MODULE_PATHNAME', 'abtree_ndistinct'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION abtree_ndistinct(regclass, text[], integer, text, float8) IS
'estimated number of distinct combinations of the columns, from a TABLESAMPLE swr sample corrected by per-column sketches';

-- The frequency vector of all rows of a table over the columns, by
-- Algorithm 6.3 ('partition') or by sorting whole rows ('reference').
CREATE FUNCTION abtree_ndistinct_freq(
	tbl regclass,
	columns text[],
	algorithm text DEFAULT 'partition')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'abtree_ndistinct_freq'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION abtree_ndistinct_freq(regclass, text[], text) IS
'frequency vector of the rows of a table over some columns: element i is the number of combinations that occur exactly i times';

-- Compute the estimate for every combination of two or more columns of a
-- CREATE STATISTICS (ndistinct) object from one sample and write them
-- into the object's data, where the planner's GROUP BY estimates read
-- them.  keep_across_analyze sets the object's statistics target to 0,
-- which makes ANALYZE leave the data alone.  Returns the number of
-- combinations written.  Only the object's owner may call it.
CREATE FUNCTION abtree_ndistinct_store(
	stat text,
	sample_rows integer DEFAULT 30000,
	seed float8 DEFAULT NULL,
	keep_across_analyze boolean DEFAULT true)
RETURNS integer
AS 'MODULE_PATHNAME', 'abtree_ndistinct_store'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION abtree_ndistinct_store(
	stat oid,
	sample_rows integer DEFAULT 30000,
	seed float8 DEFAULT NULL,
	keep_across_analyze boolean DEFAULT true)
RETURNS integer
AS 'MODULE_PATHNAME', 'abtree_ndistinct_store'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION abtree_ndistinct_store(text, integer, float8, boolean) IS
'store sketch-corrected distinct counts of every column combination in a CREATE STATISTICS (ndistinct) object';
COMMENT ON FUNCTION abtree_ndistinct_store(oid, integer, float8, boolean) IS
'store sketch-corrected distinct counts of every column combination in a CREATE STATISTICS (ndistinct) object';
