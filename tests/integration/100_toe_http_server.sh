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

for c in ip python3 curl sha256sum; do
	command -v $c >/dev/null || { echo "SKIP: $c not installed"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }

tc_init
tc_fabric
tc_host CL cl 10.79.0.1/24
tc_host VM vm 10.79.0.2/24
tc_isolated GU gu
work=$(mktemp -d /dev/shm/tc100.XXXXXX)
tc_on_exit "rm -rf $work"
region=$work/region

mkfifo $work/ready
ip netns exec "$VM" "$build/bin/tochain-toe" --region "$region" --name vm100 \
	--ready-fd 3 3>$work/ready 2>$work/toe.log &
toe=$!
tc_on_exit "kill -9 $toe"
read -r -t 10 -n 1 _ <$work/ready || { echo "TOE did not become ready"; cat $work/toe.log; exit 1; }

mkdir $work/www
head -c $((100 << 20)) /dev/urandom >$work/www/big.bin
want=$(sha256sum <$work/www/big.bin | cut -d' ' -f1)

(cd $work/www && exec ip netns exec "$GU" "$build/bin/tochain-run" --region "$region" -- \
	python3 -m http.server --bind 0.0.0.0 8080) >$work/py.log 2>&1 &
py=$!
tc_on_exit "kill -9 $py"
tc_wait_port "$CL" 10.79.0.2 8080 15

got=$(ip netns exec "$CL" curl -sS --max-time 60 http://10.79.0.2:8080/big.bin | sha256sum | cut -d' ' -f1)
echo "want $want"
echo "got  $got"
[ "$got" = "$want" ] || { echo "FAIL: sha256 differs"; tail $work/py.log $work/toe.log; exit 1; }

# Waiting costs no CPU: the idle server and the idle TOE each use < 1% of a core.
cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
hz=$(getconf CLK_TCK)
p0=$(cpu_ticks $py); t0=$(cpu_ticks $toe)
sleep 3
p1=$(cpu_ticks $py); t1=$(cpu_ticks $toe)
echo "idle 3 s: server $((p1 - p0)) ticks, TOE $((t1 - t0)) ticks (${hz}/s)"
[ $(( (p1 - p0) * 100 )) -lt $((3 * hz)) ] || { echo "FAIL: idle server uses >= 1% CPU"; exit 1; }
[ $(( (t1 - t0) * 100 )) -lt $((3 * hz)) ] || { echo "FAIL: idle TOE uses >= 1% CPU"; exit 1; }

# A 404 and a second fetch on the same server still work.
code=$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.79.0.2:8080/nope)
[ "$code" = 404 ] || { echo "FAIL: expected 404, got $code"; exit 1; }

# Threads: ThreadingHTTPServer serves 16 parallel fetches of a 1 MiB file.
head -c $((1 << 20)) /dev/urandom >$work/www/mid.bin
want_mid=$(sha256sum <$work/www/mid.bin | cut -d' ' -f1)
pids=()
for i in $(seq 16); do
	ip netns exec "$CL" curl -sS --max-time 30 -o $work/mid.$i http://10.79.0.2:8080/mid.bin &
	pids+=($!)
done
for p in "${pids[@]}"; do wait $p || { echo "FAIL: a parallel fetch failed"; exit 1; }; done
for i in $(seq 16); do
	[ "$(sha256sum <$work/mid.$i | cut -d' ' -f1)" = "$want_mid" ] ||
		{ echo "FAIL: parallel fetch $i differs"; exit 1; }
done
echo "16 parallel fetches ok"

# Without the runtime the same server in the stand-in VM is unreachable.
(cd $work/www && exec ip netns exec "$GU" python3 -m http.server --bind 0.0.0.0 8081) >/dev/null 2>&1 &
plain=$!
tc_on_exit "kill -9 $plain"
sleep 0.5
if ip netns exec "$CL" curl -s --max-time 2 -o /dev/null http://10.79.0.2:8081/; then
	echo "FAIL: a server without the runtime was reachable"; exit 1
fi

kill $py; wait $py 2>/dev/null || true
kill -TERM $toe
for i in $(seq 50); do kill -0 $toe 2>/dev/null || break; sleep 0.1; done
if kill -0 $toe 2>/dev/null; then echo "FAIL: TOE ignored SIGTERM"; exit 1; fi
[ ! -e "$region.sock" ] || { echo "FAIL: socket file left behind"; exit 1; }
echo PASS
