// SPDX-License-Identifier: MIT
/*
 * vnf-drive: integration scenarios of the fw, ids and waf kinds of
 * tochain-vnf behind a real packet scheduler (host-toe/chain/ch_psched), fed with
 * HTTP request streams (vnf_mix.h) from a synthetic data region, as the
 * TOE will feed it.
 *
 *   vnf-drive SCENARIO --vnf-bin PATH --dir DIR [--ids-rules F] [--fw-rules F]
 *             [--ids-rules2 F] [-n CONNECTIONS] [--threads N]
 *
 * Scenarios:
 *   ids     chain [ids]       attacks denied with the sid of their family
 *   waf     chain [waf]       attacks denied with a CRS rule of their family
 *   fw      chain [fw]        port 8080 rejected by rule 2, port 80 allowed
 *   par     chain [ids, waf]  one parallel hop: either may deny, each with its rule
 *   flows   chain [ids] with a flow table of 64 entries: each connection opens
 *           an entry and its conn id is the entry's index + 1, so conn ids
 *           come back for new connections in reused entries (a new
 *           generation): the VNF must start a fresh stream for each
 *   resp    in chain [ids] and out chain [ids] (the same VNF): each clean
 *           request is answered on the out chain (server -> client bytes);
 *           every 7th response leaks "root:x:0:0:" (a to_client rule)
 *   reload  chain [ids]       --ids-rules has some families; mid-run the file is
 *                             replaced by --ids-rules2 (all families) and the VNF
 *                             gets SIGHUP; then a broken file and SIGHUP again
 *
 * Traffic: up to 24 connections open at a time, each one request cut into
 * descriptors of 100-1448 bytes, interleaved descriptor by descriptor.
 * Checks: every descriptor comes back once, each connection's in order, unchanged;
 * each connection's verdict (first deny, its VNF and rule) is the expected
 * one; no clean request is denied; the VNFs saw every descriptor they had to
 * (their --stats); nothing left in flight.  Exit 0 when all checks passed;
 * each failed check prints "FAIL: ...".
 *
 * The main thread runs the scheduler in its own epoll loop, as the TOE
 * does (chh_loop_*, ch_harness.h): it submits, polls, takes, and sleeps
 * in epoll when an iteration moved nothing, woken by the VNF threads'
 * bells.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <tochain/tsc.h>

#include "tochain/ch_flow.h"
#include "ch_harness.h"
#include "vnf_mix.h"

#define NBUFS		512
#define SLOT		2048
#define OPEN		24		/* connections open at once */
#define MAXV		2

extern char **environ;

static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		failures++; \
		if (failures < 20) { \
			printf("FAIL: " __VA_ARGS__); \
			printf("  (%s:%d)\n", __FILE__, __LINE__); \
		} \
	} \
} while (0)

enum rules_set { RULES_A, RULES_B, RULES_EITHER };

struct conn {
	uint64_t id;			/* conn id; 0: slot free */
	char req[VNF_MIX_MAX];
	uint32_t len, off;		/* request bytes, submitted so far */
	enum vnf_mix_family fam;
	uint32_t inflight;		/* descriptors not back yet */
	bool denied;
	uint32_t deny_vnf, deny_rule;
	enum rules_set rules;		/* reload: which ids rules must judge it */
	bool first_back;		/* a result of it came back */
	int first_back_phase;		/* reload phase then */
	uint16_t dport, sport;
	int flow;			/* flow table entry, -1: none */
	/* resp: the response on the out chain, after the request came back */
	char resp[1024];
	uint32_t resp_len, resp_off;
	bool leak;
};

struct env {
	const char *dir, *bin, *ids_rules, *ids_rules2, *fw_rules;
	const char *kind[MAXV];
	uint32_t threads;
	struct tcr_region *data;
	struct ch_psched *s;
	struct chh_loop loop;		/* runs s in this thread */
	bool use_flows;			/* flows scenario */
	struct ch_flows *flows;
	uint64_t flows_opened;
	uint32_t nv;
	pid_t pid[MAXV];
	char vpath[MAXV][300], spath[MAXV][300];
	uint32_t freebuf[NBUFS], nfree;
	struct ch_pkt sub[NBUFS];
	uint32_t buf_conn[NBUFS];	/* slot of conns[] a buffer belongs to */
	uint64_t next_cookie;
	struct chh_order order[2];	/* per chain */
	bool responses;			/* resp scenario */
	uint64_t resp_denied;
	struct conn conns[OPEN];
	uint64_t next_conn, started, finished, target;
	uint64_t submitted, results, denied_conns, clean_conns, attack_conns;
	uint64_t fam_denied[VNF_MIX_NFAMILIES];
	uint64_t answers;		/* denies that came with an HTTP answer (waf) */
	/* reload */
	int reload_phase;		/* 0 before, 1 SIGHUP sent, 2 confirmed, 3 bad sent */
	uint64_t hup_results;		/* results taken when SIGHUP was sent */
};

static pid_t spawn_vnf(struct env *e, uint32_t v, const char *kind, const char *rules)
{
	char threads[16];
	char *argv[20];
	int n = 0, err;
	pid_t pid;

	snprintf(threads, sizeof(threads), "%u", e->threads);
	argv[n++] = (char *)e->bin;
	argv[n++] = (char *)"--kind";
	argv[n++] = (char *)kind;
	argv[n++] = (char *)"--region";
	argv[n++] = e->vpath[v];
	argv[n++] = (char *)"--stats";
	argv[n++] = e->spath[v];
	argv[n++] = (char *)"--threads";
	argv[n++] = threads;
	argv[n++] = (char *)"--attach-timeout";
	argv[n++] = (char *)"20000";
	argv[n++] = (char *)"--exit-with-parent";
	if (rules) {
		argv[n++] = (char *)"--rules";
		argv[n++] = (char *)rules;
	}
	argv[n] = NULL;
	err = posix_spawn(&pid, e->bin, NULL, NULL, argv, environ);
	if (err) {
		errno = err;
		return -1;
	}
	return pid;
}

static void add_vnf(struct env *e, const char *kind, const char *rules)
{
	struct ch_vnf_cfg vc = { .name = kind, .nthreads = e->threads,
				 .policy = CH_FAIL_CLOSED, .dispatch = CH_DISPATCH_FLOW };
	uint32_t v = e->nv;

	snprintf(e->vpath[v], sizeof(e->vpath[v]), "%s/vnf-%s", e->dir, kind);
	snprintf(e->spath[v], sizeof(e->spath[v]), "%s/stats-%s", e->dir, kind);
	vc.region_path = e->vpath[v];
	if (ch_psched_vnf_add(e->s, &vc) != (int)v) {
		printf("FAIL: vnf_add %s\n", kind);
		exit(1);
	}
	e->pid[v] = spawn_vnf(e, v, kind, rules);
	if (e->pid[v] < 0) {
		printf("FAIL: spawn %s: %s\n", e->bin, strerror(errno));
		exit(1);
	}
	ch_psched_vnf_set_pid(e->s, v, e->pid[v]);
	e->kind[v] = kind;
	e->nv++;
}

static void setup(struct env *e, uint64_t target)
{
	struct ch_psched_cfg cfg = { .nchains = 2, .qcap = 256, .max_flight = 256,
				    .vnf_nbufs = 1024,
				    .hang_ns = 30000000000ull };	/* CRS load, 2 shared cores */
	char path[300];

	snprintf(path, sizeof(path), "%s/data", e->dir);
	e->data = chh_data_region(path, NBUFS, SLOT);
	e->s = ch_psched_create(&cfg);
	if (!e->data || !e->s || ch_psched_region_add(e->s, 0, path, NBUFS, SLOT)) {
		printf("FAIL: setup: %s\n", strerror(errno));
		exit(1);
	}
	if (e->use_flows) {
		snprintf(path, sizeof(path), "%s/flows", e->dir);
		e->flows = ch_flows_create(path, 64);
		if (!e->flows || ch_psched_region_flows(e->s, 0, path)) {
			printf("FAIL: flow table: %s\n", strerror(errno));
			exit(1);
		}
	}
	for (uint32_t i = 0; i < NBUFS; i++)
		e->freebuf[e->nfree++] = NBUFS - 1 - i;
	e->target = target;
	if (chh_order_init(&e->order[0], target * 64 + 1024) ||
	    chh_order_init(&e->order[1], target * 64 + 1024) || chh_loop_attach(&e->loop, e->s)) {
		printf("FAIL: loop attach\n");
		exit(1);
	}
}

static void set_chain(struct env *e, uint32_t chain)
{
	struct ch_chain_cfg c = { .region = 0, .dir = chain ? CH_DIR_OUT : CH_DIR_IN, .nhops = 1 };

	for (uint32_t v = 0; v < e->nv; v++)
		c.hop[0].vnf[c.hop[0].nvnfs++] = v;
	if (ch_psched_chain_set(e->s, chain, &c, NULL)) {
		printf("FAIL: chain_set\n");
		exit(1);
	}
}

static bool conn_open(struct env *e, struct conn *c)
{
	uint64_t i = e->next_conn;
	int flow = -1;

	if (e->flows) {
		struct ch_flow_key k = { .family = 4, .l4proto = 6,
					 .sport = (uint16_t)(20000 + i % 40000), .dport = 80 };

		k.saddr[0] = 198, k.saddr[1] = 18, k.saddr[2] = (uint8_t)(i >> 8);
		k.saddr[3] = (uint8_t)i;
		k.daddr[0] = 10, k.daddr[3] = 1;
		flow = ch_flow_open(e->flows, &k, CH_FLOW_ESTABLISHED);
		if (flow < 0)
			return false;	/* table full: after a reclaim */
		e->flows_opened++;
	}
	e->next_conn++;
	memset(c, 0, sizeof(*c));
	c->id = flow >= 0 ? (uint64_t)flow + 1 : 1000 + i;
	c->flow = flow;
	c->sport = (uint16_t)(20000 + i % 40000);
	c->len = vnf_mix_request(i, c->req, &c->fam);
	c->dport = 80;
	if (e->kind[0] && !strcmp(e->kind[0], "fw") && i % 5 == 4)
		c->dport = 8080;
	c->rules = e->reload_phase == 0 ? RULES_A : e->reload_phase == 1 ? RULES_EITHER :
		   RULES_B;
	if (e->responses && c->fam == VNF_MIX_CLEAN) {
		c->leak = i % 7 == 3;
		c->resp_len = (uint32_t)snprintf(c->resp, sizeof(c->resp),
			"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
			"%s", c->leak ? 40 : 41, c->leak ? "root:x:0:0:root:/root:/bin/bash\nxxxxxxxx" :
			"all is well with the world, nothing here.");
	}
	e->started++;
	return true;
}

/* Segment size of a connection's descriptor: 100-1448 bytes, deterministic. */
static uint32_t seg_len(const struct conn *c)
{
	return 100 + (uint32_t)((c->id * 2654435761u + c->off * 40503u) % 1349);
}

/* What the VNFs must have said about a finished connection. */
static void conn_check(struct env *e, const struct conn *c)
{
	static const unsigned int fam_id[] = { 0, 942, 941, 930, 932, 920 };
	const char *name = vnf_mix_family_name(c->fam);
	bool fw = !strcmp(e->kind[0], "fw");
	bool attack = c->fam != VNF_MIX_CLEAN;
	enum rules_set rules = c->rules;

	/*
	 * Opened before the SIGHUP but first judged after it: the VNF may
	 * have swapped the rules before it saw the connection.
	 */
	if (rules == RULES_A && c->first_back_phase != 0)
		rules = RULES_EITHER;
	if (rules == RULES_EITHER && c->denied && c->deny_rule >= 2003 &&
	    e->reload_phase == 1) {
		/*
		 * A rule only the new file has: from now on new connections
		 * must get the new rules.
		 */
		e->reload_phase = 2;
		printf("reload seen after %" PRIu64 " results\n", e->results);
	}

	if (c->denied)
		e->denied_conns++;
	if (attack)
		e->attack_conns++;
	else
		e->clean_conns++;
	if (fw) {
		if (c->dport == 8080)
			CHECK(c->denied && c->deny_rule == 2, "fw: conn %" PRIu64 " to 8080: denied %d"
			      " rule %u\n", c->id, c->denied, c->deny_rule);
		else
			CHECK(!c->denied, "fw: conn %" PRIu64 " to 80 denied by rule %u\n", c->id,
			      c->deny_rule);
		return;
	}
	if (!attack && c->leak) {
		CHECK(c->denied && c->deny_rule == 2006, "leaking response (conn %" PRIu64 "): "
		      "denied %d rule %u\n", c->id, c->denied, c->deny_rule);
		e->resp_denied += c->denied;
		return;
	}
	if (!attack) {
		CHECK(!c->denied, "clean request (conn %" PRIu64 ") denied by %s rule %u\n", c->id,
		      c->deny_vnf < e->nv ? e->kind[c->deny_vnf] : "?", c->deny_rule);
		return;
	}
	if (rules == RULES_A && c->fam > VNF_MIX_XSS) {
		/* The first ids rules know only sqli and xss. */
		CHECK(!c->denied, "%s attack (conn %" PRIu64 ") denied by %u before the reload\n",
		      name, c->id, c->deny_rule);
		return;
	}
	if (rules == RULES_EITHER && c->fam > VNF_MIX_XSS) {
		CHECK(!c->denied || c->deny_rule == 2000u + c->fam,
		      "%s attack (conn %" PRIu64 ") during the reload: rule %u\n", name, c->id,
		      c->deny_rule);
		return;
	}
	CHECK(c->denied, "%s attack (conn %" PRIu64 ") allowed\n", name, c->id);
	if (!c->denied)
		return;
	e->fam_denied[c->fam]++;
	if (!strcmp(e->kind[c->deny_vnf], "ids"))
		CHECK(c->deny_rule == 2000u + c->fam, "%s attack (conn %" PRIu64 "): ids rule %u\n",
		      name, c->id, c->deny_rule);
	else
		CHECK(c->deny_rule / 1000 == fam_id[c->fam], "%s attack (conn %" PRIu64
		      "): waf rule %u\n", name, c->id, c->deny_rule);
}

/* Take and check @chain's results; how many. */
static unsigned int take_results(struct env *e, uint32_t chain)
{
	struct ch_result res[32];
	unsigned int k = ch_psched_take(e->s, chain, res, 32);

	for (unsigned int i = 0; i < k; i++) {
		const struct ch_result *r = &res[i];
		uint32_t buf = r->pkt.buf;
		struct conn *c;
		uint64_t want;

		CHECK(buf < NBUFS, "result with buffer %u\n", buf);
		if (buf >= NBUFS)
			continue;
		CHECK(r->chain == chain &&
		      chh_order_back(&e->order[chain], r->pkt.cookie, r->pkt.conn_id, &want),
		      "chain %u conn %" PRIu64 ": got cookie %" PRIu64 ", expected %" PRIu64 "\n",
		      chain, r->pkt.conn_id, r->pkt.cookie, want);
		CHECK(!memcmp(&r->pkt, &e->sub[buf], sizeof(r->pkt)), "descriptor %" PRIu64
		      " changed\n", r->pkt.cookie);
		e->results++;
		c = &e->conns[e->buf_conn[buf]];
		CHECK(c->id == r->pkt.conn_id, "result of conn %" PRIu64 " for slot of %" PRIu64 "\n",
		      r->pkt.conn_id, c->id);
		if (r->answer) {
			/* Only the waf answers, only for a Deny, with a bounded HTTP 403/400. */
			CHECK(r->verdict == CH_DENY && r->deny_vnf < e->nv &&
			      !strcmp(e->kind[r->deny_vnf], "waf") && r->incident &&
			      r->answer_len > 12 && r->answer_len <= VNF_ANSWER_MAX &&
			      (!memcmp(r->answer, "HTTP/1.1 403 ", 13) ||
			       !memcmp(r->answer, "HTTP/1.1 400 ", 13)),
			      "conn %" PRIu64 ": bad answer (%u bytes, incident %08x)\n", c->id,
			      r->answer_len, r->incident);
			e->answers++;
			free(r->answer);
		}
		free(r->alert_msg);	/* ids alert rules pass with an Alert (vnf_proto.h) */
		if (r->verdict == CH_DENY && !c->denied) {
			CHECK(r->reason == CH_REASON_RULE, "conn %" PRIu64 ": deny reason %u\n", c->id,
			      r->reason);
			c->denied = true;
			c->deny_vnf = r->deny_vnf;
			c->deny_rule = r->deny_rule;
		}
		if (!c->first_back) {
			c->first_back = true;
			c->first_back_phase = e->reload_phase;
		}
		c->inflight--;
		e->freebuf[e->nfree++] = buf;
		if (c->off == c->len && c->inflight == 0 &&
		    (c->denied || c->resp_off == c->resp_len)) {
			if (c->flow >= 0)
				ch_flow_close(e->flows, (uint32_t)c->flow,
					      ch_psched_counters(e->s, 0)->arrivals,
					      ch_psched_counters(e->s, 1)->arrivals);
			conn_check(e, c);
			e->finished++;
			c->id = 0;
		}
	}
	return k;
}

static bool submit_one(struct env *e, struct conn *c, uint32_t slot)
{
	/* The response once the whole request came back allowed. */
	bool resp = c->off == c->len;
	uint32_t len = resp ? c->resp_len - c->resp_off : seg_len(c), buf;
	uint32_t chain = resp ? 1 : 0;
	struct ch_pkt p;

	if (!e->nfree)
		return false;
	if (!resp && len > c->len - c->off)
		len = c->len - c->off;
	buf = e->freebuf[e->nfree - 1];
	memcpy(tcr_region_slot(e->data, buf), resp ? c->resp + c->resp_off : c->req + c->off, len);
	memset(&p, 0, sizeof(p));
	p.cookie = e->next_cookie;
	p.conn_id = c->id;
	p.seq = resp ? c->resp_off : c->off;
	p.region = 0;
	p.buf = buf;
	p.len = len;
	p.flow = c->flow >= 0 ? (uint32_t)c->flow : TCR_FLOW_NONE;
	p.family = 4;
	p.l4proto = 6;
	p.tcp_flags = 0x18;
	p.sport = c->sport;
	p.dport = c->dport;
	p.saddr[0] = 198, p.saddr[1] = 18, p.saddr[2] = (uint8_t)((c->sport - 20000) >> 8);
	p.saddr[3] = (uint8_t)(c->sport - 20000);
	p.daddr[0] = 10, p.daddr[3] = 1;
	if (resp) {
		/* Server -> client: the 5-tuple the other way round. */
		uint8_t a[16];

		memcpy(a, p.saddr, 16);
		memcpy(p.saddr, p.daddr, 16);
		memcpy(p.daddr, a, 16);
		p.sport = c->dport;
		p.dport = c->sport;
	}
	p.tsc = tcr_tsc_now();
	if (ch_psched_push(e->s, chain, &p, 1) != 1)
		return false;
	e->nfree--;
	e->next_cookie++;
	e->sub[buf] = p;
	e->buf_conn[buf] = slot;
	chh_order_push(&e->order[chain], p.cookie, p.conn_id);
	e->submitted++;
	if (resp)
		c->resp_off += len;
	else
		c->off += len;
	c->inflight++;
	return true;
}

static void write_text(const char *path, const char *src)
{
	char tmp[400], buf[65536];
	size_t n;
	FILE *in = fopen(src, "re"), *out;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	out = fopen(tmp, "we");
	if (!in || !out) {
		printf("FAIL: copy %s: %s\n", src, strerror(errno));
		exit(1);
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	if (fclose(out) || rename(tmp, path)) {
		printf("FAIL: write %s\n", path);
		exit(1);
	}
}

/* reload: the VNF's rule file, SIGHUP at a third of the run, a broken file at two thirds. */
static char live_rules[300];

static void reload_step(struct env *e)
{
	if (e->reload_phase == 0 && e->started >= e->target / 3) {
		write_text(live_rules, e->ids_rules2);
		e->hup_results = e->results;
		kill(e->pid[0], SIGHUP);
		e->reload_phase = 1;
		printf("SIGHUP after %" PRIu64 " results\n", e->results);
	} else if (e->reload_phase == 2 && e->started >= 2 * e->target / 3) {
		FILE *f = fopen(live_rules, "we");

		/* Broken (unsupported option): the VNF must keep the rules it has. */
		fprintf(f, "drop tcp any any -> any any (msg:\"x\"; content:\"GET\"; "
			"threshold:type limit, track by_src, count 1, seconds 60; sid:3000;)\n");
		fclose(f);
		kill(e->pid[0], SIGHUP);
		e->reload_phase = 3;
		printf("broken file and SIGHUP after %" PRIu64 " results\n", e->results);
	}
}

static void pump(struct env *e, int secs, bool reload)
{
	uint64_t deadline = chh_now_ns() + (uint64_t)secs * 1000000000ull;

	while (e->finished < e->target) {
		bool moved = false;
		uint64_t now;

		for (int i = 0; i < OPEN; i++) {
			struct conn *c = &e->conns[i];

			if (!c->id && e->started < e->target && c->inflight == 0 &&
			    !conn_open(e, c))
				continue;
			if (c->id && (c->off < c->len ||
				      (c->inflight == 0 && !c->denied && c->resp_off < c->resp_len)) &&
			    submit_one(e, c, (uint32_t)i))
				moved = true;
		}
		/* The scheduler's turn: admits the submits, releases results. */
		if (ch_psched_poll(e->s))
			moved = true;
		if (take_results(e, 0) + take_results(e, 1))
			moved = true;
		if (e->flows && ch_flow_reclaim(e->flows, ch_psched_counters(e->s, 0)->finished,
						 ch_psched_counters(e->s, 1)->finished))
			moved = true;	/* room for connections to open */
		if (reload)
			reload_step(e);
		now = chh_now_ns();
		if (now > deadline) {
			CHECK(0, "timed out: %" PRIu64 " of %" PRIu64 " connections finished\n",
			      e->finished, e->target);
			break;
		}
		if (!moved)
			chh_loop_sleep(&e->loop, deadline - now);
	}
}

static void finish(struct env *e)
{
	struct ch_vnf_info info;

	CHECK(ch_psched_in_flight(e->s) == 0, "%u descriptors still in flight\n",
	      ch_psched_in_flight(e->s));
	CHECK(e->nfree == NBUFS, "%u data buffers not returned\n", NBUFS - e->nfree);
	chh_loop_run_for(&e->loop, 20000000ull);	/* control messages come back */
	for (uint32_t v = 0; v < e->nv; v++) {
		ch_psched_vnf_info(e->s, v, &info);
		CHECK(!info.failed && info.outstanding == 0 && info.bad_verdicts == 0,
		      "vnf %s: failed %d, %u outstanding, %" PRIu64 " bad verdicts\n", e->kind[v],
		      info.failed, info.outstanding, info.bad_verdicts);
	}
	for (uint32_t v = 0; v < e->nv; v++) {
		struct vnf_null_stats st;
		int status, err;

		ch_psched_vnf_set_pid(e->s, v, 0);
		status = chh_stop(e->pid[v], 5000);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "vnf %s: exit status %#x\n",
		      e->kind[v], status);
		err = chh_read_stats(e->spath[v], &st, NULL, 0);
		CHECK(!err, "vnf %s: no stats (%d)\n", e->kind[v], err);
		/* A single hop: every VNF of it sees every descriptor. */
		CHECK(err || st.packets == e->submitted, "vnf %s saw %" PRIu64 " descriptors of %"
		      PRIu64 "\n", e->kind[v], st.packets, e->submitted);
	}
	ch_psched_destroy(e->s);
	chh_loop_close(&e->loop);
	tcr_region_destroy(e->data);
	ch_flows_destroy(e->flows);
	chh_order_free(&e->order[0]);
	chh_order_free(&e->order[1]);
	if (e->responses)
		printf("%" PRIu64 " leaking responses denied on the out chain\n", e->resp_denied);
	if (e->flows)
		printf("%" PRIu64 " flow table entries opened (64 entries, conn ids reused)\n",
		       e->flows_opened);
	printf("%" PRIu64 " connections (%" PRIu64 " clean, %" PRIu64 " attacks), %" PRIu64
	       " descriptors, %" PRIu64 " connections denied; denied by family:", e->finished,
	       e->clean_conns, e->attack_conns, e->submitted, e->denied_conns);
	for (int f = 1; f < VNF_MIX_NFAMILIES; f++)
		printf(" %s %" PRIu64, vnf_mix_family_name((enum vnf_mix_family)f), e->fam_denied[f]);
	printf("; %" PRIu64 " with an HTTP answer; %d failed checks\n", e->answers, failures);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "vnf-bin", required_argument, NULL, 'b' },
		{ "dir", required_argument, NULL, 'd' },
		{ "ids-rules", required_argument, NULL, 'i' },
		{ "ids-rules2", required_argument, NULL, 'I' },
		{ "fw-rules", required_argument, NULL, 'f' },
		{ "threads", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct env *e = calloc(1, sizeof(*e));
	uint64_t n = 500;
	const char *sc;
	int c;

	if (!e)
		return 1;
	e->threads = 1;
	while ((c = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
		switch (c) {
		case 'b': e->bin = optarg; break;
		case 'd': e->dir = optarg; break;
		case 'i': e->ids_rules = optarg; break;
		case 'I': e->ids_rules2 = optarg; break;
		case 'f': e->fw_rules = optarg; break;
		case 't': e->threads = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'n': n = strtoull(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (optind + 1 != argc || !e->bin || !e->dir || n < 10 || !e->threads ||
	    e->threads > 8) {
		fprintf(stderr, "usage: vnf-drive SCENARIO --vnf-bin PATH --dir DIR [options]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	urcu_memb_register_thread();
	sc = argv[optind];
	if (!strcmp(sc, "flows"))
		e->use_flows = true;
	setup(e, n);
	e->reload_phase = 2;	/* one rule file from the start (reload: below) */
	if (!strcmp(sc, "ids") && e->ids_rules) {
		add_vnf(e, "ids", e->ids_rules);
	} else if (!strcmp(sc, "flows") && e->ids_rules) {
		add_vnf(e, "ids", e->ids_rules);
	} else if (!strcmp(sc, "resp") && e->ids_rules) {
		add_vnf(e, "ids", e->ids_rules);
		e->responses = true;
	} else if (!strcmp(sc, "waf")) {
		add_vnf(e, "waf", NULL);
	} else if (!strcmp(sc, "fw") && e->fw_rules) {
		add_vnf(e, "fw", e->fw_rules);
	} else if (!strcmp(sc, "par") && e->ids_rules) {
		add_vnf(e, "ids", e->ids_rules);
		add_vnf(e, "waf", NULL);
	} else if (!strcmp(sc, "reload") && e->ids_rules && e->ids_rules2) {
		snprintf(live_rules, sizeof(live_rules), "%s/live.rules", e->dir);
		write_text(live_rules, e->ids_rules);
		add_vnf(e, "ids", live_rules);
		e->reload_phase = 0;
	} else {
		fprintf(stderr, "vnf-drive: unknown scenario %s or missing rule files\n", sc);
		return 2;
	}
	set_chain(e, 0);
	if (e->responses)
		set_chain(e, 1);
	pump(e, 50, !strcmp(sc, "reload"));
	if (!strcmp(sc, "reload"))
		CHECK(e->reload_phase == 3, "reload: reached phase %d of 3\n", e->reload_phase);
	if (e->responses)
		CHECK(e->resp_denied > 0, "no leaking response denied\n");
	if (strcmp(sc, "fw"))
		for (int f = 1; f < VNF_MIX_NFAMILIES; f++)
			CHECK(e->fam_denied[f] > 0, "no %s attack denied\n",
			      vnf_mix_family_name((enum vnf_mix_family)f));
	finish(e);
	urcu_memb_unregister_thread();
	printf("%s: %s\n", sc, failures ? "FAILED" : "ok");
	free(e);
	return failures ? 1 : 0;
}
