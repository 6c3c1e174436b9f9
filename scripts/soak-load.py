#!/usr/bin/env python3
"""The load and the tally of `make soak` (scripts/soak.sh); Python's
standard library only.

  soak-load.py load ADDR WWW SECONDS OUT.tsv
      mixed load on ADDR until SECONDS have passed or SIGTERM: HTTP/1.1
      on port 80 over keep-alive connections (KA workers) and over a
      fresh connection per request (NEW workers), each request for the
      small (s.html) or the large (l.bin) file of WWW, the body checked
      against its SHA-256; UDP datagrams to the echo server on port 5300,
      the echo checked; one attack (ATTACKS below) every ATTACK_EVERY s on
      a fresh connection, marked "soakatk<N>" so that the server's access
      log shows whether it arrived.  Every request is bounded (TIMEOUT).
      OUT.tsv gets one line per request:
        kind conn_t start end outcome detail
      conn_t: when its connection was opened (the request was sent on a
      connection that existed from then on); outcome: ok, fail (no
      answer, reset, wrong status: detail says), wrong (a 200 whose body
      is not the file, an echo that is not the datagram), and for
      attacks denied (403 of the WAF or a reset before any answer),
      through (any other answer), undelivered (no connection, or no
      answer within TIMEOUT).
  soak-load.py channels VMNS TOE_PID CHANNELS_OPEN
      "key value" lines: which guest processes (the pids of network
      namespace VMNS) hold a connection to the TOE (TOE_PID: a UNIX
      socket whose peer is one of the TOE's sockets, as `ss -x` in VMNS
      shows), and how many of the TOE's CHANNELS_OPEN channels no live
      process holds (orphaned: a leak).  Processes without one are named
      (detached: not a leak by itself; soak.sh checks that those that
      need the runtime still work).
  soak-load.py region COUNTERS < INFO.json
      "key value" lines from `tochain-region info --json` of the guest
      region (stdin) and the TOE's counters in COUNTERS (toe.bufs,
      toe.bufs_free, toe.bufs_host): region.tx_done, the buffers on the
      open channels' TX and DONE rings (given back by the guests, not yet
      taken by the TOE); region.rx, on their RX rings (waiting for a
      guest); region.unaccounted, those neither in the pool's stock, nor
      held by the TOE, nor on a ring of an open channel (the guests'
      stashes of their grants, or lost); region.held_per_channel, those
      neither in the pool's stock, nor held by the TOE, nor on an RX ring,
      per open channel: each channel's grant, more when buffers are lost.
  soak-load.py report OUT.tsv EVENTS ACCESS_LOG BEFORE AFTER CHECKS
      the summary table; exit 1 when an aim is missed (soak.sh's header).
      CHECKS: "name ok|FAIL detail" lines of soak.sh's own checks.
      EVENTS: "kind start from end detail" per fault: the fault began at
      start, recovery is counted from "from" (a link: when it came back
      up) to end, "-" when it did not recover; BEFORE/AFTER: "key value"
      lines of the counters.  The table's "its fails": the failed clean
      requests that were that kind of kill's own.
"""
import asyncio
import hashlib
import os
import random
import re
import signal
import socket
import statistics
import sys
import time

KA, NEW, ATTACK_EVERY, PAUSE, TIMEOUT = 4, 2, 0.5, 0.02, 5.0
LARGE_SHARE = 0.2  # of the HTTP requests, for l.bin
UDP_PORT = 5300
RECOVERY_AIM = 2.0
KILLS = ("toe", "vnf", "tochaind", "link")
ATTACKS = (  # name, request target; the marker is appended
    ("sqli-waf", "/s.html?id=1%27%20OR%20%271%27%3D%271&n="),
    ("cmdexe-ids", "/scripts/cmd.exe?n="),
    ("traversal", "/../../etc/passwd?n="),
)


class Load:
    def __init__(self, addr, www, secs, out):
        self.addr, self.end, self.out = addr, time.time() + secs, open(out, "w")
        self.files = {}
        for name in ("s.html", "l.bin"):
            data = open(os.path.join(www, name), "rb").read()
            self.files[name] = (len(data), hashlib.sha256(data).digest())
        self.stop = asyncio.Event()
        self.natk = 0

    def rec(self, kind, conn_t, t0, outcome, detail=""):
        self.out.write("%s\t%.6f\t%.6f\t%.6f\t%s\t%s\n" % (kind, conn_t, t0, time.time(), outcome,
                                                         detail.replace("\t", " ")[:120]))

    def running(self):
        return not self.stop.is_set() and time.time() < self.end

    async def sleep(self, s):
        try:
            await asyncio.wait_for(self.stop.wait(), s)
        except asyncio.TimeoutError:
            pass

    async def connect(self):
        return await asyncio.wait_for(asyncio.open_connection(self.addr, 80), TIMEOUT)

    @staticmethod
    async def response(r):
        """(status, body, closes) of one response read whole; raises on a short one."""
        head = await r.readuntil(b"\r\n\r\n")
        m = re.match(rb"HTTP/1\.[01] (\d{3})", head)
        if not m:
            raise ValueError("not an HTTP response")
        cl = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
        if cl:
            body = await r.readexactly(int(cl.group(1)))
        else:
            body = await r.read()
        return int(m.group(1)), body, re.search(rb"\r\nconnection:\s*close", head, re.I) is not None

    def check(self, kind, conn_t, t0, name, status, body):
        if status != 200:
            self.rec(kind, conn_t, t0, "fail", "HTTP %d" % status)
        elif (len(body), hashlib.sha256(body).digest()) != self.files[name]:
            self.rec(kind, conn_t, t0, "wrong", "%d bytes, not %s" % (len(body), name))
        else:
            self.rec(kind, conn_t, t0, "ok")

    def request(self, name, close):
        return ("GET /%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: Mozilla/5.0 (tochain soak)\r\n"
                "Accept: */*\r\n%s\r\n" % (name, self.addr, "Connection: close\r\n" if close else "")).encode()

    def pick(self):
        return "l.bin" if random.random() < LARGE_SHARE else "s.html"

    async def keepalive(self):
        r = w = None
        conn_t = 0.0
        while self.running():
            name = self.pick()
            kind = "ka-" + name.split(".")[0]
            t0 = time.time()
            try:
                if w is None:
                    conn_t = time.time()
                    r, w = await self.connect()
                w.write(self.request(name, False))
                status, body, closes = await asyncio.wait_for(self.response(r), TIMEOUT)
                self.check(kind, conn_t, t0, name, status, body)
                if closes:  # the server said so: not a failure
                    w.close()
                    r = w = None
            except (OSError, EOFError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
                self.rec(kind, conn_t if w else t0, t0, "fail", type(e).__name__)
                if w:
                    w.close()
                r = w = None
            await self.sleep(PAUSE)
        if w:
            w.close()

    async def fresh(self):
        while self.running():
            name = self.pick()
            kind = "new-" + name.split(".")[0]
            t0 = time.time()
            w = None
            try:
                r, w = await self.connect()
                w.write(self.request(name, True))
                status, body, _ = await asyncio.wait_for(self.response(r), TIMEOUT)
                self.check(kind, t0, t0, name, status, body)
            except (OSError, EOFError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
                self.rec(kind, t0, t0, "fail", type(e).__name__)
            if w:
                w.close()
            await self.sleep(PAUSE)

    async def udp(self):
        loop = asyncio.get_running_loop()
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setblocking(False)
        s.connect((self.addr, UDP_PORT))
        conn_t, n = time.time(), 0
        while self.running():
            n += 1
            msg = b"soak %d %s" % (n, os.urandom(8).hex().encode())
            t0 = time.time()
            try:
                while True:  # drop late echoes of earlier datagrams
                    s.recv(2048)
            except (BlockingIOError, ConnectionRefusedError):
                pass
            try:
                await loop.sock_sendall(s, msg)
                while True:
                    got = await asyncio.wait_for(loop.sock_recv(s, 2048), 1.0)
                    if got.startswith(b"soak ") and got.split(b" ")[1] != b"%d" % n:
                        continue  # a late echo
                    break
                self.rec("udp", conn_t, t0, "ok" if got == msg else "wrong",
                         "" if got == msg else "echo %r" % got[:40])
            except (OSError, asyncio.TimeoutError) as e:
                self.rec("udp", conn_t, t0, "fail", type(e).__name__)
            await self.sleep(0.05)
        s.close()

    async def attacks(self):
        while self.running():
            name, target = ATTACKS[self.natk % len(ATTACKS)]
            self.natk += 1
            mark = "soakatk%d" % self.natk
            t0 = time.time()
            w = None
            try:
                r, w = await self.connect()
            except (OSError, asyncio.TimeoutError) as e:
                self.rec("attack-" + name, t0, t0, "undelivered", mark + " " + type(e).__name__)
                await self.sleep(ATTACK_EVERY)
                continue
            try:
                w.write(("GET %s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: Mozilla/5.0 (tochain soak)\r\n"
                         "Accept: */*\r\nConnection: close\r\n\r\n" % (target, mark, self.addr)).encode())
                status, _, _ = await asyncio.wait_for(self.response(r), TIMEOUT)
                self.rec("attack-" + name, t0, t0, "denied" if status == 403 else "through",
                         "%s HTTP %d" % (mark, status))
            except (OSError, EOFError, asyncio.IncompleteReadError) as e:
                self.rec("attack-" + name, t0, t0, "denied", mark + " reset " + type(e).__name__)
            except asyncio.TimeoutError:  # the access log says whether it arrived
                self.rec("attack-" + name, t0, t0, "undelivered", mark + " no answer")
            except ValueError as e:
                self.rec("attack-" + name, t0, t0, "through", mark + " " + str(e))
            w.close()
            await self.sleep(ATTACK_EVERY)

    async def run(self):
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self.stop.set)
        jobs = [self.keepalive() for _ in range(KA)] + [self.fresh() for _ in range(NEW)]
        jobs += [self.udp(), self.attacks()]
        await asyncio.gather(*jobs)
        self.out.close()


def sock_inodes(pid):
    """The socket inodes among process @pid's fds (empty if it is gone)."""
    found = set()
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return found
    for fd in fds:
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            found.add(int(link[8:-1]))
    return found


def channels(vmns, toe_pid, nopen):
    """soak-load.py channels: see the module's doc."""
    import subprocess
    toe = sock_inodes(int(toe_pid))
    peer = {}  # a guest-side UNIX socket's inode -> its peer's
    ss = subprocess.run(["ip", "netns", "exec", vmns, "ss", "-xHn"], capture_output=True, text=True,
                        check=True).stdout
    for line in ss.splitlines():
        f = line.split()
        # Netid State Recv-Q Send-Q Local Port Peer Port
        if len(f) >= 8 and f[5].isdigit() and f[7].isdigit():
            peer[int(f[5])] = int(f[7])
    pids = subprocess.run(["ip", "netns", "pids", vmns], capture_output=True, text=True,
                          check=True).stdout.split()
    held, detached = set(), []
    for p in map(int, pids):
        mine = {peer[i] for i in sock_inodes(p) if peer.get(i) in toe}
        if mine:
            held |= mine
        else:
            try:
                name = open("/proc/%d/cmdline" % p, "rb").read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue  # gone meanwhile
            # "nginx: master process nginx -c ...": its first words
            detached.append("%s[%d]" % ("_".join(name.split()[:3]) or "?", p))
    print("toe.channels_held %d" % len(held))
    print("toe.channels_orphaned %d" % max(0, int(nopen) - len(held)))
    print("guest.detached %s" % (",".join(sorted(detached)) or "-"))


def region(counters):
    """soak-load.py region: see the module's doc."""
    import json
    j, c = json.load(sys.stdin), read_kv(counters)
    chans = j["channels"]
    rest = int(c["toe.bufs"]) - int(c["toe.bufs_free"]) - int(c["toe.bufs_host"])
    rx = sum(x["rx"] for x in chans)
    print("region.tx_done %d" % sum(x["tx"] + x["done"] for x in chans))
    print("region.rx %d" % rx)
    print("region.unaccounted %d" % (rest - sum(x["free"] + x["tx"] + x["rx"] + x["done"] for x in chans)))
    # each channel holds its grant (on its FREE ring or in its process's
    # stash) and what waits on its RX ring: per channel, the rest is the
    # grant as long as nothing is lost
    print("region.held_per_channel %.2f" % ((rest - rx) / max(1, int(c["toe.channels_open"]))))


def read_kv(path):
    kv = {}
    for line in open(path):
        k, _, v = line.strip().partition(" ")
        if k:
            kv[k] = v
    return kv


# Counters that are not leaks by themselves (INFO), and those where only
# growth is one (GROW: fds); every other counter must come back to where it
# was.  soak.sh's header says why, per resource.
INFO = ("toe.channels_open", "toe.channels_held", "toe.bufs_free", "region.rx", "region.unaccounted",
        "guest.detached", "threads.guest", "threads.nginx_master", "threads.nginx_workers", "threads.echo")
GROW = ("fds.",)


def report(recs, events, access, before, after, checks):
    rows = [l.rstrip("\n").split("\t") for l in open(recs) if l.strip()]
    evs = []
    for line in open(events):
        kind, t0, frm, t1, detail = (line.rstrip("\n").split(" ", 4) + [""])[:5]
        evs.append((kind, float(t0), float(frm), None if t1 == "-" else float(t1), detail))
    kills = [(k, t0, t1 if t1 is not None else float("inf")) for k, t0, _, t1, _ in evs if k in KILLS]

    def excused(r, kinds=KILLS):
        """A kill's own: its connection existed before the service was back,
        and it was under way between the kill and shortly after recovery
        (a keep-alive worker finds its broken connection with its next
        request, PAUSE later)."""
        conn_t, start, end = float(r[1]), float(r[2]), float(r[3])
        return any(k in kinds and conn_t <= t1 and end >= t0 and start <= t1 + 0.5 for k, t0, t1 in kills)

    clean = [r for r in rows if not r[0].startswith("attack-")]
    atk = [r for r in rows if r[0].startswith("attack-")]
    failed = [r for r in clean if r[4] == "fail"]
    outside = [r for r in failed if not excused(r)]
    wrong = [r for r in clean if r[4] == "wrong"]
    arrived = set(re.findall(r"soakatk\d+", open(access, errors="replace").read()))
    through = [r for r in atk if r[4] == "through" or r[5].split(" ")[0] in arrived]
    b, a = read_kv(before), read_kv(after)

    def leaked(k):
        if k in INFO:
            return False
        if k not in a or k not in b:
            return True
        if k.startswith(GROW):
            return int(a[k]) > int(b[k])
        if k.startswith("eventfds."):	# the runtime's pool: a wake-up fd per thread at most
            return int(a[k]) - int(b[k]) > int(a.get("threads." + k.split(".", 1)[1], 0))
        return a[k] != b[k]
    leaks = [(k, b.get(k, "missing"), a.get(k, "missing")) for k in sorted(set(a) | set(b)) if leaked(k)]
    chk = [l.rstrip("\n").split(" ", 2) + [""] for l in open(checks) if l.strip()]
    aims = []

    print("== make soak: %d requests over %.0f s, %d faults" % (
        len(rows), max((float(r[3]) for r in rows), default=0) - min((float(r[2]) for r in rows), default=0),
        len(evs)))
    print("%-12s %8s %8s %8s %8s" % ("load", "ok", "failed", "wrong", "excused"))
    for kind in sorted({r[0] for r in clean}):
        rs = [r for r in clean if r[0] == kind]
        f = [r for r in rs if r[4] == "fail"]
        print("%-12s %8d %8d %8d %8d" % (kind, sum(r[4] == "ok" for r in rs), len(f),
                                        sum(r[4] == "wrong" for r in rs),
                                        sum(excused(r) for r in f)))
    print("%-12s %8s %8s %8s %8s" % ("attacks", "denied", "through", "undeliv", ""))
    for kind in sorted({r[0] for r in atk}):
        rs = [r for r in atk if r[0] == kind]
        print("%-12s %8d %8d %8d" % (kind[7:], sum(r[4] == "denied" for r in rs),
                                     sum(r in through for r in rs), sum(r[4] == "undelivered" for r in rs)))
    print("%-12s %6s %10s %10s %6s %8s" % ("fault", "count", "median s", "max s", "lost", "its fails"))
    for kind in sorted({e[0] for e in evs}):
        es = [e for e in evs if e[0] == kind]
        rec = [e[3] - e[2] for e in es if e[3] is not None]
        lost = len(es) - len(rec)
        print("%-12s %6d %10.2f %10.2f %6d %8s" % (kind, len(es), statistics.median(rec) if rec else float("nan"),
                                                    max(rec) if rec else float("nan"), lost,
                                                    sum(excused(r, (kind,)) for r in failed) if kind in KILLS else "-"))
        if kind in KILLS and (lost or max(rec) >= RECOVERY_AIM):
            aims.append("recovery after %s kills: %s, %d never" % (
                kind, "max %.2f s" % max(rec) if rec else "none recovered", lost))
    for k in KILLS:
        if not any(e[0] == k for e in evs):
            print("%-12s %6d" % (k, 0))
    print("counters (before -> after; info: %s; fds: growth only): %s" % (
        " ".join(INFO), "no leak (%d)" % len(b) if not leaks else ", ".join("%s %s -> %s" % l for l in leaks)))
    for k in sorted(set(a) | set(b)):
        print("  %-40s %s -> %s%s" % (k, b.get(k, "missing"), a.get(k, "missing"),
                                      "  LEAK" if leaked(k) else "  (info)" if k in INFO else ""))
    for name, res, detail in (c[:3] for c in chk):
        print("check %s: %s %s" % (name, res, detail))
        if res != "ok":
            aims.append("check %s: %s" % (name, detail))
    for what, rs in (("clean requests failed outside a kill's own connections", outside),
                     ("requests answered wrongly", wrong), ("attacks through", through)):
        print("%s: %d%s" % (what, len(rs), "".join("\n  " + " ".join(r) for r in rs[:5])))
        if rs:
            aims.append("%s: %d" % (what, len(rs)))
    if leaks:
        aims.append("leaks: %s" % ", ".join(k for k, _, _ in leaks))
    print("aims missed: %s" % ("none" if not aims else "; ".join(aims)))
    return 1 if aims else 0


def main():
    a = sys.argv[1:]
    if a[:1] == ["load"] and len(a) == 5:
        asyncio.run(Load(a[1], a[2], float(a[3]), a[4]).run())
    elif a[:1] == ["channels"] and len(a) == 4:
        channels(*a[1:])
    elif a[:1] == ["region"] and len(a) == 2:
        region(a[1])
    elif a[:1] == ["report"] and len(a) == 7:
        sys.exit(report(*a[1:]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
