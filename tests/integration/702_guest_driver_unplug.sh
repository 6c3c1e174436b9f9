#!/usr/bin/env bash
# timeout: 240
# Hot-plug and hot-unplug of an ivshmem-plain device while a guest
# program has it mapped: device_add through QMP, the guest (ACPI PCI
# hotplug) probes it and the program maps it; device_del, the guest
# ejects it, and the program gets SIGBUS on its next access and ENODEV
# from ioctl/mmap, the guest keeps running; device_add again and the
# program attaches to the new device.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
# shellcheck source=../../vm/qemu.sh
. "$top/vm/qemu.sh"

command -v socat >/dev/null || { echo "FAIL: socat missing (make deps)"; exit 1; }
name=hp-702.$$
work=$(mktemp -d /tmp/tochain-702.XXXXXX)
shm=/dev/shm/tochain-702.$$
qpid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
	rm -rf "$work" "$shm"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	echo "--- serial"; cat -v "$work/serial.log" 2>/dev/null || true
	echo "--- qmp"; cat "$work/qmp.log" 2>/dev/null || true
	echo "--- qemu"; cat "$work/qemu.out" 2>/dev/null || true
	exit 1
}
qmp() { vm_qmp "$work/qmp.sock" "$@" | tee -a "$work/qmp.log"; }
plugged() { qmp '{"execute":"qom-list","arguments":{"path":"/machine/peripheral"}}' | grep -q '"name": "ivs0"'; }

guest=$("$top/vm/build-guest.sh" "$build")
"$build/tests/bin/vm-host-tool" init "$shm" 1048576 "$name"

vm_qemu_args "$guest" "$work/serial.log" "$work/qmp.sock" "unplug,$name" \
	-object "memory-backend-file,id=hmb,share=on,mem-path=$shm,size=1M" \
	-object "memory-backend-file,id=hmb2,share=on,mem-path=$shm,size=1M"
echo "accel: ${VM_ACCEL[*]}"
t0=$(date +%s.%N)
"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
qpid=$!

add='{"execute":"device_add","arguments":{"driver":"ivshmem-plain","memdev":"hmb","id":"ivs0"}}'
del='{"execute":"device_del","arguments":{"id":"ivs0"}}'
# QEMU 7.2 aborts (qemu_ram_set_idstr assertion) when a memory backend
# that an unplugged ivshmem used is plugged again: the second device gets
# a second backend object over the same file.
add2='{"execute":"device_add","arguments":{"driver":"ivshmem-plain","memdev":"hmb2","id":"ivs1"}}'

vm_wait_line "$work/serial.log" '^GUEST-WAIT-DEVICE' 90 "$qpid" || fail "guest did not boot"
echo "boot to the test program: $(vm_since "$t0") s"
qmp "$add" | grep -q '"error"' && fail "device_add refused"
vm_wait_line "$work/serial.log" '^GUEST-MAPPED' 60 "$qpid" || fail "guest did not map the hot-added device"
t1=$(date +%s.%N)
qmp "$del" | grep -q '"error"' && fail "device_del refused"
vm_wait_line "$work/serial.log" '^GUEST-ALIVE' 60 "$qpid" || fail "guest did not survive the unplug"
echo "unplug seen by the program after $(vm_since "$t1") s"
for _ in $(seq 50); do plugged || break; sleep 0.2; done
plugged && fail "QEMU still has the device: the guest did not eject it"
vm_wait_line "$work/serial.log" '^GUEST-WAIT-REPLUG' 10 "$qpid" || fail "guest program stopped"
qmp "$add2" | grep -q '"error"' && fail "second device_add refused"
vm_wait_line "$work/serial.log" '^GUEST-DONE' 90 "$qpid" || fail "guest did not finish"
wait "$qpid" || true
qpid=
echo "total: $(vm_since "$t0") s"
grep -a -E '^(PASS|FAIL|GUEST-)' "$work/serial.log" | tr -d '\r'

vm_check_log "$work/serial.log" "hot-added device attached" \
	"host pattern on the hot-added device" "SIGBUS on access after unplug" \
	"ioctl ENODEV after unplug" "mmap ENODEV after unplug" "node removed" \
	"re-added device attached" "host pattern after replug" rmmod || fail "guest checks"
grep -aq '^GUEST-DONE rc=0' "$work/serial.log" || fail "guest program failed"
echo "PASS 702_guest_driver_unplug"
