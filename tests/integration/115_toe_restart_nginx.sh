#!/usr/bin/env bash
# timeout: 300
# Processes that shared a listener before a TOE restart share it again
# after it (host-toe/toe/toe_join.c, guest-lib/gl_revive.c).  Unmodified
# nginx (master + 2 workers, as 102/110 run it) under tochain-run in a
# stand-in VM serves a 256 KiB file; the TOE is killed with SIGKILL and
# a new one started on the same region.  Each of nginx's three processes
# re-creates the listener; before the fix the first bind won and the
# others' copies stayed closed, so when the master won nobody served
# (the fault soak's "toe NOT recovered").  The workers run as nobody, so
# the TOE lets that user's group in (--guest-mode, --guest-group): they
# attach to the new TOE themselves.  Now the same master and
# workers (PIDs) must serve the file (sha256) afterwards, and each
# worker must hold the listener: with the worker that served stopped
# (SIGSTOP), the other one serves.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds ip nginx curl sha256sum pgrep

tt_netns 115 10.81.15
chmod 755 $work
tc_on_fail 'tail -n 20 $work/*.log $work/load.out'
# nginx's workers run as nobody: to attach to a new TOE themselves they
# must be let in (tochaind: vm add --guest-mode 0660 --guest-group G)
grp=$(id -gn nobody)
tt_toe_start "$VM" vm115 --guest-mode 0660 --guest-group "$grp"
toe1=$TOE

mkdir -p $work/www $work/tmp
head -c $((256 << 10)) /dev/urandom >$work/www/f.bin
chmod 644 $work/www/f.bin
want=$(sha256sum <$work/www/f.bin | cut -d' ' -f1)
url=http://10.81.15.2:8080/f.bin
cat >$work/nginx.conf <<CONF
daemon off;
master_process on;
worker_processes 2;
error_log $work/error.log notice;
pid $work/nginx.pid;
events { worker_connections 64; }
http {
	log_format bypid '\$pid \$status';
	access_log $work/access.log bypid;
	sendfile on;
	client_body_temp_path $work/tmp;
	proxy_temp_path $work/tmp;
	fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp;
	scgi_temp_path $work/tmp;
	server { listen 8080; root $work/www; }
}
CONF
tt_guest_bg nginx.log nginx -c $work/nginx.conf -p $work
NGX=$GPID
tc_wait_port "$CL" 10.81.15.2 8080 15 || fail "nginx did not listen"
workers() { pgrep -P $NGX | sort | tr '\n' ' '; }
tc_wait_for 10 test "$(workers | wc -w)" = 2 || fail "nginx workers: $(workers)"
w0=$(workers)
tc_on_exit "kill -9 $w0"
grep -q nginx /proc/$NGX/cmdline || fail "pid $NGX is not nginx"
fetch() { ip netns exec "$CL" curl -sS --max-time "${1:-10}" $url | sha256sum | cut -d' ' -f1; }
[ "$(fetch)" = "$want" ] || fail "first fetch: wrong sha256"

tt_load 8 $url $want $work/load.out
sleep 2
t0=$(date +%s.%N)
kill -9 $toe1
wait $toe1 2>/dev/null || true
echo "TOE $toe1 killed"
sleep 1
tt_toe_start "$VM" vm115 --guest-mode 0660 --guest-group "$grp"
for i in $(seq 150); do
	[ "$(fetch 2 2>/dev/null)" = "$want" ] && break
	sleep 0.2
done
[ "$(fetch)" = "$want" ] || fail "nginx does not serve after the TOE restart"
echo "new TOE $TOE; nginx served again $(echo "$(date +%s.%N) - $t0" | bc) s after the kill"
wait $LOAD || true
read -r _ ok _ bad <$work/load.out
echo "curl loop across the kill: $ok good, $bad failed"

grep -q nginx /proc/$NGX/cmdline || fail "pid $NGX is not nginx any more"
[ "$(workers)" = "$w0" ] || fail "nginx workers changed: $w0 -> $(workers)"
echo "the same nginx master (pid $NGX) and workers ($w0) serve after the TOE restart"

# every worker holds the listener: with either one stopped, the other serves
for w in $w0; do
	kill -STOP $w
	tc_on_exit "kill -CONT $w"
	: >$work/access.log
	for i in 1 2 3; do
		[ "$(fetch)" = "$want" ] || fail "fetch $i with worker $w stopped failed"
	done
	by=$(awk '{ print $1 }' $work/access.log | sort -u | tr '\n' ' ')
	kill -CONT $w
	echo "worker $w stopped: served by $by"
	[ -n "$by" ] && ! grep -qw "$w" <<<"$by" || fail "served by '$by'"
done
echo "PASS 115_toe_restart_nginx"
