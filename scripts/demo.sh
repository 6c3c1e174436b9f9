#!/usr/bin/env bash
# make demo: the main job, end to end, on this machine.
#
# tochaind builds the TOE container of a VM "web1" (its own network
# namespace with the VM's address on the fabric bridge, a cgroup, the
# region, the TOE); an unmodified web server runs in a stand-in VM (a
# namespace with nothing but loopback, so every byte it serves goes
# through the region and the TOE) under tochain-run; a client namespace on
# the fabric fetches a page and then loads nginx with wrk.  Prints
# requests/s and the CPU each part used.  Everything is removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: demo.sh BUILD_DIR}" && pwd)
. tests/lib/netns.sh
tc_init
bin=$build/bin
work=$(mktemp -d /tmp/tochain-demo.XXXXXX)
fab=tcdemo$TC_SUFFIX
export TOCHAIN_SOCKET=$work/ctl.sock
sfc() { "$bin/sfc-ctl" "$@"; }
cleanup() {
	sfc vm del web1 >/dev/null 2>&1 || true
	pkill -f "tochaind --state-dir $work/state" || true
	ip netns del "$fab" 2>/dev/null || true
	rm -rf "$work"
}
tc_on_exit cleanup
secs=${DEMO_SECONDS:-10}

echo "== tochaind and the TOE container of VM web1 (10.70.0.2)"
"$bin/tochaind" --state-dir "$work/state" --socket "$TOCHAIN_SOCKET" \
	--fabric-ns "$fab" --region-dir "$work/regions"
sfc vm add web1 --ip 10.70.0.2/24 >/dev/null
sfc vm ls
region=$(sfc --json vm show web1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["region"])')
toe_cg=$(sfc --json vm show web1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["cgroup"])')

echo
echo "== nginx (master + 2 workers) in the stand-in VM (loopback only), under tochain-run"
tc_isolated vmns vm-web1
mkdir -p "$work/www" "$work/tmp"
chmod 755 "$work"
head -c 1024 /dev/urandom | base64 -w 76 | head -c 1024 >"$work/www/index.html"
cat >"$work/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 2;
error_log $work/error.log notice;
pid $work/nginx.pid;
events { worker_connections 512; }
http {
	access_log off;
	sendfile on;
	client_body_temp_path $work/tmp;
	proxy_temp_path $work/tmp;
	fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp;
	scgi_temp_path $work/tmp;
	server { listen 8080; root $work/www; }
}
CONF
ip netns exec "$vmns" "$bin/tochain-run" --region "$region" -- \
	nginx -c "$work/nginx.conf" -p "$work" >"$work/server.log" 2>&1 &
tc_on_exit "kill -9 $!; pkill -9 -F $work/nginx.pid"
TC_FABRIC=$fab TC_BRIDGE=tcbr0 tc_host cli client 10.70.0.100/24
tc_wait_port "$cli" 10.70.0.2 8080 20

echo
echo "== a client on the fabric bridge fetches the page through the TOE"
ip netns exec "$cli" curl -sS -o "$work/got" -w 'HTTP %{http_code}, %{size_download} bytes in %{time_total}s\n' \
	http://10.70.0.2:8080/index.html
cmp -s "$work/got" "$work/www/index.html" && echo "content matches the server's file"

echo
echo "== wrk: 32 connections for ${secs}s"
cpu_ns() { cat "/sys/fs/cgroup/cpuacct/$toe_cg/cpuacct.usage" 2>/dev/null ||
	awk '/usage_usec/ {print $2 * 1000}' "/sys/fs/cgroup/$toe_cg/cpu.stat" 2>/dev/null || echo 0; }
# CPU ticks of every process in the stand-in VM's namespace.
vm_ticks() { local t=0 p; for p in $(ip netns pids "$vmns"); do
	t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo $t; }
toe0=$(cpu_ns)
srv0=$(vm_ticks)
ip netns exec "$cli" wrk -t 2 -c 32 -d "${secs}s" --latency http://10.70.0.2:8080/index.html | tee "$work/wrk.txt"
toe1=$(cpu_ns)
srv1=$(vm_ticks)
hz=$(getconf CLK_TCK)
rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
awk -v t0="$toe0" -v t1="$toe1" -v s0="$srv0" -v s1="$srv1" -v hz="$hz" -v secs="$secs" -v rps="$rps" 'BEGIN {
	toe = (t1 - t0) / 1e9; srv = (s1 - s0) / hz;
	printf "\nrequests/s %s; CPU over the run: TOE %.2f s (%.0f%% of a core), web server %.2f s (%.0f%% of a core)\n",
		rps, toe, 100 * toe / secs, srv, 100 * srv / secs;
	if (rps > 0) printf "CPU per request: TOE %.1f us, web server %.1f us\n", toe / (rps * secs) * 1e6, srv / (rps * secs) * 1e6;
}'
echo
"$bin/tochain-region" info "$region"
