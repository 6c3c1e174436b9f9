#!/usr/bin/env bash
# timeout: 180
# sfc-ctl vnf and chain: add/ls/show/del/set-sla/calibrate against a real
# tochaind and TOE; a chain starts one tochain-vnf per VNF (in its cgroup),
# deleting it stops them; the rules file is copied (a later edit of the
# user's file changes nothing); every refusal exits 1 with one line (bad
# usage 2) and leaves state.json byte for byte as it was; garbage on the
# control socket is refused.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3
tc_need_root "network namespaces"

td_setup 210
sfc vm add web1 --ip 10.65.0.2/24 >/dev/null
sfc vm add web2 --ip 10.65.0.3/24 >/dev/null
printf '# accept all\npolicy in accept\npolicy out accept\n' >"$work/fw.rules"
sfc vnf add fw --kind fw --rules "$work/fw.rules" --threads 2 --on-failure open >/dev/null
sfc vnf add n1 --kind null --rate 400000 >/dev/null
sfc vnf add n2 --kind null >/dev/null
sfc vnf ls
[ "$(sfc --json vnf show fw | td_json 'j["rules"]')" = "$work/fw.rules" ] || fail "rules path"
cmp -s "$work/fw.rules" "$work/state/rules/fw.rules" || fail "the rules were not copied"
echo 'drop all' >"$work/fw.rules"
grep -q 'accept all' "$work/state/rules/fw.rules" || fail "an edit of the user's file reached the copy"

echo "--- calibrate"
sfc vnf calibrate n2 | tee "$work/cal"
grep -q "vnf n2: f = [1-9][0-9]* packets/s" "$work/cal" || fail "calibrate output"
[ "$(sfc --json vnf show n2 | td_json 'j["f"] > 0')" = True ] || fail "f not stored"

echo "--- chain add starts the instances"
sfc chain add web-in --vm web1 --dir in --hop n1 --hop n2 --sla 1000 | tee "$work/show"
p1=$(sfc --json vnf show n1 | td_json 'j["instances"][0]["pid"]')
kill -0 "$p1" || fail "n1 instance not running"
tr '\0' ' ' <"/proc/$p1/cmdline" | grep -q -- "--kind null --region .*web1.region.vnf-n1 --threads 1" ||
	fail "n1 command line: $(tr '\0' ' ' <"/proc/$p1/cmdline")"
grep -q "vnf-n1-web1" "/proc/$p1/cgroup" || fail "n1 is not in its cgroup: $(cat /proc/$p1/cgroup)"
sfc chain ls
[ "$(sfc --json chain show web-in | td_json 'j["toe"]["name"] == "web-in" and j["toe"]["hops"] == 2')" = True ] ||
	fail "the TOE does not run the chain"
sfc chain set-sla web-in 2000
[ "$(sfc --json chain show web-in | td_json 'j["sla"]')" = 2000 ] || fail "set-sla"
sfc stats web-in
# n1: f 400000, n2: calibrated; both need a few ticks of 50 for 2000 pkt/s
[ "$(sfc --json stats web-in | td_json '0 < j["chains"][0]["cpu_quota"] < 1 and j["chains"][0]["vnf_vcpus"] == 2')" = True ] ||
	fail "stats has no CPU quota: $(sfc --json stats web-in)"
sfc chain add web2-out --vm web2 --dir out --hop n1,n2 >/dev/null
[ "$(sfc --json vnf show n1 | td_json 'len(j["instances"])')" = 2 ] || fail "one instance per VM"

echo "--- refusals: exit 1, one line, state.json unchanged"
sum=$(md5sum <"$work/state/state.json")
refuse() {
	local want=$1
	shift
	set +e
	(sfc "$@") >/dev/null 2>"$work/err"
	local rc=$?
	set -e
	[ $rc = "$want" ] || fail "'$*' exited $rc, not $want: $(cat "$work/err")"
	[ "$(wc -l <"$work/err")" -ge 1 ] || fail "'$*' said nothing"
	[ $want = 2 ] || [ "$(wc -l <"$work/err")" = 1 ] || fail "'$*' did not give one line"
	printf '  %-60s %s\n' "$*" "$(head -1 "$work/err")"
	[ -n "$(td_pid)" ] || fail "tochaind died after '$*'"
}
refuse 1 vnf add n1 --kind null
refuse 1 vnf add Bad --kind null
refuse 1 vnf add x --kind dpi
refuse 1 vnf add x --kind ids
refuse 1 vnf add x --kind null --threads 17
refuse 1 vnf add x --kind null --on-failure maybe
refuse 1 vnf add x --kind null --arg --region=/etc
refuse 1 vnf add x --kind fw --rules "$work/nosuch"
refuse 1 vnf add abcdefghijklmnopqrstuvwxyz0123456 --kind null
refuse 2 vnf add x --kind null --threads zero
refuse 2 vnf add x
refuse 1 vnf del nosuch
refuse 1 vnf del n1
refuse 1 vnf show nosuch
refuse 1 vnf calibrate nosuch
refuse 1 chain add web-in --vm web2 --dir in --hop n1
refuse 1 chain add c2 --vm web1 --dir in --hop n1
refuse 1 chain add c2 --vm nosuch --dir in --hop n1
refuse 1 chain add c2 --vm web1 --dir out --hop nosuch
refuse 1 chain add c2 --vm web1 --dir out --hop n1 --hop n2,n1
refuse 1 chain add c2 --vm web1 --dir up --hop n1
refuse 1 chain add c2 --vm Web1 --dir out --hop n1
refuse 1 chain add c2 --vm web1 --dir out --hop fw --sla 100
refuse 1 chain add c2 --vm web1 --dir out --hop n1 --sla 100000000
refuse 1 chain add c2 --vm web1 --dir out --hop n1 --hop n2 --hop fw --hop a4 --hop a5 --hop a6 --hop a7 --hop a8 --hop a9
refuse 2 chain add c2 --vm web1 --dir out --hop n1,
refuse 2 chain add c2 --vm web1 --dir out
refuse 1 chain set-sla web-in 100000000
refuse 1 chain set-sla nosuch 5
refuse 2 chain set-sla web-in lots
refuse 1 chain del nosuch
refuse 1 vm del web1
refuse 2 stats --watch 0
refuse 1 stats nosuch
python3 - "$TOCHAIN_SOCKET" <<'PY'
import socket, sys
for msg in [b'{"v":1,"cmd":"vnf.add","args":{"name":"x","kind":7}}\n',
            b'{"v":1,"cmd":"vnf.add","args":{"name":"x","kind":"null","threads":"2"}}\n',
            b'{"v":1,"cmd":"vnf.add","args":{"name":"x","kind":"null","rules":"relative"}}\n',
            b'{"v":1,"cmd":"chain.add","args":{"name":"c","vm":"web1","dir":"out","hops":"n1"}}\n',
            b'{"v":1,"cmd":"chain.add","args":{"name":"c","vm":"web1","dir":"out","hops":[[]]}}\n',
            b'{"v":1,"cmd":"chain.add","args":{"name":"c","vm":"web1","dir":"out","hops":[["n1"]],"sla":-1}}\n',
            b'{"v":1,"cmd":"apply","args":{"vnfs":{}}}\n',
            b'{"v":1,"cmd":"apply","args":{"chains":[{"name":"c","vm":"web1","dir":"out","hops":[["n1"]],"extra":1}]}}\n',
            b'{"v":1,"cmd":"chain.set-sla","args":{"name":"web-in","sla":1.5}}\n',
            b'{"v":1,"cmd":"vnf.del","args":{"name":["n1"]}}\n',
            b'{"v":1,"cmd":"vnf.add","args":{"name":"x","kind":"nu', b'\x00\xff\n']:
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(msg)
    if not msg.endswith(b'\n'):
        s.shutdown(socket.SHUT_WR)
    r = s.makefile().readline(); s.close()
    assert '"ok":false' in r, (msg[:60], r)
PY
[ "$(md5sum <"$work/state/state.json")" = "$sum" ] || fail "a refused request changed state.json"

echo "--- deleting chains stops the instances, vnf del works again"
sfc chain del web2-out >/dev/null || fail "chain del web2-out"
[ "$(sfc --json vnf show n1 | td_json 'len(j["instances"])')" = 1 ] || fail "web2's instance not dropped"
sfc chain del web-in >/dev/null
for i in $(seq 20); do td_running "$p1" || break; sleep 0.1; done
td_running "$p1" && fail "n1 instance still running"
[ "$(sfc --json chain show web-in 2>/dev/null || echo gone)" = gone ] || fail "chain still there"
sfc vnf del n1 >/dev/null
sfc vnf del fw >/dev/null
[ ! -e "$work/state/rules/fw.rules" ] || fail "rules copy left behind"
[ "$(sfc --json vnf ls | td_json '[v["name"] for v in j["vnfs"]]')" = "['n2']" ] || fail "vnf ls after del"
td_stop_check
echo PASS
