#!/usr/bin/env bash
# README command 1: set up, build, install, and run the demo on a throwaway
# PostgreSQL 15 cluster with abtree preloaded.  Run as root.  Leaves no server
# running, also when interrupted.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
abt_require_root
abt_serialize

abt_log "setup"
bash "$ABT_ROOT/scripts/setup.sh"

abt_log "build and install"
abt_build release-pg15 "$ABT_PG15_CONFIG"

abt_log "start a throwaway cluster with shared_preload_libraries = 'abtree'"
trap abt_cluster_stop EXIT
abt_cluster_start "$ABT_PG15_CONFIG" "max_wal_size = '4GB'" "checkpoint_timeout = '30min'"
echo "cluster in $ABT_CLUSTER_DIR, port $PGPORT"

psql_demo() { abt_as_postgres psql -X -v ON_ERROR_STOP=1 -f "$1"; }
psql_demo "$ABT_ROOT/demo/demo.sql"

abt_log "10. crash the server (pg_ctl stop -m immediate) and restart it"
runuser -u postgres -- "$ABT_CLUSTER_BINDIR/pg_ctl" -D "$ABT_CLUSTER_DIR/data" -m immediate -w stop >/dev/null
log_offset=$(stat -c %s "$ABT_CLUSTER_DIR/server.log")
runuser -u postgres -- "$ABT_CLUSTER_BINDIR/pg_ctl" -D "$ABT_CLUSTER_DIR/data" \
	-l "$ABT_CLUSTER_DIR/server.log" -w -t 120 start >/dev/null
echo "server log during recovery:"
tail -c +"$((log_offset + 1))" "$ABT_CLUSTER_DIR/server.log" |
	grep -E 'resource manager|redo starts|abtree: |for abtree/|redo done|ready to accept' | sed -e 's/^[^]]*] /  /'
psql_demo "$ABT_ROOT/demo/after-crash.sql"

abt_log "done: stopping the cluster"
