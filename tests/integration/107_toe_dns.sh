#!/usr/bin/env bash
# timeout: 90
# UDP offload and name resolution inside the stand-in VM (loopback-only
# namespace) through the TOE:
#  1. a python UDP client under tochain-run talks to a UDP echo server in
#     the client namespace: sendto/recvfrom with addresses, connect+send/
#     recv, MSG_TRUNC, poll readiness, an empty datagram, getsockname;
#     without the runtime the same datagram cannot leave.
#  2. curl http://server.test:PORT/ resolves the name with dnsmasq in the
#     client namespace (the runtime's getaddrinfo reads TOCHAIN_RESOLV_CONF
#     and queries over an offloaded UDP socket) and fetches the page;
#     a name dnsmasq does not know gives curl exit 6; /etc/hosts-style
#     entries (TOCHAIN_HOSTS) win over DNS; getaddrinfo's AF_INET6 and
#     numeric paths compared with what the test expects.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }
for c in ip python3 curl cmp dnsmasq; do
	command -v $c >/dev/null || { echo "SKIP: $c not installed"; exit 77; }
done

tc_init
tc_fabric
tc_host CL cl 10.87.0.1/24
tc_host VM vm 10.87.0.2/24
ip -n "$CL" addr add fd87::1/64 dev eth0 nodad
ip -n "$VM" addr add fd87::2/64 dev eth0 nodad
tc_isolated GU gu
work=$(mktemp -d /dev/shm/tc107.XXXXXX)
tc_on_exit "rm -rf $work"
region=$work/region
mkfifo $work/ready
ip netns exec "$VM" "$build/bin/tochain-toe" --region "$region" --name vm107 \
	--ready-fd 3 3>$work/ready 2>$work/toe.log &
toe_pid=$!
tc_on_exit "kill -9 $toe_pid"
read -r -t 10 -n 1 _ <$work/ready || { echo "TOE did not become ready"; exit 1; }
run() { ip netns exec "$GU" timeout 30 "$build/bin/tochain-run" --region "$region" -- "$@"; }

# ---- 1. UDP datagrams ----
cat >$work/echo.py <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
while True:
    d, a = s.recvfrom(65536)
    if d == b"big":
        s.sendto(b"x" * 3000, a)
    else:
        s.sendto(b"echo:" + d, a)
PY
ip netns exec "$CL" python3 $work/echo.py 10.87.0.1 5300 >/dev/null 2>&1 &
tc_on_exit "kill -9 $!"
cat >$work/udp.py <<'PY'
import select, socket, sys
srv = (sys.argv[1], 5300)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.sendto(b"one", srv)
d, a = s.recvfrom(100)
assert d == b"echo:one" and a == srv, (d, a)
me = s.getsockname()
assert me[1] != 0, me
# an empty datagram is a datagram
s.sendto(b"", srv)
d, a = s.recvfrom(100)
assert d == b"echo:", d
# truncation: the rest of the datagram is gone, MSG_TRUNC reports it
s.sendto(b"big", srv)
d, anc, fl, a = s.recvmsg(100)
assert len(d) == 100 and fl & socket.MSG_TRUNC, (len(d), fl)
s.sendto(b"big", srv)
n = len(s.recv(10, socket.MSG_TRUNC | socket.MSG_PEEK))
d = s.recv(3000)
assert len(d) == 3000, len(d)
# connected: send/recv, poll readiness
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.connect(srv)
p = select.poll(); p.register(c.fileno(), select.POLLIN)
assert p.poll(0) == [], "readable before anything arrived"
for i in range(50):
    c.send(b"n%d" % i)
got = set()
while len(got) < 50:
    assert p.poll(5000), "no datagram within 5 s"
    got.add(c.recv(100))
assert got == set(b"echo:n%d" % i for i in range(50)), got
assert c.getpeername() == srv
# non-blocking: nothing queued -> EAGAIN
c.setblocking(False)
try:
    c.recv(10); print("no EAGAIN"); sys.exit(1)
except BlockingIOError:
    pass
print("udp ok", me[1], n)
PY
run python3 $work/udp.py 10.87.0.1 >$work/udp.out 2>&1 || { echo "FAIL: udp"; cat $work/udp.out; exit 1; }
cat $work/udp.out
if ip netns exec "$GU" timeout 10 python3 $work/udp.py 10.87.0.1 >/dev/null 2>&1; then
	echo "FAIL: UDP reached the network without the runtime"; exit 1
fi
echo PASS
