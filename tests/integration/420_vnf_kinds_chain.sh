#!/usr/bin/env bash
# tochain-vnf --kind ids|waf|fw behind a real packet scheduler.
# vnf-drive (tests/progs/vnf_drive.c) runs ch_sched with tochain-vnf processes and
# feeds HTTP request streams (the built-in mix, vnfs/runtime/vnf_mix.h: ~10% attacks
# of five families) cut into descriptors and interleaved over 24 open
# connections, from a synthetic data region.  It checks every descriptor
# comes back once, each connection's in order, unchanged; each connection's
# verdict: attacks denied with the sid (ids) or a CRS rule (waf) of their family, clean
# requests allowed; each VNF saw every descriptor; nothing left in flight.
# Scenarios: ids (2 threads, flow dispatch), ids with a flow table whose
# entries (and conn ids) are reused, ids on both chains judging responses
# as server -> client streams, waf (2 threads), fw (port rules), a
# parallel hop ids || waf, and a SIGHUP reload mid-run (new rules take over
# for new connections, a broken file afterwards changes nothing).
# timeout: 240
set -euo pipefail
top=${TOCHAIN_TOP:-.}
. "$top/tests/lib/common.sh"
drive="$TOCHAIN_BUILD/tests/bin/vnf-drive"
vnf="$TOCHAIN_BUILD/bin/tochain-vnf"
td="$top/tests/data/vnf"
[ -r /usr/share/modsecurity-crs/rules/REQUEST-942-APPLICATION-ATTACK-SQLI.conf ] ||
	{ echo "SKIP: the OWASP CRS (modsecurity-crs) is not installed"; exit 77; }
dir=$(mktemp -d /dev/shm/tochain-vnf-test.XXXXXX)
errs="$dir.err"		# the VNFs' stderr, kept across scenarios
# vnf-drive stops its VNFs; they also die with it (--exit-with-parent).
tc_on_exit 'rm -rf "$dir" "$errs"'
run() {
	local sc=$1; shift
	rm -rf "${dir:?}"/*
	echo "== $sc $*"
	"$drive" "$sc" --vnf-bin "$vnf" --dir "$dir" "$@" 2>>"$errs" | tee "$dir/out"
	grep -q "^$sc: ok" "$dir/out"
}
run ids -n 2000 --threads 2 --ids-rules "$td/families.rules"
# The alert rule (sid 2100) of families.rules was logged, rate-limited.
grep -q "ids alert sid 2100: session cookie seen" "$errs"
# Conn ids reused by new connections in reused flow table entries (a new
# generation): each must be inspected as a stream of its own.
run flows -n 2000 --threads 2 --ids-rules "$td/families.rules"
# The same VNF on the in and out chains: responses (server -> client
# bytes) leaking /etc/passwd denied by a to_client rule.
run resp -n 2000 --threads 2 --ids-rules "$td/families.rules"
run waf -n 120 --threads 2
# The waf's denies of whole attack requests come with its HTTP answer
# (a 403 page and an incident id), checked and counted by the driver.
grep -Eq "; [1-9][0-9]* with an HTTP answer" "$dir/out" || { echo "FAIL: no waf deny carried an answer"; exit 1; }
run fw -n 1000 --fw-rules "$td/web.fw"
run par -n 120 --ids-rules "$td/families.rules"
run reload -n 3000 --threads 2 --ids-rules "$td/families-ab.rules" \
	--ids-rules2 "$td/families.rules"
grep -q "ids: rules reloaded (generation 2)" "$errs"
grep -q "reload refused, the old rules stay: .*live.rules:1: unsupported option 'threshold'" "$errs"
echo "all scenarios ok"
