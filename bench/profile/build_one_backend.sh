#!/bin/bash
# CREATE INDEX on ROWS (default 5,000,000) random int4 in one backend, no parallel
# workers: the build's time with abtree, abtree WITH (sketch = off) and btree, each after
# a CHECKPOINT, in the same run (REPS each, default 3, medians); then perf on one more
# abtree build (self time; with CALLERS=1 the call graphs).  TYPE=text indexes 32-character
# text keys (md5 of a random number, collation "C") instead, the build's general path.  Run as
# root with the extension installed in PostgreSQL 15 (release build), or in the one PGBIN names.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtab/cb
profile_cluster $D 55498 "max_wal_size = 10GB" "checkpoint_timeout = 1h" "shared_buffers = 2GB" \
	"maintenance_work_mem = 1GB" "max_parallel_maintenance_workers = 0"
if [ "${TYPE:-int4}" = text ]; then
	col='text COLLATE "C"'
	val='md5(random()::text)'
else
	col=int4
	val='(random()*2e9-1e9)::int4'
fi
$P -c "CREATE EXTENSION abtree" -c "CREATE TABLE h(x $col)" \
	-c "INSERT INTO h SELECT $val FROM generate_series(1,${ROWS:-5000000})" \
	-c "VACUUM ANALYZE h" -c "CHECKPOINT"
# one build: its time in seconds (psql's \timing)
build() {
	$P -c "DROP INDEX IF EXISTS h_x" -c "CHECKPOINT"
	$P -c '\timing on' -c "CREATE INDEX h_x ON h $1" | awk '/^Time:/ {printf "%.3f\n", $2 / 1000}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A t
for name in abtree abtree_nosketch btree; do
	case $name in
		abtree) variant="USING abtree (x)" ;;
		abtree_nosketch) variant="USING abtree (x) WITH (sketch = off)" ;;
		btree) variant="USING btree (x)" ;;
	esac
	t[$name]=$(for r in $(seq ${REPS:-3}); do build "$variant"; done | median)
	echo "$variant: ${t[$name]} s"
done
echo "abtree / btree: $(echo "${t[abtree]} / ${t[btree]}" | bc -l | cut -c1-5)"
echo "abtree sketch=off / btree: $(echo "${t[abtree_nosketch]} / ${t[btree]}" | bc -l | cut -c1-5)"
$P -c "DROP INDEX IF EXISTS h_x" -c "CHECKPOINT"
perf_statement $D "CREATE INDEX h_x ON h USING abtree (x)"
runuser -u postgres -- $PG/pg_ctl -D $D/data -m fast stop >/dev/null
