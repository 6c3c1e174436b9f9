#!/usr/bin/env bash
# timeout: 180
# Programs the preload library cannot reach take the trap path
# (guest-lib/README.md "The trap path"): a statically linked server
# (gcc -static, libc's socket calls) and a dynamically linked one that
# makes every socket call with syscall(__NR_...) serve a 4 MiB file to
# curl through the TOE from the stand-in VM's loopback-only namespace;
# the sha256 must match and the TOE's counters must have carried the
# bytes.  tochain-run takes the static one on the trap path by itself;
# the raw one needs --trap, and without it (preload only) it is
# unreachable: nothing leaks.  When the servers are killed, their
# supervisors exit and the TOE holds no channel and no socket.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip curl sha256sum gcc readelf
tc_need_root "network namespaces"
[ -e "$(gcc -print-file-name=libc.a)" ] || fail "no libc.a: libc6-dev is part of build-essential (make deps)"

tt_netns 121 10.79.121
tt_toe_start "$VM" vm121

gcc -static -O2 -Wall -Werror -o $work/srv-static "$top/tests/progs/trap_server.c"
gcc -O2 -Wall -Werror -DRAW_SYSCALLS -o $work/srv-raw "$top/tests/progs/trap_server.c"
! readelf -l $work/srv-static | grep -q INTERP || fail "srv-static is not static"
readelf -l $work/srv-raw | grep -q INTERP || fail "srv-raw is not dynamic"

head -c $((4 << 20)) /dev/urandom >$work/data.bin
want=$(sha256sum <$work/data.bin | cut -d' ' -f1)

# the TOE's counters, one line
toe_stats() {
	local n
	n=$(grep -c 'stats:' $work/toe.log || true)
	kill -USR1 $TOE
	tc_wait_for 5 test "$(grep -c 'stats:' $work/toe.log)" -gt "$n" || fail "no TOE stats"
	grep 'stats:' $work/toe.log | tail -n 1
}
stat_of() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

# the TOE's counters: no channel and no socket left, within 10 s
toe_idle() {
	local i line
	for i in $(seq 50); do
		line=$(toe_stats)
		case $line in *"channels_open=0 sockets_open=0 "*) return 0;; esac
		sleep 0.2
	done
	echo "TOE still holds: $line"
	return 1
}

supervisors() { # the trap-serve processes of this test's region
	local p
	for p in $(pgrep -f -- '--trap-serve' || true); do
		tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -qx "TOCHAIN_REGION=$region" && echo $p
	done
	return 0
}

check_server() { # NAME PORT TOCHAIN-RUN-ARGS... (then "http PORT FILE")
	local name=$1 port=$2 i got out0 out1 pid
	shift 2
	ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" "$@" http $port $work/data.bin \
		>$work/$name.log 2>&1 &
	pid=$!
	tc_on_exit "kill -9 $pid"
	tc_on_fail "echo '--- $name'; cat $work/$name.log; tail -n 5 $work/toe.log"
	tc_wait_port "$CL" 10.79.121.2 $port 15 || fail "$name: port $port did not open"
	grep -q "listening $port" $work/$name.log || fail "$name: did not say it listens"
	[ -n "$(supervisors)" ] || fail "$name: no supervisor: not on the trap path"
	out0=$(toe_stats | stat_of bytes_out)
	for i in 1 2 3; do
		got=$(ip netns exec "$CL" curl -sS --max-time 30 http://10.79.121.2:$port/data.bin |
			sha256sum | cut -d' ' -f1) || fail "$name: fetch $i failed"
		[ "$got" = "$want" ] || fail "$name: fetch $i: sha256 $got, want $want"
	done
	out1=$(toe_stats | stat_of bytes_out)
	echo "$name: 3 fetches of 4 MiB ok, TOE bytes_out +$((out1 - out0))"
	[ $((out1 - out0)) -ge $((3 * (4 << 20))) ] || fail "$name: the TOE did not send the file"
	kill $pid
	wait $pid 2>/dev/null || true
	tc_wait_for 10 test -z "$(supervisors)" || fail "$name: supervisor still runs after the server"
	toe_idle || fail "$name: TOE holds channels or sockets after the server"
}

# 1. static: tochain-run takes the trap path by itself (it used to warn and run it unoffloaded)
check_server static 8121 -- $work/srv-static
! grep -q warning $work/static.log || fail "static: tochain-run warned: $(cat $work/static.log)"

# 2. raw syscall(): dynamically linked, --trap
check_server raw 8122 --trap -- $work/srv-raw

# 3. the raw one with the preload library only: its sockets are the kernel's, in a
#    namespace with nothing but loopback: unreachable
ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" -- $work/srv-raw http 8123 \
	$work/data.bin >$work/plain.log 2>&1 &
plain=$!
tc_on_exit "kill -9 $plain"
tc_wait_for 5 grep -q "listening 8123" $work/plain.log || fail "plain: did not start: $(cat $work/plain.log)"
if ip netns exec "$CL" curl -s --max-time 2 -o /dev/null http://10.79.121.2:8123/data.bin; then
	fail "raw syscalls without --trap reached the TOE"
fi
kill $plain; wait $plain 2>/dev/null || true

tt_toe_stop
echo PASS
