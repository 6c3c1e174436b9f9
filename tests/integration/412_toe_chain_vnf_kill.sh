#!/usr/bin/env bash
# timeout: 150
# A VNF killed with SIGKILL under load, through the TOE.  Fail-closed VNF
# c in the in chain: the load across its death gets answers before and
# resets (never a timeout) after; every new request is reset (denials
# with reason vnf-failed) before the guest's server reads it; a new process attached
# with vnf.attach rejoins and requests work again.  Fail-open VNF o: its
# death costs no request (bypassed, logged), and a new process rejoins.
# Every descriptor comes back (arrivals == finished == taken).
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3 curl sha256sum
tc_need_root "network namespaces"

tt_setup 412
tt_vnf c '{"policy":"closed"}'
tt_vnf o '{"policy":"open","threads":2}'
mkdir $work/www
head -c $((128 << 10)) /dev/urandom >$work/www/f.bin
want=$(sha256sum <$work/www/f.bin | cut -d' ' -f1)
url=http://10.81.0.2:8080/f.bin
tt_serve $work/www 8080
vnf_field() { ctl_ok vnf.ls | tt_json "[v for v in j['vnfs'] if v['name'] == '$1'][0]['$2']"; }

# --- fail-closed ---
ctl_ok chain.set '{"dir":"in","name":"guard","hops":[["c"]]}' >/dev/null
for i in 1 2 3; do [ "$(tt_fetch $url)" = 0 ] || fail "request before the kill"; done
tt_load 3 $url $want $work/load-c
sleep 1
kill -9 ${VNF_PID[c]}
t0=$(date +%s%N)
wait $LOAD
echo "closed, load across the kill: $(cat $work/load-c), $(( ($(date +%s%N) - t0) / 1000000 )) ms after the kill"
# The load got answers before the kill and resets after it, and nothing
# hung: every failure is a reset (56), none a timeout or a close (52).
read -r _ ok _ bad <$work/load-c
[ "$ok" -ge 1 ] || fail "no request succeeded before the kill: $(cat $work/load-c)"
[ "$bad" -ge 1 ] || fail "no request failed after the fail-closed VNF died: $(cat $work/load-c)"
[ "$(grep -c '^curl: (56) ' $work/load-c.err)" = "$bad" ] ||
	fail "failures across the kill that are not resets: $(grep -v '^curl: (56) ' $work/load-c.err | head -3)"
for i in 1 2 3; do
	tc_curl_reset "$CL" $work/py.log "closed-$i" "$url?closed-$i"
done
grep -q 'vnf c failed (process died), policy closed' $work/toe.log || fail "no failure log line"
ctl_ok stats | tt_json 'any(d["vnf"] == "c" and d["reason"] == "vnf-failed" for d in j["denials"])' | grep -q True ||
	fail "no vnf-failed denial in stats"
[ "$(vnf_field c failed)" = True ] || fail "vnf.ls does not say c failed"
old=${VNF_PID[c]}
"$build/bin/tochain-vnf" --kind null --region "$region.vnf-c" --attach-timeout 5000 2>>$work/vnf-c2.log &
VNF_PID[c]=$!
tc_on_exit "kill -9 ${VNF_PID[c]}"
[ "$(ctl_ok vnf.attach "{\"name\":\"c\",\"pid\":${VNF_PID[c]}}" | tt_json 'j["epoch"]')" = 1 ] ||
	fail "the re-attach did not report epoch 1"
sleep 0.3
for i in 1 2 3 4 5; do [ "$(tt_fetch $url)" = 0 ] || { echo "FAIL: request $i after the re-attach"; tail $work/toe.log; exit 1; }; done
[ "$(vnf_field c failed)" = False ] && [ "$(vnf_field c pid)" = "${VNF_PID[c]}" ] && [ "$(vnf_field c pid)" != "$old" ] ||
	fail "vnf.ls after the re-attach: $(ctl_ok vnf.ls)"
# the new process's verdicts wake the TOE's loop (its bells were taken at
# a liveness check after it attached), as the dead one's did
for i in $(seq 30); do [ "$(vnf_field c bells)" = "$(vnf_field c threads)" ] && break; sleep 0.1; done
[ "$(vnf_field c bells)" = "$(vnf_field c threads)" ] ||
	fail "the new process's bells were not taken: $(ctl_ok vnf.ls)"
echo "closed: requests reset while c was dead, working again with the new process"

# --- fail-open ---
ctl_ok chain.set '{"dir":"in","name":"guard","hops":[["o"]]}' >/dev/null
ctl_ok chain.set '{"dir":"out","name":"egress","hops":[["o"]]}' >/dev/null
tt_load 3 $url $want $work/load-o
sleep 1
kill -9 ${VNF_PID[o]}
wait $LOAD
echo "open, load across the kill: $(cat $work/load-o)"
grep -q 'ok [1-9][0-9]* bad 0' $work/load-o || { echo "FAIL: requests failed across a fail-open death"; cat $work/load-o.err; exit 1; }
for i in 1 2 3; do [ "$(tt_fetch $url)" = 0 ] || fail "request $i with o dead"; done
grep -q 'vnf o failed (process died), policy open' $work/toe.log || fail "no bypass log line"
[ "$(vnf_field o failed)" = True ] && [ "$(vnf_field o bypassed)" -gt 0 ] ||
	fail "vnf.ls: $(ctl_ok vnf.ls)"
d0=$(vnf_field o dispatched)
"$build/bin/tochain-vnf" --kind null --region "$region.vnf-o" --attach-timeout 5000 2>>$work/vnf-o2.log &
VNF_PID[o]=$!
tc_on_exit "kill -9 ${VNF_PID[o]}"
ctl_ok vnf.attach "{\"name\":\"o\",\"pid\":${VNF_PID[o]}}" >/dev/null
sleep 0.3
for i in 1 2 3; do [ "$(tt_fetch $url)" = 0 ] || fail "request $i after o re-attached"; done
[ "$(vnf_field o failed)" = False ] && [ "$(vnf_field o dispatched)" -gt "$d0" ] ||
	fail "o did not rejoin: $(ctl_ok vnf.ls)"
echo "open: no request lost, the new process rejoined"

sleep 0.3
st=$(ctl_ok stats)
echo "$st" | tt_json 'json.dumps(j["chains"])'
echo "$st" | tt_json 'all(c["arrivals"] == c["finished"] == c["taken"] for c in j["chains"])' | grep -q True ||
	fail "descriptors not all back"
kill $PY; wait $PY 2>/dev/null || true
tt_toe_stop
echo PASS
