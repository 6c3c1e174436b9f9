#!/usr/bin/env bash
# timeout: 240
#
# tochain-sched's libvirt backend against a real libvirtd and a small
# TCG domain (2 vCPUs, no disk: SeaBIOS idles, its vCPU threads exist).
# "tochain-sched --backend libvirt" registers a host stand-in VM thread
# (cgroup backend) and the domain by name (sched.register {"role": "vm",
# "domain": D}): the daemon finds the vCPU threads itself (QMP
# query-cpus-fast), and they are QEMU's "CPU n/TCG" threads.  Three VM
# vCPUs on two pCPUs: the plan gives the domain's vCPUs different pCPUs
# and quotas, and that is what libvirt shows (virsh vcpupin, virsh
# schedinfo: vcpu_period = the period, vcpu_quota = the larger quota),
# what the vCPU threads' affinity is, and what each vcpuN group holds
# (cpu.cfs_quota_us: the per-vCPU quota libvirt cannot express).  The
# domain destroyed: it waits, its threads are dropped; started again:
# new threads found and pinned again; undefined: dropped, and the daemon
# keeps running and answering; when it exits, the vCPUs are back on
# every CPU and uncapped.  First, with a URI nobody answers on,
# --backend libvirt refuses to start and auto runs without libvirt
# (domains refused with the reason, host threads accepted).  libvirtd is
# started here if none runs (and stopped again), a SKIP if it cannot.
set -euo pipefail
top=${TOCHAIN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top/tests/lib/hsd.sh"
hsd_setup it313
# shellcheck source=../guest/libvirt-domain.sh
. "$top/tests/guest/libvirt-domain.sh"

qemu=$(command -v "${VM_QEMU:-qemu-system-x86_64}" || true)
for c in libvirtd virsh virtlogd "$qemu"; do
	command -v "$c" >/dev/null 2>&1 || { echo "SKIP: $c not installed (host-sched/deps.txt)"; exit 77; }
done
dom=tochain-313-$$
hpid=
cleanup313() {
	set +e
	[ -n "$hpid" ] && kill "$hpid" 2>/dev/null
	lv_domain_destroy "$dom"
	hsd_cleanup
	lv_daemon_stop
}
tc_on_exit cleanup313
fail_logs() {
	echo "--- tochain-sched"; tail -20 "$tmp/daemon.log" 2>/dev/null
}
tc_on_fail fail_logs
show() { "$sched" --socket "$sock" --ctl sched.show; }
ctl() { "$sched" --socket "$sock" --ctl "$@"; }

echo "--- no libvirtd at the URI: --backend libvirt refuses to start, auto runs without"
down="qemu+unix:///system?socket=$tmp/nobody.sock"
if "$sched" --socket "$sock" --backend libvirt --libvirt-uri "$down" --cgroup "$cg" \
	--gating "$HSD_GATING" --sync-cpus 0-1 --duration 5 --print-every 0 >"$tmp/down.log" 2>&1; then
	fail "--backend libvirt started without libvirtd"
fi
grep -q "not reachable" "$tmp/down.log" || fail "no reason: $(cat "$tmp/down.log")"
sleep 300 &
hpid=$!
"$sched" --socket "$sock" --backend auto --libvirt-uri "$down" --cgroup "$cg" \
	--gating "$HSD_GATING" --sync-cpus 0-1 --duration 30 --print-every 0 >"$tmp/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "auto: no socket"
ctl sched.register '{"role":"vm","domain":"whatever"}' >"$tmp/err" 2>&1 && fail "a domain without libvirtd"
grep -q "not reachable" "$tmp/err" || fail "no reason: $(cat "$tmp/err")"
ctl sched.register "{\"role\":\"vm\",\"tid\":$hpid,\"vm\":\"host\"}" >/dev/null ||
	fail "auto without libvirtd: host thread refused"
show | jq -e '.threads | length == 1' >/dev/null || fail "auto without libvirtd: sched.show"
kill "$dpid"
wait "$dpid" || fail "tochain-sched (auto, no libvirtd) exited $?"
dpid=
kill "$hpid"
wait "$hpid" 2>/dev/null || true
hpid=

t0=$(date +%s)
if ! lv_daemon_start; then
	echo "SKIP: libvirtd does not start here"
	exit 77
fi
echo "libvirtd: $([ "$LV_STARTED" = 1 ] && echo started || echo already running) ($(( $(date +%s) - t0 )) s)"

cat >"$tmp/domain.xml" <<EOF
<domain type='qemu'>
  <name>$dom</name>
  <memory unit='MiB'>64</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <cpu mode='custom' match='exact'><model fallback='allow'>qemu64</model></cpu>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>$qemu</emulator>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
lv_virsh define "$tmp/domain.xml" >/dev/null || fail "virsh define"
lv_virsh start "$dom" >/dev/null || fail "virsh start"

# the host stand-in VM thread: a sleeping process
sleep 300 &
hpid=$!

"$sched" --socket "$sock" --backend libvirt --libvirt-uri "$LV_URI" --cgroup "$cg" \
	--gating "$HSD_GATING" --sync-cpus 0-1 --duration 150 --print-every 0 >"$tmp/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "no socket"
grep -q "backend cgroup-$HSD_BACKEND + libvirt $LV_URI" "$tmp/daemon.log" || fail "no libvirt backend in the banner"

echo "--- refused: no such domain, tid and domain together"
ctl sched.register "{\"role\":\"vm\",\"domain\":\"nosuch-$$\"}" >"$tmp/err" 2>&1 && fail "unknown domain accepted"
grep -q "nosuch-$$" "$tmp/err" || fail "no reason: $(cat "$tmp/err")"
ctl sched.register "{\"role\":\"vm\",\"domain\":\"$dom\",\"tid\":$hpid}" >/dev/null 2>&1 &&
	fail "tid and domain together accepted"

ctl sched.register "{\"role\":\"vm\",\"tid\":$hpid,\"vm\":\"host\"}" >/dev/null || fail "register host thread"
t1=$(date +%s%N)
ctl sched.register "{\"role\":\"vm\",\"domain\":\"$dom\"}" >"$tmp/reg.json" || fail "register domain: $(cat "$tmp/reg.json")"
echo "sched.register by domain (libvirt lookup + query-cpus-fast): $(( ($(date +%s%N) - t1) / 1000000 )) ms"
qpid=$(lv_qemu_pid "$dom")
tids=$(jq -r '.tids | join(" ")' "$tmp/reg.json")
echo "domain $dom: QEMU $qpid, vCPU threads $tids"
[ "$(echo "$tids" | wc -w)" = 2 ] || fail "expected 2 vCPU threads: $(cat "$tmp/reg.json")"
for t in $tids; do
	[ -d "/proc/$qpid/task/$t" ] || fail "thread $t is not QEMU's"
	[[ $(cat "/proc/$qpid/task/$t/comm") == "CPU "[0-9]*/* ]] || fail "thread $t is $(cat "/proc/$qpid/task/$t/comm")"
done

# The plan's pCPU and quota of each domain vCPU (registry vcpu -> ticks) must be
# what libvirt, the threads' affinity and the vcpuN groups say.
check_enforced() {
	local what=$1 i n tid idx pcpu ticks quota top period sched_q sched_p aff cgq cgp dir
	for _ in $(seq 20); do
		show >"$tmp/show.json"
		jq -e '.plan != null and ([.threads[] | select(.domain != null and .pcpu >= 0)] | length) == 2' \
			"$tmp/show.json" >/dev/null && break
		sleep 0.3
	done
	sleep 1.2	# two more periods: the last plan's writes are done
	show >"$tmp/show.json"
	period=$(jq '.tick_us * .period' "$tmp/show.json")
	n=$(jq '[.threads[] | select(.domain != null)] | length' "$tmp/show.json")
	[ "$n" = 2 ] || fail "$what: sched.show lists $n domain vCPUs"
	top=0
	declare -gA want_pcpu=() want_q=()
	for i in 0 1; do
		read -r tid idx pcpu < <(jq -r ".threads[] | select(.domain == \"$dom\" and .vcpu_index == $i) | \"\(.tid) \(.vcpu) \(.pcpu)\"" "$tmp/show.json")
		ticks=$(jq "[.plan.pcpus[].slots[] | select(.vcpu == $idx) | .ticks] | add // 0" "$tmp/show.json")
		quota=$(( ticks * $(jq .tick_us "$tmp/show.json") ))
		[ "$quota" -ge 1000 ] || quota=1000
		[ "$pcpu" -ge 0 ] || fail "$what: vcpu $i not placed"
		want_pcpu[$i]=$pcpu want_q[$i]=$quota
		[ "$quota" -gt "$top" ] && top=$quota
		echo "$what: vcpu $i thread $tid: plan pcpu $pcpu, $ticks ticks = quota $quota us / $period us"
		aff=$(lv_virsh vcpupin "$dom" --vcpu "$i" | awk -v v="$i" '$1 == v { print $2 }')
		[ "$aff" = "$pcpu" ] || fail "$what: virsh vcpupin vcpu $i: '$aff', plan says $pcpu"
		aff=$(taskset -cp "$tid" | sed 's/.*: //')
		[ "$aff" = "$pcpu" ] || fail "$what: thread $tid affinity $aff, plan says $pcpu"
		dir=$(hsd_cpu_dir "$tid")
		read -r cgq cgp < <(hsd_cpu_limit "$dir")
		echo "$what:   group $dir: quota $cgq us, period $cgp us"
		[ "$cgq" = "$quota" ] || fail "$what: vcpu $i group quota $cgq, plan says $quota"
		[ "$cgp" = "$period" ] || fail "$what: vcpu $i period $cgp, plan says $period"
	done
	sched_q=$(lv_virsh schedinfo "$dom" | awk '$1 == "vcpu_quota" { print $3 }')
	sched_p=$(lv_virsh schedinfo "$dom" | awk '$1 == "vcpu_period" { print $3 }')
	echo "$what: virsh schedinfo: vcpu_period $sched_p vcpu_quota $sched_q"
	[ "$sched_p" = "$period" ] || fail "$what: vcpu_period $sched_p, want $period"
	[ "$sched_q" = "$top" ] || fail "$what: vcpu_quota $sched_q, want the larger quota $top"
}

echo "--- the plan through libvirt"
check_enforced start
jq -r '.text' "$tmp/show.json" | grep '^pcpu'
jq -r '"daemon cpu with the domain: \(.cpu_us_mean|floor) us/period mean, \(.cpu_us_last) us last period"' "$tmp/show.json"
# three VM vCPUs on two pCPUs: the domain's two must differ, or the
# per-vCPU path was not exercised
[ "${want_pcpu[0]}" != "${want_pcpu[1]}" ] || fail "both domain vCPUs on one pCPU: no per-vCPU quota to show"
[ "${want_q[0]}" != "${want_q[1]}" ] || fail "equal quotas: the per-vCPU write was not exercised"
[ -d "$(hsd_group_dir)/t$hpid" ] || fail "the host thread is not in the cgroup backend's group"
for t in $tids; do
	[ -d "$(hsd_group_dir)/t$t" ] && fail "domain thread $t moved into our groups"
done
jq -e ".domains[0] | .domain == \"$dom\" and .state == \"running\" and .errors == 0" "$tmp/show.json" >/dev/null ||
	fail "sched.show domains: $(jq -c .domains "$tmp/show.json")"

echo "--- destroyed: the domain waits, its threads are dropped"
lv_virsh destroy "$dom" >/dev/null || fail "virsh destroy"
sleep 1.2
show >"$tmp/show.json"
jq -e ".domains[0].state == \"waiting\" and ([.threads[] | select(.domain != null)] | length) == 0" \
	"$tmp/show.json" >/dev/null || fail "after destroy: $(jq -c '{domains, threads}' "$tmp/show.json")"

echo "--- started again: new threads, pinned again"
lv_virsh start "$dom" >/dev/null || fail "virsh start again"
for _ in $(seq 30); do
	show >"$tmp/show.json"
	jq -e '.domains[0].state == "running"' "$tmp/show.json" >/dev/null && break
	sleep 0.3
done
tids2=$(jq -r '.domains[0].tids | join(" ")' "$tmp/show.json")
echo "new vCPU threads: $tids2 (restarts $(jq .domains[0].restarts "$tmp/show.json"))"
if [ "$(echo "$tids2" | wc -w)" != 2 ] || [ "$tids2" = "$tids" ]; then
	fail "threads not read again: '$tids2'"
fi
check_enforced restart

echo "--- undefined: dropped, the daemon goes on"
lv_domain_destroy "$dom"
sleep 1.2
kill -0 "$dpid" 2>/dev/null || fail "tochain-sched died"
show >"$tmp/show.json" || fail "sched.show after the domain went"
jq -e '(.domains | length) == 0 and ([.threads[] | select(.domain != null)] | length) == 0 and
	([.threads[] | select(.vm == "host")] | length) == 1' "$tmp/show.json" >/dev/null ||
	fail "after undefine: $(jq -c '{domains, threads}' "$tmp/show.json")"
grep -q "domain $dom is gone" "$tmp/daemon.log" || fail "no drop message"
# the name is free again, and a domain that does not run is refused
lv_virsh define "$tmp/domain.xml" >/dev/null || fail "define again"
ctl sched.register "{\"role\":\"vm\",\"domain\":\"$dom\"}" >"$tmp/err" 2>&1 && fail "a stopped domain was accepted"
grep -q "not running" "$tmp/err" || fail "reason: $(cat "$tmp/err")"

echo "--- the daemon exits: the domain's vCPUs are unpinned and uncapped"
lv_virsh start "$dom" >/dev/null || fail "start for the exit check"
ctl sched.register "{\"role\":\"vm\",\"domain\":\"$dom\"}" >"$tmp/reg.json" || fail "register: $(cat "$tmp/reg.json")"
tids=$(jq -r '.tids | join(" ")' "$tmp/reg.json")
check_enforced again
kill "$dpid"
wait "$dpid" || fail "tochain-sched exited $?"
dpid=
all="0-$(( $(nproc) - 1 ))"
for i in 0 1; do
	aff=$(lv_virsh vcpupin "$dom" --vcpu "$i" | awk -v v="$i" '$1 == v { print $2 }')
	[ "$aff" = "$all" ] || fail "after exit: vcpu $i pinned to '$aff'"
done
for t in $tids; do
	dir=$(hsd_cpu_dir "$t")
	[ "$(hsd_cpu_limit "$dir" | cut -d' ' -f1)" = -1 ] || fail "after exit: $dir still capped"
done
[ "$(lv_virsh schedinfo "$dom" | awk '$1 == "vcpu_quota" { print $3 }')" = -1 ] || fail "after exit: vcpu_quota"
echo "after exit: vCPUs on $all, uncapped"
[ -z "$(hsd_groups_left)" ] || fail "groups left behind: $(hsd_groups_left)"
if grep -E 'Sanitizer|runtime error' "$tmp/daemon.log"; then fail "sanitizer report"; fi
echo "PASS 313_hsd_libvirt ($(( $(date +%s) - t0 )) s)"
