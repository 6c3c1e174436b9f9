#!/usr/bin/env bash
# Would MSG_ZEROCOPY take the TOE's copy off a response here?  The TOE
# copies each response from the region's slots into the socket buffer
# (docs/EVALUATION.md, "Where the TOE alone's 64 KiB CPU goes").  One
# stream of 64 KiB sends (bench/progs/zc_probe.c) from a namespace on the
# fabric bridge, as the TOE's, to a receiver in another, as wrk's,
# once copied and once with MSG_ZEROCOPY, alternated REPS times (3):
# CPU seconds per GiB of the sender, the receiver and the whole machine
# (/proc/stat), medians and zc / copy ratios, and how many completions
# the kernel flagged "copied" (it copies zerocopy pages for a receiver on
# the same host).
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/rrbench.sh"	# netns.sh, median
bin=$build/bench/bin/toe-zcprobe
reps=${REPS:-3}
mib=${BULK_MIB:-4096}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 0; }

tc_init
tc_fabric
tc_host RCV rcv 10.83.0.1/24
tc_host SND snd 10.83.0.2/24
work=$(mktemp -d /dev/shm/tcb22.XXXXXX)
tc_on_exit "rm -rf $work"

busy() {	# busy jiffies of all CPUs (user nice system irq softirq steal)
	awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}

# one MODE: "SENDER_S RECEIVER_S MACHINE_S COMPLETIONS COPIED" per GiB
one() {
	local mode=$1 b0 b1 snd rcv pid line
	mkfifo $work/rcv.fifo
	ip netns exec "$RCV" "$bin" recv 5002 >$work/rcv.fifo &
	pid=$!
	exec 4<$work/rcv.fifo
	rm -f $work/rcv.fifo
	read -r -t 10 line <&4 && [ "$line" = ready ] || { echo "receiver did not start" >&2; return 1; }
	b0=$(busy)
	snd=$(ip netns exec "$SND" timeout 120 "$bin" send 10.83.0.1 5002 "$mib" "$mode")
	read -r -t 30 rcv <&4 || { echo "receiver did not finish" >&2; return 1; }
	wait $pid
	exec 4<&-
	b1=$(busy)
	# send MIB SECONDS CPU SYS COMPLETIONS COPIED / recv MIB CPU SYS
	awk -v s="$snd" -v r="$rcv" -v jb=$((b1 - b0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(s, a, " "); split(r, b, " "); g = a[2] / 1024
		printf "%.3f %.3f %.3f %d %d\n", a[4] / g, b[3] / g, jb / hz / g, a[6], a[7] }'
}

for ((i = 0; i < reps; i++)); do
	for mode in copy zc; do
		one $mode >>$work/$mode.tsv
	done
done

printf '%-28s %10s %10s %8s\n' "CPU s per GiB (median)" copy zerocopy "zc/copy"
col=1
for what in sender receiver machine; do
	c=$(cut -d' ' -f$col $work/copy.tsv | median)
	z=$(cut -d' ' -f$col $work/zc.tsv | median)
	printf '%-28s %10s %10s %8s\n' "$what" "$c" "$z" "$(awk -v a="$c" -v b="$z" 'BEGIN{printf "%.2f", (a > 0) ? b / a : 0}')"
	col=$((col + 1))
done
awk '{n += $4; c += $5} END {printf "zerocopy completions the kernel copied: %d of %d\n", c, n}' $work/zc.tsv
echo "($reps runs of $mib MiB each way, alternated; 64 KiB sends; $(nproc) CPUs)"
