#!/usr/bin/env bash
# timeout: 120
# Full capture (`sfc-ctl capture on CHAIN --all`): every connection of the
# chain's VM, both directions, goes to rotating pcap files under tochaind's
# state dir.  Several clean requests (nothing denied): `capture ls` lists
# the "-all" files with the TOE's full-capture counters (drops counted),
# `capture get` fetches each, and `tcpdump -r -A` of them shows every
# request's and every response's bytes between the client's ports and
# 8080, one client port per request.  `--all` on the other direction of
# the same VM is refused; capture off stops the files.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl tcpdump
tc_need_root "network namespaces"

td_setup 221
sfc vm add web1 --ip 10.94.0.2/24 >/dev/null
sfc vnf add guard --kind null --arg --deny-marker=ATTACK >/dev/null
sfc vnf add oguard --kind null >/dev/null
sfc chain add web-in --vm web1 --dir in --hop guard >/dev/null
sfc chain add web-out --vm web1 --dir out --hop oguard >/dev/null

rc=0; sfc capture on web-in --all --kib 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "capture on --all --kib without a value: exit $rc"
sfc capture on web-in --all
[ "$(sfc --json capture ls web-in | td_json 'j["chains"][0]["on"] and j["chains"][0]["all"]')" = True ] ||
	fail "full capture is not on: $(sfc --json capture ls web-in)"
# one direction of a TOE at a time has full capture; the refusal changes nothing
rc=0; sfc capture on web-out --all 2>"$work/err" || rc=$?
[ $rc = 1 ] && grep -q '"all"' "$work/err" || fail "--all on both directions not refused ($rc): $(cat "$work/err")"
[ "$(sfc --json capture ls web-out | td_json 'j["chains"][0]["on"]')" = False ] || fail "the refusal turned capture on"

mkdir "$work/www"
for i in 1 2 3 4 5 6; do echo "response-body-221-$i" >"$work/www/page$i.html"; done
td_client 10.94.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.94.0.2 8080 15 || fail "the web server did not come up"
for i in 1 2 3 4 5 6; do
	body=$(ip netns exec "$CL" curl -sf --max-time 10 "http://10.94.0.2:8080/page$i.html?req=clean-221-$i")
	[ "$body" = "response-body-221-$i" ] || fail "request $i: $body"
done

# fetch every full-capture file through tochaind and read them all with tcpdump
dump_all() {
	local f ls
	: >"$work/dump"
	ls=$(sfc --json capture ls web-in) || return 1
	for f in $(echo "$ls" | td_json '" ".join(x["file"] for x in j["chains"][0]["files"] if x["file"].endswith("-all.pcap"))'); do
		rm -f "$work/f.pcap"
		sfc capture get web-in "$f" -o "$work/f.pcap" >/dev/null || return 1
		cmp -s "$work/f.pcap" "$work/state/captures/web1/web-in/$f" || fail "fetched bytes of $f differ"
		tcpdump -r "$work/f.pcap" -nn -A >>"$work/dump" 2>"$work/dump.err" || fail "tcpdump -r $f: $(cat "$work/dump.err")"
	done
	for i in 1 2 3 4 5 6; do
		grep -q "GET /page$i.html?req=clean-221-$i HTTP/1.1" "$work/dump" || return 1
		grep -q "response-body-221-$i" "$work/dump" || return 1
	done
}
# the writer puts what the loop published on disk after 200 ms without new data
tc_wait_for 10 dump_all || fail "not every request's bytes are in the capture: $(sfc capture ls web-in; cat "$work/dump")"
sfc capture ls web-in
head -n 40 "$work/dump"
# one connection (client port) per request, requests to 8080 and answers from it
nreq=$(grep -oE "IP 10\.94\.0\.1\.[0-9]+ > 10\.94\.0\.2\.8080: Flags \[P\.\]" "$work/dump" | sort -u | wc -l)
nresp=$(grep -oE "IP 10\.94\.0\.2\.8080 > 10\.94\.0\.1\.[0-9]+: Flags \[P\.\]" "$work/dump" | sort -u | wc -l)
[ "$nreq" -ge 6 ] && [ "$nresp" -ge 6 ] || fail "expected 6 client ports each way, got $nreq requests, $nresp answers"
ls=$(sfc --json capture ls web-in)
[ "$(echo "$ls" | td_json '(lambda a: a["dropped"] == 0 and a["dropped_bytes"] == 0 and a["bytes"] > 0 and a["files"] >= 1 and a["errors"] == 0)(j["chains"][0]["toe"]["all"])')" = True ] ||
	fail "full-capture counters: $ls"
sfc capture ls web-in | grep -q "chunks (0 bytes) dropped" || fail "capture ls does not report drops"

sfc capture off web-in
[ "$(sfc --json capture ls web-in | td_json 'j["chains"][0]["on"] or j["chains"][0]["all"]')" = False ] || fail "capture still on"
files_now() { sfc --json capture ls web-in | td_json 'j["chains"][0]["toe"]["all"]["files"]'; }
sleep 0.5	# the idle flush of anything still published
before=$(files_now)
ip netns exec "$CL" curl -sf --max-time 10 -o /dev/null "http://10.94.0.2:8080/page1.html?after-off"
sleep 0.5
[ "$(files_now)" = "$before" ] || fail "capture off still wrote full-capture files"
td_stop_check
echo PASS
