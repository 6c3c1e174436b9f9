#!/usr/bin/env bash
# tochaind + sfc-ctl: a VM's TOE container is built and removed for real
# (namespace with the VM's address, veth in the fabric bridge, cgroup,
# region, running TOE); bad requests are refused and change nothing; the
# daemon killed with SIGKILL comes back with its VMs and their TOEs; a
# dead TOE is restarted.
# timeout: 300
set -euo pipefail
. "$TOCHAIN_TOP/tests/lib/netns.sh"
. "$TOCHAIN_TOP/tests/lib/tochaind.sh"
tc_init
build=$TOCHAIN_BUILD
bin=$build/bin
work=$(mktemp -d /dev/shm/tochaind-test.XXXXXX)	# regions only on tmpfs (below)
fab=tcf$TC_SUFFIX
export TOCHAIN_SOCKET=$work/ctl.sock
start_daemon() {
	td_daemon --fabric-ns "$fab" --bridge tcbr0 --region-dir "$work/regions"
}
cleanup_daemon() {
	for vm in $(sfc --json vm ls 2>/dev/null | python3 -c 'import json,sys; [print(v["name"]) for v in json.load(sys.stdin)["vms"]]' 2>/dev/null); do
		sfc vm del "$vm" || true
	done
	pkill -f "tochaind --state-dir $work/state" || true
	ip netns del "$fab" 2>/dev/null || true
	rm -rf "$work"
}
tc_on_exit cleanup_daemon
field() { sfc --json vm show "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }

echo "--- regions on a disk filesystem are refused"
# they hold the VMs' traffic: the kernel would write it all out
disk=
for d in /var/tmp /var /tmp /; do
	case $(stat -f -c %T "$d") in tmpfs | ramfs | hugetlbfs) ;; *) disk=$d; break ;; esac
done
[ -n "$disk" ] || fail "no directory on a disk filesystem to try --region-dir with"
ddir=$(mktemp -d "$disk/tc200-regions.XXXXXX")
tc_on_exit "rm -rf $ddir"
rc=0
timeout 10 "$bin/tochaind" --foreground --state-dir "$work/state-disk" --socket "$work/disk.sock" \
	--fabric-ns "$fab" --region-dir "$ddir" 2>"$work/disk.err" || rc=$?
[ $rc = 1 ] || fail "tochaind with --region-dir on $disk exited $rc, want 1: $(cat "$work/disk.err")"
grep -q "region directory $ddir is not on tmpfs or hugetlbfs" "$work/disk.err" ||
	fail "no reason given: $(cat "$work/disk.err")"
[ ! -e "$work/disk.sock" ] || fail "tochaind listened with its regions on a disk"
[ -z "$(ls -A "$ddir")" ] || fail "something was written to $ddir"

start_daemon
sfc version | grep -q 'protocol 1' || fail "version"

echo "--- vm add builds the container"
sfc vm add web1 --ip 10.61.0.2/24
ns=$(field web1 netns); veth=$(field web1 veth); region=$(field web1 region)
cg=$(field web1 cgroup); toe=$(field web1 toe_pid)
ip netns list | grep -qw "$ns" || fail "namespace $ns missing"
ip -n "$ns" -4 addr show eth0 | grep -q '10.61.0.2/24' || fail "address missing"
ip -n "$fab" link show "$veth" | grep -q 'master tcbr0' || fail "veth not in the bridge"
# with br_netfilter loaded, bridged frames must not walk the fabric's IP hooks
if ip netns exec "$fab" test -e /proc/sys/net/bridge/bridge-nf-call-iptables; then
	for k in iptables ip6tables arptables; do
		v=$(ip netns exec "$fab" cat /proc/sys/net/bridge/bridge-nf-call-$k)
		[ "$v" = 0 ] || fail "bridge-nf-call-$k is $v in the fabric namespace"
	done
fi
[ -s "$region" ] || fail "region file missing"
"$bin/tochain-region" info "$region" | grep -q "^region web1: kind guest" || fail "region not valid"
[ -S "$region.sock" ] || fail "TOE is not listening on $region.sock"
[ "$(field web1 toe)" = running ] || fail "TOE not running"
[ "$(ip netns identify "$toe")" = "$ns" ] || fail "TOE runs outside its namespace"
grep -q "^$toe\$" "/sys/fs/cgroup/cpu/$cg/cgroup.procs" 2>/dev/null ||
	grep -q "^$toe\$" "/sys/fs/cgroup/$cg/cgroup.procs" || fail "TOE is not in its cgroup"
# the region the TOE built: tochaind's slot size and the buffers that fit
geo() { "$bin/tochain-region" info "$1" --json | python3 -c "import json,sys; g=json.load(sys.stdin); print(g['slot_size'], g['size'], g['nbufs'], g['nchannels'])"; }
read -r slot size nbufs nch <<<"$(geo "$region")"
[ "$slot" = 8192 ] && [ "$(field web1 slot_size)" = 8192 ] || fail "default slot size: region $slot"
[ "$size" -le $((64 << 20)) ] || fail "the region ($size bytes) outgrew its default 64M"
# every channel keeps its 1 MiB of grants (TOE_GRANT_BYTES) within half the
# pool, which the TOE would otherwise halve: a 64 KiB response in one burst
[ $((nch * ((1 << 20) / slot) + 16)) -le $((nbufs / 2)) ] ||
	fail "the default region's $nbufs buffers halve $nch channels' 1 MiB of grants"
tc_fabric_ns=$fab
TC_FABRIC=$fab TC_BRIDGE=tcbr0 tc_host cli client 10.61.0.100/24
ip netns exec "$cli" ping -c 1 -W 2 10.61.0.2 >/dev/null || fail "the VM address does not answer"

echo "--- bad requests are refused with exit 1 and change nothing"
before=$(sfc --json vm ls)
for args in "vm add web1 --ip 10.61.0.3/24" "vm add web2 --ip 10.61.0.2/24" \
	    "vm add Web2 --ip 10.61.0.3/24" "vm add web2 --ip 10.61.0.300/24" \
	    "vm add web2 --ip 10.61.0.3/40" "vm add web2 --ip fd00::1/200" \
	    "vm add web2 --ip 10.61.0.3/24 --region-size 1K" "vm add web2 --ip 10.61.0.3/24 --slot-size 3K" \
	    "vm add web2 --ip 10.61.0.3/24 --slot-size 128K" \
	    "vm add web2 --ip 10.61.0.3/24 --region-size 1M --slot-size 64K" "vm del nosuch" "vm show nosuch"; do
	set +e; (sfc $args) 2>"$work/err"; rc=$?; set -e
	[ $rc -eq 1 ] || fail "'$args' exited $rc, not 1"
	[ "$(wc -l <"$work/err")" -eq 1 ] || fail "'$args' did not give one line: $(cat "$work/err")"
done
set +e; sfc vm add 2>/dev/null; rc=$?; sfc bogus 2>/dev/null; rc2=$?; set -e
[ $rc -eq 2 ] && [ $rc2 -eq 2 ] || fail "bad usage must exit 2"
[ "$(sfc --json vm ls)" = "$before" ] || fail "a refused request changed the state"
# Garbage on the control socket.
python3 - "$TOCHAIN_SOCKET" <<'PY'
import socket, sys
for msg in [b"garbage\n", b"{\"v\":1}\n", b"{\"v\":9,\"cmd\":\"vm.ls\"}\n", b"\x00\xff\n", b"[1,2]\n", b"{" * 100000 + b"\n"]:
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(msg)
    r = s.makefile().readline(); s.close()
    assert '"ok":false' in r, (msg[:20], r)
PY
[ "$(sfc --json vm ls)" = "$before" ] || fail "garbage changed the state"

echo "--- a slot size of the VM's choosing reaches its TOE, and stays across restarts"
sfc vm add web3 --ip 10.61.0.4/24 --region-size 4M --slot-size 16K >/dev/null
region3=$(field web3 region)
read -r slot size _ <<<"$(geo "$region3")"
[ "$slot" = 16384 ] && [ "$size" -le $((4 << 20)) ] || fail "web3's region: slot $slot, $size bytes"
sfc vm ls | tee "$work/ls"
grep -Eq '^web1 .* 8K +/' "$work/ls" && grep -Eq '^web3 .* 16K +/' "$work/ls" ||
	fail "vm ls does not show the slot sizes"
toe3=$(field web3 toe_pid)

echo "--- the daemon killed with SIGKILL comes back with its VMs"
pkill -9 -f "tochaind --state-dir $work/state"
sleep 0.2
start_daemon
[ "$(field web1 toe_pid)" = "$toe" ] || fail "the TOE was not kept across the restart"
[ "$(field web1 toe)" = running ] || fail "TOE not running after the restart"
ip netns exec "$cli" ping -c 1 -W 2 10.61.0.2 >/dev/null || fail "VM unreachable after restart"
[ "$(field web3 slot_size)" = 16384 ] || fail "web3's slot size was lost across the restart"
kill -9 "$toe3"
for i in $(seq 50); do
	[ "$(field web3 toe_pid)" != "$toe3" ] && [ "$(field web3 toe)" = running ] && break
	sleep 0.2
done
[ "$(field web3 toe_pid)" != "$toe3" ] || fail "web3's TOE not restarted"
read -r slot size _ <<<"$(geo "$region3")"
[ "$slot" = 16384 ] || fail "web3's restarted TOE runs slot size $slot"
sfc vm del web3

echo "--- a dead TOE is restarted"
kill -9 "$toe"
for i in $(seq 50); do
	new=$(field web1 toe_pid)
	[ "$new" != "$toe" ] && [ "$(field web1 toe)" = running ] && break
	sleep 0.2
done
[ "$new" != "$toe" ] || fail "TOE not restarted"

echo "--- vm del removes everything"
sfc vm del web1
ip netns list | grep -qw "$ns" && fail "namespace left behind"
[ -e "$region" ] && fail "region left behind"
[ -d "/sys/fs/cgroup/cpu/$cg" ] && fail "cgroup left behind"
ip -n "$fab" link show "$veth" 2>/dev/null && fail "veth left behind"
[ "$(sfc --json vm ls | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vms"]))')" = 0 ]
echo "all good"
