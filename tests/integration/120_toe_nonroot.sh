#!/usr/bin/env bash
# timeout: 180
# Guest users other than root (issue 17).  A TOE started with
# --guest-mode 0666 gives its region file and attach socket to every user
# of the stand-in VM; then, under tochain-run in the guest namespace:
#   1. /usr/bin/python3 -m http.server started as nobody (setpriv) serves 1 MiB;
#   2. a daemon that drops to nobody before its first socket call, binds,
#      and forks a child per connection (ForkingTCPServer) serves it;
#   3. a daemon that binds port 81 as root, then drops to nobody, serves;
#   4. nginx with `user www-data;` workers serves it.
# Each fetch's sha256 must match.  Before, with the TOE's default modes
# (owner only, checked at the end), socket() as nobody fails with ENETDOWN.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces, setuid"
tc_need_cmds ip /usr/bin/python3 curl sha256sum setpriv nginx
getent passwd nobody www-data >/dev/null || { echo "SKIP: no nobody/www-data users"; exit 77; }

tt_netns 120 10.81.0
tc_on_fail "tail -n 15 $work/*.log"
chmod 711 $work	# guest users reach the region and the socket, nothing else
mkdir -m 755 $work/www $work/tmp
head -c $((1 << 20)) /dev/urandom >$work/www/mid.bin
chmod 644 $work/www/mid.bin
want=$(sha256sum <$work/www/mid.bin | cut -d' ' -f1)

fetch_ok() {	# PORT WHAT
	local got
	got=$(ip netns exec "$CL" curl -sS --max-time 20 "http://10.81.0.2:$1/mid.bin" | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$2: sha256 differs"
	echo "ok: $2"
}

# the runtime where the guest's users can read it
TT_RUN=$(tc_user_runtime $work) || fail "copy of the runtime"

# the owner of the process serving PORT in the guest must be USER
check_user() {	# PID USER
	local u
	u=$(ps -o user= -p "$1" | tr -d ' ')
	[ "$u" = "$2" ] || fail "pid $1 runs as '$u', expected $2"
}

tt_toe_start "$VM" vm120 --guest-mode 0666
[ "$(stat -c %a "$region")" = 666 ] || fail "region mode $(stat -c %a "$region")"
[ "$(stat -c %a "$region.sock")" = 666 ] || fail "socket mode $(stat -c %a "$region.sock")"

# 1. started as nobody
tt_guest_bg --cd $work/www py1.log setpriv --reuid nobody --regid nogroup --clear-groups \
	/usr/bin/python3 -m http.server --bind 0.0.0.0 8081
tc_wait_port "$CL" 10.81.0.2 8081 15 || fail "port 8081 did not open"
check_user $(pgrep -P $GPID -f http.server || echo $GPID) nobody
fetch_ok 8081 "http.server started as nobody"
fetch_ok 8081 "http.server started as nobody, again"

# 2. drops privileges before any socket, forks per connection
cat >$work/drop_first.py <<'PY'
import http.server, os, pwd, socketserver, sys
pw = pwd.getpwnam("nobody")
os.setgroups([]); os.setgid(pw.pw_gid); os.setuid(pw.pw_uid)
class S(socketserver.ForkingMixIn, http.server.HTTPServer):
    pass
S(("0.0.0.0", int(sys.argv[1])), http.server.SimpleHTTPRequestHandler).serve_forever()
PY
tt_guest_bg --cd $work/www py2.log /usr/bin/python3 $work/drop_first.py 8082
tc_wait_port "$CL" 10.81.0.2 8082 15 || fail "port 8082 did not open"
fetch_ok 8082 "setuid(nobody) before the first socket, forking server"
fetch_ok 8082 "forking server, second child"

# 3. binds a privileged port as root, then drops
cat >$work/drop_after.py <<'PY'
import http.server, os, pwd
srv = http.server.ThreadingHTTPServer(("0.0.0.0", 81), http.server.SimpleHTTPRequestHandler)
pw = pwd.getpwnam("nobody")
os.setgroups([]); os.setgid(pw.pw_gid); os.setuid(pw.pw_uid)
srv.serve_forever()
PY
tt_guest_bg --cd $work/www py3.log /usr/bin/python3 $work/drop_after.py
tc_wait_port "$CL" 10.81.0.2 81 15 || fail "port 81 did not open"
fetch_ok 81 "bind :81 as root, then setuid(nobody)"

# 4. nginx, workers as www-data
cat >$work/nginx.conf <<CONF
daemon off;
master_process on;
user www-data;
worker_processes 2;
error_log $work/error.log notice;
pid $work/nginx.pid;
events { worker_connections 64; }
http {
	access_log off;
	sendfile on;
	client_body_temp_path $work/tmp;
	proxy_temp_path $work/tmp;
	fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp;
	scgi_temp_path $work/tmp;
	server { listen 8084; root $work/www; }
}
CONF
tt_guest_bg --cd $work/www nginx.log nginx -c $work/nginx.conf -p $work
tc_on_exit "pkill -9 -F $work/nginx.pid"
tc_wait_port "$CL" 10.81.0.2 8084 15 || fail "port 8084 did not open"
[ "$(ps -o user= --ppid "$(cat $work/nginx.pid)" | sort -u | tr -d ' ')" = www-data ] ||
	fail "nginx workers are not www-data"
for i in 1 2 3 4; do fetch_ok 8084 "nginx worker as www-data ($i)"; done

pkill -9 -F $work/nginx.pid
ip netns pids "$GU" | xargs -r kill -9
tt_toe_stop || fail "TOE stop"

# Without --guest-mode (a new region: an existing file keeps its mode) the files are the TOE user's: nobody gets ENETDOWN.
region=$work/region2
tt_toe_start "$VM" vm120
[ "$(stat -c %a "$region")" = 600 ] || fail "default region mode $(stat -c %a "$region")"
out=$(cd $work && tt_guest setpriv --reuid nobody --regid nogroup --clear-groups \
	/usr/bin/python3 -c '
import errno, socket
try:
    socket.socket()
    print("created")
except OSError as e:
    print(errno.errorcode[e.errno])' 2>&1)
[ "$out" = ENETDOWN ] || fail "nobody without --guest-mode: $out"
echo "ok: default modes refuse nobody ($out)"

# Bad modes are refused where they enter.
for m in 0777 4666 0066 abc; do
	if "$build/bin/tochain-toe" --region $work/x --name x --guest-mode $m 2>$work/bad.err; then
		fail "--guest-mode $m accepted"
	fi
	grep -q "bad --guest-mode" $work/bad.err || fail "--guest-mode $m: $(cat $work/bad.err)"
done
tt_toe_stop || fail "TOE stop"
echo PASS
