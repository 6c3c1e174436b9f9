#!/usr/bin/env bash
# The TCP offload path against a plain veth path, side by side in one run:
# the same client program (bench/progs/toe_rrbench.c) runs once in a namespace
# with an ordinary veth into the fabric bridge ("kernel") and once under
# tochain-run in a loopback-only namespace whose TCP goes through
# tochain-toe ("offload"); the server is in a client namespace.
# Request/response rate with 1 B and 1 KiB messages, and one bulk stream
# each way.  The offload path runs twice, on two TOEs: the TOE's
# defaults (16 KiB slots) and the geometry tochaind gives its VMs' TOEs
# in its default 64 MiB region (8 KiB slots, 7812 of them, td_state.h),
# where one write spans many slots.  Medians of REPS runs (default 3) and offload/kernel ratios.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/rrbench.sh"
rb_init 128

tc_init
tc_fabric
tc_host SRV srv 10.82.0.1/24
tc_host VM vm 10.82.0.2/24
tc_host PL pl 10.82.0.3/24
tc_host VM2 vm2 10.82.0.4/24
tc_isolated GU gu
tc_isolated GU2 gu2
work=$(mktemp -d /dev/shm/tcb20.XXXXXX)
tc_on_exit "rm -rf $work"
region=$work/regiontd
tt_toe_start "$VM2" bench20s --slot-size 8192 --nbufs 7812
region=$work/region
tt_toe_start "$VM" bench20
ip netns exec "$SRV" "$bin" server 5001 &
tc_on_exit "kill -9 $!"
tc_wait_port "$PL" 10.82.0.1 5001 10

run() { # path test args...
	local path=$1; shift
	if [ "$path" = kernel ]; then
		ip netns exec "$PL" timeout 60 "$bin" "$@" 10.82.0.1 5001 "${ARGS[@]}"
	elif [ "$path" = offload ]; then
		rb_guest "$GU" "$region" "$1" 10.82.0.1 "${ARGS[@]}"
	else
		rb_guest "$GU2" "$work/regiontd" "$1" 10.82.0.1 "${ARGS[@]}"
	fi
}

printf '%-18s %10s %10s %8s %12s %8s\n' test kernel offload ratio offload-td ratio-td
for t in rr1 rr1k up down; do
	case $t in
	rr1) name="rr 1 B"; unit="trans/s"; cmd=rr; ARGS=(1 "$rr_secs");;
	rr1k) name="rr 1 KiB"; unit="trans/s"; cmd=rr; ARGS=(1024 "$rr_secs");;
	up) name="bulk up"; unit="MB/s"; cmd=up; ARGS=("$mib");;
	down) name="bulk down"; unit="MB/s"; cmd=down; ARGS=("$mib");;
	esac
	declare -A med
	for path in kernel offload offloadtd; do
		vals=()
		for ((i = 0; i < reps; i++)); do
			# rr takes SIZE SECONDS after host/port; the others MIB
			out=$(run $path $cmd) || { echo "run $path $t failed" >&2; exit 1; }
			vals+=("$(echo "$out" | rb_value)")
		done
		med[$path]=$(printf '%s\n' "${vals[@]}" | median)
	done
	ratio=$(awk -v a="${med[kernel]}" -v b="${med[offload]}" 'BEGIN{printf "%.2f", (a>0)?b/a:0}')
	ratio2=$(awk -v a="${med[kernel]}" -v b="${med[offloadtd]}" 'BEGIN{printf "%.2f", (a>0)?b/a:0}')
	printf '%-18s %10s %10s %8s %12s %8s\n' "$name ($unit)" "${med[kernel]}" "${med[offload]}" \
		"$ratio" "${med[offloadtd]}" "$ratio2"
done
echo "(medians of $reps runs; ratio = offload / kernel, offload with 16 KiB slots, offload-td"
echo " with 8 KiB slots as tochaind runs a 64 MiB region; $(nproc) CPUs shared with other work)"
