#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS, with its corpus under BUILD/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 secs=$2; shift 2
for t in "$@"; do
	name=$(basename "$t")
	corpus=$build/fuzz/corpus-$name
	mkdir -p "$corpus"
	seeds=tests/fuzz/seeds/$name
	echo "=== fuzz $name for ${secs}s"
	if [ -d "$seeds" ]; then
		"$t" -max_total_time="$secs" -print_final_stats=1 "$corpus" "$seeds"
	else
		"$t" -max_total_time="$secs" -print_final_stats=1 "$corpus"
	fi
done
