#!/usr/bin/env bash
# timeout: 180
# tochain-ivshmem-server with two QEMU guests (ivshmem-doorbell): the
# server gives the host id 0 and the guests 1 and 2 in the order they
# connect, hands both the same region, and each guest's doorbell reaches
# the other through the eventfds the server passed around.  The server
# must report both joins and both leaves and still be running after.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"

name=pair-703.$$
work=$(mktemp -d /tmp/tochain-703.XXXXXX)
shm=/dev/shm/tochain-703.$$
spid= apid= bpid=
cleanup() {
	set +e	# a killed process's status must not stop the cleanup
	local p
	for p in $apid $bpid $spid; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$work" "$shm"
}
tc_on_exit cleanup
fail_logs() {
	for f in a.log b.log server.log qemu-a.out qemu-b.out; do
		echo "--- $f"; cat -v "$work/$f" 2>/dev/null || true
	done
}
tc_on_fail fail_logs

guest=$("$top/tests/guest/build-guest.sh" "$build")
"$build/tests/bin/vm-host-tool" init "$shm" 1048576 "$name"
"$build/bin/tochain-ivshmem-server" -s "$work/ivshmem.sock" -m "$shm" -n 2 >"$work/server.log" 2>&1 &
spid=$!
vm_wait_line "$work/server.log" '^ready ' 10 "$spid" || fail "server did not start"

start_guest() { # a|b my-id other-id
	vm_qemu_args "$guest" "$work/$1.log" "$work/qmp-$1.sock" "pair,$name,$2,$3" \
		-chardev "socket,id=ivsc,path=$work/ivshmem.sock" \
		-device ivshmem-doorbell,chardev=ivsc,vectors=2
	"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu-$1.out" 2>&1 &
}
t0=$(date +%s.%N)
start_guest a 1 2
apid=$!
vm_wait_line "$work/server.log" '^join 1$' 10 "$apid" || fail "guest a did not join as 1"
start_guest b 2 1
bpid=$!
vm_wait_line "$work/server.log" '^join 2$' 10 "$bpid" || fail "guest b did not join as 2"
echo "accel: ${VM_ACCEL[*]}"

vm_wait_line "$work/a.log" '^GUEST-DONE' 150 "$apid" || fail "guest a did not finish"
vm_wait_line "$work/b.log" '^GUEST-DONE' 150 "$bpid" || fail "guest b did not finish"
wait "$apid" || true
wait "$bpid" || true
apid= bpid=
echo "both guests done: $(vm_since "$t0") s"
for g in a b; do
	echo "--- guest $g"
	grep -a -E '^(PASS|FAIL|GUEST-)' "$work/$g.log" | grep -v DMESG | tr -d '\r'
	vm_check_log "$work/$g.log" "open by region name" "peer id from the server" \
		"eventfd bound to vector 0" "other guest ready" \
		"interrupt from the other guest" "the other guest got ours" rmmod ||
		fail "guest $g checks"
	grep -aq '^GUEST-DONE rc=0' "$work/$g.log" || fail "guest $g program failed"
done
vm_wait_line "$work/server.log" '^leave 2$' 10 "$spid" || fail "server missed a leave"
vm_wait_line "$work/server.log" '^leave 1$' 10 "$spid" || fail "server missed a leave"
kill -0 "$spid" || fail "server died"
kill "$spid"
wait "$spid" || fail "server did not exit cleanly on SIGTERM"
spid=
[ ! -e "$work/ivshmem.sock" ] || fail "server left its socket behind"
echo "--- server"; cat "$work/server.log"
echo "PASS 703_ivshmem_server_two_guests"
