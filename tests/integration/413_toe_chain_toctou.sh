#!/usr/bin/env bash
# timeout: 120
# Hostile guest against the outbound chain (time of check / time of use,
# DESIGN section 3): toe-toctou speaks the socket protocol directly,
# submits buffers of "CLEAN!!!" cells and rewrites them with "ATTACK!!"
# a random moment after submitting.  With an out chain of a null VNF
# that denies ATTACK, the server must receive only clean bytes: every
# connection is either complete and clean, or reset (and then the VNF
# saw a marker and a denial was recorded) -- never a marker the VNF did
# not see.  A control run without the chain shows the attack works.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3
tc_need_root "network namespaces"
[ -x "$build/tests/bin/toe-toctou" ] || { echo "toe-toctou not built"; exit 1; }

tt_setup 413

# A server in the client namespace: one line per connection.
cat >$work/srv.py <<'PY'
import socket, sys
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("10.81.0.1", int(sys.argv[1])))
ls.listen(16)
out = open(sys.argv[2], "w")
while True:
    c, _ = ls.accept()
    data = bytearray()
    reset = 0
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            data += b
    except ConnectionResetError:
        reset = 1
    c.close()
    n = len(data) // 8
    clean = int(bytes(data) == b"CLEAN!!!" * n and len(data) % 8 == 0)
    marker = int(b"ATTACK" in data)
    out.write("bytes %d clean %d marker %d reset %d\n" % (len(data), clean, marker, reset))
    out.flush()
PY
ip netns exec "$CL" python3 $work/srv.py 9000 $work/srv-a.txt & srv=$!
tc_on_exit "kill -9 $srv"
ip netns exec "$CL" python3 $work/srv.py 9001 $work/srv-b.txt & srv2=$!
tc_on_exit "kill -9 $srv2"
for i in $(seq 100); do
	[ "$(ip netns exec "$CL" ss -Hltn 'sport >= 9000 and sport <= 9001' | wc -l)" = 2 ] && break
	sleep 0.1
done

# Control: no chain, the attack lands immediately after submitting.
"$build/tests/bin/toe-toctou" --region "$region" --connect 10.81.0.1:9000 \
	--conns 5 --bufs 20 --size 4096 --delay 0 --seed 1 >$work/guest-a.txt
sleep 0.5
marked=$(awk '$6 == 1' $work/srv-a.txt | wc -l)
echo "control without a chain: $marked of $(wc -l <$work/srv-a.txt) connections carried the marker to the server"
[ "$marked" -ge 1 ] || { echo "FAIL: the attacker never won the race without a chain (test not effective)"; cat $work/srv-a.txt; exit 1; }

tt_vnf o '{}' --deny-marker ATTACK
ctl_ok chain.set '{"dir":"out","name":"egress","hops":[["o"]]}' >/dev/null
"$build/tests/bin/toe-toctou" --region "$region" --connect 10.81.0.1:9001 \
	--conns 24 --bufs 8 --size 4096 --delay 3000 --seed 2 >$work/guest-b.txt
sleep 0.5
tail -n 1 $work/guest-b.txt
n=$(wc -l <$work/srv-b.txt)
[ "$n" = 24 ] || { echo "FAIL: server saw $n connections, not 24"; cat $work/srv-b.txt; exit 1; }
if awk '$6 == 1' $work/srv-b.txt | grep -q .; then
	echo "FAIL: a marker reached the server through the chain"; cat $work/srv-b.txt; exit 1
fi
want=$((8 * 4096))
bad=$(awk -v w=$want '$8 == 0 && ($2 != w || $4 != 1)' $work/srv-b.txt | wc -l)
[ "$bad" = 0 ] || { echo "FAIL: $bad unreset connections are not exactly the clean bytes"; cat $work/srv-b.txt; exit 1; }
bad=$(awk '$8 == 1 && $4 != 1' $work/srv-b.txt | wc -l)
[ "$bad" = 0 ] || fail "a reset connection delivered something else than clean cells"
resets=$(awk '$8 == 1' $work/srv-b.txt | wc -l)
greset=$(awk '/^conns/ { print $6 }' $work/guest-b.txt)
den=$(ctl_ok stats | tt_json 'len([d for d in j["denials"] if d["dir"] == "out" and d["vnf"] == "o" and d["rule"] == 1])')
echo "with the chain: $((24 - resets)) connections complete and clean, $resets reset (guest saw $greset, denials $den)"
# (the guest may close before its reset event arrives: it sees at most as many)
[ "$greset" -le "$resets" ] && [ "$den" = "$resets" ] ||
	fail "resets at the server ($resets), the guest ($greset) and denials ($den) disagree"
tt_stop_vnf o
[ "$(tt_stat o denied)" -ge "$resets" ] || fail "the VNF denied fewer than were reset"
tt_toe_stop
echo PASS
