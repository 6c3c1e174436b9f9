#!/usr/bin/env bash
# timeout: 120
#
# The evaluation's measuring tools, without a chain:
#   - eval/ev_threads.py splits perf samples by role and system call
#     (the TOE's loop and packet scheduler apart, PIDS filtering);
#   - eval/ev_engines.py counts the samples that ran on an IDS/WAF
#     engine's behalf by call chain (ModSecurity's malloc in libc is the
#     engine's; PCRE2's JIT is, wrk's LuaJIT is not);
#   - eval/ev_proc.py counts a role's CPU time and context switches
#     wherever its threads live: a busy process (and its child) moved out
#     of the cgroup it started in, as tochain-sched moves VNF threads, is
#     still counted for its role; a process no role started is not; a
#     stopped role uses nothing; `run` reports a command's own rusage.
#   - bench's open-loop generator ev-load against nginx in a namespace:
#     every request sent at a low rate is answered (done = sent, nginx's
#     access log has them all); 404s and refused connections are errors,
#     not answers; bad options exit 2 with a message.
# No timing is asserted: only counts, and CPU > 0 / = 0.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"

tc_need_root "network namespaces and cgroups"
tc_need_cmds nginx python3
load=$build/bench/bin/ev-load
[ -x "$load" ] || fail "$load not built"
proc=$top/eval/ev_proc.py
tc_init
dir=$(mktemp -d /tmp/tc902.XXXXXX)
chmod 755 "$dir"
tc_on_exit 'rm -rf "$dir"'

# --- ev_proc.py ---
cg=/sys/fs/cgroup/cpuacct
[ -d "$cg" ] || cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$cg" ] && [ -d "$cg" ] || fail "no cgroup mount"
mkdir -p "$cg/tc902-$$/a" "$cg/tc902-$$/b"
tc_on_exit "for i in \$(seq 30); do rmdir $cg/tc902-$$/a $cg/tc902-$$/b $cg/tc902-$$ 2>/dev/null && break; sleep 0.1; done"
# busy: a shell whose child spins; idle: sleeps
bash -c 'echo $$ >"$0/cgroup.procs"; exec bash -c "while :; do :; done & wait"' "$cg/tc902-$$/a" &
busy=$!
tc_on_exit "kill -9 $busy 2>/dev/null; wait $busy 2>/dev/null"
sleep 100 &
idle=$!
tc_on_exit "kill $idle 2>/dev/null"
bash -c 'while :; do :; done' &
stranger=$!
tc_on_exit "kill -9 $stranger 2>/dev/null"
tc_wait_for 5 pgrep -P "$busy" >/dev/null || fail "busy child did not start"
child=$(pgrep -P "$busy")
tc_on_exit "kill -9 $child 2>/dev/null"
printf 'busy %s\nidle %s\n' "$busy" "$idle" >"$dir/roles"
python3 "$proc" snap "$dir/roles" >"$dir/snap"
# the spinning child leaves the cgroup its role started in
echo "$child" >"$cg/tc902-$$/b/cgroup.procs"
sleep 1
python3 "$proc" diff "$dir/roles" "$dir/snap" >"$dir/diff"
cat "$dir/diff"
[ "$(wc -l <"$dir/diff")" = 2 ] || fail "diff: want one line per role"
read -r r cpu sys csw < <(sed -n 1p "$dir/diff")
[ "$r" = busy ] && [ "$cpu" -gt 0 ] && [ "$sys" -ge 0 ] && [ "$sys" -le "$cpu" ] && [ "$csw" -ge 0 ] ||
	fail "busy role (its child moved to another cgroup) not counted: $r $cpu $sys $csw"
read -r r cpu sys csw < <(sed -n 2p "$dir/diff")
[ "$r" = idle ] && [ "$cpu" = 0 ] || fail "idle role used CPU: $r $cpu"
# the stranger (no role) is in no line; pids lists the roles' processes only
pids=$(python3 "$proc" pids "$dir/roles")
case ",$pids," in *",$child,"*) ;; *) fail "pids lacks the busy child: $pids" ;; esac
case ",$pids," in *",$stranger,"*) fail "pids lists a process of no role: $pids" ;; esac
python3 "$proc" run "$dir/ru" -- bash -c 'i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done'
read -r cpu sys csw <"$dir/ru"
[ "$cpu" -gt 0 ] && [ "$sys" -le "$cpu" ] || fail "run: rusage $cpu $sys $csw"
rc=0
python3 "$proc" bogus 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "ev_proc.py with a bad command: exit $rc, want 2"

# --- ev_threads.py: roles and system calls from perf script text ---
# TOE 100 (loop 100, packet scheduler 101, a quiet thread 102), a VNF
# thread, and a TOE 200 of another configuration that PIDS leaves out.
smp() { # COMM PID/TID FRAME... (leaf first): one sample
	printf '%s %s\n' "$1" "$2"
	shift 2
	for f in "$@"; do printf '\tffff %s ([kernel.kallsyms])\n' "$f"; done
	printf '\n'
}
{
	for i in 1 2 3; do smp tochain-toe 100/101 try_to_wake_up futex_wake __x64_sys_futex do_syscall_64; done
	smp tochain-toe 100/101 ch_psched_poll
	for i in 1 2; do smp tochain-toe 100/100 finish_task_switch __x64_sys_epoll_wait do_syscall_64; done
	smp tochain-toe 100/102 finish_task_switch
	smp svc0 300/301 vnf_recv
	for i in 1 2 3 4 5; do smp tochain-toe 200/201 ch_psched_poll; done
} >"$dir/perf.txt"
python3 "$top/eval/ev_threads.py" 1000 2 100,300 <"$dir/perf.txt" >"$dir/thr.txt"
grep -q '^TOE packet scheduler  *0\.0040 CPU-ms/req' "$dir/thr.txt" ||
	fail "ev_threads: the scheduler's 4 samples: $(cat "$dir/thr.txt")"
grep -q '0\.0030  *75\.0%  futex: try_to_wake_up' "$dir/thr.txt" ||
	fail "ev_threads: its futex calls: $(cat "$dir/thr.txt")"
grep -q '^TOE loop  *0\.0020 CPU-ms/req' "$dir/thr.txt" &&
	grep -q 'epoll_wait: finish_task_switch' "$dir/thr.txt" ||
	fail "ev_threads: the loop: $(cat "$dir/thr.txt")"
grep -q '^TOE other threads  *0\.0010' "$dir/thr.txt" &&
	grep -q '^VNF service threads  *0\.0010' "$dir/thr.txt" ||
	fail "ev_threads: other roles: $(cat "$dir/thr.txt")"
# without PIDS, TOE 200's thread is counted too
# (into a file: grep -q would close the pipe early, and with pipefail the
# writer's broken pipe fails the check)
python3 "$top/eval/ev_threads.py" 1000 <"$dir/perf.txt" >"$dir/thr-all.txt"
grep -q '^TOE packet scheduler  *0\.0090' "$dir/thr-all.txt" ||
	fail "ev_threads without PIDS: $(cat "$dir/thr-all.txt")"
for bad in "0" "x" "10 0" "10 2 1 extra"; do
	rc=0
	# shellcheck disable=SC2086
	python3 "$top/eval/ev_threads.py" $bad </dev/null 2>/dev/null || rc=$?
	[ $rc = 2 ] || fail "ev_threads.py $bad: exit $rc, want 2"
done

# --- ev_engines.py: a sample is an engine's when an engine frame is anywhere in its stack ---
frame() { printf '\tffff %s (%s)\n' "$1" "$2"; }
{
	# ModSecurity's malloc: a libc leaf under libmodsecurity
	for i in 1 2; do
		printf 'nginx 400/400\n'
		frame malloc /usr/lib/x86_64-linux-gnu/libc.so.6
		frame modsecurity::Rule::evaluate /usr/lib/x86_64-linux-gnu/libmodsecurity.so.3.0.9
		printf '\n'
	done
	printf 'nginx 400/400\n'; frame '[unknown]' '[JIT] tid 400'; printf '\n'	# PCRE2's JIT
	printf 'nginx 400/400\n'; frame '[unknown]' '/tmp/perf-400.map'; printf '\n'	# the same, as perf 6.1 names it
	printf 'wrk 500/501\n'; frame '[unknown]' '/tmp/perf-500.map'; printf '\n'	# LuaJIT: not an engine
	printf 'nginx 400/400\n'; frame ngx_http_process_request /usr/sbin/nginx; printf '\n'
	printf 'wrk 500/501\n'; frame '[unknown]' '[JIT] tid 501'; printf '\n'	# LuaJIT: not an engine
	printf 'svc0 600/601\n'; frame hs_scan /usr/lib/x86_64-linux-gnu/libhs.so.5; printf '\n'
} >"$dir/perf-eng.txt"
python3 "$top/eval/ev_engines.py" 400,500 <"$dir/perf-eng.txt" >"$dir/eng.txt"
[ "$(cat "$dir/eng.txt")" = "$(printf 'nginx\t5\t4\nwrk\t2\t0')" ] ||
	fail "ev_engines with PIDS: $(cat "$dir/eng.txt")"
python3 "$top/eval/ev_engines.py" <"$dir/perf-eng.txt" >"$dir/eng-all.txt"
grep -q "^svc0	1	1$" "$dir/eng-all.txt" || fail "ev_engines without PIDS: $(cat "$dir/eng-all.txt")"
rc=0
python3 "$top/eval/ev_engines.py" 1 2 </dev/null 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "ev_engines.py with two arguments: exit $rc, want 2"

# --- ev-load ---
tc_isolated srvns srv
mkdir -p "$dir/www/1k" "$dir/logs"
head -c 1024 /dev/zero | tr '\0' a >"$dir/www/1k/x"
chmod -R a+rX "$dir"
cat >"$dir/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
	log_format ev '\$msec \$status';
	access_log $dir/logs/access.log ev;
	server { listen 127.0.0.1:8080; root $dir/www; }
}
EOF
ip netns exec "$srvns" nginx -p "$dir" -c "$dir/nginx.conf" &
tc_on_exit "kill $! 2>/dev/null"
tc_wait_port "$srvns" 127.0.0.1 8080 || fail "nginx did not start"
: >"$dir/logs/access.log"

ev_load() { # ev-load OPTIONS in the server's namespace
	ip netns exec "$srvns" "$load" "$@"
}
kv() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"; }

out=$(ev_load -a 127.0.0.1:8080 -p /1k/x -r 50 -d 2 -g 20)
echo "$out"
[[ $out == EVLOAD\ * ]] || fail "no EVLOAD line"
[ "$(kv sent "$out")" = 100 ] || fail "50/s for 2 s: want 100 sent"
[ "$(kv done "$out")" = 100 ] || fail "not every request answered"
[ "$(kv errors "$out")" = 0 ] && [ "$(kv unsent "$out")" = 0 ] && [ "$(kv unanswered "$out")" = 0 ] ||
	fail "errors, unsent or unanswered requests"
[ "$(kv p99_us "$out")" -ge "$(kv p50_us "$out")" ] || fail "p99 below p50"
n=$(awk '$2 == 200' "$dir/logs/access.log" | wc -l)
[ "$n" = 100 ] || fail "nginx logged $n requests, want 100"

out=$(ev_load -a 127.0.0.1:8080 -p /1k/nothere -r 20 -d 1 -g 20)
echo "$out"
[ "$(kv done "$out")" = 0 ] && [ "$(kv errors "$out")" = 20 ] || fail "404s are not errors"

out=$(ev_load -a 127.0.0.1:8081 -r 20 -d 1 -g 5)
echo "$out"
[ "$(kv done "$out")" = 0 ] && [ "$(kv errors "$out")" -gt 0 ] || fail "refused connections are not errors"

for bad in "-r 10 -d 1" "-a 127.0.0.1:8080 -d 1" "-a 127.0.0.1:8080 -r 0 -d 1" \
	"-a 127.0.0.1:8080 -r abc -d 1" "-a 127.0.0.1 -r 10 -d 1" "-a 1.2.3.400:80 -r 10 -d 1" \
	"-a 127.0.0.1:8080 -r 10 -d 1 -p nopath"; do
	rc=0
	# shellcheck disable=SC2086
	"$load" $bad >/dev/null 2>"$dir/err" || rc=$?
	[ $rc = 2 ] && [ -s "$dir/err" ] || fail "ev-load $bad: exit $rc, want 2 with a message"
done
echo PASS
