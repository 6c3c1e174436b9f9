#!/usr/bin/env bash
# tochain-vnf --calibrate: each kind measured on the built-in HTTP mix
# prints sane JSON (pps > 0, MB/s > 0, about the seconds asked, MB/s
# consistent with pps and the mix's descriptor sizes), the text form, and
# bad options are refused with exit 2, a bad rule file with exit 1 and
# its file:line.
# timeout: 120
set -euo pipefail
top=${TOCHAIN_TOP:-.}
. "$top/tests/lib/common.sh"
vnf="$TOCHAIN_BUILD/bin/tochain-vnf"
td="$top/tests/data/vnf"
[ -r /usr/share/modsecurity-crs/rules/REQUEST-942-APPLICATION-ATTACK-SQLI.conf ] ||
	{ echo "SKIP: the OWASP CRS (modsecurity-crs) is not installed"; exit 77; }
dir=$(mktemp -d /tmp/tochain-vnf-cal.XXXXXX)
tc_on_exit 'rm -rf "$dir"'

check_json() {	# KIND JSON SECONDS
	python3 - "$@" <<'PY'
import json, sys
kind, text, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
j = json.loads(text)
assert set(j) == {"kind", "pps", "mbps", "seconds"}, j
assert j["kind"] == kind, j
assert j["pps"] > 0 and j["mbps"] > 0, j
assert secs * 0.95 <= j["seconds"] <= secs * 3 + 1, j
# Descriptors of the mix are 100..1448 bytes.
per = j["mbps"] * 1e6 / j["pps"]
assert 100 <= per <= 1448, (per, j)
print(f"{kind}: {j['pps']:.0f} pps, {j['mbps']:.2f} MB/s over {j['seconds']:.2f} s")
PY
}

# calibrate KIND SECONDS ARGS...: one JSON calibration that must exit 0
# and pass check_json (a failed run fails the test, it is not skipped).
calibrate() {
	local kind=$1 secs=$2 out rc=0
	shift 2
	out=$("$vnf" --kind "$kind" --calibrate --seconds "$secs" --json "$@" 2>"$dir/cal.err") || rc=$?
	[ "$rc" -eq 0 ] || fail "calibration of $kind $*: exit $rc: $(head -3 "$dir/cal.err")"
	check_json "$kind" "$out" "$secs" || fail "calibration of $kind $*: bad JSON: $out"
}
calibrate null 0.3
calibrate fw 0.3 --rules "$td/web.fw"
calibrate ids 0.5 --rules "$td/families.rules"
calibrate waf 1
calibrate waf 0.5 --paranoia 2
# The text form: one line.
out=$("$vnf" --kind ids --calibrate --rules "$td/families.rules" --seconds 0.2)
echo "$out"
[[ $(echo "$out" | wc -l) -eq 1 && $out == ids:*pps*MB/s* ]] || fail "text form: $out"
# Calibration is quiet: no alert lines of the mix's attacks.
"$vnf" --kind ids --calibrate --rules "$td/families.rules" --seconds 0.2 2>"$dir/err" >/dev/null
[ ! -s "$dir/err" ] || fail "calibration wrote to stderr: $(head -2 "$dir/err")"

expect() {	# STATUS ARGS...
	local want=$1 rc=0; shift
	"$vnf" "$@" >"$dir/out" 2>"$dir/err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "tochain-vnf $*: exit $rc, expected $want ($(head -1 "$dir/err"))"
}
expect 2 --kind ids --calibrate                       # ids needs --rules
expect 2 --kind fw --calibrate --seconds 1            # fw needs --rules
expect 2 --kind bogus --calibrate
expect 2 --calibrate
expect 2 --kind waf --calibrate --paranoia 7
expect 2 --kind waf --calibrate --paranoia 0
expect 2 --kind fw --calibrate --rules "$td/web.fw" --paranoia 2
expect 2 --kind null --calibrate --seconds 0
expect 2 --kind null --calibrate --seconds -1
expect 2 --kind null --calibrate --seconds abc
expect 2 --kind null --calibrate --region /dev/shm/x
expect 2 --kind null --calibrate --threads 2
expect 2 --kind null --region /dev/shm/x --json
expect 2 --kind null --calibrate --no-such-option
expect 2 --kind null --calibrate extra-arg
# A bad rule file: exit 1, file:line on stderr.
printf 'accept in tcp dport 80\naccept in tcp dport 99999\n' >"$dir/bad.fw"
expect 1 --kind fw --calibrate --rules "$dir/bad.fw"
grep -q "bad.fw:2:" "$dir/err" || fail "fw: no file:line in: $(cat "$dir/err")"
printf '# x\ndrop tcp any any -> any any (msg:"m"; content:"a"; threshold:type limit, track by_src, count 1, seconds 60; sid:1;)\n' >"$dir/bad.rules"
expect 1 --kind ids --calibrate --rules "$dir/bad.rules"
grep -q "bad.rules:2:" "$dir/err" || fail "ids: no file:line in: $(cat "$dir/err")"
expect 1 --kind ids --calibrate --rules "$dir/missing.rules"
echo "calibration ok"
