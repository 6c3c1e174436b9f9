#!/usr/bin/env bash
# timeout: 240
# A denial a browser can show, and response inspection (issue 20).  One
# waf VNF (the OWASP CRS, responses inspected) sits on both the in and
# the out chain of a stand-in VM that runs an unmodified web server:
#   - a clean request is served;
#   - an SQL injection gets the WAF's HTTP 403 page (the built-in one)
#     with an incident id in the page and in X-Incident-Id, then a FIN
#     (curl completes: no reset), and the guest's server never sees it;
#   - the same incident id is in the VNF's log line, the TOE's, and
#     `sfc-ctl stats` (text and --json), and the sidecar of the
#     capture of that connection (`sfc-ctl capture ls`);
#   - a protocol violation (a non-numeric Content-Length) gets a 400;
#   - on a keep-alive connection the second request's deny gets the 403
#     once the guest answered the first; pipelined behind a request the
#     guest has not answered yet it is reset (a 403 would pass for the
#     answer to the first);
#   - a page configured with `deny_page` (placeholders filled in) after
#     a rules reload through `vnf add` of a new VNF with that file;
#   - a response leaking an SQL error message is denied on the out chain
#     by a CRS data-leakage rule (951xxx): the client's transfer is reset
#     (a response already under way is never replaced by an answer).
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl
tc_need_root "network namespaces"
[ -d /usr/share/modsecurity-crs/rules ] || { echo "SKIP: no OWASP CRS (modsecurity-crs)"; exit 77; }

td_setup 219
cat >"$work/waf.conf" <<EOF
paranoia_level = 1
inspect_response = yes
EOF
cat >"$work/page.html" <<'EOF'
<html><body><h1>@STATUS@</h1><p>Blocked by site policy, incident @INCIDENT@.</p></body></html>
EOF
cat >"$work/waf-page.conf" <<EOF
paranoia_level = 1
deny_page = $work/page.html
EOF
sfc vm add web1 --ip 10.69.0.2/24 >/dev/null
sfc vnf add waf --kind waf --rules "$work/waf.conf" >/dev/null
sfc chain add web-in --vm web1 --dir in --hop waf >/dev/null
sfc chain add web-out --vm web1 --dir out --hop waf >/dev/null
mkdir "$work/www"
echo "hello from web1" >"$work/www/index.html"
printf '<html><body>You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 1</body></html>\n' \
	>"$work/www/leak.html"
td_client 10.69.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.69.0.2 8080 15 || fail "the web server did not come up"
url=http://10.69.0.2:8080

code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$url/")
[ "$code" = 200 ] || fail "clean request: $code"

# The SQL injection: a 403 page, a clean close, the server never sees it.
sfc capture on web-in >/dev/null
rc=0
ip netns exec "$CL" curl -sS -D "$work/h403" -o "$work/b403" --max-time 10 \
	"$url/item?id=1%27%20OR%20%271%27%3D%271-sqlimark" 2>"$work/curl403" || rc=$?
[ "$rc" = 0 ] || fail "curl did not complete (exit $rc: $(cat "$work/curl403")): reset instead of an answer?"
head -1 "$work/h403" | grep -q "^HTTP/1.1 403 Forbidden" || fail "not a 403: $(head -1 "$work/h403")"
grep -qi "^Connection: close" "$work/h403" || fail "the answer does not say it closes"
inc=$(sed -n 's/^X-Incident-Id: \([0-9a-f]\{8\}\)\r$/\1/p' "$work/h403")
[ -n "$inc" ] || fail "no X-Incident-Id: $(cat "$work/h403")"
grep -q "Incident id: <code>$inc</code>" "$work/b403" || fail "the page lacks incident $inc: $(cat "$work/b403")"
grep -q "<title>403 Forbidden</title>" "$work/b403" || fail "not the built-in page: $(cat "$work/b403")"
sleep 0.3
grep -q sqlimark "$work/py-web1.log" && fail "the guest's server saw the denied request"
echo "403 with incident $inc"

# The incident id in the VNF's log, the TOE's log and stats.
tc_wait_for 5 grep -q "incident $inc" "$work/state/vnf-waf-web1.log" ||
	fail "the VNF's log lacks incident $inc: $(tail -3 "$work/state/vnf-waf-web1.log")"
grep "incident $inc" "$work/state/vnf-waf-web1.log"
grep -q "rule 942[0-9]* status 403 incident $inc" "$work/state/vnf-waf-web1.log" ||
	fail "the VNF's log line does not name an SQLi rule"
grep -q "answered (incident $inc), connection closed" "$work/state/toe-web1.log" ||
	fail "the TOE's log lacks the answer: $(grep denied "$work/state/toe-web1.log" | tail -3)"
sfc stats | tee "$work/stats"
grep -q "chain web-in (in) vnf waf rule 942[0-9]*: rule .* incident $inc$" "$work/stats" ||
	fail "sfc-ctl stats does not show incident $inc"
[ "$(sfc --json stats | td_json "[d['incident'] for d in j['denials'] if 'incident' in d] == ['$inc']")" = True ] ||
	fail "stats --json: $(sfc --json stats)"
# ... and in the capture of the denied connection (its sidecar)
caps() { sfc --json capture ls web-in | td_json "[f.get('incident') for f in j['chains'][0]['files']]"; }
tc_wait_for 10 test "$(caps)" = "['$inc']" || fail "the capture does not carry incident $inc: $(sfc --json capture ls web-in)"
sfc capture off web-in >/dev/null

# A protocol violation: 400.
ip netns exec "$CL" python3 - >"$work/a400" <<'EOF'
import socket
s = socket.create_connection(("10.69.0.2", 8080), timeout=10)
s.sendall(b"POST /form HTTP/1.1\r\nHost: web1\r\nContent-Length: abc\r\n\r\nx=1")
buf = b""
while True:
    k = s.recv(4096)
    if not k:
        break
    buf += k
print(buf.decode("latin-1"))
EOF
head -1 "$work/a400" | grep -q "^HTTP/1.1 400 Bad Request" || fail "protocol violation: $(head -3 "$work/a400")"
grep -q "<title>400 Bad Request</title>" "$work/a400" || fail "400 page: $(cat "$work/a400")"

# Keep-alive: the guest answered the first request, so the second one's
# deny gets the 403.  Pipelined: the guest has not answered the first
# request yet, so a 403 would pass for its response: reset instead.
ip netns exec "$GU" "$build/bin/tochain-run" --region "$(td_field vm web1 region)" -- python3 -c '
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        if self.path.startswith("/slow"):
            time.sleep(3)
        self.send_response(200)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"ok\n")
    def log_message(self, *a):
        pass
HTTPServer(("0.0.0.0", 8081), H).serve_forever()' >"$work/py-ka.log" 2>&1 &
tc_on_exit "kill -9 $!"
tc_wait_port "$CL" 10.69.0.2 8081 15 || fail "the keep-alive server did not come up"
ip netns exec "$CL" python3 - <<'EOF' || fail "keep-alive / pipelined answers"
import socket, time
ATTACK = b"GET /item?id=1%27%20OR%20%271%27%3D%271 HTTP/1.1\r\nHost: web1\r\n\r\n"
def read_all(s):
    buf = b""
    try:
        while True:
            k = s.recv(4096)
            if not k:
                return buf, "fin"
            buf += k
    except ConnectionResetError:
        return buf, "rst"
s = socket.create_connection(("10.69.0.2", 8081), timeout=15)
s.sendall(b"GET / HTTP/1.1\r\nHost: web1\r\n\r\n")
first = b""
while not first.endswith(b"ok\n"):
    first += s.recv(4096)
s.sendall(ATTACK)
buf, end = read_all(s)
assert first.startswith(b"HTTP/1.0 200") or first.startswith(b"HTTP/1.1 200"), first
assert buf.startswith(b"HTTP/1.1 403 Forbidden") and end == "fin", (buf[:80], end)
print("keep-alive: 200, then the 403 page and a FIN")
s = socket.create_connection(("10.69.0.2", 8081), timeout=15)
s.sendall(b"GET /slow HTTP/1.1\r\nHost: web1\r\n\r\n")
time.sleep(0.5)
s.sendall(ATTACK)
buf, end = read_all(s)
assert b"403" not in buf and end == "rst", (buf[:80], end)
print("pipelined behind an unanswered request: reset, no 403")
EOF

# The response leaking an SQL error is denied on the out chain: reset.
rc=0
ip netns exec "$CL" curl -sS -o "$work/leak" --max-time 10 "$url/leak.html" 2>"$work/curlleak" || rc=$?
[ "$rc" != 0 ] || fail "the leaking response reached the client: $(cat "$work/leak")"
grep -q "error in your SQL syntax" "$work/leak" 2>/dev/null && fail "the leaking body reached the client"
echo "leaking response cut: curl exit $rc ($(cat "$work/curlleak"))"
sleep 0.3
sfc stats >"$work/stats2"
grep -q "chain web-out (out) vnf waf rule 95[0-9]*: rule .*8080>10.69.0.1:[0-9]*$" "$work/stats2" ||
	fail "no data-leakage denial on the out chain: $(cat "$work/stats2")"

# A configured page (a second VNF with deny_page on a chain of its own).
sfc chain del web-in >/dev/null
sfc chain del web-out >/dev/null
sfc vnf add wafpage --kind waf --rules "$work/waf-page.conf" >/dev/null
sfc chain add web-in --vm web1 --dir in --hop wafpage >/dev/null
ip netns exec "$CL" curl -sS -D "$work/hp" -o "$work/bp" --max-time 10 \
	"$url/?q=%3Cscript%3Ealert(1)%3C/script%3E" || fail "curl with the configured page"
head -1 "$work/hp" | grep -q "^HTTP/1.1 403" || fail "configured page: $(head -1 "$work/hp")"
inc2=$(sed -n 's/^X-Incident-Id: \([0-9a-f]\{8\}\)\r$/\1/p' "$work/hp")
grep -q "^<html><body><h1>403 Forbidden</h1><p>Blocked by site policy, incident $inc2.</p></body></html>$" "$work/bp" ||
	fail "the configured page was not served as configured: $(cat "$work/bp")"
code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$url/")
[ "$code" = 200 ] || fail "clean request at the end: $code"

# A page too large for an answer is refused where it enters.
head -c 2000 /dev/zero | tr '\0' x >"$work/big.html"
printf 'deny_page = %s\n' "$work/big.html" >"$work/waf-big.conf"
out=$(sfc vnf add wafbig --kind waf --rules "$work/waf-big.conf" 2>&1) && fail "a 2000-byte page was accepted"
echo "$out" | grep -q "waf-big.conf:1: deny_page: .*big.html: larger than the answer limit" ||
	fail "refusal does not say why: $out"
td_stop_check
echo PASS
