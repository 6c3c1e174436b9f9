#!/usr/bin/env bash
# Makes `apt-get source` work: when no apt source list has deb-src entries,
# adds /etc/apt/sources.list.d/tochain-src.sources mirroring the deb
# entries of Debian's own archives (those signed by its keyring) and runs
# apt-get update.  Idempotent, safe to run concurrently (a lock), needs
# root only when it has something to add.  Used by make deps
# (scripts/deps.sh), qemu-patches/build-qemu.sh and the tests that fetch
# a source package (218).
#
# Exit status: 0 deb-src entries are there, 1 they are not and could not
# be added (not root, no Debian deb entries to mirror, apt-get update).
set -euo pipefail

list=/etc/apt/sources.list.d/tochain-src.sources

have_src() {
	grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/
}

have_src && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deb-src: no deb-src entries in the apt sources, and not root to add them" >&2
	exit 1
fi
exec 9>/run/lock/tochain-deb-src.lock
flock 9
have_src && exit 0
echo "deb-src: adding deb-src entries mirroring the deb ones ($list)" >&2
: >"$list.tmp"
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	grep -q debian-archive-keyring "$f" || continue
	# one stanza per paragraph; its Types line becomes deb-src
	awk 'BEGIN { RS = ""; ORS = "\n\n" }
	     /Types:[^\n]*deb/ { sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >>"$list.tmp"
done
if [ ! -s "$list.tmp" ]; then
	rm -f "$list.tmp"
	echo "deb-src: no entries of Debian's archive (deb822 .sources) to mirror" >&2
	exit 1
fi
mv "$list.tmp" "$list"
if ! apt-get update -qq >&2; then
	echo "deb-src: apt-get update failed after adding $list" >&2
	exit 1
fi
