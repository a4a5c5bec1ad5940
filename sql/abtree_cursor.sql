-- Scrollable cursors over abtree index and index-only scans (issue 20):
-- every FETCH direction, changes of direction at both ends of the scan,
-- forward and backward (DESC) scans, with and without key bounds.  Each
-- sequence runs through an abtree index scan, an abtree index-only scan,
-- a btree index scan and a sequential scan with a sort; all four must give
-- the same rows.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;
CREATE TABLE cu (k int, v int);
INSERT INTO cu SELECT g, (g * 7919) % 1000 FROM generate_series(1, 1000) g;
CREATE TABLE cu_bt (LIKE cu);
INSERT INTO cu_bt SELECT * FROM cu;
CREATE INDEX cu_ab ON cu USING abtree (k);
CREATE INDEX cu_bt_idx ON cu_bt USING btree (k);
VACUUM ANALYZE cu, cu_bt;

-- What each FETCH of a scroll cursor over query returns, under the given
-- planner settings: "count:first-last" per FETCH, '|' between them.
CREATE FUNCTION cu_fetches(query text, fetches text[], settings text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	c refcursor := 'cu_c';
	f text;
	r record;
	n int;
	first int;
	last int;
	out text := '';
BEGIN
	EXECUTE settings;
	OPEN c SCROLL FOR EXECUTE query;
	FOREACH f IN ARRAY fetches LOOP
		n := 0;
		FOR r IN EXECUTE format('FETCH %s FROM cu_c', f) LOOP
			n := n + 1;
			IF n = 1 THEN first := r.k; END IF;
			last := r.k;
		END LOOP;
		out := out || CASE WHEN n = 0 THEN '0' ELSE n || ':' || first || '-' || last END || ' | ';
	END LOOP;
	CLOSE c;
	RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_indexscan;
	RESET enable_indexonlyscan;
	RETURN out;
END $$;

-- the access paths compared
CREATE TABLE cu_paths (name text, tab text, settings text);
INSERT INTO cu_paths VALUES
 ('abtree index scan', 'cu', 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off'),
 ('abtree index-only scan', 'cu', 'SET enable_seqscan = off; SET enable_bitmapscan = off'),
 ('btree index scan', 'cu_bt', 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off'),
 ('seqscan and sort', 'cu', 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off');

-- each path's plan uses what it says
CREATE FUNCTION cu_plan(query text, settings text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	out text := '';
BEGIN
	EXECUTE settings;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		IF line ~ '(Scan|Sort)' THEN
			out := out || regexp_replace(line, '^[ ->]*', '') || '; ';
		END IF;
	END LOOP;
	RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_indexscan;
	RESET enable_indexonlyscan;
	RETURN out;
END $$;
SELECT name, cu_plan(format('SELECT k FROM %s WHERE k > 5 ORDER BY k DESC', tab), settings)
  FROM cu_paths ORDER BY name;

CREATE TABLE cu_cases (id int, query text, fetches text[]);
INSERT INTO cu_cases VALUES
 (1, 'SELECT k FROM %s ORDER BY k',
  '{5,"BACKWARD 3",LAST,"BACKWARD 2",FIRST,PRIOR,NEXT,"ABSOLUTE 400","RELATIVE -2","FORWARD 3"}'),
 (2, 'SELECT k FROM %s WHERE k BETWEEN 100 AND 200 ORDER BY k DESC',
  '{"ALL","BACKWARD 2",NEXT,"FORWARD 3","BACKWARD ALL","FORWARD 2"}'),
 (3, 'SELECT k FROM %s WHERE k >= 360 AND k < 740 ORDER BY k',
  '{"ALL","BACKWARD 3","ABSOLUTE -1","ABSOLUTE 1",PRIOR,NEXT,"RELATIVE 370","FORWARD ALL","BACKWARD 1"}'),
 (4, 'SELECT k FROM %s ORDER BY k DESC',
  '{"FORWARD 999","FORWARD 2",PRIOR,"BACKWARD 3",LAST,"FORWARD 1","BACKWARD 2","ABSOLUTE 2"}'),
 (5, 'SELECT k FROM %s WHERE k = ANY(''{3,500,999,2000}'') ORDER BY k',
  '{ALL,"BACKWARD ALL",NEXT,LAST,PRIOR}');

-- the abtree index scan's answers, and which paths differ from them
SELECT c.id, cu_fetches(format(c.query, 'cu'), c.fetches, p.settings) AS abtree
  FROM cu_cases c, cu_paths p WHERE p.name = 'abtree index scan' ORDER BY c.id;
SELECT c.id, p.name
  FROM cu_cases c, cu_paths p
 WHERE cu_fetches(format(c.query, p.tab), c.fetches, p.settings) <>
       (SELECT cu_fetches(format(c.query, b.tab), c.fetches, b.settings)
          FROM cu_paths b WHERE b.name = 'btree index scan')
 ORDER BY 1, 2;

DROP TABLE cu, cu_bt, cu_cases, cu_paths;
DROP FUNCTION cu_fetches(text, text[], text);
DROP FUNCTION cu_plan(text, text);
