#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Samples inside the IDS/WAF engines by call chain: reads `perf script
-F comm,pid,tid,ip,sym,dso` of a `perf record -g` (eval/run.sh) on stdin
and prints, per process name, its samples and how many of them ran on
behalf of an engine: a sample counts as the engine's when any frame of
its stack is in an engine library (ENGINE_DSOS: Hyperscan, PCRE/PCRE2,
libmodsecurity) or in JIT code (PCRE2's; the JIT of wrk, LuaJIT, is
left out).  perf names anonymous executable memory "[JIT] tid N",
"jitted-N-M.so" (a jitdump) or, on Debian 12's perf 6.1 with no map
file written, "/tmp/perf-PID.map": a JIT stack ends there (no unwind
information), so without that last name PCRE2's JIT samples counted as
outside the engines.  The leaf library alone (eval/report.py's first split) puts
ModSecurity's malloc, free and std::string work in libc and libstdc++,
outside the engine, though it is the same in every configuration that
runs ModSecurity.  The profile needs DWARF call chains (`perf record
--call-graph dwarf`, as eval/run.sh takes it): Debian's libc, libstdc++
and libmodsecurity are built without frame pointers, and a `-g` stack
from malloc loses its caller (half of a WAF thread's libc samples then
show no engine frame).  A stack cut short still makes this a lower
bound.

    perf script -i DATA -F comm,pid,tid,ip,sym,dso | eval/ev_engines.py [PIDS]

PIDS: a comma-separated list of process ids, the only ones counted.
Output: one line per process name, tab-separated: comm, samples,
engine samples.
"""
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ev_threads import samples  # noqa: E402

ENGINE_DSOS = ("libhs.", "libpcre", "libmodsecurity.")


def is_jit(name):
    """Is NAME (a frame's DSO, base name) perf's name for JIT code?"""
    return (name.startswith("[JIT]") or name.startswith("jitted-") or
            (name.startswith("perf-") and name.endswith(".map")))


def is_engine(comm, frames):
    """Does a sample of COMM with FRAMES [(symbol, dso), ...] run engine code?"""
    for _, dso in frames:
        name = os.path.basename(dso.strip("()"))
        if name.startswith(ENGINE_DSOS):
            return True
        if not comm.startswith("wrk") and is_jit(name):
            return True
    return False


def main():
    if len(sys.argv) > 2:
        print("usage: perf script -F comm,pid,tid,ip,sym,dso | ev_engines.py [PIDS]",
              file=sys.stderr)
        sys.exit(2)
    pids = set(sys.argv[1].split(",")) if len(sys.argv) > 1 else None
    total, engine = Counter(), Counter()
    for comm, pid, _, frames in samples(sys.stdin):
        if pids is not None and pid not in pids:
            continue
        total[comm] += 1
        if is_engine(comm, frames):
            engine[comm] += 1
    for comm in sorted(total):
        print("%s\t%d\t%d" % (comm, total[comm], engine[comm]))


if __name__ == "__main__":
    main()
