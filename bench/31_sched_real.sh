#!/usr/bin/env bash
# The CPU scheduler on real threads: tochain-sched (cgroup v1 backend on
# this machine) driving hsd-worker's stand-in VNFs and VMs on the two
# cores, in sync mode with freezer gating (time slots), sync mode with
# CFS-quota gating, and cfs mode (the stock scheduler, TOChain-CFS), at
# light / medium / heavy offered load (1.0 / 1.5 / 3.0 x SLA).
#
# Host: chains A (200 pkt/s, 1 ms of CPU per packet), B (1000 pkt/s,
# 1 ms, two service threads: a gang), C (600 pkt/s, 0.5 ms); receiving
# VMs va (A, C) and vb (B), 20 us per packet; a tenant VM with 4
# CPU-bound vCPUs.  Prints per mode and load, per chain: SLA, offered,
# achieved, achieved/SLA; Jain's index over chains; the gang skew of B
# (median and max over the measured periods, ms); the tenants' CPU; the
# daemon's CPU per period.  Then, sync at 1.0 x SLA with the paper's tick
# and period (10 ms x 50) and shorter ones: the daemon's CPU per period
# and each chain's achieved/SLA.  Reports, never asserts.  ~120 s.
set -euo pipefail

top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
sched=$build/bin/tochain-sched
worker=$build/tests/bin/hsd-worker
cg=hsd-bench31-$$
tmp=$(mktemp -d)
sock=$tmp/sched.sock
region=/dev/shm/hsd-bench31-$$
dpid=

cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	[ -n "$dpid" ] && wait "$dpid" 2>/dev/null
	"$sched" --backend v1 --cgroup "$cg" --cleanup 2>/dev/null || true
	rm -rf "$tmp" "$region"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ] || ! "$sched" --backend auto --cgroup "$cg" --cleanup 2>/dev/null; then
	echo "31_sched_real: skipped (needs root and a cgroup hierarchy with cpu)"
	exit 0
fi

printf '%-12s %-6s %-5s %6s %8s %9s %7s %7s %9s %9s %8s %12s\n' mode load chain sla offered achieved ratio jain skew_p50 skew_max tenants daemon_us/per
for m in sync:freezer sync:quota cfs:freezer; do
	mode=${m%%:*} gating=${m##*:}
	label=$mode; [ "$mode" = sync ] && label="sync/$gating"
	"$sched" --socket "$sock" --backend auto --cgroup "$cg" --sync-cpus 0-1 \
		--mode "$mode" --gating "$gating" --duration 60 --print-every 0 \
		>"$tmp/daemon.log" 2>&1 &
	dpid=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	for load in 1.0 1.5 3.0; do
		"$worker" --socket "$sock" --region "$region" --warmup 2 --measure 4 --json \
			vm va rx_us=20 vm vb rx_us=20 tenant t vcpus=4 \
			chain A vm=va sla=200 vnf_us=1000 load="$load" \
			chain B vm=vb sla=1000 threads=2 vnf_us=1000 load="$load" \
			chain C vm=va sla=600 vnf_us=500 load="$load" >"$tmp/w.json" &
		wp=$!
		sleep 5
		"$sched" --socket "$sock" --ctl sched.show >"$tmp/show.json" || echo '{}' >"$tmp/show.json"
		wait "$wp"
		dus=$(jq -r '.cpu_us_last // "?"' "$tmp/show.json")
		jq -r --arg mode "$label" --arg load "$load" --arg dus "$dus" '
			.jain as $j | ([.tenants[].cpu] | add) as $t |
			.chains[] | [$mode, $load, .chain, .sla, (.offered | round), (.achieved | round),
			  (.ratio * 1000 | round / 1000), ($j * 1000 | round / 1000),
			  (if .skew_ms.periods > 0 then (.skew_ms.median * 1000 | round / 1000) else "-" end),
			  (if .skew_ms.periods > 0 then (.skew_ms.max * 1000 | round / 1000) else "-" end),
			  ($t * 100 | round / 100), $dus] | @tsv' "$tmp/w.json" |
			awk -F'\t' '{printf "%-12s %-6s %-5s %6s %8s %9s %7s %7s %9s %9s %8s %12s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12}'
	done
	kill "$dpid"; wait "$dpid" 2>/dev/null || true; dpid=
	rm -f "$sock"
done
echo "(ratio = achieved/SLA; jain over chains' ratios; skew = max-min of B's two"
echo " service threads' first run in a period, ms; tenants = CPUs the tenant VM got;"
echo " daemon_us/per = tochain-sched's own CPU in the last period of 500 ms)"

# What a shorter period costs the daemon: sync, freezer gating, 1.0 x SLA,
# the paper's tick and period (10 ms x 50) and shorter ones side by side.
echo
printf '%-8s %9s %14s %10s %7s %7s %7s\n' tick*g period_ms daemon_us/per daemon_cpu A B C
for s in 10:50 4:50 2:50 2:25; do
	tick=${s%%:*} g=${s##*:}
	"$sched" --socket "$sock" --backend auto --cgroup "$cg" --sync-cpus 0-1 \
		--mode sync --gating freezer --tick-ms "$tick" --period "$g" --duration 30 \
		--print-every 0 >"$tmp/daemon.log" 2>&1 &
	dpid=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	"$worker" --socket "$sock" --region "$region" --warmup 2 --measure 6 --json \
		vm va rx_us=20 vm vb rx_us=20 tenant t vcpus=4 \
		chain A vm=va sla=200 vnf_us=1000 \
		chain B vm=vb sla=1000 threads=2 vnf_us=1000 \
		chain C vm=va sla=600 vnf_us=500 >"$tmp/w.json" &
	wp=$!
	sleep 7
	"$sched" --socket "$sock" --ctl sched.show >"$tmp/show.json" || echo '{}' >"$tmp/show.json"
	wait "$wp" || true
	per=$((tick * g))
	dus=$(jq -r '.cpu_us_mean // 0 | round' "$tmp/show.json")
	ratios=$(jq -r '[.chains[] | (.ratio * 100 | round / 100)] | @tsv' "$tmp/w.json" 2>/dev/null || echo "- - -")
	printf '%-8s %9s %14s %9.2f%% %7s %7s %7s\n' "${tick}x$g" "$per" "$dus" \
		"$(echo "$dus $per" | awk '{print $1 / ($2 * 1000) * 100}')" $ratios
	kill "$dpid"; wait "$dpid" 2>/dev/null || true; dpid=
	rm -f "$sock"
done
echo "(daemon_us/per = tochain-sched's own CPU per period, mean over the run;"
echo " daemon_cpu = that as a share of one CPU; A B C = achieved/SLA)"
