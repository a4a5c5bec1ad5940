# Sourced by the profile scripts: profile_cluster DIR PORT [postgresql.conf lines...]
# starts a throwaway PostgreSQL 15 cluster (PGBIN: another bin directory, e.g. a release build
# of 18 in /var/cache/abtree/pg18-release/install/bin) in DIR (removed first) with abtree preloaded,
# 1 GB shared_buffers and fsync off, and sets PG (the bin directory) and P (psql on it).
PG=${PGBIN:-/usr/lib/postgresql/15/bin}
profile_cluster() {
	local dir=$1 port=$2
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	chown postgres "$dir"
	runuser -u postgres -- $PG/initdb -D "$dir/data" -U postgres --auth=trust --no-sync >/dev/null
	{
		echo "port = $port"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "shared_preload_libraries = 'abtree'"
		echo "shared_buffers = 1GB"
		echo "autovacuum = off"
		echo "fsync = off"
		printf '%s\n' "$@"
	} >>"$dir/data/postgresql.conf"
	runuser -u postgres -- $PG/pg_ctl -D "$dir/data" -l "$dir/log" -w start >/dev/null
	P="runuser -u postgres -- $PG/psql -X -q -h $dir -p $port -d postgres"
}
