#!/usr/bin/env bash
# timeout: 420
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
# reset and counted as x's denial, clean requests afterwards, the
# guest's VNF counted the descriptors (its verdicts went through the
# guest's mappings of R and R.out, named after their headers: vm706,
# vm706.out); then QEMU is killed and the TOE fails x closed: requests
# are reset within 10 s.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
# the patched QEMU if it was built (make qemu), else Debian's
if [ -z "${VM_QEMU:-}" ]; then
	for q in /var/cache/tochain/qemu/*/bin/qemu-system-x86_64; do
		[ -x "$q" ] && VM_QEMU=$q
	done
fi
. "$top/tests/lib/netns.sh"
. "$top/toe/toe_testlib.sh"
# shellcheck source=../../vm/qemu.sh
. "$top/vm/qemu.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }
for c in ip curl sha256sum cpio python3 truncate "$VM_QEMU"; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not installed"; exit 77; }
done
for f in bin/tochain-toe bin/tochain-vnf bin/tochain-run lib/libtochain-preload.so \
	guest-drivers/tochain_ivshmem.ko vm/ivshmem-guest-test; do
	[ -e "$build/$f" ] || { echo "FAIL: $build/$f missing (make)"; exit 1; }
done
guest_rt=$("$top/vm/build-guest.sh" "$build" --runtime) || { echo "FAIL: guest build"; exit 1; }

tt_setup 706
name=vm706
qpid=
stop_qemu() {
	[ -n "$qpid" ] && { kill -9 "$qpid"; wait "$qpid"; } 2>/dev/null
	qpid=
}
tc_on_exit stop_qemu
fail() {
	echo "FAIL: $*"
	echo "--- serial"; tr -d '\r' <"$work/serial.log" 2>/dev/null | tail -n 40 || true
	echo "--- toe"; tail -n 20 "$work/toe.log" 2>/dev/null || true
	echo "--- qemu"; cat "$work/qemu.out" 2>/dev/null || true
	exit 1
}

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
cat "$guest_rt/initramfs.cpio" "$work/extra.cpio" >"$work/guest/initramfs.cpio"
ln -s "$(readlink -f "$guest_rt/kernel")" "$work/guest/kernel"

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
		-device "ivshmem-plain,memdev=hmb$i")
	echo "$(basename "$f"): $sz bytes"
	i=$((i + 1))
done

mkdir "$work/www"
head -c $((1 << 20)) /dev/urandom >"$work/www/big.bin"
head -c $((16 << 10)) /dev/urandom >"$work/www/small.bin"
want=$(sha256sum <"$work/www/big.bin" | cut -d' ' -f1)
tt_serve "$work/www" 8080 || fail "http server"

# -m 512: the runtime image (with tochain-vnf's libraries) is ~90 MB, held
# twice while the kernel unpacks it.
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

set +e
ip netns exec "$CL" curl -sS --max-time 60 -o /dev/null "http://10.81.0.2:8080/x?q=EVIL" 2>"$work/evil.err"
rc=$?
set -e
echo "EVIL request: curl exit $rc: $(cat "$work/evil.err")"
[ $rc = 56 ] || [ $rc = 52 ] || fail "the EVIL connection was not reset (curl $rc)"
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
echo "$vl" | tt_json '" ".join("%s:%d/%d" % (v["name"], v["dispatched"], v["verdicts"]) for v in j["vnfs"])'
echo "$vl" | tt_json '[v for v in j["vnfs"] if v["name"]=="x"][0]["verdicts"] >= 64' | grep -q True ||
	fail "x gave fewer verdicts than the 1 MiB response has descriptors: $vl"
grep -aq 'cannot map granted region' "$work/serial.log" && fail "the guest's VNF could not map a grant"

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
