-- pgTAP: the SQL interface of the extension, as installed.
-- Runs in a transaction that is rolled back, so it leaves nothing behind.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

SELECT plan(16);

SELECT has_extension('abtree');
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'abtree'), '0.2',
	'extension version');

SELECT has_function('abtree_check_preload', ARRAY[]::text[]);
SELECT has_function('abtree_status', ARRAY[]::text[]);
SELECT has_function('abtree_wal_probe', ARRAY['text']);
SELECT function_returns('abtree_wal_probe', ARRAY['text'], 'pg_lsn');
SELECT isnt_strict('abtree_wal_probe', ARRAY['text'],
	'abtree_wal_probe is not STRICT, so a NULL message gets an error');

SELECT ok(NOT EXISTS (
	SELECT 1 FROM pg_proc p, aclexplode(p.proacl) a
	 WHERE p.proname = 'abtree_wal_probe' AND a.grantee = 0),
	'PUBLIC cannot execute abtree_wal_probe');

SELECT is((SELECT value FROM abtree_status() WHERE item = 'resource_manager'),
	'abtree', 'resource manager name');
SELECT is((SELECT value FROM abtree_status() WHERE item = 'resource_manager_id'),
	'197', 'resource manager id');
SELECT is((SELECT value FROM abtree_status() WHERE item = 'version'),
	'0.2.0', 'library version');

SELECT lives_ok('SELECT abtree_check_preload()', 'preload check passes');
SELECT throws_ok('SELECT abtree_wal_probe(NULL)', '22004',
	'abtree_wal_probe message must not be null', 'NULL message');
SELECT throws_ok($$SELECT abtree_wal_probe(repeat('x', 2000))$$, '22001',
	'abtree_wal_probe message is too long (2000 bytes)', 'long message');

SELECT is((SELECT context FROM pg_settings WHERE name = 'abtree.debug_redo'),
	'sighup', 'abtree.debug_redo is set in postgresql.conf');
SELECT throws_ok('SET abtree.not_a_parameter = 1', '42602', NULL,
	'abtree. prefix is reserved');

SELECT * FROM finish();
ROLLBACK;
