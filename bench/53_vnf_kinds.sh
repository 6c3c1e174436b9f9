#!/usr/bin/env bash
# Per-thread throughput of each tochain-vnf kind on the built-in realistic
# mix (vnfs/runtime/vnf_mix.h: GET/POST requests of 350 B - 3 KiB, 10% attacks of
# five families, one connection per request cut into 1448-byte
# descriptors), measured by `tochain-vnf --calibrate` (one service thread,
# no scheduler: the engine and its adapter only).  Rule sets: fw with 500
# generated rules before the matching one; ids with 1,000 generated content
# rules plus one per attack family; waf with the full OWASP CRS at paranoia
# 1 and 2.  Medians of VNF_BENCH_RUNS (default 5) runs of VNF_BENCH_SECONDS
# (default 1) each, side by side.  Asserts nothing.
set -euo pipefail
build=${TOCHAIN_BUILD:-build}
top=${TOCHAIN_TOP:-.}
vnf=$build/bin/tochain-vnf
[ -x "$vnf" ] || { echo "tochain-vnf not built ($vnf)" >&2; exit 1; }
secs=${VNF_BENCH_SECONDS:-1}
runs=${VNF_BENCH_RUNS:-5}
tmp=$(mktemp -d /tmp/vnf-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# fw: 500 rules that do not match the mix's traffic, then the one that does.
awk 'BEGIN {
	print "policy in drop"
	for (i = 0; i < 500; i++)
		printf "accept in tcp dport %d from 203.0.%d.0/24 comment \"r%d\"\n", 1000 + i, i % 256, i
	print "accept in tcp dport 80 comment \"web\""
}' >"$tmp/fw.rules"

# ids: 1,000 content rules of tokens absent from the mix (letters g-z), in
# the shapes real rule sets use, then the attack families.
awk 'function tok(n,   s, k) {
	s = ""
	for (k = 0; k < n; k++) { seed = (seed * 1103515245 + 12345) % 2147483648; s = s sprintf("%c", 103 + seed % 20) }
	return s
}
BEGIN {
	seed = 42
	for (i = 0; i < 1000; i++) {
		sid = 100000 + i; m = i % 5
		if (m == 0)
			printf "drop tcp any any -> any any (msg:\"uri %d\"; flow:to_server; content:\"/%s\"; http_uri; content:\"%s\"; http_uri; distance:0; sid:%d;)\n", i, tok(6), tok(4), sid
		else if (m == 1)
			printf "alert tcp any any -> any any (msg:\"hdr %d\"; flow:to_server; content:\"%s\"; http_header; nocase; sid:%d;)\n", i, tok(8), sid
		else if (m == 2)
			printf "drop tcp any any -> any any (msg:\"raw %d\"; flow:to_server; content:\"%s\"; content:\"%s\"; distance:0; within:64; sid:%d;)\n", i, tok(7), tok(5), sid
		else if (m == 3)
			printf "drop tcp any any -> any any (msg:\"body %d\"; flow:to_server; content:\"%s=\"; http_client_body; sid:%d;)\n", i, tok(6), sid
		else
			printf "alert tcp any any -> any any (msg:\"pcre %d\"; flow:to_server; content:\"%s\"; http_uri; pcre:\"/%s[0-9]+/U\"; sid:%d;)\n", i, tok(5), tok(3), sid
	}
}' >"$tmp/ids.rules"
cat "$top/tests/data/vnf/families.rules" >>"$tmp/ids.rules"

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

point() { # label args...
	local label=$1; shift
	: >"$tmp/rps"; : >"$tmp/pps"; : >"$tmp/mbps"
	for ((r = 0; r < runs; r++)); do
		# "K: N pps, M MB/s (R requests, D denied, in S s, one thread)"
		"$vnf" --calibrate --seconds "$secs" "$@" | awk -v d="$tmp" '{
			pps = $2; mbps = $4; sub(/^\(/, "", $6); req = $6; s = $(NF - 3)
			print req / s >> (d "/rps"); print pps >> (d "/pps"); print mbps >> (d "/mbps")
		}'
	done
	printf "%-34s %12.0f %12.0f %10.2f\n" "$label" "$(median <"$tmp/rps")" \
		"$(median <"$tmp/pps")" "$(median <"$tmp/mbps")"
}

echo "tochain-vnf --calibrate, one service thread, medians of $runs x $secs s"
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs)"
printf "%-34s %12s %12s %10s\n" "kind and rules" "requests/s" "desc/s" "MB/s"
point "null (no inspection)" --kind null
point "fw, 501 rules" --kind fw --rules "$tmp/fw.rules"
point "ids, 5 family rules" --kind ids --rules "$top/tests/data/vnf/families.rules"
point "ids, $(grep -c sid: "$tmp/ids.rules") rules" --kind ids --rules "$tmp/ids.rules"
point "waf, full CRS, paranoia 1" --kind waf
point "waf, full CRS, paranoia 2" --kind waf --paranoia 2
