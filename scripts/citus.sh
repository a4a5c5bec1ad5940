#!/usr/bin/env bash
# Build Citus from the vendored source archive once into a cache, and install
# it into a PostgreSQL (the Citus suite's coordinator and workers load it).
#
#   bash scripts/citus.sh PG_CONFIG      prints the installed citus.so on its last line,
#                                        or "skip: REASON" and exits 3 when it cannot
#
# Citus is not a Debian package.  Its source is looked for in
# $ABTREE_VENDOR_DIR, then ../shared/vendor next to the checkout:
# citus-<version>.tar.gz, plus citus-<version>-pg15.20.patch when present
# (Debian's 15.20 exports have_createdb_privilege, which Citus 13.2.2 also
# defines).  Citus 13.2 supports PostgreSQL 15 to 17: on another major
# version this skips.  Cache: $ABTREE_CITUS_CACHE (default
# /var/cache/abtree/citus-pgMAJOR); remove it to rebuild.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
pgc=${1:?usage: citus.sh PG_CONFIG}
version=13.2.2
major=$("$pgc" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
log() { echo "citus: $*" >&2; }
skip() { echo "skip: $*"; exit 3; }

case $major in 15 | 16 | 17) ;; *) skip "Citus $version supports PostgreSQL 15 to 17, not $major" ;; esac

vendor=
for d in "${ABTREE_VENDOR_DIR:-}" "$here/../../shared/vendor"; do
	if [ -n "$d" ] && [ -f "$d/citus-$version.tar.gz" ]; then
		vendor=$(cd "$d" && pwd)
		break
	fi
done
[ -n "$vendor" ] || skip "no citus-$version.tar.gz in \$ABTREE_VENDOR_DIR or ../shared/vendor"

cache=${ABTREE_CITUS_CACHE:-/var/cache/abtree/citus-pg$major}
src=$cache/citus-$version
stamp_text="citus $version $("$pgc" --version) --without-libcurl"
libdir=$("$pgc" --pkglibdir)

if [ "$(cat "$cache/.abtree-stamp" 2>/dev/null)" != "$stamp_text" ]; then
	bash "$here/setup.sh" --citus >&2
	rm -rf "$cache"
	mkdir -p "$cache"
	log "unpacking $vendor/citus-$version.tar.gz"
	tar -C "$cache" -xzf "$vendor/citus-$version.tar.gz"
	patch=$vendor/citus-$version-pg15.20.patch
	if [ "$major" = 15 ] && [ -f "$patch" ] &&
		grep -q have_createdb_privilege "$("$pgc" --includedir-server)/commands/dbcommands.h"; then
		log "applying $(basename "$patch")"
		patch -s -d "$src" -p1 <"$patch"
	fi
	log "configure --without-libcurl"
	(cd "$src" && ./configure PG_CONFIG="$pgc" --without-libcurl >"$cache/configure.log" 2>&1) ||
		{ tail -n 30 "$cache/configure.log" >&2; exit 1; }
	log "building (about 2 minutes on 2 cores)"
	make -C "$src" -j"$(nproc)" -s >"$cache/build.log" 2>&1 || { tail -n 40 "$cache/build.log" >&2; exit 1; }
	echo "$stamp_text" >"$cache/.abtree-stamp"
fi

# Installing is cheap; do it every time, since a reinstall of the PostgreSQL
# packages (or a fresh machine with a restored cache) drops the files.
if ! cmp -s "$src/src/backend/distributed/citus.so" "$libdir/citus.so"; then
	log "installing into $libdir"
	make -C "$src" -s install >>"$cache/build.log" 2>&1 || { tail -n 20 "$cache/build.log" >&2; exit 1; }
fi
echo "$libdir/citus.so"
