#!/usr/bin/env bash
# Builds the test guest: a kernel and an initramfs holding busybox,
# tochain_ivshmem.ko and ivshmem-guest-test, for the guest driver tests.
#
#   tests/guest/build-guest.sh BUILD_DIR [--runtime | --vnf]
#
# --runtime: the guest of the runtime tests (704..): the same initramfs
# plus a second archive with the guest runtime (tochain-run,
# libtochain-preload.so), Debian's dynamically linked busybox as
# /bin/busybox-dyn (its httpd, wget, nc: programs the runtime can be
# preloaded into; fetched once with apt-get download into the cache),
# Debian's python3 with the modules of http.server (tests/guest/guest-pymods.py),
# the shared libraries they need, and tests/guest/rt-init.sh as /init.  Writes
# BUILD_DIR/vm/guest-rt/{kernel,initramfs.cpio}; a test may append one
# more archive (newc) with /guest.sh and data.
#
# --vnf: the runtime guest plus tochain-vnf and its libraries (a VNF
# inside a guest, tochain-vnf --guest), for a guest of 384 MiB or more:
# BUILD_DIR/vm/guest-vnf/{kernel,initramfs.cpio}, built with the runtime
# guest (--runtime builds both); prints that directory.
#
# Needs BUILD_DIR/guest-drivers/tochain_ivshmem.ko and
# BUILD_DIR/vm/ivshmem-guest-test (make builds both).  Writes
# BUILD_DIR/vm/guest/{kernel,initramfs.cpio} and prints that directory.
# The kernel is Debian's (tests/guest/fetch-kernel.sh); the uncompressed PVH
# vmlinux is pulled out of its bzImage once per kernel version and kept
# in the kernel cache, since QEMU boots it directly (about 5 s instead
# of 14 s under TCG); if that fails the bzImage is used.  The initramfs is
# rebuilt only when the kernel version or any input changes, so a second
# run takes well under a second.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: build-guest.sh BUILD_DIR [--runtime | --vnf]}" && pwd)
runtime= vnfimg=
case ${2:-} in
--runtime) runtime=1 ;;
--vnf) runtime=1 vnfimg=1 ;;
'') ;;
*) echo "usage: build-guest.sh BUILD_DIR [--runtime | --vnf]" >&2; exit 2 ;;
esac
ko=$build/guest-drivers/tochain_ivshmem.ko
prog=$build/vm/ivshmem-guest-test
out=$build/vm/guest
for f in "$ko" "$prog"; do
	[ -f "$f" ] || { echo "build-guest: $f missing (run make)" >&2; exit 1; }
done
busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
	echo "build-guest: need a static busybox (Debian package busybox-static)" >&2
	exit 1
fi

kroot=$("$top/tests/guest/fetch-kernel.sh")
kver=$(basename "$kroot")
modver=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
if [ "$modver" != "$kver" ]; then
	# Debian moved to a newer kernel since the module was built
	echo "build-guest: module built for $modver, guest kernel is $kver: rebuilding it" >&2
	rm -f "$ko"
	make -C "$top" BUILD="$build" "$ko" >&2
	modver=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
	[ "$modver" = "$kver" ] || { echo "build-guest: still $modver" >&2; exit 1; }
fi

# The PVH entry point is in the ELF vmlinux inside the bzImage (xz).
pvh=$kroot/vmlinux.pvh
if [ ! -s "$pvh" ]; then
	bz=$kroot/boot/vmlinuz-$kver
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bz" | head -n 1 | cut -d: -f1 || true)
	if [ -n "$off" ]; then
		# xz complains about the bytes after its stream: judge the result
		tail -c +$((off + 1)) "$bz" | xz -dcq >"$pvh.tmp" 2>/dev/null || true
		# XEN_ELFNOTE_PHYS32_ENTRY (18): the PVH entry point
		if readelf -n "$pvh.tmp" 2>/dev/null | grep -q 'type: (0x00000012)'; then
			mv "$pvh.tmp" "$pvh"
		fi
	fi
	rm -f "$pvh.tmp"
fi
if [ -s "$pvh" ]; then kernel=$pvh; else kernel=$kroot/boot/vmlinuz-$kver; fi

key=$( { echo "$kver $kernel"; sha256sum "$ko" "$prog" "$busybox" \
	"$top/tests/guest/init.sh" "$0" | cut -d' ' -f1; } | sha256sum | cut -d' ' -f1)
if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && [ -f "$out/initramfs.cpio" ]; then
	[ -n "$runtime" ] || { echo "$out"; exit 0; }
else
	build_base=1
fi

if [ -n "${build_base:-}" ]; then
	mkdir -p "$out"
	tmp=$(mktemp -d "$out/.root.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp"/{bin,lib,proc,sys,dev,tmp}
	cp "$busybox" "$tmp/bin/busybox"
	cp "$prog" "$tmp/bin/ivshmem-guest-test"
	cp "$ko" "$tmp/lib/tochain_ivshmem.ko"
	cp "$top/tests/guest/init.sh" "$tmp/init"
	chmod 755 "$tmp/init" "$tmp/bin/busybox" "$tmp/bin/ivshmem-guest-test"
	(cd "$tmp" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$out/initramfs.cpio.tmp"
	mv "$out/initramfs.cpio.tmp" "$out/initramfs.cpio"
	ln -sf "$kernel" "$out/kernel"
	echo "$key" >"$out/key"
	rm -rf "$tmp"
fi
[ -n "$runtime" ] || { echo "$out"; exit 0; }

# ---- the runtime guest: the base archive plus a second one ----
run=$build/bin/tochain-run
so=$build/lib/libtochain-preload.so
vnf=$build/bin/tochain-vnf
for f in "$run" "$so" "$vnf"; do
	[ -f "$f" ] || { echo "build-guest: $f missing (make $f)" >&2; exit 1; }
done
cache=${TOCHAIN_CACHE:-/var/cache/tochain}
if [ -z "${TOCHAIN_CACHE:-}" ] && ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/tochain
fi
bbdir=$cache/busybox-dyn
if [ ! -x "$bbdir/bin/busybox" ]; then
	btmp=$(mktemp -d "/tmp/tochain-bb.XXXXXX")
	if ! (cd "$btmp" && apt-get download -q busybox >&2 2>/dev/null) ||
		! dpkg-deb -x "$btmp"/busybox_*.deb "$btmp/root"; then
		rm -rf "$btmp"
		echo "build-guest: cannot download Debian's busybox package" >&2
		exit 1
	fi
	rm -rf "$bbdir"
	mkdir -p "$bbdir/bin"
	cp "$btmp/root/bin/busybox" "$bbdir/bin/busybox"
	rm -rf "$btmp"
fi
bbdyn=$bbdir/bin/busybox
ldd "$bbdyn" >/dev/null 2>&1 || { echo "build-guest: $bbdyn is not dynamically linked" >&2; exit 1; }

py=
[ -x /usr/bin/python3 ] && py=$(readlink -f /usr/bin/python3)	# Debian's, not a pyenv's
rout=$build/vm/guest-rt
vout=$build/vm/guest-vnf
res=$rout
[ -z "$vnfimg" ] || res=$vout
rkey=$( { cat "$out/key"; sha256sum "$run" "$so" "$vnf" "$bbdyn" "$top/tests/guest/rt-init.sh" \
	"$top/tests/guest/guest-pymods.py" ${py:+"$py"} | cut -d' ' -f1; } |
	sha256sum | cut -d' ' -f1)
if [ -f "$rout/key" ] && [ "$(cat "$rout/key")" = "$rkey" ] && [ -f "$rout/initramfs.cpio" ] &&
	[ -f "$vout/key" ] && [ "$(cat "$vout/key")" = "$rkey" ] && [ -f "$vout/initramfs.cpio" ]; then
	echo "$res"
	exit 0
fi
mkdir -p "$rout" "$vout"
rtmp=$(mktemp -d "$rout/.root.XXXXXX")
trap 'rm -rf "$rtmp" "$rtmp.vnf"' EXIT
mkdir -p "$rtmp"/{bin,usr/bin,usr/lib,etc,www}
cp "$bbdyn" "$rtmp/bin/busybox-dyn"
cp "$run" "$rtmp/usr/bin/tochain-run"
cp "$so" "$rtmp/usr/lib/libtochain-preload.so"
cp "$top/tests/guest/rt-init.sh" "$rtmp/init"
chmod 755 "$rtmp/init" "$rtmp/bin/busybox-dyn" "$rtmp/usr/bin/tochain-run"
# the shared libraries (and the loader) of everything dynamic, at their paths
for f in "$bbdyn" "$run" "$so"; do
	ldd "$f" | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'
done | sort -u | while read -r lib; do
	mkdir -p "$rtmp$(dirname "$lib")"
	cp -L "$lib" "$rtmp$lib"
done
# Debian's python3 (if installed) with the modules http.server needs
if [ -n "$py" ]; then
	mkdir -p "$rtmp/usr/bin"
	cp "$py" "$rtmp/usr/bin/python3"
	"$py" "$top/tests/guest/guest-pymods.py" "$rtmp" 2>/dev/null | sort -u | while read -r m; do
		case $m in /usr/lib/python3*) ;; *) continue ;; esac
		mkdir -p "$rtmp$(dirname "$m")"
		cp -L "$m" "$rtmp$m"
	done
	# compiled here: compiling at import takes seconds per module under TCG
	"$py" -m compileall -q -j 0 -s "$rtmp" -p / "$rtmp/usr/lib" >/dev/null
	ldd "$py" | awk '/=> \// { print $3 }' | while read -r lib; do
		mkdir -p "$rtmp$(dirname "$lib")"
		cp -L "$lib" "$rtmp$lib"
	done
fi
printf 'root:x:0:0:root:/:/bin/sh\n' >"$rtmp/etc/passwd"
printf 'root:x:0:\n' >"$rtmp/etc/group"
printf '127.0.0.1 localhost\n' >"$rtmp/etc/hosts"
(cd "$rtmp" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$rout/rt.cpio"
cat "$out/initramfs.cpio" "$rout/rt.cpio" >"$rout/initramfs.cpio.tmp"
mv "$rout/initramfs.cpio.tmp" "$rout/initramfs.cpio"
# The VNF guest: tochain-vnf and the libraries it adds (the engines of
# its kinds: modsecurity, libxml2, ICU, Hyperscan ...: 68 MB) as one more
# archive, in guest-vnf/ only.  The initramfs is unpacked into a
# tmpfs capped at about 45% of the guest's RAM (92 MB with 256 MiB):
# with these it holds 86 MB, so a VNF guest needs -m 384 or more, and the
# other runtime tests keep their small image.  (Compressing the archive
# does not lift the cap, and an uncompressed archive after a compressed
# one, as tests append, fails to unpack: "invalid magic".)
vtmp=$rtmp.vnf
mkdir -p "$vtmp/usr/bin"
cp "$vnf" "$vtmp/usr/bin/tochain-vnf"
chmod 755 "$vtmp/usr/bin/tochain-vnf"
ldd "$vnf" | awk '/=> \// { print $3 }' | sort -u | while read -r lib; do
	[ -e "$rtmp$lib" ] && continue
	mkdir -p "$vtmp$(dirname "$lib")"
	cp -L "$lib" "$vtmp$lib"
done
(cd "$vtmp" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$rout/vnf.cpio"
rm -rf "$vtmp"
cat "$rout/initramfs.cpio" "$rout/vnf.cpio" >"$vout/initramfs.cpio.tmp"
mv "$vout/initramfs.cpio.tmp" "$vout/initramfs.cpio"
rm -f "$rout/rt.cpio" "$rout/vnf.cpio" "$rout/initramfs-vnf.cpio"
ln -sf "$kernel" "$rout/kernel"
ln -sf "$kernel" "$vout/kernel"
echo "$rkey" >"$rout/key"
echo "$rkey" >"$vout/key"
echo "$res"
