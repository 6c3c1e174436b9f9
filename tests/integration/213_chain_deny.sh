#!/usr/bin/env bash
# timeout: 120
# A chain whose null VNF denies payloads with a marker (vnf add --arg
# --deny-marker=ATTACK): the attack request's connection is reset (RST)
# and the guest's server never reads it, while clean requests before and
# after succeed; sfc-ctl stats shows denied = 1
# and the denial's chain, VNF and rule.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl
tc_need_root "network namespaces"

td_setup 213
sfc vm add web1 --ip 10.63.0.2/24 >/dev/null
sfc vnf add pass --kind null >/dev/null
sfc vnf add guard --kind null --arg --deny-marker=ATTACK >/dev/null
sfc chain add web-in --vm web1 --dir in --hop pass --hop guard >/dev/null
sfc chain show web-in
mkdir "$work/www"
echo hello >"$work/www/index.html"
td_client 10.63.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.63.0.2 8080 15 || fail "the web server did not come up"
code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.63.0.2:8080/)
[ "$code" = 200 ] || fail "clean request before: $code"
tc_curl_reset "$CL" "$work/py-web1.log" "q=ATTACK" "http://10.63.0.2:8080/x?q=ATTACK"
echo "attack request reset, the guest's server never saw it: $TC_RESET_ERR"
for i in 1 2 3; do
	code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.63.0.2:8080/)
	[ "$code" = 200 ] || fail "clean request $i after the attack: $code"
done
sleep 0.3
sfc stats | tee "$work/stats"
grep -q "^  20[0-9-]*T[0-9:]* chain web-in (in) vnf guard rule 1: rule 10.63.0.1:[0-9]*>10.63.0.2:8080" "$work/stats" ||
	fail "stats does not name the denial"
st=$(sfc --json stats)
[ "$(echo "$st" | td_json 'j["chains"][0]["denied"]')" = 1 ] || fail "denied is not 1: $st"
[ "$(echo "$st" | td_json 'len(j["denials"]) == 1 and j["denials"][0]["vnf"] == "guard" and j["denials"][0]["chain"] == "web-in"')" = True ] ||
	fail "stats.denials: $st"
td_stop_check
echo PASS
