# Shell helpers for the guest driver tests (source this file; bash).
#
#   vm_accel                 -> sets VM_ACCEL (array): KVM if it really works here, else TCG
#   vm_qemu_args GUEST_DIR SERIAL_LOG QMP_SOCK TEST_CMD [QEMU ARGS...]
#                            -> sets VM_ARGS (array): the one place that
#                               says how a test guest is started
#   vm_wait_line LOG REGEX TIMEOUT_S PID   wait for a line; 1 on timeout or if PID died
#   vm_qmp QMP_SOCK JSON...  run QMP commands, print the replies
#   vm_check_log LOG PASS_NAME...          every PASS present, no FAIL, no kernel splat
#
# TOCHAIN_ACCEL=kvm|tcg overrides the accelerator choice.

VM_QEMU=${VM_QEMU:-qemu-system-x86_64}

# KVM only if a guest actually boots with it: /dev/kvm may exist and
# still not work (nested setups that lack features).  The verdict is
# cached per host kernel and QEMU version.
vm_accel() {
	local guest=$1 verdict cache
	if [ -n "${TOCHAIN_ACCEL:-}" ]; then
		verdict=$TOCHAIN_ACCEL
	elif [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		verdict=tcg
	else
		# next to the kernel cache (tests/guest/fetch-kernel.sh)
		cache=$(dirname "$(dirname "$(readlink -f "$guest/kernel")")")/accel-$(uname -r)-$($VM_QEMU --version | awk 'NR == 1 { print $4 }')
		if [ -f "$cache" ]; then
			verdict=$(cat "$cache")
		else
			verdict=tcg
			if timeout 20 "$VM_QEMU" -accel kvm -cpu host -M pc -m 256 -display none \
				-monitor none -serial stdio -no-reboot -kernel "$guest/kernel" \
				-initrd "$guest/initramfs.cpio" -append "console=ttyS0 quiet panic=-1" \
				</dev/null 2>/dev/null | grep -q GUEST-DONE; then
				verdict=kvm
			fi
			mkdir -p "$(dirname "$cache")" && echo "$verdict" >"$cache" || true
		fi
	fi
	if [ "$verdict" = kvm ]; then
		VM_ACCEL=(-accel kvm -cpu host)
	else
		VM_ACCEL=(-accel tcg)
	fi
}

# The QEMU command line of a test guest.  Kept in one function so that it
# can become libvirt domain XML later: machine pc (i440fx, ACPI PCI
# hotplug on the root bus), 256 MiB, direct kernel boot, serial console
# to a file, QMP on a UNIX socket, no display, no network, no disk.
vm_qemu_args() {
	local guest=$1 serial=$2 qmp=$3 cmd=$4
	shift 4
	vm_accel "$guest"
	VM_ARGS=(
		"${VM_ACCEL[@]}"
		-M pc -m 256 -smp 1
		-display none -monitor none -nodefaults -no-user-config
		-chardev "file,id=con,path=$serial" -serial chardev:con
		-qmp "unix:$qmp,server=on,wait=off"
		-no-reboot
		-kernel "$guest/kernel" -initrd "$guest/initramfs.cpio"
		-append "console=ttyS0 quiet panic=-1 tochain.cmd=$cmd"
		"$@"
	)
}

vm_wait_line() {
	local log=$1 re=$2 limit=$3 pid=${4:-} end
	end=$(( $(date +%s) + limit ))
	while [ "$(date +%s)" -lt "$end" ]; do
		if [ -f "$log" ] && grep -aqE "$re" "$log"; then
			return 0
		fi
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			grep -aqE "$re" "$log" 2>/dev/null && return 0
			echo "vm_wait_line: QEMU exited before /$re/" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "vm_wait_line: no /$re/ within ${limit}s" >&2
	return 1
}

vm_qmp() {
	local sock=$1
	shift
	{
		echo '{"execute":"qmp_capabilities"}'
		local c
		for c in "$@"; do echo "$c"; sleep 0.3; done
		sleep 0.5
	} | socat -t 0.5 - "UNIX-CONNECT:$sock"
}

# 0 when the log has every "PASS name", no FAIL line and no kernel splat.
vm_check_log() {
	local log ok=0 p
	log=$(mktemp)
	tr -d '\r' <"$1" >"$log"	# the serial console says CRLF
	shift
	for p in "$@"; do
		if ! grep -aq "^PASS $p\$" "$log"; then
			echo "missing: PASS $p" >&2
			ok=1
		fi
	done
	if grep -a '^FAIL' "$log" >&2; then ok=1; fi
	if grep -aE 'GUEST-DMESG.*(BUG:|WARNING:|Oops|Call Trace|RIP:|general protection)' "$log" >&2; then ok=1; fi
	rm -f "$log"
	return $ok
}

# Seconds since an epoch timestamp taken with date +%s.%N.
vm_since() {
	awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}
