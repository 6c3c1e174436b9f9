#!/usr/bin/env bash
# timeout: 180
# Evidence of an alert: a chain whose ids VNF runs a Snort `alert` rule
# (not drop) with capture on.  The matching request reaches the web server
# and gets its answer (an alert does not deny), and the TOE writes a pcap
# with a sidecar naming the verdict "alert", the rule's sid and msg:
# `sfc-ctl capture ls` lists it as an alert, `tcpdump -r` of the fetched
# file shows the request's bytes and no reset.  A clean request leaves
# nothing.  `sfc-ctl stats` counts the alert (alerted), the metrics
# endpoint has it (tochain_chain_alerted_total), and the capture's TOE
# counters say it was an alert.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl tcpdump
tc_need_root "network namespaces"

mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
TD_OPTS="--metrics 127.0.0.1:$mport"
td_setup 222
cat >"$work/alert.rules" <<'R'
alert tcp any any -> any 8080 (msg:"TOCHAIN-222 passwd probe"; flow:to_server; content:"/etc/passwd"; classtype:attempted-recon; sid:2220001; rev:1;)
R
sfc vm add web1 --ip 10.94.0.2/24 >/dev/null
sfc vnf add ids1 --kind ids --rules "$work/alert.rules" >/dev/null
sfc chain add web-in --vm web1 --dir in --hop ids1 >/dev/null
sfc capture on web-in --kib 4

mkdir "$work/www"
echo "hello from 222" >"$work/www/index.html"
td_client 10.94.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.94.0.2 8080 15 || fail "the web server did not come up"
get() { ip netns exec "$CL" curl -sS --max-time 10 "$1"; }

nfiles() { sfc --json capture ls web-in | td_json 'len(j["chains"][0]["files"])'; }
[ "$(get http://10.94.0.2:8080/index.html)" = "hello from 222" ] || fail "clean request failed"
sleep 0.5
[ "$(nfiles)" = 0 ] || fail "a clean request left a capture: $(sfc --json capture ls web-in)"

# the alert's request is served, and leaves evidence
body=$(get "http://10.94.0.2:8080/index.html?f=/etc/passwd&n=222") ||
	fail "the alerted request was not served (curl failed)"
[ "$body" = "hello from 222" ] || fail "the alerted request got: $body"
grep -q "GET /index.html?f=/etc/passwd&n=222" "$work/py-web1.log" ||
	fail "the alerted request did not reach the server: $(cat "$work/py-web1.log")"
tc_wait_for 10 test "$(nfiles)" -ge 1 || fail "no capture file: $(sfc --json capture ls web-in)"
sfc capture ls web-in | tee "$work/ls.txt"
grep -q "alert ids1 rule 2220001 .*\"TOCHAIN-222 passwd probe\"" "$work/ls.txt" ||
	fail "capture ls does not show the alert"
ls=$(sfc --json capture ls web-in)
[ "$(echo "$ls" | td_json 'len(j["chains"][0]["files"])')" = 1 ] || fail "more than one capture: $ls"
[ "$(echo "$ls" | td_json '(lambda f: f["verdict"] == "alert" and f["rule"] == 2220001 and f["msg"] == "TOCHAIN-222 passwd probe" and f["vnf"] == "ids1" and f["dir"] == "in")(j["chains"][0]["files"][0])')" = True ] ||
	fail "the sidecar does not name the alert: $ls"
[ "$(echo "$ls" | td_json 'j["chains"][0]["toe"]["alerts"]')" = 1 ] || fail "the TOE's capture counters: $ls"
file=$(echo "$ls" | td_json 'j["chains"][0]["files"][0]["file"]')
conn=$(echo "$ls" | td_json 'j["chains"][0]["files"][0]["conn"]')
cport=${conn#10.94.0.1:}
cport=${cport%%>*}
sfc capture get web-in "$file" -o "$work/a.pcap"
tcpdump -r "$work/a.pcap" -nn -A >"$work/dump" 2>"$work/dump.err" || fail "tcpdump -r: $(cat "$work/dump.err")"
cat "$work/dump"
grep -q "IP 10.94.0.1.$cport > 10.94.0.2.8080: Flags \[P.\]" "$work/dump" || fail "no request segment with the connection's ports"
grep -q "GET /index.html?f=/etc/passwd&n=222 HTTP/1.1" "$work/dump" || fail "the request's bytes are not in the capture"
grep -q "Flags \[R" "$work/dump" && fail "an alert's capture has a reset"

# counted in stats and metrics
st=$(sfc --json stats web-in)
[ "$(echo "$st" | td_json 'j["chains"][0]["alerted"]')" = 1 ] || fail "stats alerted: $st"
[ "$(echo "$st" | td_json 'len(j["denials"])')" = 0 ] || fail "an alert is listed as a denial: $st"
sfc stats web-in | grep -q ALERTED || fail "sfc-ctl stats has no ALERTED column"
curl -sS --max-time 10 -o "$work/metrics" "http://127.0.0.1:$mport/metrics" || fail "metrics scrape"
grep -q '^tochain_chain_alerted_total{vm="web1",chain="web-in",dir="in"} 1$' "$work/metrics" ||
	fail "metrics: $(grep alerted "$work/metrics")"
td_stop_check
echo PASS
