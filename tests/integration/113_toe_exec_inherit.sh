#!/usr/bin/env bash
# timeout: 180
# Sockets inherited across exec in a stand-in VM (issue 16; a regression
# of the fork work, they were EBADF): python's subprocess closes every fd
# it is not told to pass (close_fds), the old channel's connection
# included, so the new image cannot name itself heir; it proves with the
# socket's secret, which the placeholder fd holds, that it was given the
# socket (guest-lib/gl_exec.c, include/tochain/srpc.h).  A parent under
# tochain-run listens and starts a child with pass_fds=[listener] that
# serves two requests on the inherited fd; then the parent accepts a
# connection itself and hands the connected socket to a second child,
# which greets the client, reads its request and answers on it (the
# parent closes its copy once the child is done, and the client sends
# only after the greeting: guest-lib/README.md, exec and fork).  Each answer names
# the process that wrote it: the children, not the parent.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip
tc_need_root "network namespaces"
py=/usr/bin/python3	# Debian's: a dynamically linked program the runtime can preload into
[ -x $py ] || fail "Debian's python3 missing"

tt_netns 113 10.81.13
tc_on_fail 'tail -n 20 $work/py.log $work/toe.log'
tt_toe_start "$VM" vm113

cat >$work/parent.py <<'PY'
import os, socket, subprocess, sys
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", 8113))
ls.listen(8)
print("parent pid %d" % os.getpid(), flush=True)
p = subprocess.Popen([sys.executable, sys.argv[1], "listener", str(ls.fileno())],
                     pass_fds=[ls.fileno()])
if p.wait() != 0:
    sys.exit("listener child failed")
c, _ = ls.accept()
p = subprocess.Popen([sys.executable, sys.argv[1], "conn", str(c.fileno())], pass_fds=[c.fileno()])
rc = p.wait()	# closed only after the child: a close racing its adoption loses the socket
c.close()
sys.exit(rc)
PY
cat >$work/child.py <<'PY'
import os, socket, sys
what, fd = sys.argv[1], int(sys.argv[2])
s = socket.socket(fileno=fd)
print("child %s pid %d fd %d" % (what, os.getpid(), fd), flush=True)
if what == "listener":
    for i in range(2):
        c, a = s.accept()
        data = c.recv(100)
        c.sendall(b"pid %d got %s" % (os.getpid(), data))
        c.close()
else:
    s.sendall(b"hello from %d\n" % os.getpid())
    data = s.recv(100)
    s.sendall(b"pid %d got %s" % (os.getpid(), data))
    s.close()
PY
tt_guest_bg py.log $py $work/parent.py $work/child.py
PARENT=$GPID
tc_wait_port "$CL" 10.81.13.2 8113 15 || fail "port did not open"
ask() {	# WHAT: one request, prints the answer
	ip netns exec "$CL" $py -c '
import socket, sys
c = socket.create_connection(("10.81.13.2", 8113), timeout=10)
c.sendall(sys.argv[1].encode())
print(c.recv(100).decode())' "$1"
}
# tc_wait_port's own connection was the first accept: one request left
got=$(ask one) || fail "request to the listener child: $(cat $work/py.log)"
echo "listener child answered: $got"
pp=$(sed -n 's/^parent pid //p' $work/py.log)
lp=$(sed -n 's/^child listener pid \([0-9]*\).*/\1/p' $work/py.log)
[ -n "$lp" ] && [ "$lp" != "$pp" ] && [ "$got" = "pid $lp got one" ] ||
	fail "answer '$got' is not the listener child's (parent $pp, child $lp)"
# the request only after the child's greeting: bytes the parent's runtime
# had received before the exec stay with it (guest-lib/README.md, fork)
got=$(ip netns exec "$CL" $py -c '
import socket
c = socket.create_connection(("10.81.13.2", 8113), timeout=10)
f = c.makefile("rb")
f.readline()
c.sendall(b"two")
print(f.read(100).decode())') || fail "request to the connection child: $(cat $work/py.log)"
echo "connection child answered: $got"
cp=$(sed -n 's/^child conn pid \([0-9]*\).*/\1/p' $work/py.log)
[ -n "$cp" ] && [ "$cp" != "$pp" ] && [ "$got" = "pid $cp got two" ] ||
	fail "answer '$got' is not the connection child's (parent $pp, child $cp)"
wait $PARENT || fail "parent exited $?: $(cat $work/py.log)"
echo "PASS 113_toe_exec_inherit"
