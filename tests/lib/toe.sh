# Shell helpers for the TOE tests (tests/integration/1xx_toe_*.sh, the
# chain tests 41x_*.sh) and benchmarks: a stand-in VM (TOE + guest
# programs under tochain-run in namespaces, as tests/integration/100),
# its control socket and null VNFs.  Source after tests/lib/netns.sh;
# needs $build.
#
#   tt_netns NAME [NET]    fabric, client CL NET.1, VM NET.2 (/24), guest GU
#                          (loopback only), $work (/dev/shm/tcNAME.*, removed
#                          at exit), $region = $work/region; NET 10.81.0
#   tt_toe_start [--wait SECS] NS NAME [OPTIONS...]
#                          tochain-toe --region $region --name NAME OPTIONS
#                          in NS (log $work/toe.log, killed at exit), ready
#                          within SECS (10) or the test fails; pid in $TOE
#   tt_setup NAME [NET [OPTIONS...]]
#                          tt_netns + tt_toe_start "$VM" vmNAME OPTIONS, and
#                          the control socket is there
#   ctl CMD [JSON]         one control request on $region.ctl; prints the reply
#   ctl_ok CMD [JSON]      the same, fails the test unless "ok"; prints result
#   tt_vnf NAME [vnf.add args JSON] [tochain-vnf args...]
#                          vnf.add + start tochain-vnf --kind null + vnf.attach;
#                          its pid in VNF_PID[NAME], stats in $work/NAME.stats
#   tt_json EXPR           python3 expression over the JSON on stdin (as j)
#   tt_guest [--timeout SECS] CMD...
#                          CMD in GU under tochain-run --region $region
#                          (ip netns exec, timeout SECS, tochain-run); the
#                          runtime is $TT_RUN, default $build/bin/tochain-run
#   tt_guest_bg [--cd DIR] [--timeout SECS] LOG CMD...
#                          the same in the background, started in DIR,
#                          output to $work/LOG, killed at exit; pid in $GPID
#   tt_toe_stop            SIGTERM the TOE: it exits cleanly, leaves no files

tt_netns() {
	local name=$1 net=${2:-10.81.0}
	tc_init
	tc_fabric
	tc_host CL cl "$net.1/24"
	tc_host VM vm "$net.2/24"
	tc_isolated GU gu
	work=$(mktemp -d "/dev/shm/tc$name.XXXXXX")
	tc_on_exit "rm -rf $work"
	region=$work/region
}

tt_toe_start() {
	local secs=10 ns name
	if [ "$1" = --wait ]; then secs=$2; shift 2; fi
	ns=$1 name=$2
	shift 2
	rm -f "$work/ready"
	mkfifo "$work/ready"
	ip netns exec "$ns" "$build/bin/tochain-toe" --region "$region" --name "$name" "$@" \
		--ready-fd 3 3>"$work/ready" 2>"$work/toe.log" &
	TOE=$!
	tc_on_exit "kill -9 $TOE"
	read -r -t "$secs" -n 1 _ <"$work/ready" || { cat "$work/toe.log"; fail "TOE did not become ready"; }
}

tt_setup() {
	local name=$1 net=${2:-10.81.0}
	shift 2 || shift $#
	tt_netns "$name" "$net"
	tt_toe_start "$VM" "vm$name" "$@"
	[ -S "$region.ctl" ] || fail "no control socket"
	declare -gA VNF_PID=()
}

# tt_ctl print|ok CMD JSON: one request; "print" prints the reply line,
# "ok" prints the result and fails unless the reply is ok.
tt_ctl() {
	python3 - "$region.ctl" "$@" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall((json.dumps({"v": 1, "cmd": sys.argv[3], "args": json.loads(sys.argv[4])}) + "\n").encode())
line = s.makefile().readline().strip()
if sys.argv[2] == "print":
    print(line)
    sys.exit(0)
r = json.loads(line)
if not r["ok"]:
    print("FAIL: ctl %s %s: %s" % (sys.argv[3], sys.argv[4], line), file=sys.stderr)
    sys.exit(1)
print(json.dumps(r["result"]))
EOF
}

ctl() {
	tt_ctl print "$1" "${2:-{\}}"
}

ctl_ok() {
	tt_ctl ok "$1" "${2:-{\}}"
}

tt_json() {
	python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"
}

tt_vnf() {
	local name=$1 args=${2:-"{}"} reg
	shift 2 || shift $#
	# {"name":NAME} merged with the extra args
	[ "$args" = "{}" ] && args="{\"name\":\"$name\"}" || args="{\"name\":\"$name\",${args#\{}"
	reg=$(ctl_ok vnf.add "$args" | tt_json 'j["region"]') || exit 1
	"$build/bin/tochain-vnf" --kind null --region "$reg" --stats "$work/$name.stats" \
		--attach-timeout 5000 "$@" 2>>$work/vnf-$name.log &
	VNF_PID[$name]=$!
	tc_on_exit "kill -9 ${VNF_PID[$name]}"
	ctl_ok vnf.attach "{\"name\":\"$name\",\"pid\":${VNF_PID[$name]}}" >/dev/null || exit 1
}

# tt_stat NAME KEY: a value from a VNF's --stats file (written on SIGTERM).
tt_stat() {
	awk -v k="$2" '$1 == k { print $2 }' "$work/$1.stats"
}

# tt_stop_vnf NAME: SIGTERM and wait (its stats file is complete afterwards).
tt_stop_vnf() {
	local p=${VNF_PID[$1]} i
	kill -TERM "$p" 2>/dev/null || true
	tc_wait_exit 5 "$p" || true
	wait "$p" 2>/dev/null || true
}

tt_guest() {
	local t=()
	if [ "${1-}" = --timeout ]; then t=(timeout "$2"); shift 2; fi
	ip netns exec "$GU" "${t[@]}" "${TT_RUN:-$build/bin/tochain-run}" --region "$region" -- "$@"
}

tt_guest_bg() {
	local dir='' t=() rt=${TT_RUN:-$build/bin/tochain-run} log
	while :; do
		case ${1-} in
		--cd) dir=$2; shift 2 ;;
		--timeout) t=(timeout "$2"); shift 2 ;;
		*) break ;;
		esac
	done
	log=$1
	shift
	# the subshell execs: $GPID is ip netns exec's pid, which becomes the
	# program's (tests wait for it, kill it, read its /proc)
	if [ -n "$dir" ]; then
		(cd "$dir" && exec ip netns exec "$GU" "${t[@]}" "$rt" --region "$region" -- "$@") \
			>"$work/$log" 2>&1 &
	else
		ip netns exec "$GU" "${t[@]}" "$rt" --region "$region" -- "$@" >"$work/$log" 2>&1 &
	fi
	GPID=$!
	tc_on_exit "kill -9 $GPID"
}

# tt_serve DIR PORT: python3 http.server (threading) under tochain-run in the guest.
tt_serve() {
	tt_guest_bg --cd "$1" py.log python3 -m http.server --bind 0.0.0.0 "$2"
	PY=$GPID
	tc_wait_port "$CL" 10.81.0.2 "$2" 15
}

# tt_load SECONDS URL SHA OUT: fetch URL in a loop for SECONDS in the
# background; writes "ok N bad N" to OUT at the end.  Its pid in $LOAD.
tt_load() {
	local secs=$1 url=$2 want=$3 out=$4
	(
		set +e +o pipefail	# a failed fetch is counted, not fatal
		local end=$(( $(date +%s) + secs )) ok=0 bad=0 got
		while [ "$(date +%s)" -lt $end ]; do
			got=$(ip netns exec "$CL" curl -sS --max-time 10 "$url" 2>>$out.err |
				sha256sum | cut -d' ' -f1)
			if [ "$got" = "$want" ]; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
		done
		echo "ok $ok bad $bad" >$out
	) &
	LOAD=$!
}

# tt_fetch URL: one fetch; prints curl's exit code.
tt_fetch() {
	local rc=0
	ip netns exec "$CL" curl -sS --max-time 10 -o /dev/null "$1" 2>/dev/null || rc=$?
	echo $rc
}

# tt_toe_stop: SIGTERM the TOE; it must exit and remove its files.
tt_toe_stop() {
	local i f
	kill -TERM $TOE
	tc_wait_exit 5 $TOE || { echo "FAIL: TOE ignored SIGTERM"; return 1; }
	wait $TOE || { echo "FAIL: TOE exit status $?"; tail $work/toe.log; return 1; }
	if grep -q 'Sanitizer\|runtime error' $work/toe.log; then cat $work/toe.log; echo "FAIL: sanitizer report"; return 1; fi
	for f in "$region.sock" "$region.ctl" "$region.counters" "$region.flows" "$region.out"; do
		[ ! -e "$f" ] || { echo "FAIL: $f left behind"; return 1; }
	done
	if ls "$region".vnf-* >/dev/null 2>&1; then echo "FAIL: VNF regions left behind"; return 1; fi
}
