#!/usr/bin/env bash
# timeout: 180
# VNFs started with more service threads than eq. 2's R for their chain's
# SLA (null n1: 4 threads, f 100000, in chain SLA 2000 -> R = 1; null n2:
# 3 threads, f 1000, out chain SLA 1500 -> R = 2): tochaind tells the TOE
# to hand work to those R threads only (vnf.ls "running") and registers
# exactly those, the ones named svc0..svcR-1, with tochain-sched (dry-run
# backend); every fetch through both chains succeeds.  Then web-out's
# SLA changes under a fetch loop (500 -> R 1, 1500 -> 2, 500 -> 1):
# the threads the TOE hands work to and those registered follow, the VNF
# is not restarted, and no fetch fails; web-out without SLA of its own
# then joins web-in's registration (a VM's SLA covers both directions),
# still without a failed fetch.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
. "$top/tests/lib/toe.sh"
tc_need_cmds ip python3 curl
tc_need_root "network namespaces"

td_setup 236
"$build/bin/tochain-sched" --socket "$work/sched.sock" --backend dryrun \
	--cgroup "tc236-$TC_SUFFIX" >"$work/sched.log" 2>&1 &
sched=$!
tc_on_exit "kill $sched 2>/dev/null; wait $sched 2>/dev/null || true"
tc_wait_for 5 test -S "$work/sched.sock" || fail "tochain-sched did not start"
p=$(td_pid)
kill "$p"
tc_wait_exit 5 "$p" || fail "tochaind did not stop"
TD_OPTS="--sched-socket $work/sched.sock" td_start

sfc vm add web1 --ip 10.63.0.2/24 >/dev/null
sfc vnf add n1 --kind null --threads 4 --rate 100000 >/dev/null
sfc vnf add n2 --kind null --threads 3 --rate 1000 >/dev/null
sfc chain add web-in --vm web1 --dir in --hop n1 --sla 2000 >/dev/null
sfc chain add web-out --vm web1 --dir out --hop n2 --sla 1500 >/dev/null
registered() {
	"$build/bin/sfc-ctl" --json chain show "$1" | grep -q "registered with tochain-sched: $2 threads"
}
tc_wait_for 20 registered web-in 1 || fail "web-in: $(sfc --json chain show web-in | td_json 'j["sched"]')"
tc_wait_for 20 registered web-out 2 || fail "web-out: $(sfc --json chain show web-out | td_json 'j["sched"]')"

region=$(td_field vm web1 region)
ctl_ok vnf.ls >"$work/vnfs.json"
cat "$work/vnfs.json"
[ "$(td_json '[(v["name"], v["threads"], v["running"]) for v in j["vnfs"]]' <"$work/vnfs.json")" = \
  "[('n1', 4, 1), ('n2', 3, 2)]" ] || fail "the TOE does not hand work to R threads only"

sfc --json sched show >"$work/show.json"
for c in web-in:1:n1 web-out:2:n2; do
	IFS=: read -r chain want vnf <<<"$c"
	tids=$(td_json "' '.join(str(t['tid']) for t in j['threads'] if t['chain'] == '$chain')" <"$work/show.json")
	[ "$(echo $tids | wc -w)" = "$want" ] || fail "$chain: tochain-sched has threads [$tids], want $want"
	pid=$(sfc --json vnf show "$vnf" | td_json 'j["instances"][0]["pid"]')
	names=$(for t in $tids; do cat "/proc/$pid/task/$t/comm"; done | sort | xargs)
	[ "$names" = "$(seq -f 'svc%g' 0 $((want - 1)) | xargs)" ] ||
		fail "$chain: registered threads are [$names], not the first $want channels"
done

mkdir "$work/www"
head -c 65536 /dev/urandom >"$work/www/blob"
want=$(sha256sum <"$work/www/blob" | cut -d' ' -f1)
td_client 10.63.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.63.0.2 8080 15 || fail "the web server did not come up"
for i in $(seq 20); do
	got=$(ip netns exec "$CL" curl -sS --max-time 20 http://10.63.0.2:8080/blob | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "fetch $i failed or differs"
done
ctl_ok vnf.ls | td_json '[(v["name"], v["dispatched"], v["failed"]) for v in j["vnfs"]]' |
	tee "$work/after"
[ "$(td_json 'all(v["dispatched"] > 0 and not v["failed"] for v in j["vnfs"])' <<<"$(ctl_ok vnf.ls)")" = True ] ||
	fail "a VNF got no work or failed"
echo "20 fetches through n1 (1 of 4 threads) and n2 (2 of 3): ok"

echo "--- SLA changes under load: the thread count follows, no request fails"
(
	ok=0 bad=0
	while [ ! -e "$work/stop" ]; do
		if got=$(ip netns exec "$CL" curl -sS --max-time 20 http://10.63.0.2:8080/blob | sha256sum) &&
		   [ "${got%% *}" = "$want" ]; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
	done
	echo "$ok $bad" >"$work/load"
) &
loader=$!
tc_on_exit "touch $work/stop; kill $loader 2>/dev/null || true"
running() {
	[ "$(ctl_ok vnf.ls | td_json "[v['running'] for v in j['vnfs'] if v['name'] == '$1'][0]")" = "$2" ] &&
	[ "$("$build/bin/sfc-ctl" --json sched show |
	     td_json "sum(1 for t in j['threads'] if t['chain'] == '$3')")" = "$2" ]
}
pid2=$(sfc --json vnf show n2 | td_json 'j["instances"][0]["pid"]')
for step in 500:1 1500:2 500:1; do
	sla=${step%%:*} n=${step##*:}
	sfc chain set-sla web-out "$sla" >/dev/null
	tc_wait_for 20 registered web-out "$n" ||
		fail "SLA $sla: $(sfc --json chain show web-out | td_json 'j["sched"]')"
	tc_wait_for 10 running n2 "$n" web-out || fail "SLA $sla: n2 does not run $n threads"
	sleep 1
	echo "SLA $sla: n2 runs $n of 3 threads"
done
echo "--- a VM's SLA covers both directions: web-out without SLA joins web-in's"
sfc chain set-sla web-in 800 >/dev/null
tc_wait_for 20 registered web-in 1 || fail "web-in at 800: $(sfc --json chain show web-in | td_json 'j["sched"]')"
sfc chain set-sla web-out 0 >/dev/null
covered() {
	"$build/bin/sfc-ctl" --json chain show web-in |
		grep -q "registered with tochain-sched: 2 threads, with chain web-out"
}
tc_wait_for 20 covered || fail "web-in does not cover web-out: $(sfc --json chain show web-in | td_json 'j["sched"]')"
[ "$(sfc --json sched show | td_json "sorted(set(t['chain'] for t in j['threads'] if t['role'] == 'vnf'))")" = \
  "['web-in']" ] || fail "tochain-sched still has web-out's threads apart"
[ "$(ctl_ok vnf.ls | td_json "[v['running'] for v in j['vnfs'] if v['name'] == 'n2'][0]")" = 1 ] ||
	fail "n2 does not run 1 thread for web-in"
sleep 1
echo "web-in (SLA 800) covers n1 and n2 (web-out, no SLA of its own)"
touch "$work/stop"
wait $loader
read -r ok bad <"$work/load"
echo "fetches during the changes: $ok ok, $bad failed"
[ "$bad" = 0 ] && [ "$ok" -gt 0 ] || fail "$bad fetches failed during the SLA changes ($ok ok)"
[ "$(ctl_ok vnf.ls | td_json 'sum(v["failures"] for v in j["vnfs"])')" = 0 ] || fail "a VNF failed"
[ "$(sfc --json vnf show n2 | td_json 'j["instances"][0]["pid"]')" = "$pid2" ] || fail "n2 was restarted"
echo PASS
