#!/bin/bash
# Same-run A/B of two builds of abtree.so on one backend's CPU time:
# bash bench/profile/swr_cpu_ab.sh A.so B.so ROUNDS.  One cluster (PostgreSQL 15, 1 GB
# shared_buffers, jit off), ROWS (default 1,000,000) rows with an abtree index on random y,
# loaded once.  Per round and build: stop, install that .so, start, prewarm, then in one session
# three warm-up queries, Q (default 30) SELECT AGG FROM a TABLESAMPLE swr(N) (default 100,000)
# and Q BERNOULLI queries of the same expected size; AGG defaults to count(*), and sum(y) reads
# the indexed column.  Measured is the backend's time on
# a CPU (/proc/PID/schedstat), not the wall clock: this machine's wall times drift by +-30%
# between minutes (other guests), the time on a CPU much less.  Prints per round and build the
# milliseconds per query and BERNOULLI / swr, then per build the medians.  Run as root; leaves B
# installed.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtswrcpu/cl
LIB=$($PG/pg_config --pkglibdir)
N=${N:-100000}
Q=${Q:-30}
AGG=${AGG:-count(*)}
cp "$1" $LIB/abtree.so
profile_cluster $D 55493 "jit = off"
$P -c "CREATE EXTENSION abtree; CREATE EXTENSION pg_prewarm" \
   -c "CREATE TABLE a(x int4, y int4); INSERT INTO a SELECT g, (random()*1e9)::int FROM generate_series(1,${ROWS:-1000000}) g; CREATE INDEX a_y ON a USING abtree (y)" \
   -c "VACUUM ANALYZE a" >/dev/null
pct=$(echo "scale=6; 100 * $N / ${ROWS:-1000000}" | bc)
{
	echo "SELECT pg_prewarm('a'), pg_prewarm('a_y');"
	for i in 1 2 3; do echo "SELECT $AGG FROM a TABLESAMPLE swr($N);"; done
	echo "SELECT $AGG FROM a TABLESAMPLE bernoulli($pct);"
	echo "SELECT pg_backend_pid() AS pid \\gset"
	echo "\\setenv ABPID :pid"
	echo "\\! cat /proc/\$ABPID/schedstat > $D/s1"
	for i in $(seq $Q); do echo "SELECT $AGG FROM a TABLESAMPLE swr($N);"; done
	echo "\\! cat /proc/\$ABPID/schedstat > $D/s2"
	for i in $(seq $Q); do echo "SELECT $AGG FROM a TABLESAMPLE bernoulli($pct);"; done
	echo "\\! cat /proc/\$ABPID/schedstat > $D/s3"
} >$D/run.sql
chmod 644 $D/run.sql
: >$D/results
for r in $(seq 1 "$3"); do
	for b in A B; do
		if [ $b = A ]; then swap_library $D "$1"; else swap_library $D "$2"; fi
		rm -f $D/s1 $D/s2 $D/s3
		$P -f $D/run.sql >/dev/null
		read -r s1 _ <$D/s1
		read -r s2 _ <$D/s2
		read -r s3 _ <$D/s3
		line=$(echo "$b $s1 $s2 $s3 $Q" | awk '{s = ($3 - $2) / $5 / 1e6; q = ($4 - $3) / $5 / 1e6;
			printf "%s %.3f %.3f %.3f", $1, s, q, q / s}')
		echo "round $r build $line (swr ms, bernoulli ms, bernoulli/swr)"
		echo "$line" >>$D/results
	done
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for b in A B; do
	echo "build $b: swr($N) $(awk -v b=$b '$1 == b {print $2}' $D/results | median) ms," \
		"bernoulli $(awk -v b=$b '$1 == b {print $3}' $D/results | median) ms," \
		"bernoulli/swr x$(awk -v b=$b '$1 == b {print $4}' $D/results | median) (medians of the rounds)"
done
runuser -u postgres -- $PG/pg_ctl -D $D/data -w stop >/dev/null
