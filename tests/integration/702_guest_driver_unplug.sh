#!/usr/bin/env bash
# timeout: 240
# Hot-plug and hot-unplug of an ivshmem device while a guest program
# uses it: device_add through QMP, the guest (ACPI PCI hotplug) probes it
# and the program maps it, starts threads that loop on ioctl and on
# open/mmap/close, forks a child that shares the mapping and (doorbell)
# sleeps on a bound eventfd; device_del, the guest ejects the device, and
# the program and its child get SIGBUS on their next access, ioctl and
# mmap say ENODEV, the sleeper wakes, the guest keeps running.  For
# ivshmem-plain the device is then added again and must work.  Runs once
# per device flavour: plain (memory backend), doorbell (our server).
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"

command -v socat >/dev/null || fail "socat missing (make deps)"
name=hp-702.$$
work=$(mktemp -d /tmp/tochain-702.XXXXXX)
shm=/dev/shm/tochain-702.$$
qpid= spid=
cleanup() {
	set +e	# a killed process's status must not stop the cleanup
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	rm -rf "$work" "$shm"
}
tc_on_exit cleanup
fail_logs() {
	echo "--- serial"; cat -v "$work/serial.log" 2>/dev/null || true
	echo "--- qmp"; cat "$work/qmp.log" 2>/dev/null || true
	echo "--- qemu"; cat "$work/qemu.out" 2>/dev/null || true
}
tc_on_fail fail_logs
qmp() { vm_qmp "$work/qmp.sock" "$@" | tee -a "$work/qmp.log"; }
# 0 while QEMU still has device ivs0, 1 once it is gone; QMP must answer
plugged() {
	local out
	out=$(qmp '{"execute":"qom-list","arguments":{"path":"/machine/peripheral"}}' 2>&1)
	echo "$out" | grep -q '"return": \[' || fail "QMP did not answer qom-list"
	echo "$out" | grep -q '"name": "ivs0"'
}

guest=$("$top/tests/guest/build-guest.sh" "$build")
del='{"execute":"device_del","arguments":{"id":"ivs0"}}'

run_flavour() { # plain|doorbell
	local flavour=$1 t0 t1 add add2 args cmd
	local checks=("hot-added device attached" "host pattern on the hot-added device"
		"SIGBUS on access after unplug" "ioctl ENODEV after unplug"
		"mmap ENODEV after unplug" "poll HUP after unplug" "node removed" "concurrent ioctls end with ENODEV"
		"concurrent open/mmap/close loop" "forked child with the mapping gets SIGBUS" rmmod)
	rm -f "$work/serial.log" "$work/qmp.log"
	"$build/tests/bin/vm-host-tool" init "$shm" 1048576 "$name"
	if [ "$flavour" = plain ]; then
		# QEMU 7.2 aborts (qemu_ram_set_idstr assertion) when a memory
		# backend an unplugged ivshmem used is plugged again: the second
		# device gets a second backend over the same file.
		args=(-object "memory-backend-file,id=hmb,share=on,mem-path=$shm,size=1M"
			-object "memory-backend-file,id=hmb2,share=on,mem-path=$shm,size=1M")
		add='{"execute":"device_add","arguments":{"driver":"ivshmem-plain","memdev":"hmb","id":"ivs0"}}'
		add2='{"execute":"device_add","arguments":{"driver":"ivshmem-plain","memdev":"hmb2","id":"ivs1"}}'
		cmd="unplug,$name"
		checks+=("re-added device attached" "host pattern after replug")
	else
		"$build/bin/tochain-ivshmem-server" -s "$work/ivshmem.sock" -m "$shm" -n 2 >"$work/server.log" 2>&1 &
		spid=$!
		vm_wait_line "$work/server.log" '^ready ' 10 "$spid" || fail "server did not start"
		args=(-chardev "socket,id=ivsc,path=$work/ivshmem.sock")
		add='{"execute":"device_add","arguments":{"driver":"ivshmem-doorbell","chardev":"ivsc","vectors":2,"id":"ivs0"}}'
		add2=
		cmd="unplug,$name,--no-replug"
		checks+=("eventfd bound to vector 0" "eventfd sleeper woken by the unplug")
	fi
	vm_qemu_args "$guest" "$work/serial.log" "$work/qmp.sock" "$cmd" "${args[@]}"
	echo "== $flavour (accel: ${VM_ACCEL[*]})"
	t0=$(date +%s.%N)
	"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
	qpid=$!

	vm_wait_line "$work/serial.log" '^GUEST-WAIT-DEVICE' 90 "$qpid" || fail "guest did not boot"
	echo "boot to the test program: $(vm_since "$t0") s"
	qmp "$add" | grep -q '"error"' && fail "device_add refused"
	vm_wait_line "$work/serial.log" '^GUEST-MAPPED' 60 "$qpid" || fail "guest did not map the hot-added device"
	sleep 1		# let the racing threads run a while
	t1=$(date +%s.%N)
	qmp "$del" | grep -q '"error"' && fail "device_del refused"
	vm_wait_line "$work/serial.log" '^GUEST-ALIVE' 60 "$qpid" || fail "guest did not survive the unplug"
	echo "unplug handled by the program after $(vm_since "$t1") s"
	for _ in $(seq 50); do plugged || break; sleep 0.2; done
	plugged && fail "QEMU still has the device: the guest did not eject it"
	if [ -n "$add2" ]; then
		vm_wait_line "$work/serial.log" '^GUEST-WAIT-REPLUG' 10 "$qpid" || fail "guest program stopped"
		qmp "$add2" | grep -q '"error"' && fail "second device_add refused"
	fi
	vm_wait_line "$work/serial.log" '^GUEST-DONE' 90 "$qpid" || fail "guest did not finish"
	wait "$qpid" || true
	qpid=
	echo "total: $(vm_since "$t0") s"
	grep -a -E '^(PASS|FAIL|GUEST-)' "$work/serial.log" | grep -av 'DMESG.*line:' | tr -d '\r'
	vm_check_log "$work/serial.log" "${checks[@]}" || fail "guest checks"
	grep -aq '^GUEST-DONE rc=0' "$work/serial.log" || fail "guest program failed"
	if [ -n "$spid" ]; then
		vm_wait_line "$work/server.log" '^leave ' 10 "$spid" || fail "server missed the leave"
		kill "$spid"; wait "$spid" || true; spid=
	fi
}

run_flavour plain
run_flavour doorbell
echo "PASS 702_guest_driver_unplug"
