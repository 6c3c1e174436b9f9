# shellcheck shell=bash
# Evaluation harness library (issue 9; docs/EVALUATION.md).  Source it
# from bash after setting EV_TOP (source tree) and EV_BUILD (build dir).
#
# Every configuration under test is one function pair
#
#   ev_cfg_NAME_up IDX      build it; IDX (0..15) numbers its address plan
#   (teardown is common: ev_cleanup kills what ran in the configuration's
#    cgroups and removes its namespaces, also on failure)
#
# THE CONTRACT an _up function fulfils (the one TOChain-SYNC and
# TOChain-CFS will follow; see ev_cfg_tochain_sync_up below):
#   1. The client namespace $EV_CLIENT_NS exists; connect to it (e.g. a veth
#      made with ev_link) so that the protected web server is reachable
#      from there at ${EV_ADDR[NAME]}:${EV_PORT[NAME]}, serving
#      /1k/<anything> (1 KiB text/html) and /64k/<anything> (64 KiB);
#      ev_server_up starts that server (nginx) for you.
#   2. Start every process that does work for the configuration with
#      ev_spawn NAME ROLE NS LOG CMD...  (or move an existing pid with
#      ev_cg_attach NAME ROLE PID), so its CPU time is accounted to ROLE:
#        client   (the harness itself puts wrk there)
#        server   the web server
#        toe      TCP offload engines / the host stack service (TOChain)
#        chain:*  the chain: chain:fw, chain:ids, chain:waf, chain:tochaind,
#                 chain:sched ...; the table sums them as "chain"
#      and list the roles in EV_ROLES[NAME] (client first).
#   3. Set EV_EXPECT[NAME] to what the chain does to each probe, "clean=200
#      clean64k=200 sqli=403 xss=403 traversal=reset rce=reset leak=reset"
#      for a full chain (leak: a response carrying a password file, reset
#      by the IDS's to_client rule), all 200 without inspection; ev_probe
#      checks it.
#   4. Wait until the service answers (ev_wait_http) before returning 0.
#   Return non-zero (with a message on stderr) if it cannot be built.
#
# Kernel work in softirq context (veth transmit/receive, netfilter, TCP
# input) is charged to whichever task was running when it ran (this kernel
# has no IRQ time accounting): mostly the process that sent the packet,
# sometimes ksoftirqd (root cgroup, sampled apart as "ksoftirqd").

EV_ADDR_NET=10.90		# 10.90.(16*IDX + link).0/24 per configuration
EV_SUFFIX=${EV_SUFFIX:-$$}
EV_NGINX_WORKERS=${EV_NGINX_WORKERS:-2}
# The web server's tcp_nopush (TCP_CORK around sendfile), the same for
# every configuration.  Until the TOE ordered TCP_CORK/TCP_NODELAY after
# the bytes sent before them (host-toe/toe/README.md, test 110), nginx's
# cork/sendfile sequence stalled each small keep-alive response about
# 40 ms under the guest runtime (docs/EVALUATION.md); EV_NGINX_NOPUSH=off
# is kept to compare.
EV_NGINX_NOPUSH=${EV_NGINX_NOPUSH:-on}
EV_IDS_WORKERS=${EV_IDS_WORKERS:-2}
EV_MODSEC_SO=${EV_MODSEC_SO:-/usr/lib/nginx/modules/ngx_http_modsecurity_module.so}
declare -gA EV_ADDR EV_PORT EV_ROLES EV_EXPECT EV_DESC
EV_CONFIGS_UP=()

ev_die() { echo "ev: $*" >&2; exit 1; }
ev_log() { echo "ev: $*" >&2; }

# --- cgroups per role (v1 cpuacct, or the v2 unified tree): grouping and cleanup ---

# ev_cg_detect: EV_CG_KIND (v1|v2) and EV_CG_ROOT (our group's path).
# EV_CG=v1|v2 forces one (v2 works on a hybrid host's unified mount:
# cpu.stat usage_usec needs no controller).
ev_cg_detect() {
	local want=${EV_CG:-auto} v2mnt
	v2mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if [ "$want" != v2 ] && [ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then
		EV_CG_KIND=v1
		EV_CG_ROOT=/sys/fs/cgroup/cpuacct/ev-$EV_SUFFIX
	elif [ "$want" != v1 ] && [ -n "$v2mnt" ] && [ -f "$v2mnt/cgroup.procs" ]; then
		EV_CG_KIND=v2
		EV_CG_ROOT=$v2mnt/ev-$EV_SUFFIX
	else
		ev_die "no cgroup CPU accounting found (cpuacct v1 or cgroup2 mount)"
	fi
	mkdir -p "$EV_CG_ROOT" || ev_die "cannot create $EV_CG_ROOT"
}

ev_cg_path() { echo "$EV_CG_ROOT/$1/${2//:/-}"; }

ev_cg_make() { # CFG ROLE
	mkdir -p "$(ev_cg_path "$1" "$2")"
}

ev_cg_attach() { # CFG ROLE PID
	local d
	d=$(ev_cg_path "$1" "$2")
	mkdir -p "$d" && echo "$3" >"$d/cgroup.procs"
	EV_ROLE_PIDS["$1 $2"]+=" $3"
}

# --- CPU time and context switches per role, from /proc (ev_proc.py) ---
#
# The cgroups above group and clean up what a configuration runs; the CPU
# it uses is counted per process, because tochain-sched moves the VNFs'
# and the VM's threads into cgroups of its own.  EV_ROLE_PIDS["CFG ROLE"]
# lists the pids ev_spawn and ev_cg_attach saw; their descendants count
# for the same role.
declare -gA EV_ROLE_PIDS

# ev_proc_roles CFG FILE: the roles file of ev_proc.py (every role of CFG
# but the client, whose wrk lives only for one run: ev_proc.py run).
ev_proc_roles() {
	local role
	for role in ${EV_ROLES[$1]}; do
		[ "$role" = client ] && continue
		echo "$role ${EV_ROLE_PIDS["$1 $role"]:-}"
	done >"$2"
}

# CPU time of the ksoftirqd threads (root cgroup: nobody's role), ns.
ev_ksoftirqd_ns() {
	local hz pid sum=0 f
	hz=$(getconf CLK_TCK)
	for pid in $(pgrep -x 'ksoftirqd/[0-9]+' 2>/dev/null); do
		f=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || continue
		sum=$((sum + f))
	done
	echo $((sum * 1000000000 / hz))
}

# --- processes ---

# ev_spawn CFG ROLE NS LOG CMD...: runs CMD in namespace NS (or the host's
# if NS is "-") in the background, inside ROLE's cgroup from its first
# instruction; its pid goes into EV_LAST_PID.
ev_spawn() {
	local cfg=$1 role=$2 ns=$3 log=$4 d
	shift 4
	ev_cg_make "$cfg" "$role"
	d=$(ev_cg_path "$cfg" "$role")
	if [ "$ns" = - ]; then
		bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$d" "$@" >"$log" 2>&1 &
	else
		bash -c 'echo $$ >"$0/cgroup.procs" && exec ip netns exec "$1" "${@:2}"' \
			"$d" "$ns" "$@" >"$log" 2>&1 &
	fi
	EV_LAST_PID=$!
	EV_ROLE_PIDS["$cfg $role"]+=" $EV_LAST_PID"
}

# Kills every task of our cgroups (they are all ours), then removes them.
ev_cg_cleanup() {
	[ -n "${EV_CG_ROOT:-}" ] && [ -d "$EV_CG_ROOT" ] || return 0
	local i pids
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		pids=$(find "$EV_CG_ROOT" -name cgroup.procs -exec cat {} + 2>/dev/null)
		[ -z "$pids" ] && break
		if [ "$i" -lt 10 ]; then kill -TERM $pids 2>/dev/null; else kill -KILL $pids 2>/dev/null; fi
		sleep 0.2
	done
	find "$EV_CG_ROOT" -depth -type d -exec rmdir {} \; 2>/dev/null
	true
}

# EV_LOG_DIR: where the hosts' logs are copied at exit (after the
# processes stopped, so the IDS proxy's final counters are in).
ev_cleanup() {
	local n
	for n in "${!EV_TD_SOCK[@]}"; do ev_tochain_down "$n"; done
	ev_cg_cleanup
	if [ -n "${EV_LOG_DIR:-}" ] && [ -n "${EV_TMP:-}" ] && [ -d "$EV_TMP" ]; then
		mkdir -p "$EV_LOG_DIR"
		local f n
		for f in "$EV_TMP"/*/ids/proxy.log "$EV_TMP"/*/waf/logs/error.log \
			"$EV_TMP"/*/server/logs/error.log "$EV_TMP"/*/fw.nft; do
			[ -f "$f" ] || continue
			n=${f#"$EV_TMP"/}
			cp "$f" "$EV_LOG_DIR/${n//\//-}"
		done
	fi
	[ -n "${EV_TMP:-}" ] && [ -z "${EV_KEEP_TMP:-}" ] && rm -rf "$EV_TMP"
	true
}

# ev_init: namespaces helpers, cleanup trap, work dir, cgroups, client ns.
ev_init() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, cgroups)"; exit 77; }
	# shellcheck source=../tests/lib/netns.sh
	. "$EV_TOP/tests/lib/netns.sh"
	TC_SUFFIX=$EV_SUFFIX
	tc_init
	tc_on_exit ev_cleanup
	# tmpfs, as tochaind's default --region-dir: the regions (the VMs'
	# payloads) never reach a disk (docs/EVALUATION.md, "The TOE alone at
	# 64 KiB: a wide spread between runs", for an A/B against ext4)
	EV_TMP=$(mktemp -d "${EV_TMPDIR:-/dev/shm}/ev-eval.XXXXXX")
	chmod 755 "$EV_TMP"	# nginx workers run as nobody
	ev_cg_detect
	tc_isolated EV_CLIENT_NS evclient
	ev_ns_tune "$EV_CLIENT_NS"
}

# Settings of a host that opens many connections.
ev_ns_tune() { # NS
	ip netns exec "$1" sysctl -qw net.ipv4.ip_local_port_range="10000 65000" \
		net.ipv4.tcp_tw_reuse=1 net.core.somaxconn=4096 >/dev/null
}

# ev_ns VAR NAME: an isolated namespace (removed at exit).
ev_ns() {
	tc_isolated "$1" "$2"
	ev_ns_tune "${!1}"
}

# ev_link NS1 IF1 ADDR1/LEN NS2 IF2 ADDR2/LEN: a veth between two namespaces.
ev_link() {
	# names are checked in the target namespaces (eth0 in both is fine)
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" ||
		ev_die "veth between $1 and $4"
	ip -n "$1" addr add "$3" dev "$2"
	ip -n "$4" addr add "$6" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}

# ev_wait_http NS URL [SECONDS]: until URL answers (any HTTP status).
ev_wait_http() {
	local ns=$1 url=$2 secs=${3:-15} i
	for ((i = 0; i < secs * 10; i++)); do
		if ip netns exec "$ns" curl -s -o /dev/null -m 1 "$url" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	ev_log "$url did not answer from $ns within ${secs}s"
	return 1
}

# --- the web server (nginx, static files) ---

# ev_server_up CFG NS ADDR PORT: nginx serving /1k/* and /64k/* in NS.
# EV_NGINX_ACCESS=1: it logs each request's completion time (epoch
# seconds, ms resolution) to $EV_TMP/CFG/server/logs/access.log, so that
# what the receiver got can be counted in a time window.
ev_server_up() {
	local cfg=$1 ns=$2 addr=$3 port=$4 dir=$EV_TMP/$1/server access="access_log off;"
	[ "${EV_NGINX_ACCESS:-0}" = 1 ] && access="log_format ev '\$msec'; access_log $dir/logs/access.log ev;"
	mkdir -p "$dir/www" "$dir/logs"
	head -c 1024 /dev/zero | tr '\0' 'a' >"$dir/www/1k.html"
	head -c 65536 /dev/zero | tr '\0' 'b' >"$dir/www/64k.html"
	# a page that leaks a password file (the IDS's response rule 9100051)
	{ echo "<html><body><pre>"; echo "root:x:0:0:root:/root:/bin/bash"; echo "</pre></body></html>"; } \
		>"$dir/www/leak.html"
	chmod -R a+rX "$EV_TMP/$1"
	cat >"$dir/nginx.conf" <<EOF
worker_processes $EV_NGINX_WORKERS;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
	$access
	default_type text/html;
	sendfile on;
	tcp_nopush $EV_NGINX_NOPUSH;
	keepalive_requests 1000000;
	keepalive_timeout 65;
	server {
		listen $addr:$port reuseport backlog=4096;
		root $dir/www;
		location /1k/ { try_files /1k.html =404; }
		location /64k/ { try_files /64k.html =404; }
		location /leak/ { try_files /leak.html =404; }
		location = / { return 204; }
	}
}
EOF
	ev_spawn "$cfg" server "$ns" "$dir/logs/stderr.log" "${EV_SERVER_WRAP[@]}" nginx -p "$dir" -c "$dir/nginx.conf"
}

# --- the firewall host: vnfs/fw rules on the forward hook ---

# ev_fw_forward_nft RULES IF_CLIENT IF_SERVER: nftables text applying a
# vnfs/fw rule file to forwarded traffic.  fw-apply renders the file into
# chains input ("in") and output ("out") of table inet tochain_fw; here
# they become regular chains fw_in/fw_out (their policy turned into a last
# rule) and a forward base chain jumps to fw_in for packets from the
# client side and to fw_out for packets from the server side.
ev_fw_forward_nft() {
	local rules=$1 ifc=$2 ifs=$3 fwapply=$EV_BUILD/tests/bin/fw-apply
	[ -x "$fwapply" ] || ev_die "$fwapply not built"
	"$fwapply" render "$rules" | awk -v ifc="$ifc" -v ifs="$ifs" '
		/^table inet tochain_fw$/ || /^delete table/ { next }
		/^table inet tochain_fw \{/ { print "table inet ev_fw {"; next }
		/^\tchain input \{/ { print "\tchain fw_in {"; chain = 1; next }
		/^\tchain output \{/ { print "\tchain fw_out {"; chain = 1; next }
		chain && /type filter hook/ {
			match($0, /policy [a-z]+/); pol = substr($0, RSTART + 7, RLENGTH - 7); next
		}
		chain && /^\t\}/ { print "\t\t" pol; print; chain = 0; next }
		/^\}/ {
			print "\tchain forward {"
			print "\t\ttype filter hook forward priority filter; policy drop;"
			print "\t\tiifname \"" ifc "\" jump fw_in"
			print "\t\tiifname \"" ifs "\" jump fw_out"
			print "\t}"
			print; next
		}
		{ print }'
}

# --- the WAF host: nginx + ModSecurity v3 + CRS configured from waf.conf ---

# Bytes from a vnfs/waf size ("64K", "1M", "4096").
ev_size() {
	case $1 in
	*[kK]) echo $((${1%?} * 1024)) ;;
	*[mM]) echo $((${1%?} * 1024 * 1024)) ;;
	*) echo $(($1)) ;;
	esac
}

# ev_waf_modsec_conf WAF_CONF OUT: the ModSecurity rules file nginx loads,
# built as vnfs/waf's engine builds its rule set (waf_engine.c): the
# templates vnfs/waf/conf/waf-base.conf and crs-setup.conf with the same
# values, pre_rules, the CRS rules in name order, then rules.
ev_waf_modsec_conf() {
	local conf=$1 out=$2 confdir key val
	local crs=/usr/share/modsecurity-crs pl=1 resp=Off reqlim=1M resplim=512K inth=5 outth=4
	local pre=() post=()
	confdir=$(cd "$(dirname "$conf")" && pwd)
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		[[ $line =~ ^[[:space:]]*$ ]] && continue
		[[ $line =~ ^[[:space:]]*([a-z_]+)[[:space:]]*=[[:space:]]*(.*[^[:space:]])[[:space:]]*$ ]] ||
			ev_die "$conf: bad line: $line"
		key=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
		case $val in /*|none) ;; *) [[ $key =~ rules|crs_dir ]] && val=$confdir/$val ;; esac
		case $key in
		crs_dir) crs=$val; [ "$val" = none ] && crs= ;;
		paranoia_level) pl=$val ;;
		inspect_response) case $val in yes|on|true|1) resp=On ;; *) resp=Off ;; esac ;;
		request_body_limit) reqlim=$val ;;
		response_body_limit) resplim=$val ;;
		inbound_threshold) inth=$val ;;
		outbound_threshold) outth=$val ;;
		max_header_bytes) EV_WAF_MAX_HEADER=$(ev_size "$val") ;;
		pre_rules) pre+=("$val") ;;
		rules) post+=("$val") ;;
		*) ev_die "$conf: unknown key $key" ;;
		esac
	done <"$conf"
	EV_WAF_BODY_LIMIT=$(ev_size "$reqlim")
	local sub=(-e "s|@PARANOIA_LEVEL@|$pl|g" -e "s|@INBOUND_THRESHOLD@|$inth|g"
		-e "s|@OUTBOUND_THRESHOLD@|$outth|g" -e "s|@REQUEST_BODY_LIMIT@|$EV_WAF_BODY_LIMIT|g"
		-e "s|@RESPONSE_BODY_LIMIT@|$(ev_size "$resplim")|g" -e "s|@RESPONSE_BODY_ACCESS@|$resp|g")
	{
		echo "# Generated by eval/ev_lib.sh from $conf"
		sed "${sub[@]}" "$EV_TOP/vnfs/waf/conf/waf-base.conf"
		if [ -n "$crs" ]; then sed "${sub[@]}" "$EV_TOP/vnfs/waf/conf/crs-setup.conf"; fi
		for f in "${pre[@]}"; do echo "Include $f"; done
		if [ -n "$crs" ]; then
			for f in "$crs"/rules/*.conf; do echo "Include $f"; done
		fi
		for f in "${post[@]}"; do echo "Include $f"; done
	} >"$out"
	EV_WAF_DESC="CRS $(ev_crs_version "$crs") PL$pl, thresholds $inth/$outth, request body limit $reqlim, response bodies $([ $resp = On ] && echo "inspected (first $resplim)" || echo "not inspected")"
}

ev_crs_version() {
	[ -n "$1" ] || { echo none; return; }
	dpkg-query -W -f '${Version}' modsecurity-crs 2>/dev/null | sed 's/-.*//' || echo "?"
}

# ev_waf_up CFG NS LISTEN_ADDR PORT UPSTREAM_ADDR:PORT INSPECT
ev_waf_up() {
	local cfg=$1 ns=$2 addr=$3 port=$4 up=$5 inspect=$6 dir=$EV_TMP/$1/waf
	local modload='' modsec='' hdr=64k body=1m
	mkdir -p "$dir/logs"
	if [ "$inspect" = 1 ]; then
		[ -f "$EV_MODSEC_SO" ] || ev_die "$EV_MODSEC_SO missing (libnginx-mod-http-modsecurity)"
		ev_waf_modsec_conf "$EV_TOP/eval/rules/waf.conf" "$dir/modsec.conf"
		modload="load_module $EV_MODSEC_SO;"
		modsec="modsecurity on; modsecurity_rules_file $dir/modsec.conf;"
		hdr=$((EV_WAF_MAX_HEADER / 1024))k
		body=$((EV_WAF_BODY_LIMIT / 1024))k
	fi
	chmod -R a+rX "$dir"
	cat >"$dir/nginx.conf" <<EOF
$modload
worker_processes $EV_NGINX_WORKERS;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_max_body_size $body;
	large_client_header_buffers 4 $hdr;
	upstream backend { server $up; keepalive 128; }
	server {
		listen $addr:$port reuseport backlog=4096;
		$modsec
		location / {
			proxy_pass http://backend;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host \$host;
		}
	}
}
EOF
	ev_spawn "$cfg" chain:waf "$ns" "$dir/logs/stderr.log" nginx -p "$dir" -c "$dir/nginx.conf"
}

# ev_ids_up CFG NS LISTEN_ADDR:PORT UPSTREAM_ADDR:PORT INSPECT
ev_ids_up() {
	local cfg=$1 ns=$2 listen=$3 up=$4 inspect=$5 dir=$EV_TMP/$1/ids
	local bin=$EV_BUILD/bench/bin/ev-ids-proxy rules=()
	[ -x "$bin" ] || ev_die "$bin not built"
	mkdir -p "$dir"
	[ "$inspect" = 1 ] && rules=(-r "$EV_TOP/eval/rules/ids.rules" -V "$EV_TOP/eval/rules/ids-vars.conf")
	ev_spawn "$cfg" chain:ids "$ns" "$dir/proxy.log" "$bin" -l "$listen" -u "$up" \
		-w "$EV_IDS_WORKERS" -p "$dir/ready" "${rules[@]}"
	local i
	for ((i = 0; i < 100; i++)); do
		[ -s "$dir/ready" ] && return 0
		kill -0 "$EV_LAST_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$dir/proxy.log" >&2
	ev_die "ev-ids-proxy did not start"
}

# --- configurations ---

# Direct: client -> server, one veth, nothing between.
ev_cfg_direct_up() {
	local idx=$1 net=$EV_ADDR_NET.$((16 * $1)) srv
	ev_ns srv "evd$idx-srv"
	ev_link "$EV_CLIENT_NS" "to-direct" "$net.2/24" "$srv" eth0 "$net.1/24"
	ev_server_up direct "$srv" "$net.1" 80
	EV_ADDR[direct]=$net.1 EV_PORT[direct]=80
	EV_ROLES[direct]="client server"
	EV_EXPECT[direct]="clean=200 clean64k=200 sqli=200 xss=200 traversal=200 rce=200 leak=200"
	EV_DESC[direct]="client -> server (one veth)"
	ev_wait_http "$EV_CLIENT_NS" "http://$net.1/"
}

# The TraditionalChain: client -> fw (router, nftables) -> ids (TCP proxy)
# -> waf (nginx reverse proxy) -> server, each host a namespace with its
# own stack.  ev_chain_up NAME IDX INSPECT.
ev_chain_up() {
	local name=$1 idx=$2 inspect=$3 b=$((16 * $2))
	local A=$EV_ADDR_NET.$b B=$EV_ADDR_NET.$((b + 1)) C=$EV_ADDR_NET.$((b + 2)) D=$EV_ADDR_NET.$((b + 3))
	local fw ids waf srv
	ev_ns fw "ev$idx-fw"
	ev_ns ids "ev$idx-ids"
	ev_ns waf "ev$idx-waf"
	ev_ns srv "ev$idx-srv"
	ev_link "$EV_CLIENT_NS" "to-$name" "$A.2/24" "$fw" eth0 "$A.1/24"
	ev_link "$fw" eth1 "$B.1/24" "$ids" eth0 "$B.2/24"
	ev_link "$ids" eth1 "$C.1/24" "$waf" eth0 "$C.2/24"
	ev_link "$waf" eth1 "$D.1/24" "$srv" eth0 "$D.2/24"
	ip -n "$EV_CLIENT_NS" route add "$B.0/24" via "$A.1"
	ip -n "$ids" route add default via "$B.1"
	ip netns exec "$fw" sysctl -qw net.ipv4.ip_forward=1
	local nft=$EV_TMP/$name/fw.nft
	mkdir -p "$EV_TMP/$name"
	if [ "$inspect" = 1 ]; then
		ev_fw_forward_nft "$EV_TOP/eval/rules/fw.rules" eth0 eth1 >"$nft" || return 1
		ip netns exec "$fw" nft -f "$nft" || ev_die "nft refused $nft"
	fi
	ev_server_up "$name" "$srv" "$D.2" 80
	ev_waf_up "$name" "$waf" "$C.2" 80 "$D.2:80" "$inspect"
	ev_ids_up "$name" "$ids" "$B.2:80" "$C.2:80" "$inspect"
	EV_ADDR[$name]=$B.2 EV_PORT[$name]=80
	EV_ROLES[$name]="client chain:ids chain:waf server"
	if [ "$inspect" = 1 ]; then
		EV_EXPECT[$name]="clean=200 clean64k=200 sqli=403 xss=403 traversal=reset rce=reset leak=reset"
		EV_DESC[$name]="client -> fw (nft forward) -> ids proxy -> nginx+ModSecurity ($EV_WAF_DESC) -> server"
	else
		EV_EXPECT[$name]="clean=200 clean64k=200 sqli=200 xss=200 traversal=200 rce=200 leak=200"
		EV_DESC[$name]="same hosts, no inspection: no nft rules, ids proxy with no rules, nginx without ModSecurity"
	fi
	ev_wait_http "$EV_CLIENT_NS" "http://$B.2/"
}

ev_cfg_trad_up() { ev_chain_up trad "$1" 1; }
ev_cfg_plain_up() { ev_chain_up plain "$1" 0; }

# --- TOChain: the VM's stack offloaded to its TOE, the chain in the region ---
#
# ev_tochain_up NAME IDX MODE HOPS_IN HOPS_OUT VNF_LINES
#   tochaind (its own fabric namespace, state and sockets under
#   $EV_TMP/NAME) builds one stand-in VM "web": TOE container with the
#   VM's address, region; nginx (the same server as everywhere) runs under
#   tochain-run in an isolated namespace on that region.  The client
#   namespace gets a port on the fabric bridge.  VNF_LINES are topology
#   lines (`vnf NAME kind=...`), HOPS_IN/HOPS_OUT the chains' hop lists
#   ("hop=fw hop=ids,waf"; "" for no chain).  MODE: sync|cfs starts
#   tochain-sched in that mode (cgroup v1/v2 backend, both CPUs
#   synchronous), the in chain gets an SLA (EV_TOCHAIN_SLA packets/s) and
#   the VNFs are calibrated, so its service threads are scheduled (a VNF
#   serving both chains registers with one only); the server's processes
#   are registered as the VM's threads.  MODE none: no CPU scheduler.
#   EV_FW_BESIDE=1: the firewall is not a VNF but nftables in the TOE's
#   namespace (the paper's iptables beside the offloaded stack), from the
#   same rule file.
#   Roles: toe (the TOE), chain:KIND per VNF instance, chain:tochaind,
#   chain:sched, server (nginx in the VM).
EV_TOCHAIN_SLA=${EV_TOCHAIN_SLA:-200}
ev_tochain_up() {
	local name=$1 idx=$2 mode=$3 hin=$4 hout=$5 vnfs=$6
	local dir=$EV_TMP/$1 net=$EV_ADDR_NET.$((16 * $2 + 1))
	local bin=$EV_BUILD/bin sla="" g
	mkdir -p "$dir/www-unused"
	ev_td_up "$name" "$idx" "$mode"
	[ "$mode" != none ] && sla=" sla=$EV_TOCHAIN_SLA"
	{
		echo "vm web ip=$net.2/24"
		echo "$vnfs"
		[ -n "$hin" ] && echo "chain web-in vm=web dir=in $hin$sla"
		[ -n "$hout" ] && echo "chain web-out vm=web dir=out $hout"
	} >"$dir/topology"
	if [ "$mode" != none ]; then
		# SLAs need each VNF's f: define the VNFs, calibrate, then apply the rest
		grep '^vnf ' "$dir/topology" >"$dir/vnfs.topology"
		ev_sfc "$name" apply -f "$dir/vnfs.topology" >/dev/null || ev_die "$name: sfc-ctl apply (vnfs)"
		local v
		for v in $(awk '/^vnf / { print $2 }' "$dir/topology"); do
			ev_sfc "$name" vnf calibrate "$v" >>"$dir/calibrate.log" || ev_die "$name: calibrate $v"
		done
	fi
	ev_sfc "$name" apply -f "$dir/topology" >"$dir/apply.log" 2>&1 || { cat "$dir/apply.log" >&2; ev_die "$name: sfc-ctl apply"; }
	[ "${EV_FW_BESIDE:-0}" = 1 ] && ev_td_fw_beside "$name" web
	ev_td_client_port "$name" "$idx" "$net.1/24"
	# CPU accounting: the TOE and the VNF instances tochaind started
	local toe js
	js=$(ev_sfc "$name" --json vm show web) || ev_die "$name: vm show"
	toe=$(echo "$js" | python3 -c 'import json,sys; print(json.load(sys.stdin)["toe_pid"])')
	EV_TD_REGION[$name]=$(echo "$js" | python3 -c 'import json,sys; print(json.load(sys.stdin)["region"])')
	ev_cg_attach "$name" toe "$toe"
	local roles="client server toe chain:tochaind" kind pid
	[ "$mode" != none ] && roles+=" chain:sched"
	while read -r v kind pid; do
		ev_cg_attach "$name" "chain:$v" "$pid"
		roles+=" chain:$v"
	done < <(ev_sfc "$name" --json vnf ls | python3 -c '
import json, sys
for v in json.load(sys.stdin)["vnfs"]:
    for i in v.get("instances", []):
        print(v["name"], v["kind"], i["pid"])')
	# the server: nginx in the VM, its sockets through the TOE
	local gu
	ev_ns gu "ev$2-vm"
	EV_SERVER_WRAP=("$bin/tochain-run" --region "${EV_TD_REGION[$name]}" --)
	ev_server_up "$name" "$gu" "$net.2" 80
	EV_SERVER_WRAP=()
	EV_ADDR[$name]=$net.2 EV_PORT[$name]=80
	EV_ROLES[$name]=$roles
	ev_wait_http "$EV_CLIENT_NS" "http://$net.2/" || return 1
	if [ "$mode" != none ]; then
		ev_td_register_vm "$name" web "$name"
		g=$(ev_sfc "$name" chain show web-in | grep -i sched || true)
		ev_log "$name: ${g:-no scheduler note}"
	fi
}

# ev_td_up NAME IDX MODE: the daemons of TOChain configuration NAME:
# tochain-sched in MODE (sync|cfs; cgroup v1/v2 backend, both CPUs
# synchronous; none: no CPU scheduler), and tochaind with its own fabric
# namespace, state, regions and sockets under $EV_TMP/NAME.
ev_td_up() {
	local name=$1 idx=$2 mode=$3 dir=$EV_TMP/$1 bin=$EV_BUILD/bin fab="evf$2-$EV_SUFFIX" i
	fab=${fab:0:14}
	mkdir -p "$dir"
	EV_TD_SOCK[$name]=$dir/ctl.sock
	EV_TD_FAB[$name]=$fab
	if [ "$mode" != none ]; then
		ev_spawn "$name" chain:sched - "$dir/sched.log" "$bin/tochain-sched" \
			--socket "$dir/sched.sock" --mode "$mode" --cgroup "ev-sched-$EV_SUFFIX-$idx" \
			--print-every 0
		EV_TD_SCHED[$name]=$EV_LAST_PID
		EV_TD_SCHEDCG[$name]=ev-sched-$EV_SUFFIX-$idx
	fi
	ev_spawn "$name" chain:tochaind - "$dir/tochaind.log" "$bin/tochaind" --foreground \
		--state-dir "$dir/state" --socket "$dir/ctl.sock" --fabric-ns "$fab" \
		--bridge tcbr0 --region-dir "$dir/regions" --sched-socket "$dir/sched.sock"
	for ((i = 0; i < 100; i++)); do [ -S "$dir/ctl.sock" ] && break; sleep 0.1; done
	[ -S "$dir/ctl.sock" ] || { cat "$dir/tochaind.log" >&2; ev_die "tochaind did not start"; }
}

# ev_td_fw_beside NAME VM: the firewall as nftables in VM's TOE namespace
# (the paper's iptables beside the offloaded stack), from eval's fw.rules.
ev_td_fw_beside() {
	ip netns exec "${EV_TD_FAB[$1]}-$2" "$EV_BUILD/bin/tochain-fw-apply" apply "$EV_TOP/eval/rules/fw.rules" ||
		ev_die "$1: tochain-fw-apply in $2's TOE namespace"
}

# ev_td_client_port NAME IDX ADDR/LEN: the client namespace's port on the
# fabric bridge of configuration NAME.
ev_td_client_port() {
	local fab=${EV_TD_FAB[$1]}
	ip link add "to-tc$2" netns "$EV_CLIENT_NS" type veth peer name "c$2" netns "$fab" ||
		ev_die "veth to $fab"
	ip -n "$fab" link set "c$2" master tcbr0 up
	ip -n "$EV_CLIENT_NS" addr add "$3" dev "to-tc$2"
	ip -n "$EV_CLIENT_NS" link set "to-tc$2" up
}

# ev_td_register_vm NAME VM SERVERCFG: the threads of the web server that
# ev_server_up started for SERVERCFG become VM's threads for NAME's CPU
# scheduler.
ev_td_register_vm() {
	local name=$1 vm=$2 pid t
	for pid in $(pgrep -f "nginx -p $EV_TMP/$3/server"); do
		for t in /proc/"$pid"/task/*; do
			"$EV_BUILD/bin/tochain-sched" --socket "$EV_TMP/$name/sched.sock" --ctl sched.register \
				"{\"role\":\"vm\",\"tid\":${t##*/},\"vm\":\"$vm\"}" >/dev/null ||
				ev_log "$name: cannot register nginx thread ${t##*/}"
		done
	done
}

# ev_tochain_down NAME: what tochaind built goes through tochaind (chains,
# VM: its namespace, cgroups, TOE, instances), then the daemons stop and
# what a killed one would leave is removed.
ev_tochain_down() {
	local name=$1 dir=$EV_TMP/$1 c p i
	# the CPU scheduler first: it may hold VNF threads frozen, and a
	# frozen process does not act on SIGTERM; on exit it thaws them
	if [ -n "${EV_TD_SCHED[$name]:-}" ]; then
		kill "${EV_TD_SCHED[$name]}" 2>/dev/null
		for i in $(seq 30); do kill -0 "${EV_TD_SCHED[$name]}" 2>/dev/null || break; sleep 0.1; done
	fi
	if [ -S "${EV_TD_SOCK[$name]}" ]; then
		for c in $(ev_sfc "$name" --json chain ls 2>/dev/null | ev_json_names chains); do
			ev_sfc "$name" chain del "$c" >/dev/null 2>&1
		done
		for c in $(ev_sfc "$name" --json vm ls 2>/dev/null | ev_json_names vms); do
			ev_sfc "$name" vm del "$c" >/dev/null 2>&1
		done
		for c in $(ev_sfc "$name" --json vnf ls 2>/dev/null | ev_json_names vnfs); do
			ev_sfc "$name" vnf del "$c" >/dev/null 2>&1
		done
	fi
	for p in $(pgrep -f "tochaind --foreground --state-dir $dir/state"); do kill "$p"; done
	sleep 0.3
	pkill -9 -f "tochain-(vnf|toe) .*--region $dir/regions/" 2>/dev/null
	pkill -9 -f "tochaind --foreground --state-dir $dir/state" 2>/dev/null
	if [ -n "${EV_TD_SCHED[$name]:-}" ]; then
		kill -9 "${EV_TD_SCHED[$name]}" 2>/dev/null
		"$EV_BUILD/bin/tochain-sched" --cgroup "${EV_TD_SCHEDCG[$name]}" --cleanup >/dev/null 2>&1
	fi
	for c in $(ip netns list | awk -v f="${EV_TD_FAB[$name]}" '$1 == f || index($1, f "-") == 1 { print $1 }'); do
		ip netns del "$c" 2>/dev/null
	done
	true
}

# ev_json_names KEY: the "name" of each object in the list KEY of the JSON
# object on stdin, one a line.
ev_json_names() {
	python3 -c 'import json, sys
for o in json.load(sys.stdin).get(sys.argv[1], []): print(o["name"])' "$1" 2>/dev/null
}

# sfc-ctl against configuration NAME's tochaind.
ev_sfc() {
	local name=$1
	shift
	"$EV_BUILD/bin/sfc-ctl" --socket "${EV_TD_SOCK[$name]}" "$@"
}
declare -gA EV_TD_SOCK EV_TD_FAB EV_TD_SCHED EV_TD_SCHEDCG EV_TD_REGION
EV_SERVER_WRAP=()

# The full chain as the TraditionalChain has it, with the same rule files:
# in: fw -> (ids || waf); out: ids (its to_client rules: the leak probe).
ev_tochain_vnfs() {
	local dir=$EV_TMP/$1 threads=${EV_VNF_THREADS:-2}
	mkdir -p "$dir"
	# one file: tochaind keeps a copy of the rules file alone
	cat "$EV_TOP/eval/rules/ids-vars.conf" "$EV_TOP/eval/rules/ids.rules" >"$dir/ids.rules"
	printf '%s\n' "vnf fw kind=fw rules=$EV_TOP/eval/rules/fw.rules" \
		"vnf ids kind=ids threads=$threads rules=$dir/ids.rules" \
		"vnf waf kind=waf threads=$threads rules=$EV_TOP/eval/rules/waf.conf"
}
ev_tochain_full() { # NAME IDX MODE HOPS_IN
	local vnfs out=ids
	vnfs=$(ev_tochain_vnfs "$1")
	[ "${EV_FW_BESIDE:-0}" = 1 ] && vnfs=$(echo "$vnfs" | grep -v '^vnf fw ')
	if [ "$3" != none ]; then
		# The CPU scheduler gates a VNF's threads for one chain's SLA;
		# the responses' ids must not wait for the in chain's slots.
		vnfs+=$'\n'"$(echo "$vnfs" | sed -n 's/^vnf ids /vnf idsout /p')"
		out=idsout
	fi
	ev_tochain_up "$1" "$2" "$3" "$4" "hop=$out" "$vnfs" || return 1
	# the waf answers 403; what the ids (in parallel) denies first is reset
	EV_EXPECT[$1]="clean=200 clean64k=200 sqli=403|reset xss=403|reset traversal=403|reset rce=403|reset leak=reset"
}

# TOChain-SYNC / -CFS: the chain the paper scheduled, (ids || waf) with
# the firewall as nftables beside the TOE (as the paper ran iptables): the
# paper's gang rule (no two VNF vCPUs of a chain on one pCPU) admits at
# most 2 VNFs per chain on this 2-CPU machine, so fw cannot be a third.
# One service thread per VNF: the scheduler runs as many threads of a VNF
# as eq. 2 asks for (one at these SLAs) and keeps the others frozen, while
# the packet scheduler would still hand them descriptors.
ev_cfg_tochain_sync_up() {
	EV_VNF_THREADS=1 EV_FW_BESIDE=1 ev_tochain_full tochain-sync "$1" sync "hop=ids,waf" || return 1
	EV_DESC[tochain-sync]="TOE (+ nft fw) + chain (ids || waf), out: ids; tochain-sched sync, SLA $EV_TOCHAIN_SLA/s"
}
ev_cfg_tochain_cfs_up() {
	EV_VNF_THREADS=1 EV_FW_BESIDE=1 ev_tochain_full tochain-cfs "$1" cfs "hop=ids,waf" || return 1
	EV_DESC[tochain-cfs]="TOE (+ nft fw) + chain (ids || waf), out: ids; tochain-sched cfs"
}
# The full chain with no CPU scheduler, and the same VNFs in sequence.
ev_cfg_tochain_up() {
	ev_tochain_full tochain "$1" none "hop=fw hop=ids,waf" || return 1
	EV_DESC[tochain]="TOE + chain fw -> (ids || waf), out: ids; no CPU scheduler"
}
ev_cfg_tochain_seq_up() {
	ev_tochain_full tochain-seq "$1" none "hop=fw hop=ids hop=waf" || return 1
	EV_DESC[tochain-seq]="TOE + chain fw -> ids -> waf (sequential), out: ids; no CPU scheduler"
}
# The chain's plumbing alone: the same hops of null VNFs (no inspection).
ev_cfg_tochain_null_up() {
	local t=${EV_VNF_THREADS:-2}
	ev_tochain_up tochain-null "$1" none "hop=n1 hop=n2,n3" "hop=n2" \
		"$(printf '%s\n' "vnf n1 kind=null" "vnf n2 kind=null threads=$t" "vnf n3 kind=null threads=$t")" ||
		return 1
	EV_EXPECT[tochain-null]="clean=200 clean64k=200 sqli=200 xss=200 traversal=200 rce=200 leak=200"
	EV_DESC[tochain-null]="TOE + chain of null VNFs n1 -> (n2 || n3), out: n2 (no inspection)"
}
# TOE alone: the offloaded stack, no chain (what the chain adds to it).
ev_cfg_tochain_nochain_up() {
	ev_tochain_up tochain-nochain "$1" none "" "" "" || return 1
	EV_EXPECT[tochain-nochain]="clean=200 clean64k=200 sqli=200 xss=200 traversal=200 rce=200 leak=200"
	EV_DESC[tochain-nochain]="TOE only, no chain"
}

# ev_cfg_up NAME IDX: builds configuration NAME (direct, plain, trad, ...).
ev_cfg_up() {
	local fn=ev_cfg_${1//-/_}_up
	declare -F "$fn" >/dev/null || ev_die "unknown configuration $1"
	"$fn" "$2" || ev_die "configuration $1 could not be built"
	local role
	for role in ${EV_ROLES[$1]}; do ev_cg_make "$1" "$role"; done
	EV_CONFIGS_UP+=("$1")
}

# --- probes: what each stage does to one request of each kind ---

# ev_probe_one CFG KIND: prints 200, 403, ... or "reset" (curl exit 56/52);
# "short-N" when a 200 carried N bytes instead of the whole file.
ev_probe_one() {
	local cfg=$1 kind=$2 url="http://${EV_ADDR[$1]}:${EV_PORT[$1]}" path ua=() want=1024
	case $kind in
	clean) path="/1k/products?id=1042&sort=price&order=asc" ;;
	clean64k) path="/64k/products?id=1042&sort=price&order=asc" want=65536 ;;
	sqli) path="/1k/products?id=1%27%20OR%20%271%27%3D%271" ;;
	xss) path="/1k/search?q=%3Cscript%3Ealert(document.cookie)%3C%2Fscript%3E" ;;
	traversal) path="/1k/download?file=../../../../etc/passwd" ;;
	rce) path="/1k/cgi-bin/status"; ua=(-A "() { :; }; /bin/bash -c 'id'") ;;
	leak) path="/leak/backup.txt" want=$(($(wc -c <"$EV_TMP/$1/server/www/leak.html" 2>/dev/null || echo 0))) ;;
	esac
	local res code size rc
	res=$(ip netns exec "$EV_CLIENT_NS" curl -s -o /dev/null -m 5 --path-as-is \
		-H "Host: www.example.test" "${ua[@]}" -w '%{http_code} %{size_download}' "$url$path")
	rc=$?
	code=${res% *} size=${res#* }
	case $rc in
	0) if [ "$code" = 200 ] && [ "$size" != "$want" ]; then echo "short-$size"; else echo "$code"; fi ;;
	52|56) echo reset ;;
	*) echo "curl-exit-$rc" ;;
	esac
}

# ev_probe CFG: checks EV_EXPECT[CFG] (A|B: either); prints one line; returns 1 on a mismatch.
ev_probe() {
	local cfg=$1 e kind want got line="" bad=0
	for e in ${EV_EXPECT[$cfg]}; do
		kind=${e%%=*} want=${e#*=}
		got=$(ev_probe_one "$cfg" "$kind")
		line+=" $kind=$got"
		[[ "|$want|" == *"|$got|"* ]] || { line+="(want $want)"; bad=1; }
	done
	printf 'probe %-8s%s\n' "$cfg" "$line"
	return $bad
}
