#!/usr/bin/env python3
"""Tables and plots of an evaluation run (eval/run.sh writes the inputs).

    eval/report.py DIR [--markdown] [--no-plots]

DIR holds runs.tsv (one line per wrk run), cpu.tsv (one line per run and
role) and meta.txt.  Prints, per configuration and response size, the
median over rounds of requests/s with its range, of the latency p50/p99,
what happened to the attack requests, and CPU time per request by role
(CPU-ms per request = CPU-seconds per 1,000 requests).  Writes the plots
DIR/../eval-throughput.png and DIR/../eval-cpu-SIZE.png with gnuplot when
it is installed.
"""
import csv
import os
import shutil
import statistics
import subprocess
import sys
from collections import OrderedDict, defaultdict

from ev_engines import ENGINE_DSOS  # the IDS and WAF engines' own libraries

CLASSES = ["client", "chain", "toe", "server", "ksoftirqd"]


def role_class(role):
    return "chain" if role.startswith("chain") else role


def read_tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt_range(xs, fmt):
    if len(xs) < 2:
        return ""
    return "(" + fmt.format(min(xs)) + "-" + fmt.format(max(xs)) + ")"


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    out = args[0]
    markdown = "--markdown" in args
    plots = "--no-plots" not in args
    runs = read_tsv(os.path.join(out, "runs.tsv"))
    cpu = read_tsv(os.path.join(out, "cpu.tsv"))
    if not runs:
        print("report: no runs in " + out, file=sys.stderr)
        return 1

    keys = list(OrderedDict.fromkeys((r["config"], r["size"]) for r in runs))
    configs = list(OrderedDict.fromkeys(r["config"] for r in runs))
    sizes = list(OrderedDict.fromkeys(r["size"] for r in runs))
    by_key = defaultdict(list)
    for r in runs:
        by_key[(r["config"], r["size"])].append(r)
    # per run (round, config, size): CPU ms per request by role and class
    per_run = defaultdict(lambda: defaultdict(float))
    roles_of = defaultdict(list)
    for c in cpu:
        reqs = int(c["requests"])
        k = (c["round"], c["config"], c["size"])
        ms = int(c["cpu_ns"]) / 1e6 / reqs if reqs else float("nan")
        per_run[k][c["role"]] += ms
        per_run[k]["class:" + role_class(c["role"])] += ms
        # older files have no sys_ns column
        if c.get("sys_ns") not in (None, ""):
            sys_ms = int(c["sys_ns"]) / 1e6 / reqs if reqs else 0.0
            per_run[k]["sys"] += sys_ms
            per_run[k]["sys:" + c["role"]] += sys_ms
        # older files have no csw column; ksoftirqd has none
        if c.get("csw") not in (None, ""):
            per_run[k]["csw"] += int(c["csw"]) / reqs if reqs else 0.0
        if c["role"] not in roles_of[c["config"]]:
            roles_of[c["config"]].append(c["role"])

    def cpu_med(cfg, size, what):
        xs = [per_run[k][what] for k in per_run
              if k[1] == cfg and k[2] == size and what in per_run[k]]
        return med(xs), xs

    def total_med(cfg, size):
        xs = []
        for k in per_run:
            if k[1] == cfg and k[2] == size:
                xs.append(sum(v for n, v in per_run[k].items()
                              if n.startswith("class:")))
        return med(xs), xs

    if os.path.exists(os.path.join(out, "meta.txt")):
        with open(os.path.join(out, "meta.txt")) as f:
            for line in f:
                print(("    " if markdown else "") + line.rstrip())
        print()

    sep = " | " if markdown else "  "

    def row(cells, widths):
        if markdown:
            return "| " + " | ".join(cells) + " |"
        return sep.join(c.rjust(w) if i else c.ljust(w)
                        for i, (c, w) in enumerate(zip(cells, widths)))

    head = ["config", "size", "req/s median (range)", "p50 ms", "p99 ms",
            "attacks sent", "403", "reset", "other err", "non-2xx/403"]
    widths = [8, 4, 22, 7, 8, 12, 6, 6, 9, 11]
    print("Throughput and latency (medians over %d rounds):" %
          max(len(v) for v in by_key.values()))
    print(row(head, widths))
    if markdown:
        print("|" + "---|" * len(head))
    tp = {}
    for cfg, size in keys:
        rs = by_key[(cfg, size)]
        rps = [float(r["rps"]) for r in rs]
        tp[(cfg, size)] = (med(rps), min(rps), max(rps))
        print(row([cfg, size,
                   "%.0f %s" % (med(rps), fmt_range(rps, "{:.0f}")),
                   "%.2f" % (med([int(r["p50_us"]) for r in rs]) / 1000),
                   "%.2f" % (med([int(r["p99_us"]) for r in rs]) / 1000),
                   str(sum(int(r["attacks"]) for r in rs)),
                   str(sum(int(r["s403"]) for r in rs)),
                   str(sum(int(r["resets"]) for r in rs)),
                   str(sum(int(r["err_other"]) for r in rs)),
                   str(sum(int(r["sother"]) for r in rs))], widths))
    print()

    head = ["config", "size"] + CLASSES + ["total", "kernel %"]
    widths = [8, 4] + [9] * (len(CLASSES) + 2)
    print("CPU-ms per request = CPU-s per 1,000 requests, by role (medians);")
    print("kernel %: the part spent in the kernel (system calls, softirq) over all roles:")
    print(row(head, widths))
    if markdown:
        print("|" + "---|" * len(head))
    cpu_tab = {}
    for cfg, size in keys:
        cells = [cfg, size]
        for cl in CLASSES:
            m, xs = cpu_med(cfg, size, "class:" + cl)
            cpu_tab[(cfg, size, cl)] = m if xs else 0.0
            cells.append("%.4f" % m if xs else "-")
        m, _ = total_med(cfg, size)
        cells.append("%.4f" % m)
        shares = []
        for k in per_run:
            if k[1] == cfg and k[2] == size and "sys" in per_run[k]:
                tot = sum(v for n, v in per_run[k].items() if n.startswith("class:"))
                if tot > 0:
                    shares.append(100.0 * per_run[k]["sys"] / tot)
        cells.append("%.0f" % med(shares) if shares else "-")
        print(row(cells, widths))
    print()
    detail = [(cfg, r) for cfg in configs for r in roles_of[cfg]
              if r.startswith("chain")]
    if detail:
        print("Chain roles in detail (CPU-ms per request, medians):")
        for size in sizes:
            parts = []
            for cfg, r in detail:
                m, xs = cpu_med(cfg, size, r)
                ms, sx = cpu_med(cfg, size, "sys:" + r)
                if xs:
                    parts.append("%s %s %.4f%s" % (
                        cfg, r, m, " (kernel %.0f%%)" % (100 * ms / m) if sx and m > 0 else ""))
            print(("    " if markdown else "  ") + size + ": " + ", ".join(parts))
        print()

    # Ratios the evaluation is about: each TOChain configuration against
    # the baseline with the same inspection (null chain: the proxy chain
    # without inspection; inspecting chains: the TraditionalChain) and
    # against Direct; throughput and CPU per request.
    pairs = []
    for cfg in configs:
        if not cfg.startswith("tochain"):
            continue
        base = "plain" if cfg in ("tochain-null", "tochain-nochain") else "trad"
        for b in (base, "direct"):
            if b in configs:
                pairs.append((cfg, b))
    if pairs:
        print("Ratios (medians): requests/s and CPU-ms per request, TOChain / baseline:")
        head = ["config", "baseline", "size", "req/s ratio", "CPU/req ratio"]
        widths = [15, 8, 4, 11, 13]
        print(row(head, widths))
        if markdown:
            print("|" + "---|" * len(head))
        for cfg, b in pairs:
            for size in sizes:
                if (cfg, size) not in tp or (b, size) not in tp:
                    continue
                c1, _ = total_med(cfg, size)
                c0, _ = total_med(b, size)
                print(row([cfg, b, size,
                           "%.2f" % (tp[(cfg, size)][0] / tp[(b, size)][0])
                           if tp[(b, size)][0] else "-",
                           "%.2f" % (c1 / c0) if c0 else "-"], widths))
        print()

    csw_table(keys, per_run, row, markdown)
    aims(tp, total_med, cpu_med, sizes, row, markdown)
    perf_table(out, row, markdown)

    # the plots stack each chain role apart (chain:ids, chain:waf, ...)
    chain_roles = sorted({r for _, r in detail})
    stack = ["client"] + chain_roles + ["toe", "server", "ksoftirqd"]
    for cfg, size in keys:
        for r in chain_roles:
            m, xs = cpu_med(cfg, size, r)
            cpu_tab[(cfg, size, r)] = m if xs else 0.0
    if plots and shutil.which("gnuplot"):
        plot(out, configs, sizes, tp, cpu_tab, stack)
    return 0


def csw_table(keys, per_run, row, markdown):
    """Context switches (voluntary + involuntary) per request, all roles."""
    lines = []
    for cfg, size in keys:
        xs = [per_run[k]["csw"] for k in per_run
              if k[1] == cfg and k[2] == size and "csw" in per_run[k]]
        if xs:
            lines.append((cfg, size, med(xs)))
    if not lines:
        return
    table(row, markdown, "Context switches per request (voluntary + involuntary, "
          "every role but ksoftirqd; medians):", ["config", "size", "csw/req"], [15, 4, 8],
          [[cfg, size, "%.2f" % m] for cfg, size, m in lines])


# Issue 14's aims: (config, baseline, what).  "total" compares all roles'
# CPU per request; "toe" the TOE's own CPU per request in both
# configurations (req/s ratio: of the configurations).
AIMS = [("tochain-nochain", "direct", "total"),
        ("tochain-null", "plain", "total"),
        ("tochain", "trad", "total"),
        ("tochain:toe", "tochain-null:toe", "toe")]


def aims(tp, total_med, cpu_med, sizes, row, markdown):
    lines = []
    for cfg, base, what in AIMS:
        c1, c0 = cfg.split(":")[0], base.split(":")[0]
        for size in sizes:
            if (c1, size) not in tp or (c0, size) not in tp:
                continue
            if what == "toe":
                a, xa = cpu_med(c1, size, "toe")
                b, xb = cpu_med(c0, size, "toe")
                if not xa or not xb:
                    continue
            else:
                a, _ = total_med(c1, size)
                b, _ = total_med(c0, size)
            r0 = tp[(c0, size)][0]
            lines.append([cfg, base, size,
                          "%.2f" % (tp[(c1, size)][0] / r0) if r0 else "-",
                          "%.2f" % (a / b) if b else "-"])
    if not lines:
        return
    table(row, markdown, "Aims of issue 14 (medians; the TOE line: its own CPU per request):",
          ["config", "baseline", "size", "req/s ratio", "CPU/req ratio"], [15, 16, 4, 11, 13],
          lines)


def perf_table(out, row, markdown):
    """CPU-ms per request from the perf profiles (the configuration's
    processes, wrk and ksoftirqd): all, the engines' libraries, the rest,
    and the rest without the load generator (wrk); then the engines and
    the rest without wrk by call chain (perf-engines.tsv)."""
    path = os.path.join(out, "perf.tsv")
    if not os.path.exists(path):
        return
    per = OrderedDict()
    for r in read_tsv(path):
        k = (r["config"], r["size"])
        d = per.setdefault(k, {"n": int(r["requests"]), "all": 0, "engine": 0, "client": 0})
        if r["comm"] in ("swapper", "perf"):
            continue
        n = int(r["samples"])
        d["all"] += n
        if r["dso"].startswith(ENGINE_DSOS):
            d["engine"] += n
        elif r["comm"].startswith("wrk"):
            d["client"] += n
    if not per:
        return
    chained = engines_by_chain(out)
    ms, ms_cc, lines = {}, {}, []
    for (cfg, size), d in per.items():
        f = 1000.0 / 999 / d["n"] if d["n"] else float("nan")
        out_ms = (d["all"] - d["engine"]) * f
        ms[(cfg, size)] = out_ms - d["client"] * f
        cells = [cfg, size, "%.4f" % (d["all"] * f), "%.4f" % (d["engine"] * f),
                 "%.4f" % out_ms, "%.4f" % ms[(cfg, size)]]
        c = chained.get((cfg, size))
        if c:
            fc = 1000.0 / 999 / c["n"] if c["n"] else float("nan")
            ms_cc[(cfg, size)] = (c["all"] - c["engine"] - c["client"]) * fc
            cells += ["%.4f" % (c["engine"] * fc), "%.4f" % ms_cc[(cfg, size)]]
        else:
            cells += ["-", "-"]
        lines.append(cells)
    table(row, markdown, "From perf (one more run per configuration, cpu-clock 999 Hz, all "
          "CPUs): CPU-ms per request inside the IDS/WAF engines' libraries "
          "(%s) and outside them; by call chain: a sample with an engine's frame "
          "anywhere in its stack (its malloc, free, string work) counts as the "
          "engine's (eval/ev_engines.py):" % ", ".join(e.rstrip(".") for e in ENGINE_DSOS),
          ["config", "size", "all", "engines", "outside", "outside w/o wrk",
           "engines by chain", "outside by chain w/o wrk"],
          [15, 4, 8, 8, 8, 15, 16, 24], lines)
    for name, m in (("", ms), (" by call chain", ms_cc)):
        for (cfg, size) in m:
            if cfg == "tochain" and ("trad", size) in m and m[("trad", size)] > 0:
                print("  tochain / trad outside the engines%s, without wrk, %s: %.2f" %
                      (name, size, m[(cfg, size)] / m[("trad", size)]))
    print()


def engines_by_chain(out):
    """{(config, size): {"n", "all", "engine", "client"}} from
    perf-engines.tsv (eval/ev_engines.py's counts per process name), or
    {} without it."""
    path = os.path.join(out, "perf-engines.tsv")
    per = {}
    if not os.path.exists(path):
        return per
    for r in read_tsv(path):
        d = per.setdefault((r["config"], r["size"]),
                           {"n": int(r["requests"]), "all": 0, "engine": 0, "client": 0})
        if r["comm"] in ("swapper", "perf"):
            continue
        d["all"] += int(r["samples"])
        d["engine"] += int(r["engine"])
        if r["comm"].startswith("wrk"):
            d["client"] += int(r["samples"])
    return per


def gnuplot(path, script, who):
    """Writes the gnuplot SCRIPT (lines) to PATH and runs it; False (with
    a message) if gnuplot failed."""
    with open(path, "w") as f:
        f.write("\n".join(script) + "\n")
    r = subprocess.run(["gnuplot", path], capture_output=True, text=True)
    if r.returncode != 0:
        print(who + ": gnuplot failed: " + r.stderr.strip(), file=sys.stderr)
        return False
    return True


def table(row, markdown, title, head, widths, lines):
    """Prints TITLE, then a table of LINES (lists of cells) under HEAD."""
    print(title)
    print(row(head, widths))
    if markdown:
        print("|" + "---|" * len(head))
    for cells in lines:
        print(row(cells, widths))
    print()


def plot(out, configs, sizes, tp, cpu_tab, stack):
    pdir = os.path.dirname(os.path.abspath(out))
    dat = os.path.join(out, "throughput.dat")
    with open(dat, "w") as f:
        f.write("# config " + " ".join("%s_med %s_min %s_max" % (s, s, s)
                                       for s in sizes) + "\n")
        for cfg in configs:
            f.write(cfg)
            for s in sizes:
                f.write(" %.1f %.1f %.1f" % tp.get((cfg, s), (0, 0, 0)))
            f.write("\n")
    using = ", ".join(
        "'%s' using %d:%d:%d%s title '%s responses'" %
        (dat, 2 + 3 * i, 3 + 3 * i, 4 + 3 * i,
         ":xtic(1)" if i == 0 else "", s)
        for i, s in enumerate(sizes))
    script = [
        "set terminal pngcairo noenhanced size 900,500 font ',10'",
        "set output '%s'" % os.path.join(pdir, "eval-throughput.png"),
        "set title 'Requests/s per configuration (median, bars: min-max over rounds)'",
        "set style data histogram",
        "set style histogram errorbars gap 1 lw 1",
        "set style fill solid 0.6 border -1",
        "set logscale y",
        "set yrange [10:*]",
        "set ylabel 'requests/s (log scale)'",
        "set grid ytics",
        "set key top right",
        "plot " + using,
    ]
    for s in sizes:
        cdat = os.path.join(out, "cpu-%s.dat" % s)
        with open(cdat, "w") as f:
            f.write("# config " + " ".join(stack) + "\n")
            for cfg in configs:
                f.write(cfg + "".join(" %.5f" % cpu_tab.get((cfg, s, cl), 0.0)
                                      for cl in stack) + "\n")
        cols = ", ".join(
            "'%s' using %d%s title '%s'" % (cdat, 2 + i,
                                            ":xtic(1)" if i == 0 else "", cl)
            for i, cl in enumerate(stack))
        script += [
            "reset",
            "set terminal pngcairo noenhanced size 900,500 font ',10'",
            "set output '%s'" % os.path.join(pdir, "eval-cpu-%s.png" % s),
            "set title 'CPU time per request by role, %s responses (medians)'" % s,
            "set style data histogram",
            "set style histogram rowstacked",
            "set style fill solid 0.7 border -1",
            "set boxwidth 0.6",
            "set ylabel 'CPU-ms per request (= CPU-s per 1,000 requests)'",
            "set yrange [0:*]",
            "set grid ytics",
            "set key top left",
            "plot " + cols,
        ]
    if not gnuplot(os.path.join(out, "plots.gp"), script, "report"):
        return
    print("plots: " + ", ".join(
        os.path.join(pdir, n) for n in
        ["eval-throughput.png"] + ["eval-cpu-%s.png" % s for s in sizes]))


if __name__ == "__main__":
    sys.exit(main())
