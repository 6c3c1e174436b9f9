#!/usr/bin/env bash
# Multi-process stress of the region library: 10 million descriptors with
# payload checksums from two producer processes to two consumer processes
# through the host's pool; then the same with a consumer killed by
# SIGKILL mid-stream, whose buffers the host reclaims.  region-stress
# checks nothing is lost, duplicated or leaked and exits non-zero if so;
# each run must also remove its region file (/dev/shm/tochain-stress-PID).
# timeout: 900
set -euo pipefail
bin=$TOCHAIN_BUILD/tests/bin/region-stress
count=${STRESS_COUNT:-10000000}

run() {
	local pid
	"$bin" --count "$count" --producers 2 --consumers 2 "$@" &
	pid=$!
	wait $pid
	if [ -e "/dev/shm/tochain-stress-$pid" ]; then
		echo "region file /dev/shm/tochain-stress-$pid left behind"; exit 1
	fi
}
echo "--- clean run"
run
echo "--- a consumer killed with SIGKILL mid-stream"
run --kill
