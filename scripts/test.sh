#!/usr/bin/env bash
# README command 2: set up, build, install and run every test suite.
#
#   bash scripts/test.sh            PostgreSQL 15 (Debian's packages)
#   bash scripts/test.sh --pg 18    PostgreSQL 18 built with --enable-cassert
#                                   (scripts/pg18.sh builds it once into a cache)
#
# Run as root.  The build uses -Werror; on 15 it also defines
# USE_ASSERT_CHECKING, because Debian's server is built without assertions.
# Suites: build, cppcheck, pg_regress, isolation, pgTAP (on a throwaway
# cluster), TAP (PostgreSQL::Test::Cluster makes its own clusters), the
# reliability suites of test/stress (test/RELIABILITY.md) and, where Citus
# can be built (scripts/citus.sh), the Citus suite.
# On a failure it prints the diffs and the server log tail.  The last line is
# "N passed, M failed"; the exit status is non-zero when M > 0.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

pg=15
while [ $# -gt 0 ]; do
	case $1 in
		--pg) pg=${2:-}; shift 2 ;;
		--pg=*) pg=${1#--pg=}; shift ;;
		*) echo "usage: $0 [--pg 15|18]" >&2; exit 2 ;;
	esac
done
abt_require_root
abt_serialize

case $pg in
	15)
		bash "$ABT_ROOT/scripts/setup.sh" || exit 1
		pgc=$ABT_PG15_CONFIG
		cppflags=-DUSE_ASSERT_CHECKING
		;;
	18)
		prefix=$(bash "$ABT_ROOT/scripts/pg18.sh" | tail -n 1) || exit 1
		pgc=$prefix/bin/pg_config
		cppflags=					# already an --enable-cassert build
		export PATH="$prefix/bin:$PATH"
		;;
	*) echo "unsupported PostgreSQL version: $pg (15 or 18)" >&2; exit 2 ;;
esac

passed=0
failed=0
failures=()

# count SUITE NPASSED NFAILED
count() {
	passed=$((passed + $2))
	failed=$((failed + $3))
	[ "$3" -eq 0 ] || failures+=("$1")
	printf -- '-- %s: %d passed, %d failed\n' "$1" "$2" "$3"
}

finish() {
	abt_cluster_stop
	rm -rf "${logdir:-}"
	echo
	[ ${#failures[@]} -eq 0 ] || echo "failed suites on PostgreSQL $pg: ${failures[*]}"
	echo "pg$pg: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

# pg_regress and pg_isolation_regress: "All N tests passed." or "M of N tests
# failed." (PostgreSQL 16+ prefixes "# ").  No such line means it broke.
count_regress() {
	local suite=$1 out=$2 all m n
	all=$(grep -Eo 'All [0-9]+ tests passed' "$out" | grep -Eo '[0-9]+' | tail -n 1)
	m=$(grep -Eo '[0-9]+ of [0-9]+ tests failed' "$out" | tail -n 1)
	if [ -n "$all" ]; then
		count "$suite" "$all" 0
	elif [ -n "$m" ]; then
		n=$(echo "$m" | awk '{print $3}')
		m=$(echo "$m" | awk '{print $1}')
		count "$suite" $((n - m)) "$m"
	else
		count "$suite" 0 1
	fi
}

# prove and pg_prove: "Files=F, Tests=N" plus, per failing file,
# a summary line with "Wstat: W" and "Failed: F)"; a file that died counts one
# failure.
count_prove() {
	local suite=$1 out=$2 rc=$3 total bad
	total=$(grep -Eo 'Files=[0-9]+, Tests=[0-9]+' "$out" | grep -Eo '[0-9]+$' | tail -n 1)
	# newer prove writes "(Wstat: 256 (exited 1) Tests: 9 Failed: 1)"
	bad=$(grep -E 'Wstat: [0-9]+.*Failed: [0-9]+\)' "$out" |
		sed -E 's/.*Wstat: ([0-9]+).*Failed: ([0-9]+)\).*/\1 \2/' |
		awk '{ f = $2; if (f == 0 && $1 != 0) f = 1; s += f } END { print s + 0 }')
	[ -n "$total" ] || total=0
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then bad=1; fi
	count "$suite" $((total > bad ? total - bad : 0)) "$bad"
}

logdir=$(mktemp -d /tmp/abtree-test.XXXXXX)
chmod 755 "$logdir"

abt_log "build against $("$pgc" --version) with -Werror ${cppflags}"
if abt_build "test-pg$pg" "$pgc" COPT=-Werror ${cppflags:+PG_CPPFLAGS=$cppflags}; then
	count build 1 0
else
	count build 0 1
	finish
fi
bdir=$ABT_BUILD_DIR

abt_log "cppcheck src/"
# PostgreSQL's headers are not ours to fix: findings there are suppressed,
# and one preprocessor configuration keeps it to seconds.
if cppcheck -q --error-exitcode=1 --enable=warning,performance,portability \
	--inline-suppr --library=posix --max-configs=1 \
	-I "$("$pgc" --includedir-server)" -I "$ABT_ROOT/src" \
	--suppress=missingIncludeSystem "--suppress=*:$("$pgc" --includedir-server)/*" \
	"$ABT_ROOT/src" 2>&1 | grep -v 'toomanyconfigs'; [ "${PIPESTATUS[0]}" -eq 0 ]; then
	count cppcheck 1 0
else
	count cppcheck 0 1
fi

abt_log "starting a throwaway cluster"
# autovacuum off: regress checks what VACUUM removes (abtree_sketch's exact
# count after a DELETE), and an autovacuum worker analyzing an earlier
# test's table holds a snapshot that keeps those rows; it failed so once
# on 18.  Tests that need autovacuum run in TAP clusters of their own (029).
if ! abt_cluster_start "$pgc" "autovacuum = off"; then
	count cluster 0 1
	finish
fi

abt_log "pg_regress"
abt_as_postgres make -s -C "$bdir" PG_CONFIG="$pgc" check-regress 2>&1 | tee "$logdir/regress.out"
count_regress regress "$logdir/regress.out"
[ -s "$bdir/regression.diffs" ] && cat "$bdir/regression.diffs"

abt_log "isolation"
abt_as_postgres make -s -C "$bdir" PG_CONFIG="$pgc" check-isolation 2>&1 | tee "$logdir/isolation.out"
count_regress isolation "$logdir/isolation.out"
[ -s "$bdir/output_iso/regression.diffs" ] && cat "$bdir/output_iso/regression.diffs"

abt_log "pgTAP"
abt_as_postgres createdb abtree_pgtap &&
	abt_as_postgres psql -Xq -d abtree_pgtap -c 'CREATE EXTENSION pgtap'
abt_as_postgres pg_prove -d abtree_pgtap "$bdir"/test/pgtap/*.sql 2>&1 | tee "$logdir/pgtap.out"
count_prove pgtap "$logdir/pgtap.out" "${PIPESTATUS[0]}"

if [ ${#failures[@]} -gt 0 ]; then
	abt_cluster_log_tail 40
fi
abt_cluster_stop

abt_log "TAP (PostgreSQL::Test::Cluster)"
# TAP 015 fills a tablespace on a small file system: a 4 MB tmpfs, passed in
# ABTREE_TEST_SMALL_FS (the test skips itself, saying so, if it cannot be mounted).
smallfs=$(mktemp -d /tmp/abtree-smallfs.XXXXXX)
if mount -t tmpfs -o size=4m,mode=0700 abtree-smallfs "$smallfs" &&
	chown postgres:postgres "$smallfs"; then
	smallfs_env=$smallfs
else
	smallfs_env=
fi
abt_as_postgres env ABTREE_TEST_SMALL_FS="$smallfs_env" \
	make -s -C "$bdir" PG_CONFIG="$pgc" check-tap 2>&1 | tee "$logdir/tap.out"
rc=${PIPESTATUS[0]}
umount "$smallfs" 2>/dev/null
rmdir "$smallfs"
count_prove tap "$logdir/tap.out" "$rc"
# The server logs of the failing files only: tmp_check/log/<file>_<node>.log
for t in $(grep -Eo '^[^ ]+\.pl +\(Wstat' "$logdir/tap.out" | awk '{print $1}'); do
	for f in "$bdir/tmp_check/log/$(basename "$t" .pl)"_*.log; do
		[ -f "$f" ] || continue
		echo "---- last 25 lines of $f"
		tail -n 25 "$f"
	done
done

# Reliability suites (test/RELIABILITY.md): crash cycles, a standby with
# wal_consistency_checking, sqlsmith.  Each prints TAP; their figures (and
# those of any TAP suite that writes some) go to test/results/, which
# test/reliability-report turns into test/RELIABILITY.md.
export ABTREE_FIGURES_DIR=$bdir/figures
for suite in "stress_crash stress.py --cycles 8" "stress_standby stress.py --standby --cycles 4" \
	"sqlsmith sqlsmith.py --queries 2000" \
	"interleave interleave.py --seed 5 --steps 600 --no-crash" \
	"differential differential.py --seed 7 --queries 1500" \
	"chll_fuzz chll_fuzz.py --seed 3 --mutations 10000" \
	"interleave_checksums interleave.py --seed 101 --steps 600 --checksums"; do
	set -- $suite
	abt_log "reliability: $*"
	(cd /tmp && abt_as_postgres /usr/bin/python3 "$bdir/test/stress/$2" "${@:3}" \
		--bindir "$("$pgc" --bindir)" --figures-dir "$ABTREE_FIGURES_DIR") 2>&1 | tee "$logdir/$1.out"
	rc=${PIPESTATUS[0]}
	bad=$(grep -c '^not ok' "$logdir/$1.out")
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	count "$1" "$(grep -c '^ok' "$logdir/$1.out")" "$bad"
done
# Citus (issue 23): a coordinator and two workers.  Citus is built once
# from ../shared/vendor into a cache (scripts/citus.sh); where the archive is
# missing, or Citus does not support this PostgreSQL, the suite is skipped
# and says why.
abt_log "Citus: building or reusing Citus for $("$pgc" --version)"
citus=$(bash "$ABT_ROOT/scripts/citus.sh" "$pgc" | tail -n 1)
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 3 ]; then
	echo "citus: SKIPPED (${citus#skip: })"
elif [ "$rc" -ne 0 ]; then
	count citus_build 0 1
else
	abt_log "reliability: citus.py"
	(cd /tmp && abt_as_postgres /usr/bin/python3 "$bdir/test/stress/citus.py" \
		--bindir "$("$pgc" --bindir)") 2>&1 | tee "$logdir/citus.out"
	rc=${PIPESTATUS[0]}
	bad=$(grep -c '^not ok' "$logdir/citus.out")
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	count citus "$(grep -c '^ok' "$logdir/citus.out")" "$bad"
fi
if ls "$ABTREE_FIGURES_DIR"/*.txt >/dev/null 2>&1; then
	rm -f "$ABT_ROOT"/test/results/*.pg"$pg".txt "$ABT_ROOT"/test/results/*.pg"$pg".errors.txt
	mkdir -p "$ABT_ROOT/test/results" && cp "$ABTREE_FIGURES_DIR"/*.txt "$ABT_ROOT/test/results/"
	echo "figures in test/results/; test/reliability-report writes test/RELIABILITY.md"
fi

finish
