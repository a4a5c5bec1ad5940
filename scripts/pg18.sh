#!/usr/bin/env bash
# Build an assert-enabled PostgreSQL 18 (and add pgTAP to it) from Debian's
# source package into a cache directory, once.  Later runs find the stamp and reuse it.
#
#   bash scripts/pg18.sh            the assert build the tests use; prints its prefix last
#   bash scripts/pg18.sh --release  a release build with io_uring (--with-liburing) for
#                                   benchmarks (bench/, issue 21), in its own cache
#
# Cache: $ABTREE_PG18_CACHE (default /var/cache/abtree/pg18, or pg18-release).  Remove it
# to rebuild.
# PostgreSQL comes from Debian sid's postgresql-18, fetched with a private apt configuration that leaves the system's
# apt lists untouched.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --release ]; then
	cache=${ABTREE_PG18_CACHE:-/var/cache/abtree/pg18-release}
	configure_flags=(--enable-debug --enable-tap-tests --with-icu --with-liburing)
	cflags='-O2 -g'
else
	cache=${ABTREE_PG18_CACHE:-/var/cache/abtree/pg18}
	configure_flags=(--enable-cassert --enable-debug --enable-tap-tests --with-icu)
	cflags='-O1 -g'
fi
prefix=$cache/install
stamp_text="postgresql-18 ${configure_flags[*]} pgtap-sql v3"

if [ -x "$prefix/bin/pg_config" ] && [ "$(cat "$prefix/.abtree-stamp" 2>/dev/null)" = "$stamp_text" ]; then
	echo "pg18: reusing $("$prefix/bin/pg_config" --version) in $prefix" >&2
	echo "$prefix"
	exit 0
fi

bash "$here/setup.sh" --pg18 >&2

log() { echo "pg18: $*" >&2; }
rm -rf "$prefix" "$cache/src"
mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial" "$cache/src"

# A private apt setup with deb-src lines only, so that `apt-get source` works
# without touching /etc/apt or the system's package lists.
cat >"$cache/apt/sources.list" <<SRC
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
SRC
apt_opts=(-o "Dir::Etc::sourcelist=$cache/apt/sources.list" -o "Dir::Etc::sourceparts=-"
	-o "Dir::State::lists=$cache/apt/lists" -o "Dir::Cache=$cache/apt/cache"
	-o "APT::Sandbox::User=root")
log "fetching source packages"
apt-get "${apt_opts[@]}" -qq update
(cd "$cache/src" && apt-get "${apt_opts[@]}" -qq source --download-only postgresql-18/sid >&2)

cd "$cache/src"
tarball=$(ls postgresql-18_*.orig.tar.* | head -n 1)
log "unpacking $tarball"
tar xf "$tarball"
srcdir=$(ls -d postgresql-18*/ | head -n 1)
cd "$srcdir"

log "configure ${configure_flags[*]}"
./configure --prefix="$prefix" "${configure_flags[@]}" CFLAGS="$cflags" >"$cache/configure.log" 2>&1 ||
	{ tail -n 30 "$cache/configure.log" >&2; exit 1; }
log "building (several minutes on 2 cores)"
make -j"$(nproc)" -s world-bin >"$cache/build.log" 2>&1 || { tail -n 40 "$cache/build.log" >&2; exit 1; }
make -s install-world-bin >>"$cache/build.log" 2>&1
# Not part of install-world-bin, but PGXS installcheck needs them.
make -s -C src/test/perl install >>"$cache/build.log" 2>&1
make -s -C src/test/isolation install >>"$cache/build.log" 2>&1

# pgTAP is plain SQL with no shared library, so the files of Debian's
# postgresql-15-pgtap serve PostgreSQL 18 as well (Debian ships no pgTAP
# for 18 in bookworm, and bookworm's pgtap source package is not always
# fetchable).
log "installing pgTAP's SQL files"
cp /usr/share/postgresql/15/extension/pgtap* "$("$prefix/bin/pg_config" --sharedir)/extension/"

echo "$stamp_text" >"$prefix/.abtree-stamp"
log "installed $("$prefix/bin/pg_config" --version) in $prefix"
echo "$prefix"
