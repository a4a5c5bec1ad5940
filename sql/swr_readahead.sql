--
-- Read-ahead (issue 21) changes when pages are read, never which rows a
-- sample gets nor how many buffers it counts.  With effective_io_concurrency
-- = 0 nothing is read ahead: every page is read with ReadBuffer, once.  Above
-- it, a page read ahead is pinned through the buffer the read-ahead found
-- (before 17) or by the read stream (17+), and a heap block is handed to the
-- heap AM's fetch, which must not look it up again: on 17+ it used to, and
-- each heap block was counted twice.  So the samples and the buffer counts
-- must be the same at 0, 1 and 16.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;
CREATE FUNCTION ra_rows(q text, eic int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	PERFORM set_config('effective_io_concurrency', eic::text, true);
	EXECUTE 'SELECT md5(string_agg(s::text, '','')) FROM (' || q || ') s' INTO r;
	RETURN r;
END $$;
CREATE FUNCTION ra_buffers(q text, eic int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	p json;
BEGIN
	PERFORM set_config('effective_io_concurrency', eic::text, true);
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q INTO p;
	p := p->0->'Plan';
	RETURN (p->>'Shared Hit Blocks')::bigint + (p->>'Shared Read Blocks')::bigint +
		(p->>'Local Hit Blocks')::bigint + (p->>'Local Read Blocks')::bigint;
END $$;
-- the same for eic 0, 1 and 16; the second run first, so that pruning and
-- hint bits set by the first run change no count
CREATE FUNCTION ra_check(q text) RETURNS TABLE (same_rows bool, same_buffers bool, buffers_positive bool)
LANGUAGE plpgsql AS $$
DECLARE
	b0 bigint;
BEGIN
	PERFORM ra_rows(q, 0);
	b0 := ra_buffers(q, 0);
	same_rows := ra_rows(q, 0) = ra_rows(q, 1) AND ra_rows(q, 0) = ra_rows(q, 16);
	same_buffers := b0 = ra_buffers(q, 1) AND b0 = ra_buffers(q, 16);
	buffers_positive := b0 > 0;
	RETURN NEXT;
END $$;

-- a heap table whose rows are spread thin, with HOT chains (every other row
-- updated: the index TIDs of those point at the chains' roots)
CREATE TABLE ra (id int4, y int4, pad text) WITH (fillfactor = 50, autovacuum_enabled = off);
INSERT INTO ra SELECT g, (g * 7919) % 100003, 'p' FROM generate_series(1, 20000) g;
CREATE INDEX ra_y ON ra USING abtree (y);
UPDATE ra SET pad = 'u' WHERE id % 2 = 0;
SELECT * FROM ra_check('SELECT id, pad FROM ra TABLESAMPLE swr(3000) REPEATABLE (7)');
SELECT * FROM ra_check('SELECT id FROM ra TABLESAMPLE swr(50) REPEATABLE (8) WHERE y < 50000');
-- the rows drawn are the current versions
SELECT count(*) FILTER (WHERE pad = 'u') = count(*) FILTER (WHERE id % 2 = 0) AS current_versions
FROM (SELECT id, pad FROM ra TABLESAMPLE swr(3000) REPEATABLE (9)) s;

-- VACUUM prunes the chains (their roots become redirects) and marks the
-- pages all visible: a block's fetches then follow line pointers without
-- visibility checks (swr_fetch_block).  The same sample as in a
-- serializable transaction, which searches the chains as the heap does, and
-- the updated rows drawn in their current versions (about 1,500 of 3,000;
-- below 1,200 is 22 standard deviations out: no false alarm).
VACUUM ra;
SELECT relallvisible > 0 AS all_visible FROM pg_class WHERE relname = 'ra';
SELECT ra_rows('SELECT id, pad FROM ra TABLESAMPLE swr(3000) REPEATABLE (7)', 1) AS visible_rows \gset
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT ra_rows('SELECT id, pad FROM ra TABLESAMPLE swr(3000) REPEATABLE (7)', 1) = :'visible_rows'
  AS same_as_searched;
COMMIT;
SELECT count(*) FILTER (WHERE pad = 'u') = count(*) FILTER (WHERE id % 2 = 0) AS current_versions,
       count(*) FILTER (WHERE id % 2 = 0) > 1200 AS updated_drawn
FROM (SELECT id, pad FROM ra TABLESAMPLE swr(3000) REPEATABLE (9)) s;
SELECT * FROM ra_check('SELECT id, pad FROM ra TABLESAMPLE swr(3000) REPEATABLE (7)');

-- a partitioned table: the fetches go table by table
CREATE TABLE rp (id int4, y int4) PARTITION BY RANGE (id);
CREATE TABLE rp1 PARTITION OF rp FOR VALUES FROM (0) TO (4000);
CREATE TABLE rp2 PARTITION OF rp FOR VALUES FROM (4000) TO (9000);
CREATE TABLE rp3 PARTITION OF rp FOR VALUES FROM (9000) TO (20000);
INSERT INTO rp SELECT g, (g * 104729) % 65537 FROM generate_series(0, 19999) g;
CREATE INDEX rp_y ON rp USING abtree (y);
SELECT * FROM ra_check('SELECT id FROM rp TABLESAMPLE swr(2000) REPEATABLE (3)');

-- a temporary table: local buffers, never read through a recent buffer
CREATE TEMP TABLE rt (id int4, y int4);
INSERT INTO rt SELECT g, g % 997 FROM generate_series(1, 20000) g;
CREATE INDEX rt_y ON rt USING abtree (y);
SELECT * FROM ra_check('SELECT id FROM rt TABLESAMPLE swr(2000) REPEATABLE (5)');

-- abtree_sample_tids: index pages only
SELECT * FROM ra_check('SELECT t FROM abtree_sample_tids(''ra_y'', 2000, 0.25) t');

DROP TABLE ra, rp, rt;
DROP FUNCTION ra_check(text), ra_rows(text, int), ra_buffers(text, int);
