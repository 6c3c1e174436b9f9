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
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds ip python3 curl cmp dnsmasq

tt_netns 107 10.87.0
ip -n "$CL" addr add fd87::1/64 dev eth0 nodad
ip -n "$VM" addr add fd87::2/64 dev eth0 nodad
tt_toe_start "$VM" vm107

# ---- 1. UDP datagrams ----
cat >$work/echo.py <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready", flush=True)
while True:
    d, a = s.recvfrom(65536)
    if d == b"big":
        s.sendto(b"x" * 3000, a)
    else:
        s.sendto(b"echo:" + d, a)
PY
ip netns exec "$CL" python3 $work/echo.py 10.87.0.1 5300 >$work/echo.out 2>&1 &
tc_on_exit "kill -9 $!"
# bound before the first datagram (python starts slowly on a loaded machine)
tc_wait_for 10 grep -q ready $work/echo.out || fail "the UDP echo server did not start"
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
# figure: request/response round trips over the offload
import time
c.setblocking(True)
t0 = time.perf_counter()
for i in range(1000):
    c.send(b"r")
    c.recv(100)
dt = time.perf_counter() - t0
print("udp rr: %d round trips/s" % (1000 / dt))
print("udp ok", me[1], n)
PY
tt_guest --timeout 30 python3 $work/udp.py 10.87.0.1 >$work/udp.out 2>&1 || { echo "FAIL: udp"; cat $work/udp.out; exit 1; }
cat $work/udp.out
if ip netns exec "$GU" timeout 10 python3 $work/udp.py 10.87.0.1 >/dev/null 2>&1; then
	fail "UDP reached the network without the runtime"
fi

# ---- 2. name resolution ----
ip netns exec "$CL" dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces \
	--listen-address=10.87.0.1 --port 53 --local=/test/ \
	--host-record=server.test,10.87.0.1 --host-record=dual.test,10.87.0.1,fd87::1 \
	--cname=alias.test,server.test --pid-file=$work/dnsmasq.pid \
	--log-queries --log-facility=$work/dns.log >/dev/null 2>&1 &
tc_on_exit "kill -9 $!"
mkdir $work/www
echo "page of server.test $RANDOM" >$work/www/index.html
(cd $work/www && exec ip netns exec "$CL" python3 -m http.server --bind 10.87.0.1 8000) >/dev/null 2>&1 &
tc_on_exit "kill -9 $!"
tc_wait_port "$VM" 10.87.0.1 8000 10
tc_wait_for 5 grep -q "started" $work/dns.log 2>/dev/null || true
printf 'nameserver 10.87.0.1\noptions timeout:1 attempts:2\n' >$work/resolv.conf
printf '10.87.0.1 hosted.test\n' >$work/hosts
export TOCHAIN_RESOLV_CONF=$work/resolv.conf TOCHAIN_HOSTS=$work/hosts

tt_guest --timeout 30 curl -sS --max-time 20 -o $work/got.html http://server.test:8000/ ||
	{ echo "FAIL: curl http://server.test:8000/"; cat $work/dns.log; exit 1; }
cmp $work/got.html $work/www/index.html || fail "page differs"
grep -q "query\[A\] server.test from 10.87.0.2" $work/dns.log ||
	{ echo "FAIL: the query did not come from the TOE's address"; cat $work/dns.log; exit 1; }
tt_guest --timeout 30 curl -sS --max-time 20 -o $work/got2.html http://alias.test:8000/
cmp $work/got2.html $work/www/index.html || fail "page via CNAME differs"
# the hosts file first: DNS does not know hosted.test
tt_guest --timeout 30 curl -sS --max-time 20 -o $work/got3.html http://hosted.test:8000/
cmp $work/got3.html $work/www/index.html || fail "page via hosts file differs"
grep -q "hosted.test" $work/dns.log && fail "hosts-file name went to DNS"
# a name that does not exist: curl exit 6 (NXDOMAIN, no waiting for retries)
start=$(date +%s%N)
rc=0
tt_guest --timeout 30 curl -s -o /dev/null --max-time 20 http://nosuch.test:8000/ || rc=$?
[ $rc = 6 ] || fail "unknown name gave curl exit $rc, want 6"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $ms -lt 1500 ] || fail "NXDOMAIN took ${ms} ms"
# a server that never answers: timeout 1 s x 2 attempts, then exit 6
printf 'nameserver 10.87.0.99\noptions timeout:1 attempts:2\n' >$work/resolv-dead.conf
start=$(date +%s%N)
rc=0
TOCHAIN_RESOLV_CONF=$work/resolv-dead.conf tt_guest --timeout 30 curl -s -o /dev/null \
	--max-time 20 http://server.test:8000/ || rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 6 ] || fail "dead server gave curl exit $rc, want 6"
[ $ms -ge 1900 ] && [ $ms -lt 6000 ] || fail "dead server took ${ms} ms"
# the library calls themselves
cat >$work/gai.py <<'PY'
import socket as S
def addrs(name, fam=0, flags=0, port=80):
    return sorted(set(ai[4][0] for ai in S.getaddrinfo(name, port, fam, S.SOCK_STREAM, 0, flags)))
assert addrs("dual.test") == ["10.87.0.1", "fd87::1"], addrs("dual.test")
assert addrs("dual.test", S.AF_INET6) == ["fd87::1"]
assert addrs("dual.test", S.AF_INET) == ["10.87.0.1"]
ai = S.getaddrinfo("alias.test", "8000", S.AF_INET, S.SOCK_STREAM, 0, S.AI_CANONNAME)
assert ai[0][3] == "server.test" and ai[0][4] == ("10.87.0.1", 8000), ai
ai = S.getaddrinfo("server.test", "http", S.AF_INET, S.SOCK_STREAM)
assert ai[0][4][1] == 80, ai
ai = S.getaddrinfo("server.test", None, S.AF_INET)
assert set(a[1] for a in ai) >= {S.SOCK_STREAM, S.SOCK_DGRAM}, ai
assert addrs("10.1.2.3", flags=S.AI_NUMERICHOST) == ["10.1.2.3"]
assert addrs("fd00::7") == ["fd00::7"]
for name, fam, flags, err in [("server.test", 0, S.AI_NUMERICHOST, S.EAI_NONAME),
                              ("nosuch.test", 0, 0, S.EAI_NONAME),
                              ("server.test", S.AF_INET6, 0, S.EAI_NONAME),
                              ("server.test", 0, 0x7fff0000, S.EAI_BADFLAGS)]:
    try:
        S.getaddrinfo(name, 80, fam, 0, 0, flags); raise SystemExit("no error for %s" % name)
    except S.gaierror as e:
        assert e.errno == err, (name, e)
try:
    S.getaddrinfo("server.test", "nosuchservice", S.AF_INET, S.SOCK_STREAM)
    raise SystemExit("no error for a bad service")
except S.gaierror as e:
    assert e.errno == S.EAI_SERVICE, e
h = S.gethostbyname_ex("alias.test")
assert h[0] == "server.test" and h[2] == ["10.87.0.1"], h
assert S.gethostbyname("hosted.test") == "10.87.0.1"
try:
    S.gethostbyname_ex("nosuch.test"); raise SystemExit("gethostbyname: no error")
except S.herror as e:
    pass
except S.gaierror as e:
    pass
import time
t0 = time.perf_counter()
for i in range(200):
    S.getaddrinfo("dual.test", 80, 0, S.SOCK_STREAM)
print("getaddrinfo A+AAAA via DNS: %.2f ms each" % ((time.perf_counter() - t0) * 1000 / 200))
print("resolver ok")
PY
tt_guest --timeout 30 python3 $work/gai.py || fail "getaddrinfo checks"
# the same kernel-side figure for comparison: UDP round trips from the TOE's namespace
ip netns exec "$VM" timeout 20 python3 $work/udp.py 10.87.0.1 | grep "udp rr" | sed 's/^/kernel /'
# without the runtime the name does not resolve in the stand-in VM
rc=0
ip netns exec "$GU" timeout 20 curl -s -o /dev/null --max-time 10 http://server.test:8000/ || rc=$?
[ $rc != 0 ] || fail "resolved and fetched without the runtime"
echo PASS
