# shellcheck shell=bash
# Shell helpers for the trap-path tests (tests/integration/121_*, 122_*)
# and bench/21_*: a server started under tochain-run in the stand-in VM
# (tests/lib/toe.sh: $GU, $CL, $region, $TOE, $work), fetched through
# the TOE, its supervisor and the TOE's counters.  Source after toe.sh.
#
#   tp_toe_stats            one fresh line of the TOE's counters (SIGUSR1)
#   tp_stat NAME            the counter NAME of a stats line on stdin
#   tp_toe_idle             the TOE holds no channel and no socket, within 10 s
#   tp_supervisors          pids of the trap path's supervisors serving $region
#   tp_check_server NAME ADDR PORT URLPATH SHA256 TOCHAIN-RUN-ARGS...
#                           start tochain-run ARGS in $GU (log $work/NAME.log),
#                           wait for ADDR:PORT, check that a supervisor serves
#                           it, fetch URLPATH three times from $CL (sha256 must
#                           match, the TOE's bytes_out must grow by as much),
#                           kill the server: its supervisor exits, the TOE
#                           is left idle
#   tp_unreachable NAME ADDR PORT URLPATH CMD...
#                           CMD in $GU listens on PORT, unreachable from $CL

# more than N stats lines in the TOE's log (re-read at every try)
tp_stats_past() { [ "$(grep -c 'stats:' $work/toe.log)" -gt "$1" ]; }

# (called in $(...): says why on stderr and returns 1, the caller fails)
tp_toe_stats() {
	local n
	n=$(grep -c 'stats:' $work/toe.log || true)
	kill -USR1 $TOE
	tc_wait_for 5 tp_stats_past "$n" || { echo "FAIL: no TOE stats within 5 s" >&2; return 1; }
	grep 'stats:' $work/toe.log | tail -n 1
}

tp_stat() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

tp_toe_idle() {
	local i line
	for i in $(seq 50); do
		line=$(tp_toe_stats) || return 1
		case $line in *"channels_open=0 sockets_open=0 "*) return 0;; esac
		sleep 0.2
	done
	echo "TOE still holds: $line"
	return 1
}

tp_supervisors() {
	local p
	for p in $(pgrep -f -- '--trap-serve' || true); do
		tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -qx "TOCHAIN_REGION=$region" && echo $p
	done
	return 0
}

tp_no_supervisor() { [ -z "$(tp_supervisors)" ]; }

tp_check_server() {
	local name=$1 addr=$2 port=$3 path=$4 want=$5 i got out0 out1 size pid
	shift 5
	ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" "$@" >$work/$name.log 2>&1 &
	pid=$!
	tc_on_exit "kill -9 $pid"
	tc_on_fail "echo '--- $name'; cat $work/$name.log; tail -n 5 $work/toe.log"
	tc_wait_port "$CL" $addr $port 20 || fail "$name: port $port did not open"
	[ -n "$(tp_supervisors)" ] || fail "$name: no supervisor: not on the trap path"
	out0=$(tp_toe_stats | tp_stat bytes_out) || fail "$name: no TOE counters"
	for i in 1 2 3; do
		got=$(ip netns exec "$CL" curl -sS --max-time 30 -o $work/$name.got \
			-w '%{size_download}' http://$addr:$port$path) || fail "$name: fetch $i failed"
		size=$got
		got=$(sha256sum <$work/$name.got | cut -d' ' -f1)
		[ "$got" = "$want" ] || fail "$name: fetch $i: sha256 $got, want $want"
	done
	out1=$(tp_toe_stats | tp_stat bytes_out) || fail "$name: no TOE counters"
	echo "$name: 3 fetches of $size bytes ok, TOE bytes_out +$((out1 - out0))"
	[ $((out1 - out0)) -ge $((3 * size)) ] || fail "$name: the TOE did not send the file"
	kill $pid
	wait $pid 2>/dev/null || true
	tc_wait_for 10 tp_no_supervisor || fail "$name: supervisor still runs after the server"
	tp_toe_idle || fail "$name: TOE holds channels or sockets after the server"
}

# tp_unreachable NAME ADDR PORT URLPATH CMD...: CMD, run in $GU (log
# $work/NAME.log), says "listening PORT", yet ADDR:PORT is unreachable
# from $CL: its sockets are the kernel's, in a namespace with nothing but
# loopback.
tp_unreachable() {
	local name=$1 addr=$2 port=$3 path=$4 pid
	shift 4
	ip netns exec "$GU" "$@" >$work/$name.log 2>&1 &
	pid=$!
	tc_on_exit "kill -9 $pid"
	tc_wait_for 10 grep -q "listening $port" $work/$name.log ||
		fail "$name: did not start: $(cat $work/$name.log)"
	if ip netns exec "$CL" curl -s --max-time 2 -o /dev/null http://$addr:$port$path; then
		fail "$name: reachable, its sockets reached the host"
	fi
	kill $pid
	wait $pid 2>/dev/null || true
}
