#!/usr/bin/env bash
# timeout: 60
# An unmodified curl inside the stand-in VM (under tochain-run, loopback-
# only namespace) fetches a file from a server in the client namespace
# through the TOE: outbound connect, non-blocking connect + poll +
# SO_ERROR, inbound bulk.  Without the runtime the same fetch fails.
# When the TOE dies, blocked calls in the guest fail instead of hanging.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_root "network namespaces"
tc_need_cmds ip python3 curl cmp

tt_netns 104 10.84.0
tt_toe_start "$VM" vm104

mkdir $work/www
head -c $((20 << 20)) /dev/urandom >$work/www/f.bin
(cd $work/www && exec ip netns exec "$CL" python3 -m http.server --bind 10.84.0.1 8000) >/dev/null 2>&1 &
tc_on_exit "kill -9 $!"
tc_wait_port "$VM" 10.84.0.1 8000 10

tt_guest --timeout 30 curl -sS --max-time 20 -o $work/got.bin http://10.84.0.1:8000/f.bin
cmp $work/got.bin $work/www/f.bin || fail "content differs"
code=$(tt_guest curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.84.0.1:8000/missing)
[ "$code" = 404 ] || fail "expected 404, got $code"
# connection refused is reported as such (curl exit 7)
rc=0
tt_guest curl -s -o /dev/null --max-time 10 http://10.84.0.1:8009/ || rc=$?
[ $rc = 7 ] || fail "refused connect gave curl exit $rc, want 7"
if ip netns exec "$GU" curl -s --max-time 3 -o /dev/null http://10.84.0.1:8000/f.bin; then
	fail "reached the network without the runtime"
fi
# The TOE dies while the guest is blocked in recv (and another one in
# epoll_wait): both calls fail as after a peer's reset (ECONNRESET,
# guest-lib/gl_revive.c) instead of hanging.
cat >$work/blocked.py <<'PY'
import select, socket, sys, time
s = socket.create_connection((sys.argv[1], 8000))   # the server waits for a request
mode = sys.argv[2]
print("connected", flush=True)
try:
    if mode == "recv":
        s.recv(10)
    else:
        ep = select.epoll(); ep.register(s.fileno(), select.EPOLLIN)
        ev = ep.poll(30)
        s.recv(10)
except OSError as e:
    print("failed:", e.errno, flush=True); sys.exit(0)
print("no error", flush=True); sys.exit(1)
PY
for mode in recv epoll; do
	ip netns exec "$GU" timeout 20 "$build/bin/tochain-run" --region "$region" -- \
		python3 $work/blocked.py 10.84.0.1 $mode >$work/blocked.$mode 2>&1 &
	eval "blk_$mode=\$!"
done
# both connected (python starts slowly on a loaded machine), then blocked
for i in $(seq 100); do
	grep -q connected $work/blocked.recv 2>/dev/null && grep -q connected $work/blocked.epoll 2>/dev/null && break
	sleep 0.1
done
sleep 0.5
kill -9 $TOE
for mode in recv epoll; do
	eval "p=\$blk_$mode"
	rc=0
	wait $p || rc=$?
	[ $rc = 0 ] || { echo "FAIL: $mode after the TOE died: exit $rc"; cat $work/blocked.$mode; exit 1; }
	grep -q "^failed: 104" $work/blocked.$mode ||
		fail "$mode: $(cat $work/blocked.$mode)"
	echo "$mode: $(cat $work/blocked.$mode)"
done
echo PASS
