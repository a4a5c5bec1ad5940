#!/bin/bash
# Same-run A/B of two builds of abtree.so for issue 22's COPY target (sketches on against off):
# bash bench/profile/copy_sketch_ab.sh A.so B.so ROUNDS [REPS].  One cluster (PostgreSQL 15,
# shared_buffers 2GB, batched validation, the default), ROWS (default 1,000,000) random int4
# written to a file once; per round and build: install that .so, restart, then REPS (default 5)
# times, alternating, COPY the file into an empty table with an abtree index WITH (sketch = on)
# and one WITH (sketch = off), each after a CHECKPOINT, timed in the client.  Alternating A, B
# per round cancels the machine's drift.  Prints each COPY, then per build the median times, the
# on/off ratio of the medians, and VALID_BATCH records per COPY (abtree_status batch_records).
# Run as root; leaves B installed.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtcopyab/cl
LIB=$($PG/pg_config --pkglibdir)
cp "$1" $LIB/abtree.so
profile_cluster $D 55494 "max_wal_size = 10GB" "checkpoint_timeout = 1h" "shared_buffers = 2GB" \
	"synchronous_commit = off"
$P -c "CREATE EXTENSION abtree" \
   -c "COPY (SELECT (random()*2e9-1e9)::int4 FROM generate_series(1, ${ROWS:-1000000})) TO '$D/rows.copy'"
one() {
	local t0 t1 r0 r1
	$P -c "DROP TABLE IF EXISTS h" -c "CREATE TABLE h (x int4)" \
	   -c "CREATE INDEX ON h USING abtree (x) WITH (sketch = $1)" -c "CHECKPOINT"
	r0=$($P -tAc "SELECT value FROM abtree_status() WHERE item = 'batch_records'")
	t0=$(date +%s.%N)
	$P -c "COPY h FROM '$D/rows.copy'"
	t1=$(date +%s.%N)
	r1=$($P -tAc "SELECT value FROM abtree_status() WHERE item = 'batch_records'")
	echo "$(echo "$t1 - $t0" | bc) $((r1 - r0))"
}
: >$D/times
for r in $(seq 1 "$3"); do
	for b in A B; do
		if [ $b = A ]; then swap_library $D "$1"; else swap_library $D "$2"; fi
		for rep in $(seq 1 "${4:-5}"); do
			for s in on off; do
				res=$(one $s)
				echo "round $r build $b sketch $s: $res"
				echo "$b $s $res" >>$D/times
			done
		done
	done
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for b in A B; do
	on=$(awk -v b=$b '$1 == b && $2 == "on" {print $3}' $D/times | median)
	off=$(awk -v b=$b '$1 == b && $2 == "off" {print $3}' $D/times | median)
	gon=$(awk -v b=$b '$1 == b && $2 == "on" {print $4}' $D/times | median)
	goff=$(awk -v b=$b '$1 == b && $2 == "off" {print $4}' $D/times | median)
	echo "build $b: sketch on $on s, off $off s, on/off x$(echo "scale=3; $on / $off" | bc), records $gon on, $goff off"
done
runuser -u postgres -- $PG/pg_ctl -D $D/data -w stop >/dev/null
