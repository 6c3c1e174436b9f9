#!/usr/bin/env bash
# timeout: 180
# tochain_ivshmem.ko in a QEMU guest with ivshmem-plain: the host formats
# a region file in /dev/shm, the guest first sees the fallback node
# /dev/tochain/ivshmem0 while the header says FORMATTING, then (once the
# host sets READY) /dev/tochain/<name>; it checks the host's pattern
# through its mapping and writes one back that the host verifies.  A
# second boot has two devices over regions with the same name: one gets
# the name, the other keeps its fallback (RESCAN says EEXIST).
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"

name=web1-700.$$
work=$(mktemp -d /tmp/tochain-700.XXXXXX)
shm=/dev/shm/tochain-700.$$
qpid=
cleanup() {
	set +e	# a killed process's status must not stop the cleanup
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
	rm -rf "$work" "$shm"
}
tc_on_exit cleanup

guest=$("$top/tests/guest/build-guest.sh" "$build")
"$build/tests/bin/vm-host-tool" init "$shm" 1048576 "$name" --formatting

vm_qemu_args "$guest" "$work/serial.log" "$work/qmp.sock" "plain,$name,--fallback" \
	-object "memory-backend-file,id=hmb,share=on,mem-path=$shm,size=1M" \
	-device ivshmem-plain,memdev=hmb
echo "accel: ${VM_ACCEL[*]}"
t0=$(date +%s.%N)
"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
qpid=$!

tc_on_fail 'echo "--- serial"; cat -v "$work/serial.log" || true; echo "--- qemu"; cat "$work/qemu.out"'

vm_wait_line "$work/serial.log" '^GUEST-BOOT' 90 "$qpid" || fail "guest did not boot"
echo "boot to /init: $(vm_since "$t0") s wall, $(sed -n 's/^GUEST-BOOT uptime=//p' "$work/serial.log") s guest uptime"
vm_wait_line "$work/serial.log" '^GUEST-WAIT-HEADER' 60 "$qpid" || fail "guest never waited for the header"
"$build/tests/bin/vm-host-tool" ready "$shm"
vm_wait_line "$work/serial.log" '^GUEST-DONE' 90 "$qpid" || fail "guest did not finish"
wait "$qpid" || true
qpid=
echo "total: $(vm_since "$t0") s"
grep -a -E '^(PASS|FAIL|GUEST-)' "$work/serial.log" | grep -av 'DMESG.*line:' | tr -d '\r'

vm_check_log "$work/serial.log" "fallback name" "rescan EAGAIN while formatting" \
	"renamed by itself once READY" "rescan after READY" "renamed, old fd still works" "fallback node removed" \
	"open by region name" "node is a 0666 char device" "uevent names the node" "info" "mmap" \
	"header through the mapping" "host pattern" "guest pattern written" "mmap at an offset" "read-only open maps read-only" \
	"MAP_PRIVATE refused" "mmap past BAR2 refused" "no vectors on ivshmem-plain" \
	"no doorbell on ivshmem-plain" "unknown ioctl ENOTTY" rmmod || fail "guest checks"
grep -aq '^GUEST-DONE rc=0' "$work/serial.log" || fail "guest program failed"
"$build/tests/bin/vm-host-tool" check "$shm" || fail "host does not see the guest's pattern"

echo "== two devices, one region name"
rm -f "$work/serial.log"
vm_qemu_args "$guest" "$work/serial.log" "$work/qmp.sock" "dup,$name" \
	-object "memory-backend-file,id=hmb,share=on,mem-path=$shm,size=1M" \
	-object "memory-backend-file,id=hmb2,share=on,mem-path=$shm,size=1M" \
	-device ivshmem-plain,memdev=hmb -device ivshmem-plain,memdev=hmb2
t0=$(date +%s.%N)
"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
qpid=$!
vm_wait_line "$work/serial.log" '^GUEST-DONE' 90 "$qpid" || fail "guest did not finish"
wait "$qpid" || true
qpid=
echo "total: $(vm_since "$t0") s"
grep -a -E '^(PASS|FAIL|GUEST-)' "$work/serial.log" | grep -av 'DMESG.*line:' | tr -d '\r'
vm_check_log "$work/serial.log" "open by region name" "one device got the name" \
	"the other keeps its fallback name" "rescan says EEXIST for a taken name" \
	"mmap both" "both devices map the same region" rmmod || fail "guest checks (dup)"
grep -aq '^GUEST-DONE rc=0' "$work/serial.log" || fail "guest program failed (dup)"
echo "PASS 700_guest_driver_plain"
