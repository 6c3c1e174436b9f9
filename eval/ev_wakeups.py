#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Who wakes whom, per request: reads `perf script` text of a system-wide
`perf record -e sched:sched_wakeup` (docs/EVALUATION.md, "Who wakes whom")
on stdin and prints the waker -> wakee pairs of the processes named,
per request (REQUESTS: how many the load run answered).

    perf script -i DATA -F comm,pid,tid,trace | eval/ev_wakeups.py REQUESTS [COMM...]

A task is "COMM" when its thread id is its process id (the main thread)
and "COMM/thr" otherwise (the TOE's other threads, its control socket's,
are tochain-toe/thr: its loop also runs the packet scheduler; nginx's and
wrk's threads are told apart the same way).
A wake-up from interrupt context is charged to the task that was running
(the network's softirq runs in the sender's context here: wrk's send
wakes the TOE).  Pairs below 0.05 per request are left out.
"""
import re
import sys
from collections import Counter

WAKEE = re.compile(r"comm=(\S+) pid=(\d+)")
LINE = re.compile(r"^\s*(.+?)\s+(\d+)/(\d+)\s+(.*)$")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: perf script -F comm,pid,tid,trace | ev_wakeups.py REQUESTS [COMM...]")
    reqs = float(sys.argv[1])
    want = set(sys.argv[2:])
    mains = set()   # thread ids seen running as a main thread
    pairs = []
    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, tid, trace = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        w = WAKEE.search(trace)
        if not w:
            continue
        if pid == tid:
            mains.add(tid)
        pairs.append((comm, pid == tid, w.group(1), int(w.group(2))))
    count = Counter()
    for comm, main, wcomm, wtid in pairs:
        if want and comm not in want and wcomm not in want:
            continue
        waker = comm if main else comm + "/thr"
        wakee = wcomm if wtid in mains else wcomm + "/thr"
        count[(waker, wakee)] += 1
    total = 0.0
    print(f"{'waker':<22} {'wakee':<22} wake-ups/req")
    for (a, b), n in count.most_common():
        if n / reqs < 0.05:
            continue
        total += n / reqs
        print(f"{a:<22} {b:<22} {n / reqs:8.2f}")
    print(f"{'total (shown)':<45} {total:8.2f}")


if __name__ == "__main__":
    main()
