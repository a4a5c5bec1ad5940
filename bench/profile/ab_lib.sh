# Shared by the A/B scripts of bench/profile (exact_set_ab.sh,
# standby_path_ab.sh): psql on the throwaway cluster of /tmp/dev/pgup.sh
# (port 55432, socket in /tmp/dev), and ab_start BUILD [SETTING=VALUE...]:
# install the release build in /tmp/dev/ab/BUILD into PostgreSQL 15, start
# a fresh cluster with 1 GB shared_buffers, 10 GB max_wal_size,
# synchronous_commit off, autovacuum off and the extra settings, and
# create the extension.
P="psql -X -qAt -h /tmp/dev -p 55432 -U postgres"
ab_start() {
	local b=$1 set
	shift
	make -s -C /tmp/dev/ab/$b PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config install >/dev/null
	/tmp/dev/pgup.sh
	for set in shared_buffers=1GB max_wal_size=10GB synchronous_commit=off autovacuum=off "$@"; do
		$P -c "ALTER SYSTEM SET ${set%%=*} = '${set#*=}'" >/dev/null
	done
	runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D /tmp/dev/pgdata -l /tmp/dev/pg.log restart -w >/dev/null
	$P -c "CREATE EXTENSION abtree" >/dev/null
}
