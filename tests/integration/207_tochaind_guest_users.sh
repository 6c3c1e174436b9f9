#!/usr/bin/env bash
# timeout: 240
# Guest users other than root in VMs that tochaind makes (issue 17):
#   1. bad --guest-mode/--guest-group (and either with --domain) are
#      refused with one line and change nothing;
#   2. `sfc-ctl vm add --guest-mode 0660 --guest-group nogroup`: vm show
#      has both, the region file and attach socket are 0660 root:nogroup;
#      python3 http.server running as nobody under tochain-run serves
#      1 MiB to a client (sha256 match); a user outside the group
#      (www-data) gets ENETDOWN from socket();
#   3. both kept across a tochaind SIGKILL and restart and a TOE repair
#      (the new TOE gives its files the same mode; nobody serves again);
#   4. `sfc-ctl apply -f` with guest-mode=0666: vm show and the file's
#      mode; a bad guest-mode in the file names its line and changes
#      nothing; a changed one is refused.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl sha256sum setpriv stat
tc_need_root "network namespaces, setuid"
getent passwd nobody www-data >/dev/null && getent group nogroup >/dev/null ||
	{ echo "SKIP: no nobody/www-data users or nogroup group"; exit 77; }

td_setup 207
chmod 711 "$work"	# guest users reach the regions, nothing else
mkdir -m 755 "$work/www"
head -c $((1 << 20)) /dev/urandom >"$work/www/mid.bin"
chmod 644 "$work/www/mid.bin"
# the runtime where the guest's users can read it
run=$(tc_user_runtime "$work") || fail "copy of the runtime"
want=$(sha256sum <"$work/www/mid.bin" | cut -d' ' -f1)

# refused: ARGS... must exit 1 with one line containing $want_msg
refused() {
	local rc=0
	(sfc "$@") 2>"$work/err" >/dev/null || rc=$?
	[ $rc -eq 1 ] || fail "'$*' exited $rc, not 1"
	[ "$(wc -l <"$work/err")" -eq 1 ] || fail "'$*' did not give one line: $(cat "$work/err")"
	grep -q -- "$want_msg" "$work/err" || fail "'$*': $(cat "$work/err") lacks '$want_msg'"
}

# serve_as USER GROUP PORT: http.server as USER under tochain-run on web1's region
serve_as() {
	tc_isolated GU "gu$3"
	(cd "$work/www" && exec ip netns exec "$GU" "$run" --region "$region" -- \
		setpriv --reuid "$1" --regid "$2" --clear-groups \
		/usr/bin/python3 -m http.server --bind 0.0.0.0 "$3") >"$work/py-$3.log" 2>&1 &
	PY=$!
	tc_on_exit "kill -9 $PY"
}

fetch_ok() {	# PORT WHAT
	local got
	got=$(ip netns exec "$CL" curl -sS --max-time 20 "http://10.67.0.2:$1/mid.bin" | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$2: sha256 differs"
	echo "ok: $2"
}

files_are() {	# MODE GROUP WHAT
	local f
	for f in "$region" "$region.sock"; do
		[ "$(stat -c '%a %G' "$f")" = "$1 $2" ] || fail "$3: $f is $(stat -c '%a %G' "$f"), not $1 $2"
	done
}

echo "--- 1. bad guest users are refused and change nothing"
before=$(sfc --json vm ls)
want_msg="--guest-mode '0777' must have read/write bits only"
refused vm add web1 --ip 10.67.0.2/24 --guest-mode 0777
for m in 4666 0066 rw 0x1b0 ""; do
	want_msg="--guest-mode '$m'"
	refused vm add web1 --ip 10.67.0.2/24 --guest-mode "$m"
done
want_msg="--guest-group 'no-such-grp-x': no such group"
refused vm add web1 --ip 10.67.0.2/24 --guest-mode 0660 --guest-group no-such-grp-x
want_msg="--guest-group '-x' must be of"
refused vm add web1 --ip 10.67.0.2/24 --guest-group -x
want_msg="are for a stand-in VM"
refused vm add web1 --ip 10.67.0.2/24 --domain web1-dom --guest-mode 0666
[ "$(sfc --json vm ls)" = "$before" ] || fail "a refused request changed the state"
ip netns list | grep -q "^$fab-" && fail "a refused request left a namespace"
[ -z "$(ls -A "$work/regions")" ] || fail "a refused request left a region: $(ls "$work/regions")"

echo "--- 2. vm add --guest-mode 0660 --guest-group nogroup: nobody serves"
sfc vm add web1 --ip 10.67.0.2/24 --guest-mode 0660 --guest-group nogroup | tee "$work/show"
grep -q '^guest_mode *0660$' "$work/show" || fail "vm add does not show guest_mode"
grep -q '^guest_group *nogroup$' "$work/show" || fail "vm add does not show guest_group"
[ "$(td_field vm web1 guest_mode) $(td_field vm web1 guest_group)" = "0660 nogroup" ] ||
	fail "vm show: $(sfc --json vm show web1)"
region=$(td_field vm web1 region)
files_are 660 nogroup "vm add"
td_client 10.67.0.100
serve_as nobody nogroup 8081
tc_wait_port "$CL" 10.67.0.2 8081 15 || fail "port 8081 did not open"
[ "$(ps -o user= -p "$(pgrep -P $PY -f http.server || echo $PY)" | tr -d ' ')" = nobody ] ||
	fail "the server does not run as nobody"
fetch_ok 8081 "http.server as nobody in a VM made by vm add"
fetch_ok 8081 "again"
# a user outside the group: the kernel's answer for a network it may not use
out=$(cd "$work" && ip netns exec "$GU" "$run" --region "$region" -- \
	setpriv --reuid www-data --regid www-data --clear-groups /usr/bin/python3 -c '
import errno, socket
try:
    socket.socket()
    print("created")
except OSError as e:
    print(errno.errorcode[e.errno])' 2>&1)
[ "$out" = ENETDOWN ] || fail "www-data outside nogroup: $out"
echo "ok: www-data (not in nogroup) gets $out"
kill -9 $PY

echo "--- 3. kept across a tochaind SIGKILL and a TOE repair"
toe=$(td_field vm web1 toe_pid)
td_kill9
td_start
[ "$(td_field vm web1 guest_mode) $(td_field vm web1 guest_group)" = "0660 nogroup" ] ||
	fail "lost across the restart: $(sfc --json vm show web1)"
grep -q '"guest_mode": "0660"' "$work/state/state.json" || fail "the state file lacks guest_mode"
kill -9 "$toe"
for i in $(seq 50); do
	new=$(td_field vm web1 toe_pid)
	[ "$new" != "$toe" ] && [ "$(td_field vm web1 toe)" = running ] && break
	sleep 0.2
done
[ "$new" != "$toe" ] || fail "TOE not repaired"
files_are 660 nogroup "after the TOE repair"
ps -o args= -p "$new" | grep -q -- "--guest-mode 0660 --guest-group nogroup" ||
	fail "the repaired TOE runs without them: $(ps -o args= -p "$new")"
serve_as nobody nogroup 8082
tc_wait_port "$CL" 10.67.0.2 8082 15 || fail "port 8082 did not open"
fetch_ok 8082 "http.server as nobody after the TOE repair"
kill -9 $PY

echo "--- 4. sfc-ctl apply -f with guest-mode"
cat >"$work/bad.topo" <<'T'
vm web1 ip=10.67.0.2/24 guest-mode=0660 guest-group=nogroup
vm web2 ip=10.67.0.3/24 guest-mode=0777
T
before=$(sfc --json vm ls)
want_msg="bad.topo:2: vm web2: guest-mode '0777' must have read/write bits only"
refused apply -f "$work/bad.topo"
[ "$(sfc --json vm ls)" = "$before" ] || fail "a refused apply changed the state"
cat >"$work/change.topo" <<'T'
vm web1 ip=10.67.0.2/24 guest-mode=0666
T
want_msg="change.topo:1: vm web1 exists with guest-mode 0660 and guest-group 'nogroup'"
refused apply -f "$work/change.topo"
cat >"$work/web.topo" <<'T'
vm web1 ip=10.67.0.2/24 guest-mode=0660 guest-group=nogroup
vm web2 ip=10.67.0.3/24 guest-mode=0666
T
sfc apply -f "$work/web.topo"
[ "$(td_field vm web2 guest_mode)" = 0666 ] || fail "apply: $(sfc --json vm show web2)"
sfc --json vm show web2 | td_json '"guest_group" not in j' | grep -q True || fail "web2 has a group"
region=$(td_field vm web2 region)
[ "$(stat -c %a "$region")" = 666 ] || fail "apply: web2's region is $(stat -c %a "$region")"
[ "$(sfc apply -f "$work/web.topo")" = "no changes" ] || fail "the same file again changed something"
echo PASS
