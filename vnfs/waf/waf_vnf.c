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
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnf_kind.h"
#include "vnf_sjudge.h"
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
	char c[64], sv[64];

	(void)ctx;
	vnf_addr_str(s->family, s->client_addr, c, sizeof(c));
	vnf_addr_str(s->family, s->server_addr, sv, sizeof(sv));
	return waf_flow_create(engine, c, s->client_port, sv, s->server_port);
}

static void waf_flow_free(void *priv)
{
	waf_flow_destroy(priv);
}

/* CRS rule ids that only add up the anomaly score or report it. */
static bool crs_scoring(unsigned int id)
{
	return (id >= 949000 && id < 950000) || (id >= 959000 && id < 960000) ||
	       (id >= 980000 && id < 981000);
}

/* CRS attack families: 930 LFI ... 944 Java (not 920/921 protocol rules). */
static bool crs_attack(unsigned int id)
{
	return id >= 930000 && id < 945000;
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

static int waf_flow_judge(void *ctx, struct vnf_stream *s, enum vnf_sdir dir,
			  const uint8_t *p, uint32_t n, uint32_t *rule)
{
	struct waf_verdict v;

	(void)ctx;
	if (waf_flow_feed(s->priv, dir == VNF_TO_SERVER ? WAF_DIR_IN : WAF_DIR_OUT,
			  p, n, &v) != WAF_DENY)
		return VNF_VERDICT_ALLOW;
	*rule = waf_vnf_rule(&v);
	return VNF_VERDICT_DENY;
}

static const struct vnf_sjudge_ops waf_sjudge = {
	.name = "waf",
	.flow_create = waf_flow_open,
	.flow_free = waf_flow_free,
	.flow_feed = waf_flow_judge,
};

static void *waf_thread(const struct vnf_kind_opts *o)
{
	return vnf_sjudge_create(&waf_sjudge, o, NULL);
}

const struct vnf_kind vnf_kind_waf = {
	.name = "waf",
	.engine_load = waf_load,
	.engine_free = waf_free,
	.engine_count = waf_count,
	.thread_create = waf_thread,
	.thread_destroy = vnf_sjudge_destroy,
	.judge = vnf_sjudge_judge,
	.forget = vnf_sjudge_forget,
	.streams = vnf_sjudge_streams,
};
