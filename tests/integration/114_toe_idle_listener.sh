#!/usr/bin/env bash
# timeout: 300
# A process that holds a shared listening socket but never accepts (the
# nginx master after forking its workers) must cost the TOE a bounded
# number of RX ring slots and buffers, however many connections its
# siblings accept.  A python server forks two workers that accept; the
# parent keeps the listener and sleeps.  4000 connections from the
# client namespace are each answered; then the parent's channel (channel
# 0, the first attached) must still be open with at most 4 messages on
# its RX ring (tochain-region info), and the TOE must not have dropped a
# guest (SIGUSR1 counters, its log).  Without coalesced readiness events
# every connection queued ACCEPTABLE 1/0 on the parent's ring until the
# TOE dropped it as "does not consume its RX ring" (~3000 connections).
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3
tc_need_root "network namespaces"

N=${N114:-4000}
tt_netns 114 10.79.14
tc_on_fail 'tail -n 20 $work/*.log; "$build/bin/tochain-region" info "$region" || true'
tt_toe_start "$VM" vm114

cat >$work/prefork.py <<'EOF2'
import os, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(128)
for w in range(2):
    if os.fork() == 0:
        while True:
            c, _ = s.accept()
            c.sendall(b"ok\n")
            c.close()
while True:
    time.sleep(3600)	# the parent holds the listener, never accepts
EOF2
tt_guest_bg srv.log python3 $work/prefork.py 8114
srv=$GPID
tc_on_exit "ip netns pids $GU | xargs -r kill -9 2>/dev/null"
tc_wait_port "$CL" 10.79.14.2 8114 20 || fail "port 8114 did not open"

ip netns exec "$CL" timeout 240 python3 - "$N" <<'EOF2' || fail "a connection was not served"
import socket, sys
n = int(sys.argv[1])
for i in range(n):
    c = socket.create_connection(("10.79.14.2", 8114), timeout=20)
    r = b""
    while len(r) < 3:
        b = c.recv(3 - len(r))
        if not b:
            break
        r += b
    c.close()
    if r != b"ok\n":
        print("connection %d: got %r" % (i, r))
        sys.exit(1)
print("%d connections served by the workers" % n)
EOF2

info=$("$build/bin/tochain-region" info "$region" --json)
rx0=$(echo "$info" | tt_json '[c["rx"] for c in j["channels"] if c["id"] == 0][0]') ||
	fail "channel 0 (the parent) is not open: $info"
echo "parent's channel: $rx0 messages on its RX ring"
[ "$rx0" -le 4 ] || fail "the parent's RX ring holds $rx0 messages (at most 4 expected)"
kill -USR1 $TOE
tc_wait_for 5 grep -q 'stats:' $work/toe.log || fail "no counters from the TOE"
line=$(grep 'stats:' $work/toe.log | tail -n 1)
echo "TOE: $line"
case $line in *" guests_dropped=0 "*) ;; *) fail "the TOE dropped a guest";; esac
grep -q "does not consume" $work/toe.log && fail "TOE log: $(grep -m1 "does not consume" $work/toe.log)"
tt_toe_stop
echo PASS
