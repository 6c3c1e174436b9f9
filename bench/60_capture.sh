#!/usr/bin/env bash
# What capture costs the data path (host-toe/toe/README.md, "Capture of
# denials" and "Full capture"): request/response rate with 1 KiB messages
# and one bulk stream from the guest (bench/progs/toe_rrbench.c under
# tochain-run) through a 1-hop null chain in both directions, with capture
# off; denial capture on in both directions with 4 KiB and 32 KiB
# histories (every chunk is then copied into its connection's history;
# nothing is denied, so nothing is written); and full capture (--all, on
# the in direction, denial capture on the out one): every chunk also goes
# to the writer and to pcap files on /var/tmp, with the bytes captured and
# dropped (writer behind) printed.  Medians of REPS runs (default 3),
# ratios against capture off, all in one run.  Timings are not asserted.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/rrbench.sh"
rb_init 32

tt_setup b60 10.83.0
capdir=$(mktemp -d /var/tmp/tcb60.XXXXXX)
tc_on_exit "rm -rf $capdir"
ip netns exec "$CL" "$bin" server 5001 &
tc_on_exit "kill -9 $!"
tc_wait_port "$VM" 10.83.0.1 5001 10
tt_vnf h1
for d in in out; do ctl_ok chain.set "{\"dir\":\"$d\",\"name\":\"b60\",\"hops\":[[\"h1\"]]}" >/dev/null; done

printf '%-16s %12s %8s %12s %8s\n' capture "rr trans/s" ratio "up MB/s" ratio
base_rr= base_up=
for conf in off 4 32 all; do
	# off first: the history size is one per TOE
	for d in in out; do ctl_ok capture.set "{\"dir\":\"$d\",\"on\":false}" >/dev/null; done
	case $conf in
	off) ;;
	all)
		ctl_ok capture.set "{\"dir\":\"in\",\"on\":true,\"all\":true,\"path\":\"$capdir\",\"kib\":4}" >/dev/null
		ctl_ok capture.set "{\"dir\":\"out\",\"on\":true,\"path\":\"$capdir\",\"kib\":4}" >/dev/null
		;;
	*)
		for d in in out; do
			ctl_ok capture.set "{\"dir\":\"$d\",\"on\":true,\"path\":\"$capdir\",\"kib\":$conf}" >/dev/null
		done
		;;
	esac
	rb_measure 10.83.0.1
	[ -n "$base_rr" ] || { base_rr=$m_rr; base_up=$m_up; }
	case $conf in
	off) label=off ;;
	all) label="all (--all)" ;;
	*) label="denials, $conf KiB" ;;
	esac
	awk -v l="$label" -v r="$m_rr" -v u="$m_up" -v br="$base_rr" -v bu="$base_up" 'BEGIN {
		printf "%-16s %12.0f %8.2f %12.1f %8.2f\n", l, r, (br > 0) ? r / br : 0, u, (bu > 0) ? u / bu : 0 }'
done
ctl_ok capture.show | tt_json '"TOE capture counters: records %d written %d dropped %d nohist %d" % (j["records"], j["written"], j["dropped"], j["nohist"])'
ctl_ok capture.show | tt_json '"full capture (--all): %d MiB in %d chunks captured, %d files, %d chunks (%d MiB) dropped (writer behind), %d errors" % (j["all"]["bytes"] >> 20, j["all"]["chunks"], j["all"]["files"], j["all"]["dropped"], j["all"]["dropped_bytes"] >> 20, j["all"]["errors"])'
echo "(medians of $reps runs; 1-hop null chain both ways; ratio = vs capture off; $(nproc) CPUs shared with other work)"
