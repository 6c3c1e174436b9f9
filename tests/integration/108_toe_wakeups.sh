#!/usr/bin/env bash
# timeout: 120
# Wake-ups of a multithreaded program under tochain-run (gl_wait.c): one
# thread blocked in recv per connection, all sleeping at once on one CPU;
# the peer wakes them all at once and then each in turn, and wants every
# echo within 3 s (a thread that slept through its wake-up stalls).  In
# the last quarter spurious wake-ups are injected while timed waits (recv
# and UDP recvfrom with SO_RCVTIMEO, poll, select, epoll_wait) must end by
# their timeout and never earlier; an early EOF fails too.  Eight runs
# (the last with the timed waits): the code before gl_wait.c stalled in
# about every second run.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds ip

tt_netns 108 10.88.0
tt_toe_start "$VM" vm108

n=${WAKE_CONNS:-6} rounds=${WAKE_ROUNDS:-12} runs=${WAKE_RUNS:-8}
for run in $(seq $runs); do
	port=$((9100 + run))
	quick=quick
	[ $run = $runs ] && quick=	# the last run also checks timed waits
	tt_guest_bg --timeout 60 guest.$run "$build/tests/bin/gl-wakeups" serve $port $n $rounds $quick
	guest=$GPID
	rc=0
	ip netns exec "$CL" timeout 60 "$build/tests/bin/gl-wakeups" drive 10.88.0.2 $port \
		$n $rounds || rc=$?
	[ $rc = 0 ] || kill -9 $guest 2>/dev/null || true	# it may wait for echoes that never come
	grc=0
	wait $guest || grc=$?
	cat $work/guest.$run
	[ $rc = 0 ] || fail "run $run: peer exit $rc"
	[ $grc = 0 ] || fail "run $run: guest exit $grc"
done
kill -0 $TOE || fail "TOE died"
echo PASS
