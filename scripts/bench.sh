#!/usr/bin/env bash
# Runs every benchmark script bench/NN_*.sh in order; each prints its own
# table (medians and ratios) and may write plots under BUILD/bench/.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: bench.sh BUILD_DIR}
export TOCHAIN_BUILD=$(cd "$build" && pwd)
export TOCHAIN_TOP=$(pwd)
mkdir -p "$build/bench"
rc=0
for b in bench/[0-9]*.sh; do
	[ -f "$b" ] || continue
	[ -n "${BENCH:-}" ] && case $b in *"$BENCH"*) ;; *) continue ;; esac
	echo "=== $(basename "$b" .sh)"
	bash "$b" || { echo "bench $b failed" >&2; rc=1; }
	echo
done
exit $rc
