#!/usr/bin/env bash
# timeout: 90
#
# The firewall's nftables half, end to end: rule files are compiled and
# applied through libnftables (test program fw-apply) into one network
# namespace of a pair joined by a veth, and real TCP connections from the
# other namespace show the effect:
#   - an accepted port connects, a dropped one times out, a rejected one is
#     refused (RST);
#   - the caller's own namespace is left alone;
#   - replacing the ruleset flips the verdicts, in one transaction (a port
#     dropped by both rulesets never opens while they are swapped);
#   - a broken rule file is refused whole and changes nothing;
#   - removing the table restores connectivity;
#   - at every probe, the VNF matcher's verdict on the same rule file and
#     SYN agrees with what the kernel did (accept/drop/reject).
set -euo pipefail
build=${TOCHAIN_BUILD:-build}
. "${TOCHAIN_TOP:-.}/tests/lib/common.sh"

tc_need_root "network namespaces and nftables"
tc_need_cmds ip python3
fw=$build/tests/bin/fw-apply
[ -x "$fw" ] || fail "$fw not built"

srv=fw500s$$
cli=fw500c$$
vs=fw5s$$
vc=fw5c$$
tmp=$(mktemp -d /tmp/fw500.XXXXXX)
server_pid=
flipper_pid=

cleanup() {
	set +e
	[ -n "$flipper_pid" ] && kill "$flipper_pid" 2>/dev/null && wait "$flipper_pid" 2>/dev/null
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	ip netns del "$srv" 2>/dev/null
	ip netns del "$cli" 2>/dev/null
	rm -rf "$tmp"
	true
}
tc_on_exit cleanup


cat >"$tmp/serve.py" <<'PY'
import socket, sys, threading, time
def serve(s):
    while True:
        c, _ = s.accept()
        try:
            c.sendall(b"ok\n")
        finally:
            c.close()
socks = []
for p in sys.argv[2:]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(p)))
    s.listen(64)
    socks.append(s)
for s in socks:
    threading.Thread(target=serve, args=(s,), daemon=True).start()
open(sys.argv[1], "w").close()
while True:
    time.sleep(3600)
PY

# probe.py HOST PORT TIMEOUT -> open | timeout | refused
cat >"$tmp/probe.py" <<'PY'
import socket, sys
s = socket.socket()
s.settimeout(float(sys.argv[3]))
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("open" if s.recv(3) == b"ok\n" else "bad-reply")
except socket.timeout:
    print("timeout")
except ConnectionRefusedError:
    print("refused")
except OSError as e:
    print("error-%s" % e.errno)
PY

# hammer.py HOST PORT SECONDS -> number of successful connections
cat >"$tmp/hammer.py" <<'PY'
import socket, sys, time
end = time.time() + float(sys.argv[3])
ok = tries = 0
while time.time() < end:
    s = socket.socket()
    s.settimeout(0.02)
    tries += 1
    try:
        s.connect((sys.argv[1], int(sys.argv[2])))
        ok += 1
    except OSError:
        pass
    s.close()
print(ok, tries)
PY

ip netns add "$srv"
ip netns add "$cli"
ip link add "$vs" netns "$srv" type veth peer name "$vc" netns "$cli"
ip -n "$srv" addr add 10.250.0.1/24 dev "$vs"
ip -n "$cli" addr add 10.250.0.2/24 dev "$vc"
for ns in "$srv" "$cli"; do
	ip -n "$ns" link set lo up
done
ip -n "$srv" link set "$vs" up
ip -n "$cli" link set "$vc" up

ip netns exec "$srv" python3 "$tmp/serve.py" "$tmp/ready" $(seq 8080 8090) 9001 &
server_pid=$!
for _ in $(seq 50); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
[ -e "$tmp/ready" ] || fail "server did not start"

probe() { # PORT -> open | timeout | refused
	ip netns exec "$cli" python3 "$tmp/probe.py" 10.250.0.1 "$1" 0.7
}
current=	# rule file now in force in $srv, empty when none
expect() { # PORT STATE WHEN
	local got verdict want
	got=$(probe "$1")
	[ "$got" = "$2" ] || fail "$3: port $1 is '$got', want '$2'"
	# The VNF matcher must agree with what the kernel did with the SYN.
	if [ -n "$current" ]; then
		verdict=$("$fw" match "$current" in tcp 10.250.0.2 40000 10.250.0.1 "$1" new syn)
		case ${verdict%% *} in
		accept) want=open ;; drop) want=timeout ;; reject) want=refused ;; *) want=? ;;
		esac
		[ "$want" = "$got" ] || fail "$3: port $1: matcher says '$verdict', kernel '$got'"
	fi
	echo "ok: $3: port $1 $2${current:+ (matcher: ${verdict})}"
}
caller_state() { # what nftables shows in the caller's own namespace
	if command -v nft >/dev/null; then nft list ruleset; else "$fw" list 2>&1 || true; fi
}

expect 8080 open "no rules"
expect 8081 open "no rules"
expect 9001 open "no rules"

cat >"$tmp/a.rules" <<'EOF2'
# ruleset A: web on 8080, 8081 dropped, 8082 rejected
policy in drop
accept in ct established,related
accept in tcp dport 8080 from 10.250.0.0/24 ct new comment "A web"
reject in tcp dport 8082
EOF2
cat >"$tmp/b.rules" <<'EOF2'
# ruleset B: the other way round
policy in drop
accept in ct established,related
accept in tcp dport 8081 ct new comment "B web"
drop in tcp dport 8080
EOF2
printf 'policy in accept\naccept in tcp dport 8080\ndrop in tcp dport 99999\n' >"$tmp/broken.rules"

before=$(caller_state)
"$fw" --netns "$srv" apply "$tmp/a.rules" || fail "applying A"
current=$tmp/a.rules
expect 8080 open "ruleset A"
expect 8081 timeout "ruleset A"
expect 8082 refused "ruleset A"
expect 9001 timeout "ruleset A"
[ "$(caller_state)" = "$before" ] || fail "the caller's namespace changed"
echo "ok: caller's namespace untouched"
"$fw" --netns "$srv" list | grep -q 'comment "A web"' || fail "table not listed"
"$fw" --netns "$cli" list >/dev/null 2>&1 && fail "the other namespace got a table"

# Replace, by path this time.
"$fw" --netns "/run/netns/$srv" apply "$tmp/b.rules" || fail "applying B by path"
current=$tmp/b.rules
expect 8080 timeout "ruleset B"
expect 8081 open "ruleset B"
expect 8082 timeout "ruleset B"
listing=$("$fw" --netns "$srv" list)
grep -q 'comment "B web"' <<<"$listing" || fail "B not listed"
grep -q 'A web' <<<"$listing" && fail "A left behind after replace"

# Swap A and B repeatedly while hammering 9001, which both drop: with
# one transaction per swap there is never a moment without the table.
(
	for _ in $(seq 15); do
		"$fw" --netns "$srv" apply "$tmp/a.rules"
		"$fw" --netns "$srv" apply "$tmp/b.rules"
	done
) &
flipper_pid=$!
read -r opened tries < <(ip netns exec "$cli" python3 "$tmp/hammer.py" 10.250.0.1 9001 1.5)
wait "$flipper_pid" || fail "apply failed while swapping"
flipper_pid=
[ "$opened" = 0 ] || fail "port 9001 opened $opened times during swaps"
echo "ok: 30 swaps, 9001 never opened in $tries attempts"
expect 8081 open "after swaps (B last)"

# A broken file is refused whole, naming the line; nothing changes.
listing=$("$fw" --netns "$srv" list)
if "$fw" --netns "$srv" apply "$tmp/broken.rules" 2>"$tmp/err"; then
	fail "broken rule file applied"
fi
grep -q "broken.rules:3: port '99999' out of range" "$tmp/err" || fail "diagnostic: $(cat "$tmp/err")"
[ "$("$fw" --netns "$srv" list)" = "$listing" ] || fail "broken file changed the table"
expect 8080 timeout "after broken file"
expect 8081 open "after broken file"
printf 'accept in\n\001\002binary\n' >"$tmp/binary.rules"
"$fw" --netns "$srv" apply "$tmp/binary.rules" 2>/dev/null && fail "binary file applied"
[ "$("$fw" --netns "$srv" list)" = "$listing" ] || fail "binary file changed the table"
echo "ok: broken files refused, table unchanged"

# Both halves agree on a ruleset using sets, ranges, negation, ct, flags.
cat >"$tmp/c.rules" <<'EOF2'
policy in drop
accept in ct established,related
accept in tcp dport 8080,8085-8087 from 10.250.0.0/24 ct new
reject in tcp dport 8081 from !10.250.0.0/24
reject in tcp dport !8080-8090 flags syn,!ack
drop   in tcp dport 8082-8084
accept in tcp dport 8088,8090 to 10.250.0.1 ct !invalid
reject in ip6 tcp
reject in tcp ct new dport 8089
EOF2
"$fw" --netns "$srv" apply "$tmp/c.rules" || fail "applying C"
current=$tmp/c.rules
seen=
for port in $(seq 8080 8090) 9001; do
	verdict=$("$fw" match "$current" in tcp 10.250.0.2 40000 10.250.0.1 "$port" new syn)
	case ${verdict%% *} in
	accept) want=open ;; drop) want=timeout ;; reject) want=refused ;;
	esac
	expect "$port" "$want" "ruleset C"
	seen+="$port:$want "
done
want_c="8080:open 8081:timeout 8082:timeout 8083:timeout 8084:timeout 8085:open 8086:open "
want_c+="8087:open 8088:open 8089:refused 8090:open 9001:refused "
[ "$seen" = "$want_c" ] || fail "ruleset C: got '$seen', want '$want_c'"
"$fw" --netns "$srv" list | grep -q 'tcp dport { 8080, 8085-8087 }' || fail "C not listed"

# Remove: everything open again; removing twice is fine.
"$fw" --netns "$srv" remove || fail "remove"
"$fw" --netns "$srv" remove || fail "second remove"
current=
"$fw" --netns "$srv" list >/dev/null 2>&1 && fail "table still there after remove"
expect 8080 open "removed"
expect 8081 open "removed"
expect 8082 open "removed"
[ "$(caller_state)" = "$before" ] || fail "the caller's namespace changed"
echo "PASS"
