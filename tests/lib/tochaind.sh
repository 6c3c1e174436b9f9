# Shell helpers for the tochaind tests (tests/integration/21x_*.sh): a
# tochaind of the test's own (state, socket, fabric namespace, regions in
# $work), stand-in VMs as guest namespaces running programs under
# tochain-run, and a client namespace on the fabric bridge.  Source after
# tests/lib/netns.sh; needs $build.
#
#   td_setup NAME        $work, fabric $fab, tochaind started ($TOCHAIN_SOCKET);
#                        fail shows the logs of the daemon, TOEs and servers
#   td_daemon [--foreground LOG] OPTIONS...
#                        tochaind --state-dir $work/state --socket
#                        $TOCHAIN_SOCKET OPTIONS: serving when this returns;
#                        --foreground: in the background with stderr
#                        appended to LOG, pid in $TD_PID, fails unless it
#                        answers within 10 s
#   td_start             (re)start tochaind on the same state (td_setup's),
#                        with $TD_OPTS (words) added when set
#   td_kill9             SIGKILL tochaind
#   sfc ARGS...          sfc-ctl against it
#   td_field KIND NAME KEY   a field of `sfc-ctl --json KIND show NAME`
#   td_client ADDR       client namespace CL on the fabric with ADDR/24
#   td_serve VM DIR PORT python3 http.server under tochain-run on VM's region
#                        in a fresh guest namespace; pid in $PY
#   td_json EXPR         python3 expression over the JSON on stdin (as j)
#   td_running PID       PID is a process that has not exited (a zombie
#                        has: orphans wait for pid 1 to reap them)

td_setup() {
	build=$(cd "$build" && pwd)
	tc_init
	work=$(mktemp -d /dev/shm/tc$1.XXXXXX)
	fab=tcf$1-$TC_SUFFIX
	fab=${fab:0:20}
	export TOCHAIN_SOCKET=$work/ctl.sock
	tc_on_exit td_cleanup
	tc_on_fail td_fail_logs
	td_start
}

td_daemon() {
	local log
	if [ "${1:-}" = --foreground ]; then
		log=$2
		shift 2
		"$build/bin/tochaind" --foreground --state-dir "$work/state" --socket "$TOCHAIN_SOCKET" \
			"$@" 2>>"$log" &
		TD_PID=$!
		tc_wait_for 10 test -S "$TOCHAIN_SOCKET" || true
		sfc version >/dev/null || fail "tochaind does not answer"
	else
		"$build/bin/tochaind" --state-dir "$work/state" --socket "$TOCHAIN_SOCKET" "$@"
	fi
}

td_start() {
	td_daemon --fabric-ns "$fab" --bridge tcbr0 --region-dir "$work/regions" \
		--sched-socket "$work/no-sched.sock" ${TD_OPTS:-}
}

td_pid() {
	pgrep -f "tochaind --state-dir $work/state" || true
}

td_kill9() {
	local p
	p=$(td_pid)
	[ -n "$p" ] && kill -9 $p
	sleep 0.2
}

td_cleanup() {
	local c v
	for c in $(sfc --json chain ls 2>/dev/null | td_json '" ".join(c["name"] for c in j["chains"])' 2>/dev/null); do
		sfc chain del "$c" || true
	done
	for v in $(sfc --json vm ls 2>/dev/null | td_json '" ".join(v["name"] for v in j["vms"])' 2>/dev/null); do
		sfc vm del "$v" || true
	done
	p=$(td_pid)
	[ -n "$p" ] && kill $p
	# VNF instances a failed test left (their command line names $work)
	pkill -9 -f "tochain-vnf --kind [a-z]* --region $work/" || true
	pkill -9 -f "tochain-toe --region $work/" || true
	ip netns del "$fab" 2>/dev/null || true
	for n in $(ip netns list | awk '{print $1}' | grep "^$fab-"); do ip netns del "$n"; done
	rm -rf "$work"
}

# To capture what it says, (sfc ...) 2>FILE: a redirect on a function call
# is the shell's own, and bash's notice of a background job it reaps
# meanwhile ("... Killed") would land in FILE too.
sfc() { "$build/bin/sfc-ctl" "$@"; }

td_running() {
	local st
	st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

td_json() {
	python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"
}

td_field() {
	sfc --json "$1" show "$2" | td_json "j['$3']"
}

# td_fail_logs: what fail shows after its line (TD_KEEP=1 keeps a copy of $work).
td_fail_logs() {
	local f
	[ -n "${TD_KEEP:-}" ] && cp -r "$work" /tmp/td-keep
	# each TOE's counters (SIGUSR1: a stats line in its log, buffers too;
	# a TOE whose loop is stuck prints none)
	pkill -USR1 -f "tochain-toe --region $work/" && sleep 0.3
	for f in "$work"/py-*.log "$work"/state/toe-*.log "$work"/state/vnf-*.log; do
		[ -f "$f" ] && { echo "== $f"; tail -5 "$f"; }
	done
	[ -f "$work/state/tochaind.log" ] && tail -20 "$work/state/tochaind.log"
}

td_client() {
	TC_FABRIC=$fab TC_BRIDGE=tcbr0 tc_host CL cl "$1/24"
}

td_serve() {
	local vm=$1 dir=$2 port=$3 region
	region=$(td_field vm "$vm" region)
	tc_isolated GU gu$vm
	(cd "$dir" && exec ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" -- \
		python3 -m http.server --bind 0.0.0.0 "$port") >"$work/py-$vm.log" 2>&1 &
	PY=$!
	tc_on_exit "kill -9 $PY"
}

# td_stop_check: stop tochaind (SIGTERM) and fail on sanitizer reports in its log.
td_stop_check() {
	local p
	p=$(td_pid)
	[ -n "$p" ] || fail "tochaind is not running"
	kill $p
	tc_wait_exit 5 "$p" || fail "tochaind ignored SIGTERM"
	if grep -q "runtime error\|AddressSanitizer\|LeakSanitizer" "$work/state/tochaind.log"; then
		grep -A5 "runtime error\|Sanitizer" "$work/state/tochaind.log" | head -20
		fail "sanitizer report in tochaind's log"
	fi
	td_start
}
