#!/usr/bin/env bash
# make demo: what TOChain is for, end to end, on this machine (about two
# minutes).  One line per step:
#   1. tochain-sched and tochaind start (the demo's own cgroup, sockets,
#      state, fabric namespace);
#   2. VM web1 (its TOE container) and the chain fw -> (ids || waf),
#      applied with `sfc-ctl apply -f` from the shipped example
#      dist/examples/demo.topo, as `make install` puts it beside the
#      sample rules;
#   3. unmodified nginx in the stand-in VM web1 (a namespace with nothing
#      but loopback) under tochain-run;
#   4. a client outside the VM's network: clean requests are served, an
#      SQL injection, a path traversal and an IDS signature are denied
#      (the WAF answers a 403 page, the IDS resets the connection), each
#      with the VNF and rule that denied it (`sfc-ctl stats --json`);
#   5. an SLA on the chain (`sfc-ctl chain set-sla`) and the rate served
#      beside it under an open-loop load, in sync then in cfs mode
#      (`sfc-ctl sched mode`), with CPU-bound tenant processes beside;
#   6. `sfc-ctl stats`;
#   7. build/demo/demo.png: rate per second, the SLA, the denials.
# Exits non-zero when a step fails (a clean request not served, an attack
# not denied or denied by the wrong VNF).  Everything is removed at exit.
# DEMO_SECONDS (15): each load run; DEMO_SLA (200 packets/s); DEMO_RATE
# (1.2 x SLA requests/s offered); DEMO_TENANTS (3 CPU-bound processes).
# The steps are scripts/demo-steps.sh's, shared with `make demo VM=qemu`
# (scripts/demo-vm.sh: the VM is a libvirt domain).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
build=$(cd "${1:?usage: demo.sh BUILD_DIR}" && pwd)
. tests/lib/netns.sh
. tests/lib/tochaind.sh
. scripts/demo-steps.sh
tc_need_root "network namespaces and cgroups"
tc_need_cmds ip nginx python3 curl gnuplot
demo_init

demo_daemons

step "2. sfc-ctl apply -f demo.topo: VM web1 (its TOE container) and the chain fw -> (ids || waf)"
demo_apply

# --- 3. nginx in the stand-in VM ---
step "3. unmodified nginx (master + 2 workers) in VM web1 (loopback only) under tochain-run"
region=$(td_field vm web1 region)
tc_isolated vmns vm-web1
demo_page
mkdir -p "$work/tmp"
demo_nginx_conf "access_log off;"
ip netns exec "$vmns" "$bin/tochain-run" --region "$region" -- \
	nginx -c "$work/nginx.conf" -p "$work" >"$work/nginx.log" 2>&1 &
NGINX_RUN=$!
tc_on_exit "kill -9 $NGINX_RUN; pkill -9 -F $work/nginx.pid"
demo_client 20

# DEMO_REGISTER_VM=1: nginx's threads registered as the VM's (the
# scheduler then gates them too, as the evaluation harness does)
demo_register_vm() {
	local pid t
	for pid in $(pgrep -f "nginx -c $work/nginx.conf"); do
		for t in /proc/"$pid"/task/*; do
			"$bin/tochain-sched" --socket "$work/sched.sock" --ctl sched.register \
				"{\"role\":\"vm\",\"tid\":${t##*/},\"vm\":\"web1\"}" >/dev/null ||
				fail "cannot register nginx thread ${t##*/} with tochain-sched"
		done
	done
}
demo_mission
demo_done
