#!/usr/bin/env bash
# timeout: 60
#
# The command tochaind runs to put a VM's firewall rules into its TOE's
# network namespace (vnfs/fw/README.md): `ip netns exec NS tochain-fw-apply
# apply FILE`, `... list`, `... remove`, and the --netns form.  The table
# must appear in that namespace only, be replaced by a second apply, be
# left alone by a broken file (exit 1, file:line), and go with remove.
set -euo pipefail
build=${TOCHAIN_BUILD:-build}
. "${TOCHAIN_TOP:-.}/tests/lib/common.sh"

tc_need_root "network namespaces and nftables"
tc_need_cmds ip
fw=$(realpath "$build/bin/tochain-fw-apply")
[ -x "$fw" ] || fail "$fw not built"

ns=fw501n$$
tmp=$(mktemp -d /tmp/fw501.XXXXXX)
cleanup() {
	set +e
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
tc_on_exit cleanup

ip netns add "$ns" || { echo "SKIP: cannot create a network namespace"; exit 77; }
ip netns exec "$ns" nft list tables >/dev/null 2>&1 ||
	{ echo "SKIP: nftables not usable in a namespace here"; exit 77; }
cat >"$tmp/a.rules" <<'R'
policy in drop
accept in ct established,related
accept in tcp dport 80 comment "web"
R
cat >"$tmp/b.rules" <<'R'
policy in accept
drop in tcp dport 22 comment "no ssh"
R
printf 'accept in tcp dport 80\naccept in tcp dport 70000\n' >"$tmp/bad.rules"

ip netns exec "$ns" "$fw" apply "$tmp/a.rules"
ip netns exec "$ns" "$fw" list >"$tmp/list"
grep -q 'table inet tochain_fw' "$tmp/list" || fail "no table after apply: $(cat "$tmp/list")"
grep -q 'policy drop' "$tmp/list" && grep -q 'comment "web"' "$tmp/list" ||
	fail "rules a not in the table: $(cat "$tmp/list")"
# Only that namespace: ours has no such table.
if nft list table inet tochain_fw >/dev/null 2>&1; then
	fail "the table appeared in the caller's namespace"
fi
# Replaced by a second apply (the --netns form this time).
"$fw" --netns "$ns" apply "$tmp/b.rules"
ip netns exec "$ns" "$fw" list >"$tmp/list"
grep -q 'comment "no ssh"' "$tmp/list" && ! grep -q 'comment "web"' "$tmp/list" ||
	fail "rules b did not replace a: $(cat "$tmp/list")"
# A broken file: exit 1 with file:line, the table unchanged.
rc=0
ip netns exec "$ns" "$fw" apply "$tmp/bad.rules" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "broken file: exit $rc"
grep -q 'bad.rules:2:' "$tmp/err" || fail "no file:line: $(cat "$tmp/err")"
ip netns exec "$ns" "$fw" list | grep -q 'comment "no ssh"' || fail "broken file changed the table"
# Remove.
ip netns exec "$ns" "$fw" remove
if ip netns exec "$ns" nft list table inet tochain_fw >/dev/null 2>&1; then
	fail "table still there after remove"
fi
# Usage errors: exit 2.
rc=0
"$fw" apply >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "usage: exit $rc"
echo "tochain-fw-apply ok"
