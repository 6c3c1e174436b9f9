#!/usr/bin/env bash
# timeout: 120
#
# Heavy load (3 x SLA offered to every chain, with CPU-bound tenants):
# sync holds every chain near its SLA, so the receiving VMs stay fair
# (Jain's index of achieved/SLA >= 0.95) and none falls below 95% of its
# SLA; the dropped excess is the overload, not a starved chain.  Three
# chains of different SLAs and costs, one a two-thread gang.
#
# The stand-ins register f with 20% headroom (--headroom 0.2).  With the
# default 10%, sync's chain B fell to 85-94% of its SLA in runs where
# other engineers' network benchmarks (wrk, nginx, qemu) shared the
# machine; our guess is interrupt time charged to whichever thread runs,
# which inflates a packet's CPU cost: the scheduler can only reserve what
# it is told a packet costs.
set -euo pipefail

. "${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/hsd.sh"
hsd_setup it312
hsd_start 60

measure() {
	"$worker" --socket "$sock" --region "$region" --warmup 2 --measure 4 --headroom 0.2 --json \
		vm va rx_us=20 vm vb rx_us=20 vm vc rx_us=20 tenant t vcpus=2 \
		chain A vm=va sla=200 vnf_us=1000 load=3 \
		chain B vm=vb sla=1000 threads=2 vnf_us=1000 load=3 \
		chain C vm=vc sla=400 vnf_us=500 load=3 \
		>"$tmp/w.json"
}
measure
# A shared machine can disturb one measurement: after a narrow miss
# (every chain at 90% of its SLA or more) a second one decides; a miss
# by more fails at once.
if ! jq -e '.jain >= 0.95 and ([.chains[] | select(.ratio < 0.95)] | length == 0)' "$tmp/w.json" >/dev/null &&
	hsd_near_miss "$tmp/w.json"; then
	echo "-- missed once; measuring again (a shared machine is noisy)"
	measure
fi
fail=0
echo "== sync, load 3.0 x SLA"
jq -r '.chains[] | "\(.chain) sla \(.sla) offered \(.offered|floor) achieved \(.achieved|floor) ratio \(.ratio*1000|floor/1000) dropped \(.dropped|floor)"' "$tmp/w.json"
jq -r '"jain \(.jain*1000|floor/1000), tenants cpu \([.tenants[].cpu]|add*100|floor/100)"' "$tmp/w.json"
jq -e '.jain >= 0.95' "$tmp/w.json" >/dev/null || { echo "FAIL: Jain below 0.95"; fail=1; }
for c in $(jq -r '.chains[] | select(.ratio < 0.95) | .chain' "$tmp/w.json"); do
	echo "FAIL: chain $c below 95% of its SLA"; fail=1
done
[ $fail = 0 ] && echo "PASS"
exit $fail
