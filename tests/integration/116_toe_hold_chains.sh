#!/usr/bin/env bash
# timeout: 240
# Fail-closed across a TOE restart (tochain-toe --hold, chains.ready):
# tochaind starts a VM's TOE held, and releases it only once it has set
# the VM's chains on it.  Before, the guest's server re-created its
# listener on the new TOE and was served before the chain was back, so
# an attack sent then reached it (the fault soak: 5 in 60 s).  Here a
# chain denies requests with ATTACK; two clients send attacks without
# pause while the TOE is killed with SIGKILL 4 times; after each restart
# a clean request is served again, and no attack ever reaches the
# guest's server (its log).
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl
tc_need_root "network namespaces"

td_setup 116
sfc vm add web1 --ip 10.116.0.2/24 >/dev/null
sfc vnf add guard --kind null --arg --deny-marker=ATTACK >/dev/null
sfc chain add web-in --vm web1 --dir in --hop guard >/dev/null
mkdir "$work/www"
echo hello >"$work/www/index.html"
td_client 10.116.0.1
td_serve web1 "$work/www" 8080
url=http://10.116.0.2:8080
tc_wait_port "$CL" 10.116.0.2 8080 15 || fail "the web server did not come up"
clean() { ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time "$1" $url/ || true; }
[ "$(clean 10)" = 200 ] || fail "clean request before the kills"
tc_curl_reset "$CL" "$work/py-web1.log" "q=ATTACK" "$url/x?q=ATTACK"

attacker() {
	local n=0
	while [ ! -e "$work/stop" ]; do
		n=$((n + 1))
		ip netns exec "$CL" curl -s -o /dev/null --max-time 2 "$url/a$1?q=ATTACK$n" || true
	done
	echo $n >"$work/attacks$1"
}
attacker 1 &
A1=$!
attacker 2 &
A2=$!
tc_on_exit "touch $work/stop; kill $A1 $A2 2>/dev/null"

for round in 1 2 3 4; do
	toe=$(td_field vm web1 toe_pid)
	kill -9 "$toe"
	t0=$(date +%s.%N)
	ok=
	for i in $(seq 150); do
		now=$(td_field vm web1 toe_pid)
		if [ "$now" != "$toe" ] && [ "$(clean 2)" = 200 ]; then
			ok=1
			break
		fi
		sleep 0.2
	done
	[ -n "$ok" ] || fail "round $round: no clean request served after the TOE restart"
	echo "round $round: TOE $toe killed, TOE $now serves a clean request" \
		"$(echo "$(date +%s.%N) - $t0" | bc) s later"
	sleep 1	# attacks on the served TOE too
done
touch "$work/stop"
wait $A1 $A2
echo "attacks sent: $(cat "$work/attacks1") + $(cat "$work/attacks2")"
sleep 0.3	# a leaked request line shows when the server read it
if grep -F "ATTACK" "$work/py-web1.log" | head -3 | grep .; then
	fail "attacks reached the guest's server across the TOE restarts"
fi
n=$(grep -c "chains set, the TOE serves inbound connections" "$work/state/tochaind.log" || true)
[ "$n" -ge 5 ] || fail "tochaind released its TOE $n times, not 5 (start + 4 restarts)"
td_stop_check
echo PASS
