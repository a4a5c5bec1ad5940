#!/bin/bash
# One pgbench client (CLIENTS of them, default 1) inserting 100 random int4 per transaction into
# h(x int4) (1M rows, one index: INDEX, default "USING abtree (x)"), perf on their backends for
# 8 s; prints the tps and perf's top functions (self time, LIMIT percent and up, default 1).
# PostgreSQL 15 (PGBIN: another bin directory), 1 GB
# shared_buffers, synchronous_commit off.  Run as root with the extension installed.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtpgb1/cl
profile_cluster $D 55493 "max_wal_size = 10GB" "synchronous_commit = off"
$P -c "CREATE EXTENSION abtree" -c "CREATE TABLE h(x int4)" \
   -c "INSERT INTO h SELECT (random()*2e9-1e9)::int4 FROM generate_series(1,1000000)" \
   -c "CREATE INDEX h_x ON h ${INDEX:-USING abtree (x)}" -c "VACUUM ANALYZE h" -c "CHECKPOINT" >/dev/null
echo "INSERT INTO h SELECT (random()*2e9-1e9)::int4 FROM generate_series(1,100);" >$D/ins.sql
chmod 644 $D/ins.sql
runuser -u postgres -- $PG/pgbench -n -h $D -p 55493 -c ${CLIENTS:-1} -j ${CLIENTS:-1} -T 12 -f $D/ins.sql postgres >$D/pgb.out 2>&1 &
sleep 2
pid=$($P -tAc "SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE application_name = 'pgbench'")
perf record -F 999 -g -p "$pid" -o $D/perf.data -- sleep 8 >/dev/null 2>&1
wait
grep tps $D/pgb.out
perf report -i $D/perf.data --no-children --percent-limit ${LIMIT:-1} --stdio -g none 2>/dev/null | grep -E '^ +[0-9]'
runuser -u postgres -- $PG/pg_ctl -D $D/data -w stop >/dev/null
# the data stay for perf annotate -i $D/perf.data
