#!/usr/bin/env bash
# timeout: 420
# needs: patched-qemu
# A VNF inside a real QEMU guest (tochain-vnf --guest, agent mode).  On the
# host: a standalone tochain-toe in a VM namespace with python3
# http.server under tochain-run behind it, VNF x added by vnf.add.  The
# test grows R, R.out and R.vnf-x to powers of two (PCI BARs) and boots a
# guest (TCG, QEMU directly, no libvirt, no tochaind) with the three as
# ivshmem-plain devices; its init loads the driver and runs
# `tochain-vnf --kind null --deny-marker EVIL --guest`, which finds
# /dev/tochain/vm706.vnf-x by itself and serves it.  The host then
# vnf.attaches x with QEMU's pid and sets the chains in [x] and out [x].
# Checks: a 1 MiB fetch through both chains (sha256), a request with EVIL
# reset (never reaching the host's server) and counted as x's denial, clean requests afterwards, the
# guest's VNF gave a verdict on every descriptor (through the guest's
# mappings of R and R.out, found by their header names vm706, vm706.out);
# figures: latency with and without the chain, QEMU's idle CPU.  With the
# patched QEMU: x's device revoked (the child leaves with status 3, the
# agent lives, the TOE fails x closed as hung), re-granted (served again,
# vnf.attach, clean requests pass).  x's device unplugged (device_del:
# the child leaves, the agent lives) and plugged back (served again).
# Then QEMU is killed and the TOE fails x closed: requests are reset
# within 10 s.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"
# The patched QEMU (built when missing): Debian's aborts when x's device is
# plugged again (qemu_ram_set_idstr), and revoking needs the series.
# VM_QEMU=... runs another on purpose.
if [ -z "${VM_QEMU:-}" ]; then
	tc_patched_qemu
	VM_QEMU=$QEMU
fi
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"

tc_need_root "network namespaces"
tc_need_cmds ip curl sha256sum cpio python3 truncate "$VM_QEMU"
for f in bin/tochain-toe bin/tochain-vnf bin/tochain-run lib/libtochain-preload.so \
	guest-drivers/tochain_ivshmem.ko vm/ivshmem-guest-test; do
	[ -e "$build/$f" ] || fail "$build/$f missing (make)"
done
guest_vnf=$("$top/tests/guest/build-guest.sh" "$build" --vnf) || fail "guest build"

tt_setup 706
name=vm706
qpid=
stop_qemu() {
	[ -n "$qpid" ] && { kill -9 "$qpid"; wait "$qpid"; } 2>/dev/null
	qpid=
}
tc_on_exit stop_qemu
fail_logs() {
	echo "--- serial"; tr -d '\r' <"$work/serial.log" 2>/dev/null | tail -n 40 || true
	echo "--- toe"; tail -n 20 "$work/toe.log" 2>/dev/null || true
	echo "--- qemu"; cat "$work/qemu.out" 2>/dev/null || true
}
tc_on_fail fail_logs

reg=$(ctl_ok vnf.add '{"name":"x"}' | tt_json 'j["region"]')
[ "$reg" = "$region.vnf-x" ] || fail "vnf.add: region $reg"

# The guest: the agent, its output on the console; it runs until QEMU dies.
mkdir -p "$work/extra"
cat >"$work/extra/guest.sh" <<'EOF'
#!/bin/sh
echo "GUEST-DEVS $(ls /dev/tochain | tr '\n' ' ')"
tochain-vnf --kind null --deny-marker EVIL --guest --stats /tmp/vnf.stats &
echo "GUEST-AGENT pid=$!"
wait
EOF
chmod 755 "$work/extra/guest.sh"
mkdir -p "$work/guest"
(cd "$work/extra" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/extra.cpio"
cat "$guest_vnf/initramfs.cpio" "$work/extra.cpio" >"$work/guest/initramfs.cpio"
ln -s "$(readlink -f "$guest_vnf/kernel")" "$work/guest/kernel"

# PCI BARs are powers of two: grow each file (the region library accepts
# a file longer than its header's region_size), as tochaind does.
pow2() {
	local n=$((1 << 20))
	while [ "$n" -lt "$1" ]; do n=$((n * 2)); done
	echo "$n"
}
dev=()
i=0
for f in "$region" "$region.out" "$reg"; do
	sz=$(pow2 "$(stat -c %s "$f")")
	truncate -s "$sz" "$f"
	dev+=(-object "memory-backend-file,id=hmb$i,mem-path=$f,size=$sz,share=on"
		-device "ivshmem-plain,id=iv$i,memdev=hmb$i")
	echo "$(basename "$f"): $sz bytes"
	i=$((i + 1))
done

mkdir "$work/www"
head -c $((1 << 20)) /dev/urandom >"$work/www/big.bin"
head -c $((16 << 10)) /dev/urandom >"$work/www/small.bin"
want=$(sha256sum <"$work/www/big.bin" | cut -d' ' -f1)
tt_serve "$work/www" 8080 || fail "http server"

# median of 9 small fetches (s)
lat() {
	local i
	for i in $(seq 9); do
		ip netns exec "$CL" curl -s -o /dev/null -w '%{time_total}\n' --max-time 30 \
			http://10.81.0.2:8080/small.bin
	done | sort -n | sed -n 5p
}
lat0=$(lat)

# -m 512: the VNF guest's initramfs unpacks to 86 MB, the rootfs holds ~45% of RAM.
vm_qemu_args "$work/guest" "$work/serial.log" "$work/qmp.sock" "$name.vnf-x" "${dev[@]}" -m 512
echo "== guest (accel: ${VM_ACCEL[*]}, $VM_QEMU)"
t0=$(date +%s.%N)
"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
qpid=$!
vm_wait_line "$work/serial.log" '^GUEST-REGION' 150 "$qpid" || fail "guest found no VNF region"
vm_wait_line "$work/serial.log" "tochain-vnf: serving /dev/tochain/$name.vnf-x \(pid [0-9]+\)" 60 "$qpid" ||
	fail "the agent did not serve the VNF region"
echo "boot to agent serving: $(vm_since "$t0") s"
tr -d '\r' <"$work/serial.log" | grep -a '^GUEST-DEVS'
for d in "$name" "$name.out" "$name.vnf-x"; do
	tr -d '\r' <"$work/serial.log" | grep -a '^GUEST-DEVS' | grep -qw -- "$d" ||
		fail "no /dev/tochain/$d in the guest"
done

ctl_ok vnf.attach "{\"name\":\"x\",\"pid\":$qpid}" >/dev/null || fail "vnf.attach"
ctl_ok chain.set '{"dir":"in","name":"g-in","hops":[["x"]]}' >/dev/null || fail "chain.set in"
ctl_ok chain.set '{"dir":"out","name":"g-out","hops":[["x"]]}' >/dev/null || fail "chain.set out"

t0=$(date +%s.%N)
got=$(ip netns exec "$CL" curl -sS --max-time 120 http://10.81.0.2:8080/big.bin |
	sha256sum | cut -d' ' -f1) || true
echo "1 MiB through in [x] and out [x] (x in the guest): $(vm_since "$t0") s"
[ "$got" = "$want" ] || fail "sha256 through the guest's VNF: $got, want $want"
lat1=$(lat)
echo "16 KiB fetch, median of 9: no chain ${lat0} s, through x in the guest ${lat1} s"
# Idle: the agent's service thread polls, naps of up to 1 ms, 10 ms
# after a second without work (figures only: TCG, shared cores).
hz=$(getconf CLK_TCK)
sleep 2
c0=$(awk '{print $14 + $15}' /proc/$qpid/stat)
sleep 5
c1=$(awk '{print $14 + $15}' /proc/$qpid/stat)
echo "idle 5 s, chains set: QEMU used $(( (c1 - c0) * 100 / (5 * hz) ))% of a core"
echo "first 16 KiB fetch after 7 s idle: $(ip netns exec "$CL" curl -s -o /dev/null \
	-w '%{time_total}' --max-time 30 http://10.81.0.2:8080/small.bin) s"

tc_curl_reset "$CL" "$work/py.log" "q=EVIL" --max-time 60 "http://10.81.0.2:8080/x?q=EVIL"
echo "EVIL request reset, the guest's server never saw it: $TC_RESET_ERR"
for i in 1 2 3; do
	code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 60 \
		http://10.81.0.2:8080/small.bin) || true
	[ "$code" = 200 ] || fail "clean request $i after the reset: $code"
done
echo "3 clean requests after the reset: ok"
st=$(ctl_ok stats)
echo "$st" | tt_json 'any(d["vnf"] == "x" and d["rule"] == 1 and d["chain"] == "g-in" for d in j["denials"])' |
	grep -q True || fail "stats.denials has no denial by x: $st"
den=$(echo "$st" | tt_json '[c for c in j["chains"] if c["dir"]=="in"][0]["denied"]')
[ "$den" -ge 1 ] || fail "in chain denied $den"
vl=$(ctl_ok vnf.ls)
echo "$vl" | tt_json '" ".join("%s:%d/%d bells %d" % (v["name"], v["dispatched"], v["verdicts"], v["bells"]) for v in j["vnfs"])'
# A VNF in a VM has no bell (its wake-ups would not reach the host): napped.
[ "$(echo "$vl" | tt_json '[v for v in j["vnfs"] if v["name"]=="x"][0]["bells"]')" = 0 ] ||
	fail "x, in a VM, has a bell: $vl"
echo "$vl" | tt_json '[v for v in j["vnfs"] if v["name"]=="x"][0]["verdicts"] >= 64' | grep -q True ||
	fail "x gave fewer verdicts than the 1 MiB response has descriptors: $vl"
grep -aq 'cannot map granted region' "$work/serial.log" && fail "the guest's VNF could not map a grant"

# Revoked (the patched QEMU's "revoked" property): the guest's VNF reads
# all ones, its child exits ("gone", status 3), the agent lives on; x's
# work goes unanswered, the TOE fails it closed after 5 s (hung).
# Re-granted: the agent serves the device again, a new vnf.attach reopens
# x's channels and re-sends the grants, clean requests pass.
if "$VM_QEMU" -device ivshmem-plain,help 2>/dev/null | grep -q revoked && command -v socat >/dev/null; then
	vm_qmp "$work/qmp.sock" '{"execute":"qom-set","arguments":{"path":"/machine/peripheral/iv2","property":"revoked","value":true}}' >/dev/null
	vm_wait_line "$work/serial.log" "tochain-vnf: /dev/tochain/$name.vnf-x gone \(status 3\)" 20 "$qpid" ||
		fail "the agent's child did not leave the revoked device"
	echo "revoked: the guest's child left (status 3)"
	rc=$(tt_fetch http://10.81.0.2:8080/small.bin)
	[ "$rc" != 0 ] || fail "a request passed while x's region was revoked"
	grep -q 'chain: vnf x failed (no progress: hung), policy closed' "$work/toe.log" ||
		fail "x was not failed closed while revoked"
	echo "revoked: request refused (curl $rc), x failed closed"
	vm_qmp "$work/qmp.sock" '{"execute":"qom-set","arguments":{"path":"/machine/peripheral/iv2","property":"revoked","value":false}}' >/dev/null
	for i in $(seq 100); do
		[ "$(tr -d '\r' <"$work/serial.log" | grep -ac "tochain-vnf: serving /dev/tochain/$name.vnf-x")" -ge 2 ] && break
		sleep 0.2
	done
	[ "$(tr -d '\r' <"$work/serial.log" | grep -ac "tochain-vnf: serving /dev/tochain/$name.vnf-x")" -ge 2 ] ||
		fail "the agent did not serve the re-granted device"
	ctl_ok vnf.attach "{\"name\":\"x\",\"pid\":$qpid}" >/dev/null || fail "vnf.attach after the re-grant"
	ok=
	for i in $(seq 20); do
		code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 30 \
			http://10.81.0.2:8080/small.bin) || true
		[ "$code" = 200 ] && { ok=1; break; }
		sleep 0.5
	done
	[ -n "$ok" ] || fail "no clean request passed after the re-grant"
	echo "re-granted: served again, clean request passes"
else
	echo "note: $VM_QEMU has no ivshmem revoked property (make qemu): revocation not checked"
fi

# Unplugged (device_del; the guest ejects it): the child leaves (status 3
# when it sees POLLHUP first, 135 when it dies of SIGBUS), the agent lives
# on and serves the device again once it is plugged back in.
count() { tr -d '\r' <"$work/serial.log" | grep -ac -- "$1" || true; }
if command -v socat >/dev/null; then
	nserve=$(count "tochain-vnf: serving /dev/tochain/$name.vnf-x")
	ngone=$(count "tochain-vnf: /dev/tochain/$name.vnf-x gone")
	vm_qmp "$work/qmp.sock" '{"execute":"device_del","arguments":{"id":"iv2"}}' |
		grep -q '"error"' && fail "device_del refused"
	for i in $(seq 100); do
		[ "$(count "tochain-vnf: /dev/tochain/$name.vnf-x gone")" -gt "$ngone" ] && break
		sleep 0.2
	done
	tr -d '\r' <"$work/serial.log" | grep -a "tochain-vnf: /dev/tochain/$name.vnf-x gone" |
		tail -n 1 | grep -aqE 'status (3|135)\)' || fail "the child did not leave the unplugged device"
	echo "unplugged: $(tr -d '\r' <"$work/serial.log" | grep -a 'gone (status' | tail -n 1)"
	for i in $(seq 50); do
		vm_qmp "$work/qmp.sock" '{"execute":"device_add","arguments":{"driver":"ivshmem-plain","memdev":"hmb2","id":"iv2"}}' |
			grep -q '"error"' || break
		sleep 0.2
	done
	for i in $(seq 100); do
		[ "$(count "tochain-vnf: serving /dev/tochain/$name.vnf-x")" -gt "$nserve" ] && break
		sleep 0.2
	done
	[ "$(count "tochain-vnf: serving /dev/tochain/$name.vnf-x")" -gt "$nserve" ] ||
		fail "the agent did not serve the re-plugged device"
	ctl_ok vnf.attach "{\"name\":\"x\",\"pid\":$qpid}" >/dev/null || fail "vnf.attach after the re-plug"
	ok=
	for i in $(seq 20); do
		code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 30 \
			http://10.81.0.2:8080/small.bin) || true
		[ "$code" = 200 ] && { ok=1; break; }
		sleep 0.5
	done
	[ -n "$ok" ] || fail "no clean request passed after the re-plug"
	echo "re-plugged: served again, clean request passes"
fi
if grep -aE 'GUEST-DMESG.*(BUG:|WARNING:|Oops|Call Trace)' "$work/serial.log"; then
	fail "kernel splat in the guest"
fi

# QEMU dies: the TOE finds x's process gone and fails it closed.
kill -9 "$qpid"; wait "$qpid" 2>/dev/null || true; qpid=
t0=$(date +%s.%N)
ok=
for i in $(seq 10); do
	rc=$(tt_fetch http://10.81.0.2:8080/small.bin)
	if [ "$rc" != 0 ]; then ok=1; break; fi
	sleep 0.5
done
[ -n "$ok" ] || fail "requests still pass with the guest's VNF dead"
echo "QEMU killed: request refused (curl $rc) after $(vm_since "$t0") s"
grep 'chain: vnf x' "$work/toe.log" | tail -n 3
grep -q 'chain: vnf x failed (process died), policy closed' "$work/toe.log" ||
	fail "no failure of x in the TOE log"
ctl_ok vnf.ls | tt_json '[v for v in j["vnfs"] if v["name"]=="x"][0]["failed"]' | grep -q True ||
	fail "vnf.ls does not say x failed"
tt_toe_stop || fail "TOE stop"
echo "PASS 706_vm_vnf_guest"
