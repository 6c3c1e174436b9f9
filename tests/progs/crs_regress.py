#!/usr/bin/env python3
"""The CRS project's own regression tests against one HTTP target.

crs_regress.py TESTS_DIR HOST PORT OUT.json [--per-family N] [--workers N]
crs_regress.py --serve PORT     the backend: 200 with X-Backend to anything

TESTS_DIR is `tests/regression/tests` of a CRS release: one directory per
rule family (REQUEST-942-APPLICATION-ATTACK-SQLI ...), YAML files of test
cases (the ftw format).  Each case's last stage is sent as one request on
a fresh connection to HOST:PORT, built as the CRS project's test runner
(ftw) builds it: the method, URI, version and headers as written; `data`
as the body, its lines ended with CRLF for multipart/form-data; unless
`stop_magic`, a form Content-Type when there is data and none, the form
data's names and values URL-encoded when they are not encoded already,
`Connection: close`, and Content-Length when there is data or the method
carries a body; `raw_request` and `encoded_request` (base64) sent as they
are.

A case whose output has `log_contains` is an attack (the rule it names
should fire), one with `no_log_contains` a benign case (that rule must
not); others are left out.  The verdict is read from what comes back:
"passed" when the backend answered (its responses carry X-Backend), else
"blocked" (a 403/400 page from the WAF, a refusal by the front server, a
reset, or no answer within the timeout).

With --per-family N, at most N cases per family are sent, picked evenly
over the family's cases sorted by title: the same sample for every target.
OUT.json: {title: {"family", "kind": attack|benign, "verdict", "status"}}.

A target that stops answering is not a WAF blocking: after STALL cases in
a row got no answer at all (no byte, no reset, no connection), the run
stops with exit status 3, naming the case the silence began with.
"""
import base64
import json
import os
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import yaml

TIMEOUT = 5.0
STALL = 24  # cases in a row without an answer: the target stalled


class Silent(Exception):
    """No answer within TIMEOUT: no byte, no reset, no connection."""


def as_bytes(v):
    if isinstance(v, bytes):
        return v
    if isinstance(v, list):
        v = "\r\n".join(str(x) for x in v)
    # YAML "\xNN" escapes give code points < 256: one byte each
    return str(v).encode("latin-1", "replace")


def build(inp):
    """The request bytes of one stage input, as ftw sends them."""
    if "encoded_request" in inp:
        return base64.b64decode(inp["encoded_request"])
    if "raw_request" in inp:
        return as_bytes(inp["raw_request"])
    method = str(inp.get("method", "GET"))
    uri = str(inp.get("uri", "/"))
    version = str(inp.get("version", "HTTP/1.1"))
    headers = {str(k): str(v) for k, v in (inp.get("headers") or {}).items()}
    data = inp.get("data")
    body = as_bytes(data) if data is not None else b""
    magic = not inp.get("stop_magic")
    names = {k.lower(): k for k in headers}
    if body and magic:
        if "content-type" not in names:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            names["content-type"] = "Content-Type"
        if headers[names["content-type"]] == "application/x-www-form-urlencoded":
            body = form_encode(body)
    if headers.get(names.get("content-type", ""), "").startswith("multipart/form-data;"):
        body = body.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if magic:
        if "connection" not in names:
            headers["Connection"] = "close"
        if "content-length" not in names and (body or method in BODY_METHODS):
            headers["Content-Length"] = str(len(body))
    lines = [f"{method} {uri} {version}".encode("latin-1", "replace")]
    for k, v in headers.items():
        lines.append(as_bytes(f"{k}: {v}"))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def form_encode(body):
    """Names and values of form data URL-encoded, unless decoding changes it (encoded already)."""
    from urllib.parse import quote_plus, unquote_plus
    text = body.decode("latin-1")
    if unquote_plus(text, encoding="latin-1") != text:
        return body
    out = []
    for tok in text.split("&"):
        k, eq, v = tok.partition("=")
        q = lambda x: quote_plus(x, safe="", encoding="latin-1")
        out.append(q(k) + "=" + q(v) if eq else q(k))
    return "&".join(out).encode("latin-1")


def cases(tests_dir):
    """(family, title, kind, request bytes) of every attack and benign case."""
    out = []
    for fam in sorted(os.listdir(tests_dir)):
        d = os.path.join(tests_dir, fam)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".yaml"):
                continue
            with open(os.path.join(d, name), "rb") as f:
                doc = yaml.safe_load(f)
            for t in (doc or {}).get("tests") or []:
                stages = t.get("stages") or []
                if not stages:
                    continue
                st = stages[-1]["stage"]
                o = st.get("output") or {}
                kind = "attack" if "log_contains" in o else \
                    "benign" if "no_log_contains" in o else None
                if kind:
                    out.append((fam, str(t["test_title"]), kind, build(st["input"])))
    return out


def sample(all_cases, per_family):
    if not per_family:
        return all_cases
    fams = {}
    for c in all_cases:
        fams.setdefault(c[0], []).append(c)
    out = []
    for fam in sorted(fams):
        lst = sorted(fams[fam], key=lambda c: c[1])
        if len(lst) <= per_family:
            out += lst
        else:
            step = len(lst) / per_family
            out += [lst[int(i * step)] for i in range(per_family)]
    return out


def send(host, port, req):
    """(verdict, status) for one request on a fresh connection; Silent."""
    try:
        s = socket.create_connection((host, port), timeout=TIMEOUT)
    except socket.timeout:
        raise Silent() from None
    buf = b""
    try:
        s.settimeout(TIMEOUT)
        try:
            s.sendall(req)
        except OSError:
            pass  # a reset while sending: read what came back
        while True:
            try:
                k = s.recv(65536)
            except socket.timeout:
                if not buf:
                    raise Silent() from None
                break
            except OSError:
                break  # reset
            if not k:
                break
            buf += k
            head, sep, body = buf.partition(b"\r\n\r\n")
            if sep:
                hl = head.lower()
                cl = [ln for ln in hl.split(b"\r\n") if ln.startswith(b"content-length:")]
                if cl and len(body) >= int(cl[0].split(b":")[1].strip() or 0):
                    break
    finally:
        s.close()
    status = 0
    if buf.startswith(b"HTTP/"):
        try:
            status = int(buf.split(b" ", 2)[1])
        except (IndexError, ValueError):
            status = 0
    head = buf.partition(b"\r\n\r\n")[0].lower()
    passed = b"\r\nx-backend:" in head
    return ("passed" if passed else "blocked"), status


def serve(port):
    """The protected server: answers every request, however odd, with X-Backend."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def end_headers(self):
            self.send_header("X-Backend", "1")
            self.send_header("Connection", "close")
            self.close_connection = True
            super().end_headers()

        def handle_one_request(self):
            try:
                super().handle_one_request()
            except OSError:
                self.close_connection = True

        def __getattr__(self, name):
            if name.startswith("do_"):
                return self.answer
            raise AttributeError(name)

        def answer(self):
            body = b"ok\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def log_message(self, *a):
            pass

    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer(("0.0.0.0", port), H).serve_forever()


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--serve":
        serve(int(args[1]))
        return 0
    per_family, workers = 0, 4
    if "--per-family" in args:
        i = args.index("--per-family")
        per_family = int(args[i + 1])
        del args[i:i + 2]
    if "--workers" in args:
        i = args.index("--workers")
        workers = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    tests_dir, host, port, out_path = args[0], args[1], int(args[2]), args[3]
    todo = sample(cases(tests_dir), per_family)
    res, lock = {}, threading.Lock()
    silent = {"run": [], "all": 0}
    stalled = threading.Event()

    def one(c):
        fam, title, kind, req = c
        if stalled.is_set():
            return
        quiet = False
        try:
            verdict, status = send(host, port, req)
        except Silent:
            verdict, status, quiet = "blocked", 0, True
        except OSError as e:
            verdict, status = "blocked", 0
            print(f"crs_regress: {title}: {e}", file=sys.stderr)
        with lock:
            res[title] = {"family": fam, "kind": kind, "verdict": verdict, "status": status}
            if quiet:
                silent["all"] += 1
                silent["run"].append(title)
                if len(silent["run"]) >= STALL:
                    stalled.set()
            else:
                silent["run"] = []

    with ThreadPoolExecutor(workers) as ex:
        list(ex.map(one, todo))
    if stalled.is_set():
        print(f"crs_regress: {host}:{port} stalled: {STALL} cases in a row without an answer, "
              f"from {silent['run'][0]} on ({len(res)} of {len(todo)} cases sent)", file=sys.stderr)
        return 3
    with open(out_path, "w") as f:
        json.dump(res, f, indent=0, sort_keys=True)
    print(f"crs_regress: {len(res)} cases against {host}:{port}, "
          f"{silent['all']} without an answer in {TIMEOUT:g} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
