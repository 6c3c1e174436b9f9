#!/usr/bin/env bash
# timeout: 90
# One peer that stops reading costs a guest process's other connections
# nothing but the buffers it holds (guest-lib README, Sending;
# gl_tx_room).  In the stand-in VM (python3 under tochain-run, 2 KiB
# slots as tochaind uses in small regions, where a socket's own bound once
# was 64 buffers, the whole grant) connection A sends to a peer that never reads until
# its send stops for good; connection B, in the same process, then sends
# a 256 KiB response, and the peer, reading only B, must get all of it.
# Before the fair share A held every granted buffer and B's send waited
# for A's peer (test 212: fetches took up to 10 s beside a rate-limited
# download); here it would wait forever and the guest's timeout fails the
# test.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds python3

tt_netns 118 10.87.0
tt_toe_start "$VM" vm118 --nbufs 4096 --slot-size 2048

cat >$work/peer.py <<'PY'
import socket, sys
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", 9000)); l.listen(2)
a, _ = l.accept(); b, _ = l.accept()
a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)   # A: never read
got = 0
while True:                        # B: read until it closes
    d = b.recv(1 << 16)
    if not d: break
    got += len(d)
print(got, flush=True)
PY
cat >$work/guest.py <<'PY'
import select, socket, sys, time
for _ in range(100):               # until the peer listens
    try:
        a = socket.create_connection((sys.argv[1], 9000)); break
    except ConnectionRefusedError:
        time.sleep(0.1)
b = socket.create_connection((sys.argv[1], 9000))
a.setblocking(False)
blob = b"a" * 65536
sent = 0
full = False
for _ in range(2000):              # A sends until its send stops for good
    try:
        sent += a.send(blob)
    except BlockingIOError:
        pa = select.poll(); pa.register(a.fileno(), select.POLLOUT)
        if not pa.poll(1000):
            full = True
            break
if not full:
    print("FAIL: A's send never stopped"); sys.exit(2)
print("A holds %d bytes towards a peer that does not read" % sent)
b.sendall(b"b" * (256 << 10))      # blocking: waits only for B's own peer
b.close()
print("B sent 256 KiB beside it")
a.close()
PY
ip netns exec "$CL" timeout 60 python3 $work/peer.py >$work/peer.log 2>&1 &
peer=$!
tc_on_exit "kill -9 $peer"
rc=0
tt_guest --timeout 30 python3 $work/guest.py 10.87.0.1 || rc=$?
[ $rc = 0 ] || { cat $work/peer.log; fail "guest exit $rc (124: B's send waited for A's peer)"; }
wait $peer || fail "peer exit $?"
[ "$(cat $work/peer.log)" = $((256 << 10)) ] || fail "B's peer got $(cat $work/peer.log) bytes, not 262144"
kill -0 $TOE || fail "TOE died"
echo PASS
