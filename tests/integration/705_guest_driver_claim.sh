#!/usr/bin/env bash
# timeout: 180
# tochain_ivshmem.ko and the VM link's claim table (struct tcr_link at
# the end of the region header), with a fake table the host tool writes
# (vm-host-tool link): a slot left CLAIMED by an earlier boot is released
# when the driver binds; IOC_CLAIM takes an offered slot per open file
# (EBUSY twice on one file, EAGAIN when none is left, ENOENT without a
# table, an oversized table clamped); the claim is released when its file
# goes, also when the process is killed, and not when a child sharing
# the file exits; poll() on the device is quiet while it is present.  The
# host then reads every slot RELEASED with the claimer's pid and cookie.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"
. "$top/tests/guest/qemu.sh"

command -v "$VM_QEMU" >/dev/null || { echo "SKIP: $VM_QEMU not installed"; exit 77; }
name=claim-705.$$
work=$(mktemp -d /tmp/tochain-705.XXXXXX)
shm=/dev/shm/tochain-705.$$
qpid=
cleanup() {
	set +e
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
	rm -rf "$work" "$shm"
}
tc_on_exit cleanup
tc_on_fail 'echo "--- serial"; cat -v "$work/serial.log" || true; echo "--- qemu"; cat "$work/qemu.out"'

guest=$("$top/tests/guest/build-guest.sh" "$build")
"$build/tests/bin/vm-host-tool" init "$shm" 1048576 "$name"
"$build/tests/bin/vm-host-tool" link "$shm" 4 --stale

vm_qemu_args "$guest" "$work/serial.log" "$work/qmp.sock" "claim,$name" \
	-object "memory-backend-file,id=hmb,share=on,mem-path=$shm,size=1M" \
	-device ivshmem-plain,memdev=hmb
echo "accel: ${VM_ACCEL[*]}"
t0=$(date +%s.%N)
"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
qpid=$!
vm_wait_line "$work/serial.log" '^GUEST-DONE' 120 "$qpid" || fail "guest did not finish"
wait "$qpid" || true
qpid=
echo "total: $(vm_since "$t0") s"
grep -a -E '^(PASS|FAIL)' "$work/serial.log" | tr -d '\r'

vm_check_log "$work/serial.log" "open and map" "stale claim released at probe" "claim" \
	"claim written to the table" "second claim on one file EBUSY" "claim info" \
	"claim info without a claim ENOENT" "claim on another file" "claim in a child" \
	"no slot left EAGAIN" "killed child's claim released" \
	"claim survives a sharing child's exit" "close releases" \
	"poll quiet while the device is there" "no link ENOENT" "oversized table clamped" \
	"last close releases" rmmod || fail "guest checks"
grep -aq '^GUEST-DONE rc=0' "$work/serial.log" || fail "guest program failed"

"$build/tests/bin/vm-host-tool" slots "$shm" | tee "$work/slots"
for i in 0 1 2 3; do
	grep -q "^slot $i state 3 " "$work/slots" || fail "slot $i is not RELEASED on the host"
done
for i in 1 2 3; do
	grep -qE "^slot $i state 3 pid [1-9][0-9]* cookie [1-9]" "$work/slots" ||
		fail "slot $i has no claimer pid or cookie"
done
echo "PASS 705_guest_driver_claim"
