#!/usr/bin/env bash
# Runs the test suite and reports one line per test and a summary line
# "N passed, N failed, N skipped".
#
#   scripts/run-tests.sh [--unit-only] BUILD_DIR [PATTERN]
#
# Unit tests are the Check binaries under BUILD_DIR/tests/unit.  Integration
# tests are tests/integration/NNN_*.sh, run in order; they exit 0 (pass),
# 77 (skip: the last line of their output that starts with "SKIP" says why)
# or anything else (fail).  A header line "# timeout: SECONDS" overrides the
# default time limit of 600 s.  A header line "# needs: patched-qemu" marks
# a test that runs the patched QEMU of qemu-patches/: when such a test is
# selected, the patched QEMU is built (or found in its cache) in the
# background from the start, at low priority, and the test starts once it
# is there, so a machine that never built it passes in one run and the
# build overlaps the tests before.  Logs go to BUILD_DIR/test-logs/.
set -uo pipefail
cd "$(dirname "$0")/.."

unit_only=0
if [ "${1:-}" = --unit-only ]; then unit_only=1; shift; fi
build=${1:?usage: run-tests.sh [--unit-only] BUILD_DIR [PATTERN]}
pattern=${2:-}
logs=$build/test-logs
mkdir -p "$logs"
export TOCHAIN_BUILD=$(cd "$build" && pwd)
export TOCHAIN_TOP=$(pwd)
# The ids engine's cache of compiled rules (vnfs/ids/README.md): the
# build's own, not the host's /var/cache/tochain/ids.
export TOCHAIN_IDS_CACHE=${TOCHAIN_IDS_CACHE-$TOCHAIN_BUILD/ids-cache}

pass=0 fail=0 skip=0
failed=()

selected() { # name
	case $1 in *"$pattern"*) return 0 ;; esac
	return 1
}

# The patched QEMU, built once in the background for the tests that need it.
qemu_pid=
needs_qemu() { grep -q '^# needs: patched-qemu' "$1"; }
start_qemu_build() {
	local t
	[ $unit_only = 0 ] || return 0
	for t in tests/integration/[0-9]*.sh; do
		selected "integration/$(basename "$t" .sh)" && needs_qemu "$t" || continue
		setsid qemu-patches/build-qemu.sh >"$logs/qemu-build.log" 2>&1 </dev/null &
		qemu_pid=$!
		qemu_start=$(date +%s)
		return 0
	done
}
wait_qemu_build() {
	local rc
	[ -n "$qemu_pid" ] || return 0
	wait "$qemu_pid"
	rc=$?
	qemu_pid=
	echo "---- patched QEMU: $(tail -n 1 "$logs/qemu-build.log") (exit $rc, $(( $(date +%s) - qemu_start )) s since the start)"
}
trap '[ -n "$qemu_pid" ] && kill -- -"$qemu_pid" 2>/dev/null' EXIT
start_qemu_build

run_one() { # name timeout cmd...
	local name=$1 limit=$2; shift 2
	local log=$logs/$name.log start end rc
	start=$(date +%s.%N)
	timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	end=$(date +%s.%N)
	local secs
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		printf 'PASS %-40s %6ss\n' "$name" "$secs"
	elif [ $rc -eq 77 ]; then
		skip=$((skip + 1))
		printf 'SKIP %-40s %s\n' "$name" "$(grep '^SKIP' "$log" | tail -n 1)"
	else
		fail=$((fail + 1))
		failed+=("$name")
		[ $rc -eq 124 ] && echo "(timed out after ${limit}s)" >>"$log"
		printf 'FAIL %-40s %6ss (exit %d)\n' "$name" "$secs" "$rc"
		tail -n 25 "$log" | sed 's/^/    | /'
	fi
}

for t in "$build"/tests/unit/*; do
	[ -x "$t" ] || continue
	name=unit/$(basename "$t")
	selected "$name" || continue
	run_one "$(echo "$name" | tr / _)" 600 env CK_DEFAULT_TIMEOUT=60 "$t"
done

if [ $unit_only = 0 ]; then
	for t in tests/integration/[0-9]*.sh; do
		[ -f "$t" ] || continue
		name=integration/$(basename "$t" .sh)
		selected "$name" || continue
		needs_qemu "$t" && wait_qemu_build
		limit=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "$t" | head -n 1)
		run_one "$(echo "$name" | tr / _)" "${limit:-600}" bash "$t"
	done
fi

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]} (logs in $logs)"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] && [ $((pass + skip)) -gt 0 ]
