#!/usr/bin/env bash
# timeout: 180
#
# The TOChain-CFS baseline misses an SLA that sync meets, with the mode
# switched at run time over the socket (sched.mode).  As tochain-sim
# found (mixed.scn), this needs CPU-bound tenant vCPUs sharing the
# partition: under the stock scheduler chain B's two service threads get
# a fair share against six spinning tenant vCPUs (about 1/4 of a core
# each however the threads are balanced, and B needs a whole core),
# while sync gives them the quota of eq. 2.  (With three tenants the
# outcome depended on how Linux happened to balance the threads: B got
# 61% to 110% of its SLA from run to run.)
# Offered load 1.5 x SLA keeps B backlogged: at exactly 1.0 x its
# threads sleep now and then and CFS's wake-up credit let them meet the
# SLA in some runs.  cfs must stay below 90% of B's SLA and sync reach
# 95%; the tenants must get CPU in both modes (sync is not starving
# them).
#
# The stand-ins register f with 20% headroom (--headroom 0.2).  With the
# default 10%, sync's chain B fell to 85-94% of its SLA in runs where
# other engineers' network benchmarks (wrk, nginx, qemu) shared the
# machine; our guess is interrupt time charged to whichever thread runs,
# which inflates a packet's CPU cost: the scheduler can only reserve what
# it is told a packet costs.
set -euo pipefail

. "${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/hsd.sh"
hsd_setup it311
hsd_start 90 --mode cfs

fail=0
run() { # mode
	local mode=$1
	"$sched" --socket "$sock" --ctl sched.mode "{\"mode\": \"$mode\"}" >/dev/null
	sleep 0.6	# the switch takes effect at the next period
	"$worker" --socket "$sock" --region "$region" --warmup 2 --measure 4 --headroom 0.2 --json \
		vm va rx_us=20 vm vb rx_us=20 tenant t vcpus=6 \
		chain A vm=va sla=200 vnf_us=1000 load=1.5 \
		chain B vm=vb sla=1000 threads=2 vnf_us=1000 load=1.5 \
		>"$tmp/w-$mode.json" &
	wpid=$!
	sleep 4
	"$sched" --socket "$sock" --ctl sched.show >"$tmp/show-$mode.json"
	wait "$wpid"
	wpid=
	echo "== $mode, load 1.5 x SLA"
	jq -r '.chains[] | "\(.chain) sla \(.sla) offered \(.offered|floor) achieved \(.achieved|floor) ratio \(.ratio*1000|floor/1000)"' "$tmp/w-$mode.json"
	jq -r '"jain \(.jain*1000|floor/1000), tenants cpu \([.tenants[].cpu]|add*100|floor/100)"' "$tmp/w-$mode.json"
	jq -e --arg m "$mode" '.mode == $m' "$tmp/show-$mode.json" >/dev/null ||
		{ echo "FAIL: sched.show does not say mode $mode"; fail=1; }
	jq -e '[.tenants[].cpu] | add > 0.1' "$tmp/w-$mode.json" >/dev/null ||
		{ echo "FAIL: $mode starves the tenants"; fail=1; }
}
run cfs
run sync
# A shared machine can disturb one measurement: sync gets a second one
# when it missed narrowly (every chain at 90% of its SLA or more), and
# that one decides; a miss by more fails at once.
if jq -e '[.chains[] | select(.ratio < 0.95)] | length > 0' "$tmp/w-sync.json" >/dev/null &&
	hsd_near_miss "$tmp/w-sync.json"; then
	echo "-- sync missed once; measuring again (a shared machine is noisy)"
	run sync
fi
jq -e '.chains[] | select(.chain == "B") | .ratio < 0.90' "$tmp/w-cfs.json" >/dev/null ||
	{ echo "FAIL: cfs meets B's SLA: nothing to show here"; fail=1; }
for c in $(jq -r '.chains[] | select(.ratio < 0.95) | .chain' "$tmp/w-sync.json"); do
	echo "FAIL: sync: chain $c below 95% of its SLA"; fail=1
done
jq -e '.plan == null' "$tmp/show-cfs.json" >/dev/null ||
	{ echo "FAIL: cfs mode shows a plan"; fail=1; }
[ $fail = 0 ] && echo "PASS"
exit $fail
