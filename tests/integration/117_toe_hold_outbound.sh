#!/usr/bin/env bash
# timeout: 120
# A held TOE (tochain-toe --hold, toe_hold.h) holds outbound traffic too,
# not only inbound: a guest that connects out and sends while its TOE
# waits for chains.ready must not reach the network before the out chain
# is set.  As tochaind does after a TOE restart, the out chain is set on
# the held TOE only after the guest made its calls, then chains.ready
# releases it.  While held: the guest's two datagrams (one clean, one
# with the out chain's deny marker) and its two TCP connects reach
# nothing (no datagram at the server, no socket of the TOE towards it).
# Released: the clean datagram and a clean request arrive (and are
# answered), the marked datagram and request are denied by the out chain
# they were held for.  Before, the held TOE served outbound calls at
# once and both marked payloads went out unchecked.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3 ss
tc_need_root "network namespaces"

tt_setup 117 10.117.0 --hold
srv=10.117.0.1
# the server outside: each TCP line and each datagram logged, a line answered
cat >"$work/srv.py" <<'PY'
import socket, sys, threading
log = open(sys.argv[2], "a", buffering=1)
def conn(c):
    f = c.makefile("rb")
    try:
        line = f.readline()
    except OSError:
        return
    if line:
        log.write("tcp %s\n" % line.strip().decode(errors="replace"))
        c.sendall(b"ok:" + line)
    c.close()
def udp():
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((sys.argv[1], 9001))
    while True:
        log.write("udp %s\n" % u.recv(2048).decode(errors="replace"))
threading.Thread(target=udp, daemon=True).start()
t = socket.socket()
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind((sys.argv[1], 9000))
t.listen(16)
print("listening", flush=True)
while True:
    threading.Thread(target=conn, args=(t.accept()[0],), daemon=True).start()
PY
: >"$work/srv.log"
ip netns exec "$CL" python3 "$work/srv.py" $srv "$work/srv.log" >"$work/srv.out" 2>&1 &
tc_on_exit "kill -9 $!"
tc_wait_for 10 grep -q listening "$work/srv.out" || fail "the server did not start"

# the guest: two datagrams and two non-blocking connects while held
# ("calls made"), then, once connected, one line per connection
cat >"$work/cli.py" <<'PY'
import errno, select, socket, sys
srv = sys.argv[1]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.sendto(b"udp-clean", (srv, 9001))
u.sendto(b"udp-ATTACK", (srv, 9001))
socks = {}
for name in ("clean", "ATTACK"):
    s = socket.socket()
    s.setblocking(False)
    rc = s.connect_ex((srv, 9000))
    assert rc == errno.EINPROGRESS, "connect: %s" % errno.errorcode.get(rc, rc)
    socks[name] = s
print("calls made", flush=True)
p = select.poll()
for s in socks.values():
    p.register(s.fileno(), select.POLLOUT)
left = set(s.fileno() for s in socks.values())
while left:
    for fd, ev in p.poll(60000):
        left.discard(fd)
        p.unregister(fd)
for name, s in socks.items():
    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    assert err == 0, "connect %s: %s" % (name, errno.errorcode.get(err, err))
    s.setblocking(True)
    s.settimeout(20)
    s.sendall(b"tcp-%s\n" % name.encode())
    try:
        print("%s: answer %r" % (name, s.recv(100)), flush=True)
    except OSError as e:
        print("%s: %s" % (name, errno.errorcode.get(e.errno, e.errno)), flush=True)
PY
tt_guest_bg --timeout 60 cli.out python3 "$work/cli.py" $srv
cli=$GPID
tc_wait_for 20 grep -q "calls made" "$work/cli.out" || fail "the guest did not make its calls: $(cat "$work/cli.out")"
# held: nothing of it may show outside, however long we look (2 s: the
# unheld TOE had sent all four within milliseconds)
for i in $(seq 20); do
	if [ -s "$work/srv.log" ]; then
		fail "the held TOE let outbound traffic through: $(paste -sd' ' "$work/srv.log")"
	fi
	if ip netns exec "$VM" ss -Htn "dst $srv" | grep -q .; then
		fail "the held TOE connected out: $(ip netns exec "$VM" ss -Htn "dst $srv" | paste -sd' ')"
	fi
	sleep 0.1
done
echo "held: the guest's 2 datagrams and 2 connects stayed in the TOE"

# as tochaind: the out chain (deny ATTACK), then chains.ready
tt_vnf o '{}' --deny-marker ATTACK
ctl_ok chain.set '{"dir":"out","name":"egress","hops":[["o"]]}' >/dev/null
[ "$(ctl_ok chains.ready | tt_json 'j["was_held"]')" = True ] || fail "the TOE was not held"
rc=0
wait $cli || rc=$?
cat "$work/cli.out"
[ $rc = 0 ] || fail "the guest failed (exit $rc)"
grep -qx "clean: answer b'ok:tcp-clean\\\\n'" "$work/cli.out" || fail "the clean request was not answered"
grep -qx "ATTACK: \(ECONNRESET\|answer b''\)" "$work/cli.out" || fail "the marked request was not reset"
tc_wait_for 5 grep -qx "udp udp-clean" "$work/srv.log" || fail "the clean datagram was lost"
grep -qx "tcp tcp-clean" "$work/srv.log" || fail "the server did not log the clean request"
if grep ATTACK "$work/srv.log"; then
	fail "a marked payload held from before the out chain went out unchecked"
fi
n=$(grep -c 'denied: chain egress (out) vnf o' "$work/toe.log" || true)
[ "$n" = 2 ] || fail "$n denials logged by the out chain, not 2 (datagram + connection)"
echo "released: clean datagram and request through, both marked ones denied by the out chain"
tt_stop_vnf o
tt_toe_stop
echo PASS
