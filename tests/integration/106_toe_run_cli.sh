#!/usr/bin/env bash
# timeout: 30
# tochain-run's command line: usage errors exit 2, a missing region is
# refused, the environment it sets up, and statically linked programs
# (which a preload runtime cannot reach) started on the trap path
# without a warning, their exit status passed through.
set -uo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/common.sh"
run=$build/bin/tochain-run
work=$(mktemp -d)
tc_on_exit 'rm -rf "$work"'

"$run" >/dev/null 2>&1; [ $? = 2 ] || fail "no arguments: want exit 2"
"$run" --bogus -- true >/dev/null 2>&1; [ $? = 2 ] || fail "unknown option: want exit 2"
env -u TOCHAIN_REGION "$run" -- true 2>$work/err; [ $? = 2 ] || fail "no region: want exit 2"
grep -q region $work/err || fail "no region: message should say so"
"$run" --region $work/nope -- true 2>$work/err; [ $? = 1 ] || fail "missing region file: want exit 1"
grep -q "$work/nope" $work/err || fail "missing region: message should name it"

touch $work/region
out=$("$run" --region $work/region -- sh -c 'echo "$LD_PRELOAD|$TOCHAIN_REGION"')
case $out in
*libtochain-preload.so*"|$work/region") ;;
*) fail "environment: $out";;
esac
out=$(LD_PRELOAD=/nonexistent-extra.so "$run" --region $work/region -- sh -c 'echo "$LD_PRELOAD"' 2>/dev/null)
case $out in
*libtochain-preload.so:/nonexistent-extra.so) ;;
*) fail "existing LD_PRELOAD not kept: $out";;
esac
"$run" --region $work/region -- sh -c 'exit 7'; [ $? = 7 ] || fail "exit status not passed through"
"$run" --region $work/region -- /nonexistent-cmd 2>/dev/null; [ $? = 127 ] || fail "missing command: want 127"

static=
for c in /sbin/ldconfig /bin/busybox; do
	[ -x $c ] && file -L $c 2>/dev/null | grep -q 'static' && { static=$c; break; }
done
if [ -n "$static" ]; then
	# the trap path's supervisor runs the runtime, which needs no TOE until a socket call
	$static --help >/dev/null 2>&1; want=$?
	"$run" --region $work/region -- $static --help >/dev/null 2>$work/err; rc=$?
	! grep -q "warning" $work/err || fail "static $static got a warning: $(cat $work/err)"
	[ $rc = $want ] || fail "static $static --help: exit $rc, want $want"
fi
"$run" --region $work/region -- true 2>$work/err
[ ! -s $work/err ] || fail "a dynamic program got a warning: $(cat $work/err)"
echo PASS
