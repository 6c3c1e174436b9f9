# shellcheck shell=bash
# The steps `make demo` shows, shared by its two VMs (source this file;
# bash): scripts/demo.sh (stand-in VM: a namespace) and scripts/demo-vm.sh
# (VM=qemu: a libvirt domain).  The caller sets $top and $build, sources
# tests/lib/netns.sh and tests/lib/tochaind.sh, then:
#
#   demo_init              settings (DEMO_*), $out, $bin, step/say/now
#   demo_daemons [OPT...]  step 1: tochain-sched (sync) and tochaind (OPTs
#                          added) with the demo's own cgroup, sockets,
#                          state in $work (/dev/shm), fabric $fab
#   demo_apply             `make install` the example and the rules into
#                          $work/root, `sfc-ctl apply -f demo.topo` (VM
#                          web1, the chain fw -> (ids || waf)), the sampler
#   demo_page              $work/www/index.html, the page web1 serves
#   demo_nginx_conf LINES  $work/nginx.conf: nginx master + 2 workers on
#                          port 80 serving $work/www, LINES in its http block
#   demo_client SECS       the client 198.51.100.7 on the fabric, routes
#                          to and from 10.0.0.0/24; waits SECS for port 80
#   demo_mission           steps 4 to 7: clean requests and attacks, the
#                          SLA with the load under sync and cfs, stats,
#                          the PNG; DEMO_REGISTER_VM=1 calls the caller's
#                          demo_register_vm first (the VM's threads as
#                          the VM's with tochain-sched)
#   demo_done              the last line: what was removed goes at exit

demo_init() {
	secs=${DEMO_SECONDS:-15}
	sla=${DEMO_SLA:-200}
	rate=${DEMO_RATE:-$((sla * 6 / 5))}
	tenants=${DEMO_TENANTS:-3}
	out=$build/demo
	bin=$build/bin
	tools=$top/scripts/demo-tools.py
	t_start=$(date +%s)
}
step() { printf '\n[%3ds] == %s\n' $(($(date +%s) - t_start)) "$*"; }
say() { echo "   $*"; }
now() { date +%s.%N; }

# --- 1. the daemons ---
demo_daemons() {
	step "1. tochain-sched (sync) and tochaind start"
	tc_init
	work=$(mktemp -d /dev/shm/tcdemo.XXXXXX)
	chmod 755 "$work"
	fab=tcfdemo-$TC_SUFFIX
	fab=${fab:0:20}
	schedcg=tcdemo-$TC_SUFFIX
	export TOCHAIN_SOCKET=$work/ctl.sock
	mkdir -p "$out"
	rm -f "$out"/demo*
	events=$out/demo-events.txt
	: >"$events"
	SCHED_PID=
	tc_on_exit td_cleanup
	tc_on_fail td_fail_logs
	"$bin/tochain-sched" --socket "$work/sched.sock" --mode sync --cgroup "$schedcg" \
		--print-every 0 >"$work/sched.log" 2>&1 &
	SCHED_PID=$!
	tc_on_exit sched_stop
	tc_wait_for 5 test -S "$work/sched.sock" || { cat "$work/sched.log"; fail "tochain-sched did not start"; }
	td_daemon --fabric-ns "$fab" --bridge tcbr0 \
		--region-dir "$work/regions" --sched-socket "$work/sched.sock" "$@"
	say "tochain-sched: $(sfc sched show | head -n 1)"
	say "tochaind: $(sfc version | head -n 1); state in $work"
}
sched_stop() { # it thaws what it froze on SIGTERM: before anything else goes
	[ -n "$SCHED_PID" ] || return 0
	kill "$SCHED_PID" 2>/dev/null
	tc_wait_exit 5 "$SCHED_PID" || kill -9 "$SCHED_PID"
	"$bin/tochain-sched" --cgroup "$schedcg" --cleanup >/dev/null 2>&1
	SCHED_PID=
}

# --- 2. the chain, from the example as installed ---
demo_apply() {
	make -s --no-print-directory install-files DIST_NOBUILD=1 BUILD="$build" PREFIX=/usr \
		DESTDIR="$work/root" >/dev/null
	share=$work/root/usr/share/tochain
	topo=$share/examples/demo.topo
	say "the example as \`make install\` puts it: $topo (rules beside it in ../rules/)"
	sfc apply -f "$topo" | sed 's/^/   /'
	sfc chain ls | sed 's/^/   /'
	python3 "$tools" sample "$bin/sfc-ctl" web1-in "$out/demo-samples.jsonl" &
	tc_on_exit "kill $!"
}

# demo_nginx_conf HTTP-LINES: $work/nginx.conf, nginx in the foreground
# (master + 2 workers) serving $work/www on port 80, HTTP-LINES added to
# its http block (make soak shares it)
demo_nginx_conf() {
	cat >"$work/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 2;
error_log $work/nginx-error.log notice;
pid $work/nginx.pid;
events { worker_connections 1024; }
http {
	$1
	client_body_temp_path $work/tmp;
	proxy_temp_path $work/tmp;
	fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp;
	scgi_temp_path $work/tmp;
	server { listen 80; root $work/www; }
}
CONF
}

demo_page() {
	mkdir -p "$work/www"
	echo "hello from web1, served through the TOE and the chain" >"$work/www/index.html"
}

# The client is on the Internet, outside the IDS's HOME_NET (vars.conf:
# the private ranges): on-link routes across the fabric bridge.
demo_client() {
	local toens dev
	td_client 198.51.100.7
	toens=$(td_field vm web1 netns)
	dev=$(ip -n "$toens" -o -4 addr show | awk '$2 != "lo" {print $2; exit}')
	ip -n "$toens" route add 198.51.100.0/24 dev "$dev"
	ip -n "$CL" route add 10.0.0.0/24 dev eth0
	tc_wait_port "$CL" 10.0.0.2 80 "$1" || fail "nginx did not come up behind the TOE"
	say "nginx listens on 10.0.0.2:80 (the TOE's namespace); the client is 198.51.100.7"
}

# --- 4. clean requests and attacks ---
clean() { # what, curl args...: 200 with the file
	local what=$1 code
	shift
	code=$(ip netns exec "$CL" curl -s -o "$work/got" -w '%{http_code}' --max-time 10 "$@") || true
	[ "$code" = 200 ] || fail "clean request '$what' gave '$code', not 200"
	cmp -s "$work/got" "$work/www/index.html" || fail "clean request '$what': the page arrived changed"
	say "served  $what: HTTP $code"
}
attack() { # what, expected VNF (regex), expected rule (regex), curl args...
	local what=$1 vnf=$2 rule=$3 rc=0 d kind msg code how
	shift 3
	sfc --json stats web1-in >"$work/before.json"
	code=$(ip netns exec "$CL" curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --path-as-is "$@" \
		2>"$work/err") || rc=$?
	# the WAF answers with a 403 page and closes; anything else denied is reset
	how="RESET   $what (curl $rc)"
	[ $rc = 0 ] && [ "$code" = 403 ] && how="403     $what"
	[ $rc = 56 ] || [ $rc = 52 ] || [ "${how:0:3}" = 403 ] ||
		fail "attack '$what' was not denied: curl $rc, HTTP $code $(cat "$work/err")"
	# the newest denial that was not there before: "VNF RULE TIME"
	sfc --json stats web1-in >"$work/after.json"
	d=$(python3 - "$work/before.json" "$work/after.json" <<'PY'
import json, sys
old = {(d["time"], d["conn"]) for d in json.load(open(sys.argv[1]))["denials"]}
new = [d for d in json.load(open(sys.argv[2]))["denials"] if (d["time"], d["conn"]) not in old]
d = max(new, key=lambda d: d["time"]) if new else None
print("%s %s %.3f" % (d["vnf"], d["rule"], d["time"]) if d else "none")
PY
)
	set -- $d
	[ "$1" != none ] || fail "attack '$what': reset, but stats shows no new denial"
	[[ $1 =~ ^($vnf)$ ]] || fail "attack '$what' was denied by $1 (rule $2), not by $vnf"
	[[ $2 =~ ^($rule)$ ]] || fail "attack '$what' was denied by rule $2 of $1, not $rule"
	[ "${how:0:3}" != 403 ] || [ "$1" = web-waf ] || fail "attack '$what': a 403 answer, but $1 denied it"
	kind=waf
	[ "$1" = web-ids ] && kind=ids
	msg=$(python3 "$tools" rule "$kind" "$2" "$ids_rules")
	say "$how: denied by $1, rule $2${msg:+ \"$msg\"}"
	echo "$3 denial $1/$2" >>"$events"
}
demo_requests() {
	local rc
	step "4. a client's clean requests and three attacks"
	url=http://10.0.0.2
	ids_rules=$share/rules/ids/local.rules
	clean "GET /" "$url/"
	clean "GET /index.html with a query" "$url/index.html?q=hello+world&page=2"
	clean "GET with a browser's User-Agent" "$url/index.html" -A "Mozilla/5.0 (X11; Linux x86_64) Firefox/115.0"
	attack "SQL injection ?id=1' OR '1'='1" web-waf '942[0-9]+' "$url/index.html?id=1%27%20OR%20%271%27%3D%271"
	attack "path traversal /../../etc/passwd" 'web-ids|web-waf' '90000(01|02)|93[0-9]+' "$url/../../etc/passwd"
	attack "IDS signature: GET /scripts/cmd.exe" web-ids 9000005 "$url/scripts/cmd.exe"
	clean "GET / after the attacks" "$url/"
	set +e
	ip netns exec "$CL" curl -sS -o /dev/null --max-time 3 http://10.0.0.2:3306/ 2>/dev/null
	rc=$?
	set -e
	[ $rc = 7 ] || [ $rc = 28 ] || fail "port 3306 was not refused by the firewall: curl $rc"
	say "refused a connection to port 3306 (curl $rc): the fw's nftables half in the TOE's namespace"
}

# --- 5. an SLA, and what sync and cfs give the chain ---
demo_sla() {
	local rc=0 note i
	step "5. an SLA of $sla packets/s on the in chain, under tochain-sched"
	sfc chain set-sla web1-in "$sla" >"$work/sla.out" 2>&1 || rc=$?
	if [ $rc != 0 ]; then
		say "sfc-ctl chain set-sla web1-in $sla: refused: $(cat "$work/sla.out")"
		grep -q "gang members need distinct pCPUs" "$work/sla.out" || fail "set-sla refused for another reason"
		say "so, as the paper ran iptables beside the stack: fw leaves the chains (its nftables half"
		say "stays in the TOE's namespace; the VM's SLA covers its out chain too, so web1-out goes)"
		say "and the SLA goes on (ids || waf)"
		sed -e 's/hop=web-fw hop=web-ids,web-waf/hop=web-ids,web-waf/' -e '/^chain web1-out /d' \
			"$topo" >"$share/examples/demo-sla.topo"
		sfc apply -f "$share/examples/demo-sla.topo" --prune | sed 's/^/   /'
		sfc chain set-sla web1-in "$sla" >"$work/sla.out" 2>&1 || fail "set-sla: $(cat "$work/sla.out")"
	fi
	echo "$(now) sla $sla" >>"$events"
	say "sfc-ctl chain set-sla web1-in $sla: admitted, $(sfc --json stats web1-in |
		td_json '"%.2f CPUs reserved over %d VNF vCPUs" % (j["chains"][0]["cpu_quota"], j["chains"][0]["vnf_vcpus"])')"
	if [ "${DEMO_REGISTER_VM:-0}" = 1 ]; then demo_register_vm; fi
	note=
	for i in $(seq 50); do
		note=$(sfc --json chain show web1-in | td_json 'j["sched"]')
		[[ $note == registered* ]] && break
		sleep 0.2
	done
	[[ $note == registered* ]] || fail "the chain's VNF threads are not registered with tochain-sched: $note"
	say "chain web1-in: $note (the VNFs' service threads)"
	# CPU-bound tenants: stand-ins for other VMs' vCPUs on the same 2 CPUs
	if [ "$tenants" -gt 0 ]; then
		for i in $(seq "$tenants"); do
			timeout $((3 * secs + 60)) sh -c 'while :; do :; done' &
			tc_on_exit "kill $!"	# timeout passes SIGTERM on
		done
		say "$tenants CPU-bound tenant processes compete for the CPUs (stand-ins for other VMs' vCPUs)"
	fi
	results=()
	demo_load sync
	demo_load cfs
	echo "$(now) phase load ends" >>"$events"
	step "5. the SLA beside the rate achieved"
	for r in "${results[@]}"; do say "$r"; done
}
demo_load() { # mode
	local mode=$1 js i
	sfc sched mode "$mode" >/dev/null
	for i in $(seq 40); do
		[ "$(sfc --json sched show | td_json 'j["mode"]')" = "$mode" ] && break
		sleep 0.1
	done
	[ "$(sfc --json sched show | td_json 'j["mode"]')" = "$mode" ] || fail "the scheduler did not switch to $mode"
	sleep 1
	echo "$(now) phase $mode mode, SLA $sla" >>"$events"
	say "$mode: open-loop load, $rate requests/s for ${secs}s (one connection each) ..."
	js=$(ip netns exec "$CL" python3 "$tools" load 10.0.0.2 80 /index.html "$rate" "$secs" "$out/demo-load-$mode.csv")
	# a measurement, not a pass mark; but nothing served means something broke
	echo "$js" | td_json 'j["served"] >= 0.1 * j["offered"]' | grep -qx True ||
		fail "$mode: the load was hardly served: $js"
	results+=("$(echo "$js" | M=$mode S=$sla python3 -c '
import json, os, sys
j = json.load(sys.stdin)
s = float(os.environ["S"])
print("%-5s SLA %d packets/s: served %.1f requests/s (%.0f%% of the SLA; offered %d), p50 %.0f ms, p99 %.0f ms; not served %d (no answer within 5 s %d, reset %d, no connection %d)" % (
    os.environ["M"], s, j["served"], 100 * j["served"] / s, j["offered"], j["p50_ms"], j["p99_ms"], j["failed"],
    j["no_answer"], j["reset"], j["no_connection"] + j["not_sent"]))')")
	say "${results[-1]}"
}

demo_mission() {
	demo_requests
	demo_sla
	# --- 6. stats ---
	step "6. sfc-ctl stats"
	sfc stats | sed 's/^/   /'
	# --- 7. the picture ---
	step "7. the run as a picture"
	sleep 1.2	# one more sample
	python3 "$tools" plot "$out/demo-samples.jsonl" "$events" "$out"/demo-load-*.csv "$out/demo.png"
	say "$out/demo.png"
}
demo_done() {
	step "done in $(($(date +%s) - t_start)) s; everything the demo built is being removed"
}
