#!/usr/bin/env bash
# timeout: 300
# needs: patched-qemu
# Revoking a VNF guest's grant through libvirt (issue 8): two libvirt
# domains (TCG) run the patched QEMU of qemu-patches/ as their <emulator>
# and share one region, each through a grant tochaind's td_libvirt makes
# (hot-plugged ivshmem-plain <shmem>, alias ua-tochain-grant-NAME; driven
# here by build/tests/bin/lv_grant).  The guests (qemu-patches/tests/
# grant-probe-guest.c) report on their serial console each change of the
# region's first word and write a heartbeat into it.  Revoking B (the
# "VNF"): B reads all ones, its writes stop reaching the region and it no
# longer sees the host's updates, while A keeps reading and writing;
# re-granting brings B back; ungranting unplugs B's device (the guest
# ejects it) and leaves no device, mapping or link behind.  A third domain
# on Debian's QEMU shows the stock answer: the grant works, the revoke is
# -ENOTSUP.
#
# Uses the patched QEMU (tc_patched_qemu: built when the cache lacks it;
# scripts/run-tests.sh starts that build early).  libvirtd is started here
# if none runs, and stopped again.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"
# shellcheck source=../guest/libvirt-domain.sh
. "$top/tests/guest/libvirt-domain.sh"

for c in libvirtd virsh virtlogd gcc od; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not installed (tochaind/deps.txt)"; exit 77; }
done
lvg=$build/tests/bin/lv_grant
[ -x "$lvg" ] || fail "$lvg not built (make BUILD=$build $lvg)"
tc_patched_qemu	# built when missing
stock=$(command -v qemu-system-x86_64 || true)

work=$(mktemp -d /tmp/tochain-801.XXXXXX)
chmod 755 "$work"	# libvirt's QEMU user reads the guest and writes the logs here
region=/dev/shm/tochain-801-$$.region
doms=()
grants=()
cleanup() {
	set +e
	local d
	for d in "${doms[@]}"; do lv_domain_destroy "$d"; done
	for d in "${grants[@]}"; do rm -f "/dev/shm/tochain-grant-$d"; done
	rm -f "$region"
	rm -rf "$work"
	lv_daemon_stop
}
tc_on_exit cleanup

fail_logs() {
	local f
	for f in "$work"/serial-*.log; do
		[ -f "$f" ] && { echo "--- $(basename "$f")"; tail -n 12 "$f"; }
	done
	for f in "${doms[@]}"; do
		echo "--- qemu log $f"; tail -n 5 "/var/log/libvirt/qemu/$f.log" 2>/dev/null
	done
}
tc_on_fail fail_logs

# lv_grant CMD DOMAIN [ARGS...]: its output in $out, its rc in $rc
grant() {
	out=$("$lvg" "$LV_URI" "$@" 2>&1) || true
	rc=$(echo "$out" | sed -n 's/^rc \(-\{0,1\}[0-9]*\) .*/\1/p')
	[ -n "$rc" ] || fail "lv_grant $*: $out"
	if echo "$out" | grep -qE 'Sanitizer|runtime error'; then fail "lv_grant $*: $out"; fi
}
grant_ms() { echo "$out" | sed -n 's/^rc .* ms \(.*\)/\1/p'; }
expect() { # RC CMD ARGS...
	local want=$1; shift
	grant "$@"
	[ "$rc" = "$want" ] || fail "lv_grant $*: rc $rc, expected $want: $out"
}

# wait_line FILE ERE SECONDS: a line of FILE matching ERE appears
wait_line() {
	local i
	for i in $(seq $(($3 * 10))); do
		grep -aqE "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
word() { od -An -tu4 -j $((4 * $1)) -N4 "$region" | tr -d ' '; }
put0() { printf "$(printf '\\x%s\\x%s\\x%s\\x%s' "${1:6:2}" "${1:4:2}" "${1:2:2}" "${1:0:2}")" |
	dd of="$region" bs=4 count=1 conv=notrunc status=none; }
# advancing WORD: the heartbeat in WORD moves within 3 s
advancing() {
	local a b i
	a=$(word "$1")
	for i in $(seq 30); do
		sleep 0.1
		b=$(word "$1")
		[ "$a" != "$b" ] && return 0
	done
	return 1
}

echo "patched QEMU: $QEMU ($QEMU_SOURCE_VERSION)"
gcc -m32 -ffreestanding -fno-pic -fno-stack-protector -nostdlib -static -O2 -Wall -Wextra \
	-Werror -Wl,-Ttext=0x100000 -Wl,--build-id=none -o "$work/guest.elf" \
	"$top/tests/qemu/grant-probe-guest.c" 2>"$work/gcc.log" ||
	{ echo "SKIP: gcc cannot build 32-bit code here: $(head -n 3 "$work/gcc.log")"; exit 77; }
chmod 644 "$work/guest.elf"

t0=$(date +%s.%N)
if ! lv_daemon_start; then
	echo "SKIP: libvirtd does not start here"
	exit 77
fi
echo "libvirtd: $([ "$LV_STARTED" = 1 ] && echo started || echo already running)," \
	"ready after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"

# a 1 MiB region as the TOE makes it: root's, 0600; word 0 is the host's
dd if=/dev/zero of="$region" bs=1M count=1 status=none
chmod 600 "$region"
put0 5a5a0001

domain_xml() { # NAME EMULATOR HEARTBEAT_WORD
	cat <<EOF
<domain type='qemu'>
  <name>$1</name>
  <memory unit='MiB'>32</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$work/guest.elf</kernel>
    <cmdline>hb=$3</cmdline>
  </os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>$2</emulator>
    <serial type='file'>
      <source path='$work/serial-$1.log'/>
      <target port='0'/>
    </serial>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
}
start_domain() { # NAME EMULATOR HEARTBEAT_WORD [persistent]
	domain_xml "$@" >"$work/$1.xml"
	doms+=("$1")
	if [ "${4:-}" = persistent ]; then
		lv_virsh define "$work/$1.xml" >/dev/null || fail "virsh define $1 (emulator $2)"
		lv_virsh start "$1" >/dev/null || fail "virsh start $1 (emulator $2)"
	else
		lv_virsh create "$work/$1.xml" >/dev/null || fail "virsh create $1 (emulator $2)"
	fi
	wait_line "$work/serial-$1.log" "^U hb=" 30 || fail "guest $1 did not start"
}
A=tochain-801a-$$
B=tochain-801b-$$
C=tochain-801c-$$
ga=t801-$$-a
gb=t801-$$-b
gc=t801-$$-c
grants=("$ga" "$gb" "$gc")
t0=$(date +%s.%N)
start_domain "$A" "$QEMU" 1
start_domain "$B" "$QEMU" 2 persistent	# the grant must stay out of its configuration
echo "domains $A, $B on the patched QEMU: running after" \
	"$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"

echo "--- the patched QEMU can revoke"
expect 1 supported "$A"
expect -2 supported "nosuch-$$"		# -ENOENT

echo "--- grants: both guests read the region and write their heartbeats"
expect 0 grant "$A" "$ga" "$region" 1
expect 0 grant "$B" "$gb" "$region" 1
echo "grant (hot-plug): $(grant_ms) ms"
[ "$(stat -c %U "$region")" = libvirt-qemu ] || fail "region owned by $(stat -c %U "$region")"
[ "$(stat -c %i "/dev/shm/tochain-grant-$gb")" = "$(stat -c %i "$region")" ] ||
	fail "/dev/shm/tochain-grant-$gb is not the region"
lv_virsh dumpxml "$B" | grep -q "<alias name='ua-tochain-grant-$gb'/>" ||
	fail "no ua-tochain-grant-$gb in $B's live XML"
lv_virsh dumpxml --inactive "$B" | grep -q "<shmem" && fail "a grant went into the configuration"
expect -17 grant "$B" "$gb" "$region" 1	# -EEXIST
expect -22 grant "$B" "bad/name" "$region" 1	# -EINVAL
expect -22 grant "$B" "$gb" "$region" 3	# -EINVAL: no BAR is 3 MiB
for d in "$A" "$B"; do
	wait_line "$work/serial-$d.log" '^R 5a5a0001' 30 || fail "guest $d does not read the region"
done
advancing 1 || fail "guest A's heartbeat does not reach the region"
advancing 2 || fail "guest B's heartbeat does not reach the region"
put0 5a5a0002
for d in "$A" "$B"; do
	wait_line "$work/serial-$d.log" '^R 5a5a0002' 10 || fail "guest $d does not see the host's write"
done
expect 0 state "$B" "$gb"

echo "--- revoke B: B reads all ones, A keeps working"
: >"$work/mark"
expect 0 revoke "$B" "$gb"
echo "revoke (qom-set through libvirt): $(grant_ms) ms"
t0=$(date +%s.%N)
wait_line "$work/serial-$B.log" '^R ffffffff' 10 || fail "revoked guest B does not read all ones"
echo "revoked B read all ones after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s (polling)"
expect 1 state "$B" "$gb"
expect 0 revoke "$B" "$gb"		# idempotent
expect 0 state "$A" "$ga"
sleep 0.3
advancing 2 && fail "revoked guest B's writes still reach the region"
advancing 1 || fail "guest A's heartbeat stopped when B was revoked"
put0 5a5a0003
wait_line "$work/serial-$A.log" '^R 5a5a0003' 10 || fail "guest A does not see the host's write while B is revoked"
sleep 1
grep -aq '^R 5a5a0003' "$work/serial-$B.log" && fail "revoked guest B read the host's write"
tail -n 1 "$work/serial-$B.log" | grep -aq '^R ffffffff' || fail "guest B's last read is not all ones"

echo "--- re-grant B: it reads the region as it is now"
expect 0 regrant "$B" "$gb"
echo "re-grant: $(grant_ms) ms"
wait_line "$work/serial-$B.log" '^R 5a5a0003' 10 || fail "re-granted guest B does not read the region"
expect 0 state "$B" "$gb"
advancing 2 || fail "re-granted guest B's writes do not reach the region"

echo "--- ungrant B: revoked, unplugged, nothing left"
qpid=$(lv_qemu_pid "$B")
grep -q "tochain-grant-$gb" "/proc/$qpid/maps" || fail "B's QEMU does not map the grant"
expect 0 ungrant "$B" "$gb"
echo "ungrant: $(grant_ms) ms"
[ ! -e "/dev/shm/tochain-grant-$gb" ] || fail "/dev/shm/tochain-grant-$gb left behind"
wait_line "$work/serial-$B.log" '^G' 10 || fail "guest B never saw its device go"
for i in $(seq 50); do
	lv_virsh dumpxml "$B" | grep -q "ua-tochain-grant-$gb" || break
	sleep 0.1
done
lv_virsh dumpxml "$B" | grep -q "<shmem" && fail "<shmem> still in $B's live XML"
expect -19 state "$B" "$gb"		# -ENODEV
expect -19 revoke "$B" "$gb"
expect 0 ungrant "$B" "$gb"		# idempotent
grep -qE "tochain-grant-$gb|$region" "/proc/$qpid/maps" && fail "B's QEMU still maps the region"
ls -l "/proc/$qpid/fd" | grep -qE "tochain-grant-$gb|$region" && fail "B's QEMU still holds the region open"
put0 5a5a0004
wait_line "$work/serial-$A.log" '^R 5a5a0004' 10 || fail "guest A stopped reading after B's ungrant"
advancing 1 || fail "guest A's heartbeat stopped after B's ungrant"

if [ -n "$stock" ] && [ "$(readlink -f "$stock")" != "$(readlink -f "$QEMU")" ]; then
	echo "--- Debian's QEMU ($stock): grants work, revoking does not"
	start_domain "$C" "$stock" 3
	expect 0 supported "$C"
	expect 0 grant "$C" "$gc" "$region" 1
	wait_line "$work/serial-$C.log" '^R 5a5a0004' 30 || fail "guest C does not read the region"
	expect -95 revoke "$C" "$gc"		# -ENOTSUP
	echo "$out" | grep -q "cannot revoke" || fail "no reason given: $out"
	grep -aq '^R ffffffff' "$work/serial-$C.log" && fail "guest C lost the region"
	grant ungrant "$C" "$gc"
	# 1: the unplug waits for the guest (this one ejects it at once)
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "ungrant on stock QEMU: $out"
	wait_line "$work/serial-$C.log" '^G' 10 || fail "guest C never saw its device go"
	echo "stock QEMU: revoke -ENOTSUP, ungrant rc $rc (guest ejected)"
else
	echo "note: no stock qemu-system-x86_64 besides the patched one, -ENOTSUP not checked"
fi

echo "--- domain gone: ungrant is a no-op"
expect 0 ungrant "$A" "$ga"
lv_domain_destroy "$B"
expect 0 ungrant "$B" "$gb"
expect -2 revoke "$B" "$gb"		# -ENOENT
wait_line "$work/serial-$A.log" '^G' 10 || fail "guest A never saw its device go"
for i in $(seq 50); do
	lv_virsh dumpxml "$A" | grep -q "<shmem" || break
	sleep 0.1
done
lv_virsh dumpxml "$A" | grep -q "<shmem" && fail "<shmem> still in $A's live XML"
ls /dev/shm/tochain-grant-t801-$$-* 2>/dev/null && fail "grant links left behind"
echo "PASS 801_libvirt_revoke"
