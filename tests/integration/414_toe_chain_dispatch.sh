#!/usr/bin/env bash
# timeout: 120
# Service threads through the TOE.  A client sends, over 6 connections
# one after the other, 1, 2, 4, 8, 16 and 32 chunks, each acknowledged by
# a server under tochain-run before the next (so each chunk is exactly
# one inbound descriptor: 63 in all).  A null VNF with 3 service threads
# and dispatch "rr" gets exactly 21 per thread; with dispatch "flow" each
# connection stays on one thread, so the per-thread counts are sums of
# whole connections: as the connections' counts are distinct powers of
# two, the threads' counts have disjoint bits that add up to 63.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3
tc_need_root "network namespaces"

tt_setup 414
cat >$work/srv.py <<'PY'
import socket
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", 7000))
ls.listen(8)
while True:
    c, _ = ls.accept()
    buf = b""
    while True:
        b = c.recv(4096)
        if not b:
            break
        buf += b
        while len(buf) >= 100:
            buf = buf[100:]
            c.sendall(b"k")
    c.close()
PY
cat >$work/cli.py <<'PY'
import socket
for k in range(6):
    s = socket.create_connection(("10.81.0.2", 7000), timeout=10)
    for i in range(1 << k):
        s.sendall(b"%02d" % k + b"x" * 98)
        assert s.recv(1) == b"k"
    s.close()
print("sent 63 chunks over 6 connections")
PY
tt_guest_bg srv.log python3 $work/srv.py
srv=$GPID
for i in $(seq 100); do
	ip netns exec "$VM" ss -Hltn 'sport = 7000' | grep -q . && break
	sleep 0.1
done

run_phase() { # vnf dispatch
	local v=$1 t0 t1 t2
	tt_vnf $v "{\"threads\":3,\"dispatch\":\"$2\"}" --threads 3
	ctl_ok chain.set "{\"dir\":\"in\",\"name\":\"$2\",\"hops\":[[\"$v\"]]}" >/dev/null
	[ "$(ctl_ok vnf.ls | tt_json "[x for x in j['vnfs'] if x['name'] == '$v'][0]['dispatch']")" = "$2" ] ||
		fail "vnf.ls does not show dispatch $2"
	ip netns exec "$CL" python3 $work/cli.py
	sleep 0.3
	tt_stop_vnf $v
	t0=$(tt_stat $v thread0); t1=$(tt_stat $v thread1); t2=$(tt_stat $v thread2)
	echo "dispatch $2: per-thread packets $t0 $t1 $t2"
	[ $((t0 + t1 + t2)) = 63 ] || { echo "FAIL: the VNF saw $((t0 + t1 + t2)) descriptors, not 63"; exit 1; }
	ctl_ok chain.del '{"dir":"in"}' >/dev/null
	ctl_ok vnf.del "{\"name\":\"$v\"}" >/dev/null
	T=($t0 $t1 $t2)
}

run_phase r rr
[ "${T[0]}" = 21 ] && [ "${T[1]}" = 21 ] && [ "${T[2]}" = 21 ] ||
	fail "round-robin did not share 21/21/21"
run_phase f flow
[ $(( T[0] & T[1] )) = 0 ] && [ $(( T[0] & T[2] )) = 0 ] && [ $(( T[1] & T[2] )) = 0 ] ||
	fail "a connection was split over threads under dispatch flow"
echo "flow: every connection stayed on one thread"
# vnf.del forgot it: the name can be added again.
[ "$(ctl_ok vnf.add '{"name":"f"}' | tt_json 'j["created"]')" = True ] || fail "re-adding a deleted name"
kill $srv; wait $srv 2>/dev/null || true
tt_toe_stop
echo PASS
