#!/usr/bin/env bash
# timeout: 120
# tochain-vnf's guest mode without a guest: the agent (--guest, no
# --region) watches a directory standing in for /dev/tochain, in which the
# test links a TOE's region files under their header names (vm707,
# vm707.out, vm707.vnf-a, vm707.vnf-b), as a guest's driver would name
# the devices, plus files it must not serve (not *.vnf-*, a name that is
# not its header's, a guest-kind region, garbage).  Checks: the agent
# serves exactly the two VNF regions, one child each, and names them;
# the TOE's grants are mapped by header name from that directory (a
# fetch through in [a, b] and out [b] has the right sha256; EVIL is
# reset by a or b and never reaches the guest's server; the runtime polls, no wake-up crosses to it); a
# child killed with SIGKILL is reaped ("gone (status 137)") and
# restarted; SIGHUP reaches the children; SIGTERM stops everything with
# exit 0 and no child left; b's stats file (FILE.NAME) counts the
# outbound descriptors it judged.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"

tc_need_cmds ip python3 curl sha256sum
tc_need_root "network namespaces"

tt_setup 707
name=vm707
ra=$(ctl_ok vnf.add '{"name":"a"}' | tt_json 'j["region"]')
rb=$(ctl_ok vnf.add '{"name":"b"}' | tt_json 'j["region"]')
dev=$work/dev
mkdir "$dev"
ln "$region" "$dev/$name"
ln "$region.out" "$dev/$name.out"
ln "$ra" "$dev/$name.vnf-a"
ln "$rb" "$dev/$name.vnf-b"
ln "$rb" "$dev/other.vnf-b"		# a name that is not its header's
ln "$region" "$dev/$name.vnf-g"		# a guest-kind region
head -c 8192 /dev/urandom >"$dev/$name.vnf-junk"

"$build/bin/tochain-vnf" --kind null --deny-marker EVIL --guest --dev-dir "$dev" \
	--stats "$work/st" 2>"$work/agent.log" &
AG=$!
tc_on_exit "kill -9 $AG"
for i in $(seq 50); do
	[ "$(grep -c 'tochain-vnf: serving' "$work/agent.log")" -ge 2 ] && break
	sleep 0.1
done
sleep 0.5	# a third would come within a scan or two
cat "$work/agent.log"
[ "$(grep -c 'tochain-vnf: serving' "$work/agent.log")" = 2 ] ||
	fail "the agent should serve exactly the two VNF regions"
for v in a b; do
	grep -q "tochain-vnf: serving $dev/$name.vnf-$v (pid [0-9]*)" "$work/agent.log" ||
		fail "$name.vnf-$v not served"
done
pa=$(sed -n "s|.*serving $dev/$name.vnf-a (pid \([0-9]*\)).*|\1|p" "$work/agent.log")

# The TOE knows the agent's pid only (as it would know QEMU's).
ctl_ok vnf.attach "{\"name\":\"a\",\"pid\":$AG}" >/dev/null
ctl_ok vnf.attach "{\"name\":\"b\",\"pid\":$AG}" >/dev/null
ctl_ok chain.set '{"dir":"in","name":"h-in","hops":[["a","b"]]}' >/dev/null
ctl_ok chain.set '{"dir":"out","name":"h-out","hops":[["b"]]}' >/dev/null

mkdir "$work/www"
head -c $((2 << 20)) /dev/urandom >"$work/www/big.bin"
want=$(sha256sum <"$work/www/big.bin" | cut -d' ' -f1)
tt_serve "$work/www" 8080
got=$(ip netns exec "$CL" curl -sS --max-time 30 http://10.81.0.2:8080/big.bin | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || { echo "FAIL: sha256 through the agent's children"; tail "$work/agent.log"; exit 1; }
echo "2 MiB through in [a, b] and out [b], served by the agent: sha256 ok"
tc_curl_reset "$CL" "$work/py.log" "q=EVIL" "http://10.81.0.2:8080/x?q=EVIL"
echo "EVIL reset, the guest's server never saw it: $TC_RESET_ERR"
st=$(ctl_ok stats)
echo "$st" | tt_json 'any(d["vnf"] in ("a", "b") and d["rule"] == 1 for d in j["denials"])' | grep -q True ||
	fail "no denial by a or b: $st"
grep -q 'cannot map\|no header name' "$work/agent.log" && fail "a grant was not mapped"

# A child killed: reaped, said, restarted.
kill -9 "$pa"
for i in $(seq 50); do
	[ "$(grep -c "serving $dev/$name.vnf-a" "$work/agent.log")" -ge 2 ] && break
	sleep 0.1
done
grep -q "tochain-vnf: $dev/$name.vnf-a gone (status 137)" "$work/agent.log" ||
	{ echo "FAIL: the killed child was not reaped"; cat "$work/agent.log"; exit 1; }
[ "$(grep -c "serving $dev/$name.vnf-a" "$work/agent.log")" = 2 ] ||
	fail "the killed child was not restarted"
echo "child of a killed: reaped (status 137) and restarted"

# SIGHUP goes to the children (each reloads its rules and says so).
kill -HUP "$AG"
for i in $(seq 50); do
	[ "$(grep -c 'rules reloaded' "$work/agent.log")" -ge 2 ] && break
	sleep 0.1
done
[ "$(grep -c 'rules reloaded' "$work/agent.log")" -ge 2 ] ||
	{ echo "FAIL: SIGHUP did not reach the children"; cat "$work/agent.log"; exit 1; }

kill $PY; wait $PY 2>/dev/null || true
kill -TERM "$AG"
rc=0
wait "$AG" || rc=$?
[ $rc = 0 ] || { echo "FAIL: agent exit $rc"; cat "$work/agent.log"; exit 1; }
pgrep -f "tochain-vnf --kind null --deny-marker EVIL --guest --dev-dir $dev" >/dev/null &&
	fail "children left behind"
pb=$(awk '$1 == "packets" { print $2 }' "$work/st.$name.vnf-b")
[ "${pb:-0}" -ge $(( (2 << 20) / 16384 )) ] ||
	fail "b's stats: $(cat "$work/st.$name.vnf-b" 2>/dev/null)"
echo "b judged $pb descriptors; agent stopped with exit 0"
if grep -q 'Sanitizer\|runtime error' "$work/agent.log"; then
	cat "$work/agent.log"; echo "FAIL: sanitizer report"; exit 1
fi
tt_toe_stop
echo "PASS 707_vnf_agent_host"
