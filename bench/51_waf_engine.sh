#!/usr/bin/env bash
# WAF engine (vnfs/waf) throughput per service thread: full OWASP CRS at
# paranoia level 1 on a mix of 95% ordinary requests and 5% attacks, fed
# as whole requests and as 256-byte TCP-like chunks, with 1 and 2 threads
# sharing one engine; plus the same mix without the CRS (HTTP parsing and
# ModSecurity transaction cost only).  Prints medians; asserts nothing.
#   WAF_BENCH_SECONDS (default 2) and WAF_BENCH_RUNS (default 3) per point.
set -euo pipefail
build=${TOCHAIN_BUILD:-build}
bin=$build/bench/bin/waf-bench
[ -x "$bin" ] || { echo "waf-bench not built ($bin)" >&2; exit 1; }
secs=${WAF_BENCH_SECONDS:-2}
runs=${WAF_BENCH_RUNS:-3}

point() { # label args...
	local label=$1; shift
	local out
	out=$("$bin" -s "$secs" -r "$runs" "$@")
	echo "$out" | sed -n 's/^median per thread[^:]*: /'"$(printf '%-37s' "$label")"' /p'
}

echo "WAF engine, per-thread medians ($runs runs x $secs s each)"
"$bin" -s 0.1 -r 1 | head -n 2
point "CRS PL1, 1 thread, whole requests" -t 1
point "CRS PL1, 1 thread, 256 B chunks" -t 1 -c 256
point "CRS PL1, 2 threads, whole requests" -t 2
point "CRS PL2, 1 thread, whole requests" -t 1 -p 2
point "no CRS (parse + transaction), 1 thr" -t 1 -n
