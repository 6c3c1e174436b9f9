#!/usr/bin/env bash
# Builds qemu-system-x86_64 (and QEMU's ivshmem qtest) from Debian's source
# package of the installed QEMU, with Debian's patches and then the series in
# this folder applied, and prints the directory holding the results:
#
#   qemu-patches/build-qemu.sh [--print-key]
#
# The result lives in $TOCHAIN_QEMU_CACHE (/var/cache/tochain/qemu) under
# <source version>-<hash of the series>/, with
#   bin/qemu-system-x86_64  the patched emulator (KVM and TCG)
#   bin/ivshmem-test        QEMU's ivshmem qtest built from the same tree
#   bin/ivshmem-server      QEMU's ivshmem server (contrib/)
#   share/qemu/             links to the firmware of Debian's qemu-system-data,
#                           seabios and ipxe-qemu (the source has none), found
#                           there by the relocatable binary without -L
#   env                     QEMU=<the binary>, QEMU_SOURCE_VERSION, QEMU_SERIES
#   series.log              the commits applied on top of Debian's tree
# A second run with the same source version and series prints the same
# directory at once.  One unpacked tree and meson build per source version
# (src-<version>/) is kept too, so a changed series rebuilds in seconds:
# the tree is reset to Debian's state and the series applied with git am,
# which touches only the files the series changes.
#
# Exit status: 0 built (or cached), 3 the source package cannot be
# fetched (no Debian archive reachable), 1 anything else.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${TOCHAIN_QEMU_CACHE:-/var/cache/tochain/qemu}
jobs=${QEMU_JOBS:-$(nproc)}

log() { echo "build-qemu: $*" >&2; }
die() { log "$*"; exit 1; }

srcpkg=$(dpkg-query -W -f='${source:Package}' qemu-system-x86 2>/dev/null) ||
	die "qemu-system-x86 is not installed (make deps)"
srcpkg=${srcpkg:-qemu}
srcver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86)
upver=${srcver#*:}          # 7.2+dfsg-7+deb12u18
upver=${upver%-*}           # 7.2+dfsg
# the series: NNNN-*.patch in order, less the cover letter (0000-)
series=$(cd "$here" && ls [0-9][0-9][0-9][0-9]-*.patch 2>/dev/null |
	grep -v '^0000-' | sort || true)
hash=$( (cd "$here" && cat $series /dev/null) | sha256sum | cut -c1-12)
key=${srcver//:/_}-$hash

if [ "${1:-}" = --print-key ]; then echo "$key"; exit 0; fi

out=$cache/$key
if [ -f "$out/env" ]; then echo "$out"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -f "$out/env" ]; then echo "$out"; exit 0; fi

# --- Debian's source package --------------------------------------------

src=$cache/src-${srcver//:/_}
if [ ! -f "$src/.unpacked" ]; then
	"$here/../scripts/deb-src.sh" || die "no deb-src entries for apt-get source"
	rm -rf "$src" && mkdir -p "$src/dl"
	log "fetching $srcpkg $srcver"
	if ! (cd "$src/dl" && apt-get source -qq --download-only \
		"$srcpkg=$srcver") >&2; then
		log "cannot fetch the source of $srcpkg $srcver from the archive"
		exit 3
	fi
	log "unpacking (dpkg-source applies Debian's patches)"
	dpkg-source --no-check -x "$src"/dl/*.dsc "$src/tree" >&2
	git -C "$src/tree" init -q
	git -C "$src/tree" -c user.name=build-qemu -c user.email=build-qemu@localhost \
		add -A -f . >&2
	git -C "$src/tree" -c user.name=build-qemu -c user.email=build-qemu@localhost \
		commit -qm "Debian $srcpkg $srcver with its patches" >&2
	git -C "$src/tree" tag debian
	touch "$src/.unpacked"
fi

# --- our series ----------------------------------------------------------
tree=$src/tree
git -C "$tree" am --abort >/dev/null 2>&1 || true
if [ "$(git -C "$tree" rev-parse HEAD)" != "$(git -C "$tree" rev-parse debian)" ] ||
	! git -C "$tree" diff --quiet; then
	git -C "$tree" checkout -q -f --detach debian
fi
git -C "$tree" clean -qfd -e build
for p in $series; do
	log "applying $p"
	git -C "$tree" -c user.name=build-qemu -c user.email=build-qemu@localhost \
		am -q --keep-cr "$here/$p" >&2 || die "$p does not apply to $srcver"
done

# --- configure and build -------------------------------------------------
bld=$tree/build
if [ ! -f "$bld/build.ninja" ]; then
	log "configuring"
	rm -rf "$bld" && mkdir -p "$bld"
	(cd "$bld" && ../configure --target-list=x86_64-softmmu \
		--enable-kvm --enable-tcg --enable-fdt=system \
		--disable-docs --disable-werror --disable-install-blobs \
		--disable-user --disable-guest-agent \
		--disable-sdl --disable-gtk --disable-vnc --disable-spice \
		--disable-opengl --disable-virglrenderer --disable-curses \
		--disable-slirp --disable-capstone --disable-xen \
		--disable-debug-info) >&2
fi
start=$(date +%s)
log "building with $jobs jobs"
nice ninja -C "$bld" -j "$jobs" qemu-system-x86_64 tests/qtest/ivshmem-test \
	contrib/ivshmem-server/ivshmem-server >&2
log "built in $(( $(date +%s) - start )) s"

rm -rf "$out.tmp" && mkdir -p "$out.tmp/bin" "$out.tmp/share/qemu"
cp "$bld/qemu-system-x86_64" "$bld/tests/qtest/ivshmem-test" \
	"$bld/contrib/ivshmem-server/ivshmem-server" "$out.tmp/bin/"
# QEMU looks for firmware in <binary>/../share/qemu; the first package
# listed wins where names clash (qemu-system-data links to seabios anyway)
for d in /usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu; do
	[ -d "$d" ] || die "$d missing: install qemu-system-data seabios ipxe-qemu"
	for f in "$d"/*; do
		[ -e "$out.tmp/share/qemu/${f##*/}" ] || ln -s "$f" "$out.tmp/share/qemu/"
	done
done
{
	echo "QEMU=$out/bin/qemu-system-x86_64"
	echo "QEMU_SOURCE_VERSION=$srcver"
	echo "QEMU_SERIES=\"$(echo $series)\""
} >"$out.tmp/env"
git -C "$tree" log --oneline debian..HEAD >"$out.tmp/series.log"
rm -rf "$out" && mv "$out.tmp" "$out"
# keep the four newest results of this source version (20 MB each)
ls -dt "$cache/${srcver//:/_}"-*/ 2>/dev/null | tail -n +5 | xargs -r rm -rf
echo "$out"
