#!/usr/bin/env bash
# timeout: 300
# The security chain end to end (issue 5): tochaind builds a stand-in VM
# and the chain fw -> (ids || waf) on its inbound traffic, with real
# engines (vnfs/fw with its nftables half in the TOE's namespace, Snort
# rules on Hyperscan, ModSecurity v3 with the OWASP CRS), in front of an
# unmodified web server (python3 http.server under tochain-run).  From a
# client namespace, a mix of clean requests and attacks:
#   - every clean request succeeds (false positives are failures);
#   - a request to a port the firewall rejects is refused by the kernel
#     half (connection refused: its rule is a reject, so neither a
#     timeout nor an answer will do) even though the guest listens there
#     (the TOE's listening socket for it is up in the VM's namespace, and
#     the guest's server never sees the request);
#   - a signature only the IDS rules know is denied by ids, with its sid;
#   - SQL injection and XSS are denied by waf, with CRS rules 942xxx/941xxx;
#   - path traversal and command injection are denied by ids or waf
#     (both know them; whichever answers first is recorded);
# each attack is denied before the guest's server reads the request (the
# WAF answers its 403 page, the IDS resets the connection), at least the
# SQL injection and the XSS with the WAF's page, and `sfc-ctl stats` counts the
# arrivals, the denials, and names VNF and rule for each.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl nft
tc_need_root "network namespaces"
[ -d /usr/share/modsecurity-crs/rules ] || { echo "SKIP: no OWASP CRS (modsecurity-crs)"; exit 77; }

td_setup 510
# The IDS rules: the evaluation's web-attack signatures with their
# variables inline (tochaind keeps a copy of the one file), plus one
# signature the CRS does not have.
{
	cat "$top/eval/rules/ids-vars.conf" "$top/eval/rules/ids.rules"
	echo 'drop tcp $EXTERNAL_NET any -> $HTTP_SERVERS $HTTP_PORTS (msg:"TEST exploit kit beacon"; flow:to_server,established; content:"X-Kit|3a| tochain-510"; http_header; nocase; sid:9951001; rev:1;)'
} >"$work/ids.rules"
cat >"$work/t.topo" <<T
vm web1 ip=10.51.0.2/24
vnf fw kind=fw rules=$top/eval/rules/fw.rules
vnf ids kind=ids rules=ids.rules
vnf waf kind=waf threads=2
chain web-in vm=web1 dir=in hop=fw hop=ids,waf
T
sfc apply -f "$work/t.topo"
mkdir "$work/www"
echo "hello from web1" >"$work/www/index.html"
head -c 300000 /dev/urandom >"$work/www/blob.bin"
td_client 10.51.0.1
td_serve web1 "$work/www" 8080
# a second service the firewall's rules reject (a database port)
region=$(td_field vm web1 region)
(cd "$work/www" && exec ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" -- \
	python3 -m http.server --bind 0.0.0.0 3306) >"$work/py-3306.log" 2>&1 &
tc_on_exit "kill -9 $!"
tc_wait_port "$CL" 10.51.0.2 8080 20 || fail "the web server did not come up"
# The second listener is up: the TOE listens for it in the VM's namespace,
# where the firewall's kernel half filters.
vmns=$(td_field vm web1 netns)
listening() { ip netns exec "$vmns" ss -Hltn 'sport = :3306' | grep -q LISTEN; }
tc_wait_for 20 listening || fail "the guest's server on port 3306 did not come up: $(cat "$work/py-3306.log")"

url=http://10.51.0.2:8080
clean() { # what, expected code, curl args...: the server's answer came back
	local what=$1 want=$2 code
	shift 2
	code=$(ip netns exec "$CL" curl -s -o "$work/got" -w '%{http_code}' --max-time 20 "$@") || true
	[ "$code" = "$want" ] || fail "clean request '$what' gave '$code', not $want"
	echo "clean   $what: $code"
}
attack() { # what, mark, curl args...: denied before the guest's server reads
	# the request (mark: a part only its request line has): the WAF answers a
	# 403 page and closes, anything else resets the connection
	local what=$1 mark=$2 rc=0 code
	shift 2
	code=$(ip netns exec "$CL" curl -sS -o "$work/answer" -w '%{http_code}' --max-time 20 \
		--path-as-is "$@" 2>"$work/err") || rc=$?
	if [ $rc = 0 ]; then
		[ "$code" = 403 ] && grep -q "Incident id: <code>[0-9a-f]\{8\}</code>" "$work/answer" ||
			fail "attack $what: HTTP $code, not the WAF's 403 page"
		answered=$((answered + 1))
	else
		# 56 is an RST; 52, a close without an answer, is not a reset
		[ $rc = 56 ] || fail "attack $what: not reset: curl $rc $(cat "$work/err")"
	fi
	grep -q 'HTTP/1\.[01]" ' "$work/py-web1.log" || fail "the server's log shows no request at all"
	sleep 0.3
	! grep -qF "$mark" "$work/py-web1.log" || fail "attack $what reached the guest's server"
	echo "blocked $what ($([ $rc = 0 ] && echo "the WAF's 403 page" || cat "$work/err"))"
}
answered=0

clean index 200 "$url/"
clean blob 200 "$url/blob.bin"
cmp -s "$work/got" "$work/www/blob.bin" || fail "blob.bin arrived changed"
clean query 200 "$url/?q=hello+world&page=2"
# http.server answers POST with 501: the request passed the chain
clean form 501 "$url/" -d "name=Alice+Smith&comment=Nice+article%2C+thanks%21"
clean useragent 200 "$url/index.html" -A "Mozilla/5.0 (X11; Linux x86_64) Firefox/115.0"

attack ids-signature "probe=kit" "$url/?probe=kit" -H "X-Kit: tochain-510"
attack sqli "id=1%27" "$url/?id=1%27%20OR%20%271%27%3D%271"
attack xss "%3Cscript" "$url/?q=%3Cscript%3Ealert(document.cookie)%3C/script%3E"
attack traversal "/../../etc/passwd" "$url/../../etc/passwd"
attack rce "cmd=x;cat" "$url/?cmd=x;cat%20/etc/passwd"
[ "$answered" -ge 2 ] || fail "only $answered attacks got the WAF's answer (SQLi and XSS are the WAF's alone)"

# Port 3306: "reject" in the rules, so refused at once (curl 7), not
# dropped (a timeout, 28) and not answered; its listener stays up.
rc=0
ip netns exec "$CL" curl -sS -o /dev/null --max-time 5 http://10.51.0.2:3306/db-probe 2>"$work/err" || rc=$?
[ $rc = 7 ] || fail "port 3306 was not refused by the firewall: curl $rc $(cat "$work/err")"
listening || fail "the listener on port 3306 went away"
sleep 0.3
! grep -q "db-probe" "$work/py-3306.log" || fail "the request to port 3306 reached the guest's server"
echo "blocked port 3306 by the fw's kernel half although the guest listens (curl $rc: $(cat "$work/err"))"

# clean traffic after the attacks still flows
for i in 1 2 3; do clean "after-$i" 200 "$url/index.html"; done

sleep 0.5
sfc stats | tee "$work/stats"
sfc --json stats >"$work/stats.json"
python3 - "$work/stats.json" <<'PY' || fail "stats do not match the traffic"
import json, sys
j = json.load(open(sys.argv[1]))
ch = [c for c in j["chains"] if c["name"] == "web-in"]
assert len(ch) == 1, j["chains"]
c = ch[0]
assert c["denied"] == 5, ("denied", c["denied"])
assert c["arrivals"] >= 13 and c["finished"] == c["arrivals"], c
den = [d for d in j["denials"] if d["chain"] == "web-in"]
assert len(den) == 5, den
def one(pred, what):
    m = [d for d in den if pred(d)]
    assert m, (what, den)
    return m[0]
one(lambda d: d["vnf"] == "ids" and d["rule"] == 9951001, "ids signature sid 9951001")
waf = [d for d in den if d["vnf"] == "waf"]
fams = sorted(str(d["rule"])[:3] for d in waf)
assert "942" in fams and "941" in fams, ("waf families", waf)
for d in den:
    assert d["vnf"] in ("ids", "waf"), d
    if d["vnf"] == "ids":
        assert 9100000 <= d["rule"] < 9200000 or d["rule"] == 9951001, d
    else:
        assert 920000 <= d["rule"] < 950000, d
print("stats: arrivals %d, finished %d, denied %d; denials %s" % (
    c["arrivals"], c["finished"], c["denied"],
    ", ".join("%s/%s" % (d["vnf"], d["rule"]) for d in den)))
PY
# the firewall's in-chain half judged every descriptor (its TOE's vnf.ls)
python3 - "$region.ctl" <<'PY' || fail "the fw VNF did not judge every descriptor"
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b'{"v":1,"cmd":"vnf.ls","args":{}}\n')
r = json.loads(s.makefile().readline())
v = {x["name"]: x for x in r["result"]["vnfs"]}
print("verdicts: " + ", ".join("%s %d" % (n, x["verdicts"]) for n, x in sorted(v.items())))
assert v["fw"]["verdicts"] >= 13 and v["fw"]["failures"] == 0, v["fw"]
assert v["ids"]["verdicts"] == v["waf"]["verdicts"] == v["fw"]["verdicts"], v
PY
td_stop_check
echo PASS
