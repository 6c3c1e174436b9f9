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

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }
for c in ip python3 curl cmp; do
	command -v $c >/dev/null || { echo "SKIP: $c not installed"; exit 77; }
done

tc_init
tc_fabric
tc_host CL cl 10.84.0.1/24
tc_host VM vm 10.84.0.2/24
tc_isolated GU gu
work=$(mktemp -d /dev/shm/tc104.XXXXXX)
tc_on_exit "rm -rf $work"
region=$work/region
mkfifo $work/ready
ip netns exec "$VM" "$build/bin/tochain-toe" --region "$region" --name vm104 \
	--ready-fd 3 3>$work/ready 2>$work/toe.log &
toe_pid=$!
tc_on_exit "kill -9 $toe_pid"
read -r -t 10 -n 1 _ <$work/ready || { echo "TOE did not become ready"; exit 1; }

mkdir $work/www
head -c $((20 << 20)) /dev/urandom >$work/www/f.bin
(cd $work/www && exec ip netns exec "$CL" python3 -m http.server --bind 10.84.0.1 8000) >/dev/null 2>&1 &
tc_on_exit "kill -9 $!"
tc_wait_port "$VM" 10.84.0.1 8000 10

ip netns exec "$GU" timeout 30 "$build/bin/tochain-run" --region "$region" -- \
	curl -sS --max-time 20 -o $work/got.bin http://10.84.0.1:8000/f.bin
cmp $work/got.bin $work/www/f.bin || { echo "FAIL: content differs"; exit 1; }
code=$(ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" -- \
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.84.0.1:8000/missing)
[ "$code" = 404 ] || { echo "FAIL: expected 404, got $code"; exit 1; }
# connection refused is reported as such (curl exit 7)
rc=0
ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" -- \
	curl -s -o /dev/null --max-time 10 http://10.84.0.1:8009/ || rc=$?
[ $rc = 7 ] || { echo "FAIL: refused connect gave curl exit $rc, want 7"; exit 1; }
if ip netns exec "$GU" curl -s --max-time 3 -o /dev/null http://10.84.0.1:8000/f.bin; then
	echo "FAIL: reached the network without the runtime"; exit 1
fi
# The TOE dies while the guest is blocked in recv (and another one in
# epoll_wait): both calls fail (ENETDOWN) instead of hanging.
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
kill -9 $toe_pid
for mode in recv epoll; do
	eval "p=\$blk_$mode"
	rc=0
	wait $p || rc=$?
	[ $rc = 0 ] || { echo "FAIL: $mode after the TOE died: exit $rc"; cat $work/blocked.$mode; exit 1; }
	grep -q "^failed: 100" $work/blocked.$mode ||
		{ echo "FAIL: $mode: $(cat $work/blocked.$mode)"; exit 1; }
	echo "$mode: $(cat $work/blocked.$mode)"
done
echo PASS
