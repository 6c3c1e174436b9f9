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

# Load time of a 4,000-rule generated set (the engine load that
# `tochain-vnf --check` times): compiled (no cache) and from the cache of
# serialized Hyperscan databases, side by side, median of 5 each.
vnf=${TOCHAIN_BUILD:-build}/bin/tochain-vnf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --rules 4000 --runs 1 --requests 1 --write-rules "$tmp/r.rules" >/dev/null
load_ms() {	# cache dir ("" = none) -> load_ms of one --check
	TOCHAIN_IDS_CACHE=$1 "$vnf" --kind ids --rules "$tmp/r.rules" --check --json |
		sed -n 's/.*"load_ms":\([0-9]*\).*/\1/p'
}
median() { sort -n | sed -n 3p; }
cold=$(for i in 1 2 3 4 5; do load_ms ""; done | median)
load_ms "$tmp/cache" >/dev/null	# fills the cache
warm=$(for i in 1 2 3 4 5; do load_ms "$tmp/cache"; done | median)
printf 'ids load, 4000 rules: compiled %s ms, from cache %s ms (%sx)\n' \
	"$cold" "$warm" "$(awk -v c="$cold" -v w="$warm" 'BEGIN { printf "%.1f", w ? c / w : 0 }')"
