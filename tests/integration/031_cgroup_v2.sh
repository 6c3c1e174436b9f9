#!/usr/bin/env bash
# timeout: 120
#
# lib/cgroup's v2 backend against the kernel, on every host: the test
# takes the cgroup2 hierarchy the host mounts (the unified one next to
# v1 here, /sys/fs/cgroup on a v2-only host), or mounts one itself where
# none is (a cgroup2 mount works beside v1; controllers bound to v1 are
# missing from it, its core files are there).  cg-v2-kernel then moves a
# process and single threads through real groups and reads back from
# /proc and cpu.stat where the kernel put them (tests/progs/cg_v2_kernel.c
# says what it checks; cpu.max, cpu.weight and cpuset.cpus are read back
# where those controllers are on v2, and must be refused where not; the
# file contents alone are covered by test_cg on a cgroup2-shaped tree).
# Then tochain-sched --backend v2: where v2 has the cpu controller, it
# runs with quota gating, a registered thread lands in its group with the
# plan's cpu.max, and everything goes when it exits; where it has not
# (this machine), --backend v2 refuses to start, as it must.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"

tc_need_root cgroups
prog=$build/tests/bin/cg-v2-kernel
sched=$build/bin/tochain-sched
[ -x "$prog" ] && [ -x "$sched" ] || fail "cg-v2-kernel/tochain-sched not built"
command -v jq >/dev/null || fail "jq missing (make deps installs it)"
tmp=$(mktemp -d)
tc_on_exit "rm -rf $tmp"

mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if [ -z "$mnt" ]; then
	mkdir "$tmp/cg2"
	mount -t cgroup2 none "$tmp/cg2" || fail "no cgroup2 mounted, and none can be mounted"
	tc_on_exit "umount $tmp/cg2"
	mnt=$tmp/cg2
	echo "no cgroup2 mounted: mounted one at $mnt"
fi
"$prog" "$mnt" || fail "the v2 backend against the kernel at $mnt"
[ -z "$(find "$mnt" -maxdepth 1 -name 'tochain-v2-*')" ] || fail "groups left in $mnt"

cg=tochain-it031-$$
sock=$tmp/sched.sock
if ! grep -qw cpu "$mnt/cgroup.controllers"; then
	echo "--- no cpu controller on v2 here: --backend v2 must refuse"
	if "$sched" --socket "$sock" --backend v2 --gating quota --cgroup "$cg" --sync-cpus 0 \
		--duration 5 --print-every 0 >"$tmp/sched.log" 2>&1; then
		fail "tochain-sched --backend v2 ran without a v2 cpu controller: $(cat "$tmp/sched.log")"
	fi
	grep -q 'backend cgroup-v2: ' "$tmp/sched.log" || fail "no reason: $(cat "$tmp/sched.log")"
	echo "refused: $(cat "$tmp/sched.log")"
	[ ! -e "$mnt/$cg" ] || fail "$mnt/$cg made by a refused start"
	echo "PASS"
	exit 0
fi

echo "--- tochain-sched --backend v2 on $mnt"
spid= dpid=
stop031() {
	[ -n "$spid" ] && kill "$spid"
	[ -n "$dpid" ] && kill "$dpid" && wait "$dpid"
	"$sched" --backend v2 --cgroup "$cg" --cleanup
}
tc_on_exit stop031
tc_on_fail "cat $tmp/sched.log"
sleep 300 &
spid=$!
"$sched" --socket "$sock" --backend v2 --gating quota --cgroup "$cg" --sync-cpus 0 \
	--duration 60 --print-every 0 >"$tmp/sched.log" 2>&1 &
dpid=$!
tc_wait_for 5 test -S "$sock" || fail "tochain-sched --backend v2: no socket"
grep -q 'backend cgroup-v2' "$tmp/sched.log" || fail "not the v2 backend"
"$sched" --socket "$sock" --ctl sched.register "{\"role\":\"vm\",\"tid\":$spid,\"vm\":\"host\"}" \
	>/dev/null || fail "sched.register of a thread"
grep -qx "0::/$cg/t$spid" "/proc/$spid/cgroup" || fail "thread $spid is in $(grep '^0::' "/proc/$spid/cgroup")"
has_quota() { [ "$(cut -d' ' -f1 "$mnt/$cg/t$spid/cpu.max")" != max ]; }
tc_wait_for 5 has_quota || fail "no quota in $mnt/$cg/t$spid/cpu.max: $(cat "$mnt/$cg/t$spid/cpu.max")"
"$sched" --socket "$sock" --ctl sched.show >"$tmp/show.json"
jq -e ".backend == \"cgroup-v2\" and ([.threads[] | select(.tid == $spid and .pcpu >= 0)] | length) == 1" \
	"$tmp/show.json" >/dev/null || fail "sched.show: $(jq -c '{backend, threads}' "$tmp/show.json")"
echo "thread $spid in /$cg/t$spid, cpu.max $(cat "$mnt/$cg/t$spid/cpu.max")"
kill "$dpid"
wait "$dpid" || fail "tochain-sched exited $?"
dpid=
[ ! -e "$mnt/$cg" ] || fail "$mnt/$cg left behind"
grep -q "^0::/$cg" "/proc/$spid/cgroup" && fail "thread $spid still in a group of the daemon"
echo "PASS"
