# What a guest program sees when its TOE is killed and a new one started
# (tests/integration/112, guest-lib/gl_revive.c).  Run under tochain-run:
#   revive_probe.py PORT
# Prints "READY pid P fd F" (its listener's fd), "CONNS" once two
# connections are in (each sent 6 bytes), then waits for the TOE to die:
# the first connection is read by a thread blocked in recv, the second
# is watched by epoll.  "RESET ok" when both failed as after a peer's
# reset; "RESET bad: ..." otherwise.  Then its listener, the same fd in
# the same epoll set, must accept a connection through the new TOE,
# which gets "pid P fd F"; "REVIVED".
import errno, os, select, socket, sys, threading

port = int(sys.argv[1])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", port))
ls.listen(8)
lfd = ls.fileno()
ep = select.epoll()
ep.register(lfd, select.EPOLLIN)
print("READY pid %d fd %d" % (os.getpid(), lfd), flush=True)

conns = []
while len(conns) < 2:
    ep.poll(60)
    c, _ = ls.accept()
    got = b""
    while len(got) < 6:
        got += c.recv(6 - len(got))
    conns.append(c)
print("CONNS", flush=True)

bad = []
blocked = {}


def reader(c):
    try:
        blocked["data"] = c.recv(100)
    except OSError as e:
        blocked["errno"] = e.errno


t = threading.Thread(target=reader, args=(conns[0],))
t.start()
c = conns[1]
ep.register(c.fileno(), select.EPOLLIN)
evs = dict(ep.poll(120))
ev = evs.get(c.fileno(), 0)
print("epoll: %#x" % ev, flush=True)
if not (ev & select.EPOLLERR and ev & select.EPOLLHUP):
    bad.append("epoll events %#x" % ev)
try:
    c.recv(100)
    bad.append("recv did not fail")
except ConnectionResetError:
    pass
except OSError as e:
    bad.append("recv: %s" % e)
try:
    if c.recv(100) != b"":
        bad.append("second recv: data")
except OSError as e:
    bad.append("second recv: %s" % e)
try:
    c.send(b"x")
    bad.append("send did not fail")
except (BrokenPipeError, ConnectionResetError):
    pass
except OSError as e:
    bad.append("send: %s" % e)
t.join(60)
if t.is_alive():
    bad.append("the thread blocked in recv still waits")
elif blocked.get("errno") != errno.ECONNRESET:
    bad.append("blocked recv: %r" % blocked)
ep.unregister(c.fileno())
for c in conns:
    c.close()
print("RESET ok" if not bad else "RESET bad: " + "; ".join(bad), flush=True)

while True:
    evs = dict(ep.poll(120))
    if lfd not in evs:
        print("REVIVED no: epoll %r" % evs, flush=True)
        sys.exit(1)
    try:
        c, _ = ls.accept()
    except BlockingIOError:
        continue
    break
c.recv(100)
c.sendall(b"pid %d fd %d" % (os.getpid(), lfd))
c.close()
print("REVIVED", flush=True)
