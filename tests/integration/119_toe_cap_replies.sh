#!/usr/bin/env bash
# timeout: 120
# A process that holds its channel's cap of unread data still gets its
# calls answered (host-toe/toe/toe_chan.h, CTRL_RESERVE).  The TOE caps
# the buffers one guest process may hold (chan_cap, a quarter of the
# pool: 128 here) and stops reading that process's sockets there; its
# calls' replies and events used to wait behind the same cap, and its
# sends stayed untaken once 64 of them queued (PEND_SLOW).  A server
# that accepts 200 connections, each with its request already sent,
# before it reads any (as nginx under overload: bench 92, cfs heavy,
# where a VM stopped answering for good) then waited forever in
# accept().  Here the guest must accept all 200, then answer each, and
# every client must get its own answer back.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds python3

n=200
tt_netns 119 10.87.9
tt_toe_start "$VM" vm119 --nbufs 512 --slot-size 2048

cat >$work/server.py <<'PY'
import socket, sys
n = int(sys.argv[1])
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", 9000)); l.listen(n)
print("listening", flush=True)
conns = [l.accept()[0] for _ in range(n)]   # every request is in before we read one
print("accepted %d" % len(conns), flush=True)
for c in conns:
    req = b""
    while not req.endswith(b"\n"):
        d = c.recv(4096)
        if not d: break
        req += d
    c.sendall(b"ok " + req)
    c.close()
print("answered %d" % len(conns), flush=True)
PY
cat >$work/clients.py <<'PY'
import socket, sys, time
host, n = sys.argv[1], int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.create_connection((host, 9000), timeout=60)
    s.sendall(b"request %d %s\n" % (i, b"x" * 200))
    socks.append(s)
bad = 0
for i, s in enumerate(socks):
    got = b""
    while True:
        d = s.recv(4096)
        if not d: break
        got += d
    if got != b"ok request %d %s\n" % (i, b"x" * 200):
        bad += 1
print("clients: %d of %d answered right" % (n - bad, n), flush=True)
sys.exit(1 if bad else 0)
PY
tt_guest_bg --timeout 90 server.log python3 $work/server.py $n
srv=$GPID
tc_on_fail 'cat $work/server.log; tail -n 5 $work/toe.log'
# not tc_wait_port: its probe would be one of the n connections
tc_wait_for 20 grep -q listening $work/server.log || fail "the guest did not listen"
ip netns exec "$CL" timeout 80 python3 $work/clients.py 10.87.9.2 $n || fail "clients exit $?"
wait $srv || fail "server exit $?"
grep -q "answered $n" $work/server.log || fail "the server did not answer all $n"
kill -0 $TOE || fail "TOE died"
echo PASS
