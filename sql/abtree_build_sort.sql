-- The bulk build's sort (abtbuildsort.c): one fixed-width integer key with
-- nothing included is sorted as (key, TID) pairs in memory; every other
-- index as index tuples in memory (the first key abbreviated where its type
-- can); pairs and tuples that outgrow maintenance_work_mem are sorted in
-- runs on disk and merged.
-- Both must give nbtree's order: key (ASC or DESC, NULLS FIRST or LAST),
-- then heap TID.  abtree_verify checks that order on every page (the TID
-- too) and, with heapallindexed, that every row is there; the index-only
-- scans must return what a sort of the table returns.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

CREATE TABLE bs (i2 int2, i4 int4, i8 int8, d date, ts timestamptz, o oid, t text);
INSERT INTO bs
  SELECT (g % 301 - 150)::int2,
         CASE WHEN g % 7 = 0 THEN NULL ELSE hashint4(g) % 1000 END,
         CASE WHEN g % 11 = 0 THEN NULL ELSE (hashint4(g)::int8 << 20) END,
         date '2000-01-01' + g % 4000,
         CASE WHEN g % 5 = 0 THEN NULL ELSE timestamptz '2020-01-01' + g * interval '37 s' END,
         (hashint4(g) & 2147483647)::oid,
         CASE WHEN g % 3 = 0 THEN md5((g % 1000)::text)
              ELSE 'a shared prefix, longer than an abbreviated key: ' || g % 100 END
    FROM generate_series(1, 30000) g;
-- rows in a non-sorted heap order, with HOT chains and dead rows
UPDATE bs SET t = t || 'u' WHERE i2 = 7;
DELETE FROM bs WHERE i2 = 8;

CREATE FUNCTION bs_check(idx regclass, col text, ord text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	via_index text;
	via_sort text;
BEGIN
	PERFORM abtree_verify(idx, heapallindexed => true, exact => true);
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE format('SELECT md5(string_agg(coalesce(%I::text, ''N''), '','' ORDER BY %I %s)) FROM bs', col, col, ord)
	  INTO via_index;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_seqscan = on;
	EXECUTE format('SELECT md5(string_agg(coalesce(%I::text, ''N''), '','' ORDER BY %I %s)) FROM bs', col, col, ord)
	  INTO via_sort;
	RETURN CASE WHEN via_index = via_sort THEN 'ok' ELSE 'ORDER DIFFERS' END;
END $$;

CREATE INDEX bs_i4 ON bs USING abtree (i4);
CREATE INDEX bs_i4_desc ON bs USING abtree (i4 DESC);
CREATE INDEX bs_i4_nf ON bs USING abtree (i4 NULLS FIRST);
CREATE INDEX bs_i8_dl ON bs USING abtree (i8 DESC NULLS LAST);
CREATE INDEX bs_i2 ON bs USING abtree (i2);
CREATE INDEX bs_d ON bs USING abtree (d DESC);
CREATE INDEX bs_ts ON bs USING abtree (ts);
CREATE INDEX bs_o ON bs USING abtree (o);
CREATE INDEX bs_expr ON bs USING abtree ((i2 * 2));
CREATE INDEX bs_t ON bs USING abtree (t);
CREATE INDEX bs_incl ON bs USING abtree (i4) INCLUDE (t);
CREATE INDEX bs_t_dnf ON bs USING abtree (t DESC NULLS FIRST);
CREATE INDEX bs_t_c ON bs USING abtree (t COLLATE "C");
CREATE INDEX bs_t_cd ON bs USING abtree (t COLLATE "C" DESC NULLS LAST);
CREATE INDEX bs_t_i4 ON bs USING abtree (t, i4 DESC);
CREATE INDEX bs_i4_t ON bs USING abtree (i4 NULLS FIRST, t);
SELECT i, bs_check(i::regclass, c, o) FROM (VALUES
  ('bs_t_dnf', 't', 'DESC NULLS FIRST'), ('bs_t_c', 't', 'COLLATE "C"'),
  ('bs_t_cd', 't', 'COLLATE "C" DESC NULLS LAST')) v(i, c, o);
-- two key columns: compare the index order with a sort on both
CREATE FUNCTION bs_check2(idx regclass, ord text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	via_index text;
	via_sort text;
	q text := format('SELECT md5(string_agg(coalesce(t, ''N'') || '':'' || coalesce(i4::text, ''N''), '','' ORDER BY %s)) FROM bs', ord);
BEGIN
	PERFORM abtree_verify(idx, heapallindexed => true, exact => true);
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE q INTO via_index;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_seqscan = on;
	EXECUTE q INTO via_sort;
	RETURN CASE WHEN via_index = via_sort THEN 'ok' ELSE 'ORDER DIFFERS' END;
END $$;
SELECT bs_check2('bs_t_i4', 't, i4 DESC'), bs_check2('bs_i4_t', 'i4 NULLS FIRST, t');
SELECT i, bs_check(i::regclass, c, o) FROM (VALUES
  ('bs_i4', 'i4', 'ASC NULLS LAST'), ('bs_i4_desc', 'i4', 'DESC NULLS FIRST'),
  ('bs_i4_nf', 'i4', 'ASC NULLS FIRST'), ('bs_i8_dl', 'i8', 'DESC NULLS LAST'),
  ('bs_i2', 'i2', 'ASC'), ('bs_d', 'd', 'DESC'), ('bs_ts', 'ts', 'ASC'), ('bs_o', 'o', 'ASC'),
  ('bs_t', 't', 'ASC'), ('bs_incl', 'i4', 'ASC')) v(i, c, o);
SELECT abtree_verify('bs_expr', heapallindexed => true, exact => true);
-- the extremes of each type survive the widening to int64 and back
CREATE TABLE bs_ext (i2 int2, i4 int4, i8 int8, o oid);
INSERT INTO bs_ext VALUES (-32768, -2147483648, -9223372036854775808, 0),
  (32767, 2147483647, 9223372036854775807, 4294967295), (0, 0, 0, 1), (NULL, NULL, NULL, NULL);
CREATE INDEX bs_ext_i8 ON bs_ext USING abtree (i8 DESC);
CREATE INDEX bs_ext_o ON bs_ext USING abtree (o);
SET enable_seqscan = off;
SELECT i8 FROM bs_ext ORDER BY i8 DESC;
SELECT o FROM bs_ext ORDER BY o;
RESET enable_seqscan;
SELECT abtree_verify('bs_ext_i8', heapallindexed => true, exact => true),
       abtree_verify('bs_ext_o', heapallindexed => true, exact => true);
-- pairs that outgrow maintenance_work_mem (1 MB: 65,536 pairs) are sorted
-- in runs on disk, merged as they are read back: 300,000 rows make four
-- runs and one in memory; with at most 2 runs merged at once, the runs on
-- disk are merged into one whenever there are two
-- (the indexes above go first: inserts into all of them would be slow)
DROP INDEX bs_i4, bs_i4_desc, bs_i4_nf, bs_i8_dl, bs_i2, bs_d, bs_ts, bs_o, bs_expr, bs_t,
  bs_incl, bs_t_dnf, bs_t_c, bs_t_cd, bs_t_i4, bs_i4_t;
INSERT INTO bs (i4, i8) SELECT hashint4(g) % 5000, g FROM generate_series(1, 270000) g;
SET maintenance_work_mem = '1MB';
CREATE INDEX bs_i4_spill ON bs USING abtree (i4 DESC NULLS LAST);
SET abtree.debug_build_merge_runs = 2;
CREATE INDEX bs_i4_spill2 ON bs USING abtree (i4 NULLS FIRST);
RESET abtree.debug_build_merge_runs;
RESET maintenance_work_mem;
SELECT bs_check('bs_i4_spill', 'i4', 'DESC NULLS LAST'), bs_check('bs_i4_spill2', 'i4', 'NULLS FIRST');
SELECT entries FROM abtree_stats('bs_i4_spill');
SELECT count(*) FROM bs;
-- so do index tuples (300,000 rows of text, some NULL, about 12 MB)
UPDATE bs SET t = 'a shared prefix again: ' || md5(i8::text) WHERE t IS NULL AND i8 % 3 <> 0;
SET maintenance_work_mem = '1MB';
CREATE INDEX bs_t_spill ON bs USING abtree (t DESC NULLS FIRST);
SET abtree.debug_build_merge_runs = 3;
CREATE INDEX bs_t_i4_spill ON bs USING abtree (t, i4 DESC);
-- abbreviated keys (collation "C") are written with the tuples
CREATE INDEX bs_tc_spill ON bs USING abtree (t COLLATE "C" DESC);
RESET abtree.debug_build_merge_runs;
RESET maintenance_work_mem;
SELECT bs_check('bs_t_spill', 't', 'DESC NULLS FIRST'), bs_check2('bs_t_i4_spill', 't, i4 DESC'),
       bs_check('bs_tc_spill', 't', 'COLLATE "C" DESC');
CREATE INDEX bs_t_mem ON bs USING abtree (t DESC NULLS FIRST);
SELECT bs_check('bs_t_mem', 't', 'DESC NULLS FIRST');
SELECT s1.entries, s1.entries = s2.entries AS same
  FROM abtree_stats('bs_t_spill') s1, abtree_stats('bs_t_mem') s2;
-- tuples merged from runs live only through the next one (abtbuild.c keeps
-- its own copies across rows): the spilled build packs the same leaves,
-- posting tuples included, as the build in memory, and both build the
-- sketch that chll_agg makes of the column in the index's order (an
-- overflow array's contents depend on the order of the adds)
SELECT s1.pages_per_level = s2.pages_per_level AS same_pages,
       s1.avg_leaf_fill = s2.avg_leaf_fill AS same_fill,
       chll_send(abtree_sketch('bs_t_spill', 1)) = chll_send(abtree_sketch('bs_t_mem', 1)) AS same_sketch,
       chll_send(abtree_sketch('bs_t_mem', 1)) = (SELECT chll_send(chll_agg(t ORDER BY t DESC)) FROM bs) AS sketch_is_agg
  FROM abtree_stats('bs_t_spill') s1, abtree_stats('bs_t_mem') s2;

-- NULLs reaching half the memory after runs were written: the NULLs, the
-- pairs in memory and those of the runs all go on in tuplesort
INSERT INTO bs (i8) SELECT g FROM generate_series(1, 70000) g;
SET maintenance_work_mem = '1MB';
CREATE INDEX bs_i4_nulls ON bs USING abtree (i4);
RESET maintenance_work_mem;
SELECT bs_check('bs_i4_nulls', 'i4', 'ASC NULLS LAST');
SELECT entries FROM abtree_stats('bs_i4_nulls');

DROP TABLE bs, bs_ext;
DROP FUNCTION bs_check(regclass, text, text);
DROP FUNCTION bs_check2(regclass, text);
