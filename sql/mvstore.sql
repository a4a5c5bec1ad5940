--
-- The multi-version weight store (src/mvstore/README): its view, its
-- functions and their bad inputs.  Snapshot behaviour is in the isolation
-- spec mvstore_snapshot and in test/t/009_mvstore.pl.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

-- the view has one row; the sizes follow abtree.mvstore_size (64MB here)
SELECT enabled, size_bytes > 64 * 1024 * 1024 * 0.9 AS sized, entries_max > 0 AS has_entries,
       versions_max > entries_max AS more_versions, is_full
  FROM abtree_mvstore;

CREATE TABLE mvs_r (k int, w int);
CREATE INDEX mvs_r_k ON mvs_r USING abtree (k);
CREATE INDEX mvs_r_kw ON mvs_r USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE INDEX mvs_r_btree ON mvs_r (k);

-- one transaction loads: one version per downlink it touched, not per row;
-- a batched flush records one add per downlink and group, not per entry
-- and level (more than 20,000 here before)
SELECT versions_recorded AS recorded0 FROM abtree_mvstore \gset
INSERT INTO mvs_r SELECT g, g % 7 FROM generate_series(1, 20000) g;
SELECT versions_recorded - :recorded0 > 0 AS adds_recorded,
       versions_recorded - :recorded0 < 20000 AS per_group,
       versions < 1000 AS coalesced
  FROM abtree_mvstore;

-- at rest, every downlink covers its child and the root weighs the table
SELECT downlinks > 0 AS has_downlinks, violations,
       visible_weight = (SELECT count(*) FROM mvs_r) AS exact
  FROM abtree_mvstore_check('mvs_r_k');
SELECT violations, visible_weight = (SELECT sum(w) FROM mvs_r) AS exact
  FROM abtree_mvstore_check('mvs_r_kw');

-- our own inserts are visible to us: nothing is subtracted for them
BEGIN;
INSERT INTO mvs_r SELECT g, 1 FROM generate_series(1, 500) g;
SELECT versioned, violations, visible_weight = (SELECT count(*) FROM mvs_r) AS exact
  FROM abtree_mvstore_check('mvs_r_k');
SET LOCAL abtree.swr_index = 'mvs_r_k';
SELECT count(*) FROM mvs_r TABLESAMPLE swr(100) REPEATABLE (1);
ROLLBACK;

-- a collection drops what no snapshot can need (the collector does it too)
SELECT abtree_mvstore_collect() >= 0 AS collected;
SELECT entries, versions FROM abtree_mvstore;

-- versions only where a snapshot can miss them (README): with no other
-- session holding a snapshot (regress runs alone, autovacuum off), a
-- small transaction's writers record nothing; the load above, of more
-- than 64 writers, recorded from its 65th on.  mvstore_snapshot and
-- swr_old_snapshot (isolation) fail if another session's snapshot is missed.
CREATE TABLE mvs_q (k int);
CREATE INDEX mvs_q_k ON mvs_q USING abtree (k);
INSERT INTO mvs_q SELECT g FROM generate_series(1, 20000) g;
-- A background worker of this database holding a snapshot meanwhile (none
-- does in CI) makes the writers record, rightly: then the check passes
-- without saying anything.
CREATE FUNCTION mvs_others() RETURNS bool LANGUAGE sql AS $$
  SELECT EXISTS (SELECT FROM pg_stat_activity
                  WHERE datname = current_database() AND pid <> pg_backend_pid()
                    AND backend_xmin IS NOT NULL) $$;
SELECT versions_recorded AS recorded2, mvs_others() AS others2 FROM abtree_mvstore \gset
INSERT INTO mvs_q SELECT g * 7 FROM generate_series(1, 100) g;
SELECT versions_recorded = :recorded2 OR :'others2'::bool OR mvs_others() AS quiet_nothing_recorded
  FROM abtree_mvstore;
DROP FUNCTION mvs_others();
SELECT violations, visible_weight = (SELECT count(*) FROM mvs_q) AS exact
  FROM abtree_mvstore_check('mvs_q_k');
DROP TABLE mvs_q;

-- switched off for this session: raw weights, nothing recorded
SET abtree.mvstore = off;
SELECT versions_recorded AS recorded1 FROM abtree_mvstore \gset
INSERT INTO mvs_r VALUES (1, 1);
SELECT versions_recorded = :recorded1 AS nothing_recorded FROM abtree_mvstore;
SELECT versioned, violations FROM abtree_mvstore_check('mvs_r_k');
RESET abtree.mvstore;

-- the snapshot-aware range weight: as the statement sees the index.  The
-- rows of the aborted insert above still count (an aborted transaction is
-- not running for this snapshot) until VACUUM removes their entries.
SELECT abtree_range_weight('mvs_r_k', 100, 199, visible_only => true) AS with_aborted;
VACUUM mvs_r;
SELECT abtree_range_weight('mvs_r_k', 100, 199, visible_only => true) AS visible,
       abtree_range_weight('mvs_r_kw', 100, 199, visible_only => true) =
         (SELECT sum(w) FROM mvs_r WHERE k BETWEEN 100 AND 199) AS weighted_exact;
SELECT abtree_range_weight('mvs_r_k', 100, 199, visible_only => NULL);

-- bad input
SELECT * FROM abtree_mvstore_check(NULL);
SELECT * FROM abtree_mvstore_check('mvs_r_btree');
SELECT * FROM abtree_mvstore_check('mvs_r');
SELECT * FROM abtree_mvstore_check(0);
SELECT * FROM abtree_mvstore_check(-1);
SELECT * FROM abtree_mvstore_check('no_such_index');
SET abtree.mvstore = 'maybe';
SET abtree.mvstore_size = '1GB';
SET abtree.mvstore_gc_interval = 5;
SET abtree.mvstore_gc_interval = '1h';
-- out of range, huge and wrong-type values (SQLSTATEs only: the message
-- wording differs between PostgreSQL versions)
\set VERBOSITY sqlstate
ALTER SYSTEM SET abtree.mvstore_gc_interval = 5;
ALTER SYSTEM SET abtree.mvstore_gc_interval = -1;
ALTER SYSTEM SET abtree.mvstore_gc_interval = '2h';
ALTER SYSTEM SET abtree.mvstore_size = -1;
ALTER SYSTEM SET abtree.mvstore_size = '1PB';
ALTER SYSTEM SET abtree.mvstore = 'maybe';
SELECT * FROM abtree_mvstore_check(4294967296);
SELECT * FROM abtree_mvstore_check(1.5);
SELECT abtree_range_weight('mvs_r_k', 1, 2, true, true, 'maybe');
SELECT abtree_range_weight('mvs_r_k', 1, 2, true, true, 2);
SELECT abtree_mvstore_collect(1);
\set VERBOSITY default

-- the collection is for administrators
CREATE ROLE mvs_nobody;
SET ROLE mvs_nobody;
SELECT abtree_mvstore_collect();
SELECT enabled FROM abtree_mvstore;
SELECT * FROM abtree_mvstore_check('mvs_r_k');
RESET ROLE;
DROP ROLE mvs_nobody;

DROP TABLE mvs_r;
