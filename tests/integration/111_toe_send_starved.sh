#!/usr/bin/env bash
# timeout: 90
# A process's granted buffers are shared by its sockets (guest-lib
# README, Sending).  In the stand-in VM (python3 under tochain-run, 2 KiB
# slots as tochaind uses) connection A fills them towards a peer that
# does not read, until its non-blocking send says EAGAIN; connection B,
# which never sent a byte, then gets EAGAIN too.  B is in an
# edge-triggered epoll set: once the peer reads A's data and the buffers
# come back, B must be reported writable (no TXDONE of its own will ever
# come to say so) and its send must go through.
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
l.bind(("0.0.0.0", 9000)); l.listen(2)
a, _ = l.accept(); b, _ = l.accept()
go = sys.argv[1]
for _ in range(600):               # not reading until the guest says so
    if os.path.exists(go): break
    time.sleep(0.1)
a.setblocking(False); b.setblocking(False)
while True:                        # read both until both close
    for c in (a, b):
        try:
            d = c.recv(1 << 20)
            if not d:
                (a if c is b else b).close(); sys.exit(0)
        except BlockingIOError:
            pass
    time.sleep(0.001)
PY
cat >$work/guest.py <<'PY'
import errno, select, socket, sys, time
for _ in range(100):               # until the peer listens
    try:
        a = socket.create_connection((sys.argv[1], 9000)); break
    except ConnectionRefusedError:
        time.sleep(0.1)
b = socket.create_connection((sys.argv[1], 9000))
a.setblocking(False); b.setblocking(False)
ep = select.epoll()
ep.register(b.fileno(), select.EPOLLOUT | select.EPOLLET)
ep.poll(1)                         # B's first edge: writable
blob = b"a" * 65536
# A sends until EAGAIN stays: the peer's buffers are full, the TOE holds A's
full = False
for _ in range(2000):
    try:
        a.send(blob)
    except BlockingIOError:
        pa = select.poll(); pa.register(a.fileno(), select.POLLOUT)
        if not pa.poll(1000):
            full = True
            break
if not full:
    print("FAIL: A never filled its buffers"); sys.exit(2)
try:
    b.send(b"b" * 100)
    print("FAIL: B could send: its socket was not starved (nothing tested)"); sys.exit(2)
except BlockingIOError:
    pass
open(sys.argv[2], "w").close()     # the peer reads now
ev = ep.poll(20)
if not any(fd == b.fileno() and m & select.EPOLLOUT for fd, m in ev):
    print("FAIL: B never reported writable after the buffers came back", ev); sys.exit(1)
b.setblocking(True); b.sendall(b"b" * 100)
a.close(); b.close()
print("B writable again:", ev)
PY
ip netns exec "$CL" python3 $work/peer.py $work/go >$work/peer.log 2>&1 &
tc_on_exit "kill -9 $!"
rc=0
ip netns exec "$GU" timeout 60 "$build/bin/tochain-run" --region "$region" -- \
	python3 $work/guest.py 10.86.0.1 $work/go || rc=$?
[ $rc = 0 ] || { cat $work/peer.log; fail "guest exit $rc"; }
kill -0 $TOE || fail "TOE died"
echo PASS
