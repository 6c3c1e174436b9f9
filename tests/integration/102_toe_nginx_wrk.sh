#!/usr/bin/env bash
# timeout: 120
# Unmodified nginx (master + 2 forked workers, epoll, sendfile) under
# tochain-run in the stand-in VM: curl fetches a page and a 1 MiB file
# (sha256 checked), then wrk -c 64 -d 10s must finish with zero socket
# errors and only 2xx answers.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds ip nginx wrk curl sha256sum

tt_netns 102 10.81.0
chmod 755 $work
mkdir -p $work/www $work/tmp
echo "hello from the stand-in VM" >$work/www/index.html
head -c $((1 << 20)) /dev/urandom >$work/www/big.bin
cat >$work/nginx.conf <<CONF
daemon off;
master_process on;
worker_processes 2;
error_log $work/error.log notice;
pid $work/nginx.pid;
events { worker_connections 512; }
http {
	access_log off;
	sendfile on;
	client_body_temp_path $work/tmp;
	proxy_temp_path $work/tmp;
	fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp;
	scgi_temp_path $work/tmp;
	server { listen 8080; root $work/www; }
}
CONF

tt_toe_start "$VM" vm102

tt_guest_bg nginx.out nginx -c $work/nginx.conf -p $work
ngx=$GPID
tc_on_exit "pkill -9 -F $work/nginx.pid"
tc_wait_port "$CL" 10.81.0.2 8080 15

page=$(ip netns exec "$CL" curl -sS --max-time 5 http://10.81.0.2:8080/)
[ "$page" = "hello from the stand-in VM" ] || fail "page: $page"
want=$(sha256sum <$work/www/big.bin | cut -d' ' -f1)
got=$(ip netns exec "$CL" curl -sS --max-time 10 http://10.81.0.2:8080/big.bin | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "sha256 of big.bin differs"

ip netns exec "$CL" wrk -c 64 -t 2 -d 10s http://10.81.0.2:8080/ >$work/wrk.txt 2>&1
cat $work/wrk.txt
grep -q 'requests in' $work/wrk.txt || fail "wrk did not run"
if grep -Eq 'Socket errors|Non-2xx' $work/wrk.txt; then
	echo "FAIL: errors under load"; tail $work/error.log; exit 1
fi
reqs=$(awk '/requests in/ {print $1}' $work/wrk.txt)
[ "$reqs" -gt 1000 ] || fail "only $reqs requests"
kill -0 $TOE || fail "TOE died"

# The guest dies (master and workers): the TOE closes the sockets only
# they held, so the listener goes.
ip netns pids "$GU" | xargs -r kill -9
sleep 0.5
if ip netns exec "$CL" curl -s --max-time 2 -o /dev/null http://10.81.0.2:8080/; then
	fail "the listener of a dead guest still accepts"
fi
kill -0 $TOE || fail "TOE died with its guest"
echo PASS
