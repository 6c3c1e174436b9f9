// SPDX-License-Identifier: MIT
/*
 * The ids kind: vnfs/ids (Snort subset on Hyperscan streaming) on each
 * connection's two byte streams.
 *
 * Engine = one ids_ruleset (reference counted by the library).  Each new
 * connection takes the thread's current ruleset; a connection keeps the
 * ruleset it started with until it ends (its flow holds a reference), so
 * after a SIGHUP reload connections already open go on with the old rules
 * and new ones get the new rules; the old ruleset is freed with its last
 * connection.
 *
 * Rule file: --rules FILE, Snort syntax (vnfs/ids/README.md); variables
 * (var/ipvar/portvar lines) from --vars FILE, as Snort users give them,
 * else from a `vars.conf` next to the rules when there is one.  Strict: any rule the
 * engine would skip (unsupported or malformed) refuses the whole file, with
 * its file:line, so that a typo never silently disables a rule.
 *
 * Verdicts: a drop/reject rule denies with its sid; alert rules are logged
 * (one stderr line each, rate-limited) and pass the data with an Alert
 * (vnf_proto.h VNF_VERDICT_ALERT: the first alert rule of the chunk, its
 * sid and msg), which the TOE counts and captures as evidence.  A gap in a stream (bytes
 * never inspected) denies with VNF_RULE_STREAM_GAP (the stream judge,
 * vnf_sjudge.h, which this kind plugs into).
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ids.h"
#include "vnf_check.h"
#include "vnf_kind.h"
#include "vnf_sjudge.h"

/* The variables file of @o: --vars, else vars.conf beside the rules, else NULL. */
static const char *ids_vars(const struct vnf_kind_opts *o, char *buf, size_t len)
{
	char dirbuf[4096];

	if (o->vars)
		return o->vars;
	snprintf(dirbuf, sizeof(dirbuf), "%s", o->rules);
	snprintf(buf, len, "%s/vars.conf", dirname(dirbuf));
	return access(buf, R_OK) == 0 ? buf : NULL;
}

/*
 * Where compiled rulesets are cached: $TOCHAIN_IDS_CACHE ("" for none),
 * else IDS_CACHE_DIR.  A reload of an unchanged file, a restart, and the
 * instance that follows a --check then skip the Hyperscan compile.
 */
#define IDS_CACHE_DIR "/var/cache/tochain/ids"

static const char *ids_cache_dir(void)
{
	const char *d = getenv("TOCHAIN_IDS_CACHE");

	if (!d)
		return IDS_CACHE_DIR;
	return *d ? d : NULL;
}

static void *ids_load(const struct vnf_kind_opts *o, char *err, size_t errlen)
{
	struct ids_diags diags = { 0 };
	struct ids_ruleset *rs;
	char vars[4200];

	if (!o->rules) {
		snprintf(err, errlen, "ids needs --rules FILE");
		errno = EINVAL;
		return NULL;
	}
	rs = ids_ruleset_load_cached(o->rules, ids_vars(o, vars, sizeof(vars)),
				     ids_cache_dir(), &diags);
	if (!rs) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", o->rules,
			 diags.n ? diags.msg[0] : strerror(e));
		ids_diags_free(&diags);
		errno = e;
		return NULL;
	}
	if (diags.n) {
		snprintf(err, errlen, "%s%s", diags.msg[0],
			 diags.n > 1 ? " (and more problems)" : "");
		ids_diags_free(&diags);
		ids_ruleset_put(rs);
		errno = EINVAL;
		return NULL;
	}
	return rs;
}

static void ids_free(void *e)
{
	ids_ruleset_put(e);
}

static unsigned int ids_count(const void *e)
{
	return (unsigned int)ids_ruleset_nrules(e);
}

/* The same load as ids_load, keeping every diagnostic rather than the first. */
static unsigned int ids_diagnose(const struct vnf_kind_opts *o,
				 void (*note)(void *arg, const char *msg), void *arg)
{
	struct ids_diags diags = { 0 };
	struct ids_ruleset *rs;
	char vars[4200];
	unsigned int n;

	if (!o->rules)
		return 0;
	rs = ids_ruleset_load_cached(o->rules, ids_vars(o, vars, sizeof(vars)),
				     ids_cache_dir(), &diags);
	for (size_t i = 0; i < diags.n; i++)
		note(arg, diags.msg[i]);
	for (size_t i = 0; i < diags.nna; i++)
		vnf_check_not_applicable(arg, diags.na[i]);
	n = (unsigned int)diags.n;
	ids_diags_free(&diags);
	if (rs) {
		vnf_check_kept(arg, (unsigned int)ids_ruleset_nrules(rs));
		ids_ruleset_put(rs);
	}
	return n;
}

/* A service thread's context: its scanning worker and the last Alert's message. */
struct ids_vctx {
	struct ids_worker *w;
	uint32_t msg_len;
	char msg[VNF_ALERT_MSG_MAX];
};

/*
 * The verdict of @v: Deny (drop/reject, its sid in *@rule), else Alert
 * when an alert rule matched (the first one's sid, its msg kept in @x for
 * ids_alert_msg), else Allow.
 */
static uint32_t ids_verdict_of(struct ids_vctx *x, const struct ids_verdict *v, uint32_t *rule)
{
	size_t n;

	if (v->decision == IDS_DENY) {
		*rule = v->deny_rule ? v->deny_rule->sid : VNF_RULE_ENGINE;
		return VNF_VERDICT_DENY;
	}
	if (!v->nalerts)
		return VNF_VERDICT_ALLOW;
	*rule = v->alerts[0]->sid;
	n = v->alerts[0]->msg ? strlen(v->alerts[0]->msg) : 0;
	x->msg_len = (uint32_t)(n < sizeof(x->msg) ? n : sizeof(x->msg));
	memcpy(x->msg, v->alerts[0]->msg, x->msg_len);
	return VNF_VERDICT_ALERT;
}

static void *ids_flow_open(void *ctx, void *engine, const struct vnf_stream *s)
{
	struct ids_flow_key key = { .family = s->family == 6 ? AF_INET6 : AF_INET,
				    .client_port = s->client_port,
				    .server_port = s->server_port };

	(void)ctx;
	memcpy(key.client_addr, s->client_addr, 16);
	memcpy(key.server_addr, s->server_addr, 16);
	return ids_flow_create(engine, &key);
}

static void ids_flow_free(void *priv)
{
	ids_flow_destroy(priv);
}

static void log_alerts(const struct ids_verdict *v, const struct vnf_stream *s)
{
	char c[64], sv[64];

	if (!v->nalerts)
		return;
	vnf_addr_str(s->family, s->client_addr, c, sizeof(c));
	vnf_addr_str(s->family, s->server_addr, sv, sizeof(sv));
	for (unsigned int i = 0; i < v->nalerts; i++)
		vnf_log_limited(20, "tochain-vnf: ids alert sid %u: %s (conn %" PRIu64
				" %s:%u > %s:%u)\n", v->alerts[i]->sid, v->alerts[i]->msg,
				s->conn_id, c, s->client_port, sv, s->server_port);
}

/* @ctx: the thread's struct ids_vctx (the worker: scratch of the scans). */
static int ids_flow_feed(void *ctx, struct vnf_stream *s, enum vnf_sdir dir,
			 const uint8_t *p, uint32_t n, uint32_t *rule)
{
	struct ids_vctx *x = ctx;
	struct ids_verdict v;

	if (ids_flow_scan(x->w, s->priv, dir == VNF_TO_SERVER ? IDS_TO_SERVER : IDS_TO_CLIENT,
			  p, n, &v))
		return -EIO;
	log_alerts(&v, s);
	return (int)ids_verdict_of(x, &v, rule);
}

/*
 * A UDP datagram: the udp rules, on a private copy (one read of the
 * guest's bytes; the engine looks twice).  The server is the receiver of
 * the lower port (as for streams, vnf_stream.c); a deny drops this
 * datagram only.
 */
static uint32_t ids_judge_datagram(struct ids_vctx *x, struct ids_ruleset *rs,
				   const struct vnf_pkt *pk, uint32_t *rule)
{
	const struct tcr_desc *d = &pk->d;
	bool to_server = d->dport != d->sport ? d->dport < d->sport : d->chain == 0;
	struct ids_flow_key key = { .family = d->family == 6 ? AF_INET6 : AF_INET };
	struct ids_verdict v;
	uint8_t *copy = NULL;
	int rc;

	if (pk->len && !pk->data)
		return VNF_VERDICT_ALLOW;	/* unmapped: nothing to read */
	key.client_port = to_server ? d->sport : d->dport;
	key.server_port = to_server ? d->dport : d->sport;
	memcpy(key.client_addr, to_server ? d->saddr : d->daddr, 16);
	memcpy(key.server_addr, to_server ? d->daddr : d->saddr, 16);
	if (pk->len) {
		copy = malloc(pk->len);
		if (!copy)
			goto fail;
		memcpy(copy, pk->data, pk->len);
	}
	rc = ids_datagram_scan(x->w, rs, &key, to_server ? IDS_TO_SERVER : IDS_TO_CLIENT,
			       copy, pk->len, &v);
	free(copy);
	if (rc)
		goto fail;
	if (v.nalerts) {
		struct vnf_stream s = { .conn_id = d->conn_id, .family = d->family,
					.client_port = key.client_port,
					.server_port = key.server_port };

		memcpy(s.client_addr, key.client_addr, 16);
		memcpy(s.server_addr, key.server_addr, 16);
		log_alerts(&v, &s);
	}
	return ids_verdict_of(x, &v, rule);
fail:
	*rule = VNF_RULE_ENGINE;
	return VNF_VERDICT_DENY;
}

/* Streams through the stream judge; UDP datagrams one by one. */
static uint32_t ids_judge(void *p, void *engine, const struct vnf_pkt *pk,
			  const struct vnf_flow *f, uint32_t *rule)
{
	struct vnf_sjudge *sj = p;

	if (pk->d.l4proto == IPPROTO_UDP) {
		*rule = 0;
		return ids_judge_datagram(sj->ctx, engine, pk, rule);
	}
	return vnf_sjudge_judge(p, engine, pk, f, rule);
}

static uint32_t ids_alert_msg(void *p, const char **msg)
{
	struct ids_vctx *x = ((struct vnf_sjudge *)p)->ctx;

	*msg = x->msg;
	return x->msg_len;
}

static void ids_vctx_free(void *ctx)
{
	struct ids_vctx *x = ctx;

	ids_worker_destroy(x->w);
	free(x);
}

static const struct vnf_sjudge_ops ids_sjudge = {
	.name = "ids",
	.flow_create = ids_flow_open,
	.flow_free = ids_flow_free,
	.flow_feed = ids_flow_feed,
	.ctx_free = ids_vctx_free,
};

static void *ids_thread(const struct vnf_kind_opts *o)
{
	struct ids_vctx *x = calloc(1, sizeof(*x));

	if (x)
		x->w = ids_worker_create();
	if (!x || !x->w) {
		free(x);
		errno = ENOMEM;
		return NULL;
	}
	return vnf_sjudge_create(&ids_sjudge, o, x);	/* frees x on failure */
}

const struct vnf_kind vnf_kind_ids = {
	.name = "ids",
	.needs_rules = true,
	.engine_load = ids_load,
	.engine_free = ids_free,
	.engine_count = ids_count,
	.diagnose = ids_diagnose,
	.thread_create = ids_thread,
	.thread_destroy = vnf_sjudge_destroy,
	.judge = ids_judge,
	.alert_msg = ids_alert_msg,
	.forget = vnf_sjudge_forget,
	.streams = vnf_sjudge_streams,
};
