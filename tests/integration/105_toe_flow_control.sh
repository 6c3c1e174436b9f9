#!/usr/bin/env bash
# timeout: 90
# Flow control end to end: a server in the stand-in VM (python3 under
# tochain-run) accepts a connection and does not read for 2 s while a
# client pushes 64 MiB.  The sender must be held back by TCP (it cannot
# have handed over more than a few MiB: kernel buffers + the TOE's bound
# of 1 MiB of buffers per socket), nothing is dropped (the server then reads
# everything and the sha256 matches), and the TOE stays alive.  Small
# slots (2 KiB, as tochaind uses in regions of 4 MiB or less) on purpose.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds python3

tt_netns 105 10.85.0
tt_toe_start "$VM" vm105 --nbufs 4096 --slot-size 2048

cat >$work/server.py <<'PY'
import hashlib, socket, sys, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", 9000)); l.listen(1)
c, _ = l.accept()
time.sleep(2)                      # not reading: the sender must stall
h = hashlib.sha256(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    h.update(b); n += len(b)
c.sendall(f"{n} {h.hexdigest()}".encode()); c.close()
PY
cat >$work/client.py <<'PY'
import hashlib, os, socket, sys, time
data = os.urandom(64 << 20)
for _ in range(100):               # until the server listens
    try:
        s = socket.create_connection((sys.argv[1], 9000)); break
    except ConnectionRefusedError:
        time.sleep(0.1)
s.settimeout(1.0)
sent = 0; t0 = time.time()
try:
    while sent < len(data) and time.time() - t0 < 1.0:
        sent += s.send(data[sent:sent + (1 << 20)])
except socket.timeout:
    pass
print("handed over in the first second:", sent, flush=True)
s.settimeout(None)
s.sendall(data[sent:]); s.shutdown(socket.SHUT_WR)
reply = b""
while True:
    b = s.recv(4096)
    if not b: break
    reply += b
n, digest = reply.decode().split()
print("server got", n, "bytes", flush=True)
ok = int(n) == len(data) and digest == hashlib.sha256(data).hexdigest()
sys.exit(0 if ok and sent < 16 << 20 else (2 if not ok else 3))
PY
tt_guest_bg server.log python3 $work/server.py
rc=0
ip netns exec "$CL" timeout 60 python3 $work/client.py 10.85.0.2 || rc=$?
case $rc in
0) ;;
2) echo "FAIL: data lost or corrupted"; cat $work/server.log; exit 1;;
3) fail "the sender was not held back";;
*) echo "FAIL: client exit $rc"; cat $work/server.log; exit 1;;
esac
kill -0 $TOE || fail "TOE died"
echo PASS
