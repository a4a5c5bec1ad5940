#!/bin/bash
# A/B of two release builds already compiled in /tmp/dev/ab/A and /tmp/dev/ab/B
# (git archive REV | tar -x, then make PG_CONFIG=...): what the PATH records
# and the split's lock of the path to the root (src/abtree/README,
# "Standbys") cost inserts.  wal_log_hints = on, so that hint images (and
# the PATH records before them) happen; a checkpoint before each run.
#  - one statement inserting 1M random int4 (issue 22's measure), btree and
#    abtree, seconds and WAL bytes per row;
#  - pgbench, 2 clients for 20 s, each transaction inserting 100 random
#    int4 (leaf splits under concurrency), transactions per second.
# Each build alternately installed into PostgreSQL 15, three rounds.  Needs
# /tmp/dev/pgup.sh (a throwaway cluster on port 55432, socket in
# /tmp/dev).  Run as root.
. "$(dirname "$0")/ab_lib.sh"
for round in 1 2 3; do
for b in A B; do
  ab_start $b wal_log_hints=on
  for am in btree abtree; do
    $P -c "DROP TABLE IF EXISTS h" -c "CREATE TABLE h (x int4)" -c "CREATE INDEX ON h USING $am (x)" -c "CHECKPOINT" >/dev/null
    l0=$($P -c "SELECT pg_current_wal_lsn()")
    t0=$(date +%s.%N)
    $P -c "INSERT INTO h SELECT (random()*2e9-1e9)::int4 FROM generate_series(1,1000000)" >/dev/null
    t1=$(date +%s.%N)
    wal=$($P -c "SELECT pg_current_wal_lsn() - '$l0'")
    echo "round=$round build=$b test=statement am=$am secs=$(echo "$t1 - $t0" | bc) wal_per_row=$((wal / 1000000))"
    $P -c "CHECKPOINT" >/dev/null
    echo "INSERT INTO h SELECT (random()*2e9-1e9)::int4 FROM generate_series(1,100);" > /tmp/dev/ab/ins.sql
    tps=$(runuser -u postgres -- pgbench -n -h /tmp/dev -p 55432 -c 2 -j 2 -T 20 -f /tmp/dev/ab/ins.sql postgres 2>/dev/null |
          sed -n 's/^tps = \([0-9.]*\).*/\1/p')
    paths=$($P -c "SELECT value FROM abtree_status() WHERE item = 'pass_path_logged'")
    echo "round=$round build=$b test=pgbench2 am=$am tps=$tps path_records=$paths"
  done
done
done
