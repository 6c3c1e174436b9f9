#!/usr/bin/env bash
# Fetches Debian's kernel image and headers packages for the test guest
# and extracts them into a cache directory, without installing anything
# over the host's own kernel.  Prints the directory (the root of the
# extracted packages) on stdout.
#
#   tests/guest/fetch-kernel.sh [KVER]
#
# KVER (or $TOCHAIN_KVER) is a Debian kernel ABI name such as
# 6.1.0-57-amd64; by default the one linux-image-amd64 depends on.
# Cache: $TOCHAIN_CACHE/kernel/KVER (default /var/cache/tochain, or
# ~/.cache/tochain where that is not writable); a second run finds it
# there and does nothing.
set -euo pipefail

cache=${TOCHAIN_CACHE:-/var/cache/tochain}
if [ -z "${TOCHAIN_CACHE:-}" ] && ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/tochain
fi
kver=${1:-${TOCHAIN_KVER:-}}
if [ -z "$kver" ]; then
	# reuse what is cached when apt knows nothing (offline, no lists)
	kver=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/.*Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -n 1)
	if [ -z "$kver" ]; then
		kver=$(ls "$cache/kernel" 2>/dev/null | sort -V | tail -n 1)
	fi
	[ -n "$kver" ] || { echo "fetch-kernel: cannot tell the kernel version" >&2; exit 1; }
fi
dir=$cache/kernel/$kver
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi

abi=${kver%-amd64}			# 6.1.0-57
series=$(echo "$abi" | cut -d. -f1-2)	# 6.1
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && apt-get download -q "linux-image-$kver" "linux-headers-$kver" \
		"linux-headers-$abi-common" "linux-kbuild-$series" >&2); then
	# apt's lists may name a version the archive no longer has, or we
	# are offline: a cached kernel still does, unless one was asked for
	newest=$(ls -dt "$cache"/kernel/*/.done 2>/dev/null | head -n 1)
	if [ -z "${1:-${TOCHAIN_KVER:-}}" ] && [ -n "$newest" ]; then
		echo "fetch-kernel: cannot download $kver, using the cached $(basename "$(dirname "$newest")")" >&2
		dirname "$newest"
		exit 0
	fi
	echo "fetch-kernel: cannot download the packages of $kver" >&2
	exit 1
fi
mkdir "$tmp/root"
for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$tmp/root"; done
[ -f "$tmp/root/boot/vmlinuz-$kver" ] || { echo "fetch-kernel: no vmlinuz in the packages" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
mv "$tmp/root" "$dir"
touch "$dir/.done"
# keep this one and the one before it (about 500 MB each)
ls -dt "$cache"/kernel/*/ 2>/dev/null | tail -n +3 | while read -r old; do
	rm -rf "$old"
done
echo "$dir"
