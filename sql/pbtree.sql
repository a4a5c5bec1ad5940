-- pbtree: a partitioned B-tree.  Results through the index must equal a
-- sequential scan's for every scan type, across seals, merges and VACUUM.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;
-- partitions only when we say so: no automatic seals or merges here
SET abtree.pbtree_buffer_budget = 1000000;
SET abtree.pbtree_merge_threshold = 0;

-- The shared budget (other indexes of the server count against it) is
-- tested on a cluster of its own: TAP 031_pbtree_budget.pl.

-- run a query with only index scans, only index-only scans, only bitmap
-- scans and only a sequential scan; all must give the same rows
CREATE FUNCTION pbt_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	modes text[] := ARRAY['index', 'indexonly', 'bitmap'];
	m text;
	n bigint;
	ref text;
	got text;
BEGIN
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_bitmapscan = off;
	SET LOCAL enable_seqscan = on;
	EXECUTE format('SELECT count(*), md5(string_agg(r::text, '','' ORDER BY r::text)) FROM (%s) r', q)
		INTO n, ref;
	FOREACH m IN ARRAY modes LOOP
		SET LOCAL enable_seqscan = off;
		SET LOCAL enable_indexscan = off;
		SET LOCAL enable_indexonlyscan = off;
		SET LOCAL enable_bitmapscan = off;
		EXECUTE format('SET LOCAL enable_%sscan = on', m);
		EXECUTE format('SELECT md5(string_agg(r::text, '','' ORDER BY r::text)) FROM (%s) r', q)
			INTO got;
		IF got IS DISTINCT FROM ref THEN
			RETURN format('%s differs from the sequential scan', m);
		END IF;
	END LOOP;
	RETURN format('%s rows, same', n);
END $$;

-- ordered output must be ordered (the merge of the partitions)
CREATE FUNCTION pbt_ordered(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	ref text;
	got text;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	SET LOCAL enable_sort = off;
	EXECUTE format('SELECT string_agg(r::text, '','') FROM (%s) r', q) INTO got;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_sort = on;
	EXECUTE format('SELECT string_agg(r::text, '','') FROM (%s) r', q) INTO ref;
	RETURN CASE WHEN got IS NOT DISTINCT FROM ref THEN 'same order' ELSE 'differs' END;
END $$;

CREATE TABLE pt (a int, b text, c int);
INSERT INTO pt SELECT (i * 7919) % 5000, 'k' || (i % 37), i FROM generate_series(1, 5000) i;
INSERT INTO pt VALUES (NULL, 'null a', -1), (42, NULL, -2);
CREATE INDEX pt_a ON pt USING pbtree (a);
CREATE INDEX pt_ba ON pt USING pbtree (b, a DESC NULLS FIRST) INCLUDE (c);
SELECT partition, state, entries, filters FROM pbtree_stats('pt_a');
SELECT partition, state, entries, filters FROM pbtree_stats('pt_ba');

-- three more partitions: inserts sealed twice, and a mutable one
INSERT INTO pt SELECT (i * 31) % 7000, 'k' || (i % 41), i FROM generate_series(5001, 8000) i;
SELECT pbtree_seal('pt_a'), pbtree_seal('pt_ba');
INSERT INTO pt SELECT i % 6000, 'm' || (i % 13), i FROM generate_series(8001, 10000) i;
SELECT pbtree_seal('pt_a'), pbtree_seal('pt_ba');
INSERT INTO pt SELECT i % 3000, 'k' || (i % 7), i FROM generate_series(10001, 11000) i;
SELECT partition, state, entries, filters FROM pbtree_stats('pt_a');
SELECT pbtree_verify('pt_a', true), pbtree_verify('pt_ba', true);

SELECT pbt_same('SELECT a FROM pt WHERE a = 42');
SELECT pbt_same('SELECT a, c FROM pt WHERE a = 4999');
SELECT pbt_same('SELECT a FROM pt WHERE a = 123456');
SELECT pbt_same('SELECT a FROM pt WHERE a BETWEEN 100 AND 200');
SELECT pbt_same('SELECT a FROM pt WHERE a < 10 OR a > 6990');
SELECT pbt_same('SELECT a FROM pt WHERE a IS NULL');
SELECT pbt_same('SELECT a FROM pt WHERE a IS NOT NULL AND a >= 5990');
SELECT pbt_same('SELECT b, a, c FROM pt WHERE b = ''k3''');
SELECT pbt_same('SELECT b, a, c FROM pt WHERE b = ''k3'' AND a = 42');
SELECT pbt_same('SELECT b, a FROM pt WHERE b = ''m5'' AND a < 100');
SELECT pbt_same('SELECT b, a FROM pt WHERE b > ''m1'' AND b < ''m3''');
SELECT pbt_same('SELECT b FROM pt WHERE b IS NULL');
SELECT pbt_ordered('SELECT a FROM pt WHERE a < 300 ORDER BY a');
SELECT pbt_ordered('SELECT a FROM pt WHERE a > 6500 ORDER BY a DESC');
SELECT pbt_ordered('SELECT a FROM pt ORDER BY a NULLS LAST');
SELECT pbt_ordered('SELECT b, a FROM pt WHERE b >= ''m'' ORDER BY b, a DESC NULLS FIRST');
SELECT pbt_ordered('SELECT b, a FROM pt ORDER BY b DESC, a ASC NULLS LAST');

-- the plans really are pbtree scans, with the merge giving the order
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT a FROM pt WHERE a < 300 ORDER BY a;
EXPLAIN (COSTS OFF) SELECT b, a FROM pt WHERE b = 'k3' ORDER BY b DESC, a ASC;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a merge, then VACUUM after deletes; results stay the same
SELECT pbtree_merge('pt_a');
SELECT partition, state, entries, filters FROM pbtree_stats('pt_a') WHERE state <> 'dropped';
DELETE FROM pt WHERE c % 3 = 0;
VACUUM pt;
SELECT partition, state, entries FROM pbtree_stats('pt_a') WHERE state <> 'dropped';
SELECT pbtree_verify('pt_a', true), pbtree_verify('pt_ba', true);
SELECT pbt_same('SELECT a FROM pt WHERE a BETWEEN 1000 AND 1100');
SELECT pbt_same('SELECT b, a, c FROM pt WHERE b = ''k5''');
SELECT pbt_ordered('SELECT a FROM pt WHERE a BETWEEN 1000 AND 1500 ORDER BY a DESC');
-- dropped partitions are freed and their pages reused
VACUUM pt;
SELECT count(*) AS dropped FROM pbtree_stats('pt_a') WHERE state = 'dropped';
SELECT pg_relation_size('pt_a') / 8192 AS pages_before \gset
INSERT INTO pt SELECT i % 5000, 'r', i FROM generate_series(20001, 23000) i;
SELECT pbtree_seal('pt_a');
SELECT pg_relation_size('pt_a') / 8192 - :pages_before < 60 AS reused_free_pages;
SELECT pbtree_verify('pt_a', true);

-- automatic seals: a tiny budget seals while inserting
SET abtree.pbtree_buffer_budget = 2;
INSERT INTO pt SELECT i % 9000, 'auto', i FROM generate_series(30001, 40000) i;
SELECT count(*) > 3 AS sealed_automatically FROM pbtree_stats('pt_a') WHERE state = 'sealed';
SET abtree.pbtree_buffer_budget = 1000000;
SELECT pbtree_verify('pt_a', true), pbtree_verify('pt_ba', true);
SELECT pbt_same('SELECT a FROM pt WHERE a = 77');
SELECT pbt_ordered('SELECT a FROM pt WHERE a < 100 ORDER BY a');
-- the filters rule out keys not there (most partitions skipped)
SELECT bool_and(key_filter_fpr < 0.05) AS filters_tight
  FROM pbtree_stats('pt_a') WHERE state = 'sealed';

-- more types and a many-column key; REINDEX; cursors without scroll
CREATE TABLE ptypes (t text COLLATE "C", n numeric, d date, u uuid, f float8);
INSERT INTO ptypes SELECT 'x' || i, i / 7.0, date '2020-01-01' + i,
	md5(i::text)::uuid, CASE WHEN i % 10 = 0 THEN 'NaN' ELSE i * 0.5 END
	FROM generate_series(1, 2000) i;
CREATE INDEX ptypes_i ON ptypes USING pbtree (t, n, d, u, f);
INSERT INTO ptypes SELECT 'y' || i, i, date '2021-01-01' + i, md5((i + 9999)::text)::uuid, -i
	FROM generate_series(1, 500) i;
SELECT pbtree_seal('ptypes_i');
INSERT INTO ptypes SELECT 'x' || i, i / 7.0, NULL, NULL, NULL FROM generate_series(1, 300) i;
SELECT pbt_same('SELECT t, n FROM ptypes WHERE t = ''x77''');
SELECT pbt_same('SELECT t, n, d FROM ptypes WHERE t = ''x77'' AND n = 11');
SELECT pbt_same('SELECT t FROM ptypes WHERE t BETWEEN ''x1'' AND ''x2''');
SELECT pbt_ordered('SELECT t, n, d, u, f FROM ptypes WHERE t > ''x9'' ORDER BY t, n, d, u, f');
REINDEX INDEX ptypes_i;
SELECT partition, state, entries, filters FROM pbtree_stats('ptypes_i');
SELECT pbtree_verify('ptypes_i', true);
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
DECLARE cur CURSOR FOR SELECT t FROM ptypes WHERE t > 'y49' ORDER BY t;
FETCH 3 FROM cur;
FETCH 2 FROM cur;
COMMIT;

-- unlogged and temporary tables
CREATE UNLOGGED TABLE pu (a int);
CREATE INDEX pu_a ON pu USING pbtree (a);
INSERT INTO pu SELECT generate_series(1, 1000);
SELECT pbtree_seal('pu_a'), pbtree_verify('pu_a', true);
CREATE TEMP TABLE ptmp (a int);
CREATE INDEX ptmp_a ON ptmp USING pbtree (a);
INSERT INTO ptmp SELECT generate_series(1, 1000);
SELECT pbtree_seal('ptmp_a'), pbtree_verify('ptmp_a', true);
SELECT pbt_same('SELECT a FROM ptmp WHERE a = 500');

-- bad input
CREATE UNIQUE INDEX ON pt USING pbtree (c);
CREATE INDEX ON pt USING pbtree (a) WITH (fillfactor = 50);
SELECT pbtree_stats(NULL);
SELECT pbtree_verify(NULL);
SELECT pbtree_seal(NULL);
SELECT pbtree_merge(NULL);
SELECT pbtree_merge('pt_a', -1);
SELECT pbtree_merge('pt_a', 1);
SELECT pbtree_merge('pt_a', 2147483647) >= 0 AS merged_ok;
SELECT pbtree_stats('pt');
SELECT pbtree_verify('pt_a'::regclass::oid::int::regclass, NULL);
SELECT pbtree_seal(0);
CREATE INDEX pt_abt ON pt USING abtree (a);
SELECT pbtree_stats('pt_abt');
SELECT abtree_stats('pt_a');
SET abtree.pbtree_filter_bits = -1;
SET abtree.pbtree_filter_bits = 65;
DO $$ BEGIN SET abtree.pbtree_buffer_budget = 0;
EXCEPTION WHEN others THEN RAISE NOTICE 'budget 0: %', SQLSTATE; END $$;
SET abtree.pbtree_merge_threshold = 1000;
-- privileges: reading needs SELECT on the table, sealing INSERT
CREATE ROLE regress_pbt_reader;
GRANT SELECT ON pt TO regress_pbt_reader;
SET ROLE regress_pbt_reader;
SELECT count(*) > 0 AS can_read FROM pbtree_stats('pt_a');
SELECT pbtree_seal('pt_a');
RESET ROLE;
REVOKE ALL ON pt FROM regress_pbt_reader;
DROP ROLE regress_pbt_reader;

DROP TABLE pt, ptypes, pu, ptmp;
DROP FUNCTION pbt_same(text), pbt_ordered(text);
