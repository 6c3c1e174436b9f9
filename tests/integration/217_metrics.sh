#!/usr/bin/env bash
# timeout: 180
# tochaind --metrics 127.0.0.1:PORT: a VM behind a chain pass -> guard
# (guard denies payloads with ATTACK) with an SLA; /metrics scraped with
# curl before, during and after clean traffic and one attack: the text
# parses as the Prometheus exposition format 0.0.4 (every line a comment
# or a sample, HELP and TYPE before a family's samples), arrivals and
# done grow, the denial is counted once with its VNF and rule, the SLA,
# the queues, the instances and tochain-sched's (dry-run) quota and
# early ends are there; another path gets 404, garbage
# and an oversized request 400, idle connections beyond the limit are
# held off, and none of it keeps sfc-ctl from being answered.
set -euo pipefail
top=${TOCHAIN_TOP:-$(pwd)}
build=${TOCHAIN_BUILD:-$top/build}
. "$top/tests/lib/netns.sh"
. "$top/tests/lib/tochaind.sh"
tc_need_cmds ip python3 curl
tc_need_root "network namespaces"

mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
TD_OPTS="--metrics 127.0.0.1:$mport"
td_setup 217
murl=http://127.0.0.1:$mport/metrics

# promcheck FILE: the exposition grammar; prints the number of samples.
cat >"$work/promcheck.py" <<'P'
import re, sys
name = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
lval = r'"(?:[^"\\\n]|\\[\\"n])*"'
label = r'[a-zA-Z_][a-zA-Z0-9_]*=' + lval
sample = re.compile('^(' + name + r')(\{(' + label + '(,' + label + r')*)?\})? (NaN|[+-]Inf|[-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)$')
help_re = re.compile(r'^# HELP (' + name + r') (?:[^\\\n]|\\[\\n])*$')
type_re = re.compile(r'^# TYPE (' + name + r') (counter|gauge|histogram|summary|untyped)$')
text = open(sys.argv[1]).read()
assert text.endswith('\n'), 'no final newline'
helped, typed, done, cur, n = set(), {}, set(), None, 0
for i, l in enumerate(text.split('\n')[:-1], 1):
    m = help_re.match(l) or type_re.match(l)
    if l.startswith('#'):
        assert m, 'line %d: bad comment: %r' % (i, l)
        f = m.group(1)
        assert f not in done, 'line %d: family %s split' % (i, f)
        if l.startswith('# HELP'):
            assert f not in helped, 'line %d: second HELP' % i
            helped.add(f)
        else:
            assert f not in typed, 'line %d: second TYPE' % i
            typed[f] = m.group(2)
        if cur and cur != f:
            done.add(cur)
        cur = f
        continue
    m = sample.match(l)
    assert m, 'line %d: not a sample: %r' % (i, l)
    f = m.group(1)
    assert f in helped and f in typed, 'line %d: %s without HELP/TYPE before' % (i, f)
    assert f == cur, 'line %d: %s outside its family' % (i, f)
    assert f.startswith('tochain_'), 'line %d: name %s' % (i, f)
    assert (typed[f] == 'counter') == f.endswith('_total'), 'line %d: %s is a %s' % (i, f, typed[f])
    n += 1
print(n)
P
# mval FILE NAME K=V...: the value of the one sample of NAME with those labels, or "none".
mval() {
	python3 - "$@" <<'P'
import re, sys
f, name, want = sys.argv[1], sys.argv[2], dict(a.split('=', 1) for a in sys.argv[3:])
vals = []
for l in open(f):
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', l.rstrip('\n'))
    if not m or m.group(1) != name:
        continue
    labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ''))
    if all(labels.get(k) == v for k, v in want.items()):
        vals.append(m.group(3))
print(vals[0] if len(vals) == 1 else 'none' if not vals else 'many')
P
}
n=0
scrape() {
	n=$((n + 1))
	curl -sS --max-time 10 -D "$work/hdr$n" -o "$work/m$n" "$murl" || fail "scrape $n failed"
	grep -qi '^content-type: text/plain; version=0.0.4' "$work/hdr$n" || fail "scrape $n: $(cat "$work/hdr$n")"
	samples=$(python3 "$work/promcheck.py" "$work/m$n") || fail "scrape $n does not parse"
	echo "scrape $n: $samples samples"
}
chain=(vm=web1 chain=web-in dir=in)

# tochain-sched with the dry-run backend (it writes no cgroup) where
# td_start points tochaind: the chain's VNF threads get registered
"$build/bin/tochain-sched" --backend dryrun --no-rt --print-every 100000 \
	--socket "$work/no-sched.sock" >"$work/sched.log" 2>&1 &
spid=$!
tc_on_exit "kill $spid"
tc_wait_for 10 test -S "$work/no-sched.sock" || fail "tochain-sched did not start"

sfc vm add web1 --ip 10.64.0.2/24 >/dev/null
sfc vnf add pass --kind null --rate 200000 >/dev/null
sfc vnf add guard --kind null --rate 200000 --arg --deny-marker=ATTACK >/dev/null
sfc chain add web-in --vm web1 --dir in --hop pass --hop guard --sla 1000 >/dev/null
mkdir "$work/www"
echo hello >"$work/www/index.html"
td_client 10.64.0.1
td_serve web1 "$work/www" 8080
tc_wait_port "$CL" 10.64.0.2 8080 15 || fail "the web server did not come up"
get() { ip netns exec "$CL" curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://10.64.0.2:8080/; }
[ "$(get)" = 200 ] || fail "first clean request"

echo "--- before traffic"
scrape
a0=$(mval "$work/m1" tochain_chain_arrivals_total "${chain[@]}")
d0=$(mval "$work/m1" tochain_chain_done_total "${chain[@]}")
[ "$(mval "$work/m1" tochain_chain_up "${chain[@]}")" = 1 ] || fail "chain_up is not 1"
[ "$(mval "$work/m1" tochain_vm_toe_up vm=web1)" = 1 ] || fail "toe_up is not 1"
[ "$(mval "$work/m1" tochain_chain_sla_packets_per_second "${chain[@]}")" = 1000 ] || fail "SLA"
[ "$(mval "$work/m1" tochain_chain_hops "${chain[@]}")" = 2 ] || fail "hops"
[ "$(mval "$work/m1" tochain_chain_queue_length "${chain[@]}" queue=in)" != none ] || fail "no in queue length"
[ "$(mval "$work/m1" tochain_chain_admitted_quota_cpus "${chain[@]}")" != none ] || fail "no admitted quota"
for v in pass guard; do
	[ "$(mval "$work/m1" tochain_vnf_instance_up vnf=$v vm=web1)" = 1 ] || fail "instance $v not up"
	[ "$(mval "$work/m1" tochain_vnf_instance_restarts_total vnf=$v vm=web1)" = 0 ] || fail "instance $v restarts"
done
[ "$(mval "$work/m1" tochain_sched_up)" = 1 ] || fail "tochain-sched runs, sched_up should be 1"
[ "$(mval "$work/m1" tochain_sched_mode mode=sync)" = 1 ] || fail "sched mode"
[ "$a0" -ge 1 ] && [ "$d0" -ge 1 ] || fail "arrivals $a0 done $d0 after a request"

echo "--- during traffic"
touch "$work/load"
(while [ -e "$work/load" ]; do get >/dev/null || true; done) &
load=$!
sleep 1
scrape
sleep 1
scrape
# the plan has the chain's VNFs (with traffic) once their threads are registered
for i in $(seq 20); do
	curl -sS --max-time 10 -o "$work/ms" "$murl"
	q=$(mval "$work/ms" tochain_sched_quota_cpus chain=web-in vnf=guard)
	[ "$q" != none ] && break
	sleep 0.5
done
echo "cpu sched: $(sfc --json chain show web-in | td_json 'j["sched"]'); quota of guard $q CPUs, early ends $(mval "$work/ms" tochain_sched_chain_early_ends_total chain=web-in vm=web1)"
python3 -c "import sys; sys.exit(not 0 < float('$q') <= 1)" 2>/dev/null ||
	fail "no scheduler quota for guard: $q: $(grep '^tochain_sched' "$work/ms")"
[ "$(mval "$work/ms" tochain_sched_chain_early_ends_total chain=web-in vm=web1)" != none ] || fail "no early ends of web-in"

rm -f "$work/load"
wait $load
a2=$(mval "$work/m2" tochain_chain_arrivals_total "${chain[@]}")
a3=$(mval "$work/m3" tochain_chain_arrivals_total "${chain[@]}")
d3=$(mval "$work/m3" tochain_chain_done_total "${chain[@]}")
r3=$(mval "$work/m3" tochain_chain_rate_packets_per_second "${chain[@]}")
echo "arrivals: $a0 before, $a2 and $a3 during (done $d3, rate $r3/s); the samples of scrape 3:"
grep -v '^#' "$work/m3"
[ "$a2" -gt "$a0" ] && [ "$a3" -gt "$a2" ] && [ "$d3" -gt "$d0" ] || fail "arrivals/done did not grow during traffic"
python3 -c "import sys; sys.exit(not float('$r3') > 0)" || fail "no rate achieved during traffic: $r3"

p2=$(mval "$work/m2" tochain_sched_periods_total)
p3=$(mval "$work/m3" tochain_sched_periods_total)
[ "$p3" -gt "$p2" ] || fail "tochain-sched's periods did not grow: $p2 -> $p3"
echo "--- an attack"
tc_curl_reset "$CL" "$work/py-web1.log" "q=ATTACK" "http://10.64.0.2:8080/x?q=ATTACK"
for i in 1 2 3; do [ "$(get)" = 200 ] || fail "clean request $i after the attack"; done
sleep 0.3
scrape
a4=$(mval "$work/m4" tochain_chain_arrivals_total "${chain[@]}")
d4=$(mval "$work/m4" tochain_chain_done_total "${chain[@]}")
echo "after: arrivals $a4 done $d4"
[ "$a4" -gt "$a3" ] && [ "$d4" -gt "$d0" ] || fail "arrivals/done did not grow: $a3 -> $a4, $d0 -> $d4"
[ "$(mval "$work/m4" tochain_chain_denied_total "${chain[@]}")" = 1 ] || fail "denied_total is not 1"
den=(vm=web1 chain=web-in vnf=guard rule=1 reason=rule)
[ "$(mval "$work/m4" tochain_denials_total "${den[@]}")" = 1 ] || fail "the denial by rule: $(grep denials "$work/m4")"
scrape
[ "$(mval "$work/m5" tochain_denials_total "${den[@]}")" = 1 ] || fail "the denial counted twice"
grep -E '^tochain_(chain_(arrivals|done|denied)_total|denials_total)' "$work/m4"

echo "--- other requests"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$mport/other")
[ "$code" = 404 ] || fail "/other: $code, not 404"
# raw REQUEST...: send each, print the status line of the answer (or what happened)
raw() {
	python3 - "$mport" "$@" <<'P'
import socket, sys
for req in sys.argv[2:]:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    data = req.encode().decode('unicode_escape').encode('latin-1')
    if data == b'BIG':
        data = b'GET /metrics HTTP/1.1\r\nX: ' + b'a' * 8000
    try:
        s.sendall(data)
        print(s.recv(100).split(b'\r\n')[0].decode() or 'closed')
    except OSError as e:
        print('error', e)
    s.close()
P
}
raw 'garbage\r\n\r\n' '\x16\x03\x01\x00\xff\x01\x00\x00\n' 'BIG' 'GET /metrics HTTP/9.9\r\n\r\n' | tee "$work/raw"
[ "$(grep -c '^HTTP/1.1 400 Bad Request$' "$work/raw")" = 4 ] || fail "garbage was not answered 400"
sfc version >/dev/null || fail "sfc-ctl not answered after garbage"
# more idle connections than tochaind serves at once: control requests
# still answered at once; a scrape waits for the idle ones' timeout (5 s)
python3 - "$mport" <<'P' &
import socket, sys, time
ss = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(12)]
time.sleep(8)
P
idle=$!
sleep 0.5
t0=$(date +%s%N)
sfc version >/dev/null || fail "sfc-ctl not answered with idle scrapers"
echo "sfc-ctl version with 12 idle scrapers: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
scrape
echo "a scrape behind 12 idle connections: ok"
wait $idle
[ "$(get)" = 200 ] || fail "clean request after the scrapes"
td_stop_check
echo PASS
