#!/usr/bin/env python3
"""Report of the SLA benchmark (bench/92_sla_real.sh writes the input).

    eval/ev_sla.py DIR JSON PNG

DIR/runs.tsv has one line per run and chain (mode, load, chain, sla,
offered, achieved, p99_ms, then the generator's counters).  Writes JSON:

    {"runs": [{"mode": "sync"|"cfs", "load": "light"|"medium"|"heavy"|"closed",
               "jain": J, "chains": [{"chain": NAME, "sla": S, "offered": O,
                                      "achieved": A, "p99_ms": P}]}]}

(achieved: requests/s the chain's receiver completed; J: Jain's fairness
index over the receivers' achieved/SLA), prints a table and draws PNG
with gnuplot (one panel per load: SLA and what each mode achieved, per
chain, as the paper's throughput figures).
"""
import csv
import json
import os
import shutil
import sys
from collections import OrderedDict

from report import gnuplot  # eval/report.py, beside this file


def jain(xs):
    s2 = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * s2) if xs and s2 > 0 else 0.0


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    d, jpath, ppath = sys.argv[1:]
    with open(os.path.join(d, "runs.tsv"), newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        print("ev_sla: no runs in " + d, file=sys.stderr)
        return 1
    runs = OrderedDict()
    for r in rows:
        runs.setdefault((r["mode"], r["load"]), []).append(r)
    doc = {"runs": []}
    for (mode, load), rs in runs.items():
        chains = [{"chain": r["chain"], "sla": int(r["sla"]),
                   "offered": float(r["offered"]), "achieved": float(r["achieved"]),
                   "p99_ms": float(r["p99_ms"])} for r in rs]
        j = jain([c["achieved"] / c["sla"] for c in chains if c["sla"] > 0])
        doc["runs"].append({"mode": mode, "load": load, "jain": round(j, 4), "chains": chains})
    with open(jpath, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    meta = os.path.join(d, "meta.txt")
    if os.path.exists(meta):
        with open(meta) as f:
            print(f.read().rstrip())
    head = "%-4s  %-6s  %-5s  %6s  %8s  %8s  %6s  %8s  %6s  %s" % (
        "mode", "load", "chain", "SLA/s", "offered", "achieved", "% SLA", "p99 ms",
        "Jain", "generator: errors unsent unanswered")
    print(head)
    for run, (key, rs) in zip(doc["runs"], runs.items()):
        for c, r in zip(run["chains"], rs):
            print("%-4s  %-6s  %-5s  %6d  %8.1f  %8.1f  %5.0f%%  %8.1f  %6.3f  %s %s %s" % (
                run["mode"], run["load"], c["chain"], c["sla"], c["offered"], c["achieved"],
                100 * c["achieved"] / c["sla"] if c["sla"] else 0, c["p99_ms"], run["jain"],
                r["errors"], r["unsent"] or "-", r["unanswered"] or "-"))
    cpu_table(d)
    print("json: " + jpath)
    if shutil.which("gnuplot"):
        plot(d, doc, ppath)
    return 0


def cpu_table(d):
    """DIR/cpu.tsv (mode, load, role, cpu_ns, requests, wall_ns): CPU-ms
    per request each role used over a run (requests: all the receivers
    completed), tochain-sched's share of the host, and the TOEs' CPU per
    request under sync over cfs."""
    path = os.path.join(d, "cpu.tsv")
    if not os.path.exists(path):
        return
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    runs, roles = OrderedDict(), []
    for r in rows:
        runs.setdefault((r["mode"], r["load"]), {})[r["role"]] = r
        if r["role"] not in roles:
            roles.append(r["role"])
    ncpu = os.cpu_count() or 1
    print()
    print("CPU-ms per request by role over each run (all receivers' requests), "
          "and tochain-sched's CPU as a share of the host (%d CPUs):" % ncpu)
    print("%-4s  %-6s  %8s  " % ("mode", "load", "requests") +
          "  ".join("%9s" % r for r in roles) + "  sched %host")
    toe = {}
    for (mode, load), by in runs.items():
        any_r = next(iter(by.values()))
        n, wall = int(any_r["requests"]), int(any_r["wall_ns"])
        cells = []
        for role in roles:
            ns = int(by[role]["cpu_ns"]) if role in by else 0
            cells.append("%9.3f" % (ns / 1e6 / n) if n else "%9s" % "-")
        if "toe" in by and n:
            toe[(mode, load)] = int(by["toe"]["cpu_ns"]) / 1e6 / n
        sched = int(by["sched"]["cpu_ns"]) if "sched" in by else 0
        print("%-4s  %-6s  %8d  " % (mode, load, n) + "  ".join(cells) +
              "  %10.2f%%" % (100.0 * sched / wall / ncpu if wall else 0))
    for (mode, load), v in toe.items():
        if mode == "sync" and ("cfs", load) in toe and toe[("cfs", load)] > 0:
            print("  TOE CPU per request, sync / cfs, %s: %.2f" % (load, v / toe[("cfs", load)]))


def plot(d, doc, ppath):
    modes = list(OrderedDict.fromkeys(r["mode"] for r in doc["runs"]))
    loads = list(OrderedDict.fromkeys(r["load"] for r in doc["runs"]))
    by = {(r["mode"], r["load"]): r for r in doc["runs"]}
    script = ["set terminal pngcairo noenhanced size %d,420 font ',10'" % (330 * len(loads)),
              "set output '%s'" % ppath,
              "set multiplot layout 1,%d title 'Requests/s each receiver got, "
              "per chain (SLA beside; heavy: offered above the host)'" % len(loads),
              "set style data histogram", "set style histogram clustered gap 1",
              "set style fill solid 0.7 border -1", "set grid ytics",
              "set yrange [0:*]", "set key top left"]
    for load in loads:
        dat = os.path.join(d, "plot-%s.dat" % load)
        chains = []
        for m in modes:
            if (m, load) in by:
                chains = [c["chain"] for c in by[(m, load)]["chains"]]
                break
        with open(dat, "w") as f:
            f.write("# chain sla " + " ".join(modes) + "\n")
            for i, ch in enumerate(chains):
                sla = 0
                vals = []
                for m in modes:
                    r = by.get((m, load))
                    c = r["chains"][i] if r and i < len(r["chains"]) else None
                    sla = c["sla"] if c else sla
                    vals.append("%.1f" % c["achieved"] if c else "0")
                f.write("%s %d %s\n" % (ch, sla, " ".join(vals)))
        cols = ["'%s' using 2:xtic(1) title 'SLA'" % dat]
        cols += ["'' using %d title '%s'" % (3 + i, m) for i, m in enumerate(modes)]
        script += ["set title '%s'" % load, "set ylabel 'requests/s'", "plot " + ", ".join(cols)]
    script.append("unset multiplot")
    if gnuplot(os.path.join(d, "plot.gp"), script, "ev_sla"):
        print("plot: " + ppath)


if __name__ == "__main__":
    sys.exit(main())
