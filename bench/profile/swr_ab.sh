#!/bin/bash
# In-backend A/B of two builds of abtree.so on one cluster: bash bench/profile/swr_ab.sh A.so B.so
# ROUNDS ["postgresql.conf line"].  Loads ROWS (default 10,000,000) rows with an abtree index on
# random y once, then per round and build: installs that .so, restarts, prewarms, and runs
# SELECT count(*) FROM a TABLESAMPLE swr(N) (default 1,000) for 10 s in one DO loop, or SELECT
# QUERY if set (QUERY="count(*) FROM abtree_sample_tids('a_y', 10000)"); prints the
# milliseconds per query.  Alternating A, B, A, B cancels the machine's drift.  Run as
# root; leaves B installed.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtswrab/cl
LIB=$(/usr/bin/pg_config --pkglibdir)
cp $1 $LIB/abtree.so
profile_cluster $D 55497 ${4:+"$4"}
$P -c "CREATE EXTENSION abtree; CREATE EXTENSION pg_prewarm" \
   -c "CREATE TABLE a(x int4, y int4); INSERT INTO a SELECT g, (random()*1e9)::int FROM generate_series(1,${ROWS:-10000000}) g; CREATE INDEX a_y ON a USING abtree (y)" \
   -c "VACUUM ANALYZE a" >/dev/null
cat > $D/loop.sql <<S
SELECT pg_prewarm('a'), pg_prewarm('a_y') \gset
DO \$\$ DECLARE t timestamptz := clock_timestamp(); n int := 0; BEGIN
  WHILE clock_timestamp() < t + interval '10 s' LOOP PERFORM ${QUERY:-count(*) FROM a TABLESAMPLE swr(${N:-1000})}; n := n + 1; END LOOP;
  RAISE NOTICE 'ms %', round(10000.0 / n, 3); END \$\$;
S
chmod 644 $D/loop.sql
for r in $(seq 1 $3); do for so in $1 $2; do
  swap_library $D $so
  echo "$(basename $so) round $r: $($P -f $D/loop.sql 2>&1 | grep -o 'ms .*')"
done; done
runuser -u postgres -- $PG/pg_ctl -D $D/data -w stop >/dev/null
