#!/usr/bin/env bash
# timeout: 600
# needs: patched-qemu
# A VNF running inside a second guest inspects the first VM's traffic
# through granted regions; removing the chain revokes the grants (issues
# 7 and 8).  Guest "VNF domain": a libvirt domain (TCG) on the patched
# QEMU of qemu-patches/, booting the runtime test image with
# tochain_ivshmem.ko loaded and `tochain-vnf --kind null --deny-marker EVIL
# --guest` as agent.  tochaind (`vnf add g --kind null --domain DOM`)
# grants DOM the VM web's region, its R.out and R.vnf-g (grown to powers
# of two), attaches DOM's QEMU pid in web's TOE, and sets web's in and
# out chains [g].  web is a stand-in VM (python3 http.server under
# tochain-run in its own namespace).  Checks: refusals (unknown and
# stopped domains, a VM on the VNF's domain) leave nothing behind; a
# 1 MiB fetch through both chains has the right sha256; a request with
# EVIL is reset, never reaches web's server (its log), and stats name g's
# denial; a tochaind restart (SIGKILL)
# and a restart of the VNF domain (new QEMU pid) are repaired: grants
# and attach redone, traffic inspected again; `sfc-ctl chain del` revokes
# every grant (QMP qom-get "revoked" is true, or the device is already
# gone), the guest's agent logs its region gone, vnf show and the log
# say so, the /dev/shm links are gone, and web keeps serving.  Then the
# same with a VNF guest on Debian's QEMU, which can grant but not revoke:
# vnf show and chain show say plainly that removing the chain does not
# revoke; traffic is inspected; chain del leaves no grant (the guest
# ejects the devices) or says the revoke is pending.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
# shellcheck source=../guest/libvirt-domain.sh
. "$top/tests/guest/libvirt-domain.sh"
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"
. "$top/tests/lib/tochaind.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, libvirt)"; exit 77; }
for c in libvirtd virsh virtlogd ip curl sha256sum cpio python3 busybox; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not installed (tochaind/deps.txt, tests/guest/deps.txt)"; exit 77; }
done
for f in bin/tochaind bin/sfc-ctl bin/tochain-toe bin/tochain-vnf bin/tochain-run \
	lib/libtochain-preload.so guest-drivers/tochain_ivshmem.ko; do
	[ -e "$build/$f" ] || fail "$build/$f missing (make)"
done
tc_patched_qemu	# revoking needs it; built when missing
guest_vnf=$("$top/tests/guest/build-guest.sh" "$build" --vnf) || fail "guest build"
if ! lv_daemon_start; then
	echo "SKIP: libvirtd does not start here"
	exit 77
fi

td_setup 713
dwork=$(mktemp -d /tmp/tochain-713.XXXXXX)	# the domain's files (libvirt-qemu reads them)
dom=tochain-713-$$
stopped=tochain-713s-$$
dom2=tochain-713b-$$
serial=$dwork/serial.log
cleanup713() {
	lv_domain_destroy "$dom"
	lv_domain_destroy "$stopped"
	lv_domain_destroy "$dom2"
	rm -f /dev/shm/tochain-grant-"$fab"-*
	rm -rf "$dwork"
	lv_daemon_stop
}
# registered after td_setup's: runs before it (the chains go first, then the domain)
tc_on_exit cleanup713
fail_logs() {
	echo "--- guest serial"; tr -d '\r' <"$serial" 2>/dev/null | grep -av '^\[' | tail -n 30
	echo "--- qemu"; tail -n 5 "/var/log/libvirt/qemu/$dom.log" 2>/dev/null
}
tc_on_fail fail_logs
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
sfc_ok() { sfc "$@" >"$work/out" 2>&1 || fail "sfc-ctl $*: $(cat "$work/out")"; }
refused() { # what, sfc-ctl args...: exit 1 with a reason naming $want
	local what=$1 rc
	shift
	set +e
	sfc "$@" >"$work/out" 2>&1
	rc=$?
	set -e
	[ $rc = 1 ] || fail "$what: sfc-ctl $* exited $rc: $(cat "$work/out")"
	grep -q -- "$want" "$work/out" || fail "$what: no reason naming '$want': $(cat "$work/out")"
	echo "refused $what: $(cat "$work/out")"
}
vnf_json() { sfc --json vnf show g; }
qom_revoked() { # GRANT: "true", "false" or "gone"
	local r
	r=$(lv_virsh qemu-monitor-command "$dom" "{\"execute\":\"qom-get\",\"arguments\":{\"path\":\"/machine/peripheral/ua-tochain-grant-$1\",\"property\":\"revoked\"}}" 2>&1) || true
	case $r in
	*'"return":true'*) echo true ;;
	*'"return":false'*) echo false ;;
	*"not found"*|*DeviceNotFound*) echo gone ;;
	*) echo "?$r" ;;
	esac
}

# --- the VNF domain: the runtime image, the driver loaded, the agent running
mkdir -p "$dwork/extra"
cat >"$dwork/extra/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
export PATH=/usr/bin:/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib
echo "GUEST-BOOT uptime=$(cut -d' ' -f1 /proc/uptime)"
insmod /lib/tochain_ivshmem.ko && echo "GUEST-MODULE loaded"
mkdir -p /dev/tochain
tochain-vnf --kind null --deny-marker EVIL --guest &
echo "GUEST-AGENT pid=$!"
while :; do sleep 3600; done
EOF
chmod 755 "$dwork/extra/init"
VM_QEMU=$QEMU lv_domain_xml "$dom" "$guest_vnf" "$dwork" web |
	sed "s|<memory unit='MiB'>256</memory>|<memory unit='MiB'>512</memory>|" >"$dwork/domain.xml"
# our /init last: it replaces tests/guest/libvirt-init.sh
(cd "$dwork/extra" && echo init | cpio -o -H newc --quiet -R 0:0) >>"$dwork/initrd.cpio"
grep -q "<emulator>$QEMU</emulator>" "$dwork/domain.xml" || fail "domain not on the patched QEMU"
t0=$(date +%s.%N)
lv_virsh create "$dwork/domain.xml" >/dev/null || fail "virsh create $dom"
qpid=$(lv_qemu_pid "$dom")
vm_wait_line "$serial" '^GUEST-AGENT' 240 "$qpid" || fail "the VNF guest did not start its agent"
echo "VNF domain $dom (QEMU pid $qpid, $QEMU): agent up after $(since "$t0") s"

# --- refusals leave nothing behind
want=nosuch-$$
refused "unknown domain" vnf add bad --kind null --domain "nosuch-$$"
sed "s|<name>$dom</name>|<name>$stopped</name>|" "$dwork/domain.xml" >"$dwork/stopped.xml"
lv_virsh define "$dwork/stopped.xml" >/dev/null || fail "virsh define $stopped"
echo "vnf bad2 kind=null domain=nosuch-$$" >"$work/bad.topo"
refused "unknown domain in a topology" apply -f "$work/bad.topo"
want="not running"
refused "stopped domain" vnf add bad --kind null --domain "$stopped"
want="may hold only"
refused "bad domain name" vnf add bad --kind null --domain "a/b"
[ "$(sfc --json vnf ls | td_json 'len(j["vnfs"])')" = 0 ] || fail "a refused vnf add left a VNF"

sfc_ok vnf add g --kind null --domain "$dom"
sfc vnf show g | grep -q "^domain *$dom" || fail "vnf show has no domain: $(sfc vnf show g)"
want="runs vnf g"
refused "vm on the VNF's domain" vm add web2 --ip 10.71.3.3/24 --region-size 1M --domain "$dom"
ip netns list | grep -q "$fab-web2" && fail "a refused vm add left its namespace"

# --- the VM web and its chains through the guest's VNF
sfc_ok vm add web --ip 10.71.3.2/24
mkdir "$work/www"
head -c $((1 << 20)) /dev/urandom >"$work/www/big.bin"
head -c $((16 << 10)) /dev/urandom >"$work/www/small.bin"
want_big=$(sha256sum <"$work/www/big.bin" | cut -d' ' -f1)
want_small=$(sha256sum <"$work/www/small.bin" | cut -d' ' -f1)
td_client 10.71.3.1
td_serve web "$work/www" 8080
tc_wait_port "$CL" 10.71.3.2 8080 30 || fail "the web server did not come up"
region=$(td_field vm web region)
t0=$(date +%s.%N)
sfc_ok chain add gin --vm web --dir in --hop g
sfc_ok chain add gout --vm web --dir out --hop g
echo "chains added (grants made, QEMU attached): $(since "$t0") s"
vm_wait_line "$serial" "tochain-vnf: serving /dev/tochain/web.vnf-g \(pid [0-9]+\)" 60 "$qpid" ||
	fail "the guest's agent does not serve web.vnf-g"
echo "agent serving web.vnf-g after $(since "$t0") s"

vnf_json >"$work/vnf.json"
python3 - "$work/vnf.json" "$dom" "$qpid" "$fab" <<'PY' || fail "vnf show: $(cat "$work/vnf.json")"
import json, sys
j = json.load(open(sys.argv[1])); dom, qpid, fab = sys.argv[2], int(sys.argv[3]), sys.argv[4]
assert j["domain"] == dom, j
ins = j["instances"]
assert len(ins) == 1 and ins[0]["vm"] == "web" and ins[0]["domain"] == dom, ins
assert ins[0]["pid"] == qpid and ins[0]["running"], ins
names = sorted(g["name"] for g in ins[0]["grants"])
assert names == sorted(["%s-web-%s-d" % (fab, dom), "%s-web-%s-o" % (fab, dom),
                        "%s-web-g-v" % fab]), names
assert all(g["state"] == "granted" for g in ins[0]["grants"]), ins[0]["grants"]
assert ins[0]["revocable"] is True, ins[0]
PY
grants=$(td_json '" ".join(g["name"] for g in j["instances"][0]["grants"])' <"$work/vnf.json")
for g in $grants; do
	[ -e "/dev/shm/tochain-grant-$g" ] || fail "no /dev/shm/tochain-grant-$g"
	[ "$(qom_revoked "$g")" = false ] || fail "grant $g: revoked is $(qom_revoked "$g")"
done
for f in "$region" "$region.out" "$region.vnf-g"; do
	s=$(stat -c %s "$f")
	[ $((s & (s - 1))) = 0 ] && [ "$s" -ge $((1 << 20)) ] || fail "$f is $s bytes, not a power of two"
done
sfc chain show gin | sed -n '/^instances/,/revoc/p'

fetch() { # URL -> sha256 of the body, or "" on a failure
	{ ip netns exec "$CL" curl -sS --max-time 120 "$1" 2>>"$work/curl.err" || echo "curl $?" >&2; } |
		sha256sum | cut -d' ' -f1
}
t0=$(date +%s.%N)
got=$(fetch http://10.71.3.2:8080/big.bin)
[ "$got" = "$want_big" ] || fail "sha256 of 1 MiB through the guest's VNF: $got"
echo "1 MiB through in [g] and out [g], g in $dom: $(since "$t0") s"
tc_curl_reset "$CL" "$work/py-web.log" "/x?q=EVIL" --max-time 60 "http://10.71.3.2:8080/x?q=EVIL"
echo "EVIL request reset, web's server never saw it: $TC_RESET_ERR"
[ "$(fetch http://10.71.3.2:8080/small.bin)" = "$want_small" ] || fail "clean request after the reset"
sfc --json stats >"$work/stats.json"
python3 - "$work/stats.json" <<'PY' || fail "stats: $(cat "$work/stats.json")"
import json, sys
j = json.load(open(sys.argv[1]))
d = [x for x in j["denials"] if x["vnf"] == "g" and x["chain"] == "gin"]
assert d, j["denials"]
c = [x for x in j["chains"] if x["name"] == "gin"][0]
assert c["denied"] >= 1 and c["arrivals"] >= 3, c
print("stats: gin arrivals %d denied %d; denial by g rule %s" % (c["arrivals"], c["denied"], d[-1]["rule"]))
PY

# --- repair: tochaind killed and restarted: nothing is redone that still works
td_kill9
td_start
tc_wait_for 5 sfc version >/dev/null 2>&1 || true
[ "$(fetch http://10.71.3.2:8080/small.bin)" = "$want_small" ] || fail "request after a tochaind restart"
[ "$(vnf_json | td_json 'j["instances"][0]["pid"]')" = "$qpid" ] || fail "pid changed on a tochaind restart"
echo "tochaind SIGKILLed and restarted: grants kept, chain works"

# --- repair: the VNF domain restarted (new QEMU, no grants): redone
lv_virsh destroy "$dom" >/dev/null
: >"$serial"
lv_virsh create "$dwork/domain.xml" >/dev/null || fail "virsh create $dom again"
t0=$(date +%s.%N)
qpid2=$(lv_qemu_pid "$dom")
[ -n "$qpid2" ] && [ "$qpid2" != "$qpid" ] || fail "no new QEMU pid"
vm_wait_line "$serial" '^GUEST-AGENT' 240 "$qpid2" || fail "the VNF guest did not come back"
vm_wait_line "$serial" "tochain-vnf: serving /dev/tochain/web.vnf-g" 60 "$qpid2" ||
	fail "after the domain restart the agent does not serve web.vnf-g (grants not redone)"
for i in $(seq 100); do
	[ "$(vnf_json | td_json 'j["instances"][0]["pid"]')" = "$qpid2" ] && break
	sleep 0.2
done
[ "$(vnf_json | td_json 'j["instances"][0]["pid"]')" = "$qpid2" ] || fail "instance pid not the new QEMU's"
got=
# the agent may come up after the grants: the TOE fails g (no progress)
# and tochaind attaches it again within 2 s
for i in $(seq 30); do
	got=$(fetch http://10.71.3.2:8080/big.bin)
	[ "$got" = "$want_big" ] && break
	sleep 1
done
[ "$got" = "$want_big" ] || fail "no clean fetch through the restarted domain's VNF: $(tail -n 3 "$work/curl.err")"
echo "clean fetch through the restarted domain's VNF at attempt $i"
tc_curl_reset "$CL" "$work/py-web.log" "/y?q=EVIL" --max-time 60 "http://10.71.3.2:8080/y?q=EVIL"
echo "VNF domain restarted (QEMU $qpid -> $qpid2): grants and attach redone after $(since "$t0") s"
qpid=$qpid2

# --- repair: web's TOE killed: restarted, R.vnf-g is a new file, its
# grant is replaced (revoked, unplugged, granted anew) and the guest's
# agent serves the new device
toe=$(td_field vm web toe_pid)
nserve=$(tr -d '\r' <"$serial" | grep -ac "serving /dev/tochain/web.vnf-g" || true)
kill -9 "$toe"
t0=$(date +%s.%N)
for i in $(seq 150); do
	[ "$(td_field vm web toe_pid)" != "$toe" ] &&
		[ "$(tr -d '\r' <"$serial" | grep -ac "serving /dev/tochain/web.vnf-g" || true)" -gt "$nserve" ] && break
	sleep 0.2
done
[ "$(tr -d '\r' <"$serial" | grep -ac "serving /dev/tochain/web.vnf-g" || true)" -gt "$nserve" ] ||
	fail "after a TOE restart the agent does not serve a new web.vnf-g"
vgrant=$fab-web-g-v
[ "$(stat -c %i "/dev/shm/tochain-grant-$vgrant")" = "$(stat -c %i "$region.vnf-g")" ] ||
	fail "grant $vgrant is not the TOE's new R.vnf-g"
[ "$(qom_revoked "$vgrant")" = false ] || fail "grant $vgrant: $(qom_revoked "$vgrant")"
echo "TOE $toe killed: R.vnf-g granted anew, agent serving it after $(since "$t0") s"
# the stand-in VM's program lost its TOE: start it again
kill -9 "$PY" 2>/dev/null || true
tc_isolated GU2 guweb2
(cd "$work/www" && exec ip netns exec "$GU2" "$build/bin/tochain-run" --region "$region" -- \
	python3 -m http.server --bind 0.0.0.0 8080) >"$work/py-web2.log" 2>&1 &
PY=$!
tc_on_exit "kill -9 $PY"
tc_wait_port "$CL" 10.71.3.2 8080 30 || fail "the web server did not come back"
got=
for i in $(seq 30); do
	got=$(fetch http://10.71.3.2:8080/big.bin)
	[ "$got" = "$want_big" ] && break
	sleep 1
done
[ "$got" = "$want_big" ] || fail "no clean fetch after the TOE restart"
tc_curl_reset "$CL" "$work/py-web2.log" "/t?q=EVIL" --max-time 60 "http://10.71.3.2:8080/t?q=EVIL"
echo "after the TOE restart: clean fetch at attempt $i, EVIL reset"

# --- chain del revokes every grant; web keeps serving
t0=$(date +%s.%N)
sfc_ok chain del gin
sfc_ok chain del gout
echo "chains deleted: $(since "$t0") s"
for g in $grants; do
	st=$(qom_revoked "$g")
	[ "$st" = true ] || [ "$st" = gone ] || fail "grant $g after chain del: revoked is $st"
	echo "grant $g: $([ "$st" = true ] && echo "revoked (unplug pending)" || echo "unplugged")"
	[ ! -e "/dev/shm/tochain-grant-$g" ] || fail "/dev/shm/tochain-grant-$g left behind"
done
vm_wait_line "$serial" "tochain-vnf: /dev/tochain/web.vnf-g gone" 30 "$qpid" ||
	fail "the guest's agent did not log its region gone"
tr -d '\r' <"$serial" | grep -a "tochain-vnf: /dev/tochain/web.vnf-g gone" | tail -n 1
vnf_json >"$work/vnf.json"
python3 - "$work/vnf.json" <<'PY' || fail "vnf show after chain del: $(cat "$work/vnf.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["instances"] == [] and j["chains"] == [], j
rel = j["released"]
assert len(rel) >= 3, rel
assert all(r["outcome"] == "revoked" and "no access" in r["text"] for r in rel[-3:]), rel
PY
sfc vnf show g | grep '^released' || fail "text vnf show has no released line"
grep -q "the guest has no access any more" "$work/state/tochaind.log" ||
	fail "tochaind's log does not say the grants were revoked"
for i in $(seq 100); do
	lv_virsh dumpxml "$dom" | grep -q "tochain-grant-" || break
	sleep 0.2
done
lv_virsh dumpxml "$dom" | grep -q "tochain-grant-" && fail "grant devices still in $dom's XML"
[ "$(fetch http://10.71.3.2:8080/big.bin)" = "$want_big" ] || fail "web does not serve after chain del"
ip netns exec "$CL" curl -sS --max-time 30 -o /dev/null "http://10.71.3.2:8080/z?q=EVIL" ||
	fail "without the chain, EVIL is no longer inspected: the request must pass"
echo "web serves without the chain (EVIL passes uninspected)"
sfc_ok vnf del g

# --- a VNF guest on Debian's QEMU: grants work, revoking does not
stock=$(command -v qemu-system-x86_64 || true)
if [ -n "$stock" ] && [ "$(readlink -f "$stock")" != "$(readlink -f "$QEMU")" ]; then
	serial=$dwork/serial2.log
	sed -e "s|<name>$dom</name>|<name>$dom2</name>|" -e "s|<emulator>$QEMU</emulator>|<emulator>$stock</emulator>|" \
		-e "s|$dwork/serial.log|$serial|g" "$dwork/domain.xml" >"$dwork/stock.xml"
	grep -q "<emulator>$stock</emulator>" "$dwork/stock.xml" || fail "stock domain XML"
	t0=$(date +%s.%N)
	lv_virsh create "$dwork/stock.xml" >/dev/null || fail "virsh create $dom2"
	qpid=$(lv_qemu_pid "$dom2")
	vm_wait_line "$serial" '^GUEST-AGENT' 240 "$qpid" || fail "the stock-QEMU VNF guest did not start"
	echo "VNF domain $dom2 on $stock: agent up after $(since "$t0") s"
	sfc_ok vnf add s --kind null --domain "$dom2"
	sfc_ok chain add sin --vm web --dir in --hop s
	vm_wait_line "$serial" "tochain-vnf: serving /dev/tochain/web.vnf-s" 60 "$qpid" ||
		fail "the stock guest's agent does not serve web.vnf-s"
	sfc chain show sin >"$work/show.txt"
	grep -q "NOT revocable: the QEMU of libvirt domain $dom2 cannot revoke" "$work/show.txt" ||
		fail "chain show does not say the grants cannot be revoked: $(cat "$work/show.txt")"
	grep "NOT revocable" "$work/show.txt"
	sfc --json vnf show s | td_json 'j["instances"][0]["revocable"]' | grep -qx False ||
		fail "vnf show: revocable is not false"
	for i in $(seq 30); do
		[ "$(fetch http://10.71.3.2:8080/small.bin)" = "$want_small" ] && break
		sleep 1
	done
	[ "$(fetch http://10.71.3.2:8080/small.bin)" = "$want_small" ] || fail "no fetch through the stock guest's VNF"
	tc_curl_reset "$CL" "$work/py-web2.log" "/s?q=EVIL" --max-time 60 "http://10.71.3.2:8080/s?q=EVIL"
	sgrants=$(sfc --json vnf show s | td_json '" ".join(g["name"] for g in j["instances"][0]["grants"])')
	sfc_ok chain del sin
	sfc --json vnf show s >"$work/vnf.json"
	python3 - "$work/vnf.json" <<'PY' || fail "vnf show s after chain del: $(cat "$work/vnf.json")"
import json, sys
rel = json.load(open(sys.argv[1]))["released"]
assert len(rel) == 3, rel
for r in rel:
    assert r["outcome"] in ("revoked", "pending"), r
    assert r["outcome"] == "revoked" or "REVOKE PENDING" in r["text"], r
print("stock QEMU, chain del: " + ", ".join("%s %s" % (r["grant"], r["outcome"]) for r in rel))
PY
	vm_wait_line "$serial" "tochain-vnf: /dev/tochain/web.vnf-s gone" 60 "$qpid" ||
		fail "the stock guest never let its device go"
	for g in $sgrants; do
		[ ! -e "/dev/shm/tochain-grant-$g" ] || fail "/dev/shm/tochain-grant-$g left behind"
	done
	for i in $(seq 100); do
		lv_virsh dumpxml "$dom2" | grep -q "tochain-grant-" || break
		sleep 0.2
	done
	lv_virsh dumpxml "$dom2" | grep -q "tochain-grant-" && fail "grant devices still in $dom2"
	sfc --json vnf show s | td_json 'all(r.get("now", "absent") == "absent" for r in j["released"])' |
		grep -qx True || fail "vnf show s: a pending grant is not absent now: $(sfc --json vnf show s)"
	sfc vnf show s | grep -a "released" | cut -c1-160
	[ "$(fetch http://10.71.3.2:8080/small.bin)" = "$want_small" ] || fail "web after the stock chain del"
	sfc_ok vnf del s
	echo "stock QEMU: not revocable said plainly; the guest ejected its devices"
else
	echo "note: no Debian qemu-system-x86_64 besides the patched one: stock QEMU not checked"
fi
grep -E "attached again|REVOKE PENDING" "$work/state/tochaind.log" || true
td_stop_check
echo "PASS 713_vnf_domain_revoke"
