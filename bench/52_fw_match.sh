#!/usr/bin/env bash
# Firewall VNF: fw_match cost per packet against ruleset size (bench/progs/fw_bench.c).
set -euo pipefail
"$TOCHAIN_BUILD/bench/bin/fw-bench"
