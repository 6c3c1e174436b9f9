#!/usr/bin/env bash
# scripts/deb-src.sh (make deps, the QEMU build and test 218 run it) on
# apt configurations of its own (TOCHAIN_APT_ETC, TOCHAIN_APT_UPDATE
# standing in for /etc/apt and apt-get update):
#   (a) Debian's stanzas mirrored as deb-src, another archive's not,
#       apt-get update run once; a second run changes nothing;
#   (b) deb-src entries already there (one-line or deb822): nothing added;
#   (c) nothing of Debian's to mirror: exit 1, no file left behind;
#   (d) apt-get update fails: exit 1 and the file is removed again, so
#       the next run tries anew.
set -euo pipefail
top=$TOCHAIN_TOP
. "$top/tests/lib/common.sh"
tc_need_root "the lock in /run/lock and the root check"
tmp=$(mktemp -d /tmp/tochain-061.XXXXXX)
tc_on_exit "rm -rf '$tmp'"
script=$top/scripts/deb-src.sh

# apt_etc DIR: an empty apt configuration
apt_etc() {
	mkdir -p "$1/sources.list.d"
	: >"$1/sources.list"
}
# run DIR [UPDATE]: deb-src.sh on DIR; its stderr in $tmp/err, status in $rc
run() {
	rc=0
	TOCHAIN_APT_ETC=$1 TOCHAIN_APT_UPDATE=${2:-"touch $tmp/updated"} \
		"$script" 2>"$tmp/err" || rc=$?
}

# (a)
a=$tmp/a
apt_etc "$a"
cat >"$a/sources.list.d/debian.sources" <<'SRC'
Types: deb
# a comment inside the stanza
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: https://vendor.example/apt
Suites: stable
Components: main
Signed-By: /usr/share/keyrings/vendor.gpg
SRC
cat >"$a/sources.list.d/other.sources" <<'SRC'
Types: deb
URIs: https://other.example/apt
Suites: stable
Components: main
SRC
run "$a"
[ $rc -eq 0 ] || { cat "$tmp/err"; fail "(a) exit $rc"; }
out=$a/sources.list.d/tochain-src.sources
[ -f "$out" ] || fail "(a) no $out"
[ -f "$tmp/updated" ] || fail "(a) apt-get update did not run"
[ "$(grep -c '^Types: deb-src$' "$out")" = 2 ] || { cat "$out"; fail "(a) not two deb-src stanzas"; }
grep -q '^Types: deb$' "$out" && fail "(a) a deb stanza copied as deb"
grep -q 'example' "$out" && { cat "$out"; fail "(a) another archive's stanza mirrored"; }
grep -q '^URIs: http://deb.debian.org/debian-security$' "$out" || fail "(a) the security stanza missing"
grep -q '^Suites: bookworm bookworm-updates$' "$out" || fail "(a) suites not kept"
ls "$a/sources.list.d" | grep -q '\.tmp$' && fail "(a) a .tmp file left"
cp "$out" "$tmp/first"
rm "$tmp/updated"
run "$a"
[ $rc -eq 0 ] || fail "(a) second run: exit $rc"
[ -f "$tmp/updated" ] && fail "(a) second run updated again"
cmp -s "$out" "$tmp/first" || fail "(a) second run changed $out"
echo "(a) Debian's two stanzas mirrored, the others not; a second run is a no-op"

# (b)
for form in oneline deb822; do
	b=$tmp/b-$form
	apt_etc "$b"
	cp "$a/sources.list.d/debian.sources" "$b/sources.list.d/"
	if [ $form = oneline ]; then
		echo "deb-src http://deb.debian.org/debian bookworm main" >>"$b/sources.list"
	else
		printf 'Types: deb deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n' \
			>"$b/sources.list.d/both.sources"
	fi
	run "$b"
	[ $rc -eq 0 ] || fail "(b) $form: exit $rc"
	[ -e "$b/sources.list.d/tochain-src.sources" ] && fail "(b) $form: entries added though some exist"
	[ -f "$tmp/updated" ] && fail "(b) $form: apt-get update ran"
done
echo "(b) existing deb-src entries (one-line, deb822): nothing added"

# (c)
c=$tmp/c
apt_etc "$c"
cp "$a/sources.list.d/other.sources" "$c/sources.list.d/"
run "$c"
[ $rc -eq 1 ] || fail "(c) exit $rc, not 1"
grep -q "no entries of Debian's archive" "$tmp/err" || { cat "$tmp/err"; fail "(c) no clear error"; }
[ -z "$(ls "$c/sources.list.d" | grep -v '^other.sources$')" ] || fail "(c) files left: $(ls "$c/sources.list.d")"
echo "(c) nothing of Debian's: exit 1, $(tail -n 1 "$tmp/err")"

# (d)
d=$tmp/d
apt_etc "$d"
cp "$a/sources.list.d/debian.sources" "$d/sources.list.d/"
run "$d" false
[ $rc -eq 1 ] || fail "(d) exit $rc, not 1"
grep -q "apt-get update failed" "$tmp/err" || { cat "$tmp/err"; fail "(d) no clear error"; }
[ -e "$d/sources.list.d/tochain-src.sources" ] && fail "(d) the file stayed after the failed update"
run "$d"
[ $rc -eq 0 ] && [ -f "$d/sources.list.d/tochain-src.sources" ] || fail "(d) the next run did not add it"
echo "(d) a failed apt-get update: exit 1, file removed; the next run adds it"
echo PASS
