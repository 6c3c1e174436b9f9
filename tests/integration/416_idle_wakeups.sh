#!/usr/bin/env bash
# timeout: 120
# Idle costs nothing (issue 14): after traffic through an in chain
# [[a], [b]] of null VNFs (b with two service threads) and an out chain
# [[a]], with the connection closed, every thread of the TOE (event loop
# with the packet scheduler, control), of both VNF processes and of the guest
# program under tochain-run may wake at most about once per 50 ms.  The
# count is of context switches (voluntary + involuntary, from
# /proc/PID/task/*/status) over IDLE_SECS of idle, per thread, against
# twice the count of 50 ms wake-ups plus 10 (a thread that polls or naps
# in 50 µs, 1 ms or 10 ms steps exceeds it many times over).  Not timed:
# a slow machine only makes the counts smaller.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3 curl
tc_need_root "network namespaces"

tt_setup 416
tt_vnf a
tt_vnf b '{"threads":2}'
ctl_ok chain.set '{"dir":"in","name":"idle-in","hops":[["a"],["b"]]}' >/dev/null
ctl_ok chain.set '{"dir":"out","name":"idle-out","hops":[["a"]]}' >/dev/null
mkdir $work/www
head -c $((256 << 10)) /dev/urandom >$work/www/f.bin
tt_serve $work/www 8080
for i in 1 2 3; do
	[ "$(tt_fetch http://10.81.0.2:8080/f.bin)" = 0 ] || fail "fetch $i through the chains"
done
arr=$(ctl_ok stats | tt_json 'sum(c["arrivals"] for c in j["chains"])')
[ "$arr" -gt 0 ] || fail "no descriptor went through the chains"
echo "3 fetches through in [[a],[b]] and out [[a]]: $arr descriptors"

# switches PID...: "pid/tid comm switches" for every thread of each process
switches() {
	local p t
	for p in "$@"; do
		for t in /proc/$p/task/*; do
			[ -r "$t/status" ] || continue
			awk -v id="$p/${t##*/}" '
				/^Name:/ { n = $2 }
				/^voluntary_ctxt_switches:/ { v = $2 }
				/^nonvoluntary_ctxt_switches:/ { i = $2 }
				END { print id, n, v + i }' "$t/status"
		done
	done
}

procs="$TOE ${VNF_PID[a]} ${VNF_PID[b]} $PY"
secs=${IDLE_SECS:-3}
bound=$((2 * secs * 1000 / 50 + 10))
sleep 1	# let the last connection's close and the spin budgets settle
switches $procs >$work/sw0
sleep "$secs"
switches $procs >$work/sw1
kill -0 $TOE || fail "TOE died"
bad=0 n=0
while read -r id name c1; do
	c0=$(awk -v id="$id" '$1 == id { print $3 }' $work/sw0)
	[ -n "$c0" ] || continue	# a thread that started meanwhile
	d=$((c1 - c0))
	n=$((n + 1))
	printf '  %-14s %-16s %6d switches in %d s\n' "$id" "$name" "$d" "$secs"
	[ "$d" -le "$bound" ] || { echo "  ^ more than $bound"; bad=$((bad + 1)); }
done <$work/sw1
[ "$n" -ge 6 ] || fail "only $n threads found"
[ "$bad" = 0 ] || fail "$bad threads woke more often than every 50 ms while idle"
echo "idle $secs s: all $n threads at most $bound switches each"
tt_toe_stop
echo PASS
