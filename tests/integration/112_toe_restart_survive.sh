#!/usr/bin/env bash
# timeout: 300
# Guest programs survive a TOE restart without being restarted
# (guest-lib/gl_revive.c, issue 16).  In a stand-in VM, an unmodified
# python3 -m http.server under tochain-run serves a 256 KiB file while
# curl fetches it in a loop; the TOE is killed with SIGKILL and a new one
# started on the same region, as tochaind or an operator would.  The same
# server process must answer afterwards (its PID, the file's sha256);
# failed requests are counted and printed.  A probe program beside it
# (tests/progs/revive_probe.py) shows what the guest program sees: a
# connection open across the kill fails as after a peer's reset (epoll
# reports EPOLLERR|EPOLLHUP, recv ECONNRESET then EOF, send EPIPE, a
# thread blocked in recv gets ECONNRESET instead of hanging), and its
# listening socket comes back on the new TOE under the same fd with its
# epoll registration and SO_REUSEADDR intact.  The client of that
# connection sees it end (EOF or reset), not hang.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip curl sha256sum
tc_need_root "network namespaces"
py=/usr/bin/python3	# Debian's: a dynamically linked program the runtime can preload into
[ -x $py ] || fail "Debian's python3 missing"

tt_netns 112 10.81.12
tc_on_fail 'tail -n 20 $work/*.log $work/client.out $work/probe.out $work/load.out'
tt_toe_start "$VM" vm112
toe1=$TOE

mkdir $work/www
head -c $((256 << 10)) /dev/urandom >$work/www/f.bin
want=$(sha256sum <$work/www/f.bin | cut -d' ' -f1)
url=http://10.81.12.2:8080/f.bin

tt_guest_bg --cd $work/www httpd.log $py -m http.server --bind 0.0.0.0 8080
HTTPD=$GPID
ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" -- \
	$py "$top/tests/progs/revive_probe.py" 8112 >$work/probe.out 2>$work/probe.log &
PROBE=$!
tc_on_exit "kill -9 $PROBE"
tc_wait_port "$CL" 10.81.12.2 8080 15 || fail "http.server did not listen"
tc_wait_for 15 grep -q '^READY' $work/probe.out || fail "the probe did not listen"
grep -q 'http.server' /proc/$HTTPD/cmdline || fail "pid $HTTPD is not the server"
got=$(ip netns exec "$CL" curl -sS --max-time 10 $url | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "first fetch: sha256 $got"

# Two connections to the probe stay open across the kill; the client
# says how each ended ("eof", "reset" or "hang" after 30 s).
ip netns exec "$CL" $py - 10.81.12.2 8112 >$work/client.out 2>$work/client.log <<'PY' &
import socket, sys, time
cs = [socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10) for _ in range(2)]
for i, c in enumerate(cs):
    c.sendall(b"hello%d" % i)
    c.settimeout(30)
print("OPEN", flush=True)
for c in cs:
    try:
        print("eof" if c.recv(100) == b"" else "data", flush=True)
    except ConnectionResetError:
        print("reset", flush=True)
    except socket.timeout:
        print("hang", flush=True)
PY
CLIENT=$!
tc_on_exit "kill -9 $CLIENT"
tc_wait_for 15 grep -q '^CONNS' $work/probe.out || fail "the probe did not get both connections"

# curl in a loop across the kill: every fetch counted
secs=12
tt_load $secs $url $want $work/load.out
sleep 3
t0=$(date +%s.%N)
kill -9 $toe1
wait $toe1 2>/dev/null || true
echo "TOE $toe1 killed"
sleep 1
tt_toe_start "$VM" vm112
echo "new TOE $TOE started $(echo "$(date +%s.%N) - $t0" | bc) s after the kill"

wait $CLIENT || true
echo "client's connections open across the kill: $(tr '\n' ' ' <$work/client.out)"
grep -q hang $work/client.out && fail "a client connection hung"
[ "$(grep -cE '^(eof|reset)$' $work/client.out)" = 2 ] || fail "client: $(cat $work/client.out)"

tc_wait_for 70 grep -q '^RESET' $work/probe.out || fail "the probe saw no reset"
sed -n 's/^/probe: /p' $work/probe.out
grep -q '^RESET ok' $work/probe.out || fail "what the probe saw is not a peer's reset"

# the probe's listener is back: a new connection through the new TOE
for i in $(seq 50); do
	reply=$(ip netns exec "$CL" $py -c '
import socket, sys
c = socket.create_connection(("10.81.12.2", 8112), timeout=5)
c.sendall(b"again")
print(c.recv(100).decode())' 2>/dev/null) && break
	sleep 0.2
done
echo "probe after the restart: $reply"
lfd=$(sed -n 's/^READY //p' $work/probe.out)
[ -n "$lfd" ] && [ "$reply" = "$lfd" ] || fail "the probe's listener did not come back as pid/fd '$lfd': '$reply'"
tc_wait_for 10 grep -q '^REVIVED' $work/probe.out || fail "the probe did not finish"

wait $LOAD || true
read -r _ ok _ bad <$work/load.out
echo "curl loop across the kill: $ok good, $bad failed"
[ "$ok" -gt 0 ] || fail "no good fetch in the loop"
kill -0 $HTTPD || fail "http.server died"
for i in 1 2 3; do
	got=$(ip netns exec "$CL" curl -sS --max-time 10 $url | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "fetch $i after the restart: sha256 $got"
done
grep -q 'http.server' /proc/$HTTPD/cmdline || fail "pid $HTTPD is not the server any more"
echo "the same http.server (pid $HTTPD) serves after the TOE restart"
echo "PASS 112_toe_restart_survive"
