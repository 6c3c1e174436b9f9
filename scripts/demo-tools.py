#!/usr/bin/env python3
"""Helpers of `make demo` (scripts/demo.sh), Python's standard library only.

  demo-tools.py load HOST PORT PATH RATE SECONDS OUT.csv
      open-loop load: RATE requests/s for SECONDS, each on a fresh
      connection (Connection: close), whatever the answers do; at most
      MAX_OPEN (400) in flight, each given up after 5 s; OUT.csv gets
      "start,end,status" per request (status -1: no connection, -2: no
      answer in time, -3: reset or empty answer, -4: not sent).
      Prints one JSON line: offered, served (200s/s over the run), p50 and
      p99 latency of the 200s, failed.
  demo-tools.py sample SFC_CTL CHAIN OUT.jsonl
      every second, `sfc-ctl --json stats CHAIN` as one line with the time,
      until killed.
  demo-tools.py rule VNF_KIND RULE IDS_RULES
      the message of an IDS sid (from IDS_RULES) or of a CRS rule id.
  demo-tools.py plot SAMPLES.jsonl EVENTS.txt LOADS... OUT.png
      the run: the chain's packets/s (from the samples), requests/s served
      to the client (from the load files), the SLA line while one was set,
      each denial marked; drawn with gnuplot.
"""
import asyncio
import glob
import json
import os
import re
import subprocess
import sys
import time

MAX_OPEN = 400
TIMEOUT = 5.0


async def one(host, port, req, rec):
    t0 = time.time()
    status = -1  # no connection
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port), TIMEOUT)
        status = -2  # connected, no answer in time
        try:
            w.write(req)
            data = await asyncio.wait_for(r.read(), TIMEOUT - (time.time() - t0))
            m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
            status = int(m.group(1)) if m else -3
        finally:
            w.close()
    except OSError:
        status = -3 if status == -2 else status  # reset or refused
    except asyncio.TimeoutError:
        pass
    rec.append((t0, time.time(), status))


async def load(host, port, path, rate, secs, out):
    req = ("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tochain-demo\r\n"
           "Connection: close\r\n\r\n" % (path, host)).encode()
    rec, tasks = [], set()
    n = int(rate * secs)
    start = time.time()
    for i in range(n):
        delay = start + i / rate - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks = {t for t in tasks if not t.done()}
        if len(tasks) >= MAX_OPEN:
            rec.append((time.time(), time.time(), -4))  # not sent: too many in flight
            continue
        tasks.add(asyncio.ensure_future(one(host, port, req, rec)))
    if tasks:
        await asyncio.wait(tasks)
    with open(out, "w") as f:
        for s, e, st in sorted(rec):
            f.write("%.6f,%.6f,%d\n" % (s, e, st))
    ok = sorted(e - s for s, e, st in rec if st == 200)
    pct = lambda p: ok[min(len(ok) - 1, int(p * len(ok)))] * 1000 if ok else 0
    print(json.dumps({"offered": rate, "requests": n, "served": len(ok) / secs,
                      "p50_ms": pct(0.5), "p99_ms": pct(0.99),
                      "failed": sum(1 for r in rec if r[2] != 200),
                      "no_connection": sum(1 for r in rec if r[2] == -1),
                      "no_answer": sum(1 for r in rec if r[2] == -2),
                      "reset": sum(1 for r in rec if r[2] == -3),
                      "not_sent": sum(1 for r in rec if r[2] == -4)}))


def sample(sfc, chain, out):
    with open(out, "a") as f:
        while True:
            t = time.time()
            p = subprocess.run([sfc, "--json", "stats", chain], capture_output=True, text=True)
            if p.returncode == 0:
                try:
                    j = json.loads(p.stdout)
                    f.write(json.dumps({"time": t, "stats": j}) + "\n")
                    f.flush()
                except ValueError:
                    pass
            time.sleep(max(0.0, 1.0 - (time.time() - t)))


def rule(kind, rid, ids_rules):
    if kind == "ids":
        for line in open(ids_rules):
            if re.search(r"\bsid:%s;" % re.escape(rid), line):
                m = re.search(r'msg:"([^"]*)"', line)
                return m.group(1) if m else ""
        return ""
    for f in sorted(glob.glob("/usr/share/modsecurity-crs/rules/*.conf")):
        text = open(f, errors="replace").read()
        m = re.search(r"id:%s\b.*?msg:'([^']*)'" % re.escape(rid), text, re.S)
        if m:
            return m.group(1)
    return ""


def plot(samples, events, loads, out):
    rows = [json.loads(l) for l in open(samples) if l.strip()]
    if len(rows) < 2:
        sys.exit("plot: fewer than two samples")
    t0 = rows[0]["time"]
    d = os.path.dirname(out)
    base = os.path.splitext(out)[0]
    # chain packets/s between samples (finished descriptors of the in chain)
    with open(base + "-chain.dat", "w") as f:
        prev = None
        for r in rows:
            ch = r["stats"]["chains"][0] if r["stats"]["chains"] else None
            if not ch or "finished" not in ch:
                prev = None
                continue
            if prev:
                dt = r["time"] - prev[0]
                if dt > 0:
                    f.write("%.2f %.1f\n" % (r["time"] - t0, (ch["finished"] - prev[1]) / dt))
            prev = (r["time"], ch["finished"])
    # requests/s served to the client, per second, from every load file
    served = {}
    for lf in loads:
        for line in open(lf):
            s, e, st = line.strip().split(",")
            if st == "200":
                served[int(float(e) - t0)] = served.get(int(float(e) - t0), 0) + 1
    with open(base + "-served.dat", "w") as f:
        for sec in sorted(served):
            f.write("%d.5 %d\n" % (sec, served[sec]))
    # events: "time kind text..." (sla VALUE, mode NAME, denial LABEL, end)
    marks, sla, phases = [], [], []
    for line in open(events):
        t, kind, text = (line.rstrip("\n").split(" ", 2) + [""])[:3]
        t = float(t) - t0
        if kind == "denial":
            marks.append((t, text))
        elif kind == "sla":
            sla.append((t, float(text)))
        elif kind == "phase":
            phases.append((t, text))
    tend = rows[-1]["time"] - t0
    with open(base + "-sla.dat", "w") as f:
        for i, (t, v) in enumerate(sla):
            f.write("%.2f %g\n%.2f %g\n" % (t, v, sla[i + 1][0] if i + 1 < len(sla) else tend, v))
    ymax = max([v for _, v in sla] + [1]) * 1.9
    with open(base + "-denials.dat", "w") as f:  # labels one above the other
        for i, (t, text) in enumerate(marks):
            f.write('%.2f %g "%s"\n' % (t, ymax * (0.08 + 0.09 * (len(marks) - 1 - i)), text.replace('"', "'")))
    gp = ["set terminal pngcairo size 1100,560 font 'DejaVu Sans,10'",
          "set output '%s'" % out,
          "set title 'make demo: nginx in VM web1 behind its security chain, through the TOE'",
          "set xlabel 'seconds since the chain was built'",
          "set ylabel 'per second'",
          "set yrange [0:%g]" % ymax, "set xrange [0:%g]" % (tend + 4),
          "set key below horizontal", "set grid ytics"]
    for i, (t, text) in enumerate(phases):
        gp.append("set arrow from %.2f, graph 0 to %.2f, graph 1 nohead dt 3 lc rgb '#888888'" % (t, t))
        gp.append("set label '%s' at %.2f, graph 0.96 left offset 0.5,0 tc rgb '#444444'" % (text, t))
    gp.append("plot '%s-chain.dat' using 1:2 with lines lw 1.5 lc rgb '#1f77b4' title 'in chain: packets/s done'," % base
              + " '%s-served.dat' using 1:2 with points pt 7 ps 0.5 lc rgb '#2ca02c' title 'client: requests/s served (200)'," % base
              + " '%s-sla.dat' using 1:2 with lines lw 2 dt 2 lc rgb '#d62728' title 'SLA (packets/s)'," % base
              + " '%s-denials.dat' using 1:2:3 with labels point pt 9 ps 1.6 lc rgb '#ff7f0e' left offset 1,0 font ',8' title 'denial (reset)'" % base)
    with open(base + ".gp", "w") as f:
        f.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", base + ".gp"], check=True, cwd=d or ".")


def main():
    a = sys.argv[1:]
    if a[:1] == ["load"] and len(a) == 7:
        asyncio.run(load(a[1], int(a[2]), a[3], float(a[4]), float(a[5]), a[6]))
    elif a[:1] == ["sample"] and len(a) == 4:
        sample(a[1], a[2], a[3])
    elif a[:1] == ["rule"] and len(a) == 4:
        print(rule(a[1], a[2], a[3]))
    elif a[:1] == ["plot"] and len(a) >= 5:
        plot(a[1], a[2], a[3:-1], a[-1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
