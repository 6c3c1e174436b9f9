#!/usr/bin/env bash
# make demo VM=qemu: the demo of scripts/demo.sh with the web server in a
# real QEMU guest instead of a stand-in namespace.
#
# tochaind builds the TOE container of VM "web1" (namespace with the VM's
# address on the fabric bridge, cgroup, region, TOE); tochain-vmlink
# attaches channels to that TOE for the guest's processes and is the
# ivshmem server of the guest's ivshmem-doorbell device; the guest (the
# runtime test image of tests/guest/build-guest.sh --runtime, TCG unless KVM
# works) finds /dev/tochain/web1 and runs an unmodified
# python3 -m http.server under tochain-run.  A client namespace on the
# fabric fetches a page, then loads the server with wrk.  Prints
# requests/s and the CPU each part used.  Everything is removed at exit.
#
#   scripts/demo-vm.sh BUILD_DIR        (DEMO_SECONDS=10 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: demo-vm.sh BUILD_DIR}" && pwd)
. tests/lib/netns.sh
. tests/guest/qemu.sh
tc_init
t_start=$(date +%s.%N)
bin=$build/bin
work=$(mktemp -d /tmp/tochain-demo-vm.XXXXXX)
fab=tcdemo$TC_SUFFIX
export TOCHAIN_SOCKET=$work/ctl.sock
sfc() { "$bin/sfc-ctl" "$@"; }
qpid= lpid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	sfc vm del web1 >/dev/null 2>&1 || true
	pkill -f "tochaind --state-dir $work/state" || true
	ip netns del "$fab" 2>/dev/null || true
	rm -rf "$work"
}
tc_on_exit cleanup
secs=${DEMO_SECONDS:-10}

echo "== the guest image (kernel, driver, runtime, python3)"
guest_rt=$(tests/guest/build-guest.sh "$build" --runtime)
echo "$guest_rt"

echo
echo "== tochaind and the TOE container of VM web1 (10.70.0.2)"
"$bin/tochaind" --state-dir "$work/state" --socket "$TOCHAIN_SOCKET" \
	--fabric-ns "$fab" --region-dir "$work/regions"
sfc vm add web1 --ip 10.70.0.2/24 >/dev/null
sfc vm ls
region=$(sfc --json vm show web1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["region"])')
toe_cg=$(sfc --json vm show web1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["cgroup"])')

echo
echo "== tochain-vmlink: 4 channels of the TOE for the guest's processes, doorbells over ivshmem"
mkfifo "$work/ready"
"$bin/tochain-vmlink" --region "$region" --doorbell "$work/ivs.sock" --slots 4 \
	--ready-fd 3 3>"$work/ready" 2>"$work/link.log" &
lpid=$!
read -r -t 30 -n 1 _ <"$work/ready" || { echo "the link did not start"; cat "$work/link.log"; exit 1; }
echo "region $region ($(stat -c %s "$region") bytes), ivshmem server $work/ivs.sock"

echo
mkdir -p "$work/extra/www" "$work/guest"
head -c 1024 /dev/urandom | base64 -w 76 | head -c 1024 >"$work/extra/www/index.html"
cat >"$work/extra/guest.sh" <<'EOF'
#!/bin/sh
cd /www || exit 1
tochain-run -- python3 -m http.server --bind 0.0.0.0 8080 >/tmp/http.log 2>&1 &
echo "GUEST-HTTPD pid=$!"
wait
EOF
chmod 755 "$work/extra/guest.sh"
(cd "$work/extra" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/extra.cpio"
cat "$guest_rt/initramfs.cpio" "$work/extra.cpio" >"$work/guest/initramfs.cpio"
ln -s "$(readlink -f "$guest_rt/kernel")" "$work/guest/kernel"
vm_qemu_args "$work/guest" "$work/serial.log" "$work/qmp.sock" web1 \
	-chardev "socket,id=ivs,path=$work/ivs.sock" -device "ivshmem-doorbell,chardev=ivs,vectors=4"
echo "== QEMU guest web1 (${VM_ACCEL[*]}, 1 vCPU, 256 MiB, no NIC): python3 -m http.server under tochain-run"
t0=$(date +%s.%N)
"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
qpid=$!
vm_wait_line "$work/serial.log" '^GUEST-REGION' 120 "$qpid" || { cat "$work/qemu.out"; exit 1; }
tr -d '\r' <"$work/serial.log" | grep -a '^GUEST-REGION'
vm_wait_line "$work/serial.log" '^GUEST-HTTPD' 60 "$qpid"
TC_FABRIC=$fab TC_BRIDGE=tcbr0 tc_host cli client 10.70.0.100/24
tc_wait_port "$cli" 10.70.0.2 8080 90
echo "boot to serving: $(vm_since "$t0") s"

echo
echo "== a client on the fabric bridge fetches the page through the TOE"
ip netns exec "$cli" curl -sS -o "$work/got" -w 'HTTP %{http_code}, %{size_download} bytes in %{time_total}s\n' \
	http://10.70.0.2:8080/index.html
cmp -s "$work/got" "$work/extra/www/index.html" && echo "content matches the guest's file"

echo
echo "== wrk: 4 connections for ${secs}s"
cpu_ns() { cat "/sys/fs/cgroup/cpuacct/$toe_cg/cpuacct.usage" 2>/dev/null ||
	awk '/usage_usec/ {print $2 * 1000}' "/sys/fs/cgroup/$toe_cg/cpu.stat" 2>/dev/null || echo 0; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
toe0=$(cpu_ns)
q0=$(ticks "$qpid")
l0=$(ticks "$lpid")
ip netns exec "$cli" wrk -t 1 -c 4 -d "${secs}s" --latency http://10.70.0.2:8080/index.html | tee "$work/wrk.txt"
toe1=$(cpu_ns)
q1=$(ticks "$qpid")
l1=$(ticks "$lpid")
hz=$(getconf CLK_TCK)
rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
awk -v t0="$toe0" -v t1="$toe1" -v q0="$q0" -v q1="$q1" -v l0="$l0" -v l1="$l1" -v hz="$hz" \
	-v secs="$secs" -v rps="$rps" 'BEGIN {
	toe = (t1 - t0) / 1e9; vm = (q1 - q0) / hz; link = (l1 - l0) / hz;
	printf "\nrequests/s %s; CPU over the run: TOE %.2f s (%.0f%% of a core), guest (QEMU) %.2f s (%.0f%%), link %.2f s (%.0f%%)\n",
		rps, toe, 100 * toe / secs, vm, 100 * vm / secs, link, 100 * link / secs;
	if (rps > 0) printf "CPU per request: TOE %.1f us, guest %.1f us, link %.1f us\n",
		toe / (rps * secs) * 1e6, vm / (rps * secs) * 1e6, link / (rps * secs) * 1e6;
}'
echo
"$bin/tochain-region" info "$region"
echo
echo "demo took $(vm_since "$t_start") s"
