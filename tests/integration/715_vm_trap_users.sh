#!/usr/bin/env bash
# timeout: 420
# The trap path and non-root users inside a real QEMU guest (TCG here;
# issue 17).  The runtime guest (tests/guest/build-guest.sh --runtime)
# gets one more archive with /guest.sh, a nobody user and programs built
# here: tests/progs/trap_server.c with `gcc -static`, and
# tests/progs/trap_gohttp.go with Debian's golang-go (pure Go, static).
# In the guest, each under plain `tochain-run --` (no --trap: static and
# Go are recognised), its region found by itself (/dev/tochain/NAME):
#   static  the static C server, as root
#   go      the Go net/http file server, as root
#   nobody  the Go server started as nobody (busybox su): tochain-run
#           arms the filter with no_new_privs, its supervisor is nobody
#           and claims its channel through the 0666 device node
#   drop    the static server dropping root to nobody once it listens
#   fork    the static server serving from a child per connection
# curl in a client namespace on the fabric fetches a 2 MiB file twice
# from each through the TOE (sha256 must match).  Each check fails
# without its feature: the static and Go servers without the runtime
# listen on the guest kernel's sockets and are unreachable (the guest
# has no NIC); with the node at 0600, nobody's tochain-run is refused
# and its port stays closed; the guest reports the uids of each server
# and of the supervisors (four root, nobody's own) from /proc.  At the
# end the guest kills the servers and their supervisors must be gone.
# Twice: ivshmem-doorbell (MSI-X), then ivshmem-plain (poll mode).
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"
# shellcheck source=../guest/qemu.sh
. "$top/tests/guest/qemu.sh"
# shellcheck source=../guest/rt-host.sh
. "$top/tests/guest/rt-host.sh"

tc_need_root "network namespaces"
tc_need_cmds ip curl sha256sum cpio gcc readelf "$VM_QEMU"
rg_need_built
[ -e "$(gcc -print-file-name=libc.a)" ] || fail "no libc.a: libc6-dev is part of build-essential (make deps)"
command -v go >/dev/null || fail "no go: golang-go is in guest-lib/deps.txt (make deps)"
guest_rt=$("$top/tests/guest/build-guest.sh" "$build" --runtime) || fail "guest build"

tc_init
tc_fabric
tc_host CL cl 10.70.15.1/24
tc_host VM vm 10.70.15.2/24
work=$(mktemp -d /dev/shm/tc715.XXXXXX)
tc_on_exit "rm -rf $work"
region=$work/region
name=trap715
addr=10.70.15.2
rg_init

# ---- the guest's additions ----
# The Go server: built as test 122 builds it (offline, caches under the
# build directory), cached by the hash of its source and of the compiler.
x=$work/extra
mkdir -p "$x/srv/www" "$x/etc"
gokey=$( { sha256sum "$top/tests/progs/trap_gohttp.go"; go version; } | sha256sum | cut -d' ' -f1)
gobin=$build/go/trap-gohttp-static.$gokey
if [ ! -x "$gobin" ]; then
	mkdir -p "$build/go"
	(cd "$top/tests/progs" && env GOCACHE="$build/go/cache" GOPATH="$build/go/path" \
		GOPROXY=off GOFLAGS= GO111MODULE=off CGO_ENABLED=0 \
		go build -o "$gobin.tmp" trap_gohttp.go) || fail "go build failed"
	mv "$gobin.tmp" "$gobin"
fi
cp "$gobin" "$x/srv/gohttp"
gcc -static -O2 -Wall -Werror -o "$x/srv/srv-static" "$top/tests/progs/trap_server.c"
for b in gohttp srv-static; do
	! readelf -l "$x/srv/$b" | grep -q INTERP || fail "$b is not static"
done
head -c $((2 << 20)) /dev/urandom >"$x/srv/www/data.bin"
want=$(sha256sum <"$x/srv/www/data.bin" | cut -d' ' -f1)
# the image's /etc/passwd knows only root: this one replaces it
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$x/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$x/etc/group"
cat >"$x/guest.sh" <<'EOF'
#!/bin/sh
# $1: the region node; tochain-run finds it without --region.
dev=$1
cd /srv || exit 1
# wait_listen LOG PORT: the server said it listens (up to 60 s)
wait_listen() {
	i=0
	while ! grep -q "listening $2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 600 ] || return 1; sleep 0.1
	done
}
# the supervisors (tochain-run --trap-serve): their real uids, sorted
sup_uids() {
	for d in /proc/[0-9]*; do
		tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q '^tochain-run [-]-trap-serve' &&
			sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' "$d/status"
	done | sort -n | tr '\n' ' ' | sed 's/ $//'
}
uid_of() { sed -n 's/^Uid:[[:space:]]*//p' /proc/$1/status | tr -s ' \t' ' '; }
# without the runtime: the guest kernel's sockets (no NIC: unreachable)
./srv-static http 8090 /srv/www/data.bin >/tmp/plain.log 2>&1 &
wait_listen /tmp/plain.log 8090 && echo "GUEST-PLAIN static listening"
./gohttp 8091 /srv/www >/tmp/plain-go.log 2>&1 &
pg=$!
wait_listen /tmp/plain-go.log 8091 && echo "GUEST-PLAIN go listening"
# nobody with the node at 0600: refused, nothing listens on 8093
chmod 0600 "$dev"
su -s /bin/sh nobody -c 'exec tochain-run -- /srv/gohttp 8093 /srv/www' >/tmp/refused.log 2>&1
echo "GUEST-REFUSED rc=$? $(head -n 1 /tmp/refused.log)"
chmod 0666 "$dev"
# the trap path, found by tochain-run itself (no --trap)
tochain-run -- ./srv-static http 8081 /srv/www/data.bin >/tmp/static.log 2>&1 &
p1=$!
tochain-run -- ./gohttp 8082 /srv/www >/tmp/go.log 2>&1 &
p2=$!
su -s /bin/sh nobody -c 'exec tochain-run -- /srv/gohttp 8083 /srv/www' >/tmp/nobody.log 2>&1 &
p3=$!
tochain-run -- ./srv-static drop 8084 /srv/www/data.bin >/tmp/drop.log 2>&1 &
p4=$!
tochain-run -- ./srv-static fork 8085 /srv/www/data.bin >/tmp/fork.log 2>&1 &
p5=$!
for s in static:8081:$p1 go:8082:$p2 nobody:8083:$p3 drop:8084:$p4 fork:8085:$p5; do
	n=${s%%:*}; rest=${s#*:}; port=${rest%%:*}; pid=${rest#*:}
	if wait_listen /tmp/$n.log $port; then
		echo "GUEST-LISTEN $n port=$port pid=$pid"
	else
		echo "GUEST-NOLISTEN $n: $(cat /tmp/$n.log)"
	fi
done
i=0
while ! grep -q dropped /tmp/drop.log && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
for s in static:$p1 go:$p2 nobody:$p3 drop:$p4 fork:$p5; do
	echo "GUEST-UID ${s%%:*} $(uid_of ${s#*:})"
done
echo "GUEST-SUPERVISORS $(sup_uids)"
echo "GUEST-READY"
# the host says it is done by connecting here (through the TOE)
tochain-run -- busybox-dyn nc -l -p 9000 >/dev/null 2>&1
kill $p1 $p2 $p3 $p4 $p5 $pg $(pidof srv-static)
i=0
while [ -n "$(sup_uids)" ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
echo "GUEST-END supervisors=$(sup_uids | wc -w)"
EOF
chmod 755 "$x/guest.sh"
chmod -R a+rX "$x/srv"
rg_guest "$guest_rt" "$x"

run_mode() { # doorbell|poll
	local mode=$1 serial t0 s n port i got
	echo "== $mode"
	t0=$(date +%s.%N)
	rg_start "$mode" "$name" --slots 8 -- -m 384
	vm_wait_line "$work/serial.log" '^GUEST-REGION' 120 "$qpid" || fail "$mode: guest found no region"
	vm_wait_line "$work/serial.log" '^GUEST-READY' 180 "$qpid" || fail "$mode: the guest's servers did not start"
	echo "$mode (${VM_ACCEL[*]}): boot to serving: $(vm_since "$t0") s"
	serial=$(rg_serial)
	grep '^GUEST-' <<<"$serial" | grep -v DMESG

	# without the runtime: unreachable
	for s in static:8090 go:8091; do
		grep -q "^GUEST-PLAIN ${s%:*} listening" <<<"$serial" ||
			fail "$mode: the ${s%:*} server without the runtime did not start"
		if ip netns exec "$CL" curl -s --max-time 5 -o /dev/null http://$addr:${s#*:}/data.bin; then
			fail "$mode: the ${s%:*} server without the runtime is reachable"
		fi
	done
	echo "plain: the static and Go servers without tochain-run are unreachable, as they must be"
	# nobody, node 0600: refused by tochain-run, nothing on 8093
	grep -qE '^GUEST-REFUSED rc=[1-9].*Permission denied' <<<"$serial" ||
		fail "$mode: nobody was not refused a 0600 node: $(grep '^GUEST-REFUSED' <<<"$serial")"
	if ip netns exec "$CL" curl -s --max-time 5 -o /dev/null http://$addr:8093/data.bin; then
		fail "$mode: refused, yet port 8093 answers"
	fi

	# the servers' uids: root, root, nobody from the start, nobody after
	# the drop; their supervisors': nobody's is nobody, the others root
	for s in "static 0 0 0 0" "go 0 0 0 0" "nobody 65534 65534 65534 65534" \
		"drop 65534 65534 65534 65534" "fork 0 0 0 0"; do
		grep -qx "GUEST-UID $s" <<<"$serial" ||
			fail "$mode: uid of ${s%% *}: $(grep "^GUEST-UID ${s%% *} " <<<"$serial"), want ${s#* }"
	done
	grep -qx 'GUEST-SUPERVISORS 0 0 0 0 65534' <<<"$serial" ||
		fail "$mode: supervisors' uids: $(grep '^GUEST-SUPERVISORS' <<<"$serial"), want 0 0 0 0 65534"

	for s in static:8081 go:8082 nobody:8083 drop:8084 fork:8085; do
		n=${s%%:*} port=${s#*:}
		grep -q "^GUEST-LISTEN $n port=$port" <<<"$serial" || fail "$mode: $n did not listen"
		for i in 1 2; do
			t0=$(date +%s.%N)
			got=$(ip netns exec "$CL" curl -sS --max-time 90 http://$addr:$port/data.bin |
				sha256sum | cut -d' ' -f1) || true
			[ "$got" = "$want" ] || fail "$mode: $n: fetch $i: sha256 $got, want $want"
			echo "$n: fetch $i (2 MiB) ok in $(vm_since "$t0") s"
		done
	done

	# done: the guest kills the servers; their supervisors must exit
	ip netns exec "$CL" bash -c "echo done >/dev/tcp/$addr/9000" || fail "$mode: cannot tell the guest"
	vm_wait_line "$work/serial.log" '^GUEST-END' 60 "$qpid" || fail "$mode: the guest did not end"
	rg_serial | grep -q '^GUEST-END supervisors=0$' ||
		fail "$mode: supervisors still run after their servers"
	vm_wait_line "$work/serial.log" '^GUEST-DONE' 60 "$qpid" || fail "$mode: no GUEST-DONE"
	if rg_serial | grep -E 'GUEST-DMESG.*(BUG:|WARNING:|Oops|Call Trace)'; then
		fail "$mode: kernel splat in the guest"
	fi
	wait "$qpid" 2>/dev/null || true; qpid=
	kill "$lpid"; wait "$lpid" || fail "$mode: link exit status"; lpid=
	kill "$tpid"; wait "$tpid" || fail "$mode: TOE exit status"; tpid=
	echo "PASS $mode"
}

run_mode doorbell
run_mode poll
echo "PASS 715_vm_trap_users"
