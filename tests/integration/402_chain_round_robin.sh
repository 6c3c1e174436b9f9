#!/usr/bin/env bash
# One null VNF with three service threads: they share the load round-robin
# (each serves exactly a third).
# chain-drive (tests/progs/ch_drive.c) runs the scheduler with real tochain-vnf
# processes of kind null on synthetic descriptors and checks that every
# descriptor comes back once, each connection's in order, unchanged, with the right verdict,
# that each VNF saw exactly the payloads it had to (count and checksum),
# and that no buffer or work descriptor is left over.
# timeout: 120
set -euo pipefail
. "$TOCHAIN_TOP/tests/lib/common.sh"
dir=$(mktemp -d /dev/shm/tochain-chain-test.XXXXXX)
# chain-drive stops its VNFs; they also die with it (--exit-with-parent).
tc_on_exit 'rm -rf "$dir"'
"$TOCHAIN_BUILD/tests/bin/chain-drive" rr -n 6000 \
	--vnf-bin "$TOCHAIN_BUILD/bin/tochain-vnf" --dir "$dir"
