#!/bin/bash
# One backend running SELECT AGG FROM a TABLESAMPLE swr(N) for 12 s on ROWS rows
# (abtree index on random y, table and index prewarmed); perf on it for 8 s.
# N (default 10000), ROWS (default 1000000) and AGG (default count(*); sum(y) reads the
# indexed column) come from the environment; PROFILE_CONF, if
# set, is one more postgresql.conf line (e.g. "huge_pages = on", with vm.nr_hugepages set).
# Run as root with the extension installed in PostgreSQL 15 (release build).  Prints the
# runs' latency and perf's top functions.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtswr/cl
profile_cluster $D 55498 ${PROFILE_CONF:+"$PROFILE_CONF"}
$P -c "CREATE EXTENSION abtree; CREATE EXTENSION pg_prewarm" \
   -c "CREATE TABLE a(x int4, y int4); INSERT INTO a SELECT g, (random()*1e9)::int FROM generate_series(1,${ROWS:-1000000}) g; CREATE INDEX a_y ON a USING abtree (y)" \
   -c "VACUUM ANALYZE a" -c "SELECT pg_prewarm('a'), pg_prewarm('a_y')" >/dev/null
cat > $D/loop.sql <<'S'
DO $$ DECLARE t timestamptz := clock_timestamp(); n int := 0; BEGIN
  WHILE clock_timestamp() < t + interval '12 s' LOOP PERFORM @AGG@ FROM a TABLESAMPLE swr(@N@); n := n + 1; END LOOP;
  RAISE NOTICE 'runs: %, ms per run: %', n, round(12000.0 / n, 2); END $$;
S
sed -i "s/@N@/${N:-10000}/; s/@AGG@/${AGG:-count(*)}/" $D/loop.sql
chmod 644 $D/loop.sql
$P -f $D/loop.sql &
sleep 2
pid=$($P -tAc "SELECT pid FROM pg_stat_activity WHERE query LIKE 'DO %' AND pid <> pg_backend_pid()")
perf record -F 999 -g -p "$pid" -o $D/perf.data -- sleep 8 >/dev/null 2>&1
wait
perf report -i $D/perf.data --no-children --percent-limit 1 --stdio -g none 2>/dev/null | grep -E '^ +[0-9]'
runuser -u postgres -- $PG/pg_ctl -D $D/data -w stop >/dev/null
