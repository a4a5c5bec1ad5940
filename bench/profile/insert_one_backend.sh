#!/bin/bash
# One backend running issue 22's statement: INSERT of ROWS (default 3,000,000) random int4
# into an empty table h(x int4) with one index (INDEX, default "USING abtree (x)"); perf on it
# for 6 s.  Run as root with the extension installed in PostgreSQL 15 (release build).
# Prints perf's top functions (self time), then with CALLERS=1 their call graphs.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtab/cl
profile_cluster $D 55499 "max_wal_size = 10GB" "checkpoint_timeout = 1h" "synchronous_commit = off" "shared_buffers = 2GB"
$P -c "CREATE EXTENSION abtree; CREATE TABLE h(x int4); CREATE INDEX h_x ON h ${INDEX:-USING abtree (x)}; CHECKPOINT;"
cat > $D/ins.sql <<S
INSERT INTO h SELECT (random()*2e9-1e9)::int4 FROM generate_series(1,${ROWS:-3000000});
S
chmod 644 $D/ins.sql
$P -f $D/ins.sql &
sleep 0.5
pid=$($P -tAc "SELECT pid FROM pg_stat_activity WHERE query LIKE 'INSERT INTO h%' AND pid <> pg_backend_pid()")
perf record -F 999 -g -p "$pid" -o $D/perf.data -- sleep 6 >/dev/null 2>&1
wait
perf report -i $D/perf.data --no-children --percent-limit 0.7 --stdio -g none 2>/dev/null | grep -E '^ +[0-9]'
if [ -n "$CALLERS" ]; then
	perf report -i $D/perf.data --children --percent-limit 3 --stdio -g caller,0.5,callee --max-stack 12 ${SYMS:+--symbols $SYMS} 2>/dev/null | head -300
fi
runuser -u postgres -- $PG/pg_ctl -D $D/data -m fast stop >/dev/null
