#!/bin/bash
# Draws through posting tuples against plain entries, same data, same run: bash
# bench/profile/posting_draws.sh ROUNDS.  One cluster (PostgreSQL 15, or PGBIN's), two tables of
# ROWS (default 5,000,000) rows of a date column with 1,000 values, the same rows in both, one
# abtree index each: p_on WITH (deduplicate_items = on) (posting tuples, every leaf HAS_POSTING),
# p_off with it off (plain entries).  Per round and table, prewarmed: TABLESAMPLE swr(N) (default
# 1,000) and abtree_sample_tids(index, 10 N) (no heap), each in a DO loop for SECS (default 8) s;
# prints milliseconds per query.  Alternating the tables per round cancels the machine's drift.
. "$(dirname "$0")/cluster.sh"
D=/var/tmp/abtpostdraw/cl
profile_cluster $D 55496 "shared_buffers = 2GB"
$P -c "CREATE EXTENSION abtree; CREATE EXTENSION pg_prewarm" \
	-c "CREATE TABLE p_on(x date); INSERT INTO p_on SELECT date '2020-01-01' + (random() * 999)::int FROM generate_series(1, ${ROWS:-5000000})" \
	-c "CREATE TABLE p_off AS SELECT * FROM p_on" \
	-c "CREATE INDEX p_on_x ON p_on USING abtree (x) WITH (deduplicate_items = on)" \
	-c "CREATE INDEX p_off_x ON p_off USING abtree (x) WITH (deduplicate_items = off)" \
	-c "VACUUM ANALYZE p_on, p_off" >/dev/null
$P -Atc "SELECT relname, pg_relation_size(oid) / 8192 FROM pg_class WHERE relname IN ('p_on_x', 'p_off_x') ORDER BY 1" | sed 's/^/pages: /'
loop() {
	$P -c "SELECT pg_prewarm('$1'), pg_prewarm('$1_x') \\gset" -c "DO \$\$ DECLARE t timestamptz := clock_timestamp(); n int := 0; BEGIN
  WHILE clock_timestamp() < t + interval '${SECS:-8} s' LOOP PERFORM $2; n := n + 1; END LOOP;
  RAISE NOTICE 'ms %', round(${SECS:-8}000.0 / n, 3); END \$\$" 2>&1 | grep -o 'ms .*'
}
N=${N:-1000}
for r in $(seq 1 "$1"); do
	for t in p_on p_off; do
		echo "round $r $t swr($N): $(loop $t "count(*) FROM $t TABLESAMPLE swr($N)")"
		echo "round $r $t sample_tids($((10 * N))): $(loop $t "count(*) FROM abtree_sample_tids('${t}_x', $((10 * N)))")"
	done
done
runuser -u postgres -- $PG/pg_ctl -D $D/data -w stop >/dev/null
