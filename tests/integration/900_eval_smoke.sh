#!/usr/bin/env bash
# timeout: 150
#
# Smoke test of the evaluation harness (eval/run.sh, docs/EVALUATION.md):
# Direct and the TraditionalChain (fw router -> IDS proxy -> nginx +
# ModSecurity/CRS -> server, each a namespace) are built, probed and
# loaded with wrk for one 3-second round of 1 KiB responses, every second
# request an attack.
#   - probes: a clean request (1 KiB and 64 KiB, whole) is answered 200 by
#     both; through the chain an SQL injection and an XSS get the WAF's
#     403, a traversal and a shellshock request are reset by the IDS proxy,
#     and so is a response leaking a password file; Direct serves them all;
#   - the IDS proxy logged the Snort rules that denied, the WAF's error log
#     the CRS anomaly-score denial of the SQLi and XSS requests;
#   - under load: every request but those open at the end has an outcome,
#     every deny in the IDS's and the WAF's logs is of an attack (no false
#     positive),
#     the chain's 403s and resets are at most the attacks sent and both
#     happened, Direct blocked nothing;
#   - CPU time (and its kernel part) was accounted to each role's cgroup;
#   - --think-ms bounds the rate (a second, short run of Direct);
#   - everything (namespaces, processes, cgroups) is gone afterwards.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"

tc_need_root "network namespaces and cgroups"
for f in "$build/bench/bin/ev-ids-proxy" "$build/tests/bin/fw-apply"; do
	[ -x "$f" ] || fail "$f not built"
done

out=$(mktemp -d /tmp/ev900.XXXXXX)
suffix=e9$$
tc_on_exit 'rm -rf "$out"'

conns=8
set +e
EV_SUFFIX=$suffix TOCHAIN_BUILD=$build bash "$top/eval/run.sh" --configs "direct trad" \
	--sizes 1k --rounds 1 --seconds 3 --warmup 0 --connections $conns \
	--attack-every 2 --out "$out/res" >"$out/run.log" 2>&1
rc=$?
set -e
cat "$out/run.log"
[ $rc = 77 ] && { grep '^SKIP' "$out/run.log" | tail -n 1; exit 77; }
[ $rc = 0 ] || fail "eval/run.sh exited $rc"

# nothing left behind
ip netns list | grep -q -- "-$suffix" && fail "namespaces left: $(ip netns list | grep -- "-$suffix")"
for d in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/unified /sys/fs/cgroup; do
	[ -e "$d/ev-$suffix" ] && fail "cgroup $d/ev-$suffix left"
done

grep -q '^probe direct   clean=200 clean64k=200 sqli=200 xss=200 traversal=200 rce=200 leak=200$' "$out/run.log" ||
	fail "direct probe line"
grep -q '^probe trad     clean=200 clean64k=200 sqli=403 xss=403 traversal=reset rce=reset leak=reset$' "$out/run.log" ||
	fail "trad probe line"

logs=$out/res/logs
grep -q 'deny to_server .* sid 9100001:' "$logs/trad-ids-proxy.log" || fail "IDS did not log sid 9100001 (traversal)"
grep -q 'deny to_server .* sid 9100010:' "$logs/trad-ids-proxy.log" || fail "IDS did not log sid 9100010 (shellshock)"
grep -q 'deny to_client .* sid 9100051:' "$logs/trad-ids-proxy.log" || fail "IDS did not log sid 9100051 (leaking response)"
grep -q 'ev-ids-proxy: conns [1-9][0-9]* denies [1-9]' "$logs/trad-ids-proxy.log" || fail "IDS counters"
# (a SAN=1 build reports errors and leaks there when the proxy exits)
grep -q 'Sanitizer' "$logs/trad-ids-proxy.log" && { cat "$logs/trad-ids-proxy.log"; fail "sanitizer report"; }
# (the nginx connector logs the intervention, CRS's anomaly-score rule,
# not the scoring rules behind it)
waflog=$logs/trad-waf-logs-error.log
grep -q 'Access denied with code 403.*id "949110".*request: "GET /1k/products?id=1%27%20OR' "$waflog" ||
	fail "WAF did not block the SQL injection with CRS 949110"
grep -q 'Access denied with code 403.*id "949110".*request: "GET /1k/search?q=%3Cscript' "$waflog" ||
	fail "WAF did not block the XSS with CRS 949110"
grep -q 'hook forward' "$logs/trad-fw.nft" || fail "firewall rules not on the forward hook"

# runs.tsv: round config size requests seconds rps p50 p99 sent attacks s2xx s403 sother resets err_other
awk -F'\t' -v c=$conns '
	NR == 1 { next }
	{
		clean = $9 - $10
		if ($4 <= 0) { print "no responses for " $2; bad = 1 }
		if ($10 < 4) { print $2 ": only " $10 " attacks sent"; bad = 1 }
		# sent but without an outcome: about one per connection at the
		# end (the counters of wrk are not exact across resets: 9 with 8
		# connections, 2026-12-04); false positives are checked in the
		# logs of the engines below.  With the blocks of trad at
		# most its attacks, clean requests not answered 2xx are open.
		open = $9 - $11 - $12 - $13 - $14
		if (open > 2 * c) { print $2 ": " open " requests without an outcome (" clean - $11 " clean not 2xx)"; bad = 1 }
		if ($13 != 0) { print $2 ": " $13 " responses neither 2xx nor 403"; bad = 1 }
		if ($2 == "direct" && ($12 != 0 || $14 != 0)) { print "direct blocked something"; bad = 1 }
		if ($2 == "trad") {
			if ($12 == 0 || $14 == 0) { print "trad: 403s " $12 ", resets " $14; bad = 1 }
			if ($12 + $14 > $10) { print "trad: more blocks than attacks"; bad = 1 }
		}
		seen[$2] = 1
	}
	END { if (!seen["direct"] || !seen["trad"]) { print "missing runs"; bad = 1 }; exit bad }
' "$out/res/runs.tsv" || fail "load results (runs.tsv above)"

# No false positive, from the engines themselves (probes, load and the
# perf run alike): every IDS deny names a rule of the IDS-stage attacks of
# eval/mix.lua (and the probe's leaking response), every WAF denial is of
# one of its WAF-stage attack requests.
bad=$(grep ' deny ' "$logs/trad-ids-proxy.log" | grep -Ev ' sid 91000(01|02|10|13|51):' || true)
[ -z "$bad" ] || fail "the IDS denied something that is no attack: $(echo "$bad" | head -3)"
bad=$(grep 'Access denied' "$waflog" | grep -Ev 'request: "GET /1k/(products\?id=1%27%20OR|search\?q=%3Cscript|search\?q=1%20UNION|comment\?text=%3Cimg)' || true)
[ -z "$bad" ] || fail "the WAF denied something that is no attack: $(echo "$bad" | head -3 | cut -c1-300)"

# cpu.tsv (round config size role cpu_ns requests sys_ns): every role of
# each configuration used some CPU, some of it in the kernel
awk -F'\t' '
	NR == 1 || $4 == "ksoftirqd" { next }
	{
		n++
		if ($5 <= 0) { print $2 " " $4 ": no CPU time accounted"; bad = 1 }
		if ($7 <= 0 || $7 > $5) { print $2 " " $4 ": kernel time " $7 " of " $5; bad = 1 }
	}
	END { if (n != 6) { print "expected 6 role lines, got " n; bad = 1 }; exit bad }
' "$out/res/cpu.tsv" || fail "CPU accounting"

grep -q '^CPU-ms per request' "$out/run.log" || fail "no CPU table printed"

# The perf run (when perf could record here): ModSecurity's samples,
# found by call chain, are trad's engine samples (eval/ev_engines.py)
if awk -F'\t' '$1 == "trad" && $5 == "nginx" && $7 > 0 { f = 1 } END { exit !f }' \
	"$out/res/perf.tsv" 2>/dev/null; then
	awk -F'\t' '$1 == "trad" && $4 == "nginx" && $6 > 0 && $6 <= $5 { f = 1 } END { exit !f }' \
		"$out/res/perf-engines.tsv" ||
		fail "no engine samples by call chain for trad's nginx: $(cat "$out/res/perf-engines.tsv")"
	grep -q 'outside by chain w/o wrk' "$out/run.log" || fail "no by-chain columns printed"
else
	echo "perf recorded no samples of trad's nginx here: the by-call-chain check did not run"
fi
# --think-ms: each connection waits before each request, so 4 connections
# thinking 100 ms offer at most 4 * (2 s / 100 ms + 1) = 84 requests in 2 s
# (direct alone serves thousands), and the load line says so.
set +e
EV_SUFFIX=$suffix TOCHAIN_BUILD=$build bash "$top/eval/run.sh" --configs direct \
	--sizes 1k --rounds 1 --seconds 2 --warmup 0 --connections 4 --think-ms 100 \
	--perf "" --out "$out/think" >"$out/think.log" 2>&1
rc=$?
set -e
[ $rc = 0 ] || { cat "$out/think.log"; fail "eval/run.sh --think-ms exited $rc"; }
grep -q 'each connection thinking 100 ms' "$out/think.log" || fail "no think time in the load line"
n=$(awk -F'\t' 'NR == 2 { print $4 }' "$out/think/runs.tsv")
echo "with --think-ms 100, 4 connections, 2 s: $n requests"
[ "${n:-0}" -gt 0 ] && [ "$n" -le 84 ] || fail "--think-ms 100: $n requests in 2 s from 4 connections"
echo "PASS"
