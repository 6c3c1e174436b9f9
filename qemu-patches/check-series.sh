#!/usr/bin/env bash
# Checks that each patch of the series builds and passes QEMU's ivshmem
# qtest on its own, and QEMU's checkpatch.pl: for n = 1..N it resets the
# cached tree (build-qemu.sh must have run once) to Debian's state,
# applies patches 1..n, rebuilds incrementally and runs ivshmem-test -m
# slow.  Leaves the tree with the whole series applied.
#
#   qemu-patches/check-series.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${TOCHAIN_QEMU_CACHE:-/var/cache/tochain/qemu}
out=$("$here/build-qemu.sh")
srcver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86)
tree=$cache/src-${srcver//:/_}/tree
series=$(cd "$here" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-' | sort)
work=$(mktemp -d /tmp/qemu-check-series.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
ln -s "$out/share" "$work/share"     # the firmware, found from bin/../share/qemu

exec 9>"$cache/.lock"
flock 9
fail=0 n=0
for p in $series; do
	n=$((n + 1))
	if ! perl "$tree/scripts/checkpatch.pl" --no-tree -q "$here/$p" >"$work/cp.log" 2>&1; then
		echo "checkpatch: $p"; cat "$work/cp.log"; fail=1
	fi
	git -C "$tree" am --abort >/dev/null 2>&1 || true
	git -C "$tree" checkout -q -f --detach debian
	git -C "$tree" clean -qfd -e build
	for q in $(echo "$series" | head -n $n); do
		git -C "$tree" -c user.name=check -c user.email=check@localhost \
			am -q "$here/$q"
	done
	start=$(date +%s)
	if ! nice ninja -C "$tree/build" qemu-system-x86_64 tests/qtest/ivshmem-test \
		>"$work/ninja.log" 2>&1; then
		echo "FAIL 1..$n ($p): build"; tail -n 20 "$work/ninja.log"; fail=1; continue
	fi
	built=$(( $(date +%s) - start ))
	cp "$tree/build/qemu-system-x86_64" "$work/bin/"
	start=$(date +%s)
	if (cd "$work" && QTEST_QEMU_BINARY="$work/bin/qemu-system-x86_64" timeout 300 \
		"$tree/build/tests/qtest/ivshmem-test" --tap -m slow) >"$work/qtest.log" 2>&1 &&
		! grep -q '^not ok' "$work/qtest.log"; then
		echo "ok 1..$n ($p): built in ${built} s, $(grep -c '^ok' "$work/qtest.log") qtests passed in $(( $(date +%s) - start )) s"
	else
		echo "FAIL 1..$n ($p): ivshmem-test"; grep -v '^#' "$work/qtest.log" | tail -n 20; fail=1
	fi
done
exit $fail
