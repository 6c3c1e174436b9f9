# Shell helpers for tests, demos and benchmarks that build their own hosts
# as network namespaces (source this file).  Every name carries a per-run
# suffix so parallel or leftover runs never collide, and everything made
# through these helpers is removed by tc_cleanup, which tc_init installs
# as an EXIT trap (it runs on failure too).
#
#   tc_init                      suffix, cleanup trap
#   tc_fabric [BR]               fabric namespace $TC_FABRIC with bridge $TC_BRIDGE
#   tc_host VAR NAME ADDR/PREFIX namespace NAME-suffix with a veth into the fabric
#                                bridge and ADDR on it; its name goes into VAR
#   tc_isolated VAR NAME         namespace with loopback only; name into VAR
#   tc_on_exit CMD...            run CMD at cleanup (before namespaces go;
#                                common.sh)
#   tc_wait_port NS ADDR PORT [SECONDS]   wait until a TCP port accepts
#   tc_curl_reset NS LOG MARK CURL-ARGS...
#                                a request a chain denies: curl in NS sees its
#                                connection reset (exit 56, an RST; 52, a close
#                                without an answer, is not a reset), and the
#                                guest program's request log LOG (python3
#                                http.server's) never shows MARK, a part of this
#                                request's line no other request has; the log
#                                must show other requests (else it proves
#                                nothing); curl's message in $TC_RESET_ERR
#
# Call them directly, not in $(...): they record what to clean up.
# tests/lib/common.sh (fail, tc_wait_for, tc_need_*) comes with this file.

# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

tc_init() {
	TC_SUFFIX=${TC_SUFFIX:-$$}
	TC_NETNS=()
	TC_FABRIC=
	TC_BRIDGE=
	# the first command registered runs last: the namespaces go after
	# everything the test registers from here on
	tc_on_exit tc_netns_cleanup
}

tc_netns_cleanup() {
	local ns
	for ns in "${TC_NETNS[@]}"; do
		# Kill what still runs in the namespace, then remove it.
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
}

tc_fabric() {
	local br=${1:-tcbr0}
	TC_FABRIC=tcfab-$TC_SUFFIX
	TC_BRIDGE=$br
	ip netns add "$TC_FABRIC"
	TC_NETNS+=("$TC_FABRIC")
	ip -n "$TC_FABRIC" link set lo up
	ip -n "$TC_FABRIC" link add "$br" type bridge
	ip -n "$TC_FABRIC" link set "$br" up
}

# tc_host VAR NAME ADDR/PREFIX: a namespace attached to the fabric bridge.
tc_host() {
	local var=$1 name=$2 addr=$3 ns=$2-$TC_SUFFIX
	local port=v${name:0:6}${TC_SUFFIX: -5}
	ip netns add "$ns"
	TC_NETNS+=("$ns")
	ip -n "$ns" link set lo up
	ip link add "$port" netns "$TC_FABRIC" type veth peer name eth0 netns "$ns"
	ip -n "$TC_FABRIC" link set "$port" master "$TC_BRIDGE" up
	ip -n "$ns" addr add "$addr" dev eth0
	ip -n "$ns" link set eth0 up
	printf -v "$var" %s "$ns"
}

# tc_isolated VAR NAME: a namespace with nothing but loopback (a VM without a NIC).
tc_isolated() {
	local var=$1 ns=$2-$TC_SUFFIX
	ip netns add "$ns"
	TC_NETNS+=("$ns")
	ip -n "$ns" link set lo up
	printf -v "$var" %s "$ns"
}

tc_wait_port() {
	local ns=$1 addr=$2 port=$3 secs=${4:-10}
	tc_wait_for "$secs" ip netns exec "$ns" bash -c "exec 3<>/dev/tcp/$addr/$port" 2>/dev/null &&
		return 0
	echo "port $addr:$port in $ns did not open within ${secs}s" >&2
	return 1
}

tc_curl_reset() {
	local ns=$1 log=$2 mark=$3 rc=0
	shift 3
	TC_RESET_ERR=$(ip netns exec "$ns" curl -sS -o /dev/null --max-time 10 "$@" 2>&1) || rc=$?
	[ "$rc" = 56 ] || fail "not reset: curl $rc ${TC_RESET_ERR:-(no error)}: curl $*"
	grep -q 'HTTP/1\.[01]" ' "$log" ||
		fail "$log shows no request: it cannot show that the denied one did not arrive"
	# the guest program logs a request line as it reads it: give a leaked one time to show
	sleep 0.3
	if grep -qF -- "$mark" "$log"; then
		fail "the denied request reached the guest program: $(grep -F -- "$mark" "$log" | head -1)"
	fi
}
