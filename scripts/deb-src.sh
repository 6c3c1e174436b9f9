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
# be added (not root, no Debian deb entries to mirror, apt-get update:
# then the file is removed again, so that the next run tries anew).
# For its test (tests/integration/061_deb_src.sh): TOCHAIN_APT_ETC stands
# for /etc/apt, TOCHAIN_APT_UPDATE for "apt-get update -qq".
set -euo pipefail

etc=${TOCHAIN_APT_ETC:-/etc/apt}
update=${TOCHAIN_APT_UPDATE:-apt-get update -qq}
list=$etc/sources.list.d/tochain-src.sources

have_src() {
	grep -rqs '^Types:.*deb-src\|^deb-src ' "$etc/sources.list" "$etc/sources.list.d/"
}

have_src && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deb-src: no deb-src entries in the apt sources, and not root to add them" >&2
	exit 1
fi
exec 9>/run/lock/tochain-deb-src.lock
flock 9
have_src && exit 0
: >"$list.tmp"
for f in "$etc"/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	# one stanza per paragraph: those of Debian's archive (signed by its
	# keyring) with deb in their Types, which becomes deb-src
	awk 'BEGIN { RS = ""; ORS = "\n\n" }
	     /Types:[^\n]*deb/ && /debian-archive-keyring/ {
		sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >>"$list.tmp"
done
if [ ! -s "$list.tmp" ]; then
	rm -f "$list.tmp"
	echo "deb-src: no entries of Debian's archive (deb822 .sources) to mirror" >&2
	exit 1
fi
echo "deb-src: adding deb-src entries mirroring the deb ones ($list)" >&2
mv "$list.tmp" "$list"
if ! $update >&2; then
	rm -f "$list"
	echo "deb-src: apt-get update failed with the deb-src entries; $list removed again" >&2
	exit 1
fi
