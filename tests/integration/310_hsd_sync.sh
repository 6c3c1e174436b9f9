#!/usr/bin/env bash
# timeout: 180
#
# tochain-sched on real threads, with the backend the host has (v1 with
# freezer gating here, v2 with quota gating on a v2 host: tests/lib/hsd.sh):
# stand-in VNFs and VMs (hsd-worker: calibrated CPU per packet) next to
# CPU-bound tenant vCPUs on both cores.  Under light (1.0 x SLA) and
# medium (1.5 x SLA) offered load, sync reaches >= 95% of every chain's
# SLA; the two service threads of chain B (a gang) start their slots
# within 2 ms of each other (median over the measured periods); early
# ends happen at light load (freezer gating only); sched.show returns the plan over the socket;
# the daemon's own CPU stays below 5% of a period; and its cgroups are
# gone when it exits (status 0: under SAN=1 that includes no leak).
# Tolerant thresholds: this machine is shared.
#
# The stand-ins register f with 20% headroom (--headroom 0.2).  With the
# default 10%, sync's chain B fell to 85-94% of its SLA in runs where
# other engineers' network benchmarks (wrk, nginx, qemu) shared the
# machine; our guess is interrupt time charged to whichever thread runs,
# which inflates a packet's CPU cost: the scheduler can only reserve what
# it is told a packet costs.
set -euo pipefail

. "${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/hsd.sh"
hsd_setup it310
hsd_start 90

fail=0
run() { # load -> worker JSON in $tmp/w-$load.json; sched.show mid-run
	local load=$1
	"$worker" --socket "$sock" --region "$region" --warmup 2 --measure 4 --headroom 0.2 --json \
		vm va rx_us=20 vm vb rx_us=20 tenant t vcpus=3 \
		chain A vm=va sla=200 vnf_us=1000 load="$load" \
		chain B vm=vb sla=1000 threads=2 vnf_us=1000 load="$load" \
		>"$tmp/w-$load.json" &
	wpid=$!
	sleep 4
	"$sched" --socket "$sock" --ctl sched.show >"$tmp/show-$load.json"
	wait "$wpid"
	wpid=
	echo "== sync, load $load x SLA"
	jq -r '.chains[] | "\(.chain) sla \(.sla) offered \(.offered|floor) achieved \(.achieved|floor) ratio \(.ratio*1000|floor/1000) skew_ms p50 \(.skew_ms.median) max \(.skew_ms.max) (\(.skew_ms.periods) periods)"' "$tmp/w-$load.json"
	jq -r '"jain \(.jain*1000|floor/1000), tenants cpu \([.tenants[].cpu]|add*100|floor/100)"' "$tmp/w-$load.json"
	jq -r '"daemon: \(.cpu_us_mean|floor) us cpu/period, \(.early_ends) early ends, mode \(.mode), gating \(.gating)"' "$tmp/show-$load.json"
	jq -r '.text' "$tmp/show-$load.json" | grep '^pcpu'
	jq -r '"quota feedback: " + ([.chains[] | select(.vnfs | length > 0) | "\(.chain) f_est \(.vnfs[0].f_est|floor) quota \(.vnfs[0].quota)"] | join(", "))' \
		"$tmp/show-$load.json"
	for c in $(jq -r '.chains[] | select(.ratio < 0.95) | .chain' "$tmp/w-$load.json"); do
		echo "FAIL: load $load: chain $c below 95% of its SLA"; fail=1
	done
	if ! jq -e '.chains[] | select(.chain == "B") | .skew_ms.periods >= 4 and .skew_ms.median < 2' \
		"$tmp/w-$load.json" >/dev/null; then
		echo "FAIL: load $load: gang B skew too large or too few periods"; fail=1
	fi
	if ! jq -e '.mode == "sync" and (.plan.pcpus | length) == 2 and ([.threads[] | select(.pcpu >= 0)] | length) == 8' \
		"$tmp/show-$load.json" >/dev/null; then
		echo "FAIL: sched.show: no 2-pCPU plan placing all 8 threads"; fail=1
	fi
	if ! jq -e '.cpu_us_mean < 25000' "$tmp/show-$load.json" >/dev/null; then
		echo "FAIL: the daemon used more than 5% of a period"; fail=1
	fi
}
# One measurement at a load may be disturbed by whatever else shares this
# machine: a near miss (every chain at 90% of its SLA or more) is measured
# again and the second measurement decides; a scheduler that misses by
# more fails at once.
measure() { # load
	local before=$fail
	run "$1"
	if [ "$fail" != "$before" ] && hsd_near_miss "$tmp/w-$1.json"; then
		echo "-- load $1 missed once; measuring again (a shared machine is noisy)"
		fail=$before
		run "$1"
	fi
}
measure 1.0
# a slot ends early by freezing its thread: quota gating (v2) has none
if [ "$HSD_GATING" != freezer ]; then
	echo "early ends: none with $HSD_GATING gating, not checked"
elif ! jq -e '.early_ends > 0' "$tmp/show-1.0.json" >/dev/null; then
	echo "FAIL: no early end at light load"; fail=1
fi
measure 1.5

kill "$dpid"
if ! wait "$dpid"; then
	echo "FAIL: tochain-sched did not exit cleanly on SIGTERM:"; tail -20 "$tmp/daemon.log"; fail=1
fi
dpid=
for d in $(hsd_groups_left); do
	echo "FAIL: $d left behind"; fail=1
done
[ $fail = 0 ] && echo "PASS"
exit $fail
