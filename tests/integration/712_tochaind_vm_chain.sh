#!/usr/bin/env bash
# timeout: 600
# tochaind runs the VM link of a libvirt VM (issue 7): a TCG guest with
# the runtime image runs as a libvirt domain; "sfc-ctl vm add --domain"
# builds the TOE container, starts tochain-vmlink (--wait doorbell: the
# link is the ivshmem server) and hot-plugs an ivshmem-doorbell <shmem>
# with <server path=LINK>.  Inside, once /dev/tochain/NAME appears, an
# unmodified python3 -m http.server runs under tochain-run, restarted by
# the guest only when the device was unplugged; every check that it
# serves also checks which process serves (GET /self/task/, /self being
# /proc/self).  From a client namespace on the fabric: a 4 MiB fetch
# (sha256); a VNF and an inbound chain on that VM: an attack is denied
# (the WAF's 403 page, or a reset, curl 56, from a null VNF), never
# reaches the guest's server (its request log on the console) and is
# counted by `sfc-ctl stats`, a clean fetch right after still arrives
# whole.  The TOE killed (issue 16): tochaind repairs it, the link follows
# the new TOE without a re-plug, the guest's runtime claims a channel of
# the new TOE and re-creates the listener: the same server process serves
# a whole 4 MiB again, and a connection it held open across the kill
# failed there with ECONNRESET (http.server's traceback), not EOF.  The
# link killed: tochaind restarts it and plugs the device again (the old
# server's pages are gone: SIGBUS); a new server serves.  A second guest runs a VNF
# (tochain-vnf --guest, `vnf add g --domain`) on this guest's in chain:
# tochaind grants it the regions, a 4 MiB fetch passes whole, a request
# carrying its marker is reset (curl 56) before the guest's server sees
# it, and chain del revokes (patched QEMU) or unplugs every grant while
# the first guest keeps serving.  vm del unplugs the device and stops the
# link; vm add --wait poll then serves through ivshmem-plain.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
build=$(cd "$build" && pwd)
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"
# shellcheck source=../guest/libvirt-domain.sh
. "$top/tests/guest/libvirt-domain.sh"

tc_need_root
tc_need_cmds ip curl cpio virsh libvirtd python3 sha256sum
emu=${TOCHAIN_QEMU:-$(ls -dt /var/cache/tochain/qemu/*/bin/qemu-system-x86_64 2>/dev/null | head -n 1 || true)}
[ -n "$emu" ] && [ -x "$emu" ] || emu=$(command -v "$VM_QEMU" || true)
[ -n "$emu" ] || { echo "SKIP: no QEMU"; exit 77; }
VM_QEMU=$emu
[ -x /usr/bin/python3 ] || fail "Debian's python3 missing (tests/guest/deps.txt)"
guest_rt=$("$top/tests/guest/build-guest.sh" "$build" --runtime) || fail "guest build"
guest_vnf=$("$top/tests/guest/build-guest.sh" "$build" --vnf) || fail "VNF guest build"

tc_init
work=$(mktemp -d /tmp/tochain-712.XXXXXX)
chmod 755 "$work"
regions=/dev/shm/tochain-712.$$	# <shmem> regions must be on /dev/shm
fab=tcf712-$TC_SUFFIX
fab=${fab:0:20}
dom=tochain-712-$$
vdom=tochain-712v-$$	# the VNF guest
vm=web712
export TOCHAIN_SOCKET=$work/ctl.sock
TD_PID=
held_pid=
cleanup712() {
	set +e
	[ -n "$held_pid" ] && kill "$held_pid" 2>/dev/null
	if [ -n "$TD_PID" ]; then
		sfc chain del web-in >/dev/null 2>&1
		sfc chain del web-g >/dev/null 2>&1
		sfc vm del "$vm" >/dev/null 2>&1
	fi
	lv_domain_destroy "$dom"
	lv_domain_destroy "$vdom"
	rm -f /dev/shm/tochain-grant-"$fab"-*
	if [ -n "$TD_PID" ]; then kill "$TD_PID"; wait "$TD_PID"; fi
	# what a failed vm del left (their command lines name $regions)
	pkill -9 -f "tochain-vmlink --region $regions/" 2>/dev/null
	pkill -9 -f "tochain-vnf --kind [a-z]* --region $regions/" 2>/dev/null
	pkill -9 -f "tochain-toe --region $regions/" 2>/dev/null
	ip netns del "$fab-$vm" 2>/dev/null
	ip netns del "$fab" 2>/dev/null
	rm -f "/dev/shm/tochain-$fab-$vm"
	rm -rf "$work" "$regions"
	lv_daemon_stop
}
tc_on_exit cleanup712
fail_logs() {
	echo "--- serial"; tr -d '\r' <"$work/serial.log" 2>/dev/null | grep -av '^\[' | tail -n 30
	echo "--- tochaind"; tail -n 25 "$work/tochaind.log" 2>/dev/null
	echo "--- link"; tail -n 25 "$work/state/link-$vm.log" 2>/dev/null
	echo "--- toe"; tail -n 30 "$work/state/toe-$vm.log" 2>/dev/null
	echo "--- VNF guest"; tr -d '\r' <"$work/vnf/serial.log" 2>/dev/null | grep -av '^\[' | tail -n 20
	echo "--- qemu"; tail -n 10 "/var/log/libvirt/qemu/$dom.log" 2>/dev/null
}
tc_on_fail fail_logs
field() { sfc --json vm show "$vm" | python3 -c "import json,sys; print(json.load(sys.stdin).get('$1', ''))"; }
alive() { [ -n "$1" ] && [ "$1" != 0 ] && kill -0 "$1" 2>/dev/null; }
fetch() { # URL -> sha256 of the body (of nothing when the fetch failed)
	rm -f "$work/body"
	ip netns exec "$CL" curl -sS --max-time 120 -o "$work/body" "$1" 2>"$work/curl.err" || true
	[ -f "$work/body" ] || : >"$work/body"
	sha256sum <"$work/body" | cut -d' ' -f1
}

if ! lv_daemon_start; then
	echo "SKIP: libvirtd does not start here"
	exit 77
fi
echo "emulator: $emu"

td_start712() {
	td_daemon --foreground "$work/tochaind.log" --fabric-ns "$fab" --bridge tcbr0 \
		--region-dir "$regions" --libvirt-uri "$LV_URI" --sched-socket "$work/no-sched.sock"
}
td_start712
TC_FABRIC=$fab TC_BRIDGE=tcbr0 tc_host CL cl 10.72.0.1/24

# The guest: our own /init (the runtime image's waits 20 s for a device
# present at boot; ours is hot-plugged later), the files to serve, and
# one server process for the whole test: it must outlive every repair.
# Its log goes to the console (serial.log): request lines show which
# requests reached it, tracebacks what its sockets failed with.  /www/self
# is /proc/self of whoever serves it: GET /self/task/ lists the serving
# process's thread ids, the first of which is its pid.
mkdir -p "$work/extra/www"
head -c $((4 << 20)) /dev/urandom >"$work/extra/www/big.bin"
echo probe >"$work/extra/www/probe.txt"
echo "TOCHAIN-712-EVIL in a response" >"$work/extra/www/evil.txt"
ln -s /proc/self "$work/extra/www/self"
want=$(sha256sum <"$work/extra/www/big.bin" | cut -d' ' -f1)
cat >"$work/extra/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
ip link set lo up 2>/dev/null
export PATH=/usr/bin:/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib
name=$(sed -n 's/.*tochain\.cmd=\([^ ]*\).*/\1/p' /proc/cmdline)
dev=/dev/tochain/$name
insmod /lib/tochain_ivshmem.ko && echo "GUEST-MODULE loaded"
i=0
while [ ! -e "$dev" ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "$dev" ] || { echo "FAIL no $dev"; poweroff -f; }
echo "GUEST-REGION $dev uptime=$(cut -d' ' -f1 /proc/uptime)"
cd /www
alive() { [ -r /proc/$pid/stat ] && [ "$(sed 's/.*) //' /proc/$pid/stat | cut -d' ' -f1)" != Z ]; }
n=0
while :; do
	n=$((n + 1))
	# HTTP/1.1: a connection stays open between requests (the test holds one)
	tochain-run -- python3 -m http.server --protocol HTTP/1.1 --bind 0.0.0.0 8080 &
	pid=$!
	echo "GUEST-HTTPD run=$n pid=$pid"
	# Not restarted while the device stays: a new TOE, the same server.
	while alive && [ -e "$dev" ]; do sleep 0.2; done
	# killed by an unplug, it may go before the device's node does
	i=0
	while ! alive && [ -e "$dev" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	st=
	if [ -e "$dev" ]; then
		wait $pid; st=$?
		# 135 is SIGBUS: it touched an unplugged device's pages, and the
		# node was back before we looked (unplug and plug in under 0.1 s)
		if [ $st != 135 ]; then
			echo "GUEST-HTTPD-EXIT pid=$pid status=$st"
			break
		fi
	fi
	# Unplugged (a new link, vm del): the device's pages are gone under
	# the process, which touching them kills (SIGBUS): a new one serves
	# when the device is back.
	echo "GUEST-UNPLUGGED"
	kill -9 $pid 2>/dev/null
	wait $pid
	i=0
	while [ ! -e "$dev" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$dev" ] || break
	echo "GUEST-REPLUGGED"
done
dmesg | grep -E 'BUG:|WARNING:|Oops|Call Trace|general protection' | sed 's/^/GUEST-DMESG /'
echo "GUEST-DONE"
poweroff -f
EOF
chmod 755 "$work/extra/init"

lv_domain_xml "$dom" "$guest_rt" "$work" "$vm" >"$work/domain.xml" || fail "domain xml"
(cd "$work/extra" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/extra.cpio"
cat "$guest_rt/initramfs.cpio" "$work/extra.cpio" >"$work/initrd.cpio"
chmod 644 "$work/initrd.cpio"
sed -i "s|<cmdline>.*</cmdline>|<cmdline>console=ttyS0 quiet panic=-1 tochain.cmd=$vm</cmdline>|" \
	"$work/domain.xml"
lv_virsh define "$work/domain.xml" >/dev/null || fail "virsh define"
t0=$(date +%s.%N)
lv_virsh start "$dom" >/dev/null || fail "virsh start"
qpid=$(lv_qemu_pid "$dom")
alive "$qpid" || fail "no QEMU pid for $dom"
vm_wait_line "$work/serial.log" '^GUEST-MODULE' 240 "$qpid" || fail "guest did not boot"
echo "boot to /init: $(vm_since "$t0") s"

echo "--- vm add --domain: TOE, link (doorbell), device"
set +e
sfc vm add "$vm" --ip 10.72.0.2/24 --wait sometimes --domain "$dom" 2>"$work/err"; rc1=$?
sfc vm add "$vm" --ip 10.72.0.2/24 --wait poll 2>>"$work/err"; rc2=$?
set -e
[ $rc1 = 2 ] && [ $rc2 = 1 ] || fail "refusals exited $rc1 $rc2: $(cat "$work/err")"
grep -q "needs --domain" "$work/err" || fail "no reason given: $(cat "$work/err")"
t1=$(date +%s.%N)
sfc vm add "$vm" --ip 10.72.0.2/24 --domain "$dom" >/dev/null || fail "vm add"
echo "vm add: $(vm_since "$t1") s"
sfc vm show "$vm"
[ "$(field wait)" = doorbell ] || fail "wait mode $(field wait), not doorbell"
[ "$(field link)" = running ] || fail "link not running"
lpid=$(field link_pid)
alive "$lpid" || fail "link pid $lpid"
sock=$(field link_socket)
[ -S "$sock" ] || fail "no link socket $sock"
[ "$(stat -c %a "$sock")" = 600 ] || fail "link socket mode $(stat -c %a "$sock")"
grep -q -- "--follow" "/proc/$lpid/cmdline" || fail "link not run with --follow"
# the TOE's region fits the BAR (the default 64M), which the link made the file's size
region=$(field region)
[ "$(stat -c %s "$region")" = $((64 << 20)) ] || fail "region file of $(stat -c %s "$region") bytes"
lv_virsh dumpxml "$dom" >"$work/live.xml"
grep -q "<model type='ivshmem-doorbell'/>" "$work/live.xml" || fail "no ivshmem-doorbell in the domain"
grep -q "<server path='$sock'/>" "$work/live.xml" || fail "the device's server is not the link"
vm_wait_line "$work/serial.log" '^GUEST-HTTPD run=1 ' 180 "$qpid" || fail "guest did not see the device"
echo "vm add to the server starting in the guest: $(vm_since "$t1") s"
tc_wait_port "$CL" 10.72.0.2 8080 180 || fail "port 8080 of the VM does not accept"
echo "vm add to serving: $(vm_since "$t1") s"
grep -q 'guest peer [0-9]* joined' "$work/state/link-$vm.log" || fail "QEMU never joined the link"

url=http://10.72.0.2:8080
runs() { grep -ac '^GUEST-HTTPD run=' "$work/serial.log" || true; }
server_pid() { # the pid of the guest's server of run N
	sed -n "s/^GUEST-HTTPD run=$1 pid=\([0-9]*\).*/\1/p" "$work/serial.log" | head -n 1
}
hpid=$(server_pid 1)
[ -n "$hpid" ] || fail "no server pid in the guest's log"
same_server() { # WHEN: the process serving is the one the guest started last, $hpid
	local p
	p=$(ip netns exec "$CL" curl -sS --max-time 60 "$url/self/task/" 2>"$work/curl.err" |
		sed -n 's/.*href="\([0-9]*\)\/".*/\1/p' | sort -n | head -n 1)
	[ "$p" = "$hpid" ] || fail "$1: served by pid ${p:-none} ($(cat "$work/curl.err")), not by $hpid"
	if grep -a '^GUEST-HTTPD-EXIT' "$work/serial.log"; then fail "$1: the server exited"; fi
	echo "$1: served by pid $hpid"
}
same_server "at the start"
t1=$(date +%s.%N)
got=$(fetch "$url/big.bin")
echo "fetch (4 MiB): $(vm_since "$t1") s"
[ "$got" = "$want" ] || fail "sha256 $got, want $want ($(cat "$work/curl.err"))"

echo "--- tochaind restarted: the link outlives it and is found again"
kill "$TD_PID"; wait "$TD_PID" || true
alive "$lpid" || fail "the link died with tochaind"
td_start712
[ "$(field link_pid)" = "$lpid" ] && [ "$(field link)" = running ] && [ "$(field wait)" = doorbell ] ||
	fail "after a restart: $(sfc --json vm show "$vm")"
grep -q "vm $vm: VM link" "$work/tochaind.log" && fail "the restarted tochaind restarted the link"

echo "--- a VNF and a chain in front of the guest"
if [ -d /usr/share/modsecurity-crs/rules ]; then
	kind=waf
	sfc vnf add sec --kind waf >/dev/null || fail "vnf add waf"
	attack_args=("$url/?id=1%27%20OR%20%271%27%3D%271%27%20UNION%20SELECT%20password%20FROM%20users--")
	attack_mark=UNION
else
	kind=null
	sfc vnf add sec --kind null --arg --deny-marker=TOCHAIN-712-DENY >/dev/null || fail "vnf add null"
	attack_args=("$url/probe.txt?m=TOCHAIN-712-DENY")
	attack_mark=TOCHAIN-712-DENY
fi
sfc chain add web-in --vm "$vm" --dir in --hop sec >/dev/null || fail "chain add"
echo "vnf kind: $kind"
if [ $kind = waf ]; then
	# the WAF answers a denied request with its 403 page, then closes
	set +e
	code=$(ip netns exec "$CL" curl -sS -o /dev/null -w '%{http_code}' --max-time 60 --path-as-is \
		"${attack_args[@]}" 2>"$work/err")
	rc=$?
	set -e
	[ $rc = 0 ] && [ "$code" = 403 ] || fail "the attack was not answered 403: curl $rc, HTTP $code $(cat "$work/err")"
	sleep 0.3	# as tc_curl_reset: a leaked request line has time to show
	if grep -aF "$attack_mark" "$work/serial.log"; then fail "the denied attack reached the guest's server"; fi
	echo "attack answered 403 by the WAF, not seen by the guest's server"
else
	# a reset (curl 56), and the request line never in the server's log
	tc_curl_reset "$CL" "$work/serial.log" "$attack_mark" --max-time 60 "${attack_args[@]}"
	echo "attack reset (curl 56), not seen by the guest's server"
fi
t1=$(date +%s.%N)
got=$(fetch "$url/big.bin")
echo "clean fetch through the chain (4 MiB): $(vm_since "$t1") s"
[ "$got" = "$want" ] || fail "through the chain: sha256 $got, want $want ($(cat "$work/curl.err"))"
sfc --json stats >"$work/stats.json"
python3 - "$work/stats.json" "$vm" <<'PY' || fail "stats do not count the denial: $(cat "$work/stats.json")"
import json, sys
j, vm = json.load(open(sys.argv[1])), sys.argv[2]
c = [c for c in j["chains"] if c["name"] == "web-in"][0]
assert c["denied"] >= 1 and c["arrivals"] > c["denied"], c
d = [d for d in j["denials"] if d["chain"] == "web-in"]
assert d and all(x["vnf"] == "sec" and x["vm"] == vm for x in d), d
print("stats: arrivals %d, denied %d, last denial %s rule %s" % (
    c["arrivals"], c["denied"], d[-1]["vnf"], d[-1]["rule"]))
PY

echo "--- the TOE killed: repaired, the link follows it, the same server process serves again"
# A connection open in the server across the kill (HTTP/1.1: its handler
# waits in recv for the next request) must fail there with ECONNRESET,
# which http.server reports with a traceback; an EOF it would take silently.
resets() { grep -ac 'ConnectionResetError: \[Errno 104\]' "$work/serial.log" || true; }
r0=$(resets)
ip netns exec "$CL" python3 - 10.72.0.2 8080 "$work/held" <<'HELD' &
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=120)
s.sendall(b"GET /probe.txt HTTP/1.1\r\nHost: vm\r\n\r\n")
got = b""
while not got.endswith(b"probe\n"):
    b = s.recv(4096)
    if not b:
        break
    got += b
with open(sys.argv[3], "w") as f:
    f.write("answered\n" if got.endswith(b"probe\n") else "no answer\n")
try:
    while s.recv(4096):
        pass
except OSError:
    pass
HELD
held_pid=$!
for i in $(seq 300); do [ -s "$work/held" ] && break; sleep 0.2; done
[ "$(cat "$work/held" 2>/dev/null)" = answered ] || fail "the held connection got no answer: $(cat "$work/held" 2>/dev/null)"
tpid=$(field toe_pid)
kill -9 "$tpid"
t1=$(date +%s.%N)
for i in $(seq 150); do
	ntpid=$(field toe_pid)
	[ "$ntpid" != "$tpid" ] && [ "$(field toe)" = running ] && break
	sleep 0.2
done
[ "$ntpid" != "$tpid" ] || fail "tochaind did not restart the TOE"
for i in $(seq 150); do
	grep -q "following the new TOE" "$work/state/link-$vm.log" && break
	sleep 0.2
done
grep -q "following the new TOE" "$work/state/link-$vm.log" || fail "the link did not follow the new TOE"
[ "$(field link_pid)" = "$lpid" ] && alive "$lpid" || fail "the link was restarted"
echo "TOE restarted and followed: $(vm_since "$t1") s"
ok=
for i in $(seq 24); do
	got=$(fetch "$url/big.bin")
	[ "$got" = "$want" ] && { ok=1; break; }
	sleep 5
done
[ -n "$ok" ] || fail "no good fetch after the TOE restart (sha256 $got, $(cat "$work/curl.err"))"
echo "serving again after the TOE kill: $(vm_since "$t1") s"
[ "$(runs)" = 1 ] || fail "the guest restarted its server after the TOE kill"
same_server "after the TOE restart (the first server)"
for i in $(seq 50); do [ "$(resets)" -gt "$r0" ] && break; sleep 0.2; done
[ "$(resets)" -gt "$r0" ] || fail "the connection open across the TOE kill did not fail with ECONNRESET in the guest"
echo "the connection open across the kill failed with ECONNRESET in the guest's server"
kill "$held_pid" 2>/dev/null || true
wait "$held_pid" 2>/dev/null || true
held_pid=
grep -q "<server path='$sock'/>" <(lv_virsh dumpxml "$dom") || fail "the device changed"

serves_again() { # WHAT: a good 4 MiB fetch within 2 minutes
	local i
	for i in $(seq 24); do
		[ "$(fetch "$url/big.bin")" = "$want" ] && return 0
		sleep 5
	done
	fail "no good fetch $1"
}

echo "--- the link killed: restarted, the device plugged again (doorbell)"
n0=$(runs)
kill -9 "$lpid"
t1=$(date +%s.%N)
for i in $(seq 150); do
	nlpid=$(field link_pid)
	[ "$nlpid" != "$lpid" ] && [ "$(field link)" = running ] && break
	sleep 0.2
done
[ "$nlpid" != "$lpid" ] && alive "$nlpid" || fail "tochaind did not restart the link"
for i in $(seq 300); do
	grep -q "vm $vm: region plugged again" "$work/tochaind.log" && break
	sleep 0.2
done
grep -q "vm $vm: region plugged again" "$work/tochaind.log" || fail "the device was not plugged again"
echo "link restarted, device plugged again: $(vm_since "$t1") s"
lpid=$nlpid
grep -q "<server path='$sock'/>" <(lv_virsh dumpxml "$dom") || fail "no doorbell device after the re-plug"
for i in $(seq 600); do [ "$(runs)" -gt "$n0" ] && break; sleep 0.2; done
[ "$(runs)" -gt "$n0" ] || fail "no server started after the re-plug"
hpid=$(server_pid "$(runs)")
serves_again "after the link kill"
echo "serving again after the link kill: $(vm_since "$t1") s"
same_server "after the link kill (the server started after the re-plug)"

echo "--- a VNF in a second guest inspects this guest's requests; chain del revokes its grants"
# The VNF guest: the VNF image, the driver, tochain-vnf's agent (vnfs/runtime/README.md)
mkdir -p "$work/vnf/extra"
chmod 755 "$work/vnf"
cat >"$work/vnf/extra/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
export PATH=/usr/bin:/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib
insmod /lib/tochain_ivshmem.ko && echo "GUEST-MODULE loaded"
mkdir -p /dev/tochain
tochain-vnf --kind null --deny-marker TOCHAIN-712-EVIL --guest &
echo "GUEST-AGENT pid=$!"
while :; do sleep 3600; done
EOF
chmod 755 "$work/vnf/extra/init"
lv_domain_xml "$vdom" "$guest_vnf" "$work/vnf" vnf |
	sed "s|<memory unit='MiB'>256</memory>|<memory unit='MiB'>512</memory>|" >"$work/vnf/domain.xml"
(cd "$work/vnf/extra" && echo init | cpio -o -H newc --quiet -R 0:0) >>"$work/vnf/initrd.cpio"
t1=$(date +%s.%N)
lv_virsh create "$work/vnf/domain.xml" >/dev/null || fail "virsh create $vdom"
vqpid=$(lv_qemu_pid "$vdom")
vm_wait_line "$work/vnf/serial.log" '^GUEST-AGENT' 240 "$vqpid" || fail "the VNF guest did not start its agent"
echo "VNF guest up: $(vm_since "$t1") s"
sfc vnf add g --kind null --domain "$vdom" >/dev/null || fail "vnf add g --domain"
t1=$(date +%s.%N)
sfc chain del web-in >/dev/null || fail "chain del web-in"
sfc chain add web-g --vm "$vm" --dir in --hop g >/dev/null || fail "chain add web-g"
vm_wait_line "$work/vnf/serial.log" "tochain-vnf: serving /dev/tochain/$vm.vnf-g" 60 "$vqpid" ||
	fail "the VNF guest's agent does not serve $vm.vnf-g"
echo "in chain through the VNF guest set up: $(vm_since "$t1") s"
t1=$(date +%s.%N)
got=$(fetch "$url/big.bin")
echo "fetch through in [g in the VNF guest] (4 MiB): $(vm_since "$t1") s"
[ "$got" = "$want" ] || fail "through the VNF guest: sha256 $got, want $want ($(cat "$work/curl.err"))"
tc_curl_reset "$CL" "$work/serial.log" "TOCHAIN-712-EVIL" --max-time 60 "$url/probe.txt?m=TOCHAIN-712-EVIL"
sfc --json stats | python3 -c '
import json, sys
d = [d for d in json.load(sys.stdin)["denials"] if d["chain"] == "web-g"]
assert d and d[-1]["vnf"] == "g", d' || fail "stats name no denial by g"
echo "EVIL request reset by g in the VNF guest (curl 56), not seen by the guest's server"
grants=$(sfc --json vnf show g | python3 -c '
import json, sys
print(" ".join(g["name"] for i in json.load(sys.stdin)["instances"] for g in i["grants"]))')
[ -n "$grants" ] || fail "vnf show g lists no grants"
t1=$(date +%s.%N)
sfc chain del web-g >/dev/null || fail "chain del web-g"
echo "chain del (revoke and unplug): $(vm_since "$t1") s"
for g in $grants; do
	r=$(lv_virsh qemu-monitor-command "$vdom" "{\"execute\":\"qom-get\",\"arguments\":{\"path\":\"/machine/peripheral/ua-tochain-grant-$g\",\"property\":\"revoked\"}}" 2>&1) || true
	case $r in
	*'"return":true'*|*"not found"*|*DeviceNotFound*) echo "grant $g: revoked or unplugged" ;;
	*) fail "grant $g still given after chain del: $r" ;;
	esac
	if [ -e "/dev/shm/tochain-grant-$g" ]; then fail "/dev/shm/tochain-grant-$g left"; fi
done
vm_wait_line "$work/vnf/serial.log" "/dev/tochain/$vm.vnf-g gone" 30 "$vqpid" ||
	fail "the VNF guest's agent did not see its region go"
got=$(fetch "$url/big.bin")
[ "$got" = "$want" ] || fail "after the VNF guest's chain went: sha256 $got ($(cat "$work/curl.err"))"
sfc vnf del g >/dev/null || fail "vnf del g"
sfc chain add web-in --vm "$vm" --dir in --hop sec >/dev/null || fail "chain add web-in again"
lv_domain_destroy "$vdom" || true	# transient: undefine has nothing to do
echo "VNF guest phase done; the first guest served throughout"

echo "--- vm del: device unplugged, link stopped"
sfc chain del web-in >/dev/null || fail "chain del"
unplugs() { grep -ac '^GUEST-UNPLUGGED' "$work/serial.log" || true; }
nu=$(unplugs)
t1=$(date +%s.%N)
sfc vm del "$vm" >/dev/null || fail "vm del"
echo "vm del: $(vm_since "$t1") s"
alive "$lpid" && fail "link $lpid still running"
[ -e "$sock" ] && fail "link socket left"
[ -e "/dev/shm/tochain-$fab-$vm" ] && fail "/dev/shm link left"
ip netns list | grep -q "$fab-$vm" && fail "namespace left behind"
for i in $(seq 60); do
	lv_virsh dumpxml "$dom" | grep -q "<shmem" || break
	sleep 1
done
lv_virsh dumpxml "$dom" | grep -q "<shmem" && fail "<shmem> still in the domain"
for i in $(seq 300); do [ "$(unplugs)" -gt "$nu" ] && break; sleep 0.2; done
[ "$(unplugs)" -gt "$nu" ] || fail "the guest did not see the unplug"

echo "--- vm add --wait poll: ivshmem-plain, the link polls"
t1=$(date +%s.%N)
n0=$(runs)
sfc vm add "$vm" --ip 10.72.0.2/24 --domain "$dom" --wait poll >/dev/null || fail "vm add --wait poll"
[ "$(field wait)" = poll ] && [ "$(field link)" = running ] || fail "no poll-mode link"
[ -z "$(field link_socket)" ] || fail "a link socket in poll mode"
lpid=$(field link_pid)
grep -q -- "--doorbell" "/proc/$lpid/cmdline" && fail "poll-mode link run with --doorbell"
lv_virsh dumpxml "$dom" | grep -q "<model type='ivshmem-plain'/>" || fail "no ivshmem-plain in the domain"
for i in $(seq 600); do [ "$(runs)" -gt "$n0" ] && break; sleep 0.2; done
[ "$(runs)" -gt "$n0" ] || fail "no server started after vm add --wait poll"
hpid=$(server_pid "$(runs)")
echo "vm add --wait poll to the server starting in the guest: $(vm_since "$t1") s"
tc_wait_port "$CL" 10.72.0.2 8080 120 || fail "port 8080 does not accept in poll mode"
echo "vm add --wait poll to serving: $(vm_since "$t1") s"
serves_again "in poll mode"
echo "vm add --wait poll to a good fetch: $(vm_since "$t1") s"
same_server "in poll mode"
sfc vm del "$vm" >/dev/null || fail "vm del (poll)"
alive "$lpid" && fail "poll-mode link $lpid still running"
vm_wait_line "$work/serial.log" '^GUEST-DONE' 180 "$qpid" || fail "the guest did not finish"
grep -a '^GUEST-DMESG' "$work/serial.log" && fail "guest kernel warnings"
grep -a -E '^GUEST-' "$work/serial.log" | tr -d '\r'
kill "$TD_PID"; wait "$TD_PID" || true
TD_PID=
if grep -E 'Sanitizer|runtime error' "$work/tochaind.log"; then fail "tochaind: sanitizer report"; fi
echo "PASS 712_tochaind_vm_chain"
