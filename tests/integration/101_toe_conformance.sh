#!/usr/bin/env bash
# timeout: 120
# Socket-call conformance: tests/conformance/conform.c runs the same
# checks (results and errno of every call in the offload list, error
# cases included) once on plain kernel sockets in a namespace with its
# own veth, and once under tochain-run in a loopback-only namespace whose
# TCP goes through tochain-toe.  The outputs must be identical.  A third
# run preloads the library without a region: pure pass-through.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds ip

tt_netns 101 10.80.0
tc_host PL pl 10.80.0.3/24
conform=$build/tests/bin/conform

tt_toe_start "$VM" vm101

ip netns exec "$CL" "$conform" peer >$work/peer.log 2>&1 &
tc_on_exit "kill -9 $!"
tc_wait_port "$PL" 10.80.0.1 7001 10

rc=0
ip netns exec "$PL" timeout 60 "$conform" guest 10.80.0.1 >$work/plain.txt 2>&1 || rc=$?
echo "plain run: exit $rc, $(wc -l <$work/plain.txt) lines"
[ $rc = 0 ] || { cat $work/plain.txt; echo "FAIL: the plain run itself failed"; exit 1; }
rc=0
tt_guest --timeout 60 "$conform" guest 10.80.0.1 >$work/offload.txt 2>&1 || rc=$?
echo "offloaded run: exit $rc, $(wc -l <$work/offload.txt) lines"
if ! diff -u $work/plain.txt $work/offload.txt; then
	echo "FAIL: offloaded results differ from the kernel's (- kernel, + runtime)"
	exit 1
fi
[ $rc = 0 ] || fail "offloaded run exit $rc"
kill -0 $TOE || fail "TOE died"

# Preloaded without a region, the library passes everything to libc.
rc=0
ip netns exec "$PL" env LD_PRELOAD="$build/lib/libtochain-preload.so" TOCHAIN_REGION= \
	timeout 60 "$conform" guest 10.80.0.1 >$work/passthrough.txt 2>&1 || rc=$?
if ! diff -u $work/plain.txt $work/passthrough.txt; then
	echo "FAIL: preloaded without a region differs from plain libc"
	exit 1
fi
[ $rc = 0 ] || fail "pass-through run exit $rc"
echo "PASS: $(wc -l <$work/plain.txt) identical lines"
