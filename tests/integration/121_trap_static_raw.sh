#!/usr/bin/env bash
# timeout: 180
# Programs the preload library cannot reach take the trap path
# (guest-lib/README.md "The trap path"): a statically linked server
# (gcc -static, libc's socket calls; also forking a child per connection)
# and a dynamically linked one that
# makes every socket call with syscall(__NR_...) serve a 4 MiB file to
# curl through the TOE from the stand-in VM's loopback-only namespace;
# the sha256 must match and the TOE's counters must have carried the
# bytes.  tochain-run takes the static one on the trap path by itself;
# the raw one needs --trap, and without it (preload only) it is
# unreachable: nothing leaks.  When the servers are killed, their
# supervisors exit and the TOE holds no channel and no socket.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/toe.sh"
. "$top/tests/lib/trap.sh"

tc_need_cmds ip curl sha256sum gcc readelf
tc_need_root "network namespaces"
[ -e "$(gcc -print-file-name=libc.a)" ] || fail "no libc.a: libc6-dev is part of build-essential (make deps)"

tt_netns 121 10.79.121
tt_toe_start "$VM" vm121

gcc -static -O2 -Wall -Werror -o $work/srv-static "$top/tests/progs/trap_server.c"
gcc -O2 -Wall -Werror -DRAW_SYSCALLS -o $work/srv-raw "$top/tests/progs/trap_server.c"
! readelf -l $work/srv-static | grep -q INTERP || fail "srv-static is not static"
readelf -l $work/srv-raw | grep -q INTERP || fail "srv-raw is not dynamic"

head -c $((4 << 20)) /dev/urandom >$work/data.bin
want=$(sha256sum <$work/data.bin | cut -d' ' -f1)

# 1. static: tochain-run takes the trap path by itself (it used to warn and run it unoffloaded)
tp_check_server static 10.79.121.2 8121 /data.bin "$want" -- $work/srv-static http 8121 $work/data.bin
grep -q "listening 8121" $work/static.log || fail "static: did not say it listens"
! grep -q warning $work/static.log || fail "static: tochain-run warned: $(cat $work/static.log)"

# 1b. static, a child per connection that closes its copy of the listener:
#     the parent's listener lives on (fetches 2 and 3), the child serves the stream
tp_check_server static-fork 10.79.121.2 8124 /data.bin "$want" -- $work/srv-static fork 8124 $work/data.bin

# 2. raw syscall(): dynamically linked, --trap
tp_check_server raw 10.79.121.2 8122 /data.bin "$want" --trap -- $work/srv-raw http 8122 $work/data.bin

# 3. the raw one with the preload library only: its sockets are the kernel's, in a
#    namespace with nothing but loopback: unreachable
tp_unreachable plain 10.79.121.2 8123 /data.bin \
	"$build/bin/tochain-run" --region "$region" -- $work/srv-raw http 8123 $work/data.bin

tt_toe_stop
echo PASS
