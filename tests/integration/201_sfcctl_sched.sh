#!/usr/bin/env bash
# sfc-ctl sched show | sched mode go through tochaind to tochain-sched:
# the mode switches at run time and shows in the plan; bad usage exits 2;
# an unreachable scheduler is a refusal (exit 1) with one line.
# timeout: 120
set -euo pipefail
. "$TOCHAIN_TOP/tests/lib/netns.sh"
. "$TOCHAIN_TOP/tests/lib/tochaind.sh"
tc_init
build=$TOCHAIN_BUILD
bin=$build/bin
work=$(mktemp -d /tmp/tc201.XXXXXX)
fab=tcs$TC_SUFFIX
export TOCHAIN_SOCKET=$work/ctl.sock
"$bin/tochain-sched" --socket "$work/sched.sock" --backend dryrun --cgroup "tc201-$TC_SUFFIX" \
	--print-every 1000 >"$work/sched.log" 2>&1 &
sched=$!
tc_on_exit "kill $sched; wait $sched; pkill -f 'tochaind --state-dir $work/state'; ip netns del $fab; rm -rf $work"
td_daemon --fabric-ns "$fab" --sched-socket "$work/sched.sock"
tc_wait_for 5 test -S "$work/sched.sock" || true

sfc sched show >"$work/show.txt" || fail "sched show"
cat "$work/show.txt"
sfc --json sched show | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["mode"]=="sync", r' ||
	fail "not in sync mode at start"
sfc sched mode cfs
for i in $(seq 40); do
	mode=$(sfc --json sched show | python3 -c 'import json,sys; print(json.load(sys.stdin)["mode"])')
	[ "$mode" = cfs ] && break; sleep 0.1
done
[ "$mode" = cfs ] || fail "mode did not switch to cfs"
sfc sched mode sync
set +e
sfc sched mode fast 2>/dev/null; [ $? -eq 2 ] || fail "bad mode must be usage (2)"
sfc sched 2>/dev/null; [ $? -eq 2 ] || fail "sched alone must be usage (2)"
kill $sched; wait $sched 2>/dev/null
(sfc sched show) 2>"$work/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "unreachable scheduler must be a refusal (1), got $rc"
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "not one line: $(cat "$work/err")"
grep -q "not reachable" "$work/err" || fail "message does not say why: $(cat "$work/err")"
echo PASS
