#!/usr/bin/env bash
# How long an ids VNF with a 4,000-rule set (ids-bench --write-rules) is
# out of service when it dies under tochaind (issue 20: <= 1 s with the
# Hyperscan database cache warm).  A chain web-in -> ids1 (fail-closed)
# in front of a python web server; `vnf add` ran --check, which fills the
# cache.  Each round SIGKILLs the instance and times, from the kill, until
# a request through the chain gets its 200 again (a client in the client
# namespace retrying every 20 ms).  Rounds are 10.5 s apart, so that each
# is a first restart for tochaind's back-off.  Then REPS SIGHUP reloads of
# the same file, each timed from the signal to the instance's "rules
# reloaded" log line.  Medians of REPS rounds (default 5), side by side
# with the same rules loaded by `tochain-vnf --check` warm, which bounds
# what the restart and the reload can cost in loading.
# Nothing is asserted.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
reps=${REPS:-5}
nrules=${RULES:-4000}

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 0; }
[ -x "$build/bench/bin/ids-bench" ] || { echo "ids-bench not built: make $build/bench/bin/ids-bench" >&2; exit 1; }

cache=$(mktemp -d /var/tmp/tcb54.XXXXXX)
export TOCHAIN_IDS_CACHE=$cache	# tochaind, its --check and its instances inherit it
td_setup b54
tc_on_exit "rm -rf $cache"
"$build/bench/bin/ids-bench" --rules "$nrules" --runs 1 --requests 1 --write-rules "$work/r.rules" >/dev/null
sfc vm add web1 --ip 10.95.0.2/24 >/dev/null
t0=$(date +%s%N)
sfc vnf add ids1 --kind ids --rules "$work/r.rules" >/dev/null
echo "vnf add (--check, cold cache, $nrules rules): $(( ($(date +%s%N) - t0) / 1000000 )) ms"
sfc chain add web-in --vm web1 --dir in --hop ids1 >/dev/null
mkdir "$work/www"
echo ok >"$work/www/index.html"
td_client 10.95.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.95.0.2 8080 15 || fail "the web server did not come up"

cat >"$work/until200.py" <<'P'
# until200.py URL T0_NS: ms from T0_NS (CLOCK_REALTIME ns) to the first 200
import sys, time, urllib.request
url, t0 = sys.argv[1], int(sys.argv[2])
deadline = time.time() + 60
while time.time() < deadline:
    try:
        if urllib.request.urlopen(url, timeout=1).status == 200:
            print((time.time_ns() - t0) / 1e6)
            sys.exit(0)
    except Exception:
        pass
    time.sleep(0.02)
sys.exit(1)
P
ip netns exec "$CL" python3 "$work/until200.py" http://10.95.0.2:8080/ "$(date +%s%N)" >/dev/null ||
	fail "the chain does not serve"

median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.0f", NR ? v[int((NR + 1) / 2)] : 0 }'; }
: >"$work/serve"
for i in $(seq "$reps"); do
	# tochaind's restart back-off (td_backoff.h) starts at its minimum again
	# once an instance has run TD_BACKOFF_STABLE_MS (10 s): wait that out,
	# so each round is a first restart
	[ "$i" = 1 ] || sleep 10.5
	pid=$(sfc --json vnf show ids1 | td_json 'j["instances"][0]["pid"]')
	t0=$(date +%s%N)
	kill -9 "$pid"
	ip netns exec "$CL" python3 "$work/until200.py" http://10.95.0.2:8080/ "$t0" >>"$work/serve" ||
		fail "round $i: the chain did not serve again"
	npid=$(sfc --json vnf show ids1 | td_json 'j["instances"][0]["pid"]')
	[ "$npid" != "$pid" ] || fail "round $i: served, but by the old instance?"
done

# A SIGHUP reload of the unchanged file: from the signal to the instance's
# "rules reloaded" line (the new engine swapped in; the old one served
# meanwhile), polled every 5 ms.
cat >"$work/reload.py" <<'P'
# reload.py PID LOG: ms from SIGHUP to one more "rules reloaded" line in LOG
import os, signal, sys, time
pid, log = int(sys.argv[1]), sys.argv[2]
count = lambda: open(log, errors="replace").read().count("rules reloaded")
n = count()
t0 = time.monotonic()
os.kill(pid, signal.SIGHUP)
while time.monotonic() - t0 < 30:
    if count() > n:
        print((time.monotonic() - t0) * 1e3)
        sys.exit(0)
    time.sleep(0.005)
sys.exit(1)
P
: >"$work/reload"
for i in $(seq "$reps"); do
	pid=$(sfc --json vnf show ids1 | td_json 'j["instances"][0]["pid"]')
	python3 "$work/reload.py" "$pid" "$work/state/vnf-ids1-web1.log" >>"$work/reload" ||
		fail "reload $i: no 'rules reloaded' line in $work/state/vnf-ids1-web1.log"
done

load_ms() { "$build/bin/tochain-vnf" --kind ids --rules "$work/r.rules" --check --json |
	sed -n 's/.*"load_ms":\([0-9]*\).*/\1/p'; }
check=$(for i in $(seq "$reps"); do load_ms; done | median)
printf 'ids VNF, %s rules, warm cache, median of %s: restart (killed -> chain serves again) %s ms; SIGHUP reload, same file %s ms; tochain-vnf --check engine load %s ms\n' \
	"$nrules" "$reps" "$(median <"$work/serve")" "$(median <"$work/reload")" "$check"
echo "rounds (serve ms): $(tr '\n' ' ' <"$work/serve")"
echo "rounds (reload ms): $(tr '\n' ' ' <"$work/reload")"
td_stop_check 2>/dev/null || true
