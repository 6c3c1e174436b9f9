#!/usr/bin/env bash
# timeout: 420
# tochaind + libvirt: a test guest runs as a libvirt domain (direct kernel
# boot, TCG here); "sfc-ctl vm add web1 --domain DOM" builds the TOE
# container and hot-adds the region to the running domain as an
# ivshmem-plain <shmem>; inside, the guest reads the header the TOE
# formatted (magic, name) and tochain_ivshmem.ko names the node
# /dev/tochain/web1; vm show lists the vCPU threads, which are QEMU's
# vCPU threads; vm del unplugs the device (the guest's driver lets it go)
# and removes the /dev/shm link.  libvirtd is started here if none runs
# (and stopped again), a cold one probes QEMU first (about 1.5 min here).
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
# shellcheck source=../guest/libvirt-domain.sh
. "$top/tests/guest/libvirt-domain.sh"
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"
tc_init

for c in libvirtd virsh virtlogd "${VM_QEMU:-qemu-system-x86_64}" busybox cpio; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not installed (tochaind/deps.txt, tests/guest/deps.txt)"; exit 77; }
done
bin=$build/bin
work=$(mktemp -d /tmp/tochain-710.XXXXXX)
regions=/dev/shm/tochain-710.$$	# <shmem> backing files must be on /dev/shm
fab=tcf$TC_SUFFIX
dom=tochain-710-$$
vm=web1
export TOCHAIN_SOCKET=$work/ctl.sock
TD_PID= schedpid=
cleanup() {
	set +e
	[ -n "$TD_PID" ] && sfc vm del "$vm" >/dev/null 2>&1
	lv_domain_destroy "$dom"
	if [ -n "$TD_PID" ]; then kill "$TD_PID"; wait "$TD_PID"; fi
	if [ -n "$schedpid" ]; then kill "$schedpid"; wait "$schedpid"; fi
	ip netns del "$fab-$vm" 2>/dev/null
	ip netns del "$fab" 2>/dev/null
	rm -f "/dev/shm/tochain-$fab-$vm"
	rm -rf "$work" "$regions"
	lv_daemon_stop
}
tc_on_exit cleanup
fail_logs() {
	echo "--- serial"; tr -d '\r' <"$work/serial.log" 2>/dev/null | grep -av '^\[' | tail -40
	echo "--- tochaind"; tail -20 "$work/tochaind.log" 2>/dev/null
	echo "--- qemu"; tail -5 "/var/log/libvirt/qemu/$dom.log" 2>/dev/null
}
tc_on_fail fail_logs
field() { sfc --json vm show "$vm" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

guest=$("$top/tests/guest/build-guest.sh" "$build")
t0=$(date +%s.%N)
if ! lv_daemon_start; then
	echo "SKIP: libvirtd does not start here"
	exit 77
fi
echo "libvirtd: $([ "$LV_STARTED" = 1 ] && echo started || echo already running), ready after $(vm_since "$t0") s"

# The CPU scheduler (libvirt backend on the host cgroups): tochaind
# registers the domain's vCPUs with it by domain name.
"$bin/tochain-sched" --socket "$work/sched.sock" --backend libvirt --libvirt-uri "$LV_URI" \
	--cgroup "tochain-710-$$" --sync-cpus 0-1 --duration 400 --print-every 0 \
	>"$work/sched.log" 2>&1 &
schedpid=$!
td_daemon --foreground "$work/tochaind.log" --fabric-ns "$fab" --bridge tcbr0 \
	--region-dir "$regions" --libvirt-uri "$LV_URI" --sched-socket "$work/sched.sock"

lv_domain_xml "$dom" "$guest" "$work" "$vm" >"$work/domain.xml"
lv_virsh define "$work/domain.xml" >/dev/null || fail "virsh define"
echo "domain $dom: type $(sed -n "s/^<domain type='\(.*\)'>/\1/p" "$work/domain.xml")"
t0=$(date +%s.%N)
lv_virsh start "$dom" >/dev/null || fail "virsh start"
qpid=$(lv_qemu_pid "$dom")
[ -n "$qpid" ] && kill -0 "$qpid" || fail "no QEMU pid for $dom"
vm_wait_line "$work/serial.log" '^GUEST-WAIT-DEVICE' 120 "$qpid" || fail "guest did not boot"
echo "boot to /init: $(vm_since "$t0") s"

echo "--- refused: unknown domain, bad domain name, size no BAR can have"
set +e
sfc vm add "$vm" --ip 10.71.0.2/24 --domain nosuch-$$ 2>"$work/err"; rc1=$?
sfc vm add "$vm" --ip 10.71.0.2/24 --domain "a/b" 2>>"$work/err"; rc2=$?
sfc vm add "$vm" --ip 10.71.0.2/24 --domain "$dom" --region-size 3M 2>>"$work/err"; rc3=$?
set -e
[ $rc1 = 1 ] && [ $rc2 = 1 ] && [ $rc3 = 1 ] || fail "refusals exited $rc1 $rc2 $rc3"
grep -q "nosuch-$$" "$work/err" || fail "no reason given: $(cat "$work/err")"
[ -z "$(ls -A "$regions")" ] || fail "a refused vm add left $(ls "$regions")"
ip netns list | grep -q "$fab-$vm" && fail "a refused vm add left its namespace"

echo "--- vm add --domain hot-adds the region"
t1=$(date +%s.%N)
sfc vm add "$vm" --ip 10.71.0.2/24 --region-size 1M --domain "$dom" >/dev/null || fail "vm add"
echo "vm add: $(vm_since "$t1") s"
[ "$(field domain)" = "$dom" ] || fail "vm show has no domain"
region=$(field region)
link=/dev/shm/tochain-$fab-$vm
[ "$(stat -c %i "$link")" = "$(stat -c %i "$region")" ] || fail "$link is not the region $region"
[ "$(stat -c %U "$region")" = libvirt-qemu ] || [ "$(stat -c %u "$region")" = 0 ] ||
	fail "region owned by $(stat -c %U "$region")"
lv_virsh dumpxml "$dom" | grep -q "<shmem name='tochain-$fab-$vm'>" || fail "no <shmem> in the live XML"
vm_wait_line "$work/serial.log" '^GUEST-READY' 120 "$qpid" || fail "guest did not see the device"
echo "vm add to /dev/tochain/$vm in the guest: $(vm_since "$t1") s"

echo "--- vm show lists the vCPU threads of the domain's QEMU"
sfc --json vm show "$vm" >"$work/show.json"
tids=$(python3 -c 'import json,sys; print(" ".join(map(str, json.load(sys.stdin)["vcpu_tids"])))' <"$work/show.json")
echo "vcpu_tids: $tids (QEMU pid $qpid)"
[ "$(echo "$tids" | wc -w)" = 1 ] || fail "expected 1 vCPU thread: $(cat "$work/show.json")"
for t in $tids; do
	[ -d "/proc/$qpid/task/$t" ] || fail "thread $t is not a thread of QEMU $qpid"
	comm=$(cat "/proc/$qpid/task/$t/comm")
	[[ $comm == "CPU "[0-9]*/* ]] || fail "thread $t is '$comm', not a vCPU thread"
done
sfc vm show "$vm" | grep -q "^vcpu_tids *$tids\$" || fail "text vm show: no vcpu_tids line"

echo "--- tochaind registered the domain's vCPUs with tochain-sched"
for i in $(seq 50); do
	"$bin/tochain-sched" --socket "$work/sched.sock" --ctl sched.show >"$work/sched.json" 2>&1 || true
	grep -q "\"$dom\"" "$work/sched.json" && break
	sleep 0.2
done
python3 - "$dom" "$tids" "$vm" "$work/sched.json" <<'PY' || fail "domain not in sched show: $(cat "$work/sched.json")"
import json, sys
dom, tids, vm = sys.argv[1], set(map(int, sys.argv[2].split())), sys.argv[3]
r = json.load(open(sys.argv[4]))
assert any(d.get("domain", d.get("name")) == dom for d in r["domains"]), r["domains"]
got = {t["tid"] for t in r["threads"] if t.get("domain") == dom}
assert got == tids, (got, tids)
assert all(t.get("vm") == vm for t in r["threads"] if t.get("domain") == dom)
PY
[ "$(field sched)" = "registered with tochain-sched: 1 vCPU threads" ] ||
	fail "vm show has no sched note: $(sfc --json vm show "$vm")"

echo "--- vm del unplugs the device"
t1=$(date +%s.%N)
sfc vm del "$vm" >/dev/null || fail "vm del"
echo "vm del: $(vm_since "$t1") s"
[ ! -e "$link" ] || fail "$link left behind"
vm_wait_line "$work/serial.log" '^GUEST-(DONE|STILL-PLUGGED)' 60 "$qpid" || fail "guest never saw the unplug"
echo "unplug complete in the guest: $(vm_since "$t1") s"
lv_virsh dumpxml "$dom" | grep -q "<shmem" && fail "<shmem> still in the domain XML"
lv_virsh dumpxml --inactive "$dom" | grep -q "<shmem" && fail "<shmem> still in the configuration"
ip netns list | grep -q "$fab-$vm" && fail "namespace left behind"

grep -a -E '^(PASS|FAIL|GUEST-)' "$work/serial.log" | grep -av 'DMESG.*line:' | tr -d '\r'
vm_check_log "$work/serial.log" "hot-added device [0-9a-f:.]*" "region magic" \
	"region name $vm" "/dev/tochain/$vm" "device unplugged" "node removed" || fail "guest checks"
kill "$TD_PID"; wait "$TD_PID" || true
TD_PID=
if grep -E 'Sanitizer|runtime error' "$work/tochaind.log"; then fail "tochaind: sanitizer report"; fi
echo "PASS 710_libvirt_guest"
