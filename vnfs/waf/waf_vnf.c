// SPDX-License-Identifier: MIT
/*
 * The waf kind: vnfs/waf (OWASP CRS on libmodsecurity v3) on each
 * connection's HTTP/1.x streams.
 *
 * Engine = one waf_engine (reference counted by the library; each flow
 * holds one).  A new connection takes the thread's current engine and
 * keeps it until it ends, so after a reload open connections finish on
 * the old rules.
 *
 * --rules FILE (optional; default: Debian's CRS, blocking mode):
 *   - a vnfs/waf configuration file (`key = value` lines, waf_config.h) when
 *     its first line that is not blank or a comment looks like one;
 *   - otherwise a ModSecurity rule file (SecRule, SecRuleRemoveById ...),
 *     loaded after the CRS.
 * --paranoia N overrides the paranoia level of either.
 *
 * Deny rule id: the first CRS rule that matched in the denied transaction
 * (e.g. 942100 for an SQL injection), not the anomaly-score rule that
 * blocked it (949110/959100), which says nothing about the attack; the
 * deciding rule when nothing else matched (a parser violation: 920100 ...).
 *
 * Answer: a request denied before any byte of it passed gets, instead of
 * a reset, an HTTP 403 (a protocol violation: 400) with the deny page
 * (waf_answer.h; `deny_page` of the configuration file) and an incident
 * id, which the log line of the deny also prints; the TOE writes it to
 * the client and closes (vnf_proto.h VNF_VERDICT_ANSWER).  A deny in the
 * middle of a request whose beginning already reached the server, while
 * a response is under way, or of a response, stays a reset: the client
 * may already hold part of an answer.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnf_kind.h"
#include "vnf_sjudge.h"
#include "waf_answer.h"
#include "waf_config.h"
#include "waf_engine.h"
#include "waf_vnf.h"

bool waf_vnf_is_config(const char *path)
{
	char line[512];
	bool res = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		while (islower((unsigned char)*p) || *p == '_')
			p++;
		while (*p == ' ' || *p == '\t')
			p++;
		res = p != line && *p == '=';
		break;
	}
	fclose(f);
	return res;
}

/* A service thread's state beside its streams: the answer of its last Deny. */
struct waf_vnf_thread {
	uint64_t rnd;			/* xorshift state for incident ids */
	uint32_t ans_len, incident;
	char ans[WAF_ANSWER_MAX];
};

/*
 * A stream's state: its WAF flow and the deny page of the engine it was
 * opened on (the flow's engine reference keeps the page alive across a
 * reload).
 */
struct waf_vnf_flow {
	struct waf_flow *f;
	const char *page;
};

static void *waf_load(const struct vnf_kind_opts *o, char *err, size_t errlen)
{
	struct waf_config_file file;
	struct waf_config cfg = { 0 };
	const char *extra[1];
	struct waf_engine *e;
	bool have_file = false;

	memset(&file, 0, sizeof(file));
	if (o->rules && waf_vnf_is_config(o->rules)) {
		int r = waf_config_load(o->rules, &file, err, errlen);

		if (r) {
			waf_config_free(&file);
			errno = -r;
			return NULL;
		}
		cfg = file.cfg;
		have_file = true;
	} else if (o->rules) {
		extra[0] = o->rules;
		cfg.extra_rule_files = extra;
		cfg.n_extra_rule_files = 1;
	}
	if (o->paranoia)
		cfg.paranoia_level = o->paranoia;
	e = waf_engine_create(&cfg, err, errlen);
	if (have_file) {
		int saved = errno;

		waf_config_free(&file);
		errno = saved;
	}
	return e;
}

static void waf_free(void *e)
{
	waf_engine_put(e);
}

static unsigned int waf_count(const void *e)
{
	return waf_engine_rule_count(e);
}

static void *waf_flow_open(void *ctx, void *engine, const struct vnf_stream *s)
{
	struct waf_vnf_flow *wf;
	char c[64], sv[64];

	(void)ctx;
	wf = calloc(1, sizeof(*wf));
	if (!wf)
		return NULL;
	vnf_addr_str(s->family, s->client_addr, c, sizeof(c));
	vnf_addr_str(s->family, s->server_addr, sv, sizeof(sv));
	wf->f = waf_flow_create(engine, c, s->client_port, sv, s->server_port);
	if (!wf->f) {
		free(wf);
		return NULL;
	}
	wf->page = waf_engine_deny_page(engine);
	return wf;
}

static void waf_flow_free(void *priv)
{
	struct waf_vnf_flow *wf = priv;

	waf_flow_destroy(wf->f);
	free(wf);
}

/* CRS rule ids that only add up the anomaly score or report it. */
static bool crs_scoring(unsigned int id)
{
	return (id >= 949000 && id < 950000) || (id >= 959000 && id < 960000) ||
	       (id >= 980000 && id < 981000);
}

/*
 * CRS attack families: 930 LFI ... 944 Java (not 920/921 protocol rules),
 * and 950-954 data leakages in responses (whose transaction also holds
 * the request's warnings).
 */
static bool crs_attack(unsigned int id)
{
	return (id >= 930000 && id < 945000) || (id >= 950000 && id < 955000);
}

uint32_t waf_vnf_rule(const struct waf_verdict *v)
{
	/*
	 * A deny is the sum of several rules' scores.  Name the first attack
	 * family rule that matched (942100 for an SQL injection) rather than
	 * a protocol warning that happened to match first (920350, a numeric
	 * Host header, scores on almost every request to an address).
	 */
	for (unsigned int i = 0; i < v->n_matched; i++)
		if (crs_attack(v->matched[i]))
			return v->matched[i];
	for (unsigned int i = 0; i < v->n_matched; i++) {
		unsigned int id = v->matched[i];

		if (id != v->rule_id && !crs_scoring(id))
			return id;
	}
	return v->rule_id ? v->rule_id : VNF_RULE_ENGINE;
}

static uint32_t incident_next(struct waf_vnf_thread *th)
{
	uint32_t id;

	do {	/* xorshift64*, seeded per thread from getrandom: ids that name, not secrets */
		th->rnd ^= th->rnd >> 12;
		th->rnd ^= th->rnd << 25;
		th->rnd ^= th->rnd >> 27;
		id = (uint32_t)((th->rnd * 0x2545F4914F6CDD1Dull) >> 32);
	} while (!id);
	return id;
}

static int waf_flow_judge(void *ctx, struct vnf_stream *s, enum vnf_sdir dir,
			  const uint8_t *p, uint32_t n, uint32_t *rule)
{
	struct waf_vnf_thread *th = ctx;
	struct waf_vnf_flow *wf = s->priv;
	enum waf_dir wd = dir == VNF_TO_SERVER ? WAF_DIR_IN : WAF_DIR_OUT;
	/* Nothing of a request or response under way has passed: an answer cannot mix. */
	bool quiet = !waf_flow_denied(wf->f) && !waf_flow_in_message(wf->f, WAF_DIR_IN) &&
		     !waf_flow_in_message(wf->f, WAF_DIR_OUT);
	struct waf_verdict v;
	int status;

	th->ans_len = 0;
	if (waf_flow_feed(wf->f, wd, p, n, &v) != WAF_DENY)
		return VNF_VERDICT_ALLOW;
	*rule = waf_vnf_rule(&v);
	if (!quiet)
		return VNF_VERDICT_DENY;	/* a later chunk of a denied flow, or mid-message */
	th->incident = incident_next(th);
	status = waf_answer_status(&v);
	if (wd == WAF_DIR_IN && waf_flow_awaiting(wf->f) == 0)
		th->ans_len = (uint32_t)waf_answer_build(wf->page, status, th->incident,
							 th->ans, sizeof(th->ans));
	vnf_log_limited(20, "tochain-vnf: waf: conn %" PRIu64 ": denied (%s) rule %u status %d "
			"incident %08x: %s\n", s->conn_id, wd == WAF_DIR_IN ? "request" : "response",
			*rule, th->ans_len ? status : 0, th->incident, v.msg);
	return VNF_VERDICT_DENY;
}

static uint32_t waf_answer(void *ts, const uint8_t **p, uint32_t *incident)
{
	struct waf_vnf_thread *th = ((struct vnf_sjudge *)ts)->ctx;

	uint32_t n = th->ans_len;

	/* Once: a later Deny that never reached the engine (a gap) has none. */
	th->ans_len = 0;
	*p = (const uint8_t *)th->ans;
	*incident = th->incident;
	return n;
}

static void waf_thread_free(void *ctx)
{
	free(ctx);
}

static const struct vnf_sjudge_ops waf_sjudge = {
	.name = "waf",
	.flow_create = waf_flow_open,
	.flow_free = waf_flow_free,
	.flow_feed = waf_flow_judge,
	.ctx_free = waf_thread_free,
};

static void *waf_thread(const struct vnf_kind_opts *o)
{
	struct waf_vnf_thread *th = calloc(1, sizeof(*th));

	if (!th) {
		errno = ENOMEM;
		return NULL;
	}
	if (getrandom(&th->rnd, sizeof(th->rnd), GRND_NONBLOCK) != sizeof(th->rnd) || !th->rnd)
		th->rnd = 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)th;
	return vnf_sjudge_create(&waf_sjudge, o, th);
}

const struct vnf_kind vnf_kind_waf = {
	.name = "waf",
	.engine_load = waf_load,
	.engine_free = waf_free,
	.engine_count = waf_count,
	.thread_create = waf_thread,
	.thread_destroy = vnf_sjudge_destroy,
	.judge = vnf_sjudge_judge,
	.answer = waf_answer,
	.forget = vnf_sjudge_forget,
	.streams = vnf_sjudge_streams,
};
