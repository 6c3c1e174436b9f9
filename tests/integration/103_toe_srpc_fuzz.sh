#!/usr/bin/env bash
# timeout: 60
# A short libFuzzer run of the TOE's request decoder (make fuzz runs it
# longer).  Fails on any crash, sanitizer report or broken invariant.
set -euo pipefail
. "$TOCHAIN_TOP/tests/lib/common.sh"
bin=$TOCHAIN_BUILD/fuzz/fuzz_srpc
[ -x "$bin" ] || { echo "SKIP: $bin not built (clang missing?)"; exit 77; }
corpus=$(mktemp -d)
tc_on_exit 'rm -rf "$corpus"'
"$bin" -max_total_time="${FUZZ_SECONDS:-10}" -max_len=256 -print_final_stats=1 "$corpus" 2>&1 | tail -n 8
