#!/usr/bin/env bash
# timeout: 180
# tochain_ivshmem.ko with ivshmem-doorbell and our ivshmem server (the
# host is peer 0): the host rings the guest's vector 0 and the guest sees
# it on the eventfd it bound; the guest rings the host's doorbell and the
# host sees it on its own eventfd.  The region (and the mailbox the two
# sides use to say "ready" and "got it") is a /dev/shm file the server
# hands to QEMU.  (ivshmem-doorbell always has MSI-X since QEMU 2.6; the
# driver's INTx path is for revision-0 devices and not exercised here.)
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"

name=db-701.$$
work=$(mktemp -d /tmp/tochain-701.XXXXXX)
shm=/dev/shm/tochain-701.$$
qpid= hpid=
cleanup() {
	set +e	# a killed process's status must not stop the cleanup
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
	[ -n "$hpid" ] && kill "$hpid" 2>/dev/null && wait "$hpid" 2>/dev/null
	rm -rf "$work" "$shm"
}
tc_on_exit cleanup
fail_logs() {
	echo "--- serial"; cat -v "$work/serial.log" 2>/dev/null || true
	echo "--- host"; cat "$work/host.log" 2>/dev/null || true
	echo "--- qemu"; cat "$work/qemu.out" 2>/dev/null || true
}
tc_on_fail fail_logs

guest=$("$top/tests/guest/build-guest.sh" "$build")

run_mode() { # extra device properties, expected interrupt mode
	local props=$1 mode=$2 t0 id
	rm -f "$work/serial.log" "$work/host.log"
	"$build/tests/bin/vm-host-tool" init "$shm" 1048576 "$name"
	"$build/tests/bin/vm-host-tool" doorbell "$work/ivshmem.sock" "$shm" 2 120 >"$work/host.log" 2>&1 &
	hpid=$!
	vm_wait_line "$work/host.log" '^ready host-peer 0' 10 "$hpid" || fail "server did not start"

	vm_qemu_args "$guest" "$work/serial.log" "$work/qmp.sock" "doorbell,$name,0" \
		-chardev "socket,id=ivsc,path=$work/ivshmem.sock" \
		-device "ivshmem-doorbell,chardev=ivsc,$props"
	echo "== $props (accel: ${VM_ACCEL[*]})"
	t0=$(date +%s.%N)
	"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
	qpid=$!

	vm_wait_line "$work/serial.log" '^GUEST-BOOT' 90 "$qpid" || fail "guest did not boot"
	echo "boot to /init: $(vm_since "$t0") s"
	vm_wait_line "$work/serial.log" '^GUEST-DONE' 120 "$qpid" || fail "guest did not finish"
	wait "$qpid" || true
	qpid=
	if ! wait "$hpid"; then hpid=; fail "host side of the doorbell test"; fi
	hpid=
	echo "total: $(vm_since "$t0") s"
	grep -a -E '^(PASS|FAIL|GUEST-)' "$work/serial.log" | tr -d '\r'
	echo "--- host"; cat "$work/host.log"

	vm_check_log "$work/serial.log" "open by region name" "doorbell info" "mmap" \
		"vector out of range refused" "non-eventfd refused" "eventfd bound to vector 0" \
		"interrupt host->guest on the eventfd" "doorbell guest->host" "eventfd unbound" \
		rmmod || fail "guest checks"
	grep -aq '^GUEST-DONE rc=0' "$work/serial.log" || fail "guest program failed"
	grep -aq "mode=$mode" "$work/serial.log" || fail "driver did not use $mode"
	id=$(sed -n 's/^join //p' "$work/host.log" | head -n 1)
	[ -n "$id" ] && [ "$id" != 0 ] || fail "no guest joined the server"
	grep -aq "ivposition=$id " "$work/serial.log" || fail "guest IVPosition is not its peer id $id"
	grep -q "^rang $id\$" "$work/host.log" || fail "host did not ring the guest"
	grep -q '^bell ' "$work/host.log" || fail "host saw no doorbell"
}

run_mode vectors=2 msix
echo "PASS 701_guest_driver_doorbell"
