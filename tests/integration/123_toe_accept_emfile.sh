#!/usr/bin/env bash
# timeout: 120
# A failed accept must not leave the listener deaf.  The TOE runs out of
# file descriptors (prlimit on the running TOE): the guest's accept() gets
# EMFILE, as from the kernel, while the next connection waits in the
# listener's backlog.  Once the connections held open are closed, that
# waiting connection must be accepted and served.  The TOE used to re-arm
# the listener only after EAGAIN, so after any other error no readiness
# reached the guest again and every later connection waited forever.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3
tc_need_root "network namespaces"

tt_netns 123 10.79.23
tc_on_fail 'tail -n 20 $work/*.log'
tt_toe_start "$VM" vm123

# An echo server that holds its connections and retries a failed accept.
cat >$work/echo.py <<'EOF2'
import select, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(64)
held, failed = [], 0
while True:
    r, _, _ = select.select([s] + held, [], [])
    for x in r:
        if x is s:
            try:
                c, _ = s.accept()
            except OSError as e:
                failed += 1
                if failed == 1:
                    print("accept failed:", e.strerror, flush=True)
                time.sleep(0.01)
                continue
            held.append(c)
            continue
        d = x.recv(64)
        if d:
            x.sendall(d)
        else:
            held.remove(x)
            x.close()
EOF2
tt_guest_bg srv.log python3 $work/echo.py 8123
srv=$GPID
tc_wait_port "$CL" 10.79.23.2 8123 20 || fail "port 8123 did not open"

# Room for about eight more connections in the TOE.
nfd=$(ls /proc/$TOE/fd | wc -l)
prlimit --pid $TOE --nofile=$((nfd + 8)):$((nfd + 8))
echo "TOE: $nfd fds open, limit $((nfd + 8))"

ip netns exec "$CL" timeout 90 python3 - <<'EOF2' || fail "the connection that waited through EMFILE was not served"
import socket, sys, time

def echo(c, secs):
    c.settimeout(secs)
    try:
        return c.recv(8) == b"x"
    except OSError:
        return False

held = []
while True:
    c = socket.create_connection(("10.79.23.2", 8123), timeout=5)
    c.sendall(b"x")
    if not echo(c, 3):
        break
    held.append(c)
    if len(held) > 40:
        sys.exit("the TOE's descriptor limit never bit")
print(f"{len(held)} connections served and held; the next one waits", flush=True)
if not held:
    sys.exit("not even one connection was served")
for h in held:
    h.close()
t0 = time.monotonic()
if not echo(c, 20):
    sys.exit("the waiting connection got no answer in 20 s after the others closed")
print(f"the waiting connection was served {time.monotonic() - t0:.2f} s after the others closed")
d = socket.create_connection(("10.79.23.2", 8123), timeout=5)
d.sendall(b"x")
if not echo(d, 10):
    sys.exit("a new connection was not served")
print("a new connection is served")
EOF2
grep -q "accept failed: Too many open files" $work/srv.log ||
	fail "the guest never saw EMFILE from accept (the limit did not bite)"
cat $work/srv.log
kill -0 $TOE || fail "the TOE died"
echo PASS
