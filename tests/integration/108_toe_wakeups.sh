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

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: ip not installed"; exit 77; }

tc_init
tc_fabric
tc_host CL cl 10.88.0.1/24
tc_host VM vm 10.88.0.2/24
tc_isolated GU gu
work=$(mktemp -d /dev/shm/tc108.XXXXXX)
tc_on_exit "rm -rf $work"
region=$work/region
mkfifo $work/ready
ip netns exec "$VM" "$build/bin/tochain-toe" --region "$region" --name vm108 \
	--ready-fd 3 3>$work/ready 2>$work/toe.log &
toe=$!
tc_on_exit "kill -9 $toe"
read -r -t 10 -n 1 _ <$work/ready || { echo "TOE did not become ready"; exit 1; }

n=${WAKE_CONNS:-6} rounds=${WAKE_ROUNDS:-12} runs=${WAKE_RUNS:-8}
for run in $(seq $runs); do
	port=$((9100 + run))
	quick=quick
	[ $run = $runs ] && quick=	# the last run also checks timed waits
	ip netns exec "$GU" timeout 60 "$build/bin/tochain-run" --region "$region" -- \
		"$build/tests/bin/gl-wakeups" serve $port $n $rounds $quick >$work/guest.$run 2>&1 &
	guest=$!
	tc_on_exit "kill -9 $guest"
	rc=0
	ip netns exec "$CL" timeout 60 "$build/tests/bin/gl-wakeups" drive 10.88.0.2 $port \
		$n $rounds || rc=$?
	[ $rc = 0 ] || kill -9 $guest 2>/dev/null || true	# it may wait for echoes that never come
	grc=0
	wait $guest || grc=$?
	cat $work/guest.$run
	[ $rc = 0 ] || { echo "FAIL: run $run: peer exit $rc"; exit 1; }
	[ $grc = 0 ] || { echo "FAIL: run $run: guest exit $grc"; exit 1; }
done
kill -0 $toe || { echo "FAIL: TOE died"; exit 1; }
echo PASS
