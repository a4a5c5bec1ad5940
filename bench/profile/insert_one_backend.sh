#!/bin/bash
# One backend inserting 1M random rows into a 200K-row table with an abtree index; perf on it.
# Run as root with the extension installed in PostgreSQL 15 (release build).  Prints perf's top functions.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtab/cl
profile_cluster $D 55499 "max_wal_size = 10GB" "checkpoint_timeout = 1h" "synchronous_commit = off"
$P -c "CREATE EXTENSION abtree; CREATE TABLE a(x int4, y int4); INSERT INTO a SELECT g, (hashint4(g)&2147483647) FROM generate_series(1,200000) g; CREATE INDEX a_y ON a USING abtree(y); CHECKPOINT;"
cat > $D/ins.sql <<S
INSERT INTO a SELECT g, (random()*2e9)::int4 FROM generate_series(1,1000000) g;
S
$P -c "SELECT pg_backend_pid()" -f $D/ins.sql &
sleep 0.5
pid=$(runuser -u postgres -- $PG/psql -X -At -h $D -p 55499 -d postgres -c "select pid from pg_stat_activity where query like 'INSERT INTO a%' and pid<>pg_backend_pid()")
perf record -p $pid -o $D/perf.data -- sleep 6 2>/dev/null >/dev/null
wait
perf report -i $D/perf.data --stdio --percent-limit 0.4 2>/dev/null | grep -E "%" | head -40
runuser -u postgres -- $PG/pg_ctl -D $D/data -m fast stop >/dev/null
