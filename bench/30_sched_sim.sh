#!/usr/bin/env bash
# Scheduler simulation: tochain-sim on the paper's setup (and the mixed
# deployment variant) in sync and cfs mode, and on the 1,000-chain scale
# scenario for the planning time of Algorithms 1+2.  Prints a table and
# writes $TOCHAIN_BUILD/bench/sched-sim.png (achieved vs SLA per chain,
# per load level, sync vs cfs).  Reports, never asserts.
set -euo pipefail

top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
sim=$build/bin/tochain-sim
scn=$top/host-sched/sim/scenarios
out=$build/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

for s in paper mixed scale; do
	"$sim" "$scn/$s.scn" --json >"$tmp/$s.json"
done

echo "scenario load    mode  chains>=95%SLA  sum(achieved)/sum(SLA)  jain    cpu-sync cpu-service cpu-host"
for s in paper mixed; do
	jq -r --arg s "$s" '.runs[] | [$s, .load, .mode,
		"\([.chains[] | select(.achieved >= 0.95 * .sla)] | length)/\(.chains | length)",
		(([.chains[].achieved] | add) / ([.chains[].sla] | add) | . * 1000 | round / 1000),
		(.jain | . * 1000 | round / 1000),
		(.cpu.sync * 100 | round), (.cpu.service * 100 | round), (.cpu.host * 100 | round)]
		| @tsv' "$tmp/$s.json" |
		awk -F'\t' '{printf "%-8s %-8s %-5s %-15s %-23s %-7s %6s%% %10s%% %7s%%\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}'
done
echo
jq -r '.runs[0] | "scale (\(.chains | length) chains, 120 sync pCPUs): algorithm 1+2 per period median \(.alg_us.median) us, p99 \(.alg_us.p99) us, max \(.alg_us.max) us over \(.alg_us.periods) periods"' "$tmp/scale.json"
jq -r '[.runs[] | select(.mode == "sync") | .alg_us.median] | "paper: algorithm 1+2 per period median of medians \(sort | .[length / 2 | floor]) us"' "$tmp/paper.json"

# One data file per (scenario, load): chain, SLA, sync achieved, cfs achieved.
panels=()
for s in paper mixed; do
	for load in $(jq -r '.runs[].load' "$tmp/$s.json" | awk '!seen[$0]++'); do
		f=$tmp/$s-$load.dat
		jq -r --arg l "$load" '
			([.runs[] | select(.mode == "sync" and .load == $l) | .chains[]]) as $a
			| ([.runs[] | select(.mode == "cfs" and .load == $l) | .chains[]]) as $b
			| range(0; $a | length) as $i
			| [$a[$i].chain, $a[$i].sla, $a[$i].achieved, ($b[$i].achieved // 0)] | @tsv' \
			"$tmp/$s.json" >"$f"
		panels+=("$s $load $f")
	done
done

if ! command -v gnuplot >/dev/null; then
	echo "gnuplot missing (make deps installs gnuplot-nox): no plot"
	exit 0
fi
{
	echo "set terminal pngcairo size 1600,$(( (${#panels[@]} + 3) / 4 * 420 )) font 'sans,9'"
	echo "set output '$out/sched-sim.png'"
	echo "set multiplot layout $(( (${#panels[@]} + 3) / 4 )),4 title 'tochain-sim: achieved vs SLA per chain (packets/s)'"
	echo "set style data histogram; set style histogram clustered gap 1; set style fill solid 0.8 border -1"
	echo "set xtics rotate by -45 scale 0; set yrange [0:*]; set offsets 0, 0, graph 0.2, 0"
	echo "set key top left horizontal; set grid ytics"
	for p in "${panels[@]}"; do
		set -- $p
		echo "set title '$1.scn, load $2'"
		echo "plot '$3' using 2:xtic(1) title 'SLA' lc rgb '#888888', '' using 3 title 'sync' lc rgb '#1f77b4', '' using 4 title 'cfs' lc rgb '#ff7f0e'"
	done
	echo "unset multiplot"
} >"$tmp/plot.gp"
gnuplot "$tmp/plot.gp"
echo "plot: $out/sched-sim.png"
