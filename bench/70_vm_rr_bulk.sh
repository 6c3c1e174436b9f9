#!/usr/bin/env bash
# The runtime inside a real QEMU guest, doorbell and poll mode side by
# side: bench/progs/toe_rrbench.c runs under tochain-run in the guest (the runtime
# test image, tests/guest/build-guest.sh --runtime), its TCP offloaded to
# tochain-toe on the host through tochain-vmlink; the server is in a
# namespace on the fabric.  Per mode: request/response rate with 1 B and
# 1 KiB messages, one bulk stream each way, and the idle CPU of the
# guest's QEMU process over IDLE_SECONDS (default 5), once with no
# process of the guest using the runtime and once with one blocked in
# accept() under it (doorbell: it sleeps on its eventfd; poll: it wakes
# every poll period), plus the link's CPU in that time.  One run per mode
# (TCG boots take a while); figures move with the machine's load.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"
. "$top/tests/guest/qemu.sh"
rr_secs=${RR_SECONDS:-2}
mib=${BULK_MIB:-16}
idle=${IDLE_SECONDS:-5}
poll_us=${POLL_US:-200}
bin=$build/bench/bin/toe-rrbench

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 0; }
command -v "$VM_QEMU" >/dev/null || { echo "SKIP: $VM_QEMU not installed"; exit 0; }
for f in "$bin" "$build/bin/tochain-toe" "$build/bin/tochain-vmlink"; do
	[ -x "$f" ] || { echo "missing $f (make)"; exit 1; }
done
guest_rt=$("$top/tests/guest/build-guest.sh" "$build" --runtime)

tc_init
tc_fabric
tc_host SRV srv 10.70.7.1/24
tc_host VM vm 10.70.7.2/24
work=$(mktemp -d /dev/shm/tcb70.XXXXXX)
region=$work/region
tc_on_exit "rm -rf $work"
qpid= lpid= tpid=
stop_all() {
	[ -n "$qpid" ] && { kill "$qpid"; wait "$qpid"; } 2>/dev/null
	[ -n "$lpid" ] && { kill "$lpid"; wait "$lpid"; } 2>/dev/null
	[ -n "$tpid" ] && { kill "$tpid"; wait "$tpid"; } 2>/dev/null
	qpid= lpid= tpid=
}
tc_on_exit stop_all
ip netns exec "$SRV" "$bin" server 5001 &
tc_on_exit "kill -9 $!"

mkdir -p "$work/extra/bin" "$work/guest"
cp "$bin" "$work/extra/bin/toe-rrbench"
cat >"$work/extra/guest.sh" <<EOF
#!/bin/sh
echo "GUEST-IDLE0"
sleep $((idle + 2))
tochain-run -- busybox-dyn nc -l -p 9000 &
sleep 1
echo "GUEST-IDLE1"
sleep $((idle + 2))
r() { echo "GUEST-R \$(tochain-run -- /bin/toe-rrbench "\$@" 2>&1 | tail -n 1)"; }
r rr 10.70.7.1 5001 1 $rr_secs
r rr 10.70.7.1 5001 1024 $rr_secs
r up 10.70.7.1 5001 $mib
r down 10.70.7.1 5001 $mib
echo "GUEST-BENCH-DONE"
EOF
chmod 755 "$work/extra/guest.sh"
(cd "$work/extra" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/extra.cpio"
cat "$guest_rt/initramfs.cpio" "$work/extra.cpio" >"$work/guest/initramfs.cpio"
ln -s "$(readlink -f "$guest_rt/kernel")" "$work/guest/kernel"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)
pct() { awk -v d="$1" -v hz="$hz" -v s="$idle" 'BEGIN { printf "%.1f%%", 100 * d / hz / s }'; }
declare -A res

run_mode() { # doorbell|poll
	local mode=$1 q0 q1 l0 l1 dev
	rm -f "$work/serial.log" "$work/region" "$work/region.sock" "$work/ivs.sock" "$work"/ready.*
	mkfifo "$work/ready.link"	# one of its own: the TOE closes its end late
	tt_toe_start --wait 30 "$VM" bench70 --channels 16
	tpid=$TOE
	local lopts=(--region "$work/region" --slots 4 --poll-us "$poll_us" --ready-fd 3)
	[ "$mode" = doorbell ] && lopts+=(--doorbell "$work/ivs.sock")
	"$build/bin/tochain-vmlink" "${lopts[@]}" 3>"$work/ready.link" 2>"$work/link.log" &
	lpid=$!
	read -r -t 30 -n 1 _ <"$work/ready.link"
	if [ "$mode" = doorbell ]; then
		dev=(-chardev "socket,id=ivs,path=$work/ivs.sock"
			-device "ivshmem-doorbell,chardev=ivs,vectors=4")
	else
		dev=(-object "memory-backend-file,id=hmb,mem-path=$work/region,size=$(stat -c %s "$work/region"),share=on"
			-device "ivshmem-plain,memdev=hmb")
	fi
	vm_qemu_args "$work/guest" "$work/serial.log" "$work/qmp.sock" bench70 "${dev[@]}"
	"$VM_QEMU" "${VM_ARGS[@]}" >"$work/qemu.out" 2>&1 &
	qpid=$!
	for k in 0 1; do
		vm_wait_line "$work/serial.log" "^GUEST-IDLE$k" 120 "$qpid"
		sleep 1
		q0=$(ticks "$qpid"); l0=$(ticks "$lpid")
		sleep "$idle"
		q1=$(ticks "$qpid"); l1=$(ticks "$lpid")
		res[$mode,idle$k]=$(pct $((q1 - q0)))
		res[$mode,link$k]=$(pct $((l1 - l0)))
	done
	vm_wait_line "$work/serial.log" '^GUEST-BENCH-DONE' 300 "$qpid"
	tr -d '\r' <"$work/serial.log" | sed -n 's/^GUEST-R //p' >"$work/r.$mode"
	res[$mode,rr1]=$(awk '/^rr 1:/ {print $3}' "$work/r.$mode")
	res[$mode,rr1k]=$(awk '/^rr 1024:/ {print $3}' "$work/r.$mode")
	res[$mode,up]=$(awk '/^up:/ {print $2}' "$work/r.$mode")
	res[$mode,down]=$(awk '/^down:/ {print $2}' "$work/r.$mode")
	stop_all
}

run_mode doorbell
run_mode poll
vm_accel "$work/guest"
printf '%-40s %12s %12s\n' "runtime in a QEMU guest (${VM_ACCEL[*]})" doorbell "poll ${poll_us}us"
printf '%-40s %12s %12s\n' "rr 1 B (trans/s)" "${res[doorbell,rr1]:--}" "${res[poll,rr1]:--}"
printf '%-40s %12s %12s\n' "rr 1 KiB (trans/s)" "${res[doorbell,rr1k]:--}" "${res[poll,rr1k]:--}"
printf '%-40s %12s %12s\n' "bulk up, ${mib} MiB (MB/s)" "${res[doorbell,up]:--}" "${res[poll,up]:--}"
printf '%-40s %12s %12s\n' "bulk down, ${mib} MiB (MB/s)" "${res[doorbell,down]:--}" "${res[poll,down]:--}"
printf '%-40s %12s %12s\n' "idle QEMU CPU, no runtime process" "${res[doorbell,idle0]}" "${res[poll,idle0]}"
printf '%-40s %12s %12s\n' "idle QEMU CPU, one blocked in accept" "${res[doorbell,idle1]}" "${res[poll,idle1]}"
printf '%-40s %12s %12s\n' "idle link CPU, one blocked in accept" "${res[doorbell,link1]}" "${res[poll,link1]}"
echo "(one run per mode; CPU over ${idle} s from /proc/PID/stat; $(nproc) CPUs shared with other work)"
