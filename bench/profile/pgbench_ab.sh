#!/bin/bash
# Same-run A/B of two builds of abtree.so on pgbench inserts: bash bench/profile/pgbench_ab.sh
# A.so B.so.  One cluster (PostgreSQL 15, 1 GB shared_buffers, synchronous_commit and
# full_page_writes off); per run a fresh copy of h(x int4) with 1M random rows and an abtree
# index, then pgbench inserting 100 random rows per statement for SECS (default 10) seconds with
# each count of CLIENTS_LIST (default "2 4"); per round (ROUNDS, default 5) both builds, in the
# order A, B or B, A (alternating, against the machine's drift), then btree as the baseline.
# Prints "round R BUILD CLIENTS TPS".  Run as root; leaves B installed.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtabpgb/cl
A=$1; B=$2
ROUNDS=${ROUNDS:-5}; SECS=${SECS:-10}; CLIENTS_LIST=${CLIENTS_LIST:-"2 4"}
cp $A $($PG/pg_config --pkglibdir)/abtree.so
profile_cluster $D 55496 "max_wal_size = 10GB" "synchronous_commit = off" "full_page_writes = off"
$P -c "CREATE EXTENSION abtree" -c "CREATE TABLE h0(x int4)" \
	 -c "INSERT INTO h0 SELECT (random()*2e9-1e9)::int4 FROM generate_series(1,1000000)" >/dev/null
echo "INSERT INTO h SELECT (random()*2e9-1e9)::int4 FROM generate_series(1,100);" >$D/ins.sql
chmod 644 $D/ins.sql
run() { # idx clients
	$P -c "DROP TABLE IF EXISTS h" -c "CREATE TABLE h AS TABLE h0" -c "CREATE INDEX h_x ON h $1" \
		 -c "VACUUM ANALYZE h" -c "CHECKPOINT" >/dev/null 2>&1
	runuser -u postgres -- $PG/pgbench -n -h $D -p 55496 -c $2 -j $2 -T $SECS -f $D/ins.sql postgres 2>&1 | awk '/^tps/{print $3}'
}
for r in $(seq $ROUNDS); do
	order="A B"; [ $((r % 2)) = 0 ] && order="B A"
	for b in $order; do
		[ $b = A ] && swap_library $D $A || swap_library $D $B
		for c in $CLIENTS_LIST; do echo "round $r $b $c $(run 'USING abtree (x)' $c)"; done
	done
	for c in $CLIENTS_LIST; do echo "round $r btree $c $(run '(x)' $c)"; done
done
runuser -u postgres -- $PG/pg_ctl -D $D/data -w stop >/dev/null
cp $B $($PG/pg_config --pkglibdir)/abtree.so
