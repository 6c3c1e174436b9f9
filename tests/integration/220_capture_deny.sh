#!/usr/bin/env bash
# timeout: 120
# Evidence of a denial: `sfc-ctl capture on` for a chain whose null VNF
# denies payloads with a marker; the attack request is reset, the TOE
# writes a pcap of the connection under tochaind's state dir, `sfc-ctl
# capture ls` lists it with the VNF and rule, `sfc-ctl capture get`
# fetches it through tochaind, and `tcpdump -r` reads it: the request's
# bytes (-A) between the client's port and 8080, and the TOE's RST.
# Capture off: a later denial writes nothing.  Bad arguments are refused.
# Capture on survives a TOE killed and restarted by tochaind; deleting
# the chain turns it off for good.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl tcpdump
tc_need_root "network namespaces"

td_setup 220
sfc vm add web1 --ip 10.93.0.2/24 >/dev/null
sfc vnf add guard --kind null --arg --deny-marker=ATTACK >/dev/null
sfc chain add web-in --vm web1 --dir in --hop guard >/dev/null

# refusals name the argument and change nothing
rc=0; sfc capture on web-in --kib 999 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q '"kib"' "$work/err" || fail "kib 999 not refused ($rc): $(cat "$work/err")"
rc=0; sfc capture on nochain 2>"$work/err" || rc=$?
[ $rc = 1 ] || fail "capture on an unknown chain: exit $rc"
rc=0; sfc capture on web-in --kib 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "capture on --kib without a value: exit $rc"
[ "$(sfc --json capture ls web-in | td_json 'j["chains"][0]["on"]')" = False ] || fail "refusal turned capture on"

sfc capture on web-in --kib 4
[ "$(sfc --json capture ls web-in | td_json 'j["chains"][0]["on"]')" = True ] || fail "capture is not on"

mkdir "$work/www"
echo hello >"$work/www/index.html"
td_client 10.93.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.93.0.2 8080 15 || fail "the web server did not come up"
code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.93.0.2:8080/)
[ "$code" = 200 ] || fail "clean request: $code"
tc_curl_reset "$CL" "$work/py-web1.log" "q=ATTACK" "http://10.93.0.2:8080/evidence?q=ATTACK-220"

nfiles() { sfc --json capture ls web-in | td_json 'len(j["chains"][0]["files"])'; }
tc_wait_for 10 test "$(nfiles)" -ge 1 || fail "no capture file: $(sfc --json capture ls web-in)"
sfc capture ls web-in
ls=$(sfc --json capture ls web-in)
[ "$(echo "$ls" | td_json 'len(j["chains"][0]["files"])')" = 1 ] || fail "the clean request left a capture: $ls"
[ "$(echo "$ls" | td_json 'j["chains"][0]["files"][0]["vnf"] == "guard" and j["chains"][0]["files"][0]["rule"] == 1 and j["chains"][0]["files"][0]["dir"] == "in"')" = True ] ||
	fail "the sidecar does not name the denial: $ls"
file=$(echo "$ls" | td_json 'j["chains"][0]["files"][0]["file"]')
conn=$(echo "$ls" | td_json 'j["chains"][0]["files"][0]["conn"]')
cport=${conn#10.93.0.1:}
cport=${cport%%>*}
[ -f "$work/state/captures/web1/web-in/$file" ] || fail "not under the state dir: $file"

sfc capture get web-in "$file" -o "$work/c.pcap"
cmp "$work/c.pcap" "$work/state/captures/web1/web-in/$file" || fail "fetched bytes differ"
tcpdump -r "$work/c.pcap" -nn -A >"$work/dump" 2>"$work/dump.err" || fail "tcpdump -r: $(cat "$work/dump.err")"
cat "$work/dump"
grep -q "IP 10.93.0.1.$cport > 10.93.0.2.8080: Flags \[P.\]" "$work/dump" || fail "no request segment with the connection's ports"
grep -q "GET /evidence?q=ATTACK-220 HTTP/1.1" "$work/dump" || fail "the request's bytes are not in the capture"
grep -q "IP 10.93.0.2.8080 > 10.93.0.1.$cport: Flags \[R.\]" "$work/dump" || fail "no RST from the VM's side"

# a name that is not a capture file is refused
rc=0; sfc capture get web-in ../state.json -o "$work/x" 2>/dev/null || rc=$?
[ $rc = 1 ] && [ ! -e "$work/x" ] || fail "capture get ../state.json: exit $rc"

sfc capture off web-in
tc_curl_reset "$CL" "$work/py-web1.log" "q=ATTACK" "http://10.93.0.2:8080/again?q=ATTACK-2"
sleep 0.5
[ "$(nfiles)" = 1 ] || fail "capture off still wrote: $(sfc --json capture ls web-in)"

echo "--- capture on survives a TOE restart"
sfc capture on web-in --kib 8
[ -f "$work/state/captures/web1/web-in/.capture.json" ] || fail "capture on left no settings file"
toe=$(td_field vm web1 toe_pid)
kill -9 "$toe"
on() { [ "$(td_field vm web1 toe_pid)" != "$toe" ] &&
	[ "$(sfc --json capture ls web-in 2>/dev/null | td_json 'j["chains"][0]["on"] and j["chains"][0]["kib"] == 8' 2>/dev/null)" = True ]; }
tc_wait_for 15 on || fail "capture not on again after the TOE restart: $(sfc --json capture ls web-in)"
grep -q "capture on chain web-in on again" "$work/state/tochaind.log" || fail "no log line for the restore"
sfc chain del web-in >/dev/null
[ ! -e "$work/state/captures/web1/web-in/.capture.json" ] || fail "chain del left capture on"
[ -f "$work/state/captures/web1/web-in/$file" ] || fail "chain del removed the evidence"
td_stop_check
echo PASS
