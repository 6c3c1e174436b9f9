#!/usr/bin/env bash
# Evaluation of issue 9 (docs/EVALUATION.md): Direct, the proxy chain
# without inspection and the TraditionalChain (namespaces as VMs: nftables
# router, IDS proxy, nginx + ModSecurity/CRS, web server), loaded with wrk
# interleaved round by round; prints requests/s, latency and CPU per 1,000
# requests by role, draws build/bench/eval-*.png.  Asserts nothing.
#   EVAL_ARGS: extra eval/run.sh options, e.g. "--rounds 5 --seconds 10"
#   or "--configs 'direct trad' --sizes 1k".
set -uo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
extra=()
eval "extra=(${EVAL_ARGS:-})"
bash "$top/eval/run.sh" --out "$build/bench/eval" "${extra[@]}"
rc=$?
# a machine without root or the packages skips, as the tests do
[ $rc = 77 ] && exit 0
exit $rc
