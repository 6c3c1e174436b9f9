#!/usr/bin/env bash
# timeout: 300
# Fork-per-connection servers under tochain-run: the parent accepts, forks,
# and closes its copy while the child serves (host-toe/toe/toe_int.h, ownership).
# busybox httpd and python's socketserver.ForkingTCPServer run in the
# stand-in VM behind the TOE; from a client namespace, 20 sequential and 8
# concurrent fetches of a 1 MiB file (keep-alive off) must match its
# sha256.  After each server is killed, the TOE's counters (SIGUSR1) must
# show no channel and no socket left.  A python server that forks only
# after the request is in checks that those bytes reach whichever of
# parent and child reads them, and one whose thread sits in recv while
# another thread forks checks that the thread still gets its bytes.
#
# busybox must be dynamically linked (the runtime is a preload library):
# Debian's busybox-static is not.  The test uses $TOCHAIN_BUSYBOX, a
# dynamic busybox on PATH, or one unpacked from Debian's `busybox` package
# into /var/cache/tochain/busybox (apt-get download); without one, the
# python half still runs and the test then says SKIP.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3 curl sha256sum file
tc_need_root "network namespaces"

is_dynamic() { [ -x "$1" ] && file -L "$1" 2>/dev/null | grep -q 'dynamically linked'; }
find_busybox() {
	local c cache=/var/cache/tochain/busybox
	for c in "${TOCHAIN_BUSYBOX:-}" "$(command -v busybox || true)" "$cache/bin/busybox"; do
		[ -n "$c" ] && is_dynamic "$c" && { echo "$c"; return 0; }
	done
	command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || return 1
	mkdir -p "$cache.tmp.$$" && (cd "$cache.tmp.$$" && timeout 60 apt-get download busybox \
		>/dev/null 2>&1 && dpkg-deb -x busybox_*.deb x) || { rm -rf "$cache.tmp.$$"; return 1; }
	mkdir -p "$cache/bin" && cp "$cache.tmp.$$/x/bin/busybox" "$cache/bin/busybox.$$" &&
		mv "$cache/bin/busybox.$$" "$cache/bin/busybox"
	rm -rf "$cache.tmp.$$"
	is_dynamic "$cache/bin/busybox" && echo "$cache/bin/busybox"
}

tt_netns 109 10.79.9
tc_on_fail 'tail -n 20 $work/*.log'

tt_toe_start "$VM" vm109

mkdir $work/www
head -c $((1 << 20)) /dev/urandom >$work/www/mid.bin
want=$(sha256sum <$work/www/mid.bin | cut -d' ' -f1)

fetch() {	# fetch PORT OUT
	ip netns exec "$CL" curl -sS --http1.0 -H 'Connection: close' --max-time 30 \
		-o "$2" "http://10.79.9.2:$1/mid.bin"
}

# the TOE's counters: "channels_open=N sockets_open=N" once both are 0, within 10 s
toe_idle() {
	local i line
	for i in $(seq 50); do
		kill -USR1 $TOE
		sleep 0.2
		line=$(grep 'stats:' $work/toe.log | tail -n 1)
		case $line in
		*"channels_open=0 sockets_open=0 "*) echo "TOE: $line"; return 0;;
		esac
	done
	echo "TOE still holds: $line"
	return 1
}

serve_and_check() {	# NAME PORT PID
	local name=$1 port=$2 pid=$3 i pids=()
	tc_wait_port "$CL" 10.79.9.2 $port 20 || fail "$name: port $port did not open"
	for i in $(seq 20); do
		fetch $port $work/seq.$i || fail "$name: sequential fetch $i failed"
		[ "$(sha256sum <$work/seq.$i | cut -d' ' -f1)" = "$want" ] ||
			fail "$name: sequential fetch $i differs"
	done
	echo "$name: 20 sequential fetches ok"
	for i in $(seq 8); do
		fetch $port $work/par.$i &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait $i || fail "$name: a concurrent fetch failed"; done
	for i in $(seq 8); do
		[ "$(sha256sum <$work/par.$i | cut -d' ' -f1)" = "$want" ] ||
			fail "$name: concurrent fetch $i differs"
	done
	echo "$name: 8 concurrent fetches ok"
	kill $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	# the children of a killed server: gone once they served (SIGKILL if not)
	ip netns pids "$GU" | xargs -r kill -9 2>/dev/null || true
	toe_idle || fail "$name: sockets or channels leaked in the TOE"
	rm -f $work/seq.* $work/par.*
}

# python: ForkingMixIn (accept in the parent, fork, close in the parent)
cat >$work/fork_server.py <<'EOF'
import http.server, socketserver, sys, os
os.chdir(sys.argv[2])
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def log_message(self, *a):
        pass
class S(socketserver.ForkingMixIn, http.server.HTTPServer):
    allow_reuse_address = True
S(("0.0.0.0", int(sys.argv[1])), H).serve_forever()
EOF
tt_guest_bg py.log python3 $work/fork_server.py 8090 $work/www
py=$GPID
serve_and_check "python ForkingTCPServer" 8090 $py

# The data a parent has already received when it forks goes to whichever
# holder reads first: the server sleeps before forking (the request is in
# by then), then either the child serves and the parent closes its copy,
# or the child closes its copy at once and the parent serves.
cat >$work/fork_echo.py <<'EOF'
import hashlib, os, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(8)
n = 0
def serve(c):
    want = int.from_bytes(c.recv(8, socket.MSG_WAITALL), "big")
    h, got = hashlib.sha256(), 0
    while got < want:
        b = c.recv(65536)
        if not b:
            break
        h.update(b)
        got += len(b)
    c.sendall(h.hexdigest().encode())
    c.close()
while True:
    c, _ = s.accept()
    time.sleep(0.3)
    pid = os.fork()
    if pid == 0:
        s.close()
        if n % 2 == 0:
            serve(c)
        else:
            c.close()
        os._exit(0)
    if n % 2 == 1:
        serve(c)
    else:
        c.close()
    os.waitpid(pid, 0)
    n += 1
EOF
cat >$work/echo_client.py <<'EOF'
import hashlib, os, socket, sys
for i in range(6):
    data = os.urandom(200 * 1024)
    c = socket.create_connection(("10.79.9.2", int(sys.argv[1])), timeout=20)
    c.sendall(len(data).to_bytes(8, "big") + data)
    r = b""
    while len(r) < 64:
        b = c.recv(64 - len(r))
        if not b:
            break
        r += b
    c.close()
    who = "child" if i % 2 == 0 else "parent"
    if r.decode() != hashlib.sha256(data).hexdigest():
        print("connection %d (%s serves): got %r" % (i, who, r[:64]))
        sys.exit(1)
print("6 requests in before the fork, served by child and parent in turn: sha256 ok")
EOF
tt_guest_bg echo.log python3 $work/fork_echo.py 8092
echo_srv=$GPID
tc_wait_port "$CL" 10.79.9.2 8092 20 || fail "echo: port did not open"
ip netns exec "$CL" timeout 120 python3 $work/echo_client.py 8092 || fail "fork-time data lost"
kill $echo_srv; wait $echo_srv 2>/dev/null || true
ip netns pids "$GU" | xargs -r kill -9 2>/dev/null || true
toe_idle || fail "echo: sockets or channels leaked in the TOE"

# A thread blocked in recv while another thread forks (a subprocess, say)
# must still get the bytes that arrive afterwards (its socket was parked by
# the fork: the thread claims it again).
cat >$work/thread_fork.py <<'EOF'
import os, socket, sys, threading, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(1)
c, _ = s.accept()
def reader():
    c.sendall(c.recv(16))
t = threading.Thread(target=reader)
t.start()
time.sleep(0.3)
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
t.join()
EOF
tt_guest_bg thread.log python3 $work/thread_fork.py 8093
thr_srv=$GPID
sleep 0.5
got=$(ip netns exec "$CL" timeout 20 python3 -c '
import socket, sys, time
for i in range(100):
    try:
        c = socket.create_connection(("10.79.9.2", 8093), timeout=10)
        break
    except OSError:
        time.sleep(0.1)
time.sleep(1)
c.sendall(b"ping")
print(c.recv(16).decode())') || true
[ "$got" = ping ] || fail "a thread blocked in recv across another thread's fork got '$got'"
wait $thr_srv 2>/dev/null || true
echo "recv blocked across another thread's fork: ok"
toe_idle || fail "thread: sockets or channels leaked in the TOE"

bb=$(find_busybox || true)
if [ -z "$bb" ]; then
	echo "SKIP: no dynamically linked busybox (busybox httpd part not run)"
	exit 77
fi
echo "busybox: $bb"
tt_guest_bg bb.log "$bb" httpd -f -p 8091 -h $work/www
bbp=$GPID
serve_and_check "busybox httpd" 8091 $bbp

kill -TERM $TOE
tc_wait_exit 5 $TOE || fail "TOE ignored SIGTERM"
grep -q "bad message\|does not" $work/toe.log && fail "TOE dropped a guest as hostile"
echo PASS
