#!/bin/bash
# Where two inserting clients wait (issue 22): builds and installs this tree (PostgreSQL 15), a
# throwaway cluster with a 1M-row table and its abtree index, pgbench of 100-row inserts with 2
# clients, and perf on the sched_switch events of both backends (DWARF call graphs) for 3 s;
# lock_waits.py then attributes every futex wait to the abtree functions on its stack.  Run as root.
. "$(dirname "$0")/cluster.sh"
D=/tmp/abpgb
profile_cluster $D 55497 "max_wal_size = 10GB" "checkpoint_timeout = 1h" "synchronous_commit = off" "full_page_writes = off"
make -s -C "$(dirname "$0")/../.." PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config install >/dev/null
runuser -u postgres -- $PG/pg_ctl -D $D/data -l $D/log restart -w >/dev/null
$P -c "CREATE EXTENSION abtree"
$P -c "CREATE TABLE a AS SELECT g AS x, ((g::int8 * 2654435761) % 2147483647 - 1073741823)::int4 AS y FROM generate_series(1,1000000) g" -c "CREATE INDEX ON a USING abtree (y)" -c "VACUUM a" -c "CHECKPOINT"
runuser -u postgres -- $PG/pgbench -h $D -p 55497 -n -M prepared -c 2 -j 2 -T 8 -D batch=100 -f "$(dirname "$0")"/../pgbench/insert_a_batch.sql postgres > /tmp/wp.out 2>&1 &
sleep 1.5
pids=$($P -tAc "select string_agg(pid::text, ',') from pg_stat_activity where application_name='pgbench'")
perf record -e sched:sched_switch --call-graph dwarf,16384 -p $pids -o /tmp/wp.perf -- sleep 3 >/dev/null 2>&1
wait
grep tps /tmp/wp.out
/usr/bin/python3 "$(dirname "$0")"/lock_waits.py /tmp/wp.perf
