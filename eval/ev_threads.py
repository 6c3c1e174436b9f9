#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU per request by role and, within a role, by system call: reads
`perf script -F comm,pid,tid,ip,sym,dso` of a system-wide `perf record
-e cpu-clock -F 999 -a -g` (docs/EVALUATION.md, "Issue 14: the chain's
plumbing, per request") on stdin.

    perf script -i DATA -F comm,pid,tid,ip,sym,dso | eval/ev_threads.py REQUESTS [TOP [PIDS]]

PIDS: a comma-separated list of process ids, the only ones counted (the
configuration's processes and wrk's: eval/run.sh keeps every
configuration up while it loads one).  TOP: items per role (default 4).

Roles: the TOE's loop (the tochain-toe thread whose id is its pid), its
packet scheduler (the busiest other tochain-toe thread of that process),
other TOE threads, the VNF service threads (svcN), nginx (with the guest
runtime), wrk.  A sample inside a system call is named by the call (the
frame under do_syscall_64) and the kernel symbol it fell on; else by its
symbol.  CPU-ms per request = samples / 999 Hz * 1000 / REQUESTS.
"""
import sys
from collections import Counter, defaultdict

HZ = 999.0


def samples(f):
    """(comm, pid, tid, [(symbol, dso), ...]) per sample, leaf first."""
    head, frames = None, []
    for line in f:
        if not line.strip():
            if head:
                yield head + (frames,)
            head, frames = None, []
            continue
        if not line[0].isspace():
            p = line.split()
            if len(p) < 2 or "/" not in p[1]:
                head = None
                continue
            pid, tid = p[1].split("/", 1)
            head, frames = (p[0], pid, tid), []
            continue
        p = line.split()
        if head and len(p) >= 3:
            # the object in the last parentheses: "(/usr/lib/.../libc.so.6)", "([JIT] tid 42)"
            t = line.rstrip()
            dso = t[t.rfind("(") + 1:-1] if t.endswith(")") else p[-1]
            frames.append((p[1].split("+")[0], dso))
    if head:
        yield head + (frames,)


def what(frames):
    for i, (sym, _) in enumerate(frames):
        if sym == "do_syscall_64" and i > 0:
            call = frames[i - 1][0]
            for pre in ("__x64_sys_", "__do_sys_", "ksys_"):
                call = call.replace(pre, "")
            return "%s: %s" % (call, frames[0][0])
    return frames[0][0] if frames else "?"


def main():
    try:
        if not 2 <= len(sys.argv) <= 4:
            raise ValueError("usage: perf script -F comm,pid,tid,ip,sym,dso | "
                             "ev_threads.py REQUESTS [TOP [PIDS]]")
        reqs = float(sys.argv[1])
        top = int(sys.argv[2]) if len(sys.argv) > 2 else 4
        pids = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None
        if reqs <= 0 or top <= 0:
            raise ValueError("REQUESTS and TOP must be > 0")
    except ValueError as e:
        print("ev_threads.py: %s" % e, file=sys.stderr)
        sys.exit(2)
    per_thread = defaultdict(Counter)   # (comm, pid, tid) -> what -> samples
    for comm, pid, tid, frames in samples(sys.stdin):
        if pids is None or pid in pids:
            per_thread[(comm, pid, tid)][what(frames)] += 1
    # the packet scheduler: the busiest non-main tochain-toe thread per TOE
    psched = {}
    for (comm, pid, tid), c in per_thread.items():
        if comm == "tochain-toe" and tid != pid:
            n = sum(c.values())
            if n > psched.get(pid, (None, 0))[1]:
                psched[pid] = (tid, n)
    roles = defaultdict(Counter)
    for (comm, pid, tid), c in per_thread.items():
        if comm == "tochain-toe":
            role = ("TOE loop" if tid == pid else
                    "TOE packet scheduler" if psched.get(pid, (None,))[0] == tid else
                    "TOE other threads")
        elif comm.startswith("svc"):
            role = "VNF service threads"
        elif comm in ("nginx", "wrk"):
            role = "nginx + guest runtime" if comm == "nginx" else "wrk"
        else:
            continue
        roles[role].update(c)
    for role, c in sorted(roles.items(), key=lambda kv: -sum(kv[1].values())):
        n = sum(c.values())
        print("%-22s %8.4f CPU-ms/req" % (role, n / HZ * 1000 / reqs))
        for w, m in c.most_common(top):
            print("    %8.4f  %5.1f%%  %s" % (m / HZ * 1000 / reqs, 100.0 * m / n, w))


if __name__ == "__main__":
    main()
