# shellcheck shell=bash
# Shell helpers every test script shares (source it; tests/lib/netns.sh
# sources it too, so scripts that build namespaces need not).
#
#   fail MSG...              print "FAIL: MSG", then run what tc_on_fail
#                            registered (logs that explain it), exit 1
#   tc_on_fail CMD...        run CMD (eval) when fail is called, in order
#   tc_on_exit CMD...        run CMD (eval) at exit, the newest first, also
#                            on failure and on SIGINT/SIGTERM (the first call
#                            installs the traps; a signal runs what
#                            tc_on_fail registered first); its output is
#                            discarded
#   tc_wait_for SECS CMD...  run CMD every 0.1 s until it succeeds; status 1
#                            if it did not within SECS
#   tc_wait_exit SECS PID    wait until PID has exited; status 1 if it still
#                            runs after SECS
#   tc_need_root [WHY]       SKIP (exit 77) unless root ("needs root for WHY")
#   tc_need_cmds CMD...      SKIP (exit 77) unless every CMD is on PATH
#
# Call tc_on_exit and tc_on_fail directly, not in $(...): they record
# what to do in this shell.

[ -n "${TC_COMMON_SH:-}" ] && return 0
TC_COMMON_SH=1
TC_EXIT_CMDS=()
TC_FAIL_CMDS=()
TC_TRAPPED=

fail() {
	echo "FAIL: $*"
	tc_fail_cmds
	exit 1
}

# tc_fail_cmds: run what tc_on_fail registered (fail and tc_killed).
tc_fail_cmds() {
	local c
	for c in "${TC_FAIL_CMDS[@]}"; do
		eval "$c" || true
	done
}

tc_on_fail() {
	TC_FAIL_CMDS+=("$*")
}

tc_on_exit() {
	tc_trap
	TC_EXIT_CMDS+=("$*")
}

# tc_trap: install the EXIT trap (and make SIGINT/SIGTERM exit through it).
tc_trap() {
	[ -n "$TC_TRAPPED" ] && return 0
	TC_TRAPPED=1
	trap tc_cleanup EXIT
	trap 'tc_killed INT' INT
	trap 'tc_killed TERM' TERM
}

# tc_killed SIG: a test stopped from outside (run-tests.sh's time limit
# sends SIGTERM) shows what tc_on_fail registered, as fail does.
tc_killed() {
	echo "FAIL: SIG$1 (the time limit?)"
	tc_fail_cmds
	exit 130
}

tc_cleanup() {
	local rc=$? i
	for ((i = ${#TC_EXIT_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${TC_EXIT_CMDS[$i]}" >/dev/null 2>&1 || true
	done
	return $rc
}

tc_wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

tc_wait_exit() {
	tc_wait_for "$1" tc_not_running "$2"
}

tc_not_running() {
	! kill -0 "$1" 2>/dev/null
}

tc_need_root() {
	[ "$(id -u)" = 0 ] && return 0
	echo "SKIP: needs root${1:+ for $1}"
	exit 77
}

tc_need_cmds() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || { echo "SKIP: $c not installed"; exit 77; }
	done
}

# tc_patched_qemu: the patched QEMU of qemu-patches/, built when the cache
# lacks it (scripts/run-tests.sh starts that build in the background for
# tests marked "# needs: patched-qemu", so here it is usually found at
# once).  Sets QEMU (and QEMU_SOURCE_VERSION, QEMU_SERIES) from its env
# file and TC_QEMU_DIR to its directory.  SKIPs only when Debian's source
# package cannot be fetched at all (no archive reachable); any other
# failure fails the test.
tc_patched_qemu() {
	local rc=0
	TC_QEMU_DIR=$("${TOCHAIN_TOP:-$top}/qemu-patches/build-qemu.sh") || rc=$?
	if [ $rc -eq 3 ]; then
		echo "SKIP: Debian's source package of QEMU cannot be fetched here"
		exit 77
	fi
	[ $rc -eq 0 ] || fail "qemu-patches/build-qemu.sh exited $rc"
	# shellcheck disable=SC1090,SC1091
	. "$TC_QEMU_DIR/env"
}

# tc_user_runtime DIR: copies tochain-run and the preload library to
# DIR/rt/{bin,lib} (755/644) and prints the copy of tochain-run, for
# guest processes of users other than root: the build tree may sit where
# only root may enter (a clone under mktemp -d, as fresh-check's).
tc_user_runtime() {
	mkdir -m 755 "$1/rt" "$1/rt/bin" "$1/rt/lib" &&
		install -m 755 "$build/bin/tochain-run" "$1/rt/bin/" &&
		install -m 644 "$build/lib/libtochain-preload.so" "$1/rt/lib/" &&
		echo "$1/rt/bin/tochain-run"
}
