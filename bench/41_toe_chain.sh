#!/usr/bin/env bash
# Service chains through the TOE: request/response rate (and its inverse,
# the round-trip latency) with 1 KiB messages and one bulk stream from the
# guest (bench/progs/toe_rrbench.c under tochain-run), with no chain, a
# pass-through chain (0 hops) and chains of 1, 2 and 4 null VNF hops set
# in both directions.  Medians of REPS runs (default 3), ratios against
# no chain.  Timings are not asserted.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"
reps=${REPS:-3}
rr_secs=${RR_SECONDS:-1}
mib=${BULK_MIB:-32}
bin=$build/bench/bin/toe-rrbench

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 0; }

tt_setup b41
ip netns exec "$CL" "$bin" server 5001 &
tc_on_exit "kill -9 $!"
tc_wait_port "$VM" 10.81.0.1 5001 10
for v in h1 h2 h3 h4; do tt_vnf $v; done

run() { # rr|up
	if [ "$1" = rr ]; then
		ip netns exec "$GU" timeout 60 "$build/bin/tochain-run" --region "$region" -- \
			"$bin" rr 10.81.0.1 5001 1024 "$rr_secs"
	else
		ip netns exec "$GU" timeout 60 "$build/bin/tochain-run" --region "$region" -- \
			"$bin" up 10.81.0.1 5001 "$mib"
	fi
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

printf '%-12s %12s %12s %8s %12s %8s\n' chain "rr trans/s" "latency us" ratio "up MB/s" ratio
base_rr= base_up=
for shape in none 0 1 2 4; do
	ctl chain.del '{"dir":"in"}' >/dev/null; ctl chain.del '{"dir":"out"}' >/dev/null
	if [ "$shape" != none ]; then
		hops=$(python3 -c "import json; print(json.dumps([['h%d' % (i + 1)] for i in range($shape)]))")
		for d in in out; do ctl_ok chain.set "{\"dir\":\"$d\",\"name\":\"b$shape\",\"hops\":$hops}" >/dev/null; done
	fi
	rr=() up=()
	for ((i = 0; i < reps; i++)); do
		rr+=("$(run rr | awk -F': ' '{print $2}' | awk '{print $1}')")
		up+=("$(run up | awk -F': ' '{print $2}' | awk '{print $1}')")
	done
	m_rr=$(printf '%s\n' "${rr[@]}" | median)
	m_up=$(printf '%s\n' "${up[@]}" | median)
	[ -n "$base_rr" ] || { base_rr=$m_rr; base_up=$m_up; }
	label=$([ "$shape" = none ] && echo "no chain" || echo "$shape hops")
	awk -v l="$label" -v r="$m_rr" -v u="$m_up" -v br="$base_rr" -v bu="$base_up" 'BEGIN {
		printf "%-12s %12.0f %12.1f %8.2f %12.1f %8.2f\n", l, r, (r > 0) ? 1e6 / r : 0,
			(br > 0) ? r / br : 0, u, (bu > 0) ? u / bu : 0 }'
done
echo "(medians of $reps runs; chains set in both directions; ratio = vs no chain; $(nproc) CPUs shared with other work)"
