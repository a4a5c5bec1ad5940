#!/bin/bash
# Where pgbench inserting clients wait: bash bench/profile/pgbench_waits.sh [CLIENTS_LIST].
# One cluster (PostgreSQL 15, 1 GB shared_buffers, synchronous_commit and full_page_writes off);
# per index (btree, abtree, abtree WITH (sketch = off)) and client count (default "2 4"): a fresh
# copy of h(x int4) with 1M random rows, pgbench inserting 100 random rows per statement for 8 s,
# and from its second second 600 samples of pg_stat_activity, 10 ms apart, of what each client's
# backend is doing (CPU: no wait event).  Prints "INDEX c=N tps T" and the sample counts by wait
# event, and the machine's idle, user and system shares of CPU time over the same 6 s (from
# /proc/stat).  Run as root with the extension installed.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtwaits/cl
profile_cluster $D 55497 "max_wal_size = 10GB" "synchronous_commit = off" "full_page_writes = off"
$P -c "CREATE EXTENSION abtree" -c "CREATE TABLE h0(x int4)" \
	 -c "INSERT INTO h0 SELECT (random()*2e9-1e9)::int4 FROM generate_series(1,1000000)" >/dev/null
echo "INSERT INTO h SELECT (random()*2e9-1e9)::int4 FROM generate_series(1,100);" >$D/ins.sql
chmod 644 $D/ins.sql
SAMPLE="CREATE TEMP TABLE w(ev text);
DO \$\$BEGIN FOR i IN 1..600 LOOP
	INSERT INTO w SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity
	 WHERE application_name = 'pgbench' AND state = 'active';
	PERFORM pg_sleep(0.01);
END LOOP; END\$\$;
SELECT ev, count(*) FROM w GROUP BY 1 ORDER BY 2 DESC LIMIT 6;"
for idx in "(x)" "USING abtree (x)" "USING abtree (x) WITH (sketch = off)"; do
	for c in ${1:-2 4}; do
		$P -c "DROP TABLE IF EXISTS h" -c "CREATE TABLE h AS TABLE h0" -c "CREATE INDEX h_x ON h $idx" \
			 -c "VACUUM ANALYZE h" -c "CHECKPOINT" >/dev/null 2>&1
		runuser -u postgres -- $PG/pgbench -n -h $D -p 55497 -c $c -j $c -T 8 -f $D/ins.sql postgres 2>&1 |
			awk -v idx="$idx" -v c=$c '/^tps/{print idx, "c=" c, "tps", $3}' &
		sleep 1
		a=($(head -1 /proc/stat))
		$P -tA -c "$SAMPLE"
		b=($(head -1 /proc/stat))
		tot=0
		for i in 1 2 3 4 5 6 7 8; do tot=$((tot + ${b[$i]} - ${a[$i]})); done
		echo "cpu idle $((100 * (${b[4]} - ${a[4]}) / tot))% user $((100 * (${b[1]} - ${a[1]}) / tot))% system $((100 * (${b[3]} - ${a[3]}) / tot))%"
		wait
	done
done
runuser -u postgres -- $PG/pg_ctl -D $D/data -w stop >/dev/null
