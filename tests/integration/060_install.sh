#!/usr/bin/env bash
# make install (dist/module.mk) into a DESTDIR with PREFIX=/usr: the tree
# holds every program, the preload library, units, /etc/default files,
# samples and man pages; the installed programs run (sfc-ctl --version
# without a daemon, tochaind's helpers found next to it, the sample rules
# load in tochain-vnf); man -l renders a page; every option a program's
# --help prints is in its man page.  With dpkg-deb, make deb into a temp
# dir lists the programs.  Installs the existing build as it is
# (DIST_NOBUILD=1): nothing is rebuilt.
set -euo pipefail
top=$TOCHAIN_TOP build=$TOCHAIN_BUILD
. "$top/tests/lib/common.sh"
tmp=$(mktemp -d /tmp/tochain-060.XXXXXX)
tc_on_exit "rm -rf '$tmp'"
root=$tmp/root

make -s -C "$top" install BUILD="$build" DIST_NOBUILD=1 DESTDIR="$root" PREFIX=/usr >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log" >&2; fail "make install"; }

# --- the tree -----------------------------------------------------------
progs=(usr/bin/sfc-ctl usr/bin/tochain-run usr/bin/tochain-sim usr/bin/tochain-region
	usr/sbin/tochaind usr/sbin/tochain-sched usr/sbin/tochain-vnf usr/sbin/tochain-ivshmem-server
	usr/lib/tochain/tochaind usr/lib/tochain/tochain-toe usr/lib/tochain/tochain-vnf
	usr/lib/tochain/tochain-fw-apply usr/lib/tochain/tochain-vmlink)
for p in "${progs[@]}"; do [ -x "$root/$p" ] || fail "$p missing or not executable"; done
files=(usr/lib/libtochain-preload.so
	lib/systemd/system/tochaind.service lib/systemd/system/tochain-sched.service
	etc/default/tochaind etc/default/tochain-sched
	usr/share/tochain/rules/fw/example.rules usr/share/tochain/rules/ids/local.rules usr/share/tochain/rules/ids/vars.conf
	usr/share/tochain/rules/waf/waf.conf.example usr/share/tochain/examples/web-chain.topo
	usr/share/man/man8/sfc-ctl.8 usr/share/man/man8/tochaind.8 usr/share/man/man8/tochain-sched.8
	usr/share/man/man8/tochain-vnf.8 usr/share/man/man1/tochain-run.1
	usr/share/man/man5/tochain-topology.5)
for f in "${files[@]}"; do [ -s "$root/$f" ] || fail "$f missing or empty"; done
grep -qx 'ExecStart=/usr/sbin/tochaind --foreground $TOCHAIND_OPTS' "$root/lib/systemd/system/tochaind.service" ||
	fail "tochaind.service: ExecStart"
grep -qx 'EnvironmentFile=-/etc/default/tochain-sched' "$root/lib/systemd/system/tochain-sched.service" ||
	fail "tochain-sched.service: EnvironmentFile"
echo "tree: ${#progs[@]} programs, ${#files[@]} other files in place"

# --- the installed programs run -------------------------------------------
v=$("$root/usr/bin/sfc-ctl" --version) || fail "sfc-ctl --version"
echo "installed sfc-ctl --version: $v"
rc=0
"$root/usr/bin/sfc-ctl" --socket "$tmp/none.sock" version 2>"$tmp/err" || rc=$?
[ $rc = 1 ] && grep -q "$tmp/none.sock" "$tmp/err" ||
	fail "sfc-ctl version without a daemon: exit $rc, $(cat "$tmp/err")"
# tochaind takes its helpers from the directory of its resolved binary
d=$(dirname "$(readlink -f "$root/usr/sbin/tochaind")")
[ "$d" = "$root/usr/lib/tochain" ] || fail "sbin/tochaind resolves to $d"
for h in tochain-toe tochain-vnf tochain-fw-apply tochain-vmlink; do
	[ -x "$d/$h" ] || fail "$h not next to tochaind"
done
# tochain-run preloads <its dir>/../lib/libtochain-preload.so
[ -f "$root/usr/bin/../lib/libtochain-preload.so" ] || fail "preload library not where tochain-run looks"
out=$(TOCHAIN_REGION=/dev/null "$root/usr/bin/tochain-run" -- true 2>&1) || true
case "$out" in *libtochain-preload.so*) fail "tochain-run: $out" ;; esac
# the sample rules load in the engines
vnf=$root/usr/sbin/tochain-vnf rules=$root/usr/share/tochain/rules
"$vnf" --kind fw --rules "$rules/fw/example.rules" --calibrate --seconds 0.05 >/dev/null ||
	fail "fw sample rules"
"$vnf" --kind ids --rules "$rules/ids/local.rules" --vars "$rules/ids/vars.conf" --calibrate --seconds 0.05 >/dev/null ||
	fail "ids sample rules"
if [ -d /usr/share/modsecurity-crs/rules ]; then
	"$vnf" --kind waf --rules "$rules/waf/waf.conf.example" --calibrate --seconds 0.05 >/dev/null ||
		fail "waf sample configuration"
fi
echo "installed programs run; tochaind's helpers and the preload library are where they are looked for"

# --- man pages --------------------------------------------------------------
page=$root/usr/share/man/man8/sfc-ctl.8
txt=$(MANPAGER=cat MANWIDTH=80 LC_ALL=C.UTF-8 man -l "$page" 2>"$tmp/manerr") ||
	fail "man -l $page: $(cat "$tmp/manerr")"
grep -q '^NAME' <<<"$txt" && grep -q 'apply -f TOPOLOGY' <<<"$txt" || fail "man -l sfc-ctl.8: unexpected text"
echo "man -l sfc-ctl.8: $(wc -l <<<"$txt") lines"
for m in "$root"/usr/share/man/man?/*.[158]; do
	w=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$m" 2>&1 >/dev/null) || fail "man -l $m"
	[ -z "$w" ] || fail "groff warnings in ${m##*/}: $w"
done

# Every option PROGRAM --help prints is in PROGRAM's page.
checked=0
for m in "$root"/usr/share/man/man?/*.[18]; do
	name=$(basename "$m"); name=${name%.*}
	prog=
	for dir in usr/bin usr/sbin usr/lib/tochain; do
		[ -x "$root/$dir/$name" ] && { prog=$root/$dir/$name; break; }
	done
	[ -n "$prog" ] || fail "man page ${m##*/} has no installed program"
	src=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$m")
	help=$("$prog" --help 2>&1 || true)
	opts=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u || true)
	[ -n "$opts" ] || fail "$name --help prints no option"
	for o in $opts; do
		grep -qE -- "(^|[^a-z0-9-])$o([^a-z0-9-]|\$)" <<<"$src" || fail "$name: $o (in --help) not in ${m##*/}"
	done
	checked=$((checked + 1))
	echo "  $name: $(wc -w <<<"$opts") options of --help in ${m##*/}"
done
for p in sfc-ctl tochaind tochain-sched tochain-run tochain-vnf; do
	ls "$root"/usr/share/man/man?/"$p".[18] >/dev/null 2>&1 || fail "no man page for $p"
done
echo "--help options in the man pages: $checked programs"

# --- make deb -----------------------------------------------------------------
if ! command -v dpkg-deb >/dev/null; then
	echo "no dpkg-deb here: make deb not tried"
	exit 0
fi
t0=$(date +%s)
make -s -C "$top" deb BUILD="$build" DIST_NOBUILD=1 DEB_QEMU=0 DEB_OUT="$tmp/deb" >"$tmp/deb.log" 2>&1 ||
	{ cat "$tmp/deb.log" >&2; fail "make deb"; }
deb=$(ls "$tmp"/deb/tochain_*.deb) || fail "no tochain .deb"
echo "make deb: ${deb##*/} in $(($(date +%s) - t0)) s"
dpkg-deb -c "$deb" >"$tmp/contents"
for p in "${progs[@]}" usr/lib/libtochain-preload.so lib/systemd/system/tochaind.service \
	usr/share/man/man8/sfc-ctl.8.gz; do
	grep -q " \./$p\( \|$\)" "$tmp/contents" || fail "$p not in ${deb##*/}"
done
dpkg-deb -f "$deb" Depends | grep -q 'libjansson' || fail "Depends lacks the shared libraries: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -I "$deb" conffiles | grep -qx /etc/default/tochaind || fail "conffiles"
echo "dpkg-deb -c: every program, the library, units and man pages; Depends: $(dpkg-deb -f "$deb" Depends)"
