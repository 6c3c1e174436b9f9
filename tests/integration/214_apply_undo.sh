#!/usr/bin/env bash
# timeout: 120
# An apply that fails half-way is undone: chains on two VMs where the
# second VM's TOE does not answer (SIGSTOPped): the first VM's TOE had
# already got its VNFs and chain, and must be back as it was (no chain,
# no VNF, no instance process), the state unchanged, the error naming the
# VM.  Afterwards the same apply succeeds; --prune removes what the file
# no longer names, with its instances.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
tc_need_root "network namespaces"

toe_ctl() {	# toe_ctl VM CMD: one request on the VM's TOE control socket
	python3 - "$(td_field vm "$1" region).ctl" "$2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
s.sendall((json.dumps({"v": 1, "cmd": sys.argv[2], "args": {}}) + "\n").encode())
print(json.dumps(json.loads(s.makefile().readline())["result"]))
PY
}

td_setup 214
printf 'vm web1 ip=10.68.0.2/24\nvm web2 ip=10.68.0.3/24\n' >"$work/vms.topo"
sfc apply -f "$work/vms.topo" >/dev/null
cat >"$work/t.topo" <<'T'
vm web1 ip=10.68.0.2/24
vm web2 ip=10.68.0.3/24
vnf a kind=null
vnf b kind=null
chain one vm=web1 dir=in hop=a hop=b
chain two vm=web2 dir=out hop=a
T
sum=$(md5sum <"$work/state/state.json")
toe2=$(td_field vm web2 toe_pid)
kill -STOP "$toe2"
tc_on_exit "kill -CONT $toe2"
set +e
sfc apply -f "$work/t.topo" 2>"$work/err"
rc=$?
set -e
kill -CONT "$toe2"
cat "$work/err"
[ $rc = 1 ] || fail "apply with a stopped TOE exited $rc"
grep -q "vm web2" "$work/err" || fail "the error does not name web2"
[ "$(md5sum <"$work/state/state.json")" = "$sum" ] || fail "state.json changed"
[ "$(toe_ctl web1 stats | td_json 'len(j["chains"])')" = 0 ] || fail "web1's TOE kept the chain"
[ "$(toe_ctl web1 vnf.ls | td_json 'len(j["vnfs"])')" = 0 ] || fail "web1's TOE kept VNFs"
pgrep -f "tochain-vnf --kind null --region $work/" && fail "instance processes left"
echo "half-way failure undone"

sfc apply -f "$work/t.topo"
[ "$(toe_ctl web1 stats | td_json '[c["name"] for c in j["chains"]]')" = "['one']" ] || fail "web1's chain"
[ "$(toe_ctl web2 stats | td_json '[c["name"] for c in j["chains"]]')" = "['two']" ] || fail "web2's chain"
[ "$(pgrep -fc "tochain-vnf --kind null --region $work/")" = 3 ] || fail "expected 3 instances"

echo "--- --prune"
printf 'vm web1 ip=10.68.0.2/24\nvnf a kind=null\nchain one vm=web1 dir=in hop=a\n' >"$work/p.topo"
sfc apply -f "$work/p.topo" | tee "$work/out"
[ "$(cat "$work/out")" = "updated chain one" ] || fail "without --prune only the chain changes"
sfc apply -f "$work/p.topo" --prune | tee "$work/out"
[ "$(sort "$work/out" | tr '\n' ' ')" = "deleted chain two deleted vm web2 deleted vnf b " ] || fail "prune: $(cat "$work/out")"
[ "$(pgrep -fc "tochain-vnf --kind null --region $work/")" = 1 ] || fail "expected 1 instance after prune"
ip netns list | grep -q "$fab-web2" && fail "web2's namespace left"
td_stop_check
echo PASS
