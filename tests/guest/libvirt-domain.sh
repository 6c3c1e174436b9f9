#!/usr/bin/env bash
# libvirt helpers for the tests (source this file; bash), or run it:
#
#   tests/guest/libvirt-domain.sh xml NAME BUILD_DIR WORK_DIR REGION_NAME
#       prints the domain XML of a test guest (and prepares WORK_DIR)
#   tests/guest/libvirt-domain.sh define NAME BUILD_DIR WORK_DIR REGION_NAME
#       defines it in qemu:///system (or $LV_URI)
#
# Sourced:
#   lv_daemon_start   a libvirtd answering on $LV_URI: the running one,
#                     or one started here (LV_STARTED=1, pid in LV_PIDFILE)
#   lv_daemon_stop    stops libvirtd (and virtlogd) only if started here
#   lv_domain_xml NAME GUEST_DIR WORK_DIR REGION_NAME   -> XML on stdout
#   lv_domain_destroy NAME   stop and undefine, quietly
#   lv_qemu_pid NAME         pid of the domain's QEMU (from libvirt's pid file)
#
# The test domain is the test guest of tests/guest/build-guest.sh booted directly
# (<os><kernel>/<initrd>/<cmdline>), serial console to WORK_DIR/serial.log,
# no disk, no network, 256 MiB, one vCPU, machine pc (ACPI PCI hotplug on
# the root bus, as tests/guest/qemu.sh uses); its /init is tests/guest/libvirt-init.sh,
# appended to the test initramfs as a second cpio archive.  Domain type
# 'kvm' where vm_accel says KVM works, else 'qemu' (TCG).  libvirt runs
# QEMU as its unprivileged user (libvirt-qemu) and chowns the kernel and
# initramfs it boots: they are copied into WORK_DIR for that reason.

LV_URI=${LV_URI:-qemu:///system}
LV_PIDFILE=${LV_PIDFILE:-/run/tochain-test-libvirtd.pid}
LV_LOGD_PIDFILE=${LV_LOGD_PIDFILE:-/run/tochain-test-virtlogd.pid}
LV_STARTED=0
LV_TOP=${LV_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

lv_virsh() { virsh -q -c "$LV_URI" "$@"; }

# What libvirtd needs without systemd or libvirt-daemon-system: its log
# directory and the user QEMU runs as.
lv_prepare_host() {
	mkdir -p /var/log/libvirt/qemu /var/lib/libvirt/qemu /run/libvirt
	if ! getent group libvirt-qemu >/dev/null; then
		groupadd --system libvirt-qemu || return 1
	fi
	if ! getent passwd libvirt-qemu >/dev/null; then
		useradd --system --no-create-home --home-dir /var/lib/libvirt \
			--shell /usr/sbin/nologin -g libvirt-qemu libvirt-qemu || return 1
	fi
	# What Debian's udev rules do (root:kvm 0660, QEMU's user in kvm).
	# Without it libvirtd finds /dev/kvm unusable for libvirt-qemu, calls
	# its cached QEMU capabilities outdated and probes every QEMU binary
	# again at each start: minutes on a loaded 2-core machine.
	if [ -c /dev/kvm ]; then
		getent group kvm >/dev/null || groupadd --system kvm || return 1
		id -nG libvirt-qemu | grep -qw kvm || usermod -aG kvm libvirt-qemu || return 1
		if [ "$(stat -c %G /dev/kvm)" != kvm ] || [ $(( 0$(stat -c %a /dev/kvm) & 060 )) != 48 ]; then
			chgrp kvm /dev/kvm && chmod g+rw /dev/kvm || return 1
		fi
	fi
}

lv_daemon_start() {
	local i
	command -v libvirtd >/dev/null && command -v virsh >/dev/null || {
		echo "lv_daemon_start: libvirtd or virsh not installed" >&2
		return 1
	}
	if timeout 10 virsh -q -c "$LV_URI" version >/dev/null 2>&1; then
		return 0	# somebody's libvirtd: use it, leave it running
	fi
	lv_prepare_host || return 1
	# file chardevs and domain logs go through virtlogd by default
	if [ ! -S /run/libvirt/virtlogd-sock ]; then
		virtlogd -d -p "$LV_LOGD_PIDFILE" || return 1
	fi
	libvirtd -d -p "$LV_PIDFILE" || return 1
	LV_STARTED=1
	# a cold start probes every QEMU binary first: allow minutes
	for i in $(seq 60); do
		timeout 10 virsh -q -c "$LV_URI" version >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	echo "lv_daemon_start: libvirtd does not answer on $LV_URI" >&2
	return 1
}

lv_stop_pidfile() {
	local pid i
	pid=$(cat "$1" 2>/dev/null) || return 0
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		for i in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	rm -f "$1"
}

lv_daemon_stop() {
	[ "$LV_STARTED" = 1 ] || return 0
	lv_stop_pidfile "$LV_PIDFILE"
	lv_stop_pidfile "$LV_LOGD_PIDFILE"
	LV_STARTED=0
}

# The test initramfs with tests/guest/libvirt-init.sh as /init, and the kernel,
# in WORK_DIR (libvirt chowns them to the QEMU user).
lv_guest_files() {
	local guest=$1 work=$2 ov
	ov=$(mktemp -d "$work/.ov.XXXXXX")
	cp "$LV_TOP/tests/guest/libvirt-init.sh" "$ov/init"
	chmod 755 "$ov/init"
	cat "$guest/initramfs.cpio" >"$work/initrd.cpio"
	(cd "$ov" && echo init | cpio -o -H newc --quiet -R 0:0) >>"$work/initrd.cpio"
	rm -rf "$ov"
	cp "$(readlink -f "$guest/kernel")" "$work/kernel"
	chmod 755 "$work"
	chmod 644 "$work/kernel" "$work/initrd.cpio"
}

lv_domain_xml() {
	local name=$1 guest=$2 work=$3 region=$4 type=qemu
	# shellcheck source=qemu.sh
	. "$LV_TOP/tests/guest/qemu.sh"
	vm_accel "$guest"
	[ "${VM_ACCEL[1]}" = kvm ] && type=kvm
	lv_guest_files "$guest" "$work" || return 1
	cat <<EOF
<domain type='$type'>
  <name>$name</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$work/kernel</kernel>
    <initrd>$work/initrd.cpio</initrd>
    <cmdline>console=ttyS0 quiet panic=-1 tochain.region=$region</cmdline>
  </os>
  <features><acpi/></features>
  <cpu mode='$([ "$type" = kvm ] && echo host-passthrough || echo custom)'$([ "$type" = kvm ] || echo " match='exact'")>$([ "$type" = kvm ] || echo "<model fallback='allow'>qemu64</model>")</cpu>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>$(command -v "${VM_QEMU:-qemu-system-x86_64}")</emulator>
    <serial type='file'>
      <source path='$work/serial.log'/>
      <target port='0'/>
    </serial>
    <console type='file'>
      <source path='$work/serial.log'/>
      <target type='serial' port='0'/>
    </console>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
}

lv_domain_destroy() {
	lv_virsh destroy "$1" >/dev/null 2>&1
	lv_virsh undefine "$1" >/dev/null 2>&1
	return 0
}

lv_qemu_pid() {
	cat "/run/libvirt/qemu/$1.pid" 2>/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	cmd=${1:-}
	[ $# -eq 5 ] && { [ "$cmd" = xml ] || [ "$cmd" = define ]; } || {
		echo "usage: $0 xml|define NAME BUILD_DIR WORK_DIR REGION_NAME" >&2
		exit 2
	}
	guest=$("$LV_TOP/tests/guest/build-guest.sh" "$3")
	mkdir -p "$4"
	if [ "$cmd" = xml ]; then
		lv_domain_xml "$2" "$guest" "$4" "$5"
	else
		lv_domain_xml "$2" "$guest" "$4" "$5" >"$4/domain.xml"
		lv_virsh define "$4/domain.xml"
	fi
fi
