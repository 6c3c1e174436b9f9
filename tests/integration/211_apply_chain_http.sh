#!/usr/bin/env bash
# timeout: 180
# sfc-ctl apply -f builds a VM, three null VNFs and an in chain of two
# hops, one of them parallel ([a] -> [b, c]), in front of python3
# http.server under tochain-run in the stand-in VM; a client's fetches
# succeed (sha256 checked); the same file applied again changes nothing
# and says so; stats counts arrivals and done; an edited file updates only
# what changed; errors name FILE:LINE and change nothing.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl sha256sum
tc_need_root "network namespaces"

td_setup 211
cat >"$work/web.topo" <<'T'
# one web server behind a two-hop chain
vm web1 ip=10.62.0.2/24
vnf a kind=null
vnf b kind=null
vnf c kind=null threads=2    # parallel with b
chain web-in vm=web1 dir=in hop=a hop=b,c
T
t0=$(date +%s%N)
sfc apply -f "$work/web.topo" | tee "$work/out"
t1=$(date +%s%N)
echo "apply (1 VM, 3 VNFs, 1 chain): $(( (t1 - t0) / 1000000 )) ms"
grep -q "created chain web-in" "$work/out" || fail "apply did not create the chain"
[ "$(sfc --json chain ls | td_json 'len(j["chains"])')" = 1 ] || fail "chain ls"
for v in a b c; do
	[ "$(sfc --json vnf show $v | td_json 'j["instances"][0]["running"]')" = True ] || fail "vnf $v not running"
done
echo "--- applied twice: no changes"
t0=$(date +%s%N)
sfc apply -f "$work/web.topo" | tee "$work/out2"
echo "apply with nothing to do: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
[ "$(cat "$work/out2")" = "no changes" ] || fail "second apply changed something"
ver=$(sfc --json chain show web-in | td_json 'j["toe"]["version"]')

mkdir "$work/www"
head -c $((1 << 20)) /dev/urandom >"$work/www/blob"
want=$(sha256sum <"$work/www/blob" | cut -d' ' -f1)
td_client 10.62.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.62.0.2 8080 15 || fail "the web server did not come up"
for i in 1 2 3; do
	got=$(ip netns exec "$CL" curl -sS --max-time 20 http://10.62.0.2:8080/blob | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "fetch $i: sha256 differs"
done
echo "3 fetches of 1 MiB through [a] -> [b,c]: sha256 ok"
sleep 0.3
sfc stats --watch 1 --count 2 >"$work/watch"
cat "$work/watch"
[ "$(grep -c '^CHAIN' "$work/watch")" = 2 ] || fail "stats --watch 1 --count 2 did not print two tables"
st=$(sfc --json stats web-in)
arr=$(echo "$st" | td_json 'j["chains"][0]["arrivals"]')
fin=$(echo "$st" | td_json 'j["chains"][0]["finished"]')
[ "$arr" -ge 3 ] && [ "$arr" = "$fin" ] || fail "stats: arrivals $arr done $fin"
[ "$(sfc --json chain show web-in | td_json 'j["toe"]["version"]')" = "$ver" ] || fail "the chain was set again"

echo "--- an edited file changes only what differs"
sed -i 's/hop=a hop=b,c/hop=a,b hop=c/' "$work/web.topo"
sfc apply -f "$work/web.topo" | tee "$work/out3"
[ "$(cat "$work/out3")" = "updated chain web-in" ] || fail "expected one chain update"
got=$(ip netns exec "$CL" curl -sS --max-time 20 http://10.62.0.2:8080/blob | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "fetch after the update: sha256 differs"

echo "--- bad files: FILE:LINE, exit 1, nothing changed"
before=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(json.dumps([j["vms"],j["vnfs"],j["chains"]]))' "$work/state/state.json")
printf 'vm web1 ip=10.62.0.2/24\nvnf d kind=null\nchain x vm=web1 dir=out hop=d,zz\n' >"$work/bad1.topo"
printf 'vnf d kind=null\nvnf e kind=nope\n' >"$work/bad2.topo"
printf 'vnf d kind=null\nbogus line\n' >"$work/bad3.topo"
printf 'vnf d kind=null\nchain y vm=web1 dir=in hop=d\n' >"$work/bad4.topo"
printf "vm a\000\377 ip=1\n\x01garbage" >"$work/bad5.topo"
for f in bad1:3 bad2:2 bad3:2 bad4:2 bad5:; do
	set +e; (sfc apply -f "$work/${f%%:*}.topo") 2>"$work/err"; rc=$?; set -e
	[ $rc = 1 ] || fail "${f%%:*}: exit $rc"
	[ "$(wc -l <"$work/err")" = 1 ] || fail "${f%%:*}: not one line: $(cat "$work/err")"
	[ -z "${f#*:}" ] || grep -q "${f%%:*}.topo:${f#*:}: " "$work/err" || fail "${f%%:*}: no FILE:LINE: $(cat "$work/err")"
	echo "  $(cat "$work/err")"
done
after=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(json.dumps([j["vms"],j["vnfs"],j["chains"]]))' "$work/state/state.json")
[ "$before" = "$after" ] || fail "a refused apply changed the state"
[ "$(sfc --json vnf ls | td_json 'len(j["vnfs"])')" = 3 ] || fail "vnf d exists"
td_stop_check
echo PASS
