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
. "$top/tests/lib/rrbench.sh"
rb_init 32

tt_setup b41
ip netns exec "$CL" "$bin" server 5001 &
tc_on_exit "kill -9 $!"
tc_wait_port "$VM" 10.81.0.1 5001 10
for v in h1 h2 h3 h4; do tt_vnf $v; done

printf '%-12s %12s %12s %8s %12s %8s\n' chain "rr trans/s" "latency us" ratio "up MB/s" ratio
base_rr= base_up=
for shape in none 0 1 2 4; do
	ctl chain.del '{"dir":"in"}' >/dev/null; ctl chain.del '{"dir":"out"}' >/dev/null
	if [ "$shape" != none ]; then
		hops=$(python3 -c "import json; print(json.dumps([['h%d' % (i + 1)] for i in range($shape)]))")
		for d in in out; do ctl_ok chain.set "{\"dir\":\"$d\",\"name\":\"b$shape\",\"hops\":$hops}" >/dev/null; done
	fi
	rb_measure 10.81.0.1
	[ -n "$base_rr" ] || { base_rr=$m_rr; base_up=$m_up; }
	label=$([ "$shape" = none ] && echo "no chain" || echo "$shape hops")
	awk -v l="$label" -v r="$m_rr" -v u="$m_up" -v br="$base_rr" -v bu="$base_up" 'BEGIN {
		printf "%-12s %12.0f %12.1f %8.2f %12.1f %8.2f\n", l, r, (r > 0) ? 1e6 / r : 0,
			(br > 0) ? r / br : 0, u, (bu > 0) ? u / bu : 0 }'
done
echo "(medians of $reps runs; chains set in both directions; ratio = vs no chain; $(nproc) CPUs shared with other work)"
