#!/usr/bin/env python3
"""CPU time and context switches per role, wherever the threads live.

    ev_proc.py snap ROLES >SNAP        per-process counters now
    ev_proc.py diff ROLES SNAP         per role, what was used since SNAP
    ev_proc.py pids ROLES              the pids of all roles, comma-separated
    ev_proc.py run OUT -- CMD [ARG...] run CMD; write what it and its
                                       descendants used to OUT

ROLES has one line per role: "ROLE PID [PID...]", the processes the
harness started (or attached) for that role.  Every other process
belongs to the role of its nearest listed ancestor (nginx workers to the
server, ...), or to none; a listed pid is its own role even when it is
the child of another role's process (tochaind starts the TOE and the VNFs).

Why not cgroups: tochain-sched moves VNF service threads and the VM's
threads into cgroups of its own, and a cgroup counts only what ran while
the task was in it.  /proc counts a process's time wherever its threads
were: /proc/PID/stat has utime + stime of all its threads, exited ones
included, in clock ticks; /proc/PID/task/TID/schedstat each live
thread's run time in ns.  A process's CPU time over an interval is the
larger of the two deltas (ticks miss what is under one tick, schedstat
misses threads that exited), split into user and kernel time as the
ticks are.  Context switches (voluntary + involuntary) are per thread in
/proc/PID/task/TID/status; threads that exited between two samples are
lost there (the harness's processes keep theirs for the whole run).
A process that exited between two samples loses the time it used since
the first; one that started counts from zero.

Output of diff, one line per role in ROLES's order:
    ROLE CPU_NS SYS_NS CSW  run writes
"CPU_NS SYS_NS CSW" from getrusage(RUSAGE_CHILDREN): every waited-for
descendant of CMD, threads and all (wrk, which lives only for one run).
"""
import json
import os
import resource
import subprocess
import sys

HZ = os.sysconf("SC_CLK_TCK")
NS = 1000000000 // HZ


def read_roles(path):
    roles, pids = [], {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            roles.append(parts[0])
            for p in parts[1:]:
                pids[int(p)] = parts[0]
    return roles, pids


def stat_of(pid):
    """(ppid, starttime, utime, stime) of a process, or None if gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    # comm (field 2) may hold spaces and parentheses: split after its end
    rest = s[s.rindex(")") + 2:].split()
    return int(rest[1]), int(rest[19]), int(rest[11]), int(rest[12])


def threads_of(pid):
    """{tid: [run_ns, csw]}: each thread's CPU time (schedstat, ns) and
    its voluntary + involuntary context switches."""
    th = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return th
    for t in tids:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                run = int(f.read().split()[0])
            n = 0
            with open("/proc/%d/task/%s/status" % (pid, t)) as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches",
                                        "nonvoluntary_ctxt_switches")):
                        n += int(line.split()[1])
            th[t] = [run, n]
        except (OSError, ValueError, IndexError):
            pass
    return th


def snapshot(listed):
    """{pid: [role, starttime, utime, stime, threads]} of the processes
    that belong to a role."""
    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = stat_of(int(d))
            if st:
                procs[int(d)] = st
    snap = {}
    for pid, st in procs.items():
        p, role, hops = pid, None, 0
        while p > 1 and hops < 64:
            if p in listed:
                role = listed[p]
                break
            if p not in procs:
                break
            p, hops = procs[p][0], hops + 1
        if role is not None:
            snap[pid] = [role, st[1], st[2], st[3], threads_of(pid)]
    return snap


def main():
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "snap":
        _, listed = read_roles(a[1])
        json.dump(snapshot(listed), sys.stdout)
        return 0
    if len(a) == 2 and a[0] == "pids":
        _, listed = read_roles(a[1])
        print(",".join(str(p) for p in sorted(snapshot(listed))))
        return 0
    if len(a) == 3 and a[0] == "diff":
        roles, listed = read_roles(a[1])
        with open(a[2]) as f:
            before = {int(k): v for k, v in json.load(f).items()}
        now = snapshot(listed)
        tot = {r: [0, 0, 0] for r in roles}
        for pid, (role, start, ut, st, th) in now.items():
            b = before.get(pid)
            if b is None or b[1] != start:  # born since (or pid reused)
                b = [role, start, 0, 0, {}]
            ticks = (ut - b[2] + st - b[3]) * NS
            run = sum(r - b[4].get(tid, [0, 0])[0] for tid, (r, _) in th.items())
            cpu = max(ticks, run)
            t = tot.setdefault(role, [0, 0, 0])
            t[0] += cpu
            t[1] += cpu * (st - b[3]) // (ut - b[2] + st - b[3]) if ticks > 0 else 0
            t[2] += sum(n - b[4].get(tid, [0, 0])[1] for tid, (_, n) in th.items())
        for r in roles:
            print(r, *tot[r])
        return 0
    if len(a) >= 4 and a[0] == "run" and a[2] == "--":
        rc = subprocess.call(a[3:])
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(a[1], "w") as f:
            f.write("%d %d %d\n" % ((ru.ru_utime + ru.ru_stime) * 1e9,
                                    ru.ru_stime * 1e9, ru.ru_nvcsw + ru.ru_nivcsw))
        return rc
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
