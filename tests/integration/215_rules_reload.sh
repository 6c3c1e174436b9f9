#!/usr/bin/env bash
# timeout: 120
# A fw VNF's rules are tochaind's copy: editing the user's file changes
# nothing until `sfc-ctl apply` sees the new content, replaces the copy
# and SIGHUPs the instance, which reloads: a port the new rules drop is
# then refused while the chain and the instance stay.  The nftables half
# follows in the TOE's namespace (applied with the instance, reloaded with
# it, removed when no chain uses the fw).  The two halves are shown apart:
# the kernel half drops the port (a timeout), and with it bypassed (an
# accept rule inserted ahead of the fw's), the instance's reloaded rules
# deny the request themselves: reset, recorded as a denial by fw, never
# read by the guest's server.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl
tc_need_root "network namespaces"

td_setup 215
echo 'accept in tcp dport 8080' >"$work/fw.rules"
cat >"$work/t.topo" <<'T'
vm web1 ip=10.69.0.2/24
vnf fw kind=fw rules=fw.rules
chain web-in vm=web1 dir=in hop=fw
T
sfc apply -f "$work/t.topo" >/dev/null
mkdir "$work/www"
echo hello >"$work/www/index.html"
td_client 10.69.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.69.0.2 8080 15 || fail "the web server did not come up"
get() { ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.69.0.2:8080/ || true; }
[ "$(get)" = 200 ] || fail "fetch with accepting rules"
pid=$(sfc --json vnf show fw | td_json 'j["instances"][0]["pid"]')
ns=$(sfc --json vm show web1 | td_json 'j["netns"]')
nftlist() { ip netns exec "$ns" nft list table inet tochain_fw 2>/dev/null || true; }
nftlist | grep -q 'tcp dport 8080 .*accept' ||
	fail "the nftables half is not in the TOE's namespace: $(nftlist)"

echo 'drop in tcp dport 8080 comment "closed"' >"$work/fw.rules"
[ "$(get)" = 200 ] || fail "an edit of the user's file took effect without apply"
sfc apply -f "$work/t.topo" | tee "$work/out"
[ "$(cat "$work/out")" = "updated vnf fw" ] || fail "apply did not see the new rules"
cmp -s "$work/fw.rules" "$work/state/rules/fw.rules" || fail "the copy was not replaced"
tc_wait_for 3 grep -q "reloaded" "$work/state/vnf-fw-web1.log" || fail "the instance did not reload: $(cat "$work/state/vnf-fw-web1.log")"
[ "$(sfc --json vnf show fw | td_json 'j["instances"][0]["pid"]')" = "$pid" ] || fail "the instance was replaced"
# the kernel half: the port is dropped (no answer, no reset)
nftlist | grep -q 'tcp dport 8080 .*drop' || fail "the nftables half was not reloaded: $(nftlist)"
rc=0
ip netns exec "$CL" curl -sS -o /dev/null --max-time 3 http://10.69.0.2:8080/ 2>/dev/null || rc=$?
[ $rc = 28 ] || fail "the nftables half does not drop the port after the reload: curl $rc"
echo "after the reload, the kernel half drops the port (curl $rc: timeout)"
# the in-chain half alone: bypass the kernel half; the instance must deny
ip netns exec "$ns" nft insert rule inet tochain_fw input tcp dport 8080 accept ||
	fail "cannot bypass the nftables half"
[ "$(sfc --json stats | td_json 'len(j["denials"])')" = 0 ] || fail "denials before the probe: $(sfc stats)"
tc_curl_reset "$CL" "$work/py-web1.log" "reload-probe" http://10.69.0.2:8080/reload-probe
sleep 0.3
sfc --json stats | td_json 'len(j["denials"]) == 1 and j["denials"][0]["vnf"] == "fw" and j["denials"][0]["chain"] == "web-in"' |
	grep -qx True || fail "the reset was not the fw instance's denial: $(sfc stats)"
echo "after the reload, the instance itself denies the port: $TC_RESET_ERR"
sfc apply -f "$work/t.topo" | grep -qx "no changes" || fail "a third apply changed something"
sfc chain del web-in >/dev/null
[ -z "$(nftlist)" ] || fail "the nftables half outlived the last chain using the fw: $(nftlist)"
td_stop_check
echo PASS
