#!/usr/bin/env bash
# timeout: 500
# 704 with libvirt managing the guest: the domain (tests/guest/libvirt-domain.sh)
# gets the region as <shmem><model type='ivshmem-doorbell'/><server
# path=LINK_SOCKET/></shmem>, tochain-vmlink being its ivshmem server, and
# runs the patched QEMU of qemu-patches/ as <emulator> when
# /var/cache/tochain/qemu has one (Debian's otherwise; TOCHAIN_QEMU
# overrides).  Inside, python3 -m http.server under tochain-run; curl in
# a fabric namespace fetches 4 MiB (sha256); virsh destroy makes the link
# see its guest leave.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"
. "$top/tests/guest/qemu.sh"
. "$top/tests/guest/libvirt-domain.sh"

tc_need_root
tc_need_cmds ip curl cpio virsh libvirtd
emu=${TOCHAIN_QEMU:-$(ls -dt /var/cache/tochain/qemu/*/bin/qemu-system-x86_64 2>/dev/null | head -n 1 || true)}
[ -n "$emu" ] && [ -x "$emu" ] || emu=$(command -v "$VM_QEMU" || true)
[ -n "$emu" ] || { echo "SKIP: no QEMU"; exit 77; }
VM_QEMU=$emu
[ -x /usr/bin/python3 ] || fail "Debian's python3 missing (tests/guest/deps.txt; the guest image copies it)"
guest_rt=$("$top/tests/guest/build-guest.sh" "$build" --runtime) || fail "guest build"

tc_init
tc_fabric
tc_host CL cl 10.71.1.1/24
tc_host VM vm 10.71.1.2/24
work=$(mktemp -d /tmp/tochain-711.XXXXXX)
chmod 755 "$work"
region=$work/region
dom=tochain-711-$$
name=web711
lpid= tpid=
cleanup711() {
	lv_domain_destroy "$dom"
	[ -n "$lpid" ] && { kill "$lpid"; wait "$lpid"; } 2>/dev/null
	[ -n "$tpid" ] && { kill "$tpid"; wait "$tpid"; } 2>/dev/null
	lv_daemon_stop
	rm -rf "$work"
}
tc_on_exit cleanup711
fail_logs() {
	echo "--- serial"; tr -d '\r' <"$work/serial.log" 2>/dev/null | grep -v DMESG | tail -n 30 || true
	echo "--- link"; tail -n 20 "$work/link.log" 2>/dev/null || true
	echo "--- libvirt"; tail -n 20 "/var/log/libvirt/qemu/$dom.log" 2>/dev/null || true
}
tc_on_fail fail_logs

lv_daemon_start || fail "libvirtd"
echo "emulator: $emu"

mkfifo "$work/ready.link"	# one of its own: the TOE closes its end late
tt_toe_start --wait 30 "$VM" "$name" --nbufs 256 --channels 16
tpid=$TOE
"$build/bin/tochain-vmlink" --region "$work/region" --doorbell "$work/ivs.sock" --slots 4 \
	--verbose --ready-fd 3 3>"$work/ready.link" 2>"$work/link.log" &
lpid=$!
read -r -t 30 -n 1 _ <"$work/ready.link" || fail "link did not become ready"
# QEMU runs as libvirt's user: it must be able to connect (it gets the
# region itself as a descriptor from the link, no file access needed)
chmod 666 "$work/ivs.sock"

mkdir -p "$work/extra/www"
head -c $((4 << 20)) /dev/urandom >"$work/extra/www/big.bin"
want=$(sha256sum <"$work/extra/www/big.bin" | cut -d' ' -f1)
cat >"$work/extra/guest.sh" <<'EOF'
#!/bin/sh
cd /www || exit 1
tochain-run -- python3 -m http.server --bind 0.0.0.0 8080 >/tmp/http.log 2>&1 &
echo "GUEST-HTTPD pid=$!"
wait
EOF
chmod 755 "$work/extra/guest.sh"

lv_domain_xml "$dom" "$guest_rt" "$work" "$name" >"$work/domain.xml" || fail "domain xml"
# the runtime image instead of the driver test's /init, and the link as ivshmem server
(cd "$work/extra" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/extra.cpio"
cat "$guest_rt/initramfs.cpio" "$work/extra.cpio" >"$work/initrd.cpio"
chmod 644 "$work/initrd.cpio"
python3 - "$work/domain.xml" "$name" "$work/ivs.sock" <<'EOF'
import re, sys
p, name, sock = sys.argv[1:]
s = open(p).read()
s = re.sub(r"<cmdline>.*</cmdline>",
           "<cmdline>console=ttyS0 quiet panic=-1 tochain.cmd=%s</cmdline>" % name, s)
s = s.replace("</devices>", """  <shmem name='tochain-%s'>
      <model type='ivshmem-doorbell'/>
      <server path='%s'/>
      <msi vectors='4' ioeventfd='on'/>
    </shmem>
  </devices>""" % (name, sock))
open(p, "w").write(s)
EOF
grep -q ivshmem-doorbell "$work/domain.xml" || fail "no shmem in the domain"
lv_virsh define "$work/domain.xml" >/dev/null || fail "virsh define"
t0=$(date +%s.%N)
lv_virsh start "$dom" >/dev/null || fail "virsh start"
vm_wait_line "$work/serial.log" '^GUEST-REGION' 180 || fail "guest found no region"
vm_wait_line "$work/serial.log" '^GUEST-HTTPD' 30 || fail "httpd did not start"
tc_wait_port "$CL" 10.71.1.2 8080 90 || fail "port 8080 of the VM does not accept"
echo "virsh start to serving: $(vm_since "$t0") s"
pid=$(lv_qemu_pid "$dom")
[ -n "$pid" ] && readlink "/proc/$pid/exe" | grep -qF "$(readlink -f "$emu")" ||
	fail "the domain does not run $emu"

t0=$(date +%s.%N)
got=$(ip netns exec "$CL" curl -sS --max-time 90 http://10.71.1.2:8080/big.bin |
	sha256sum | cut -d' ' -f1) || true
echo "fetch (4 MiB): $(vm_since "$t0") s"
[ "$got" = "$want" ] || fail "sha256 $got, want $want"
grep -q 'guest peer [0-9]* joined' "$work/link.log" || fail "QEMU never joined the link"

lv_domain_destroy "$dom"
for i in $(seq 50); do
	grep -q 'guest peer [0-9]* left' "$work/link.log" && break
	sleep 0.2
done
grep -q 'guest peer [0-9]* left' "$work/link.log" || fail "the link did not see the domain go"
kill "$lpid"; wait "$lpid" || fail "link exit status"; lpid=
grep offers "$work/link.log"
grep -qE 'to-toe [1-9][0-9]* to-guest [1-9]' "$work/link.log" || fail "no doorbells relayed"
echo "PASS 711_libvirt_vm_http"
