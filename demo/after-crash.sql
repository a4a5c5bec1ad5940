-- Run by scripts/demo.sh after it crashed the server (pg_ctl stop -m immediate)
-- and started it again: recovery replayed the probe through our redo routine.
\set ON_ERROR_STOP on
\pset footer off
SELECT component, item, value FROM abtree_status() WHERE component = 'wal';
SELECT count(*) AS orders_after_recovery FROM orders;
SELECT abtree_verify('orders_placed_abtree', exact => false) AS index_verified_after_recovery;
