#!/usr/bin/env bash
# timeout: 180
# An unmodified python3 -m http.server runs under tochain-run in a
# loopback-only namespace (the stand-in VM); its TCP is offloaded to
# tochain-toe in the VM's namespace.  curl in a client namespace fetches a
# 100 MiB file through the fabric bridge; the sha256 must match.  The
# server being unreachable without the runtime (nothing leaks) is checked
# too, and the TOE must survive and shut down cleanly on SIGTERM.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3 curl sha256sum
tc_need_root "network namespaces"

tt_netns 100 10.79.0

tt_toe_start "$VM" vm100

mkdir $work/www
head -c $((100 << 20)) /dev/urandom >$work/www/big.bin
want=$(sha256sum <$work/www/big.bin | cut -d' ' -f1)

tt_guest_bg --cd $work/www py.log python3 -m http.server --bind 0.0.0.0 8080
py=$GPID
tc_wait_port "$CL" 10.79.0.2 8080 15
# how a stalled transfer looked: the TOE's counters, the ends' sockets
tc_on_fail "pkill -USR1 -f 'tochain-toe --region $region' ; sleep 0.5; tail -n 20 $work/py.log $work/toe.log;
	ip netns exec $VM ss -tni; ip netns exec $CL ss -tni"

got=$(ip netns exec "$CL" curl -sS --max-time 60 http://10.79.0.2:8080/big.bin | sha256sum | cut -d' ' -f1) ||
	fail "the 100 MiB fetch did not complete"
echo "want $want"
echo "got  $got"
[ "$got" = "$want" ] || { echo "FAIL: sha256 differs"; tail $work/py.log $work/toe.log; exit 1; }

# Waiting costs no CPU: the idle server and the idle TOE each use < 1% of a core.
cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
hz=$(getconf CLK_TCK)
p0=$(cpu_ticks $py); t0=$(cpu_ticks $TOE)
sleep 3
p1=$(cpu_ticks $py); t1=$(cpu_ticks $TOE)
echo "idle 3 s: server $((p1 - p0)) ticks, TOE $((t1 - t0)) ticks (${hz}/s)"
[ $(( (p1 - p0) * 100 )) -lt $((3 * hz)) ] || fail "idle server uses >= 1% CPU"
[ $(( (t1 - t0) * 100 )) -lt $((3 * hz)) ] || fail "idle TOE uses >= 1% CPU"

# A 404 and a second fetch on the same server still work.
code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.79.0.2:8080/nope)
[ "$code" = 404 ] || fail "expected 404, got $code"

# Threads: ThreadingHTTPServer serves 16 parallel fetches of a 1 MiB file.
head -c $((1 << 20)) /dev/urandom >$work/www/mid.bin
want_mid=$(sha256sum <$work/www/mid.bin | cut -d' ' -f1)
pids=()
for i in $(seq 16); do
	ip netns exec "$CL" curl -sS --max-time 30 -o $work/mid.$i http://10.79.0.2:8080/mid.bin &
	pids+=($!)
done
for p in "${pids[@]}"; do wait $p || fail "a parallel fetch failed"; done
for i in $(seq 16); do
	[ "$(sha256sum <$work/mid.$i | cut -d' ' -f1)" = "$want_mid" ] ||
		fail "parallel fetch $i differs"
done
echo "16 parallel fetches ok"

# Without the runtime the same server in the stand-in VM is unreachable.
(cd $work/www && exec ip netns exec "$GU" python3 -m http.server --bind 0.0.0.0 8081) >/dev/null 2>&1 &
plain=$!
tc_on_exit "kill -9 $plain"
sleep 0.5
if ip netns exec "$CL" curl -s --max-time 2 -o /dev/null http://10.79.0.2:8081/; then
	fail "a server without the runtime was reachable"
fi

kill $py; wait $py 2>/dev/null || true
kill -TERM $TOE
tc_wait_exit 5 $TOE || fail "TOE ignored SIGTERM"
[ ! -e "$region.sock" ] || fail "socket file left behind"
echo PASS
