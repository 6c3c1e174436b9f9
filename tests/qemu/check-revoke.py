#!/usr/bin/env python3
"""Drives a patched QEMU through QMP and checks the ivshmem "revoked" property.

    check-revoke.py [--only CHECK] QEMU_ENV_FILE WORKDIR [GUEST_ELF]

QEMU_ENV_FILE is the env file build-qemu.sh writes (QEMU=...).

Two checks, each against its own QEMU process:

qtest  The qtest accelerator stands in for the guest: BAR 2 of an
       ivshmem-plain device is placed by hand through the PCI configuration
       ports, then read and written through the qtest protocol, while the host
       revokes and re-grants through QMP (qom-set).  Revoked, the guest reads
       all ones and its writes do not reach the region file; re-granted, it
       reads what the host wrote meanwhile.  The trace events show the
       transitions and the accesses made while revoked.

flat   A machine that boots SeaBIOS, under KVM when /dev/kvm can be opened,
       else TCG: after the firmware has placed BAR 2, the flat view of the
       guest's memory (from which KVM's memory slots are made) must hold the
       shared RAM (the backend "mb0") at the BAR, after revocation only the
       trapping I/O region, and the RAM again after the re-grant.  HMP's xp reads the
       guest-physical address as the guest's address space resolves it.
guests Two guests running GUEST_ELF (bar2-probe-guest.c) share one region:
       each keeps reading the region's first word, reporting changes on its
       debug console, and writing a heartbeat.  Revoking guest A: A reads
       all ones within a second and its heartbeat stops reaching the region,
       while B keeps reading the host's updates and writing; re-granted, A
       sees the region as it is now and its heartbeat resumes.

unplug An ivshmem-doorbell device served by QEMU's ivshmem-server (from the
       same build, bin/ivshmem-server), read through BAR 2 (the server's
       memory), revoked (all ones), then unplugged with
       device_del and the guest's ACPI eject played through qtest: the
       device must go (DEVICE_DELETED; BAR 2's regions must not keep it
       alive) and QEMU must not report failing to munmap the shared memory
       (the 7.2 bug patch 1 fixes).

KVM is used when a guest actually runs under it (it may exist and still not
work, as in nested setups); else TCG, and the output says so.
Exit status 0 when all pass, 1 on a failed check.
"""
import json
import os
import re
import shlex
import socket
import struct
import subprocess
import sys
import time

REGION_SIZE = 1 << 20
BAR2_ADDR = 0xE0000000
DEVFN_SLOT = 4


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def read_env(path):
    env = {}
    for line in open(path):
        k, _, v = line.strip().partition("=")
        parts = shlex.split(v)
        env[k] = parts[0] if parts else ""
    return env


class Line:
    """Line-oriented reader over a connected socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def readline(self, deadline):
        while b"\n" not in self.buf:
            self.sock.settimeout(max(0.1, deadline - time.time()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                fail("timed out waiting for QEMU")
            if not data:
                fail("QEMU closed the connection")
            self.buf += data
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()


class Qemu:
    def __init__(self, env, workdir, name, args, qtest):
        self.workdir = workdir
        qmp_path = os.path.join(workdir, name + ".qmp")
        listeners = []
        qmp_l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        qmp_l.bind(qmp_path)
        qmp_l.listen(1)
        listeners.append(qmp_l)
        cmd = [env["QEMU"]]
        cmd += ["-nodefaults", "-display", "none", "-machine", "pc",
                "-chardev", "socket,id=qmp,path=" + qmp_path,
                "-mon", "chardev=qmp,mode=control"]
        if qtest:
            qt_path = os.path.join(workdir, name + ".qtest")
            qt_l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            qt_l.bind(qt_path)
            qt_l.listen(1)
            listeners.append(qt_l)
            cmd += ["-accel", "qtest", "-qtest", "unix:" + qt_path]
        cmd += args
        self.log = open(os.path.join(workdir, name + ".log"), "w")
        print("+ " + " ".join(cmd), flush=True)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        deadline = time.time() + 30
        self.qmp = Line(self.accept(qmp_l, deadline))
        self.qt = Line(self.accept(qt_l, deadline)) if qtest else None
        for l in listeners:
            l.close()
        greeting = json.loads(self.qmp.readline(deadline))
        if "QMP" not in greeting:
            fail("no QMP greeting")
        self.cmd("qmp_capabilities")

    def accept(self, listener, deadline):
        listener.settimeout(1)
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.log.flush()
                fail("QEMU exited with %d: %s" % (self.proc.returncode,
                     open(self.log.name).read()[-2000:]))
            try:
                conn, _ = listener.accept()
                return conn
            except socket.timeout:
                continue
        fail("QEMU did not connect")

    def cmd(self, name, **args):
        """Runs a QMP command; returns (return value, error class or None)."""
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.qmp.sock.sendall((json.dumps(msg) + "\n").encode())
        deadline = time.time() + 30
        while True:
            rsp = json.loads(self.qmp.readline(deadline))
            if "return" in rsp:
                return rsp["return"], None
            if "error" in rsp:
                return None, rsp["error"]["class"] + ": " + rsp["error"]["desc"]

    def wait_event(self, name, secs):
        deadline = time.time() + secs
        while True:
            msg = json.loads(self.qmp.readline(deadline))
            if msg.get("event") == name:
                return msg

    def ok(self, name, **args):
        ret, err = self.cmd(name, **args)
        if err:
            fail("%s: %s" % (name, err))
        return ret

    def qtest(self, line):
        self.qt.sock.sendall((line + "\n").encode())
        deadline = time.time() + 30
        while True:
            rsp = self.qt.readline(deadline)
            if rsp.startswith("OK") or rsp.startswith("FAIL") or rsp.startswith("ERR"):
                break
            # asynchronous "IRQ ..." lines are skipped
        if not rsp.startswith("OK"):
            fail("qtest %r: %s" % (line, rsp))
        return rsp[2:].strip()

    def quit(self):
        try:
            self.cmd("quit")
        except SystemExit:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def cfg_addr(reg):
    return 0x80000000 | (DEVFN_SLOT << 11) | reg


def qword(fd, off):
    """The region file's qword at off, read afresh (no buffering)."""
    return struct.unpack("<Q", os.pread(fd, 8, off))[0]


def check_qtest(env, workdir, readonly, procs):
    tag = "ro" if readonly else "rw"
    path = os.path.join(workdir, "region-" + tag)
    with open(path, "wb") as f:
        f.write(bytes([0x5A]) * REGION_SIZE)
    q = Qemu(env, workdir, "qtest-" + tag, [
        "-object", "memory-backend-file,id=mb0,size=1M,share=on,mem-path=%s%s"
                   % (path, ",readonly=on" if readonly else ""),
        "-device", "ivshmem-plain,id=iv0,memdev=mb0,addr=0x%x" % DEVFN_SLOT,
        "-trace", "ivshmem_*"], qtest=True)
    procs.append(q)
    # the device is at 00:04.0: place BAR 2 (64-bit) and enable decoding
    q.qtest("outl 0xcf8 0x%x" % cfg_addr(0))
    ids = int(q.qtest("inl 0xcfc"), 16)
    if ids != 0x11101AF4:
        fail("no ivshmem at 00:04.0 (id %#x)" % ids)
    q.qtest("outl 0xcf8 0x%x" % cfg_addr(0x18))
    q.qtest("outl 0xcfc 0x%x" % BAR2_ADDR)
    q.qtest("outl 0xcf8 0x%x" % cfg_addr(0x1C))
    q.qtest("outl 0xcfc 0x0")
    q.qtest("outl 0xcf8 0x%x" % cfg_addr(0x04))
    q.qtest("outw 0xcfc 0x2")

    ends = [BAR2_ADDR, BAR2_ADDR + REGION_SIZE - 8]
    region = os.open(path, os.O_RDONLY)
    ones = 0xFFFFFFFFFFFFFFFF

    def guest_reads(expect, what):
        for a in ends:
            got = int(q.qtest("readq 0x%x" % a), 16)
            if got != expect:
                fail("%s %s: guest read %#x at %#x, expected %#x" % (tag, what, got, a, expect))
        got = int(q.qtest("readb 0x%x" % (BAR2_ADDR + 3)), 16)
        if got != expect & 0xFF:
            fail("%s %s: guest byte read %#x" % (tag, what, got))

    def host_sees(expect, what):
        for a in ends:
            got = qword(region, a - BAR2_ADDR)
            if got != expect:
                fail("%s %s: region holds %#x at %#x, expected %#x" % (tag, what, got, a, expect))

    pat = 0x5A5A5A5A5A5A5A5A
    guest_reads(pat, "granted")
    for a in ends:
        q.qtest("writeq 0x%x 0x1111111111111111" % a)
    if readonly:
        host_sees(pat, "read-only write")
    else:
        host_sees(0x1111111111111111, "granted write")
        pat = 0x1111111111111111

    q.ok("qom-set", path="/machine/peripheral/iv0", property="revoked", value=True)
    if q.ok("qom-get", path="/machine/peripheral/iv0", property="revoked") is not True:
        fail("qom-get revoked is not true after qom-set")
    guest_reads(ones, "revoked")
    for a in ends:
        q.qtest("writeq 0x%x 0x2222222222222222" % a)
    host_sees(pat, "revoked write")
    with open(path, "r+b") as f:
        f.write(bytes([0x66]) * REGION_SIZE)
    guest_reads(ones, "revoked after host write")

    q.ok("qom-set", path="/machine/peripheral/iv0", property="revoked", value=False)
    guest_reads(0x6666666666666666, "re-granted")
    for a in ends:
        q.qtest("writeq 0x%x 0x3333333333333333" % a)
    host_sees(0x6666666666666666 if readonly else 0x3333333333333333,
              "re-granted write")

    # a bad value is refused and changes nothing
    _, err = q.cmd("qom-set", path="/machine/peripheral/iv0", property="revoked",
                   value="yes")
    if err is None:
        fail("qom-set revoked=\"yes\" was accepted")
    guest_reads(0x6666666666666666 if readonly else 0x3333333333333333,
                "after refused qom-set")
    q.quit()
    os.close(region)
    # the trace events: two revocations, two grants, accesses while revoked
    trace = open(q.log.name).read()
    if (len(re.findall(r"ivshmem_set_revoked .*revoked 1", trace)) != 1 or
            len(re.findall(r"ivshmem_set_revoked .*revoked 0", trace)) != 1 or
            not re.search(r"ivshmem_revoked_access .*write 1", trace) or
            not re.search(r"ivshmem_revoked_access .*write 0", trace)):
        fail("%s: trace events missing: %s" % (tag, trace[-1500:]))
    print("ok: qtest %s: revoke, access, re-grant" % tag, flush=True)


def check_unplug(env, workdir, procs):
    server_bin = os.path.join(os.path.dirname(env["QEMU"]), "ivshmem-server")
    sock = os.path.join(workdir, "ivshmem.sock")
    shm = "tochain-800-%d" % os.getpid()
    server = subprocess.Popen([server_bin, "-F", "-S", sock, "-M", shm, "-l", "1M",
                               "-n", "1"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while not os.path.exists(sock) and time.time() < deadline:
            time.sleep(0.05)
        q = Qemu(env, workdir, "unplug", [
            "-chardev", "socket,id=ivs,path=" + sock,
            "-device", "ivshmem-doorbell,id=iv0,chardev=ivs,vectors=1,addr=0x%x"
                       % DEVFN_SLOT], qtest=True)
        procs.append(q)
        # the server's memory, seen through BAR 2, then revoked
        with open("/dev/shm/" + shm, "r+b") as f:
            f.write(struct.pack("<Q", 0x0F1E2D3C4B5A6978))
        q.qtest("outl 0xcf8 0x%x" % cfg_addr(0x18))
        q.qtest("outl 0xcfc 0x%x" % BAR2_ADDR)
        q.qtest("outl 0xcf8 0x%x" % cfg_addr(0x1C))
        q.qtest("outl 0xcfc 0x0")
        q.qtest("outl 0xcf8 0x%x" % cfg_addr(0x04))
        q.qtest("outw 0xcfc 0x2")
        got = int(q.qtest("readq 0x%x" % BAR2_ADDR), 16)
        if got != 0x0F1E2D3C4B5A6978:
            fail("doorbell: guest read %#x, not the server's memory" % got)
        q.ok("qom-set", path="/machine/peripheral/iv0", property="revoked", value=True)
        got = int(q.qtest("readq 0x%x" % BAR2_ADDR), 16)
        if got != 0xFFFFFFFFFFFFFFFF:
            fail("doorbell: revoked guest read %#x" % got)
        q.ok("device_del", id="iv0")
        # the guest's ejection, through the ACPI PCI hotplug register
        q.qtest("outl 0xae08 0x%x" % (1 << DEVFN_SLOT))
        q.wait_event("DEVICE_DELETED", 10)
        q.quit()
        log = open(q.log.name).read()
        if "munmap" in log:
            fail("unplug: QEMU said: " + log.strip())
    finally:
        server.terminate()
        server.wait()
        try:
            os.unlink("/dev/shm/" + shm)
        except FileNotFoundError:
            pass
    print("ok: ivshmem-doorbell revoked, then unplugged: device deleted, no munmap error",
          flush=True)


def bar2_of(q):
    for bus in q.ok("query-pci"):
        for dev in bus["devices"]:
            if dev.get("qdev_id") == "iv0":
                for r in dev["regions"]:
                    if r["bar"] == 2:
                        return r["address"]
    return None


def flat_owner(q, addr):
    """Name of the region the flat view of system memory has at addr."""
    out = q.ok("human-monitor-command", **{"command-line": "info mtree -f"})
    view = out.split("FlatView #")
    for v in view:
        if "\n AS \"memory\"" not in v and "AS \"memory\"," not in v:
            continue
        for line in v.splitlines():
            m = re.match(r"\s*([0-9a-f]+)-([0-9a-f]+) \(prio \S+, \S+\): (\S+)", line)
            if m and int(m.group(1), 16) <= addr <= int(m.group(2), 16):
                return m.group(3)
    return None


def accel_args(accel):
    return ["-accel", "kvm", "-cpu", "host"] if accel == "kvm" else ["-accel", "tcg"]


def wait_for(path, text, secs, proc=None):
    """Seconds until text appears in the file at path, or None."""
    start = time.time()
    while time.time() - start < secs:
        try:
            if text in open(path, errors="replace").read():
                return time.time() - start
        except FileNotFoundError:
            pass
        if proc is not None and proc.poll() is not None:
            return None
        time.sleep(0.02)
    return None


def pick_accel(env, workdir, guest_elf):
    """kvm if the probe guest runs under KVM within 15 s, else tcg."""
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
    except OSError:
        print("note: /dev/kvm cannot be opened, using TCG", flush=True)
        return "tcg"
    if not guest_elf:
        return "kvm"
    region = os.path.join(workdir, "region-probe")
    with open(region, "wb") as f:
        f.truncate(REGION_SIZE)
    dbg = os.path.join(workdir, "probe.dbg")
    cmd = [env["QEMU"]] + [
        "-nodefaults", "-display", "none", "-m", "64", "-kernel", guest_elf,
        "-debugcon", "file:" + dbg,
        "-object", "memory-backend-file,id=mb0,size=1M,share=on,mem-path=" + region,
        "-device", "ivshmem-plain,memdev=mb0"] + accel_args("kvm")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
    try:
        ok = wait_for(dbg, "R ", 15, p) is not None
    finally:
        p.kill()
        p.wait()
    if not ok:
        print("note: /dev/kvm is there but a guest does not run under it "
              "(nested virtualization?), using TCG", flush=True)
    return "kvm" if ok else "tcg"


def check_guests(env, workdir, guest_elf, accel, procs):
    path = os.path.join(workdir, "region-guests")
    with open(path, "wb") as f:
        f.write(struct.pack("<I", 0x11111111))
        f.truncate(REGION_SIZE)
    region = os.open(path, os.O_RDWR)

    def word(off):
        return struct.unpack("<I", os.pread(region, 4, off))[0]

    def set_word(off, v):
        os.pwrite(region, struct.pack("<I", v), off)

    guests = {}
    for name, slot in (("A", 4), ("B", 5)):
        dbg = os.path.join(workdir, "guest-%s.dbg" % name)
        q = Qemu(env, workdir, "guest-" + name, accel_args(accel) + [
            "-m", "64", "-kernel", guest_elf, "-debugcon", "file:" + dbg,
            "-object", "memory-backend-file,id=mb0,size=1M,share=on,mem-path=" + path,
            "-device", "ivshmem-plain,id=iv0,memdev=mb0,addr=0x%x" % slot], qtest=False)
        procs.append(q)
        guests[name] = (q, dbg, 4 * slot)
    for name, (q, dbg, _) in guests.items():
        if wait_for(dbg, "R 11111111", 60, q.proc) is None:
            fail("guest %s did not read the region: %r" % (name, open(dbg).read()))

    def beating(name, secs=0.5):
        off = guests[name][2]
        a = word(off)
        time.sleep(secs)
        return word(off) != a

    for name in guests:
        if not beating(name):
            fail("guest %s's writes do not reach the region" % name)

    qa, dbga, _ = guests["A"]
    t0 = time.time()
    qa.ok("qom-set", path="/machine/peripheral/iv0", property="revoked", value=True)
    t_cmd = time.time() - t0
    t_seen = wait_for(dbga, "R ffffffff", 10, qa.proc)
    if t_seen is None:
        fail("revoked guest A does not read all ones")
    if beating("A"):
        fail("revoked guest A's writes still reach the region")
    if not beating("B"):
        fail("guest B's writes stopped when A was revoked")
    set_word(0, 0x22222222)
    if wait_for(guests["B"][1], "R 22222222", 10, guests["B"][0].proc) is None:
        fail("guest B does not see the host's update while A is revoked")
    time.sleep(0.5)
    if "R 22222222" in open(dbga).read():
        fail("revoked guest A read the host's update")

    qa.ok("qom-set", path="/machine/peripheral/iv0", property="revoked", value=False)
    if wait_for(dbga, "R 22222222", 10, qa.proc) is None:
        fail("re-granted guest A does not see the region")
    if not beating("A"):
        fail("re-granted guest A's writes do not reach the region")
    for name, (q, _, _) in guests.items():
        q.quit()
    os.close(region)
    print("ok: %s guests: revoked A read all ones %.0f ms after qom-set returned "
          "(qom-set took %.1f ms), its writes stopped; B kept working; A re-granted"
          % (accel, t_seen * 1000, t_cmd * 1000), flush=True)


def check_flat(env, workdir, accel, procs):
    path = os.path.join(workdir, "region-flat")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", 0x0123456789ABCDEF) * (REGION_SIZE // 8))
    q = Qemu(env, workdir, "flat-" + accel, [
        "-m", "64"] + accel_args(accel) + [
        "-object", "memory-backend-file,id=mb0,size=1M,share=on,mem-path=" + path,
        "-device", "ivshmem-plain,id=iv0,memdev=mb0"], qtest=False)
    procs.append(q)
    deadline = time.time() + 30
    addr = None
    while time.time() < deadline:
        addr = bar2_of(q)
        if addr is not None and 0 < addr < (1 << 52):   # -1: unassigned
            break
        time.sleep(0.2)
    else:
        fail("firmware did not place BAR 2")

    def xp():
        out = q.ok("human-monitor-command", **{"command-line": "xp /1gx 0x%x" % addr})
        return int(out.split(":")[1].split()[0], 16)

    def expect(owner, value, what):
        got = flat_owner(q, addr)
        if got != owner:
            fail("%s %s: flat view has %s at BAR 2 (%#x), expected %s"
                 % (accel, what, got, addr, owner))
        v = xp()
        if v != value:
            fail("%s %s: xp read %#x, expected %#x" % (accel, what, v, value))

    expect("mb0", 0x0123456789ABCDEF, "granted")   # the backend, through the alias
    q.ok("qom-set", path="/machine/peripheral/iv0", property="revoked", value=True)
    expect("ivshmem.bar2-revoked", 0xFFFFFFFFFFFFFFFF, "revoked")
    q.ok("qom-set", path="/machine/peripheral/iv0", property="revoked", value=False)
    expect("mb0", 0x0123456789ABCDEF, "re-granted")
    if q.ok("query-status")["status"] != "running":
        fail("guest not running")
    q.quit()
    print("ok: %s guest: flat view and reads follow revoke/re-grant (BAR 2 at %#x)"
          % (accel, addr), flush=True)


def main():
    args = sys.argv[1:]
    only = None
    if args[:1] == ["--only"]:
        only, args = args[1], args[2:]
    env = read_env(args[0])
    workdir = args[1]
    guest_elf = args[2] if len(args) > 2 else None
    procs = []
    try:
        if only in (None, "qtest"):
            check_qtest(env, workdir, False, procs)
            check_qtest(env, workdir, True, procs)
        if only in (None, "unplug"):
            check_unplug(env, workdir, procs)
        if only in (None, "flat", "guests"):
            accel = pick_accel(env, workdir, guest_elf)
            if only in (None, "flat"):
                check_flat(env, workdir, accel, procs)
            if only in (None, "guests"):
                if guest_elf:
                    check_guests(env, workdir, guest_elf, accel, procs)
                else:
                    print("note: no probe guest given, guest check not run", flush=True)
    finally:
        for p in procs:
            p.kill()


if __name__ == "__main__":
    main()
