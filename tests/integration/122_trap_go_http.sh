#!/usr/bin/env bash
# timeout: 300
# A Go net/http file server (tests/progs/trap_gohttp.go, built here with
# Debian's golang-go, offline, its caches under the build directory)
# serves a 4 MiB file to curl through the TOE from the stand-in VM's
# loopback-only namespace: Go makes its own system calls, so tochain-run
# recognises the Go binary and takes the trap path by itself.  Built
# twice: pure Go, statically linked (CGO_ENABLED=0), and with cgo,
# dynamically linked (Go's default where gcc is installed).  The sha256
# must match, the TOE's counters must have carried the bytes, and after
# the server is killed its supervisor exits and the TOE is left idle.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"
. "$top/tests/lib/trap.sh"

tc_need_cmds ip curl sha256sum readelf
tc_need_root "network namespaces"
command -v go >/dev/null || fail "no go: golang-go is in guest-lib/deps.txt (make deps)"

tt_netns 122 10.79.122
tt_toe_start "$VM" vm122

gobuild() { # OUT [ENV...]
	local out=$1
	shift
	(cd "$top/tests/progs" && env GOCACHE="$build/go/cache" GOPATH="$build/go/path" \
		GOPROXY=off GOFLAGS= GO111MODULE=off "$@" go build -o "$out" trap_gohttp.go) ||
		fail "go build $out failed"
}
gobuild $work/gohttp-static CGO_ENABLED=0
gobuild $work/gohttp-cgo
! readelf -l $work/gohttp-static | grep -q INTERP || fail "gohttp-static is not static"
readelf -l $work/gohttp-cgo | grep -q INTERP || fail "gohttp-cgo is not dynamic"

mkdir $work/www
head -c $((4 << 20)) /dev/urandom >$work/www/data.bin
want=$(sha256sum <$work/www/data.bin | cut -d' ' -f1)

tp_check_server go-static 10.79.122.2 8124 /data.bin "$want" -- $work/gohttp-static 8124 $work/www
grep -q "listening 8124" $work/go-static.log || fail "go-static: did not say it listens"
tp_check_server go-cgo 10.79.122.2 8125 /data.bin "$want" -- $work/gohttp-cgo 8125 $work/www

# Without the runtime the same server in the stand-in VM is unreachable.
tp_unreachable plain 10.79.122.2 8126 /data.bin $work/gohttp-static 8126 $work/www

tt_toe_stop
echo PASS
