#!/usr/bin/env bash
# A short libFuzzer run of the region's host-side accessors under a
# scribbling guest (make fuzz runs it longer).  Fails on any crash,
# sanitizer report or broken invariant.
set -euo pipefail
. "$TOCHAIN_TOP/tests/lib/common.sh"
bin=$TOCHAIN_BUILD/fuzz/fuzz_region
corpus=$(mktemp -d)
tc_on_exit 'rm -rf "$corpus"'
"$bin" -max_total_time="${FUZZ_SECONDS:-20}" -print_final_stats=1 "$corpus" 2>&1 | tail -n 12
