# shellcheck shell=bash
# The host side of a runtime guest (tests/guest/build-guest.sh --runtime)
# for the tests that boot one by hand (704, 715): a TOE in the VM's
# namespace, tochain-vmlink on its region, QEMU with the ivshmem device.
# Source after tests/lib/toe.sh and tests/guest/qemu.sh; needs $build,
# $work, $region = $work/region, $VM (the VM's namespace).
#
#   rg_init                 stop everything at exit; on failure print the
#                           guest's serial console, the link's, TOE's and
#                           QEMU's logs
#   rg_guest GUEST_RT EXTRA_DIR
#                           $work/guest: the runtime guest of GUEST_RT plus
#                           EXTRA_DIR (its /guest.sh, data) as one more archive
#   rg_start MODE NAME [LINK OPTIONS...] [-- QEMU ARGS...]
#                           MODE doorbell (ivshmem-doorbell, the link is its
#                           server) or poll (ivshmem-plain): a fresh TOE
#                           (pid $tpid, log $work/toe.log), the link (--slots
#                           4 unless given; $lpid, $work/link.log), QEMU on
#                           $work/guest ($qpid, $work/serial.log); as many
#                           MSI-X vectors as slots (slot i rings vector i,
#                           host-toe/vmlink/README.md; test 715 with 8 slots
#                           on 4 vectors once had one server of five take
#                           6-7 s per 2 MiB fetch instead of 0.1 s)
#   rg_stop                 stop QEMU, the link and the TOE (SIGTERM)
#   rg_serial               the serial console without CRs

qpid='' lpid='' tpid=''

# The host's side of a runtime guest, built by make (in $build).
rg_need_built() {
	local f
	for f in bin/tochain-toe bin/tochain-vmlink bin/tochain-run lib/libtochain-preload.so \
		guest-drivers/tochain_ivshmem.ko vm/ivshmem-guest-test; do
		[ -e "$build/$f" ] || fail "$build/$f missing (make)"
	done
}

rg_stop() {
	[ -n "$qpid" ] && { kill "$qpid"; wait "$qpid"; } 2>/dev/null
	[ -n "$lpid" ] && { kill "$lpid"; wait "$lpid"; } 2>/dev/null
	[ -n "$tpid" ] && { kill "$tpid"; wait "$tpid"; } 2>/dev/null
	qpid='' lpid='' tpid=''
}

rg_serial() { tr -d '\r' <"$work/serial.log" 2>/dev/null; }

rg_fail_logs() {
	echo "--- serial"; rg_serial | tail -n 60 || true
	echo "--- link"; tail -n 30 "$work/link.log" 2>/dev/null || true
	echo "--- toe"; tail -n 20 "$work/toe.log" 2>/dev/null || true
	echo "--- qemu"; cat "$work/qemu.out" 2>/dev/null || true
}

rg_init() {
	tc_on_exit rg_stop
	tc_on_fail rg_fail_logs
}

rg_guest() {
	local rt=$1 extra=$2
	mkdir -p "$work/guest"
	(cd "$extra" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/extra.cpio"
	cat "$rt/initramfs.cpio" "$work/extra.cpio" >"$work/guest/initramfs.cpio"
	ln -sfn "$(readlink -f "$rt/kernel")" "$work/guest/kernel"
}

rg_start() {
	local mode=$1 name=$2 lopts=() qargs=() dev slots=4
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		[ "$1" = --slots ] && slots=${2:?--slots N}
		lopts+=("$1")
		shift
	done
	[ $# -gt 0 ] && { shift; qargs=("$@"); }
	case " ${lopts[*]} " in *" --slots "*) ;; *) lopts+=(--slots "$slots") ;; esac
	rm -f "$work/serial.log" "$region" "$region.sock" "$work/ivs.sock" "$work/ready.link"
	# one fifo each: the TOE may close its end after the reader has its byte
	mkfifo "$work/ready.link"
	tt_toe_start --wait 30 "$VM" "$name" --nbufs 256 --channels 16
	tpid=$TOE
	lopts=(--region "$region" --verbose --ready-fd 3 "${lopts[@]}")
	[ "$mode" = doorbell ] && lopts+=(--doorbell "$work/ivs.sock")
	"$build/bin/tochain-vmlink" "${lopts[@]}" 3>"$work/ready.link" 2>"$work/link.log" &
	lpid=$!
	read -r -t 30 -n 1 _ <"$work/ready.link" || fail "link did not become ready"
	rm -f "$work/ready.link"
	if [ "$mode" = doorbell ]; then
		dev=(-chardev "socket,id=ivs,path=$work/ivs.sock"
			-device "ivshmem-doorbell,chardev=ivs,vectors=$slots")
	else
		dev=(-object "memory-backend-file,id=hmb,mem-path=$region,size=$(stat -c %s "$region"),share=on"
			-device "ivshmem-plain,memdev=hmb")
	fi
	vm_qemu_args "$work/guest" "$work/serial.log" "$work/qmp.sock" "$name" "${dev[@]}" "${qargs[@]}"
	"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
	qpid=$!
}
