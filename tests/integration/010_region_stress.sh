#!/usr/bin/env bash
# Multi-process stress of the region library: 10 million descriptors with
# payload checksums from two producer processes to two consumer processes
# through the host's pool; then the same with a consumer killed by
# SIGKILL mid-stream, whose buffers the host reclaims.  region-stress
# checks nothing is lost, duplicated or leaked and exits non-zero if so.
# timeout: 900
set -euo pipefail
bin=$TOCHAIN_BUILD/tests/bin/region-stress
count=${STRESS_COUNT:-10000000}

echo "--- clean run"
"$bin" --count "$count" --producers 2 --consumers 2
echo "--- a consumer killed with SIGKILL mid-stream"
"$bin" --count "$count" --producers 2 --consumers 2 --kill
# Nothing left behind in /dev/shm by either run.
if ls /dev/shm/tochain-stress-* >/dev/null 2>&1; then
	echo "leftover region files"; exit 1
fi
