#!/usr/bin/env bash
# timeout: 2700
# needs: patched-qemu
# The ivshmem revocation series (qemu-patches/): builds the patched QEMU
# when the cache lacks it (the first build takes 15-30 min on two busy
# cores, later runs seconds), runs QEMU's own ivshmem qtest of that build
# (including the revoke tests the series adds and the slow pair/server
# tests), then revokes and re-grants through QMP: against the qtest
# accelerator, reading and writing BAR 2 as a guest would; against a
# machine booting SeaBIOS (flat view and physical reads at the BAR); and
# against two guests sharing a region, of which one is revoked while the
# other keeps working.  KVM when a guest runs under it here, else TCG.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top/tests/lib/common.sh"

work=$(mktemp -d /tmp/tochain-800.XXXXXX)
cleanup() { rm -rf "$work"; }
tc_on_exit cleanup

tc_patched_qemu
out=$TC_QEMU_DIR
echo "patched QEMU: $out"
cat "$out/series.log"

# The series must be the one built: every patch subject in series.log.
for p in "$top"/qemu-patches/[0-9][0-9][0-9][0-9]-*.patch; do
	case $p in */0000-*) continue ;; esac
	subj=$(sed -n 's/^Subject: \(\[PATCH[^]]*\] \)\{0,1\}//p' "$p" | head -n 1)
	grep -qF -- "$subj" "$out/series.log" ||
		fail "$(basename "$p") is not in the build"
done

# QEMU's ivshmem qtest, slow tests included (the binary finds its
# firmware in ../share/qemu, no -L needed).
echo "== ivshmem-test"
(cd "$work" && QTEST_QEMU_BINARY="$QEMU" \
	timeout 300 "$out/bin/ivshmem-test" --tap -m slow) | tee "$work/qtest.tap"
grep -q '^ok .*/ivshmem/revoke$' "$work/qtest.tap" ||
	fail "the revoke qtest did not run"
if grep -q '^not ok' "$work/qtest.tap"; then
	fail "ivshmem-test"
fi

# The probe guest: a 32-bit multiboot program, freestanding.
guest=""
if gcc -m32 -ffreestanding -fno-pic -fno-stack-protector -nostdlib -static \
	-O2 -Wall -Wextra -Werror -Wl,-Ttext=0x100000 -Wl,--build-id=none \
	-o "$work/guest.elf" "$top/tests/qemu/bar2-probe-guest.c"; then
	guest=$work/guest.elf
else
	echo "note: gcc cannot build 32-bit code here, no guest check"
fi

echo "== QMP revoke / re-grant"
timeout 400 python3 "$top/tests/qemu/check-revoke.py" "$out/env" "$work" $guest
echo PASS
