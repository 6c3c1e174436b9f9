# Shared setup of the tochain-sched integration tests (source it).
#
#   hsd_setup NAME              variables (sched, worker, cg, tmp, sock, region,
#                               dpid, wpid), the cleanup trap, the backend
#                               (hsd_backend), and the checks that skip where
#                               root, 2 CPUs or any cgroup cpu controller is
#                               missing
#   hsd_start SECONDS [ARGS]    start tochain-sched with that backend on CPUs
#                               0-1 for at most SECONDS, wait for its socket
#   hsd_groups_left             prints the daemon's groups still there
#   hsd_group_dir               the daemon's parent group in the cpu hierarchy
#                               of HSD_BACKEND
#   hsd_cpu_dir TID             the group of TID in that hierarchy (a path)
#   hsd_cpu_limit DIR           "QUOTA PERIOD" of group DIR in us, QUOTA -1
#                               for none (v1 cfs_quota/period_us, v2 cpu.max)
#   hsd_near_miss FILE          true when every chain of hsd-worker's JSON FILE
#                               reached at least 90% of its SLA: a measurement
#                               a shared machine may have disturbed, which a
#                               second one may decide; a scheduler that misses
#                               by more fails at once
#
# The backend follows what the host has: v1 with freezer gating where the
# v1 cpu and freezer hierarchies are (this machine), v1 with quota gating
# where only cpu is, else v2 (which has no per-thread freezer) with quota
# gating; HSD_BACKEND=v1|v2 and HSD_GATING=freezer|quota choose on purpose.
# The choice is in HSD_BACKEND and HSD_GATING, and said on stdout.
#
# tests/lib/common.sh (fail, tc_on_exit, ...) comes with this file.

# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

hsd_cleanup() {
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	[ -n "$dpid" ] && wait "$dpid" 2>/dev/null
	[ -n "${HSD_BACKEND:-}" ] && "$sched" --backend "$HSD_BACKEND" --cgroup "$cg" --cleanup 2>/dev/null
	rm -rf "$tmp" "$region"
	dpid= wpid=	# a second call (a test's own cleanup calls it too) kills nothing
}

hsd_setup() {
	local name=$1
	top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
	build=${TOCHAIN_BUILD:-$top/build}
	sched=$build/bin/tochain-sched
	worker=$build/tests/bin/hsd-worker
	cg=hsd-$name-$$
	tmp=$(mktemp -d)
	sock=$tmp/sched.sock
	region=/dev/shm/hsd-$name-$$
	dpid= wpid=
	tc_on_exit hsd_cleanup

	[ -x "$sched" ] && [ -x "$worker" ] || fail "tochain-sched/hsd-worker not built"
	command -v jq >/dev/null || fail "jq missing (make deps installs it)"
	tc_need_root cgroups
	[ "$(nproc)" -ge 2 ] || { echo "SKIP: needs 2 cpus"; exit 77; }
	hsd_backend
}

# hsd_backend: HSD_BACKEND and HSD_GATING (kept when set), from what works here.
hsd_backend() {
	local b
	if [ -z "${HSD_BACKEND:-}" ]; then
		for b in v1 v2; do
			"$sched" --backend "$b" --cgroup "$cg" --cleanup 2>>"$tmp/err" && { HSD_BACKEND=$b; break; }
		done
		[ -n "${HSD_BACKEND:-}" ] ||
			{ echo "SKIP: no cgroup cpu controller, v1 or v2: $(tr '\n' ' ' <"$tmp/err")"; exit 77; }
	fi
	"$sched" --backend "$HSD_BACKEND" --cgroup "$cg" --cleanup || fail "backend $HSD_BACKEND does not work here"
	if [ -z "${HSD_GATING:-}" ]; then
		HSD_GATING=quota
		[ "$HSD_BACKEND" = v1 ] && grep -q ' - cgroup .*[,]freezer\b' /proc/self/mountinfo &&
			HSD_GATING=freezer
	fi
	echo "tochain-sched backend $HSD_BACKEND, gating $HSD_GATING"
}

hsd_groups_left() {
	local d
	for d in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpuset /sys/fs/cgroup/freezer \
		$(awk '$0 ~ / - cgroup2 / { print $5 }' /proc/self/mountinfo); do
		[ -d "$d/$cg" ] && echo "$d/$cg"
	done
	return 0
}

hsd_start() {
	local secs=$1
	shift
	"$sched" --socket "$sock" --backend "$HSD_BACKEND" --gating "$HSD_GATING" --cgroup "$cg" \
		--sync-cpus 0-1 "$@" \
		--duration "$secs" --print-every 0 >"$tmp/daemon.log" 2>&1 &
	dpid=$!
	tc_wait_for 5 test -S "$sock" || { cat "$tmp/daemon.log"; fail "no socket"; }
}

hsd_near_miss() {
	jq -e '[.chains[] | select(.ratio < 0.90)] | length == 0' "$1" >/dev/null
}

# the mount point of HSD_BACKEND's cpu hierarchy
hsd_cpu_mount() {
	if [ "$HSD_BACKEND" = v2 ]; then
		awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo
	else
		awk '$0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/ { print $5; exit }' /proc/self/mountinfo
	fi
}

hsd_group_dir() {
	echo "$(hsd_cpu_mount)/$cg"
}

hsd_cpu_dir() {
	local rel
	if [ "$HSD_BACKEND" = v2 ]; then
		rel=$(sed -n 's/^0:://p' "/proc/$1/cgroup")
	else
		rel=$(grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' "/proc/$1/cgroup" | cut -d: -f3)
	fi
	echo "$(hsd_cpu_mount)$rel"
}

hsd_cpu_limit() {
	if [ -e "$1/cpu.max" ]; then
		sed 's/^max /-1 /' "$1/cpu.max"
	else
		echo "$(cat "$1/cpu.cfs_quota_us") $(cat "$1/cpu.cfs_period_us")"
	fi
}
