#!/usr/bin/env bash
# The paper's SLA experiment (issue 15) on real chains, at this machine's
# scale: SLA_CHAINS stand-in VMs (default 3) behind one tochaind, each
# with the firewall as nftables beside its TOE and its own chain
# (ids || waf) of VNFs with one service thread each, each chain with a
# different SLA (classes 1 : 2 : 5 as the paper's 1, 2 and 5 kpackets/s)
# and its own receiver: nginx, unmodified, under tochain-run in an
# isolated namespace (the VM).  An open-loop generator (ev-load, one per
# chain, all at once) offers each chain its rate; what each receiver got
# is counted from its access log over the measured window.  Loads:
#   light, medium  SLAs summing to SLA_LIGHT / SLA_MEDIUM (default 0.15 /
#                  0.3) of the VNF capacity H = 2 CPUs / (1/f_ids + 1/f_waf)
#                  from the VNFs' calibrated f (sfc-ctl vnf calibrate);
#                  offered = SLA
#   heavy          medium's SLAs, offered in proportion to them, in all
#                  SLA_HEAVY (default 1.5) times what the host served in a
#                  closed-loop probe at the start (cfs, wrk -c32 per chain,
#                  not recorded): more than the host can serve
#   closed         medium's SLAs, wrk with 32 connections per chain
#                  (closed loop: offered = what wrk got through)
# each in sync and in cfs mode (sfc-ctl sched mode).  Every request is
# GET /1k/products?id=1042&sort=price&order=asc (the harness's clean
# probe: a query string for the WAF to inspect).  Writes
# BUILD/bench/sla-real.json, BUILD/bench/sla-real.png and a table, and
# the CPU per request of the TOEs, the VNFs, the receivers and the daemons
# in each run with tochain-sched's share of the host; details in
# BUILD/bench/sla/ (runs.tsv, cpu.tsv, sched-MODE-LOAD.json = `sfc-ctl
# sched show` as each run starts, logs/).  Asserts nothing.
# Knobs (environment): SLA_SECONDS (8, measured window per run),
# SLA_CHAINS, SLA_MODES ("sync cfs"), SLA_LOADS ("light medium heavy
# closed"), SLA_LIGHT, SLA_MEDIUM, SLA_HEAVY, and SLA_F_IDS with SLA_F_WAF
# (packets/s: use these f instead of calibrating, to compare runs on a
# machine whose load moves the calibration), SLA_PERIOD ("TICKS TICK_US":
# tochain-sched's period, set with `sfc-ctl sched period` before the runs;
# default the daemon's 50 x 10 ms).  About 3 minutes with the defaults.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
secs=${SLA_SECONDS:-8} nchains=${SLA_CHAINS:-3} modes=${SLA_MODES:-sync cfs}
loads=${SLA_LOADS:-light medium heavy closed}
light=${SLA_LIGHT:-0.15} medium=${SLA_MEDIUM:-0.3} heavy=${SLA_HEAVY:-1.5}
path='/1k/products?id=1042&sort=price&order=asc'
out=$build/bench/sla
for tool in ip nft nginx wrk curl python3; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (eval/deps.txt)"; exit 0; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, cgroups)"; exit 0; }
load_bin=$build/bench/bin/ev-load
for f in "$load_bin" "$build/bin/tochaind" "$build/bin/tochain-sched" "$build/bin/tochain-fw-apply"; do
	[ -x "$f" ] || { echo "bench sla: $f not built (make)" >&2; exit 1; }
done
[[ $nchains =~ ^[1-9]$ ]] || { echo "bench sla: SLA_CHAINS must be 1..9" >&2; exit 2; }
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "bench sla: SLA_SECONDS must be a whole number" >&2; exit 2; }
period=${SLA_PERIOD:-}
if [ -n "$period" ] && ! [[ $period =~ ^[1-9][0-9]*\ [1-9][0-9]*$ ]]; then
	echo "bench sla: SLA_PERIOD must be \"TICKS TICK_US\" (e.g. \"25 4000\")" >&2
	exit 2
fi
f_ids=${SLA_F_IDS:-} f_waf=${SLA_F_WAF:-}
if [ -n "$f_ids$f_waf" ] && ! [[ $f_ids =~ ^[1-9][0-9]*$ && $f_waf =~ ^[1-9][0-9]*$ ]]; then
	echo "bench sla: SLA_F_IDS and SLA_F_WAF must both be packets/s (whole numbers > 0)" >&2
	exit 2
fi

EV_TOP=$top EV_BUILD=$(cd "$build" && pwd)
. "$top/eval/ev_lib.sh"
rm -rf "$out"
mkdir -p "$out"
EV_LOG_DIR=$out/logs
ev_init
EV_NGINX_ACCESS=1 EV_NGINX_WORKERS=1

name=sla dir=$EV_TMP/sla net=$EV_ADDR_NET.1 bin=$EV_BUILD/bin
first_mode=${modes%% *}
ev_td_up "$name" 0 "$first_mode"

# The VNFs: ids$i and waf$i for chain c$i, with eval's rule files; the
# first pair is calibrated, the others (same kind, same rules) get its f.
vnf_lines() { # I [RATE_IDS RATE_WAF]
	EV_VNF_THREADS=1 ev_tochain_vnfs "$name" |
		sed -n "s/^vnf \(ids\|waf\) \(.*\)/vnf \1$1 \2/p" |
		sed "/^vnf ids/s/\$/${2:+ rate=$2}/; /^vnf waf/s/\$/${3:+ rate=$3}/"
}
if [ -n "$f_ids" ]; then
	f_from="given (SLA_F_IDS, SLA_F_WAF)"
else
	vnf_lines 1 >"$dir/vnfs1.topology"
	ev_sfc "$name" apply -f "$dir/vnfs1.topology" >/dev/null || ev_die "sfc-ctl apply (vnfs)"
	f_of() { ev_sfc "$name" --json vnf calibrate "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["f"])'; }
	f_ids=$(f_of ids1) || ev_die "calibrate ids1"
	f_waf=$(f_of waf1) || ev_die "calibrate waf1"
	f_from=calibrated
fi

# classes 1, 2, 5, 1, 2, 5, ...; SLA_i = class_i * FRAC * H / sum(classes)
classes=() csum=0
for ((i = 1; i <= nchains; i++)); do
	c=$(( (i - 1) % 3 )); c=$(( c == 0 ? 1 : c == 1 ? 2 : 5 ))
	classes+=("$c"); csum=$((csum + c))
done
slas_for() { # FRAC -> one SLA per chain
	local i
	for ((i = 0; i < nchains; i++)); do
		awk -v c="${classes[$i]}" -v fr="$1" -v s="$csum" -v a="$f_ids" -v b="$f_waf" \
			'BEGIN { h = 2 / (1 / a + 1 / b); v = int(c * fr * h / s + 0.5); print (v < 1 ? 1 : v) }'
	done
}
mapfile -t sla_light < <(slas_for "$light")
mapfile -t sla_medium < <(slas_for "$medium")
H=$(awk -v a="$f_ids" -v b="$f_waf" 'BEGIN { printf "%.0f", 2 / (1 / a + 1 / b) }')
echo "$f_from f: ids $f_ids/s, waf $f_waf/s per service thread; VNF capacity H = 2 CPUs / (1/f_ids + 1/f_waf) = $H/s"
echo "SLAs (classes ${classes[*]}): light ${sla_light[*]} (sum $light H), medium ${sla_medium[*]} (sum $medium H); heavy: medium's, offered $heavy x the host's capacity; closed: medium's, wrk -c32"

{
	for ((i = 1; i <= nchains; i++)); do
		if [ "$i" = 1 ] && [ "$f_from" = calibrated ]; then vnf_lines 1; else vnf_lines "$i" "$f_ids" "$f_waf"; fi
	done
	for ((i = 1; i <= nchains; i++)); do
		echo "vm vm$i ip=$net.$((i + 1))/24"
		echo "chain c$i vm=vm$i dir=in hop=ids$i,waf$i sla=${sla_light[$((i - 1))]}"
	done
} >"$dir/topology"
ev_sfc "$name" apply -f "$dir/topology" >"$dir/apply.log" 2>&1 || { cat "$dir/apply.log" >&2; ev_die "sfc-ctl apply"; }
ev_td_client_port "$name" 0 "$net.1/24"
for ((i = 1; i <= nchains; i++)); do
	ev_td_fw_beside "$name" "vm$i"
	region=$(ev_sfc "$name" --json vm show "vm$i" | python3 -c 'import json,sys; print(json.load(sys.stdin)["region"])')
	ev_ns gu "sla$i-vm"
	EV_SERVER_WRAP=("$bin/tochain-run" --region "$region" --)
	ev_server_up "c$i" "$gu" "$net.$((i + 1))" 80
	EV_SERVER_WRAP=()
	ev_wait_http "$EV_CLIENT_NS" "http://$net.$((i + 1))/" || ev_die "receiver of c$i does not answer"
	ev_td_register_vm "$name" "vm$i" "c$i"
done

# count CHAIN T0 T1: requests chain CHAIN's receiver completed in [T0, T1)
count() {
	awk -v a="$2" -v b="$3" '$1 >= a && $1 < b { n++ } END { print n + 0 }' \
		"$EV_TMP/c$1/server/logs/access.log"
}
# wrk's "99%" latency line in ms
wrk_p99_ms() {
	awk '$1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
		f = (u == "us") ? 0.001 : (u == "s") ? 1000 : (u == "m") ? 60000 : 1; printf "%.2f", v * f }' "$1"
}

# closed_loop CHAIN SECONDS: wrk with 32 connections at CHAIN's receiver
closed_loop() {
	ip netns exec "$EV_CLIENT_NS" wrk -t 1 -c 32 -d "$2s" --timeout 5s --latency \
		"http://$net.$(($1 + 1))$path"
}
set_slas() { # SLA...
	local i=1 s
	for s in "$@"; do
		ev_sfc "$name" chain set-sla "c$i" "$s" >/dev/null || ev_die "sfc-ctl chain set-sla c$i $s refused"
		i=$((i + 1))
	done
}

# What the host serves: all chains at once, closed loop, under cfs.
ev_sfc "$name" sched mode cfs >/dev/null || ev_die "sfc-ctl sched mode cfs"
set_slas "${sla_medium[@]}"
t0=$(date +%s.%N)
probes=()
for ((i = 1; i <= nchains; i++)); do
	closed_loop "$i" 4 >/dev/null 2>&1 &
	probes+=($!)
done
wait "${probes[@]}"
cap=0
for ((i = 1; i <= nchains; i++)); do
	cap=$((cap + $(count "$i" "$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 1 }')" "$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 4 }')")))
done
cap=$(awk -v n="$cap" 'BEGIN { printf "%.0f", n / 3 }')
msum=0
for s in "${sla_medium[@]}"; do msum=$((msum + s)); done
heavy_x=$(awk -v c="$cap" -v h="$heavy" -v m="$msum" 'BEGIN { x = c * h / m; printf "%.2f", x < 1 ? 1 : x }')
echo "capacity probe (cfs, closed loop, all chains): $cap requests/s; heavy offers $heavy x that: each chain ${heavy_x} x its SLA"

# CPU per role over each run (eval/ev_proc.py: wherever tochain-sched
# put the threads), divided by every request the receivers completed
roles=$dir/roles
{
	echo "sched ${EV_TD_SCHED[$name]}"
	echo "tochaind ${EV_ROLE_PIDS["$name chain:tochaind"]}"
	echo "toe $(for ((i = 1; i <= nchains; i++)); do
		ev_sfc "$name" --json vm show "vm$i" | python3 -c 'import json,sys; print(json.load(sys.stdin)["toe_pid"])'
	done | tr '\n' ' ')"
	echo "vnf $(ev_sfc "$name" --json vnf ls | python3 -c '
import json, sys
print(" ".join(str(i["pid"]) for v in json.load(sys.stdin)["vnfs"] for i in v.get("instances", [])))')"
	echo "server $(for ((i = 1; i <= nchains; i++)); do echo "${EV_ROLE_PIDS["c$i server"]}"; done | tr '\n' ' ')"
} >"$roles"
printf 'mode\tload\trole\tcpu_ns\trequests\twall_ns\n' >"$out/cpu.tsv"

res=$out/runs.tsv
printf 'mode\tload\tchain\tsla\toffered\tachieved\tp99_ms\tsent\tdone\terrors\tunsent\tunanswered\n' >"$res"
# one_load MODE LOAD: all chains at once for 1 + secs seconds, the first
# second (the scheduler's new plan, connections opening) not counted.
one_load() {
	local mode=$1 load=$2 i s rate t0 pids=() slas
	case $load in
	light) slas=("${sla_light[@]}") ;;
	*) slas=("${sla_medium[@]}") ;;
	esac
	set_slas "${slas[@]}"
	sleep 1
	# the plan the scheduler runs this load with (threads, quotas, gating)
	ev_sfc "$name" --json sched show >"$out/sched-$mode-$load.json" 2>/dev/null || true
	local n0 w0
	n0=$(cat "$EV_TMP"/c*/server/logs/access.log | wc -l)
	python3 "$top/eval/ev_proc.py" snap "$roles" >"$EV_TMP/snap"
	w0=$(date +%s%N)
	t0=$(date +%s.%N)
	for ((i = 1; i <= nchains; i++)); do
		s=${slas[$((i - 1))]}
		if [ "$load" = closed ]; then
			closed_loop "$i" "$((secs + 1))" >"$EV_TMP/load-$i.log" 2>&1 &
		else
			rate=$s
			[ "$load" = heavy ] && rate=$(awk -v s="$s" -v x="$heavy_x" 'BEGIN { printf "%.1f", s * x }')
			ip netns exec "$EV_CLIENT_NS" "$load_bin" -a "$net.$((i + 1)):80" -p "$path" \
				-r "$rate" -d "$((secs + 1))" -g 2 >"$EV_TMP/load-$i.log" 2>&1 &
		fi
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || ev_log "$mode $load: a load generator failed"; done
	local n1 w1 role ns sys csw
	n1=$(cat "$EV_TMP"/c*/server/logs/access.log | wc -l)
	w1=$(date +%s%N)
	python3 "$top/eval/ev_proc.py" diff "$roles" "$EV_TMP/snap" | while read -r role ns sys csw; do
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$load" "$role" "$ns" "$((n1 - n0))" "$((w1 - w0))"
	done >>"$out/cpu.tsv"
	local a b
	a=$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 1 }')
	b=$(awk -v t="$t0" -v s="$secs" 'BEGIN { printf "%.3f", t + 1 + s }')
	for ((i = 1; i <= nchains; i++)); do
		local got log=$EV_TMP/load-$i.log off p99 sent=0 ndone=0 err=0 uns=0 una=0
		got=$(count "$i" "$a" "$b")
		if [ "$load" = closed ]; then
			off=$(awk '/^Requests\/sec:/ { printf "%.1f", $2 }' "$log")
			p99=$(wrk_p99_ms "$log")
			ndone=$(awk '/requests in/ { print $1 }' "$log")
			err=$(awk '/Socket errors|Non-2xx/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) n += $i } END { print n + 0 }' "$log")
		else
			local kv
			declare -A v=()
			for kv in $(sed -n 's/^EVLOAD //p' "$log"); do v[${kv%%=*}]=${kv#*=}; done
			[ -n "${v[sent]:-}" ] || { cat "$log" >&2; ev_die "ev-load gave no result ($mode $load c$i)"; }
			off=$(awk -v n="$((v[sent] + v[unsent]))" -v d="${v[duration_us]}" 'BEGIN { printf "%.1f", n * 1e6 / d }')
			p99=$(awk -v u="${v[p99_us]}" 'BEGIN { printf "%.2f", u / 1000 }')
			sent=${v[sent]} ndone=${v[done]} err=${v[errors]} uns=${v[unsent]} una=${v[unanswered]}
		fi
		printf '%s\t%s\tc%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$load" "$i" \
			"${slas[$((i - 1))]}" "${off:-0}" "$(awk -v n="$got" -v s="$secs" 'BEGIN { printf "%.1f", n / s }')" \
			"${p99:-0}" "$sent" "${ndone:-0}" "$err" "$uns" "$una" >>"$res"
	done
	printf '  %-4s %-6s' "$mode" "$load"
	awk -F'\t' -v m="$mode" -v l="$load" '$1 == m && $2 == l { printf "  %s %s/%s/s", $3, $6, $4 }' "$res"
	echo
}

if [ -n "$period" ]; then
	# shellcheck disable=SC2086 # two words on purpose
	ev_sfc "$name" sched period $period >/dev/null || ev_die "sfc-ctl sched period $period refused"
fi
period_now=$(ev_sfc "$name" --json sched show | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("result", d); print("%d x %g ms" % (d["period"], d["tick_us"] / 1000))') ||
	period_now="? (sched show failed)"
echo "tochain-sched period: $period_now"
echo "runs: ${secs}s measured each (after 1 s not counted), chains at once:"
for mode in $modes; do
	ev_sfc "$name" sched mode "$mode" >/dev/null || ev_die "sfc-ctl sched mode $mode"
	for load in $loads; do one_load "$mode" "$load"; done
done
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), kernel $(uname -r)"
	echo "f ($f_from): ids $f_ids/s waf $f_waf/s, H $H/s; classes ${classes[*]}; light $light H, medium $medium H; capacity probe $cap/s, heavy x$heavy_x SLA"
	echo "period: $period_now"
} >"$out/meta.txt"
python3 "$top/eval/ev_sla.py" "$out" "$build/bench/sla-real.json" "$build/bench/sla-real.png"
