#!/usr/bin/env bash
# timeout: 240
# Rules files are checked where they enter, by the engine that will run
# them (tochain-vnf --check), and a VNF that keeps dying says why:
#   a. vnf add of a broken ids file is refused (exit 1) naming its
#      file:line, every problem in --json, and vnf ls is unchanged;
#   b. the shipped ids sample, added with the command in its own comment
#      (--vars vars.conf), serves a clean request and resets an attack
#      from a client outside its HOME_NET;
#   c. broken fw and waf files are refused with file:line, also by apply -f;
#   d. a reload (apply -f after an edit) with a broken file is refused: the
#      copy, the instance and its rules stay (the attack is still reset);
#   e. an instance whose rules copy is corrupted and which is then killed
#      is restarted with growing back-off, and vnf show and stats name its
#      last error line; a good copy brings it back.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl
tc_need_root "network namespaces"

td_setup 216
vnfjson() { sfc --json vnf ls | td_json 'json.dumps(j, sort_keys=True)'; }
refused() { # what, expected file:line, command...: exit 1, the reason names file:line
	local what=$1 where=$2 rc=0
	shift 2
	("$@") >"$work/out" 2>"$work/err" || rc=$?
	echo "$what: exit $rc: $(cat "$work/err")"
	[ $rc = 1 ] || fail "$what: exit $rc, not 1 (refused)"
	[ "$(wc -l <"$work/err")" = 1 ] || fail "$what: not one line: $(cat "$work/err")"
	grep -qF "$where" "$work/err" || fail "$what: the reason does not name $where"
}

# --- a. a broken ids file: refused with file:line, nothing changes ---
sfc vm add web1 --ip 10.76.0.2/24 >/dev/null
before=$(vnfjson)
cat >"$work/bad-ids.rules" <<'R'
# one good rule, then two bad ones
alert tcp any any -> any any (msg:"ok"; content:"fine"; sid:1; rev:1;)
drop tcp any any -> any any (msg:"typo"; content:"x"; frobnicate; sid:2; rev:1;)
alert tcp $NO_SUCH_NET any -> any any (msg:"var"; content:"y"; sid:3; rev:1;)
R
refused "vnf add of a broken ids file" "$work/bad-ids.rules:3:" \
	sfc vnf add bad --kind ids --rules "$work/bad-ids.rules"
grep -qF "$work/state/check" "$work/err" && fail "the reason names the staging copy, not the user's file"
rc=0
sfc --json vnf add bad --kind ids --rules "$work/bad-ids.rules" >"$work/out" 2>/dev/null || rc=$?
[ $rc = 1 ] || fail "--json vnf add of a broken file: exit $rc"
td_json '"\n".join(j["problems"])' <"$work/out" | tee "$work/problems"
grep -qF "$work/bad-ids.rules:3: unsupported option 'frobnicate'" "$work/problems" &&
	grep -qF "$work/bad-ids.rules:4: unknown variable 'NO_SUCH_NET'" "$work/problems" ||
	fail "--json does not list every problem: $(cat "$work/out")"
[ "$(vnfjson)" = "$before" ] || fail "vnf ls changed after a refused add"
[ ! -e "$work/state/rules/bad.rules" ] || fail "a refused file was copied"
ls "$work/state" | grep -q '^check' && fail "a staging directory was left: $(ls "$work/state")"

# --- b. the shipped sample with the command in its comment ---
cmd=$(sed -n 's/^#   sfc-ctl \(vnf add .*\)$/\1/p' "$top/vnfs/ids/rules/local.rules")
echo "the sample's own command: sfc-ctl $cmd"
[[ "$cmd" == *"--vars"* ]] || fail "the sample's comment gives no --vars: $cmd"
(cd "$top" && sfc $cmd) >/dev/null || fail "the sample's own command was refused"
ids=$(echo "$cmd" | awk '{print $3}')
[ "$(td_field vnf "$ids" vars)" = "$(realpath "$top/vnfs/ids/rules/vars.conf")" ] || fail "vnf show has no vars"
cmp -s "$top/vnfs/ids/rules/vars.conf" "$work/state/rules/$ids.vars" || fail "the vars file was not copied"
sfc chain add web-in --vm web1 --dir in --hop "$ids" >/dev/null
mkdir "$work/www"
echo hello >"$work/www/index.html"
# The client sits outside HOME_NET (vars.conf: private ranges), as an
# attacker from the Internet does: on-link routes across the bridge.
td_client 198.51.100.7
ns=$(td_field vm web1 netns)
dev=$(ip -n "$ns" -o -4 addr show | awk '$2 != "lo" {print $2; exit}')
ip -n "$ns" route add 198.51.100.0/24 dev "$dev"
ip -n "$CL" route add 10.76.0.0/24 dev eth0
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.76.0.2 8080 15 || fail "the web server did not come up"
url=http://10.76.0.2:8080
get() { ip netns exec "$CL" curl -s -o "$work/got" -w '%{http_code}' --max-time 10 "$@" || true; }
attack() { # must be reset, and the guest's server must never see the request
	tc_curl_reset "$CL" "$work/py-web1.log" "etc/passwd" "$url/x?f=/etc/passwd"
	echo "$1: attack reset, the guest's server never saw it"
}
[ "$(get "$url/")" = 200 ] && cmp -s "$work/got" "$work/www/index.html" || fail "clean request through the sample ids"
attack "sample ids"
[ "$(get "$url/")" = 200 ] || fail "clean request after the attack"
sfc --json stats | td_json '[d["rule"] for d in j["denials"]]' | grep -q 9000001 ||
	fail "stats does not show sid 9000001: $(sfc stats)"

# --- c. broken fw and waf files: refused, by vnf add and by apply -f ---
printf 'accept in tcp dport 8080\naccept in tcp dport 80x80\n' >"$work/bad.fw"
refused "vnf add of a broken fw file" "$work/bad.fw:2:" sfc vnf add badfw --kind fw --rules "$work/bad.fw"
printf 'SecRule ARGS "@rx foo" "id:1000,phase:2,deny"\nSecRule ARGS "@rx bar" "id:1001,phase:2,deny,frobnicate:1"\n' >"$work/bad.waf"
refused "vnf add of a broken waf file" "$work/bad.waf:2:" sfc vnf add badwaf --kind waf --rules "$work/bad.waf"
printf 'vnf badfw kind=fw rules=bad.fw\n' >"$work/bad.topo"
refused "apply -f with a broken fw file" "$work/bad.fw:2:" sfc apply -f "$work/bad.topo"
printf 'vnf badids kind=ids rules=%s vars=%s\n' "$top/vnfs/ids/rules/local.rules" "$work/bad-ids.rules" >"$work/bad2.topo"
refused "apply -f with a bad vars file" "$work/bad-ids.rules" sfc apply -f "$work/bad2.topo"
[ "$(sfc --json vnf ls | td_json 'len(j["vnfs"])')" = 1 ] || fail "a refused file left a VNF"

# --- d. a reload with a broken file is refused; the old rules stay ---
cp "$top/vnfs/ids/rules/local.rules" "$work/ids.rules"
cp "$top/vnfs/ids/rules/vars.conf" "$work/vars.conf"
cat >"$work/t.topo" <<T
vm web1 ip=10.76.0.2/24
vnf $ids kind=ids rules=ids.rules vars=vars.conf
chain web-in vm=web1 dir=in hop=$ids
T
sfc apply -f "$work/t.topo" >/dev/null	# the same content: nothing to do, or a path change
pid=$(sfc --json vnf show "$ids" | td_json 'j["instances"][0]["pid"]')
cp "$work/state/rules/$ids.rules" "$work/copy-before"
echo 'drop tcp $EXTERNAL_NET any -> $HTTP_SERVERS $HTTP_PORTS (msg:"bad"; content:"x"; nosuchoption; sid:9100001;)' >>"$work/ids.rules"
line=$(wc -l <"$work/ids.rules")
refused "reload with a broken ids file" "$work/ids.rules:$line:" sfc apply -f "$work/t.topo"
cmp -s "$work/copy-before" "$work/state/rules/$ids.rules" || fail "the refused reload replaced the copy"
[ "$(sfc --json vnf show "$ids" | td_json 'j["instances"][0]["pid"]')" = "$pid" ] || fail "the instance was replaced"
td_running "$pid" || fail "the instance died"
attack "after the refused reload"
[ "$(get "$url/")" = 200 ] || fail "clean request after the refused reload"

# --- e. rules unloadable at restart: back-off, and the reason shown ---
echo 'this is not a snort rule' >"$work/state/rules/$ids.rules"
kill -9 "$pid"
t0=$(date +%s.%N)
sleep 6.5
js=$(sfc --json vnf show "$ids")
restarts=$(echo "$js" | td_json 'j["instances"][0]["restarts"]')
echo "$restarts restarts in 6.5 s"
# 0.1 s doubling (at least one 500 ms repair tick each): about 5; without
# back-off a restart at every tick is 13
[ "$restarts" -ge 2 ] && [ "$restarts" -le 7 ] || fail "restarts in 6.5 s: $restarts (no back-off?)"
# A restart caught between its start and its failed rule load shows as
# running for that moment (CI, 2026-12-04: restart 7 at 6.5 s; later
# restart 6 between vnf show and stats): take the three views again, for
# up to 2 s, until all were taken while it was down; the next restart is
# at least 3.2 s away.
down_views() {
	sfc vnf show "$ids" >"$work/show"
	js=$(sfc --json vnf show "$ids")
	sfc stats >"$work/stats"
	echo "$js" | td_json 'j["instances"][0]["running"]' | grep -qx False &&
		grep -q "vnf $ids on vm web1 is DOWN: restarted" "$work/stats" &&
		[ "$(sfc --json vnf show "$ids" | td_json 'j["instances"][0]["restarts"]')" = "$restarts" ]
}
for _ in $(seq 10); do
	down_views && break
	sleep 0.2
	restarts=$(sfc --json vnf show "$ids" | td_json 'j["instances"][0]["restarts"]')
done
cat "$work/show" "$work/stats"
echo "$js" | td_json 'j["instances"][0]["running"]' | grep -qx False || fail "a broken instance runs"
echo "$js" | td_json 'j["instances"][0]["next_retry_s"]' >/dev/null || fail "no next_retry_s: $js"
echo "$js" | td_json 'j["instances"][0]["last_error"]' | tee "$work/lasterr"
grep -q "rules/$ids.rules:1:" "$work/lasterr" || fail "last_error does not name the copy's file:line"
grep -q "last error: .*rules/$ids.rules:1:" "$work/show" || fail "vnf show does not print the last error"
grep -q "vnf $ids on vm web1 is DOWN: restarted" "$work/stats" || fail "stats does not say the VNF is down"
grep -q "last error: .*rules/$ids.rules:1:" "$work/stats" || fail "stats does not print the last error"
sleep 4
r2=$(sfc --json vnf show "$ids" | td_json 'j["instances"][0]["restarts"]')
[ "$r2" -le $((restarts + 2)) ] || fail "restarts went from $restarts to $r2 in 4 s: not backing off"
# a good copy again: the next retry brings it back (within the back-off)
cp "$work/copy-before" "$work/state/rules/$ids.rules"
for i in $(seq 400); do
	[ "$(sfc --json vnf show "$ids" | td_json 'j["instances"][0]["running"]')" = True ] && break
	sleep 0.1
done
[ "$(sfc --json vnf show "$ids" | td_json 'j["instances"][0]["running"]')" = True ] || fail "the instance did not come back"
for i in $(seq 50); do [ "$(get "$url/")" = 200 ] && break; sleep 0.2; done
[ "$(get "$url/")" = 200 ] || fail "clean request after the instance came back"
attack "after the instance came back"
td_stop_check
echo PASS
