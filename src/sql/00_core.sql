/* The install script, part 00: the core functions.
 * The install script is the concatenation of the files in src/sql, in name order
 * (see the Makefile). */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION abtree" to load this file. \quit

-- Fails, with a HINT naming the postgresql.conf line, unless the library is in
-- shared_preload_libraries.  Called first so that CREATE EXTENSION fails early.
CREATE FUNCTION abtree_check_preload()
RETURNS void
AS 'MODULE_PATHNAME', 'abtree_check_preload'
LANGUAGE C VOLATILE PARALLEL SAFE;

SELECT abtree_check_preload();

COMMENT ON FUNCTION abtree_check_preload() IS
'raises an error with a hint unless abtree is loaded via shared_preload_libraries';

CREATE FUNCTION abtree_status(
	OUT component text,
	OUT item text,
	OUT value text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'abtree_status'
LANGUAGE C VOLATILE PARALLEL SAFE ROWS 16;

COMMENT ON FUNCTION abtree_status() IS
'what abtree has registered in this server: WAL resource manager, shared memory, parameters, counters';

-- Not STRICT: a NULL message gets an ERROR, not a silent NULL.
CREATE FUNCTION abtree_wal_probe(message text DEFAULT 'probe')
RETURNS pg_lsn
AS 'MODULE_PATHNAME', 'abtree_wal_probe'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION abtree_wal_probe(text) IS
'writes and flushes an abtree PROBE WAL record; returns the LSN after it. Replay logs the message.';

-- Writing WAL at will is for administrators.
REVOKE ALL ON FUNCTION abtree_wal_probe(text) FROM PUBLIC;
