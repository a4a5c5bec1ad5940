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

# swap_library DIR SO: stop the cluster of profile_cluster in DIR, install SO as abtree.so, start
# it again.  Stopped first: a library overwritten under running backends crashes them.
swap_library() {
	runuser -u postgres -- $PG/pg_ctl -D "$1/data" -w stop -m fast >/dev/null
	cp "$2" "$($PG/pg_config --pkglibdir)/abtree.so"
	runuser -u postgres -- $PG/pg_ctl -D "$1/data" -l "$1/log" -w start >/dev/null
}

# perf_statement DIR SQL: run SQL in a backend of its own and print the top functions by self
# time (perf at 999 Hz on that backend for the whole statement; CALLERS=1 adds call graphs).
perf_statement() {
	local dir=$1 sql=$2 psqlpid pid perfpid
	$P -c "$sql" &
	psqlpid=$!
	sleep 0.3
	pid=$($P -tAc "SELECT pid FROM pg_stat_activity WHERE query = \$q\$$sql\$q\$ AND pid <> pg_backend_pid()")
	perf record -F 999 -g -p "$pid" -o "$dir/perf.data" >/dev/null 2>&1 &
	perfpid=$!
	wait $psqlpid
	kill -INT $perfpid 2>/dev/null
	wait $perfpid 2>/dev/null
	perf report -i "$dir/perf.data" --no-children --percent-limit 0.7 --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9]'
	if [ -n "$CALLERS" ]; then
		perf report -i "$dir/perf.data" --children --percent-limit 3 --stdio -g caller,0.5,callee \
			--max-stack 12 2>/dev/null | head -300
	fi
}
