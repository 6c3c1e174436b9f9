#!/usr/bin/env bash
# timeout: 300
#
# Smoke test of the evaluation harness's TOChain configurations
# (eval/ev_lib.sh, docs/EVALUATION.md): tochaind builds a stand-in VM
# whose nginx runs under the runtime, once with a chain of null VNFs
# (tochain-null) and once with the full chain fw -> (ids || waf) and ids
# on the responses (tochain), with the evaluation's rule files; both are
# probed and loaded with wrk for one short round, every second request an
# attack.
#   - probes: through tochain-null everything is served; through tochain
#     clean requests (1 KiB and 64 KiB, whole) are served and every attack
#     (SQLi, XSS, traversal, shellshock, a leaking response) is reset;
#   - under load: clean requests are all answered 2xx, tochain resets at
#     most the attacks sent and some, tochain-null blocks nothing;
#   - CPU time was accounted to every role (TOE, each VNF, tochaind,
#     server, client);
#   - the ratio table against Direct is printed;
#   - nothing is left: namespaces, cgroups (ours and tochaind's),
#     processes, region files.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"

tc_need_root "network namespaces and cgroups"
out=$(mktemp -d /tmp/ev901.XXXXXX)
suffix=e1$$
tc_on_exit 'rm -rf "$out"'

conns=8
set +e
EV_SUFFIX=$suffix TOCHAIN_BUILD=$build bash "$top/eval/run.sh" --configs "direct tochain-null tochain" \
	--sizes 1k --rounds 1 --seconds 3 --warmup 0 --connections $conns \
	--attack-every 2 --out "$out/res" >"$out/run.log" 2>&1
rc=$?
set -e
cat "$out/run.log"
[ $rc = 77 ] && { grep '^SKIP' "$out/run.log" | tail -n 1; exit 77; }
[ $rc = 0 ] || fail "eval/run.sh exited $rc"

# nothing left behind
ip netns list | grep -q -- "-$suffix" && fail "namespaces left: $(ip netns list | grep -- "-$suffix")"
ip netns list | grep -q -- "evf[0-9]-" && fail "tochaind's namespaces left: $(ip netns list | grep evf)"
for d in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/unified /sys/fs/cgroup; do
	[ -e "$d/ev-$suffix" ] && fail "cgroup $d/ev-$suffix left"
done
ls -d /sys/fs/cgroup/*/tochain/evf[0-9]-"${suffix:0:9}"* 2>/dev/null && fail "tochaind's cgroups left"
pgrep -f "tochain-(toe|vnf|sched) .*ev-eval" && fail "processes left"
pgrep -f "tochaind --foreground --state-dir .*/ev-eval" && fail "tochaind left"

grep -q '^probe tochain-null clean=200 clean64k=200 sqli=200 xss=200 traversal=200 rce=200 leak=200$' "$out/run.log" ||
	fail "tochain-null probe line"
# denied: the WAF's 403 page where its deny came first, else a reset
grep -Eq '^probe tochain  clean=200 clean64k=200 sqli=(403|reset) xss=(403|reset) traversal=(403|reset) rce=(403|reset) leak=reset$' "$out/run.log" ||
	fail "tochain probe line"

# runs.tsv: round config size requests seconds rps p50 p99 sent attacks s2xx s403 sother resets err_other
awk -F'\t' -v c=$conns '
	NR == 1 { next }
	{
		clean = $9 - $10
		if ($4 <= 0) { print "no responses for " $2; bad = 1 }
		if ($10 < 4) { print $2 ": only " $10 " attacks sent"; bad = 1 }
		if ($11 < clean - c) { print $2 ": clean requests not all answered 2xx: " $11 " of " clean; bad = 1 }
		if ($13 != 0) { print $2 ": " $13 " responses neither 2xx nor 403"; bad = 1 }
		if ($2 == "tochain-null" && ($12 != 0 || $14 != 0)) { print "tochain-null blocked something"; bad = 1 }
		if ($2 == "tochain") {
			if ($14 == 0) { print "tochain: no resets"; bad = 1 }
			if ($12 + $14 > $10) { print "tochain: more blocks than attacks"; bad = 1 }
		}
		seen[$2] = 1
	}
	END { if (!seen["tochain-null"] || !seen["tochain"]) { print "missing runs"; bad = 1 }; exit bad }
' "$out/res/runs.tsv" || fail "load results (runs.tsv above)"

# cpu.tsv (round config size role cpu_ns requests sys_ns): every role used CPU
awk -F'\t' '
	NR == 1 || $4 == "ksoftirqd" { next }
	{
		roles[$2 " " $4] = 1
		if ($5 <= 0) { print $2 " " $4 ": no CPU time accounted"; bad = 1 }
	}
	END {
		split("toe chain:tochaind chain:fw chain:ids chain:waf server client", want, " ")
		for (i in want) if (!(("tochain " want[i]) in roles)) { print "tochain: no role " want[i]; bad = 1 }
		exit bad
	}
' "$out/res/cpu.tsv" || fail "CPU accounting"

grep -q '^Ratios (medians)' "$out/run.log" || fail "no ratio table printed"
echo "PASS"
