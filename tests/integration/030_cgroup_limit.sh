#!/usr/bin/env bash
# The detected cgroup backend (v1 here, v2 on most hosts) really caps CPU:
# a busy process in a group limited to 20% of a CPU gets about that.
set -euo pipefail
"$TOCHAIN_BUILD/tests/bin/cg-limit" 20 2
