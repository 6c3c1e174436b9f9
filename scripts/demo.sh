#!/usr/bin/env bash
# make demo: the main job, end to end, on this machine.
#
# Until the data path (TOE + guest runtime) lands, the demo shows the part
# that exists: the shared-memory region between a "host" and a "guest"
# process: a stress run with checksums and a killed consumer, then the
# ring latency/throughput benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: demo.sh BUILD_DIR}
echo "TOChain demo: the region library (the data path is not built yet;"
echo "this demo runs the shared-memory ring between processes)."
echo
echo "== 2 producer and 2 consumer processes, 1,000,000 checksummed descriptors,"
echo "   one consumer killed with SIGKILL mid-stream and its buffers reclaimed"
"$build/tests/bin/region-stress" --count 1000000 --kill
echo
echo "== ring latency and throughput between two cores"
"$build/bench/bin/region-bench"
