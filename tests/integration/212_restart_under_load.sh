#!/usr/bin/env bash
# timeout: 180
# tochaind SIGKILLed and restarted while a client fetches through a chain:
# requests are in flight at each kill (a rate-limited download spans both
# kills and restarts; sequential fetches complete before, between and
# after them), no clean request fails and the download arrives whole, the chain stays (chain ls, the TOE's chain
# version unchanged, VNF pids unchanged); a VNF instance killed with
# SIGKILL is restarted by the daemon and rejoins (fetches work again).
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl
tc_need_root "network namespaces"

td_setup 212
cat >"$work/t.topo" <<'T'
vm web1 ip=10.64.0.2/24
vnf a kind=null
vnf b kind=null
chain web-in vm=web1 dir=in hop=a hop=b
vnf c kind=null
chain web-out vm=web1 dir=out hop=c
T
sfc apply -f "$work/t.topo" >/dev/null || fail "apply"
mkdir "$work/www"
head -c 65536 /dev/urandom >"$work/www/blob"
head -c $((12 << 20)) /dev/urandom >"$work/www/big"
td_client 10.64.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.64.0.2 8080 15 || fail "the web server did not come up"
ver_in=$(sfc --json chain show web-in | td_json 'j["toe"]["version"]')
ver_out=$(sfc --json chain show web-out | td_json 'j["toe"]["version"]')
pids=$(sfc --json vnf ls | td_json '" ".join(str(i["pid"]) for v in j["vnfs"] for i in v["instances"])')

# A bounded load: sequential fetches until the restarts are over ($work/restarted
# exists), then 20 more, at most 3000 in all; failures counted, the time each
# one completed in $work/load.times (ns). Its length follows the restarts, not
# a guess at how fast this host fetches.
ip netns exec "$CL" bash -c 'ok=0; bad=0; after=0; for i in $(seq 3000); do
	if curl -s -o /dev/null --max-time 10 -w "%{http_code}" http://10.64.0.2:8080/blob | grep -q 200; then
		ok=$((ok+1)); else bad=$((bad+1)); fi; date +%s%N >>'"$work/load.times"'
	[ -e '"$work/restarted"' ] && { after=$((after+1)); [ $after -ge 20 ] && break; }; done
	echo "$ok $bad $after"' >"$work/load" &
load=$!
# One connection open across both kills: 12 MiB at 512 KiB/s (curl's limit
# is an average that lets bursts through: 6 MiB at 1 MiB/s once took 2 s).
ip netns exec "$CL" curl -s -o "$work/big.got" --limit-rate 512K --max-time 90 http://10.64.0.2:8080/big &
slow=$!
got() { [ -s "$work/big.got" ]; }
fetched_since() { [ "$(wc -l <"$work/load.times")" -gt "$1" ]; }
# The slow download must still be running; if it is not, say how it ended.
in_flight() { # when
	kill -0 $slow 2>/dev/null && return 0
	local rc=0
	wait $slow || rc=$?
	fail "the slow download was not in flight $1: it ended with curl $rc after $(stat -c %s "$work/big.got") of $(stat -c %s "$work/www/big") bytes"
}
tc_wait_for 5 got || fail "the slow download did not start"
sleep 0.3
[ -s "$work/load.times" ] || fail "no fetch of the load completed before the first kill"
echo "--- tochaind SIGKILLed twice under load"
n=()
for k in 1 2; do
	in_flight "at kill $k"
	n+=("$(wc -l <"$work/load.times")")
	td_kill9 || fail "kill"
	sleep 0.3
	t0=$(date +%s%N)
	td_start || fail "tochaind did not restart"
	echo "restart $k: tochaind serving again after $(( ($(date +%s%N) - t0) / 1000000 )) ms (reconciled 1 VM, 2 chains, 3 instances)"
	# The data path goes on across the restart: a fetch completes after
	# this kill before the next one (bounded wait, not a timed window: a
	# slow peer once held every buffer of the server for seconds).
	tc_wait_for 10 fetched_since "${n[$((k - 1))]}" ||
		fail "no fetch completed in 10 s after kill $k (the slow download held up the others?)"
done
in_flight "across both restarts"
n+=("$(wc -l <"$work/load.times")")
touch "$work/restarted"
echo "in flight at the kills: the slow download ($(stat -c %s "$work/big.got") bytes so far); fetches completed before kill 1: ${n[0]}, before kill 2: ${n[1]}, by the last restart: ${n[2]}"
wait $load
rc=0
wait $slow || rc=$?
[ $rc = 0 ] || fail "the slow download across the kills failed: curl $rc"
cmp -s "$work/big.got" "$work/www/big" || fail "the slow download across the kills arrived changed"
read -r ok bad after <"$work/load"
echo "load: $ok ok, $bad failed, $after of them after the last restart; the slow download arrived whole"
[ "$bad" = 0 ] && [ "$ok" -gt 0 ] || fail "$bad clean requests failed across the restarts"
[ "$after" = 20 ] || fail "the load ended before 20 fetches after the last restart: $after"
[ "$(wc -l <"$work/load.times")" -gt "${n[2]}" ] || fail "no fetch completed after the last restart"
[ "$(sfc --json chain ls | td_json '" ".join(sorted(c["name"] for c in j["chains"]))')" = "web-in web-out" ] ||
	fail "chain ls after the restarts"
[ "$(sfc --json chain show web-in | td_json 'j["toe"]["version"]')" = "$ver_in" ] || fail "the in chain was set again"
[ "$(sfc --json chain show web-out | td_json 'j["toe"]["version"]')" = "$ver_out" ] || fail "the out chain was set again"
[ "$(sfc --json vnf ls | td_json '" ".join(str(i["pid"]) for v in j["vnfs"] for i in v["instances"])')" = "$pids" ] ||
	fail "VNF instances were replaced"

echo "--- a VNF instance killed is restarted and rejoins"
old=$(sfc --json vnf show b | td_json 'j["instances"][0]["pid"]')
kill -9 "$old"
new=$old
for i in $(seq 50); do
	new=$(sfc --json vnf show b | td_json 'j["instances"][0]["pid"] if j["instances"][0]["running"] else 0')
	[ "$new" != "$old" ] && [ "$new" != 0 ] && break
	sleep 0.1
done
[ "$new" != "$old" ] && [ "$new" != 0 ] || fail "vnf b was not restarted"
echo "vnf b: pid $old killed, restarted as $new"
for i in 1 2 3; do
	code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.64.0.2:8080/blob)
	[ "$code" = 200 ] || fail "fetch $i after the VNF restart: $code"
done
grep -q "vnf b (pid $old) is not running, restarting it" "$work/state/tochaind.log" || fail "no log line"

echo "--- a TOE killed with SIGKILL is restarted and gets its VNFs and chains again"
toe=$(td_field vm web1 toe_pid)
olds=$(sfc --json vnf ls | td_json '" ".join(str(i["pid"]) for v in j["vnfs"] for i in v["instances"])')
kill -9 "$toe"
for i in $(seq 100); do
	n=$(sfc --json chain show web-in 2>/dev/null | td_json '1 if "toe" in j else 0' 2>/dev/null || echo 0)
	m=$(sfc --json chain show web-out 2>/dev/null | td_json '1 if "toe" in j else 0' 2>/dev/null || echo 0)
	[ "$(td_field vm web1 toe_pid)" != "$toe" ] && [ "$n$m" = 11 ] && break
	sleep 0.1
done
[ "$n$m" = 11 ] || fail "the restarted TOE did not get its chains back"
news=$(sfc --json vnf ls | td_json '" ".join(str(i["pid"]) for v in j["vnfs"] for i in v["instances"])')
for p in $olds; do
	for i in $(seq 20); do td_running "$p" || break; sleep 0.1; done
	td_running "$p" && fail "old instance $p still runs"
done
[ "$(sfc --json vnf ls | td_json 'all(i["running"] for v in j["vnfs"] for i in v["instances"]) and sum(len(v["instances"]) for v in j["vnfs"])')" = 3 ] ||
	fail "instances after the TOE restart: $(sfc --json vnf ls)"
echo "TOE $toe killed: restarted as $(td_field vm web1 toe_pid), chains set again, instances $olds -> $news"
td_stop_check
echo PASS
