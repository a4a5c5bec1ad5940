--
-- The abtree.* configuration parameters.
--
SELECT name, setting, vartype, context, short_desc IS NOT NULL AS described
  FROM pg_settings
 WHERE name LIKE 'abtree.%'
 ORDER BY name;

SHOW abtree.debug_redo;

-- read by the startup process from postgresql.conf: no per-session value
SET abtree.debug_redo = on;

-- the prefix is reserved: typos fail instead of creating placeholders
SET abtree.debug_rdeo = on;
SHOW abtree.no_such_parameter;

SELECT set_config('abtree.debug_redo', 'on', false);

-- postgresql.conf is the place; ALTER SYSTEM checks the value first
ALTER SYSTEM SET abtree.debug_redo = 'maybe';
ALTER SYSTEM SET abtree.debug_redo = '';
ALTER SYSTEM SET abtree.debug_redo = -1;
ALTER SYSTEM SET abtree.debug_redo = 100000000000000000000;
ALTER SYSTEM SET abtree.debug_redo = on;
ALTER SYSTEM RESET abtree.debug_redo;

-- abtree_status() lists every parameter (a new one must be added to abt_guc_names)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;
SELECT (SELECT array_agg(name::text ORDER BY name) FROM pg_settings WHERE name LIKE 'abtree.%') =
       (SELECT array_agg(item ORDER BY item) FROM abtree_status() WHERE component = 'guc')
       AS status_lists_every_parameter;

-- abtree.weight_protocol: the three names, nothing else
SET abtree.weight_protocol = page_exclusive;
SHOW abtree.weight_protocol;
SET abtree.weight_protocol = 'fastest';
SET abtree.weight_protocol = '';
SET abtree.weight_protocol = 1;
RESET abtree.weight_protocol;
-- abtree.range_selectivity is a boolean
SET abtree.range_selectivity = 'maybe';
SET abtree.range_selectivity = -1;
-- abtree.sketch_ndistinct is a boolean too
SET abtree.sketch_ndistinct = 'maybe';
SET abtree.sketch_ndistinct = 2;
SET abtree.sketch_ndistinct = '';
SET abtree.sketch_ndistinct = NULL;
-- the debug pause: a key >= 0 (0 = off), a level from -1
SET abtree.debug_pass_pause = -1;
SET abtree.debug_pass_pause = 100000000000000000000;
SET abtree.debug_pass_pause = 'x';
SET abtree.debug_pass_pause_level = -2;
SET abtree.debug_pass_pause_level = 65;
SET abtree.debug_pass_pause_level = 0;
RESET abtree.debug_pass_pause_level;
SET abtree.debug_pass_error_level = -2;
SET abtree.debug_pass_error_level = 65;
SET abtree.debug_pass_error_level = 0;
RESET abtree.debug_pass_error_level;
SET abtree.debug_sample_pause = -1;
SET abtree.debug_sample_pause = 'x';
RESET abtree.debug_sample_pause;
-- VACUUM's pause waits for the key plus a level: at most INT_MAX - 64
SET abtree.debug_repair_pause = -1;
SET abtree.debug_repair_pause = 2147483647;
SET abtree.debug_repair_pause = 'x';
SET abtree.debug_repair_pause = 2147483583;
RESET abtree.debug_repair_pause;
-- the build merges 2 to 1024 runs at once
SET abtree.debug_build_merge_runs = 1;
SET abtree.debug_build_merge_runs = 1025;
SET abtree.debug_build_merge_runs = 'x';
SET abtree.debug_build_merge_runs = 2;
RESET abtree.debug_build_merge_runs;
-- the PATH record switch is a boolean
SET abtree.debug_path_record = 'maybe';
SET abtree.debug_path_record = off;
RESET abtree.debug_path_record;
-- superuser only: the testing aids, and (issue 25, item 3) the settings whose
-- effect reaches other sessions: the weight protocol (path_exclusive holds
-- the root for every insert), the weight store (a session that does not
-- record makes others' samplers reject more), the pbtree budget, merge
-- threshold and filter size (shared by every pbtree index)
CREATE ROLE abtree_guc_user;
SET ROLE abtree_guc_user;
SET abtree.debug_pass_pause = 1;
SET abtree.debug_repair_pause = 1;
SET abtree.debug_path_record = off;
SET abtree.weight_protocol = path_exclusive;
SET abtree.mvstore = off;
SET abtree.pbtree_buffer_budget = 2;
SET abtree.pbtree_merge_threshold = 0;
SET abtree.pbtree_filter_bits = 0;
-- the per-session choices of a query stay the user's
SET abtree.swr_index = '';
SET abtree.swr_where = 'standard';
SET abtree.swr_batch_size = 1;
SET abtree.range_selectivity = off;
SET abtree.sketch_ndistinct = off;
RESET ROLE;
-- an administrator can delegate one (PostgreSQL 15's GRANT SET ON PARAMETER)
GRANT SET ON PARAMETER abtree.mvstore TO abtree_guc_user;
SET ROLE abtree_guc_user;
SET abtree.mvstore = off;
SHOW abtree.mvstore;
RESET abtree.mvstore;
RESET ROLE;
REVOKE SET ON PARAMETER abtree.mvstore FROM abtree_guc_user;
DROP ROLE abtree_guc_user;
