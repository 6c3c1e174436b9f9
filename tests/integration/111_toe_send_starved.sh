#!/usr/bin/env bash
# timeout: 90
# A process's granted buffers are shared by its sockets (guest-lib
# README, Sending).  In the stand-in VM (python3 under tochain-run, 2 KiB
# slots as tochaind uses in small regions) connections A1, A2, ... each send towards a
# peer that does not read until their non-blocking sends say EAGAIN; one
# connection alone cannot take them all (test 118), so the guest opens
# them until a fresh connection B, which never sent a byte, gets EAGAIN
# at its first send.  B is in an edge-triggered epoll set: once the peer
# reads the A's data and the buffers come back, B must be reported
# writable (no TXDONE of its own will ever come to say so) and its send
# must go through.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds python3

tt_netns 111 10.86.0
tt_toe_start "$VM" vm111 --nbufs 4096 --slot-size 2048

cat >$work/peer.py <<'PY'
import os, socket, sys, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", 9000)); l.listen(16)
l.setblocking(False)
go = sys.argv[1]
cs = []
for _ in range(600):               # accept, not reading until the guest says so
    try:
        cs.append(l.accept()[0])
        continue
    except BlockingIOError:
        pass
    if os.path.exists(go): break
    time.sleep(0.1)
for c in cs: c.setblocking(False)
while cs:                          # read all until all close
    for c in list(cs):
        try:
            d = c.recv(1 << 20)
            if not d:
                cs.remove(c); c.close()
        except BlockingIOError:
            pass
    time.sleep(0.001)
PY
cat >$work/guest.py <<'PY'
import select, socket, sys, time
def connect():
    for _ in range(100):           # until the peer listens
        try:
            return socket.create_connection((sys.argv[1], 9000))
        except ConnectionRefusedError:
            time.sleep(0.1)
    print("FAIL: no peer"); sys.exit(2)
blob = b"a" * 65536
ep = select.epoll()
As, b = [], None
for i in range(12):
    c = connect()
    c.setblocking(False)
    ep.register(c.fileno(), select.EPOLLOUT | select.EPOLLET)
    ep.poll(1)                     # its first edge: writable
    try:
        c.send(b"x" * 100)
    except BlockingIOError:
        b = c                      # fresh, and starved: the A's hold every buffer
        break
    ep.unregister(c.fileno())
    # c sends until EAGAIN stays: the peer does not read, the TOE holds c's
    for _ in range(2000):
        try:
            c.send(blob)
        except BlockingIOError:
            pa = select.poll(); pa.register(c.fileno(), select.POLLOUT)
            if not pa.poll(1000):
                break
    else:
        print("FAIL: A%d never filled its buffers" % (i + 1)); sys.exit(2)
    As.append(c)
if b is None:
    print("FAIL: no fresh connection was starved (nothing tested)"); sys.exit(2)
print("B starved behind %d connections" % len(As))
open(sys.argv[2], "w").close()     # the peer reads now
ev = ep.poll(20)
if not any(fd == b.fileno() and m & select.EPOLLOUT for fd, m in ev):
    print("FAIL: B never reported writable after the buffers came back", ev); sys.exit(1)
b.setblocking(True); b.sendall(b"b" * 100)
for c in As: c.close()
b.close()
print("B writable again:", ev)
PY
ip netns exec "$CL" python3 $work/peer.py $work/go >$work/peer.log 2>&1 &
tc_on_exit "kill -9 $!"
rc=0
tt_guest --timeout 60 python3 $work/guest.py 10.86.0.1 $work/go || rc=$?
[ $rc = 0 ] || { cat $work/peer.log; fail "guest exit $rc"; }
kill -0 $TOE || fail "TOE died"
echo PASS
