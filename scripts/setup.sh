#!/usr/bin/env bash
# Install what building, testing and benchmarking abtree needs on Debian bookworm.
# Run as root.  Idempotent: when every package is present it only checks and exits.
#
#   bash scripts/setup.sh            the PostgreSQL 15 toolchain and test tools
#   bash scripts/setup.sh --pg18     also what building PostgreSQL 18 from source needs
#   bash scripts/setup.sh --citus    also what building Citus from source needs
set -euo pipefail

PG_MAJOR=15
pkgs=(
	"postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" "postgresql-contrib"
	"postgresql-$PG_MAJOR-pgtap" libtap-parser-sourcehandler-pgtap-perl
	libipc-run-perl liburing-dev
	make gcc cppcheck clang-14 util-linux procps gdb
	python3-psycopg2 python3-matplotlib python3-scipy sqlsmith
)
# Building PostgreSQL 18 and pgTAP from Debian source packages.
pg18_pkgs=(bison flex libreadline-dev zlib1g-dev libicu-dev pkg-config
	dpkg-dev bzip2 xz-utils ca-certificates)

# Building Citus from the vendored source (scripts/citus.sh).
citus_pkgs=(liblz4-dev libzstd-dev libkrb5-dev libselinux1-dev libxslt1-dev
	libpam0g-dev libssl-dev patch)

case "${1:-}" in
	--pg18) pkgs+=("${pg18_pkgs[@]}") ;;
	--citus) pkgs+=("${citus_pkgs[@]}") ;;
esac

if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi

missing=()
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all ${#pkgs[@]} packages present"
	exit 0
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's postgresql-common creates a default cluster 15/main on first install;
# we never use it, and it must not hold port 5432 or memory.
if command -v pg_ctlcluster >/dev/null && pg_lsclusters -h 2>/dev/null | grep -q online; then
	pg_lsclusters -h | awk '$4=="online"{print $1, $2}' | while read -r v c; do
		pg_ctlcluster "$v" "$c" stop || true
	done
fi
echo "setup: done"
