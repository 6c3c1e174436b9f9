#!/usr/bin/env bash
# timeout: 400
# An unmodified HTTP server (python3 -m http.server, Debian's python in the
# guest's initramfs) runs under tochain-run inside a real QEMU guest; its
# TCP is offloaded to tochain-toe on the host, in the VM's namespace on
# the fabric.  The guest finds its region (/dev/tochain/NAME) itself;
# tochain-vmlink attaches channels to the TOE for the guest's processes
# and relays the doorbells.  Twice: ivshmem-doorbell (MSI-X both ways),
# then ivshmem-plain (poll mode).  Each time curl in a client namespace
# fetches a 4 MiB file twice (sha256 checked) and a missing one (404);
# inside the guest, busybox nc under the runtime fetches the file
# through the TOE's loopback (its channel is released when it exits),
# and a listening nc is killed with SIGKILL: the driver releases its
# channel and the link recycles it.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"
# shellcheck source=../guest/rt-host.sh
. "$top/tests/guest/rt-host.sh"

tc_need_root "network namespaces"
tc_need_cmds ip curl sha256sum cpio "$VM_QEMU"
rg_need_built
[ -x /usr/bin/python3 ] || fail "Debian's python3 missing (tests/guest/deps.txt; the guest image copies it)"
guest_rt=$("$top/tests/guest/build-guest.sh" "$build" --runtime) || fail "guest build"

tc_init
tc_fabric
tc_host CL cl 10.70.4.1/24
tc_host VM vm 10.70.4.2/24
work=$(mktemp -d /dev/shm/tc704.XXXXXX)
tc_on_exit "rm -rf $work"
region=$work/region
name=web704
rg_init

# The guest's part: a script and the files it serves, as one more archive.
mkdir -p "$work/extra/www"
head -c $((4 << 20)) /dev/urandom >"$work/extra/www/big.bin"
want=$(sha256sum <"$work/extra/www/big.bin" | cut -d' ' -f1)
cat >"$work/extra/guest.sh" <<'EOF'
#!/bin/sh
# $1: the region node; tochain-run finds it without --region.
cd /www || exit 1
tochain-run -- python3 -m http.server --bind 0.0.0.0 8080 >/tmp/http.log 2>&1 &
echo "GUEST-HTTPD pid=$!"
# A client inside the VM, through the TOE's loopback; one process per
# try.  (busybox nc: busybox wget reads its socket through stdio, which
# calls libc internally and bypasses the preloaded runtime.)
i=0
while :; do
	printf 'GET /big.bin HTTP/1.0\r\n\r\n' |
		tochain-run -- busybox-dyn nc 127.0.0.1 8080 >/tmp/self.resp 2>/dev/null
	head -n 1 /tmp/self.resp | grep -q ' 200 ' && break
	i=$((i + 1)); [ $i -lt 100 ] || break; sleep 0.5
done
echo "GUEST-SELF $(tail -c 4194304 /tmp/self.resp | sha256sum | cut -d' ' -f1)"
# a process that holds a channel and is killed: the driver releases it
tochain-run -- busybox-dyn nc -l -p 9000 &
nc=$!
sleep 2
kill -9 $nc
echo "GUEST-KILLED pid=$nc"
wait
EOF
chmod 755 "$work/extra/guest.sh"
rg_guest "$guest_rt" "$work/extra"

run_mode() { # doorbell|poll
	local mode=$1 t0 got code pid i
	t0=$(date +%s.%N)
	rg_start "$mode" "$name"
	echo "== $mode (accel: ${VM_ACCEL[*]})"
	vm_wait_line "$work/serial.log" '^GUEST-REGION' 90 "$qpid" || fail "guest found no region"
	vm_wait_line "$work/serial.log" '^GUEST-HTTPD' 30 "$qpid" || fail "httpd did not start"
	vm_wait_line "$work/serial.log" '^GUEST-SELF' 90 "$qpid" || fail "no fetch inside the guest"
	echo "boot to serving: $(vm_since "$t0") s"
	grep -aq "^GUEST-SELF $want" "$work/serial.log" || fail "$mode: the guest's own fetch differs"
	tc_wait_port "$CL" 10.70.4.2 8080 30 || fail "port 8080 of the VM does not accept"

	for i in 1 2; do
		t0=$(date +%s.%N)
		got=$(ip netns exec "$CL" curl -sS --max-time 90 http://10.70.4.2:8080/big.bin |
			sha256sum | cut -d' ' -f1) || true
		echo "fetch $i (4 MiB): $(vm_since "$t0") s"
		[ "$got" = "$want" ] || fail "$mode: fetch $i: sha256 $got, want $want"
	done
	code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 30 \
		http://10.70.4.2:8080/nope) || true
	[ "$code" = 404 ] || fail "$mode: expected 404, got $code"

	# the killed process's channel came back
	vm_wait_line "$work/serial.log" '^GUEST-KILLED' 30 "$qpid" || fail "nc was not killed"
	pid=$(tr -d '\r' <"$work/serial.log" | sed -n 's/^GUEST-KILLED pid=//p')
	for i in $(seq 50); do
		grep -q "released (channel [0-9]*, pid $pid)" "$work/link.log" && break
		sleep 0.2
	done
	grep -q "released (channel [0-9]*, pid $pid)" "$work/link.log" ||
		fail "$mode: the channel of the killed process $pid was not released"
	if grep -aE 'GUEST-DMESG.*(BUG:|WARNING:|Oops|Call Trace)' "$work/serial.log"; then
		fail "$mode: kernel splat in the guest"
	fi
	kill "$qpid"; wait "$qpid" 2>/dev/null || true; qpid=
	kill "$lpid"; wait "$lpid" || fail "$mode: link exit status"; lpid=
	grep 'offers' "$work/link.log"
	if [ "$mode" = doorbell ]; then
		grep -qE 'to-toe [1-9][0-9]* to-guest [1-9]' "$work/link.log" ||
			fail "doorbell mode relayed no doorbells"
		grep -q 'guest peer [0-9]* left' "$work/link.log" || fail "the link did not see QEMU leave"
	fi
	kill "$tpid"; wait "$tpid" || fail "$mode: TOE exit status"; tpid=
	echo "PASS $mode"
}

run_mode doorbell
run_mode poll
echo "PASS 704_vm_http"
