--
-- The operator classes of the abtree access method, and a randomized check
-- that scans of abtree indexes return exactly what a sequential scan returns.
--
-- For every operator class there is a table with random data (NULLs and
-- duplicates included) and an abtree index; three more tables have a
-- multi-column index, one with DESC and NULLS FIRST columns and one with
-- INCLUDE columns.  opc_check() then generates random queries (=, <, <=, >,
-- >=, BETWEEN, IS [NOT] NULL, = ANY, cross-type comparisons, ORDER BY ...
-- LIMIT) and runs each one under forced plans: index scan, bitmap scan and
-- index-only scan, comparing with a sequential scan.  It checks with EXPLAIN
-- that each forced plan really is the intended one.  Results are compared as
-- multisets, ORDER BY ... LIMIT results as ordered arrays of the sort key.
-- Only counts are printed, so the output does not depend on the locale.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

SET jit = off;							-- forced plans have huge costs
SET max_parallel_workers_per_gather = 0;
SET DateStyle = 'ISO, YMD';				-- literals in the EXPLAIN output

--
-- What the extension installs for abtree
--
SELECT f.opfname AS family, c.opcname AS class, c.opcintype::regtype AS type,
       c.opcdefault AS "default"
  FROM pg_opclass c
  JOIN pg_opfamily f ON f.oid = c.opcfamily
 WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'abtree')
 ORDER BY f.opfname, c.opcname;

SELECT f.opfname AS family,
       (SELECT count(*) FROM pg_amop o
         WHERE o.amopfamily = f.oid) AS operators,
       (SELECT count(*) FROM pg_amop o
         WHERE o.amopfamily = f.oid AND o.amoplefttype <> o.amoprighttype) AS cross_type_operators,
       (SELECT string_agg(DISTINCT o.amopstrategy::text, ',') FROM pg_amop o
         WHERE o.amopfamily = f.oid) AS strategies,
       (SELECT count(*) FROM pg_amproc p
         WHERE p.amprocfamily = f.oid) AS functions,
       (SELECT string_agg(DISTINCT p.amprocnum::text, ',') FROM pg_amproc p
         WHERE p.amprocfamily = f.oid) AS function_numbers
  FROM pg_opfamily f
 WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'abtree')
 ORDER BY f.opfname;

-- Members that differ from those of btree's family of the same name, apart
-- from btree's in_range and equalimage functions and its name type: none.
WITH members AS (
	SELECT a.amname, f.opfname, 'operator' AS kind,
	       o.amoplefttype AS lefttype, o.amoprighttype AS righttype,
	       o.amopstrategy AS number, o.amopopr::regoperator::text AS member
	  FROM pg_amop o
	  JOIN pg_opfamily f ON f.oid = o.amopfamily
	  JOIN pg_am a ON a.oid = f.opfmethod
	UNION ALL
	SELECT a.amname, f.opfname, 'function',
	       p.amproclefttype, p.amprocrighttype,
	       p.amprocnum, p.amproc::regprocedure::text
	  FROM pg_amproc p
	  JOIN pg_opfamily f ON f.oid = p.amprocfamily
	  JOIN pg_am a ON a.oid = f.opfmethod
), abtree AS (
	SELECT opfname, kind, lefttype, righttype, number, member
	  FROM members WHERE amname = 'abtree'
), btree AS (
	SELECT opfname, kind, lefttype, righttype, number, member
	  FROM members
	 WHERE amname = 'btree'
	   AND opfname IN (SELECT opfname FROM abtree)
	   AND NOT (kind = 'function' AND number NOT IN (1, 2))
	   AND 'name'::regtype NOT IN (lefttype, righttype)
)
(SELECT 'only in btree' AS "where", * FROM (TABLE btree EXCEPT TABLE abtree) d)
UNION ALL
(SELECT 'only in abtree', * FROM (TABLE abtree EXCEPT TABLE btree) d)
ORDER BY 2, 3, 4, 5, 6;

--
-- Helpers
--

-- Per table and key column, SQL expressions that produce random values: the
-- first one, of the column's type, fills the table; all of them are used for
-- the literals of the queries (the others test cross-type operators).
CREATE TABLE opc_gen (tab regclass, col name, gens text[]);

-- A random value of expression expr, as a literal with a cast: '5'::int8
CREATE FUNCTION opc_lit(expr text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	lit text;
BEGIN
	EXECUTE format('SELECT format(''%%L::%%s'', s.v, t.typname)'
				   '  FROM (SELECT (%s) AS v) s'
				   '  JOIN pg_type t ON t.oid = pg_typeof(s.v)', expr)
		INTO STRICT lit;
	IF lit LIKE 'NULL::%' THEN
		RAISE EXCEPTION 'expression % returned NULL', expr;
	END IF;
	RETURN lit;
END
$$;

-- Add nrows rows to every table in opc_gen; each column is NULL in 5% of them.
CREATE FUNCTION opc_fill(nrows int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	t regclass;
	cols text;
	vals text;
BEGIN
	FOR t, cols, vals IN
		SELECT g.tab,
		       string_agg(quote_ident(g.col), ', ' ORDER BY g.col),
		       string_agg(format('CASE WHEN random() < 0.05 THEN NULL ELSE %s END',
								 g.gens[1]), ', ' ORDER BY g.col)
		  FROM opc_gen g
		 GROUP BY g.tab
		 ORDER BY g.tab::text
	LOOP
		EXECUTE format('INSERT INTO %1$s (id, %2$s)'
					   ' SELECT coalesce((SELECT max(id) FROM %1$s), 0) + i, %3$s'
					   '   FROM generate_series(1, %4$s) i',
					   t, cols, vals, nrows);
	END LOOP;
END
$$;

-- Delete pct percent of the rows of every table in opc_gen, and give new
-- values to the key columns of another pct percent.
CREATE FUNCTION opc_churn(pct float8) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	t regclass;
	sets text;
BEGIN
	FOR t, sets IN
		SELECT g.tab,
		       string_agg(format('%I = CASE WHEN random() < 0.05 THEN NULL ELSE %s END',
								 g.col, g.gens[1]), ', ' ORDER BY g.col)
		  FROM opc_gen g
		 GROUP BY g.tab
		 ORDER BY g.tab::text
	LOOP
		EXECUTE format('DELETE FROM %s WHERE random() * 100 < %s', t, pct);
		EXECUTE format('UPDATE %s SET %s WHERE random() * 100 < %s', t, sets, pct);
	END LOOP;
END
$$;

-- Force a plan type: 'seqscan' (the reference), 'index', 'bitmap' or
-- 'indexonly'.  With nosort, a Sort is disabled too, so that an ORDER BY
-- must be satisfied by the index order.  Local to the current transaction.
CREATE FUNCTION opc_force(mode text, nosort bool) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('enable_seqscan', (mode = 'seqscan')::text, true);
	PERFORM set_config('enable_indexscan', (mode IN ('index', 'indexonly'))::text, true);
	PERFORM set_config('enable_indexonlyscan', (mode = 'indexonly')::text, true);
	PERFORM set_config('enable_bitmapscan', (mode = 'bitmap')::text, true);
	PERFORM set_config('enable_sort', (NOT nosort)::text, true);
END
$$;

-- Is the plan of query q of the kind that mode asks for?
CREATE FUNCTION opc_plan_ok(q text, mode text, ordered bool) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	plan text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || E'\n' || line;
	END LOOP;
	-- PostgreSQL 18 proves "k = 1 AND k = 2" empty and scans nothing at all
	IF plan ~ 'One-Time Filter: false' AND plan !~ '\mScan\M' THEN
		RETURN true;
	END IF;
	RETURN CASE mode
		WHEN 'seqscan' THEN
			plan ~ '\mSeq Scan\M' AND plan !~ '\mIndex\M'
		WHEN 'index' THEN
			plan ~ '\n\s*(->\s+)?Index Scan( Backward)? using '
			AND NOT (ordered AND plan ~ '\mSort\M')
		WHEN 'bitmap' THEN
			plan ~ '\mBitmap Index Scan on '
		WHEN 'indexonly' THEN
			plan ~ '\mIndex Only Scan( Backward)? using '
			AND NOT (ordered AND plan ~ '\mSort\M')
	END;
END
$$;

-- A random condition on column col, with literals made by the expressions
-- in gens; the kinds of condition in skip are not generated.
CREATE FUNCTION opc_cond(col text, gens text[], skip text[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	kinds text[] := ARRAY['=', '<', '<=', '>', '>=', 'commuted', 'between',
						  'is null', 'is not null', 'any'];
	ops text[] := ARRAY['=', '<', '<=', '>', '>='];
	kind text;
	op text;
	g text;
	lo text;
	hi text;
	swap bool;
	elems text[] := '{}';
BEGIN
	LOOP
		kind := kinds[1 + floor(random() * array_length(kinds, 1))::int];
		EXIT WHEN kind <> ALL (skip);
	END LOOP;
	-- the column's own type half of the time, else any of them
	IF random() < 0.5 THEN
		g := gens[1];
	ELSE
		g := gens[1 + floor(random() * array_length(gens, 1))::int];
	END IF;
	CASE kind
		WHEN 'is null' THEN
			RETURN format('%s IS NULL', col);
		WHEN 'is not null' THEN
			RETURN format('%s IS NOT NULL', col);
		WHEN 'commuted' THEN
			LOOP
				op := ops[1 + floor(random() * 5)::int];
				EXIT WHEN op <> ALL (skip);
			END LOOP;
			RETURN format('%s %s %s', opc_lit(g), op, col);
		WHEN 'between' THEN
			lo := opc_lit(g);
			hi := opc_lit(gens[1 + floor(random() * array_length(gens, 1))::int]);
			-- mostly in order, so that the range is not empty
			EXECUTE format('SELECT %s > %s', lo, hi) INTO swap;
			IF swap AND random() < 0.9 THEN
				RETURN format('%s BETWEEN %s AND %s', col, hi, lo);
			END IF;
			RETURN format('%s BETWEEN %s AND %s', col, lo, hi);
		WHEN 'any' THEN
			FOR i IN 1 .. 1 + floor(random() * 4)::int LOOP
				elems := elems || opc_lit(g);
			END LOOP;
			IF random() < 0.2 THEN
				elems := elems || 'NULL'::text;
			END IF;
			RETURN format('%s = ANY (ARRAY[%s])', col, array_to_string(elems, ', '));
		ELSE
			RETURN format('%s %s %s', col, kind, opc_lit(g));
	END CASE;
END
$$;

-- The driver: nq random queries against table tab and its only index, which
-- must be an abtree index.  Each query runs with a sequential scan (the
-- reference) and with an index scan, a bitmap scan (unless it has no WHERE
-- clause) and an index-only scan; it returns how many comparisons of each
-- kind were made, how many results differed from the reference and how many
-- forced plans were not of the intended kind.  skip: kinds of condition not
-- to generate (see opc_cond).  sabotage, for testing the driver itself:
-- 'rows' makes the reference drop some rows; 'plan' runs every query with
-- the reference's settings, so that no plan is of the intended kind.
-- Mismatches are shown as NOTICEs (the first five); with
-- SET client_min_messages = debug1 every query is shown.
CREATE FUNCTION opc_check(tab regclass, nq int, skip text[] DEFAULT '{}',
						  sabotage text DEFAULT NULL)
RETURNS TABLE (index name, opclasses text, queries int, index_scans int,
			   bitmap_scans int, index_only_scans int, mismatches int,
			   wrong_plans int)
LANGUAGE plpgsql AS $$
DECLARE
	idx oid;
	nkeys int;
	keys text[];				-- key columns, quoted
	keytypes text[];			-- their array types, e.g. 'int4[]'
	keycoll bool[];				-- whether they are collatable
	keydir text[];				-- index order: 'ASC' or 'DESC'
	keynulls text[];			-- index order: 'NULLS FIRST' or 'NULLS LAST'
	allcols text;				-- key and INCLUDE columns
	colgens text[];				-- per key column: its gens, as a text array
	conds text[];
	ordercols int[];
	backward bool;
	orderby text;
	lim int;
	q_where text;
	q text;
	q_ref text;
	variant float8;
	k int;
	m int;
	mode text;
	ref text[];
	got text[];
	same bool;
	ordsql text;
	n_notices int := 0;
BEGIN
	SELECT i.indexrelid, i.indnkeyatts, c.relname
	  INTO idx, nkeys, index
	  FROM pg_index i
	  JOIN pg_class c ON c.oid = i.indexrelid
	 WHERE i.indrelid = tab;
	IF (SELECT count(*) FROM pg_index i WHERE i.indrelid = tab) <> 1 OR
	   (SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		 WHERE c.oid = idx) <> 'abtree' THEN
		RAISE EXCEPTION 'table % must have exactly one index, an abtree index', tab;
	END IF;

	SELECT array_agg(quote_ident(a.attname) ORDER BY n)
			 FILTER (WHERE n <= nkeys),
		   array_agg(t.typname || '[]' ORDER BY n) FILTER (WHERE n <= nkeys),
		   array_agg(t.typcollation <> 0 ORDER BY n) FILTER (WHERE n <= nkeys),
		   array_agg(CASE WHEN i.indoption[n - 1] & 1 <> 0 THEN 'DESC' ELSE 'ASC' END
					 ORDER BY n) FILTER (WHERE n <= nkeys),
		   array_agg(CASE WHEN i.indoption[n - 1] & 2 <> 0 THEN 'NULLS FIRST'
					 ELSE 'NULLS LAST' END ORDER BY n) FILTER (WHERE n <= nkeys),
		   string_agg(quote_ident(a.attname), ', ' ORDER BY n),
		   string_agg(DISTINCT oc.opcname::text, ', ' ORDER BY oc.opcname::text)
			 FILTER (WHERE n <= nkeys)
	  INTO keys, keytypes, keycoll, keydir, keynulls, allcols, opclasses
	  FROM pg_index i
	  CROSS JOIN generate_series(1, i.indnatts) n
	  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[n - 1]
	  JOIN pg_type t ON t.oid = a.atttypid
	  LEFT JOIN pg_opclass oc ON oc.oid = i.indclass[n - 1]
	 WHERE i.indexrelid = idx;

	SELECT array_agg((SELECT g.gens::text FROM opc_gen g
					   WHERE g.tab = opc_check.tab AND quote_ident(g.col) = kk.key)
					 ORDER BY kk.n)
	  INTO colgens
	  FROM unnest(keys) WITH ORDINALITY kk(key, n);
	IF array_position(colgens, NULL) IS NOT NULL THEN
		RAISE EXCEPTION 'opc_gen has no expressions for some key column of %', tab;
	END IF;

	queries := 0;
	index_scans := 0;
	bitmap_scans := 0;
	index_only_scans := 0;
	mismatches := 0;
	wrong_plans := 0;

	FOR qn IN 1 .. nq LOOP
		conds := '{}';
		ordercols := NULL;
		variant := random();
		IF variant < 0.65 THEN
			-- no ORDER BY: one or two conditions, on any key columns
			FOR i IN 1 .. 1 + (random() < 0.35)::int LOOP
				k := CASE WHEN random() < 0.5 THEN 1
						  ELSE 1 + floor(random() * nkeys)::int END;
				conds := conds || opc_cond(keys[k], colgens[k]::text[], skip);
			END LOOP;
			-- An index AM without amsearcharray gets = ANY only in bitmap
			-- scans; a plain index scan needs another condition to search for.
			IF NOT EXISTS (SELECT FROM unnest(conds) c WHERE c NOT LIKE '% = ANY (%') THEN
				k := 1 + floor(random() * nkeys)::int;
				conds := conds || opc_cond(keys[k], colgens[k]::text[], skip || 'any'::text);
			END IF;
		ELSE
			-- ORDER BY a prefix of the keys in index order or its reverse,
			-- or (multi-column) the keys after a first one fixed by =
			FOR i IN 1 .. floor(random() * 3)::int LOOP
				k := 1 + floor(random() * nkeys)::int;
				conds := conds || opc_cond(keys[k], colgens[k]::text[], skip);
			END LOOP;
			IF nkeys > 1 AND random() < 0.25 AND NOT '=' = ANY (skip) THEN
				conds := conds || format('%s = %s', keys[1],
										 opc_lit((colgens[1]::text[])[1]));
				k := 2;
			ELSE
				k := 1;
			END IF;
			m := k + floor(random() * (nkeys - k + 1))::int;
			SELECT array_agg(s) INTO ordercols FROM generate_series(k, m) s;
			backward := random() < 0.5;
			SELECT string_agg(keys[c] || ' ' ||
							  CASE WHEN (keydir[c] = 'DESC') <> backward
								   THEN 'DESC' ELSE 'ASC' END ||
							  CASE WHEN (keynulls[c] = 'NULLS FIRST') <> backward
								   THEN ' NULLS FIRST' ELSE ' NULLS LAST' END,
							  ', ')
			  INTO orderby
			  FROM unnest(ordercols) c;
			lim := 1 + floor(random() * 40)::int;
		END IF;
		queries := queries + 1;

		FOREACH mode IN ARRAY ARRAY['index', 'bitmap', 'indexonly'] LOOP
			IF mode = 'bitmap' AND cardinality(conds) = 0 THEN
				CONTINUE;		-- nothing for a bitmap scan to search for
			END IF;

			-- the query, and the reference query that a sabotage may break
			q_where := CASE WHEN cardinality(conds) > 0
							THEN ' WHERE ' || array_to_string(conds, ' AND ') ELSE '' END;
			IF ordercols IS NULL THEN
				q := format('SELECT %s FROM %s%s',
							CASE mode WHEN 'indexonly' THEN allcols
									  ELSE 'id, ' || allcols END,
							tab, q_where);
			ELSE
				q := format('SELECT %s FROM %s%s ORDER BY %s LIMIT %s',
							(SELECT string_agg(keys[c], ', ') FROM unnest(ordercols) c),
							tab, q_where, orderby, lim);
			END IF;
			q_ref := q;
			IF sabotage = 'rows' THEN
				q_ref := regexp_replace(q, ' FROM (\S+)( WHERE )?',
										' FROM \1 WHERE id % 7 <> 0 AND ');
				q_ref := regexp_replace(q_ref, ' AND ( ORDER BY |$)', '\1');
			END IF;

			-- Unordered results are compared as multisets of rows (as text),
			-- ordered ones as arrays of each sort key column, with the type's
			-- equality: ties may come in any order, and equal values such as
			-- 1.0 and 1.00 or '1 day' and '24 hours' look different.
			IF ordercols IS NULL THEN
				PERFORM opc_force('seqscan', false);
				IF NOT opc_plan_ok(q_ref, 'seqscan', false) THEN
					RAISE EXCEPTION 'no sequential scan for %', q_ref;
				END IF;
				EXECUTE format('SELECT coalesce(array_agg(s::text), ''{}'') FROM (%s) s',
							   q_ref) INTO ref;
			ELSE
				PERFORM opc_force('seqscan', false);
				IF NOT opc_plan_ok(q_ref, 'seqscan', true) THEN
					RAISE EXCEPTION 'no sequential scan for %', q_ref;
				END IF;
				EXECUTE format('SELECT ARRAY[%s] FROM (%s) s',
							   (SELECT string_agg(format('array_agg(s.%s)::text', keys[c]), ', ')
								  FROM unnest(ordercols) c),
							   q_ref) INTO ref;
				ordsql := format('SELECT %s FROM (%s) s',
								 (SELECT string_agg(format('array_agg(s.%s) IS NOT DISTINCT FROM ($1[%s])::%s%s',
														   keys[c], o, keytypes[c],
														   CASE WHEN keycoll[c] THEN ' COLLATE "C"' ELSE '' END),
													' AND ')
									FROM unnest(ordercols) WITH ORDINALITY u(c, o)),
								 q);
			END IF;

			IF sabotage = 'plan' THEN
				PERFORM opc_force('seqscan', false);
			ELSE
				PERFORM opc_force(mode, ordercols IS NOT NULL AND mode <> 'bitmap');
			END IF;
			RAISE DEBUG '% scan: %', mode, q;
			CASE mode
				WHEN 'index' THEN index_scans := index_scans + 1;
				WHEN 'bitmap' THEN bitmap_scans := bitmap_scans + 1;
				ELSE index_only_scans := index_only_scans + 1;
			END CASE;
			IF NOT opc_plan_ok(q, mode, ordercols IS NOT NULL) THEN
				wrong_plans := wrong_plans + 1;
				IF sabotage IS NULL AND n_notices < 5 THEN
					n_notices := n_notices + 1;
					RAISE NOTICE 'no % scan in the plan of: %', mode, q;
				END IF;
				CONTINUE;
			END IF;
			BEGIN
				IF ordercols IS NULL THEN
					EXECUTE format('SELECT coalesce(array_agg(s::text), ''{}'') FROM (%s) s', q)
						INTO got;
					SELECT NOT EXISTS (SELECT unnest(ref) EXCEPT ALL SELECT unnest(got))
					   AND NOT EXISTS (SELECT unnest(got) EXCEPT ALL SELECT unnest(ref))
					  INTO same;
				ELSE
					EXECUTE ordsql INTO same USING ref;
				END IF;
			EXCEPTION WHEN OTHERS THEN
				same := false;
				IF sabotage IS NULL AND n_notices < 5 THEN
					n_notices := n_notices + 1;
					RAISE NOTICE '% scan failed: %: %', mode, SQLERRM, q;
				END IF;
			END;
			IF NOT same THEN
				mismatches := mismatches + 1;
				IF sabotage IS NULL AND n_notices < 5 THEN
					n_notices := n_notices + 1;
					RAISE NOTICE '% scan differs from the sequential scan: %', mode, q;
				END IF;
			END IF;
		END LOOP;
	END LOOP;
	RETURN NEXT;
END
$$;

--
-- The tables, their indexes and the expressions for their values
--
SELECT setseed(0.25);

CREATE TABLE opc_int2 (id int, k int2);
CREATE TABLE opc_int4 (id int, k int4);
CREATE TABLE opc_int8 (id int, k int8);
CREATE TABLE opc_float4 (id int, k float4);
CREATE TABLE opc_float8 (id int, k float8);
CREATE TABLE opc_numeric (id int, k numeric);
CREATE TABLE opc_text (id int, k text);					-- database default collation
CREATE TABLE opc_text_c (id int, k text COLLATE "C");
CREATE TABLE opc_varchar (id int, k varchar(5));
CREATE TABLE opc_bpchar (id int, k char(3));
CREATE TABLE opc_date (id int, k date);
CREATE TABLE opc_timestamp (id int, k timestamp);
CREATE TABLE opc_timestamptz (id int, k timestamptz);
CREATE TABLE opc_time (id int, k time);
CREATE TABLE opc_interval (id int, k interval);
CREATE TABLE opc_uuid (id int, k uuid);
CREATE TABLE opc_bytea (id int, k bytea);
CREATE TABLE opc_oid (id int, k oid);
CREATE TABLE opc_bool (id int, k bool);
CREATE TABLE opc_multi (id int, a int4, b text, c date);
CREATE TABLE opc_desc (id int, a int4, b text, c date);
CREATE TABLE opc_incl (id int, a int4, b text, c date);

-- A linguistic collation, where the order differs from "C" ('a' < 'B',
-- 'e' < 'é' < 'f'): ICU's root locale when the server has ICU, else the
-- database default.
DO $$
BEGIN
	EXECUTE format('CREATE TABLE opc_text_ling (id int, k text COLLATE %s)',
				   CASE WHEN EXISTS (SELECT FROM pg_collation
									  WHERE collname = 'und-x-icu')
						THEN '"und-x-icu"' ELSE '"default"' END);
END
$$;

-- Short strings of letters in both cases, accents, a digit, a space and a
-- hyphen, including the empty string.
CREATE FUNCTION opc_str(maxlen int) RETURNS text
LANGUAGE sql AS $$
	SELECT coalesce(string_agg((ARRAY['a', 'A', 'b', 'B', 'e', 'é', 'É', 'z', 'ß', '1', ' ', '-'])
							   [1 + floor(random() * 12)::int], ''), '')
	  FROM generate_series(1, floor(random() * (maxlen + 1))::int)
$$;

INSERT INTO opc_gen VALUES
('opc_int2', 'k', ARRAY[
	'(random() * 600 - 300)::int2',
	'(random() * 700 - 350)::int4',
	'(random() * 700 - 350)::int8',
	'(random() * 200000 - 100000)::int8']),
('opc_int4', 'k', ARRAY[
	'CASE WHEN random() < 0.02 THEN 2147483647 ELSE (random() * 2000 - 1000)::int4 END',
	'(random() * 2200 - 1100)::int2',
	'(random() * 2200 - 1100)::int8',
	'(random() * 1e10 - 5e9)::int8']),
('opc_int8', 'k', ARRAY[
	'CASE WHEN random() < 0.1 THEN (random() * 1e18 - 5e17)::int8 ELSE (random() * 2000 - 1000)::int8 END',
	'(random() * 2200 - 1100)::int4',
	'(random() * 2200 - 1100)::int2']),
('opc_float4', 'k', ARRAY[
	$$CASE WHEN random() < 0.05 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '-0'])[1 + floor(random() * 4)::int]::float4
	       ELSE round((random() * 200 - 100)::numeric, 1)::float4 END$$,
	'round((random() * 220 - 110)::numeric, 1)::float8',
	$$(ARRAY['NaN', 'Infinity', '-Infinity', '0'])[1 + floor(random() * 4)::int]::float8$$]),
('opc_float8', 'k', ARRAY[
	$$CASE WHEN random() < 0.05 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '-0'])[1 + floor(random() * 4)::int]::float8
	       ELSE round((random() * 200 - 100)::numeric, 1)::float8 END$$,
	'round((random() * 220 - 110)::numeric, 1)::float4',
	'(random() * 220 - 110)::float8']),
('opc_numeric', 'k', ARRAY[
	$$CASE WHEN random() < 0.03 THEN (ARRAY['NaN', 'Infinity', '-Infinity'])[1 + floor(random() * 3)::int]::numeric
	       ELSE round((random() * 100 - 50)::numeric, floor(random() * 3)::int) END$$]),
('opc_text', 'k', ARRAY['opc_str(3)', 'opc_str(3)::varchar']),
('opc_text_c', 'k', ARRAY['opc_str(3)', 'opc_str(3)::varchar']),
('opc_text_ling', 'k', ARRAY['opc_str(3)', 'opc_str(3)::varchar']),
('opc_varchar', 'k', ARRAY['opc_str(3)::varchar', 'opc_str(4)']),
('opc_bpchar', 'k', ARRAY['opc_str(3)::bpchar', $$(opc_str(2) || '  ')::bpchar$$]),
('opc_date', 'k', ARRAY[
	$$CASE WHEN random() < 0.02 THEN (ARRAY['infinity', '-infinity'])[1 + floor(random() * 2)::int]::date
	       ELSE date '2004-01-01' + floor(random() * 1000)::int END$$,
	$$(date '2004-01-01' + floor(random() * 1100)::int - 50)::timestamp$$,
	$$timestamp '2004-01-01' - interval '50 days' + random() * interval '1100 days'$$,
	$$timestamptz '2004-01-01' - interval '50 days' + floor(random() * 26400) * interval '1 hour'$$]),
('opc_timestamp', 'k', ARRAY[
	$$CASE WHEN random() < 0.02 THEN (ARRAY['infinity', '-infinity'])[1 + floor(random() * 2)::int]::timestamp
	       ELSE timestamp '2004-01-01' + floor(random() * 4000) * interval '6 hours' END$$,
	$$date '2004-01-01' + floor(random() * 1100)::int$$,
	$$timestamptz '2004-01-01' + floor(random() * 4400) * interval '6 hours'$$]),
('opc_timestamptz', 'k', ARRAY[
	$$CASE WHEN random() < 0.02 THEN (ARRAY['infinity', '-infinity'])[1 + floor(random() * 2)::int]::timestamptz
	       ELSE timestamptz '2004-01-01 00:00:00+00' + floor(random() * 4000) * interval '6 hours' END$$,
	$$date '2004-01-01' + floor(random() * 1100)::int$$,
	$$timestamp '2004-01-01' + floor(random() * 4400) * interval '6 hours'$$]),
('opc_time', 'k', ARRAY[
	$$CASE WHEN random() < 0.02 THEN time '24:00' ELSE time '00:00' + floor(random() * 1440) * interval '1 minute' END$$]),
('opc_interval', 'k', ARRAY[
	$$make_interval(months => floor(random() * 3)::int, days => floor(random() * 70)::int,
	                hours => floor(random() * 48)::int)$$]),
('opc_uuid', 'k', ARRAY['md5(floor(random() * 600)::text)::uuid']),
('opc_bytea', 'k', ARRAY[
	$$substr(decode(md5(floor(random() * 400)::text), 'hex'), 1, floor(random() * 4)::int)$$]),
('opc_oid', 'k', ARRAY[
	$$CASE WHEN random() < 0.1 THEN (4294967295 - floor(random() * 1000))::int8::oid
	       ELSE floor(random() * 3000)::int8::oid END$$]),
('opc_bool', 'k', ARRAY['random() < 0.5']);

INSERT INTO opc_gen
SELECT t::regclass, g.col, g.gens
  FROM unnest(ARRAY['opc_multi', 'opc_desc', 'opc_incl']) t,
	   (VALUES
		('a', ARRAY['floor(random() * 20)::int4', 'floor(random() * 22)::int8']),
		('b', ARRAY['opc_str(2)']),
		('c', ARRAY[$$date '2004-01-01' + floor(random() * 60)::int$$,
					$$timestamp '2004-01-01' + floor(random() * 130) * interval '12 hours'$$])) g(col, gens);

-- half of the rows are there when the indexes are built
SELECT opc_fill(1000);

CREATE INDEX opc_int2_k ON opc_int2 USING abtree (k);
CREATE INDEX opc_int4_k ON opc_int4 USING abtree (k);
CREATE INDEX opc_int8_k ON opc_int8 USING abtree (k DESC);
CREATE INDEX opc_float4_k ON opc_float4 USING abtree (k);
CREATE INDEX opc_float8_k ON opc_float8 USING abtree (k DESC NULLS LAST);
CREATE INDEX opc_numeric_k ON opc_numeric USING abtree (k);
CREATE INDEX opc_text_k ON opc_text USING abtree (k);
CREATE INDEX opc_text_c_k ON opc_text_c USING abtree (k);
CREATE INDEX opc_text_ling_k ON opc_text_ling USING abtree (k);
CREATE INDEX opc_varchar_k ON opc_varchar USING abtree (k);
CREATE INDEX opc_bpchar_k ON opc_bpchar USING abtree (k);
CREATE INDEX opc_date_k ON opc_date USING abtree (k);
CREATE INDEX opc_timestamp_k ON opc_timestamp USING abtree (k NULLS FIRST);
CREATE INDEX opc_timestamptz_k ON opc_timestamptz USING abtree (k DESC);
CREATE INDEX opc_time_k ON opc_time USING abtree (k);
CREATE INDEX opc_interval_k ON opc_interval USING abtree (k);
CREATE INDEX opc_uuid_k ON opc_uuid USING abtree (k);
CREATE INDEX opc_bytea_k ON opc_bytea USING abtree (k);
CREATE INDEX opc_oid_k ON opc_oid USING abtree (k);
CREATE INDEX opc_bool_k ON opc_bool USING abtree (k);
CREATE INDEX opc_multi_ab ON opc_multi USING abtree (a, b);
CREATE INDEX opc_desc_bca ON opc_desc USING abtree (b DESC, c NULLS FIRST, a DESC NULLS LAST);
CREATE INDEX opc_incl_c ON opc_incl USING abtree (c) INCLUDE (a, b);

-- the other half is inserted into the indexes; then deletes and updates,
-- VACUUM, and a few more deletes and updates that leave dead index entries
SELECT opc_fill(1000);
SELECT opc_churn(10);
VACUUM (ANALYZE) opc_int2, opc_int4, opc_int8, opc_float4, opc_float8,
	opc_numeric, opc_text, opc_text_c, opc_text_ling, opc_varchar, opc_bpchar,
	opc_date, opc_timestamp, opc_timestamptz, opc_time, opc_interval, opc_uuid,
	opc_bytea, opc_oid, opc_bool, opc_multi, opc_desc, opc_incl;
SELECT opc_churn(2);

--
-- Each plan type is possible on an abtree index
--
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM opc_int4 WHERE k < 5::int8;
EXPLAIN (COSTS OFF) SELECT * FROM opc_date WHERE k >= '2005-01-01 12:00'::timestamp;
EXPLAIN (COSTS OFF) SELECT * FROM opc_int4 WHERE k IS NULL;
EXPLAIN (COSTS OFF) SELECT * FROM opc_multi WHERE b = 'a';
-- ORDER BY ... LIMIT without a Sort, forwards and backwards
EXPLAIN (COSTS OFF) SELECT * FROM opc_int4 ORDER BY k LIMIT 5;
EXPLAIN (COSTS OFF) SELECT * FROM opc_int4 ORDER BY k DESC LIMIT 5;
EXPLAIN (COSTS OFF) SELECT * FROM opc_text WHERE k > 'a' ORDER BY k LIMIT 5;
EXPLAIN (COSTS OFF) SELECT * FROM opc_int8 ORDER BY k DESC LIMIT 5;
EXPLAIN (COSTS OFF) SELECT * FROM opc_multi WHERE a = 3 ORDER BY b DESC LIMIT 5;
EXPLAIN (COSTS OFF)
SELECT * FROM opc_desc ORDER BY b DESC, c NULLS FIRST, a DESC NULLS LAST LIMIT 5;
EXPLAIN (COSTS OFF)
SELECT * FROM opc_desc ORDER BY b NULLS LAST, c DESC NULLS LAST, a NULLS FIRST LIMIT 5;
RESET enable_indexonlyscan;
EXPLAIN (COSTS OFF) SELECT k FROM opc_int4 WHERE k BETWEEN 1 AND 10;
EXPLAIN (COSTS OFF) SELECT c, a, b FROM opc_incl WHERE c > '2004-02-01';
RESET enable_bitmapscan;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM opc_int4 WHERE k = ANY ('{1,2,3}');
EXPLAIN (COSTS OFF) SELECT * FROM opc_multi WHERE b >= 'b';
RESET enable_indexscan;
RESET enable_seqscan;

--
-- The random queries: every count of mismatches and wrong plans must be 0
--
SELECT * FROM opc_check('opc_int2', 120);
SELECT * FROM opc_check('opc_int4', 120);
SELECT * FROM opc_check('opc_int8', 120);
SELECT * FROM opc_check('opc_float4', 120);
SELECT * FROM opc_check('opc_float8', 120);
SELECT * FROM opc_check('opc_numeric', 120);
SELECT * FROM opc_check('opc_text', 120);
SELECT * FROM opc_check('opc_text_c', 120);
SELECT * FROM opc_check('opc_text_ling', 120);
SELECT * FROM opc_check('opc_varchar', 120);
SELECT * FROM opc_check('opc_bpchar', 120);
SELECT * FROM opc_check('opc_date', 120);
SELECT * FROM opc_check('opc_timestamp', 120);
SELECT * FROM opc_check('opc_timestamptz', 120);
SELECT * FROM opc_check('opc_time', 120);
SELECT * FROM opc_check('opc_interval', 120);
SELECT * FROM opc_check('opc_uuid', 120);
SELECT * FROM opc_check('opc_bytea', 120);
SELECT * FROM opc_check('opc_oid', 120);
-- "k = true" becomes "k", which the planner matches only to btree's bool_ops
SELECT * FROM opc_check('opc_bool', 120, skip => '{=}');
SELECT * FROM opc_check('opc_multi', 200);
SELECT * FROM opc_check('opc_desc', 200);
SELECT * FROM opc_check('opc_incl', 200);

-- the driver notices wrong results and wrong plans
SELECT mismatches > 0 AS wrong_rows_found
  FROM opc_check('opc_int4', 30, sabotage => 'rows');
SELECT wrong_plans = index_scans + bitmap_scans + index_only_scans AS wrong_plans_found
  FROM opc_check('opc_int4', 10, sabotage => 'plan');

DROP TABLE opc_int2, opc_int4, opc_int8, opc_float4, opc_float8,
	opc_numeric, opc_text, opc_text_c, opc_text_ling, opc_varchar, opc_bpchar,
	opc_date, opc_timestamp, opc_timestamptz, opc_time, opc_interval, opc_uuid,
	opc_bytea, opc_oid, opc_bool, opc_multi, opc_desc, opc_incl, opc_gen;
DROP FUNCTION opc_lit(text), opc_fill(int), opc_churn(float8),
	opc_force(text, bool), opc_plan_ok(text, text, bool),
	opc_cond(text, text[], text[]), opc_check(regclass, int, text[], text),
	opc_str(int);
