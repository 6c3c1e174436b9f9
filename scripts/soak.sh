#!/usr/bin/env bash
# make soak: the fault soak (not part of make check).  SOAK_SECONDS (600)
# of mixed load through a real chain while its parts are killed, then a
# count of what was lost.  SOAK_FAULTS (all: "toe vnf tochaind link
# replace reload") picks the kinds of fault.
#
# Built as a user builds it: tochaind (state, socket, fabric namespace of
# its own), `sfc-ctl apply -f` of the shipped demo.topo with the sample
# rules as `make install` puts them (VM web1, chain fw -> (ids || waf) in,
# fw out; the fw's rules are the sample plus UDP port 5300), unmodified
# nginx and a python UDP echo server in the stand-in VM web1 (a namespace
# with nothing but loopback) under tochain-run, and a client outside the
# IDS's HOME_NET (198.51.100.7, scripts/demo-steps.sh's demo_client).
#
# The load (scripts/soak-load.py): HTTP small (1 KiB) and large (1 MiB)
# files over keep-alive and fresh connections, bodies checked by SHA-256,
# UDP echoes checked, an attack every 0.5 s (SQL injection for the WAF,
# cmd.exe for the IDS, a path traversal) marked so that nginx's access
# log shows whether it arrived.
#
# The faults, one at a time, 3-8 s apart, in random order: kill -9 of the
# TOE (tochaind restarts it), of a random VNF instance (tochaind restarts
# it), of tochaind (restarted at once on the same state, as a supervisor
# would; systemd's unit waits RestartSec=2 first), the VM's link (its port
# on the fabric bridge down for 1 s: a stand-in VM has no tochain-vmlink,
# its link is that veth), a chain replaced (`apply` of the topology with
# (ids || waf) as two hops, and back), a rules reload (a rules file of a
# random VNF changed by a comment line, `apply`).  After each fault a
# clean request is tried every 0.1 s until one is served (and after a
# tochaind kill, sfc-ctl answers): the recovery time, from the kill (the
# link: from when it came back up), at most 30 s; a fault not recovered
# from within 30 s ends the faults and the load early (what followed would
# only count that one fault again).
#
# Counted: clean requests that failed outside a kill's own connections
# (their connection existed between a kill and its recovery), wrong
# answers, attacks that got through (an answer other than the WAF's 403,
# or the marker in nginx's access log), and leaks: counters taken before
# and after the load (idle, settled), a leak being something held that
# nobody owns, per resource:
#   channels   orphaned: a TOE channel whose guest end no live process
#              holds (toe.channels_orphaned, soak-load.py channels), must
#              stay 0.  Fewer channels is no leak: a process that never
#              calls the runtime again (the nginx master) stays detached
#              after a TOE kill (guest-lib/gl_revive.c revives on the next
#              call); the detached ones are named (guest.detached), and
#              the nginx master must still do its job: after the load, one
#              more TOE kill, then `nginx -s reload` under tochain-run
#              must give new workers that serve (check nginx_reload).
#   buffers    idle, the TOE holds none (toe.bufs_host), none wait on the
#              TX and DONE rings of open channels (region.tx_done), and
#              per open channel those neither free, nor the TOE's, nor on
#              an RX ring are its grant (region.held_per_channel: on its
#              FREE ring or in its process's stash; a lost buffer adds to
#              it); these must be as before.  The free stock, the RX rings
#              and the stashes (toe.bufs_free, region.rx,
#              region.unaccounted) move with the channels that come and go
#              (a detached master's grant and its readiness events went
#              back to the pool), so they are shown, not compared.
#   sockets    the TOE's open sockets (toe.sockets_open), as before.
#   fds        per role (tochaind, TOE, VNFs, the guest's processes, and
#              its nginx master, nginx workers and echo server): growth
#              is a leak, fewer is not (a detached process has two fewer
#              on each side).  The guest's eventfds are counted apart
#              (eventfds.ROLE): the runtime keeps a pool of wake-up
#              eventfds, one made the first time a thread waits in a
#              call and kept (gl_wait.c kick_get), so they may grow by at
#              most the role's thread count (threads.ROLE, info); more is
#              a leak.  A master that never waited before the load has
#              one more after it.
#   processes  per role, zombies, cgroups, namespaces, region files, VNF
#              instances, the chains' queues, the TOE's bad messages:
#              as before.
# Aims: 0 failed outside kills, 0 wrong, 0 through, 0 leaks, 0 guest
# restarts, the checks passed, recovery < 2 s for each kind of kill.
# Prints a table; exit 1 when an aim is missed.  Everything is removed at
# exit, also on failure and Ctrl-C.  Files in build/soak/ (records,
# events, counters and the fds behind them, checks, logs).
#
# The guest programs run under a restart loop, as a VM's init would
# restart them; each restart is counted (aim 0): a program that does not
# survive a TOE restart shows up there.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
build=$(cd "${1:?usage: soak.sh BUILD_DIR}" && pwd)
. tests/lib/netns.sh
. tests/lib/tochaind.sh
. scripts/demo-steps.sh
tc_need_root "network namespaces and cgroups"
tc_need_cmds ip nginx python3 curl
secs=${SOAK_SECONDS:-600}
faults=${SOAK_FAULTS:-toe vnf tochaind link replace reload}
for f in $faults; do
	case $f in toe | vnf | tochaind | link | replace | reload) ;;
	*) echo "soak: SOAK_FAULTS: unknown fault '$f' (toe vnf tochaind link replace reload)" >&2; exit 2 ;;
	esac
done
[[ $secs =~ ^[0-9]+$ ]] && [ "$secs" -ge 20 ] || { echo "soak: SOAK_SECONDS must be a number >= 20, not '$secs'" >&2; exit 2; }
bin=$build/bin
out=$build/soak
tools=$top/scripts/soak-load.py
t_start=$(date +%s)
rm -rf "$out"
mkdir -p "$out"

step "tochaind starts; sfc-ctl apply -f demo.topo (VM web1, chain fw -> (ids || waf))"
td_setup soak
chmod 755 "$work"
# the logs stay in build/soak, their last MiB (this runs before td_cleanup
# removes $work)
tc_on_exit 'mkdir -p "$out/logs"; for f in "$work"/*.log* "$work"/state/*.log; do tail -c 1M "$f" >"$out/logs/${f##*/}"; done'
make -s --no-print-directory install-files DIST_NOBUILD=1 BUILD="$build" PREFIX=/usr \
	DESTDIR="$work/root" >/dev/null
share=$work/root/usr/share/tochain
{ cat "$share/rules/fw/example.rules"; echo 'accept in udp dport 5300 comment "soak: the echo server"'; } \
	>"$share/rules/fw/soak.rules"
# nginx's workers run as nobody: after a TOE restart they attach to the
# new TOE themselves, so the VM lets that user's group in
sed -e 's#rules/fw/example.rules#rules/fw/soak.rules#' \
	-e "s#^vm web1 .*#& guest-mode=0660 guest-group=$(id -gn nobody)#" \
	"$share/examples/demo.topo" >"$share/examples/soak.topo"
sed 's#hop=web-ids,web-waf#hop=web-ids hop=web-waf#' "$share/examples/soak.topo" >"$share/examples/soak-alt.topo"
grep -q 'soak.rules' "$share/examples/soak.topo" && grep -q '^vm web1 .*guest-group=' "$share/examples/soak.topo" && grep -q 'hop=web-ids hop=web-waf' "$share/examples/soak-alt.topo" ||
	fail "demo.topo changed: the soak's topologies are not what they claim"
topo=$share/examples/soak.topo
sfc apply -f "$topo" | sed 's/^/   /'

step "nginx and a UDP echo server in the stand-in VM web1 under tochain-run"
region=$(td_field vm web1 region)
tc_isolated vmns vm-web1
mkdir -p "$work/www" "$work/tmp"
head -c 1024 /dev/urandom | base64 -w 64 >"$work/www/s.html"
head -c $((1 << 20)) /dev/urandom >"$work/www/l.bin"
demo_nginx_conf "access_log $work/access.log; keepalive_requests 1000000; keepalive_timeout 600s;"
cat >"$work/echo.py" <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 5300))
while True:
    d, a = s.recvfrom(2048)
    s.sendto(d, a)
PY
: >"$work/guest-exits"
# guest NAME CMD...: CMD under tochain-run in the VM, run again when it exits
guest() {
	local name=$1
	shift
	(
		trap 'kill -9 $child 2>/dev/null; exit 0' TERM
		while :; do
			ip netns exec "$vmns" "$bin/tochain-run" --region "$region" -- "$@" >>"$work/$name.log" 2>&1 &
			child=$!
			wait $child && rc=0 || rc=$?
			echo "$(date +%s.%N) $name exited $rc" >>"$work/guest-exits"
			sleep 0.2
		done
	) 2>/dev/null & # no "Killed" job notice when the cleanup kills the guest
	tc_on_exit "kill $!"
}
# A guest whose runtime broke logs each failed call (nginx: 100 MB/s of
# "accept4() failed"): every second a log over 16 MiB keeps its first MiB
# in LOG.head and starts again, so that /dev/shm does not fill.
(
	while sleep 1; do
		for f in "$work"/*.log; do
			[ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -gt $((16 << 20)) ] || continue
			[ -e "$f.head" ] || head -c 1M "$f" >"$f.head"
			truncate -s 0 "$f"
		done
	done
) &
tc_on_exit "kill $!"
guest nginx nginx -c "$work/nginx.conf" -p "$work"
tc_on_exit "pkill -9 -F $work/nginx.pid"
guest echo python3 "$work/echo.py"
demo_client 20
tc_wait_for 10 ip netns exec "$vmns" true # the echo server: its socket is in the TOE's namespace
toens=$(td_field vm web1 netns)
tc_wait_for 10 sh -c "ip netns exec $toens ss -Hlun 'sport = 5300' | grep -q ." ||
	fail "the UDP echo server did not come up behind the TOE"

url=http://10.0.0.2
probe() { # a clean request is served
	[ "$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --connect-timeout 0.5 --max-time 1 \
		"$url/s.html" 2>/dev/null)" = 200 ]
}
probe || fail "a clean request was not served before the soak"
rc=0
ip netns exec "$CL" curl -s -o /dev/null --max-time 5 "$url/scripts/cmd.exe?n=soakcheck" || rc=$?
[ $rc = 56 ] || fail "the IDS's attack was not reset before the soak: curl $rc"
[ "$(ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
	"$url/s.html?id=1%27%20OR%20%271%27%3D%271")" = 403 ] || fail "the WAF did not answer 403 before the soak"

# --- the counters compared before and after ---
pids_of() { pgrep -f "$1" | tr '\n' ' ' || true; }
counters() { # FILE: "key value" lines
	local f=$1 toe line k p n role pat pids z
	: >"$f"
	: >"$f.fds"
	toe=$(td_field vm web1 toe_pid)
	kill -USR1 "$toe"
	tc_wait_for 3 sh -c "grep 'stats:' $work/state/toe-web1.log | tail -n 1 | grep -q ." || true
	sleep 0.3
	line=$(grep 'stats:' "$work/state/toe-web1.log" | tail -n 1)
	for k in channels_open sockets_open bad_messages bufs bufs_free bufs_host; do
		echo "toe.$k $(sed -n "s/.* $k=\([0-9-]*\).*/\1/p" <<<"$line")" >>"$f"
	done
	# channels: held by a live guest process, or orphaned (a leak)
	python3 "$tools" channels "$vmns" "$toe" "$(sed -n 's/^toe.channels_open //p' "$f")" >>"$f"
	sfc --json stats | td_json '"\n".join("chain.%s.%s %d" % (c["name"], k, c[k]) for c in j["chains"] for k in ("in_qlen", "out_qlen"))' >>"$f"
	# guest: all of the VM's processes; its programs also one by one, so
	# that a count that grows says whose
	for role in tochaind toe vnf guest nginx_master nginx_workers echo; do
		case $role in
		tochaind) pids=$(pids_of "tochaind --state-dir $work/state") ;;
		toe) pids=$(pids_of "tochain-toe --region $work/") ;;
		vnf) pids=$(pids_of "tochain-vnf --kind [a-z]* --region $work/") ;;
		guest) pids=$(ip netns pids "$vmns" | tr '\n' ' ') ;;
		nginx_master) pids=$(cat "$work/nginx.pid") ;;
		nginx_workers) pids=$(pgrep -P "$(cat "$work/nginx.pid")" | tr '\n' ' ' || true) ;;
		echo) pids=$(pids_of "python3 $work/echo.py") ;;
		esac
		n=0 e=0 th=0
		for p in $pids; do n=$((n + $(ls "/proc/$p/fd" 2>/dev/null | wc -l))); done
		case $role in
		guest | nginx_* | echo)
			# the runtime's eventfds apart: its kick pool (gl_wait.c)
			# keeps one per thread that ever waited at once
			for p in $pids; do
				e=$((e + $(ls -l "/proc/$p/fd" 2>/dev/null | grep -c 'anon_inode:\[eventfd\]' || true)))
				th=$((th + $(ls "/proc/$p/task" 2>/dev/null | wc -l)))
			done
			n=$((n - e))
			echo "eventfds.$role $e" >>"$f"
			echo "threads.$role $th" >>"$f"
			;;
		esac
		# what they are, for a count that grew (FILE.fds, not compared)
		for p in $pids; do
			echo "== $role $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-60)"
			ls -l "/proc/$p/fd" 2>/dev/null | awk 'NR > 1 { print $9, $11 }' | sort -n || true
		done >>"$f.fds"
		echo "procs.$role $(wc -w <<<"$pids")" >>"$f"
		echo "fds.$role $n" >>"$f"
		z=0
		for p in $pids; do z=$((z + $(ps --ppid "$p" -o stat= | grep -c '^Z' || true))); done
		echo "zombies.$role $z" >>"$f"
	done
	# the region's rings of the open channels (their ids change with each
	# TOE): buffers the guests gave back and the TOE has not taken (tx,
	# done), waiting for a guest (rx: info), and those no ring, queue or
	# the pool shows (with the TOE's counters: a leak, or a guest's own)
	"$bin/tochain-region" info "$region" --json | python3 "$tools" region "$f" >>"$f"
	echo "cgroups $(find /sys/fs/cgroup -type d -path "*$fab*" 2>/dev/null | wc -l)" >>"$f"
	echo "netns $(ip netns list | awk '{print $1}' | grep -c -e "$fab" -e "-$TC_SUFFIX\$" || true)" >>"$f"
	echo "region_files $(ls "$work/regions" | wc -l)" >>"$f"
	echo "vnf_instances $(sfc --json vnf ls | td_json 'sum(len(v.get("instances", [])) for v in j["vnfs"])')" >>"$f"
}
settled() { # FILE: counters taken until two in a row agree (at most ~15 s)
	local i
	counters "$1.a"
	for i in $(seq 10); do
		sleep 1
		counters "$1"
		cmp -s "$1" "$1.a" && break
		mv "$1" "$1.a"
		counters "$1"
	done
	rm -f "$1.a" "$1.a.fds"
}
step "counters before the load (idle)"
settled "$out/before.txt"
sed 's/^/   /' "$out/before.txt" | paste -sd' ' | fold -w 110 -s | sed 's/^/   /'

# --- the faults ---
now() { date +%s.%N; }
fault_toe() {
	local p
	p=$(td_field vm web1 toe_pid)
	kill -9 "$p"
	echo "pid $p"
}
fault_vnf() {
	local v p
	v=$(shuf -n1 -e web-fw web-ids web-waf)
	p=$(sfc --json vnf show "$v" | td_json 'j["instances"][0]["pid"]')
	kill -9 "$p"
	echo "$v pid $p"
}
fault_tochaind() {
	td_kill9 >/dev/null
	td_start
	echo "restarted at once"
}
fault_link() {
	local veth
	veth=$(td_field vm web1 veth)
	ip -n "$fab" link set "$veth" down
	sleep 1
	ip -n "$fab" link set "$veth" up
	from=$(now)
	echo "$veth down 1 s"
}
fault_replace() {
	if [ "$topo" = "$share/examples/soak.topo" ]; then topo=$share/examples/soak-alt.topo; else topo=$share/examples/soak.topo; fi
	sfc apply -f "$topo" | paste -sd' '
}
fault_reload() {
	local f
	f=$(shuf -n1 -e rules/fw/soak.rules rules/ids/local.rules rules/waf/waf.conf.example)
	echo "# soak reload $(now)" >>"$share/$f"
	echo "$f: $(sfc apply -f "$topo" | paste -sd' ')"
}
recovered() { # KIND: the service is back
	[ "$1" != tochaind ] || sfc version >/dev/null 2>&1 || return 1
	probe
}

step "the soak: ${secs}s of load; faults every 3-8 s ($faults)"
ip netns exec "$CL" python3 "$tools" load 10.0.0.2 "$work/www" "$secs" "$out/records.tsv" \
	>"$out/load.log" 2>&1 &
LOAD=$!
tc_on_exit "kill $LOAD"
: >"$out/events.txt"
t_end=$(($(date +%s) + secs - 5))
nfault=0
ndrop=0
while sleep "$(shuf -i 3-8 -n 1)"; [ "$(date +%s)" -lt "$t_end" ]; do
	kind=$(shuf -n1 -e $faults)
	t0=$(now)
	from=$t0
	# not in $(...): fault_replace and fault_link set $topo and $from
	if "fault_$kind" >"$work/detail" 2>&1; then detail=$(paste -sd' ' "$work/detail"); else
		detail="FAILED: $(paste -sd' ' "$work/detail")"; fi
	t1=-
	until=$(($(date +%s) + 30))
	while [ "$(date +%s)" -lt "$until" ]; do
		if recovered "$kind"; then
			t1=$(now)
			break
		fi
		sleep 0.1
	done
	nfault=$((nfault + 1))
	# a guest channel the TOE dropped since the last fault (it logs why)
	n=$(grep -c 'channel [0-9]* dropped' "$work/state/toe-web1.log" || true)
	[ "$n" = "$ndrop" ] || detail="$detail; TOE: $(grep 'channel [0-9]* dropped' "$work/state/toe-web1.log" | tail -n $((n - ndrop)) | paste -sd' ')"
	ndrop=$n
	echo "$kind $t0 $from $t1 $detail" >>"$out/events.txt"
	printf '   %4ds %-9s %s: %s\n' $(($(date +%s) - t_start)) "$kind" \
		"$([ "$t1" = - ] && echo "NOT recovered in 30 s" || awk "BEGIN {printf \"recovered in %.2f s\", $t1 - $from}")" "$detail"
	if [ "$t1" = - ]; then
		say "no more faults and the load stops: what follows would only count this one again"
		kill -TERM "$LOAD"
		break
	fi
done
wait "$LOAD" || fail "the load generator failed: $(tail -5 "$out/load.log")"

# The nginx master never calls the runtime while it only waits for
# signals, so after a TOE kill it stays detached until it next does
# (guest-lib/gl_revive.c): not a leak while it serves nothing itself, but
# it must still do its job.  After a TOE kill (one more, now), `nginx -s
# reload` under tochain-run: the master re-reads its configuration and
# forks new workers (its FORK revives it on the new TOE), the old ones
# leave, and a clean request is served by the new ones.
step "nginx -s reload through the runtime after a TOE kill"
: >"$out/checks.txt"
check() { # NAME ok|FAIL DETAIL...
	echo "$*" >>"$out/checks.txt"
	say "$*"
}
workers() { pgrep -P "$(cat "$work/nginx.pid")" | sort -n | paste -sd' '; }
old=$(workers)
say "killed the TOE: $(fault_toe)"
tc_wait_for 30 probe || check toe_kill_before_reload FAIL "no clean request served 30 s after the TOE kill"
ip netns exec "$vmns" "$bin/tochain-run" --region "$region" -- \
	nginx -c "$work/nginx.conf" -p "$work" -s reload >"$work/reload.log" 2>&1 ||
	check nginx_reload FAIL "nginx -s reload: $(paste -sd' ' "$work/reload.log")"
reloaded() { # the old workers gone, as many new ones, serving
	local now
	now=$(workers)
	[ -n "$now" ] && [ "$(wc -w <<<"$now")" = "$(wc -w <<<"$old")" ] || return 1
	for p in $now; do grep -qw "$p" <<<"$old" && return 1; done
	probe
}
if tc_wait_for 30 reloaded; then
	check nginx_reload ok "after a TOE kill: workers $old -> $(workers), a clean request served"
elif ! grep -q "nginx_reload FAIL" "$out/checks.txt"; then
	check nginx_reload FAIL "after a TOE kill: workers $old -> $(workers) in 30 s, probe $(probe && echo served || echo failed)"
fi

step "counters after the load (idle)"
settled "$out/after.txt"
cp "$work/access.log" "$out/access.log"
while read -r t name what; do echo "guest $t $t $t $name $what"; done <"$work/guest-exits" >>"$out/events.txt"
cp "$work/guest-exits" "$out/guest-exits.txt"
echo "guest_restarts 0" >>"$out/before.txt"
echo "guest_restarts $(wc -l <"$work/guest-exits")" >>"$out/after.txt"
step "summary"
rc=0
python3 "$tools" report "$out/records.tsv" "$out/events.txt" "$out/access.log" \
	"$out/before.txt" "$out/after.txt" "$out/checks.txt" | tee "$out/summary.txt" || rc=$?
step "done in $(($(date +%s) - t_start)) s; everything the soak built is being removed"
exit $rc
