#!/usr/bin/env bash
# timeout: 120
# Chains replaced and deleted under load: while curl loops fetch a file
# from http.server under tochain-run (checksum checked every time), a
# control loop sets the in and out chains to 0, 1 and 2 hops of null
# VNFs and deletes them, over and over.  Zero failed or corrupted clean
# requests; afterwards every descriptor submitted came back (arrivals ==
# finished == taken), none denied, and the directions pass straight
# through again once deleted.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3 curl sha256sum
tc_need_root "network namespaces"

tt_setup 411
tt_vnf a
tt_vnf b '{"threads":2}'
mkdir $work/www
head -c $((256 << 10)) /dev/urandom >$work/www/f.bin
want=$(sha256sum <$work/www/f.bin | cut -d' ' -f1)
tt_serve $work/www 8080

# Load: 3 loops of fetches for 8 s; each failure or bad checksum is counted.
end=$(( $(date +%s) + 8 ))
loads=()
for l in 1 2 3; do
	tt_load 8 http://10.81.0.2:8080/f.bin $want $work/load.$l
	loads+=($LOAD)
done

# Meanwhile: replace and delete, both directions, until the load ends.
python3 - "$region.ctl" $end >$work/ctl.txt <<'PY'
import json, socket, sys, time
path, end = sys.argv[1], int(sys.argv[2])
def ctl(cmd, args):
    s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(path)
    s.sendall((json.dumps({"v": 1, "cmd": cmd, "args": args}) + "\n").encode())
    r = json.loads(s.makefile().readline()); s.close()
    if not r["ok"]:
        raise SystemExit("ctl %s %s: %s" % (cmd, args, r))
    return r["result"]
shapes = [[], [["a"]], [["a"], ["b"]], None]
n = 0
while time.time() < end - 0.5:
    for d in ("in", "out"):
        h = shapes[(n + (d == "out")) % len(shapes)]
        if h is None:
            try:
                ctl("chain.del", {"dir": d})
            except SystemExit:
                pass	# no chain set in that direction at the moment
        else:
            ctl("chain.set", {"dir": d, "name": "r%d" % n, "hops": h})
    n += 1
    time.sleep(0.02)
print("changes", n * 2)
PY
wait "${loads[@]}"
ok=0 bad=0
for l in 1 2 3; do read -r _ o _ b <$work/load.$l; ok=$((ok + o)); bad=$((bad + b)); done
echo "$(cat $work/ctl.txt) chain replacements/deletions; requests ok $ok failed $bad"
[ "$bad" = 0 ] || { echo "FAIL: $bad clean requests failed"; cat $work/load.*.err; tail $work/toe.log; exit 1; }
[ "$ok" -ge 10 ] || fail "only $ok requests in 8 s"

sleep 0.3
st=$(ctl_ok stats)
echo "after the load: $(echo "$st" | tt_json 'json.dumps(j["chains"])')"
ctl chain.del '{"dir":"in"}' >/dev/null; ctl chain.del '{"dir":"out"}' >/dev/null
ctl_ok chain.set '{"dir":"in","name":"last","hops":[["a"]]}' >/dev/null
st=$(ctl_ok stats)
echo "$st" | tt_json 'json.dumps(j["chains"])'
echo "$st" | tt_json 'all(c["arrivals"] == c["finished"] == c["taken"] and c["denied"] == 0 for c in j["chains"]) and len(j["denials"]) == 0' | grep -q True ||
	fail "descriptors lost or denied: $st"
# With the in chain set and out deleted: a fetch counts in arrivals only.
a0=$(echo "$st" | tt_json 'j["chains"][0]["arrivals"]')
got=$(ip netns exec "$CL" curl -sS --max-time 10 http://10.81.0.2:8080/f.bin | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "fetch after the changes"
a1=$(ctl_ok stats | tt_json 'j["chains"][0]["arrivals"]')
[ "$a1" -gt "$a0" ] || fail "the in chain saw nothing"
kill $PY; wait $PY 2>/dev/null || true
tt_stop_vnf a; tt_stop_vnf b
tt_toe_stop
echo PASS
