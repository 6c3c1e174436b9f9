#!/usr/bin/env bash
# timeout: 120
# The TOE's chain stage end to end: python3 http.server under tochain-run
# (the stand-in VM) behind an in chain [[a, m], [b]] of null VNFs, where m
# denies payloads containing ATTACK, and an out chain [[o]].  curl in a
# client namespace fetches a 4 MiB file (sha256 checked: it crossed the out
# chain as private copies); a request with ATTACK in it is reset (only that
# connection; the guest's server never reads it), clean requests keep working; stats counts arrivals and
# finished, names chain, VNF and rule of the denial; every VNF saw exactly
# what its place in the chain implies.  The TOE removes its files on exit.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3 curl sha256sum
tc_need_root "network namespaces"

tt_setup 410
# Refused requests change nothing.
r=$(ctl chain.set '{"dir":"in","name":"c1","hops":[["nosuch"]]}')
case $r in *'"ok": false'*|*'"ok":false'*) ;; *) fail "unknown vnf accepted: $r";; esac
[ "$(ctl_ok stats | tt_json 'len(j["chains"])')" = 0 ] || fail "a refused chain.set left a chain"
ctl_ok version | tt_json 'j["daemon"] == "tochain-toe" and j["protocol"] == 1' | grep -q True

tt_vnf a
tt_vnf m '{}' --deny-marker ATTACK
tt_vnf b '{"threads":2}'
tt_vnf o
# the same args again: nothing created; other args: refused
[ "$(ctl_ok vnf.add '{"name":"b","threads":2}' | tt_json 'j["created"]')" = False ]
r=$(ctl vnf.add '{"name":"b","threads":3}')
case $r in *'"ok": false'*|*'"ok":false'*) ;; *) fail "vnf.add with other args accepted: $r";; esac
r=$(ctl chain.set '{"dir":"in","name":"c1","hops":[["a","a"]]}')
case $r in *'"ok": false'*|*'"ok":false'*) ;; *) fail "a VNF twice accepted: $r";; esac

ctl_ok chain.set '{"dir":"in","name":"web-in","hops":[["a","m"],["b"]]}' >/dev/null
ctl_ok chain.set '{"dir":"out","name":"web-out","hops":[["o"]]}' >/dev/null
r=$(ctl vnf.del '{"name":"a"}')
case $r in *'"ok": false'*|*'"ok":false'*) ;; *) fail "vnf.del of a used VNF accepted: $r";; esac

mkdir $work/www
head -c $((4 << 20)) /dev/urandom >$work/www/big.bin
head -c $((64 << 10)) /dev/urandom >$work/www/small.bin
want=$(sha256sum <$work/www/big.bin | cut -d' ' -f1)
tt_serve $work/www 8080

got=$(ip netns exec "$CL" curl -sS --max-time 30 http://10.81.0.2:8080/big.bin | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || { echo "FAIL: sha256 differs through the chains"; tail $work/toe.log; exit 1; }
echo "4 MiB fetched through in [[a,m],[b]] and out [[o]]: sha256 ok"

# Idle with chains set, the TOE sleeps (its loop, which runs the packet
# scheduler and checks its 4 VNFs' pids every 50 ms): < 2% of a core (a
# busy loop would be 100%; the margin is for sanitizer builds).
hz=$(getconf CLK_TCK)
t0=$(awk '{print $14 + $15}' /proc/$TOE/stat)
sleep 3
t1=$(awk '{print $14 + $15}' /proc/$TOE/stat)
echo "idle 3 s with chains set: TOE $((t1 - t0)) ticks (${hz}/s)"
[ $(( (t1 - t0) * 100 )) -lt $((6 * hz)) ] || fail "idle TOE with chains uses >= 2% CPU"

# An attack request is reset; clean ones before and after work.
tc_curl_reset "$CL" $work/py.log "q=ATTACK" "http://10.81.0.2:8080/x?q=ATTACK"
echo "attack request reset, the guest's server never saw it: $TC_RESET_ERR"
for i in $(seq 5); do
	code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.81.0.2:8080/small.bin)
	[ "$code" = 200 ] || fail "clean request $i after the attack: $code"
done
echo "5 clean requests after the reset: ok"

grep -q 'denied: chain web-in (in) vnf m rule 1 reason rule conn 10.81.0.1:[0-9]*>10.81.0.2:8080: connection reset' $work/toe.log ||
	{ echo "FAIL: no denial log line"; cat $work/toe.log; exit 1; }
sleep 0.3
st=$(ctl_ok stats)
echo "$st" | tt_json 'json.dumps(j["chains"])'
echo "$st" | tt_json 'len(j["denials"]) == 1 and j["denials"][0]["chain"] == "web-in" and j["denials"][0]["vnf"] == "m" and j["denials"][0]["rule"] == 1 and j["denials"][0]["dir"] == "in" and j["denials"][0]["conn"].endswith(">10.81.0.2:8080")' | grep -q True ||
	fail "stats.denials: $st"
arr_in=$(echo "$st" | tt_json '[c for c in j["chains"] if c["dir"]=="in"][0]["arrivals"]')
fin_in=$(echo "$st" | tt_json '[c for c in j["chains"] if c["dir"]=="in"][0]["finished"]')
den_in=$(echo "$st" | tt_json '[c for c in j["chains"] if c["dir"]=="in"][0]["denied"]')
arr_out=$(echo "$st" | tt_json '[c for c in j["chains"] if c["dir"]=="out"][0]["arrivals"]')
fin_out=$(echo "$st" | tt_json '[c for c in j["chains"] if c["dir"]=="out"][0]["finished"]')
[ "$arr_in" -ge 7 ] && [ "$arr_in" = "$fin_in" ] && [ "$den_in" -ge 1 ] ||
	fail "in counters arrivals $arr_in finished $fin_in denied $den_in"
[ "$arr_out" -ge $(( (4 << 20) / 16384 )) ] && [ "$arr_out" = "$fin_out" ] ||
	fail "out counters arrivals $arr_out finished $fin_out"
vl=$(ctl_ok vnf.ls)
echo "$vl" | tt_json '" ".join("%s:%d/%d bells %d" % (v["name"], v["dispatched"], v["verdicts"], v["bells"]) for v in j["vnfs"])'
# Host VNFs: every thread's verdicts ring the TOE's loop (its bell was
# taken through the pidfd), none is left to the 50 µs naps.
[ "$(echo "$vl" | tt_json 'all(v["bells"] == v["threads"] for v in j["vnfs"])')" = True ] ||
	fail "a host VNF thread without a bell: $vl"

# Each VNF saw what its place implies: a, m every inbound descriptor,
# b the allowed ones, o every outbound one.
kill $PY; wait $PY 2>/dev/null || true
for v in a m b o; do tt_stop_vnf $v; done
pa=$(tt_stat a packets); pm=$(tt_stat m packets); pb=$(tt_stat b packets); po=$(tt_stat o packets)
echo "vnf packets: a $pa m $pm b $pb o $po; in arrivals $arr_in denied $den_in, out arrivals $arr_out"
[ "$pa" = "$arr_in" ] && [ "$pm" = "$arr_in" ] && [ "$pb" = $((arr_in - den_in)) ] && [ "$po" = "$arr_out" ] ||
	fail "VNF counts do not match the chain counters"
[ "$(tt_stat m denied)" = "$den_in" ] || fail "m denied $(tt_stat m denied), chain $den_in"
tt_toe_stop
echo PASS
