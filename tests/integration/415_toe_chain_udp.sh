#!/usr/bin/env bash
# timeout: 60
# UDP through the chains: a UDP echo server under tochain-run behind an
# in chain [[m]] (m denies ATTACK) and an out chain [[o]].  Clean
# datagrams are echoed; a datagram with the marker is dropped alone (no
# reset: the next datagram on the same socket is echoed), logged and
# recorded; the VNFs saw exactly the datagrams their place implies.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3
tc_need_root "network namespaces"

tt_setup 415
tt_vnf m '{}' --deny-marker ATTACK
tt_vnf o
ctl_ok chain.set '{"dir":"in","name":"udp-in","hops":[["m"]]}' >/dev/null
ctl_ok chain.set '{"dir":"out","name":"udp-out","hops":[["o"]]}' >/dev/null
cat >$work/echo.py <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 5300))
while True:
    d, a = s.recvfrom(2048)
    s.sendto(b"echo:" + d, a)
PY
tt_guest_bg echo.log python3 $work/echo.py
srv=$GPID
for i in $(seq 100); do
	ip netns exec "$VM" ss -Hlun 'sport = 5300' | grep -q . && break
	sleep 0.1
done
cat >$work/cli.py <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1.0)
def ask(m):
    s.sendto(m, ("10.81.0.2", 5300))
    try:
        return s.recvfrom(2048)[0]
    except socket.timeout:
        return None
assert ask(b"hello") == b"echo:hello", "clean datagram not echoed"
assert ask(b"xxATTACKxx") is None, "marked datagram echoed"
assert ask(b"hello2") == b"echo:hello2", "the socket stopped working after a denial"
print("udp: clean echoed, marked dropped, the next echoed")
PY
ip netns exec "$CL" python3 $work/cli.py
grep -q 'denied: chain udp-in (in) vnf m rule 1 reason rule conn 10.81.0.1:[0-9]*>[0-9.]*:5300: datagram dropped' $work/toe.log ||
	{ echo "FAIL: no denial log line"; cat $work/toe.log; exit 1; }
ctl_ok stats | tt_json 'len(j["denials"]) == 1 and j["denials"][0]["vnf"] == "m"' | grep -q True ||
	fail "stats.denials"
kill $srv; wait $srv 2>/dev/null || true
tt_stop_vnf m; tt_stop_vnf o
echo "vnf packets: m $(tt_stat m packets) (denied $(tt_stat m denied)), o $(tt_stat o packets)"
[ "$(tt_stat m packets)" = 3 ] && [ "$(tt_stat m denied)" = 1 ] && [ "$(tt_stat o packets)" = 2 ] ||
	fail "VNF counts"
tt_toe_stop
echo PASS
