# Shared setup of the tochain-sched integration tests (source it).
#
#   hsd_setup NAME              variables (sched, worker, cg, tmp, sock, region,
#                               dpid, wpid), the cleanup trap, and the checks
#                               that skip where root, 2 CPUs or the cgroup v1
#                               cpu and freezer hierarchies are missing
#   hsd_start SECONDS [ARGS]    start tochain-sched with the v1 backend on CPUs
#                               0-1 for at most SECONDS, wait for its socket
#
# tests/lib/common.sh (fail, tc_on_exit, ...) comes with this file.

# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

hsd_cleanup() {
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	[ -n "$dpid" ] && wait "$dpid" 2>/dev/null
	"$sched" --backend v1 --cgroup "$cg" --cleanup 2>/dev/null || true
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
	if ! "$sched" --backend v1 --cgroup "$cg" --cleanup 2>"$tmp/err"; then
		echo "SKIP: no cgroup v1 cpu hierarchy: $(cat "$tmp/err")"; exit 77
	fi
	grep -qw freezer /proc/self/mountinfo || { echo "SKIP: no v1 freezer"; exit 77; }
}

hsd_start() {
	local secs=$1
	shift
	"$sched" --socket "$sock" --backend v1 --cgroup "$cg" --sync-cpus 0-1 "$@" \
		--duration "$secs" --print-every 0 >"$tmp/daemon.log" 2>&1 &
	dpid=$!
	tc_wait_for 5 test -S "$sock" || { cat "$tmp/daemon.log"; fail "no socket"; }
}
