--
-- An insert that fails half way leaves downlink weights that overcount (its
-- weight pass added on the way down, the entry never became valid); readers
-- stay correct (W1), abtree_verify's exact mode reports it, and VACUUM makes
-- the weights exact again (W2).  The failure is forced with an operator
-- class whose comparison function raises an ERROR after a number of calls:
-- the weight pass has added on the root, its search of the leaf fails.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

CREATE FUNCTION rep_cmp(a int4, b int4) RETURNS int4 LANGUAGE plpgsql AS $$
DECLARE
	calls int := coalesce(nullif(current_setting('rep.calls', true), ''), '0')::int + 1;
	fail_after int := nullif(current_setting('rep.fail_after', true), '')::int;
BEGIN
	PERFORM set_config('rep.calls', calls::text, false);
	IF calls > fail_after THEN
		RAISE EXCEPTION 'comparison % fails on purpose', calls;
	END IF;
	RETURN btint4cmp(a, b);
END
$$;
CREATE OPERATOR CLASS rep_ops FOR TYPE int4 USING abtree AS
	OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
	FUNCTION 1 rep_cmp(int4, int4);

CREATE TABLE rep (k int4);
INSERT INTO rep SELECT generate_series(1, 3000);
CREATE INDEX rep_k ON rep USING abtree (k rep_ops);
SELECT height, entries, total_weight FROM abtree_stats('rep_k');

-- count the comparisons of an insert next to where the failing one goes;
-- the last few are the weight pass's search of the leaf, after its add on
-- the root
SET rep.calls = 0;
INSERT INTO rep VALUES (1501);
SELECT current_setting('rep.calls')::int - 3 AS fail_after \gset
SET rep.calls = 0;
SET rep.fail_after = :fail_after;
INSERT INTO rep VALUES (1500);
RESET rep.fail_after;

-- the root now counts one entry that is not there
SELECT total_weight, entries FROM abtree_stats('rep_k');
SELECT abtree_verify('rep_k', exact => false);	-- at least: fine
SELECT abtree_verify('rep_k');					-- exact: reports the overcount
-- sampling is still right: the extra weight only causes rejections
SELECT count(*) FROM abtree_sample_tids('rep_k', 1000, 1);

VACUUM (INDEX_CLEANUP ON) rep;
SELECT total_weight, entries FROM abtree_stats('rep_k');
SELECT abtree_verify('rep_k', true);

DROP TABLE rep;
DROP OPERATOR CLASS rep_ops USING abtree;
DROP OPERATOR FAMILY rep_ops USING abtree;
DROP FUNCTION rep_cmp(int4, int4);
