#!/usr/bin/env bash
# timeout: 600
# needs: patched-qemu
# A VNF guest gets the payload it inspects read-only (issue 16).  The VNF
# domain is a libvirt domain (TCG, the patched QEMU of qemu-patches/)
# booting the VNF guest image with tochain_ivshmem.ko, the agent
# `tochain-vnf --kind null --deny-marker EVIL --guest`, and a hostile
# program, grant-scribble (tests/guest/grant_scribble.c), which maps the
# granted devices web (the VM's region R) and web.out (the TOE's private
# outbound copy R.out) writable, as root in a guest may, and keeps writing
# "HOSTILE!" over every byte of them, header and rings included, reading
# each back; as a control it writes one word into the padding of
# web.vnf-g (R.vnf-g, the VNF's own region, which must stay writable).
# tochaind (`vnf add g --kind null --domain DOM`, chains in and out of
# the stand-in VM web through g) grants R and R.out read-only
# (td_libvirt_ro.h).  Checks: QEMU's memory backends of the d and o grants
# are readonly=on and the v grant's is not; while the guest scribbles,
# a 1 MiB fetch (out chain: the bytes the TOE sends are R.out's) and a
# 16 KiB one arrive with their sha256, a request with EVIL is reset and
# the next clean one passes (inspection works, verdicts are written);
# every scribble pass read back none of its words from R and R.out, and
# neither file holds the pattern on the host, while the control word did
# reach R.vnf-g's file (so the scribbler's writes land where nothing
# stops them: without read-only grants this test fails).  chain del
# takes the grants back and leaves no grant device or memory backend.
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
for f in bin/tochaind bin/sfc-ctl bin/tochain-toe bin/tochain-vnf bin/tochain-run bin/tochain-region \
	lib/libtochain-preload.so guest-drivers/tochain_ivshmem.ko vm/grant-scribble; do
	[ -e "$build/$f" ] || fail "$build/$f missing (make)"
done
tc_patched_qemu
guest_vnf=$("$top/tests/guest/build-guest.sh" "$build" --vnf) || fail "guest build"
if ! lv_daemon_start; then
	echo "SKIP: libvirtd does not start here"
	exit 77
fi

td_setup 714
dwork=$(mktemp -d /tmp/tochain-714.XXXXXX)	# the domain's files (libvirt-qemu reads them)
dom=tochain-714-$$
serial=$dwork/serial.log
cleanup714() {
	lv_domain_destroy "$dom"
	rm -f /dev/shm/tochain-grant-"$fab"-*
	rm -rf "$dwork"
	lv_daemon_stop
}
# registered after td_setup's: runs before it (the chains go first, then the domain)
tc_on_exit cleanup714
fail_logs() {
	echo "--- guest serial"; tr -d '\r' <"$serial" 2>/dev/null | grep -av '^\[' | tail -n 30
	echo "--- qemu"; tail -n 5 "/var/log/libvirt/qemu/$dom.log" 2>/dev/null
}
tc_on_fail fail_logs
sfc_ok() { sfc "$@" >"$work/out" 2>&1 || fail "sfc-ctl $*: $(cat "$work/out")"; }
qmp() { lv_virsh qemu-monitor-command "$dom" "$1" 2>&1 || true; }
qom_get() { # PATH PROPERTY: the "return" value as JSON, or the error
	qmp "{\"execute\":\"qom-get\",\"arguments\":{\"path\":\"$1\",\"property\":\"$2\"}}" |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(json.dumps(j["return"]) if "return" in j else "error: " + j["error"]["desc"])' 2>&1
}
backend_readonly() { # GRANT: readonly of the memory backend its device maps
	local mem
	mem=$(qom_get "/machine/peripheral/ua-tochain-grant-$1" memdev | tr -d '"')
	case $mem in /objects/*) qom_get "$mem" readonly ;; *) echo "no backend: $mem" ;; esac
}
scribbles() { # NAME: the scribbler's pass lines for device NAME, whole lines only
	# (the guest may be half-way through writing the last one)
	local n
	n=$(wc -l <"$serial")
	head -n "$n" "$serial" | tr -d '\r' | grep -a "^GUEST-SCRIBBLE $1 pass " || true
}
last_pass() { scribbles "$1" | tail -n 1 | sed -n 's/.* pass \([0-9]*\) .*/\1/p'; }
fetch() { # URL -> sha256 of the body, or "" on a failure
	{ ip netns exec "$CL" curl -sS --max-time 120 "$1" 2>>"$work/curl.err" || echo "curl $?" >&2; } |
		sha256sum | cut -d' ' -f1
}

# --- the VNF domain: the agent, and the hostile scribbler waiting for its devices
mkdir -p "$dwork/extra/bin"
cp "$build/vm/grant-scribble" "$dwork/extra/bin/grant-scribble"
cat >"$dwork/extra/init" <<'EOF2'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
export PATH=/usr/bin:/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib
insmod /lib/tochain_ivshmem.ko && echo "GUEST-MODULE loaded"
mkdir -p /dev/tochain
tochain-vnf --kind null --deny-marker EVIL --guest &
echo "GUEST-AGENT pid=$!"
grant-scribble web web.out +web.vnf-g &
echo "GUEST-SCRIBBLER pid=$!"
while :; do sleep 3600; done
EOF2
chmod 755 "$dwork/extra/init" "$dwork/extra/bin/grant-scribble"
VM_QEMU=$QEMU lv_domain_xml "$dom" "$guest_vnf" "$dwork" web |
	sed "s|<memory unit='MiB'>256</memory>|<memory unit='MiB'>512</memory>|" >"$dwork/domain.xml"
(cd "$dwork/extra" && printf 'init\nbin\nbin/grant-scribble\n' | cpio -o -H newc --quiet -R 0:0) \
	>>"$dwork/initrd.cpio"
grep -q "<emulator>$QEMU</emulator>" "$dwork/domain.xml" || fail "domain not on the patched QEMU"
lv_virsh create "$dwork/domain.xml" >/dev/null || fail "virsh create $dom"
qpid=$(lv_qemu_pid "$dom")
vm_wait_line "$serial" '^GUEST-SCRIBBLER' 240 "$qpid" || fail "the VNF guest did not start"
echo "VNF domain $dom up (QEMU pid $qpid)"

# --- the VM web, its chains through g in the guest
sfc_ok vnf add g --kind null --domain "$dom"
sfc_ok vm add web --ip 10.71.4.2/24
mkdir "$work/www"
head -c $((1 << 20)) /dev/urandom >"$work/www/big.bin"
head -c $((16 << 10)) /dev/urandom >"$work/www/small.bin"
want_big=$(sha256sum <"$work/www/big.bin" | cut -d' ' -f1)
want_small=$(sha256sum <"$work/www/small.bin" | cut -d' ' -f1)
td_client 10.71.4.1
td_serve web "$work/www" 8080
tc_wait_port "$CL" 10.71.4.2 8080 30 || fail "the web server did not come up"
region=$(td_field vm web region)
sfc_ok chain add gin --vm web --dir in --hop g
sfc_ok chain add gout --vm web --dir out --hop g
vm_wait_line "$serial" "tochain-vnf: serving /dev/tochain/web.vnf-g" 60 "$qpid" ||
	fail "the guest's agent does not serve web.vnf-g"
for n in web web.out web.vnf-g; do
	vm_wait_line "$serial" "^GUEST-SCRIBBLE $n pass 2 " 60 "$qpid" ||
		fail "the scribbler does not write $n: $(tr -d '\r' <"$serial" | grep -a "GUEST-SCRIBBLE $n" | tail -n 2)"
done
echo "agent serving, scribbler writing web, web.out and a word of web.vnf-g"

# --- what QEMU gave the guest: d and o read-only, v writable
grants=$(sfc --json vnf show g | td_json '" ".join(g["name"] for g in j["instances"][0]["grants"])')
[ "$(echo "$grants" | wc -w)" = 3 ] || fail "grants of g: $grants"
for g in $grants; do
	ro=$(backend_readonly "$g")
	case $g in
	*-d|*-o) [ "$ro" = true ] || fail "grant $g: its memory backend's readonly is $ro" ;;
	*-v) [ "$ro" = false ] || fail "grant $g (the VNF's own region): readonly is $ro" ;;
	*) fail "grant $g: unknown kind" ;;
	esac
	echo "grant $g: readonly=$ro"
done

# --- traffic, inspected, while the guest scribbles
p0=$(last_pass web.out)
for i in 1 2 3; do
	got=$(fetch http://10.71.4.2:8080/big.bin)
	[ "$got" = "$want_big" ] || fail "sha256 of 1 MiB #$i while the VNF guest writes R.out: $got ($(tail -n 2 "$work/curl.err"))"
done
set +e
ip netns exec "$CL" curl -sS --max-time 60 -o /dev/null "http://10.71.4.2:8080/x?q=EVIL" 2>/dev/null
rc=$?
set -e
[ $rc = 56 ] || [ $rc = 52 ] || fail "the EVIL request was not reset (curl $rc)"
[ "$(fetch http://10.71.4.2:8080/small.bin)" = "$want_small" ] || fail "clean request after the reset"
vm_wait_line "$serial" "^GUEST-SCRIBBLE web.out pass $((p0 + 2)) " 60 "$qpid" || fail "the scribbler stopped"
p1=$(last_pass web.out)
echo "3 x 1 MiB and 16 KiB arrived intact, EVIL reset, during scribble passes $p0..$p1 of R.out"
sfc --json stats | td_json '[c["denied"] for c in j["chains"] if c["name"] == "gin"][0]' |
	grep -qx '[1-9][0-9]*' || fail "stats: gin denied nothing"

# --- the scribbler's writes: dropped on R and R.out, landed on the control word
for n in web web.out; do
	scribbles "$n" >"$work/scr-$n"
	[ -s "$work/scr-$n" ] || fail "no scribble pass on $n"
	grep -v ': 0 words read back as ours$' "$work/scr-$n" | head -n 3 | grep . &&
		fail "a write to read-only $n read back"
	echo "$n: $(wc -l <"$work/scr-$n") passes over $(head -n 1 "$work/scr-$n" | sed 's/.*wrote \([0-9]*\) bytes.*/\1/') bytes, none read back"
done
if tr -d '\r' <"$serial" | grep -aE "GUEST-SCRIBBLE (web|web.out)(:| pass [0-9]*: )" | grep .; then
	fail "the scribbler could not map or write a device (the test shows nothing then)"
fi
grep -aq 'HOSTILE!' "$region" && fail "the guest's pattern is in R ($region)"
grep -aq 'HOSTILE!' "$region.out" && fail "the guest's pattern is in R.out ($region.out)"
scribbles web.vnf-g | tail -n 1 | grep -q ': 1 words read back as ours$' ||
	fail "control: the word written to web.vnf-g did not read back: $(scribbles web.vnf-g | tail -n 1)"
rs=$("$build/bin/tochain-region" info "$region.vnf-g" --json | td_json 'j["size"]')
fs=$(stat -c %s "$region.vnf-g")
[ "$fs" -gt "$rs" ] || fail "control: R.vnf-g ($fs bytes) has no padding past its region ($rs)"
[ "$(tail -c 8 "$region.vnf-g")" = 'HOSTILE!' ] ||
	fail "control: the guest's write to the writable R.vnf-g did not reach the host file"
echo "R and R.out hold no byte of the guest's; the control word reached R.vnf-g's padding"

# --- chain del takes the grants back: no device, no backend left
sfc_ok chain del gin
sfc_ok chain del gout
for g in $grants; do
	for i in $(seq 50); do
		qom_get "/machine/peripheral/ua-tochain-grant-$g" type | grep -q '^error' && break
		sleep 0.2
	done
	qom_get "/machine/peripheral/ua-tochain-grant-$g" type | grep -q '^error' ||
		fail "grant $g still plugged after chain del"
	case $g in
	*-d|*-o)
		for i in $(seq 50); do
			qom_get "/objects/tochain-grant-$g" readonly | grep -q '^error' && break
			sleep 0.2
		done
		qom_get "/objects/tochain-grant-$g" readonly | grep -q '^error' ||
			fail "grant $g: its memory backend is left in QEMU" ;;
	esac
	[ ! -e "/dev/shm/tochain-grant-$g" ] || fail "/dev/shm/tochain-grant-$g left behind"
done
echo "chain del: every grant unplugged, read-only backends freed"
[ "$(fetch http://10.71.4.2:8080/small.bin)" = "$want_small" ] || fail "web does not serve after chain del"
sfc_ok vnf del g
td_stop_check
echo "PASS 714_vnf_domain_readonly"
