#!/usr/bin/env bash
# The trap path against the preload path, side by side in one run: the
# same small server (tests/progs/trap_server.c, dynamically linked, libc's
# socket calls) runs in the stand-in VM's loopback-only namespace under
# tochain-run twice, once with the runtime preloaded ("preload") and once
# on the trap path ("trap": tochain-run --trap, a seccomp supervisor
# serves its socket calls and relays its stream through a socketpair,
# guest-lib/README.md "The trap path"); both through the same TOE.  The
# client (bench/progs/toe_rrbench.c) runs on kernel sockets in a client
# namespace.  Request/response rate with 1 B and 1 KiB messages on one
# connection: medians of REPS runs (default 5) of RR_SECONDS (default 2)
# each, and trap/preload ratios.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"
reps=${REPS:-5}
rr_secs=${RR_SECONDS:-2}
bin=$build/bench/bin/toe-rrbench

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 0; }

tt_netns b21 10.82.21
tt_toe_start "$VM" bench21
gcc -O2 -Wall -Werror -o $work/srv "$top/tests/progs/trap_server.c"

declare -A port=([preload]=5101 [trap]=5102)
declare -A opt=([preload]= [trap]=--trap)
for path in preload trap; do
	ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" ${opt[$path]} -- \
		$work/srv rr ${port[$path]} >$work/$path.log 2>&1 &
	tc_on_exit "kill -9 $!"
	tc_wait_port "$CL" 10.82.21.2 ${port[$path]} 15 || { cat $work/$path.log; exit 1; }
done

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

printf '%-20s %10s %10s %8s\n' test preload trap trap/preload
for size in 1 1024; do
	declare -A med
	for path in preload trap; do
		vals=()
		for ((i = 0; i < reps; i++)); do
			out=$(ip netns exec "$CL" timeout 60 "$bin" rr 10.82.21.2 ${port[$path]} $size "$rr_secs") ||
				{ echo "run $path rr $size failed" >&2; cat $work/$path.log >&2; exit 1; }
			vals+=("$(echo "$out" | awk -F': ' '{print $2}' | awk '{print $1}')")
		done
		med[$path]=$(printf '%s\n' "${vals[@]}" | median)
	done
	ratio=$(awk -v a="${med[preload]}" -v b="${med[trap]}" 'BEGIN{printf "%.2f", (a>0)?b/a:0}')
	printf '%-20s %10s %10s %8s\n' "rr $size B (trans/s)" "${med[preload]}" "${med[trap]}" "$ratio"
done
