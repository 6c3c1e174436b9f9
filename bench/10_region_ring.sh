#!/usr/bin/env bash
# Region ring: one-way hop latency and throughput between two processes.
set -euo pipefail
"$TOCHAIN_BUILD/bench/bin/region-bench"
