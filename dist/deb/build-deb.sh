#!/usr/bin/env bash
# Assembles the Debian packages from staged trees (dist/module.mk, `make deb`):
#
#   dist/deb/build-deb.sh OUT VERSION
#
# OUT/tochain/ is the tochain package's tree (make install-files PREFIX=/usr);
# the patched QEMU (qemu-patches/build-qemu.sh's cache) becomes tochain-qemu
# when it is there.  Writes OUT/*.deb with dpkg-deb; takes seconds.
set -euo pipefail
out=$(realpath "$1") version=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
arch=$(dpkg --print-architecture)
log() { echo "deb: $*" >&2; }

# A revision from git, so that a newer tree is a newer package.
if rev=$(git -C "$top" log -1 --format='%cd.%h' --date=format:%Y%m%d 2>/dev/null); then
	version="$version+git$rev"
fi

# $1 package tree; prints the shlibs:Depends of every ELF file in it
shlibs() {
	local root=$1 tmp files
	mapfile -t files < <(find "$root" -type f -perm -u+x -o -type f -name '*.so*' | sort |
		while read -r f; do head -c4 "$f" | grep -q ELF && echo "$f"; done)
	[ ${#files[@]} -gt 0 ] || return 0
	tmp=$(mktemp -d)
	mkdir "$tmp/debian"
	printf 'Source: tochain\n\nPackage: tochain\nArchitecture: any\n' > "$tmp/debian/control"
	(cd "$tmp" && dpkg-shlibdeps -O -S"$root" "${files[@]}" 2>"$tmp/err") |
		sed -n 's/^shlibs:Depends=//p'
	grep -v 'should already be installed in' "$tmp/err" >&2 || true
	rm -rf "$tmp"
}

# $1 package tree, $2 control template, extra sed expressions...
control() {
	local root=$1 tpl=$2 deps size; shift 2
	deps=$(shlibs "$root")
	[ -n "$deps" ] || { log "$root: dpkg-shlibdeps found no dependencies"; return 1; }
	size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
	mkdir -p "$root/DEBIAN"
	sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@SIZE@|$size|" \
		-e "s|@SHLIBS@|$deps|" "$@" "$tpl" > "$root/DEBIAN/control"
}

build() {
	local root=$1 name=$2
	find "$root" -type d -exec chmod 0755 {} +
	dpkg-deb --root-owner-group -Zxz -z3 --build "$root" "$out/${name}_${version}_$arch.deb" >/dev/null
	log "$out/${name}_${version}_$arch.deb"
}

rm -f "$out"/*.deb

# --- tochain ---------------------------------------------------------------
root=$out/tochain
[ -x "$root/usr/sbin/tochain-sched" ] || { log "$root: not staged (make deb)"; exit 1; }
gzip -9nf "$root"/usr/share/man/man*/*.[158]
install -d "$root/usr/share/doc/tochain"
install -m 0644 "$here/copyright" "$root/usr/share/doc/tochain/copyright"
install -m 0644 "$top/dist/README.md" "$root/usr/share/doc/tochain/README.md"
control "$root" "$here/tochain.control.in"
for s in postinst prerm postrm; do install -m 0755 "$here/tochain.$s" "$root/DEBIAN/$s"; done
(cd "$root" && find etc -type f | sed 's|^|/|' | sort) > "$root/DEBIAN/conffiles"
build "$root" tochain

# --- tochain-qemu: the patched QEMU, when built ---------------------------
# DEB_QEMU=0: never (the install test); 1: make built it first; unset: if built
qdir=
if [ "${DEB_QEMU:-}" != 0 ] && key=$("$top/qemu-patches/build-qemu.sh" --print-key 2>/dev/null) &&
   [ -x "${TOCHAIN_QEMU_CACHE:-/var/cache/tochain/qemu}/$key/bin/qemu-system-x86_64" ]; then
	qdir=${TOCHAIN_QEMU_CACHE:-/var/cache/tochain/qemu}/$key
fi
if [ -z "$qdir" ]; then
	log "no patched QEMU built for this series: no tochain-qemu package (make qemu, or make deb DEB_QEMU=1)"
	exit 0
fi
root=$out/tochain-qemu
rm -rf "$root"
install -d "$root/usr/lib/tochain/qemu/bin" "$root/usr/share/doc/tochain-qemu"
install -m 0755 "$qdir/bin/qemu-system-x86_64" "$qdir/bin/ivshmem-server" "$root/usr/lib/tochain/qemu/bin/"
# share/qemu: links to Debian's firmware packages, found by the relocatable binary
cp -a "$qdir/share" "$root/usr/lib/tochain/qemu/"
install -m 0644 "$here/copyright" "$root/usr/share/doc/tochain-qemu/copyright"
[ -f "$qdir/series.log" ] && install -m 0644 "$qdir/series.log" "$root/usr/share/doc/tochain-qemu/"
qv=$(sed -n 's/^QEMU_SOURCE_VERSION=//p' "$qdir/env" 2>/dev/null || true)
control "$root" "$here/tochain-qemu.control.in" -e "s|@QEMU_VERSION@|${qv:-Debian 12}|"
build "$root" tochain-qemu
