# Shared shell helpers for scripts/*.sh: building the extension and running
# throwaway clusters as the postgres user.  Source it; it defines functions only.
#
# Why the copy: initdb, pg_regress and the TAP suites must run as postgres,
# and they write next to the build (results/, tmp_check/).  The checkout stays
# root's (git refuses a checkout owned by someone else), so every build
# happens in a copy of the tree owned by postgres, outside the checkout.

ABT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ABT_BUILD_ROOT=${ABT_BUILD_ROOT:-/var/tmp/abtree-build/$(printf %s "$ABT_ROOT" | md5sum | cut -c1-8)}
ABT_PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config

abt_log() { printf '\n== %s\n' "$*"; }

# abt_serialize: hold a machine-wide lock until the calling script exits.
# Builds install into PostgreSQL's shared directories, so two runs (two
# checkouts, or a developer and a helper) must not interleave.
abt_serialize() {
	exec 9>/var/lock/abtree-build.lock
	if ! flock -n 9; then
		echo "waiting for another abtree build or test run to finish..." >&2
		flock 9
	fi
}

abt_require_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "$(basename "$0"): run as root (it installs packages and the extension)" >&2
		exit 1
	fi
}

# abt_as_postgres CMD...: run CMD as postgres with the libpq variables we set.
abt_as_postgres() {
	runuser -u postgres -- env PATH="$PATH" PGHOST="${PGHOST:-}" PGPORT="${PGPORT:-}" \
		PGUSER=postgres PGDATABASE="${PGDATABASE:-postgres}" "$@"
}

# abt_build FLAVOR PG_CONFIG [MAKE ARGS...]: copy the tree to
# $ABT_BUILD_ROOT/FLAVOR, build it there as postgres, install it as root.
# Prints nothing but make's output; the build dir is in $ABT_BUILD_DIR.
abt_build() {
	local flavor=$1 pgc=$2
	shift 2
	ABT_BUILD_DIR=$ABT_BUILD_ROOT/$flavor
	rm -rf "$ABT_BUILD_DIR"
	mkdir -p "$ABT_BUILD_DIR"
	tar -C "$ABT_ROOT" --exclude=./.git --exclude=./build -cf - . | tar -C "$ABT_BUILD_DIR" -xf -
	chown -R postgres:postgres "$ABT_BUILD_ROOT"
	chmod 755 "$(dirname "$ABT_BUILD_ROOT")" "$ABT_BUILD_ROOT"
	runuser -u postgres -- make -s -C "$ABT_BUILD_DIR" PG_CONFIG="$pgc" "$@" &&
		make -s -C "$ABT_BUILD_DIR" PG_CONFIG="$pgc" "$@" install >/dev/null
}

# abt_free_port: a TCP port nobody listens on right now.
abt_free_port() {
	perl -MIO::Socket::INET -e \
		'print IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0)->sockport, "\n"'
}

# abt_cluster_start PG_CONFIG [postgresql.conf lines...]: initdb and start a
# throwaway cluster in a new temporary directory, owned by postgres, listening
# on a free port on localhost and on a socket in that directory.  Exports
# PGHOST and PGPORT; the directory is in $ABT_CLUSTER_DIR.
abt_cluster_start() {
	local pgc=$1 bindir line
	shift
	bindir=$("$pgc" --bindir)
	ABT_CLUSTER_DIR=$(mktemp -d /tmp/abtree-cluster.XXXXXX)
	ABT_CLUSTER_BINDIR=$bindir
	chown postgres:postgres "$ABT_CLUSTER_DIR"
	PGPORT=$(abt_free_port)
	PGHOST=$ABT_CLUSTER_DIR
	export PGHOST PGPORT
	runuser -u postgres -- "$bindir/initdb" -D "$ABT_CLUSTER_DIR/data" -U postgres \
		--auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >"$ABT_CLUSTER_DIR/initdb.log" 2>&1 ||
		{ cat "$ABT_CLUSTER_DIR/initdb.log"; return 1; }
	{
		echo "port = $PGPORT"
		echo "listen_addresses = 'localhost'"
		echo "unix_socket_directories = '$ABT_CLUSTER_DIR'"
		echo "shared_preload_libraries = 'abtree'"
		echo "fsync = off"
		for line in "$@"; do echo "$line"; done
	} >>"$ABT_CLUSTER_DIR/data/postgresql.conf"
	runuser -u postgres -- "$bindir/pg_ctl" -D "$ABT_CLUSTER_DIR/data" -l "$ABT_CLUSTER_DIR/server.log" \
		-w -t 60 start >/dev/null ||
		{ tail -n 30 "$ABT_CLUSTER_DIR/server.log"; return 1; }
}

# abt_cluster_log_tail [N]: the last N lines of the server log.
abt_cluster_log_tail() {
	[ -n "${ABT_CLUSTER_DIR:-}" ] && [ -f "$ABT_CLUSTER_DIR/server.log" ] || return 0
	echo "---- last ${1:-40} lines of $ABT_CLUSTER_DIR/server.log"
	tail -n "${1:-40}" "$ABT_CLUSTER_DIR/server.log"
}

# abt_cluster_stop: stop the cluster and remove its directory.  Safe to call
# twice and from an EXIT trap.
abt_cluster_stop() {
	[ -n "${ABT_CLUSTER_DIR:-}" ] || return 0
	if [ -f "$ABT_CLUSTER_DIR/data/postmaster.pid" ]; then
		runuser -u postgres -- "$ABT_CLUSTER_BINDIR/pg_ctl" -D "$ABT_CLUSTER_DIR/data" \
			-m fast -w -t 60 stop >/dev/null 2>&1 ||
			runuser -u postgres -- "$ABT_CLUSTER_BINDIR/pg_ctl" -D "$ABT_CLUSTER_DIR/data" \
				-m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$ABT_CLUSTER_DIR"
	ABT_CLUSTER_DIR=
}
