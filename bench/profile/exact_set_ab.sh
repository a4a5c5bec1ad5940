#!/bin/bash
# A/B of two release builds already compiled in /tmp/dev/ab/A and /tmp/dev/ab/B
# (git archive REV | tar -x, then make PG_CONFIG=...): one statement inserting
# 1M random int4 over 500 values (a sketch that keeps its exact list) and over
# 2e9 (the list given up after about a thousand rows), into a table with a
# btree and then an abtree index, each build alternately installed into
# PostgreSQL 15, two rounds.  Needs /tmp/dev/pgup.sh (a throwaway cluster on
# port 55432, socket in /tmp/dev).  Run as root.
. "$(dirname "$0")/ab_lib.sh"
for round in 1 2; do
for b in A B; do
  ab_start $b
  for card in 500 2000000000; do
    for am in btree abtree; do
      $P -c "DROP TABLE IF EXISTS h" -c "CREATE TABLE h (x int4)" -c "CREATE INDEX ON h USING $am (x)" -c "CHECKPOINT" >/dev/null
      l0=$($P -c "SELECT pg_current_wal_lsn()")
      t0=$(date +%s.%N)
      $P -c "INSERT INTO h SELECT (random()*$card)::int4 FROM generate_series(1,1000000)" >/dev/null
      t1=$(date +%s.%N)
      wal=$($P -c "SELECT pg_current_wal_lsn() - '$l0'")
      est=$($P -c "SELECT round(chll_estimate(abtree_sketch(indexrelid::regclass, 1))) FROM pg_index WHERE indrelid = 'h'::regclass AND '$am' = 'abtree'")
      echo "round=$round build=$b card=$card am=$am secs=$(echo "$t1 - $t0" | bc) wal_per_row=$((wal / 1000000)) est=$est"
    done
  done
done
done
