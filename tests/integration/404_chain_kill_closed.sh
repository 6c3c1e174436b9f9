#!/usr/bin/env bash
# A fail-closed VNF killed with SIGKILL under load: its chain's
# descriptors are denied (vnf failed), another chain is not affected, no
# slot leaks, and a restarted VNF rejoins.
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
"$TOCHAIN_BUILD/tests/bin/chain-drive" kill-closed -n 4000 \
	--vnf-bin "$TOCHAIN_BUILD/bin/tochain-vnf" --dir "$dir"
