#!/usr/bin/env bash
# The evaluation harness of issue 9 (docs/EVALUATION.md): builds every
# configuration side by side (network namespaces hanging off one client
# namespace), checks that each stage blocks what it should, then loads
# them with wrk, interleaved (A B C A B C ...), and reports requests/s,
# latency and CPU time per 1,000 requests by role.
#
#   eval/run.sh [--configs "direct plain trad tochain-null tochain ..."] [--sizes "1k 64k"]
#               [--rounds 3] [--seconds 8] [--warmup 1] [--connections 32]
#               [--threads 2] [--attack-every 25] [--think-ms 0] [--out DIR] [--probe-only]
#               [--perf "trad tochain" | all | ""]
#
# --think-ms N: each wrk connection waits N ms before each request, so the
# load offers at most CONNECTIONS / (N ms + latency) requests/s instead of
# saturating: to compare configurations (or one configuration against a
# slower one) at the same request rate.
#
# DIR (default BUILD/bench/eval) gets runs.tsv, cpu.tsv, meta.txt and, at
# exit, logs/ (the IDS proxies' denies and counters, nginx error logs
# with ModSecurity's matches, the firewall's nftables text).
#
# Needs root, and a build with bench/bin/ev-ids-proxy and
# tests/bin/fw-apply (TOCHAIN_BUILD, default build/).  Results:
# DIR/runs.tsv (one line per run), DIR/cpu.tsv (one line per run and
# role), then eval/report.py prints the tables and draws the plots.
# Exit: 0, 1 failure (a probe that did not give the expected verdict, a
# run without responses), 77 when this machine lacks something.
set -euo pipefail
EV_TOP=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
EV_BUILD=${TOCHAIN_BUILD:-$EV_TOP/build}
EV_BUILD=$(cd "$EV_BUILD" && pwd)

configs="direct tochain-nochain plain trad tochain-null tochain tochain-seq tochain-sync tochain-cfs" sizes="1k 64k" rounds=3 secs=8 warmup=1
conns=32 threads=2 attack_every=25 think_ms=0 out=$EV_BUILD/bench/eval probe_only=0
perf_cfgs=all
while [ $# -gt 0 ]; do
	case $1 in
	--configs) configs=$2; shift ;;
	--sizes) sizes=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--seconds) secs=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--connections) conns=$2; shift ;;
	--threads) threads=$2; shift ;;
	--attack-every) attack_every=$2; shift ;;
	--think-ms) think_ms=$2; shift ;;
	--out) out=$2; shift ;;
	--probe-only) probe_only=1 ;;
	--perf) perf_cfgs=$2; shift ;;
	*) echo "usage: see the head of $0" >&2; exit 2 ;;
	esac
	shift
done

for tool in ip nft nginx wrk curl; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (eval/deps.txt)"; exit 77; }
done

. "$EV_TOP/eval/ev_lib.sh"
EV_LOG_DIR=$out/logs
rm -rf "$EV_LOG_DIR"
ev_init

idx=0
for c in $configs; do
	ev_cfg_up "$c" "$idx"
	idx=$((idx + 1))
done

echo "configurations:"
for c in $configs; do printf '  %-8s %s:%s  %s\n' "$c" "${EV_ADDR[$c]}" "${EV_PORT[$c]}" "${EV_DESC[$c]}"; done
probe_rc=0
for c in $configs; do ev_probe "$c" || probe_rc=1; done
[ $probe_rc = 0 ] || { echo "FAIL: a stage did not give the expected verdict" >&2; exit 1; }
[ $probe_only = 1 ] && exit 0

mkdir -p "$out"
runs=$out/runs.tsv cpu=$out/cpu.tsv
printf 'round\tconfig\tsize\trequests\tseconds\trps\tp50_us\tp99_us\tsent\tattacks\ts2xx\ts403\tsother\tresets\terr_other\n' >"$runs"
printf 'round\tconfig\tsize\trole\tcpu_ns\trequests\tsys_ns\tcsw\n' >"$cpu"

# one_run ROUND CFG SIZE SECONDS: wrk in the client role's cgroup; ROUND 0
# is the warm-up (not recorded).  CPU time and context switches per role
# from /proc before and after (eval/ev_proc.py: wherever tochain-sched
# moved the threads), the client's from wrk's own rusage.
one_run() {
	local r=$1 c=$2 size=$3 s=$4 res log
	log=$EV_TMP/wrk-$c-$size-$r.log
	local roles=$EV_TMP/roles-$c snap=$EV_TMP/snap-$c wru=$EV_TMP/wrk-rusage
	ev_proc_roles "$c" "$roles"
	python3 "$EV_TOP/eval/ev_proc.py" snap "$roles" >"$snap"
	local ks0 ks
	ks0=$(ev_ksoftirqd_ns)
	ev_cg_make "$c" client
	bash -c 'echo $$ >"$0/cgroup.procs" && exec ip netns exec "$1" "${@:2}"' \
		"$(ev_cg_path "$c" client)" "$EV_CLIENT_NS" python3 "$EV_TOP/eval/ev_proc.py" run "$wru" -- \
		wrk -t "$threads" -c "$conns" -d "${s}s" --timeout 5s --latency \
		-s "$EV_TOP/eval/mix.lua" "http://${EV_ADDR[$c]}:${EV_PORT[$c]}" -- "$size" "$attack_every" "$think_ms" \
		>"$log" 2>&1 || { cat "$log" >&2; ev_die "wrk failed ($c $size)"; }
	[ "$r" = 0 ] && return 0
	res=$(grep '^EVRESULT ' "$log") || { cat "$log" >&2; ev_die "no EVRESULT from wrk"; }
	local -A v
	local kv
	for kv in ${res#EVRESULT }; do v[${kv%%=*}]=${kv#*=}; done
	# a configuration that served nothing is a result too (recorded as 0)
	[ "${v[requests]}" -gt 0 ] || ev_log "$c $size round $r: no response at all"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "$size" \
		"${v[requests]}" "$(awk -v d="${v[duration_us]}" 'BEGIN { printf "%.3f", d / 1e6 }')" \
		"$(awk -v n="${v[requests]}" -v d="${v[duration_us]}" 'BEGIN { printf "%.1f", n * 1e6 / d }')" \
		"${v[p50_us]}" "${v[p99_us]}" "${v[sent]}" "${v[attacks]}" "${v[s2xx]}" "${v[s403]}" \
		"${v[sother]}" "${v[err_read]}" "$((v[err_connect] + v[err_write] + v[err_timeout]))" >>"$runs"
	local role cpu_ns sys_ns csw
	{
		read -r cpu_ns sys_ns csw <"$wru"
		echo "client $cpu_ns $sys_ns $csw"
		python3 "$EV_TOP/eval/ev_proc.py" diff "$roles" "$snap"
	} | while read -r role cpu_ns sys_ns csw; do
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "$size" "$role" \
			"$cpu_ns" "${v[requests]}" "$sys_ns" "$csw"
	done >>"$cpu"
	ks=$(($(ev_ksoftirqd_ns) - ks0))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "$size" ksoftirqd "$ks" "${v[requests]}" "$ks" "" >>"$cpu"
	printf '  round %s %-8s %-4s %9s req/s  p50 %6s us  p99 %7s us  403 %5s  resets %5s\n' \
		"$r" "$c" "$size" "$(tail -n 1 "$runs" | cut -f6)" "${v[p50_us]}" "${v[p99_us]}" \
		"${v[s403]}" "${v[err_read]}"
}

think=
[ "$think_ms" != 0 ] && think=", each connection thinking ${think_ms} ms before each request"
echo "load: wrk -t$threads -c$conns, ${secs}s per run, $rounds rounds, sizes $sizes, 1 attack per $attack_every requests$think"
if [ "$warmup" != 0 ]; then
	for size in $sizes; do for c in $configs; do one_run 0 "$c" "$size" "$warmup"; done; done
fi
for ((r = 1; r <= rounds; r++)); do
	for size in $sizes; do
		for c in $configs; do one_run "$r" "$c" "$size" "$secs"; done
	done
done
# perf_run CFG SIZE: one more load run of CFG under a system-wide perf
# profile (cpu-clock, all CPUs), reported for CFG's processes, wrk and
# ksoftirqd only; prints where the CPU time went, by
# process and object, and as CPU-ms per request (DIR/perf-CFG.txt), and
# adds the samples by process and object to DIR/perf.tsv (report.py
# splits them into the IDS and WAF engines' libraries and the rest), and
# by process and symbol (DIR/perf-CFG-sym.txt) and by thread and symbol
# (DIR/perf-CFG-thr.txt), and the samples on an engine's behalf by call
# chain to DIR/perf-engines.tsv (eval/ev_engines.py).
perf_run() {
	local c=$1 size=$2 data=$out/perf-$1.data rep=$out/perf-$1.txt log=$EV_TMP/wrk-perf-$1.log n
	# DWARF call chains: the engines' callees in libc and libstdc++ (built
	# without frame pointers) are found under their engine (ev_engines.py)
	perf record -e cpu-clock -F 999 -a --call-graph dwarf,16384 -o "$data" -- sleep "$secs" \
		>/dev/null 2>&1 &
	local pp=$! wp pids
	ip netns exec "$EV_CLIENT_NS" wrk -t "$threads" -c "$conns" -d "${secs}s" --timeout 5s \
		-s "$EV_TOP/eval/mix.lua" "http://${EV_ADDR[$c]}:${EV_PORT[$c]}" -- "$size" "$attack_every" "$think_ms" \
		>"$log" 2>&1 &
	wp=$!
	# only this configuration's processes, wrk and ksoftirqd: the machine
	# may run other work beside
	ev_proc_roles "$c" "$EV_TMP/roles-$c"
	pids=$(python3 "$EV_TOP/eval/ev_proc.py" pids "$EV_TMP/roles-$c"),$wp
	pids+=$(printf ',%s' $(pgrep -x 'ksoftirqd/[0-9]+'))
	wait "$wp" || true
	wait "$pp" || { ev_log "perf record failed"; return 0; }
	n=$(sed -n 's/^EVRESULT .*requests=\([0-9]*\).*/\1/p' "$log")
	[ -n "$n" ] && [ "$n" -gt 0 ] || return 0
	perf report -i "$data" --stdio --no-children -g none --show-nr-samples --sort comm,dso \
		--pid "$pids" --percent-limit 0 -t $'\t' 2>/dev/null | grep -v '^#' | grep -v '^$' >"$rep.raw"
	awk -F'\t' -v c="$c" -v s="$size" -v n="$n" -v secs="$secs" \
		'{ gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3); gsub(/^ +| +$/, "", $4); printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c, s, n, secs, $3, $4, $2 }' \
		"$rep.raw" >>"$out/perf.tsv"
	{
		echo "perf profile of $c, $size, $n requests in ${secs}s (cpu-clock at 999 Hz, $(nproc) CPUs; its processes, wrk and ksoftirqd):"
		awk -F'\t' -v n="$n" '$1 + 0 >= 1 { gsub(/^ +| +$/, "", $3); gsub(/^ +| +$/, "", $4)
			printf "  %7s  %7.4f CPU-ms/req  %-16s %s\n", $1, $2 / 999 * 1000 / n, $3, $4 }' "$rep.raw"
	} >"$rep"
	# the same run by process and symbol: where each role's cycles go
	perf report -i "$data" --stdio --no-children -g none --pid "$pids" --sort comm,dso,sym \
		--percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^$' >"$out/perf-$c-sym.txt"
	# and by thread (perf's "pid" is TID:COMM): the TOE's loop (TID = its
	# pid, the packet scheduler too) apart from its other threads, each VNF service thread
	perf report -i "$data" --stdio --no-children -g none --pid "$pids" --sort pid,sym \
		--percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^$' >"$out/perf-$c-thr.txt"
	# samples on an engine's behalf by call chain (eval/ev_engines.py)
	perf script -i "$data" -F comm,pid,tid,ip,sym,dso --pid "$pids" 2>/dev/null |
		python3 "$EV_TOP/eval/ev_engines.py" |
		awk -F'\t' -v c="$c" -v s="$size" -v n="$n" '{ printf "%s\t%s\t%s\t%s\n", c, s, n, $0 }' \
			>>"$out/perf-engines.tsv"
	rm -f "$rep.raw" "$data"
	cat "$rep"
}
if command -v perf >/dev/null && [ -n "$perf_cfgs" ]; then
	[ "$perf_cfgs" = all ] && perf_cfgs=$configs
	printf 'config\tsize\trequests\tseconds\tcomm\tdso\tsamples\n' >"$out/perf.tsv"
	printf 'config\tsize\trequests\tcomm\tsamples\tengine\n' >"$out/perf-engines.tsv"
	for c in $perf_cfgs; do
		case " $configs " in *" $c "*) perf_run "$c" "${sizes%% *}" ;; esac
	done
fi

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), kernel $(uname -r), load average before the last run: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "cgroups: $EV_CG_KIND"
	echo "load: wrk -t$threads -c$conns, ${secs}s per run, $rounds rounds interleaved, 1 attack per $attack_every requests$think"
	for c in $configs; do echo "config $c: ${EV_DESC[$c]}"; done
} >"$out/meta.txt"
python3 "$EV_TOP/eval/report.py" "$out"
