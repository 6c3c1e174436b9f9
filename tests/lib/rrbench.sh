# Shell helpers of the benchmarks that drive bench/progs/toe_rrbench.c
# through a TOE (bench/20, 41, 60).  Sources tests/lib/netns.sh and
# toe.sh (whose helpers the benchmarks use too); needs $build.
#
#   rb_init BULK_MIB        reps (REPS, 3), rr_secs (RR_SECONDS, 1), mib
#                           (BULK_MIB, else the argument), bin (toe-rrbench);
#                           exits 0 with a SKIP line unless root
#   rb_guest NS REGION TEST ADDR ARGS...
#                           toe-rrbench TEST ADDR 5001 ARGS under tochain-run
#                           on REGION in NS (a stand-in guest); its output
#   rb_measure ADDR         REPS runs each of rr (1 KiB, rr_secs) and up
#                           (mib) from $GU on $region: medians in m_rr
#                           (trans/s) and m_up (MB/s)
#   rb_value                the figure of toe-rrbench's output on stdin
#   median                  the median of the numbers on stdin, one a line

# shellcheck source=netns.sh
. "$(dirname "${BASH_SOURCE[0]}")/netns.sh"
# shellcheck source=toe.sh
. "$(dirname "${BASH_SOURCE[0]}")/toe.sh"

rb_init() {
	reps=${REPS:-3}
	rr_secs=${RR_SECONDS:-1}
	mib=${BULK_MIB:-$1}
	bin=$build/bench/bin/toe-rrbench
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 0; }
}

rb_guest() {
	local ns=$1 reg=$2 t=$3 addr=$4
	shift 4
	ip netns exec "$ns" timeout 60 "$build/bin/tochain-run" --region "$reg" -- \
		"$bin" "$t" "$addr" 5001 "$@"
}

rb_value() {
	awk -F': ' '{print $2}' | awk '{print $1}'
}

rb_measure() {
	local i rr=() up=()
	for ((i = 0; i < reps; i++)); do
		rr+=("$(rb_guest "$GU" "$region" rr "$1" 1024 "$rr_secs" | rb_value)")
		up+=("$(rb_guest "$GU" "$region" up "$1" "$mib" | rb_value)")
	done
	m_rr=$(printf '%s\n' "${rr[@]}" | median)
	m_up=$(printf '%s\n' "${up[@]}" | median)
}

median() {
	sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}
