#!/usr/bin/env bash
# make demo VM=qemu: the steps of `make demo` (scripts/demo-steps.sh) with
# a real VM, run as an operator runs one: a libvirt domain defined from
# its XML (`virsh define`, `virsh start`), its TOE attached with
# `sfc-ctl vm add web1 --domain DOMAIN` (tochaind builds the TOE
# container, starts the VM link and hot-plugs the region as an
# ivshmem-doorbell <shmem>), then `sfc-ctl apply -f demo.topo` for the
# chain fw -> (ids || waf) (the VM as added is kept: same ip and
# region-size).  In the guest (the runtime guest of
# tests/guest/build-guest.sh --runtime plus the host's nginx and its
# libraries, scripts/demo-guest-init.sh as /init) unmodified nginx runs
# under tochain-run once /dev/tochain/web1 appears.  Then the same
# requests, attacks, SLA under sync and cfs, stats and PNG as the
# stand-in demo.  At exit (also on failure or Ctrl-C): the chains and the
# VM removed (the device unplugged), the domain destroyed and undefined,
# the daemons stopped (libvirtd only if started here).
#
#   scripts/demo-vm.sh BUILD_DIR
#
# The domain is KVM where vm_accel (tests/guest/qemu.sh) finds it working,
# else TCG; its emulator is the patched QEMU of `make qemu`
# (/var/cache/tochain/qemu) when built, else Debian's.  DEMO_* as in
# scripts/demo.sh; DEMO_REGISTER_VM=1 registers the domain's vCPU threads
# as the VM's with tochain-sched.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
build=$(cd "${1:?usage: demo-vm.sh BUILD_DIR}" && pwd)
. tests/lib/netns.sh
. tests/lib/tochaind.sh
. tests/guest/qemu.sh
. tests/guest/libvirt-domain.sh
. scripts/demo-steps.sh
tc_need_root "network namespaces, cgroups and libvirt"
tc_need_cmds ip nginx python3 curl gnuplot cpio virsh libvirtd
demo_init

step "0. libvirtd, and the guest: the runtime image with the host's nginx"
tc_init
dom=tcdemo-web1-$TC_SUFFIX
vm_cleanup() { # after td_cleanup's vm del: the domain, then what a failed vm del left
	lv_domain_destroy "$dom"
	if [ -n "${work:-}" ]; then
		pkill -9 -f "tochain-vmlink --region $work/" 2>/dev/null
		rm -f "/dev/shm/tochain-$fab-web1"
	fi
	lv_daemon_stop
}
tc_on_exit vm_cleanup
lv_daemon_start || fail "libvirtd does not start here"
say "libvirtd answers on $LV_URI: $(lv_virsh version 2>/dev/null | grep -i 'running hypervisor' | sed 's/^ *//')"
emu=$(ls -dt /var/cache/tochain/qemu/*/bin/qemu-system-x86_64 2>/dev/null | head -n 1 || true)
if [ -n "$emu" ] && [ -x "$emu" ]; then
	VM_QEMU=$emu
	say "emulator: the patched QEMU of \`make qemu\`, $emu"
else
	VM_QEMU=$(command -v "$VM_QEMU") || fail "no QEMU"
	say "emulator: Debian's $VM_QEMU (\`make qemu\` builds the patched one)"
fi
guest_rt=$(tests/guest/build-guest.sh "$build" --runtime) || fail "the guest image did not build"
guest_extra() { # DIR: the host's nginx and its libraries, the demo's /init, config and page
	local d=$1 lib
	mkdir -p "$d/usr/sbin" "$d/etc" "$d/www"
	cp /usr/sbin/nginx "$d/usr/sbin/nginx"
	ldd /usr/sbin/nginx | awk '/=> \// { print $3 }' | while read -r lib; do
		mkdir -p "$d$(dirname "$lib")"
		cp -L "$lib" "$d$lib"
	done
	cp "$top/scripts/demo-guest-init.sh" "$d/init"
	cp "$work/www/index.html" "$d/www/index.html"
	cat >"$d/etc/nginx-demo.conf" <<'CONF'
user root root;
daemon off;
master_process on;
worker_processes 1;
pid /var/nginx/nginx.pid;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path /var/nginx/tmp;
	proxy_temp_path /var/nginx/tmp;
	fastcgi_temp_path /var/nginx/tmp;
	uwsgi_temp_path /var/nginx/tmp;
	scgi_temp_path /var/nginx/tmp;
	server { listen 80; root /www; }
}
CONF
}

demo_daemons --libvirt-uri "$LV_URI"
fail_logs_vm() {
	echo "--- guest serial"; tr -d '\r' <"$work/guest/serial.log" 2>/dev/null | grep -av '^\[' | tail -n 20
	echo "--- link"; tail -n 10 "$work/state/link-web1.log" 2>/dev/null
	echo "--- qemu"; tail -n 10 "/var/log/libvirt/qemu/$dom.log" 2>/dev/null
}
tc_on_fail fail_logs_vm

step "2. VM web1: a libvirt domain (virsh define, virsh start), its TOE (sfc-ctl vm add --domain), the chain (sfc-ctl apply -f demo.topo)"
demo_page
mkdir -p "$work/guest" "$work/extra"
lv_domain_xml "$dom" "$guest_rt" "$work/guest" web1 >"$work/guest/$dom.xml" || fail "domain XML"
guest_extra "$work/extra"
(cd "$work/extra" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/extra.cpio"
cat "$guest_rt/initramfs.cpio" "$work/extra.cpio" >"$work/guest/initrd.cpio"
sed -i "s|<cmdline>.*</cmdline>|<cmdline>console=ttyS0 quiet panic=-1 tochain.cmd=web1</cmdline>|" \
	"$work/guest/$dom.xml"
say "domain XML $work/guest/$dom.xml: type $(sed -n "s/^<domain type='\([a-z]*\)'>/\1/p" "$work/guest/$dom.xml"), 1 vCPU, 256 MiB, no disk, no NIC, kernel and initramfs booted directly"
lv_virsh define "$work/guest/$dom.xml" >"$work/define.out" || fail "virsh define: $(cat "$work/define.out")"
say "virsh define $dom.xml: $(lv_virsh list --all --name | grep -cx "$dom") domain $dom, $(lv_virsh domstate "$dom")"
t0=$(date +%s.%N)
lv_virsh start "$dom" >/dev/null || fail "virsh start $dom"
qpid=$(lv_qemu_pid "$dom")
[ -n "$qpid" ] || fail "no QEMU pid for $dom"
vm_wait_line "$work/guest/serial.log" '^GUEST-MODULE' 300 "$qpid" || fail "the guest did not boot"
say "virsh start $dom: the guest's /init runs after $(vm_since "$t0") s"
t0=$(date +%s.%N)
sfc vm add web1 --ip 10.0.0.2/24 --region-size 16M --domain "$dom" >/dev/null || fail "sfc-ctl vm add --domain"
say "sfc-ctl vm add web1 --ip 10.0.0.2/24 --region-size 16M --domain $dom: $(sfc --json vm show web1 |
	td_json '"TOE %s, link %s (%s), region %s" % (j["toe"], j["link"], j["wait"], j["region"])')"
vm_wait_line "$work/guest/serial.log" '^GUEST-REGION' 120 "$qpid" || fail "the guest did not see its region"
say "the guest found /dev/tochain/web1 $(vm_since "$t0") s later"
demo_apply

step "3. unmodified nginx (master + 1 worker, the host's binary) in VM web1 (no NIC) under tochain-run"
vm_wait_line "$work/guest/serial.log" '^GUEST-NGINX' 120 "$qpid" || fail "nginx did not start in the guest"
say "guest: $(tr -d '\r' <"$work/guest/serial.log" | grep -a '^GUEST-NGINX' | head -n 1 | cut -c 7-)"
demo_client 240

demo_register_vm() {
	local t
	for t in $(td_field vm web1 vcpu_tids | tr -d '[],'); do
		"$bin/tochain-sched" --socket "$work/sched.sock" --ctl sched.register \
			"{\"role\":\"vm\",\"tid\":$t,\"vm\":\"web1\"}" >/dev/null ||
			fail "cannot register vCPU thread $t with tochain-sched"
	done
}
demo_mission

step "8. removal: sfc-ctl chain del, vnf del, vm del (the region unplugged), virsh destroy, virsh undefine"
for c in web1-in web1-out; do sfc chain del "$c" >/dev/null || fail "sfc-ctl chain del $c"; done
for v in web-fw web-ids web-waf; do sfc vnf del "$v" >/dev/null || fail "sfc-ctl vnf del $v"; done
say "sfc-ctl chain del web1-in, web1-out; sfc-ctl vnf del web-fw, web-ids, web-waf: $(sfc --json chain ls |
	td_json 'len(j["chains"])') chains, $(sfc --json vnf ls | td_json 'len(j["vnfs"])') VNFs left"
t0=$(date +%s.%N)
sfc vm del web1 >/dev/null || fail "sfc-ctl vm del web1"
unplugged() { ! lv_virsh dumpxml "$dom" | grep -q "<shmem"; }
tc_wait_for 60 unplugged || fail "the region is still plugged into $dom"
say "sfc-ctl vm del web1: the TOE container gone, the <shmem> device detached from $dom ($(vm_since "$t0") s)"
vm_wait_line "$work/guest/serial.log" '^GUEST-UNPLUGGED' 60 "$qpid" || fail "the guest did not see its region go"
say "the guest saw /dev/tochain/web1 go ($(vm_since "$t0") s after vm del)"
lv_virsh destroy "$dom" >/dev/null || fail "virsh destroy $dom"
lv_virsh undefine "$dom" >/dev/null || fail "virsh undefine $dom"
lv_virsh list --all --name | grep -qx "$dom" && fail "$dom is still defined"
say "virsh destroy $dom; virsh undefine $dom: the domain is gone"
demo_done
