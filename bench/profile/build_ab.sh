#!/bin/bash
# Same-run A/B of two builds of abtree.so for CREATE INDEX: bash bench/profile/build_ab.sh
# A.so B.so ROUNDS.  One cluster (PostgreSQL 15, or PGBIN's), ROWS (default 10,000,000) rows of
# TYPE (int4; text: md5 of a random number, collation "C"; date: 1,000 values) loaded once; then per round a
# btree build and, per build of abtree.so, install it, restart, and one abtree build, each after
# a CHECKPOINT, single backend, maintenance_work_mem 1GB (or MWM's).  Alternating A, B per round cancels
# the machine's drift.  Prints each build's time (with CPU=1 also its backend's CPU time), then
# the medians and their ratios to btree's;
# with PROFILE=1, then one more build of each under perf (top functions by self time).
# Run as root; leaves B installed.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtbuildab/cl
LIB=$($PG/pg_config --pkglibdir)
cp "$1" $LIB/abtree.so
profile_cluster $D 55495 "max_wal_size = 10GB" "checkpoint_timeout = 1h" "shared_buffers = 2GB" \
	"maintenance_work_mem = ${MWM:-1GB}" "max_parallel_maintenance_workers = 0"
case ${TYPE:-int4} in
	text) col='text COLLATE "C"'; val='md5(random()::text)' ;;
	date) col=date; val="date '2020-01-01' + (random() * 999)::int" ;;	# 1,000 values
	*) col=int4; val='(random()*2e9-1e9)::int4' ;;
esac
$P -c "CREATE EXTENSION abtree" -c "CREATE TABLE h(x $col)" \
	-c "INSERT INTO h SELECT $val FROM generate_series(1,${ROWS:-10000000})" \
	-c "VACUUM ANALYZE h" -c "CHECKPOINT"
# build: the statement's time in seconds, and with CPU=1 also its backend's CPU seconds (user and
# system, from /proc/self/stat before and after, read by the backend itself): steadier than the
# time when the machine's disk is noisy.
build() {
	$P -c "DROP INDEX IF EXISTS h_x" -c "CHECKPOINT" 2>/dev/null
	$P -At -c "SELECT 'cpu ' || pg_read_file('/proc/self/stat')" -c '\timing on' \
		-c "CREATE INDEX h_x ON h $1" -c "SELECT 'cpu ' || pg_read_file('/proc/self/stat')" |
		awk '/^Time:/ && t == "" {t = $2 / 1000} /^cpu / {c[n++] = $15 + $16}
			END {if (ENVIRON["CPU"] != "") printf "%.3f %.2f\n", t, (c[1] - c[0]) / 100; else printf "%.3f\n", t}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: >$D/btree; : >$D/A; : >$D/B
for r in $(seq 1 "$3"); do
	t=$(build "USING btree (x)"); echo "round $r btree: $t s"; echo $t >>$D/btree
	for side in A B; do
		so=$1; [ $side = B ] && so=$2
		swap_library $D "$so"
		t=$(build "USING abtree (x)"); echo "round $r $side ($(basename "$so")): $t s"; echo $t >>$D/$side
	done
done
b=$(median <$D/btree); a=$(median <$D/A); bb=$(median <$D/B)
echo "medians: btree $b s, A $a s, B $bb s"
echo "A / btree: $(echo "$a / $b" | bc -l | cut -c1-5); B / btree: $(echo "$bb / $b" | bc -l | cut -c1-5); B / A: $(echo "$bb / $a" | bc -l | cut -c1-5)"
if [ -n "$CPU" ]; then
	mc() { awk '{print $2}' "$1" | median; }
	b=$(mc $D/btree); a=$(mc $D/A); bb=$(mc $D/B)
	echo "backend CPU medians: btree $b s, A $a s, B $bb s"
	echo "CPU A / btree: $(echo "$a / $b" | bc -l | cut -c1-5); B / btree: $(echo "$bb / $b" | bc -l | cut -c1-5); B / A: $(echo "$bb / $a" | bc -l | cut -c1-5)"
fi
runuser -u postgres -- $PG/pg_ctl -D $D/data -w stop >/dev/null
if [ -n "$PROFILE" ]; then
	for side in A B; do
		so=$1; [ $side = B ] && so=$2
		swap_library $D "$so"
		$P -c "DROP INDEX IF EXISTS h_x" -c "CHECKPOINT" 2>/dev/null
		echo "profile of $side ($(basename "$so")):"
		perf_statement $D "CREATE INDEX h_x ON h USING abtree (x)"
	done
fi
