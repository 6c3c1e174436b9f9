#!/usr/bin/env bash
# IDS engine (vnfs/ids) per-thread throughput on a generated HTTP mix:
# keep-alive connections interleaved segment by segment, GET and POST
# requests with realistic headers, 2-32 KiB HTML responses, 2% of requests
# carrying an attack; deterministic rule files of N content rules (HTTP
# uri/header/body, raw with distance/within, pcre, response-side).
# Prints the median of 5 runs per line, by wall-clock and by the scanning
# thread's CPU time.  The first line (0 rules) is the cost of the calls
# alone: a direction no rule looks at is neither scanned nor kept.
set -euo pipefail
bin=${TOCHAIN_BUILD:-build}/bench/bin/ids-bench
if [ ! -x "$bin" ]; then
	echo "ids-bench not built: make ${TOCHAIN_BUILD:-build}/bench/bin/ids-bench" >&2
	exit 1
fi
"$bin" --header --rules 0 --runs 5 --requests 60
for n in 1000 3000; do
	"$bin" --rules "$n" --runs 5 --requests 60
done
# many concurrent connections: same bytes spread over 1024 flows
"$bin" --rules 1000 --runs 5 --flows 1024 --requests 4
