#!/usr/bin/env bash
# Service chains: throughput and added latency per hop for chains of 0, 1,
# 2 and 4 null VNF hops and for one hop of 1, 2 and 4 parallel null VNFs
# (bench/progs/ch_bench.c), side by side: the path's own cost in one thread,
# then end to end with VNF processes and the scheduler run in the bench
# thread's epoll loop, as the TOE runs it.  Medians; timings are not asserted.
set -euo pipefail
out=$TOCHAIN_BUILD/bench
mkdir -p "$out"
"$TOCHAIN_BUILD/bench/bin/chain-bench" --vnf-bin "$TOCHAIN_BUILD/bin/tochain-vnf" \
	--runs "${CHAIN_BENCH_RUNS:-3}" --secs "${CHAIN_BENCH_SECS:-0.5}" | tee "$out/chain_hops.txt"
