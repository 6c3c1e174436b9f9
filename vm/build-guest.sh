#!/usr/bin/env bash
# Builds the test guest: a kernel and an initramfs holding busybox,
# tochain_ivshmem.ko and ivshmem-guest-test, for the guest driver tests.
#
#   vm/build-guest.sh BUILD_DIR
#
# Needs BUILD_DIR/guest-drivers/tochain_ivshmem.ko and
# BUILD_DIR/vm/ivshmem-guest-test (make builds both).  Writes
# BUILD_DIR/vm/guest/{kernel,initramfs.cpio} and prints that directory.
# The kernel is Debian's (vm/fetch-kernel.sh); the uncompressed PVH
# vmlinux is pulled out of its bzImage once per kernel version and kept
# in the kernel cache, since QEMU boots it directly (about 5 s instead
# of 14 s under TCG); if that fails the bzImage is used.  The initramfs is
# rebuilt only when the kernel version or any input changes, so a second
# run takes well under a second.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: build-guest.sh BUILD_DIR}" && pwd)
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

kroot=$("$top/vm/fetch-kernel.sh")
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
	"$top/vm/init.sh" "$0" | cut -d' ' -f1; } | sha256sum | cut -d' ' -f1)
if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && [ -f "$out/initramfs.cpio" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$out"
tmp=$(mktemp -d "$out/.root.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,lib,proc,sys,dev,tmp}
cp "$busybox" "$tmp/bin/busybox"
cp "$prog" "$tmp/bin/ivshmem-guest-test"
cp "$ko" "$tmp/lib/tochain_ivshmem.ko"
cp "$top/vm/init.sh" "$tmp/init"
chmod 755 "$tmp/init" "$tmp/bin/busybox" "$tmp/bin/ivshmem-guest-test"
(cd "$tmp" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$out/initramfs.cpio.tmp"
mv "$out/initramfs.cpio.tmp" "$out/initramfs.cpio"
ln -sf "$kernel" "$out/kernel"
echo "$key" >"$out/key"
echo "$out"
