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
 * from a `vars.conf` next to it when there is one.  Strict: any rule the
 * engine would skip (unsupported or malformed) refuses the whole file, with
 * its file:line, so that a typo never silently disables a rule.
 *
 * Verdicts: a drop/reject rule denies with its sid; alert rules are logged
 * (one stderr line each, rate-limited) and allow.  A gap in a stream (bytes
 * never inspected) denies with VNF_RULE_STREAM_GAP.
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

#include "tochain/ch_flow.h"
#include "ids.h"
#include "vnf_kind.h"
#include "vnf_stream.h"

struct ids_ts {
	struct ids_worker *w;
	struct vnf_streams *st;
	uint8_t *buf;			/* private copy of a payload */
	size_t cap;
};

static void *ids_load(const struct vnf_kind_opts *o, char *err, size_t errlen)
{
	struct ids_diags diags = { 0 };
	struct ids_ruleset *rs;
	char dirbuf[4096], vars[4200];
	const char *vp = NULL;

	if (!o->rules) {
		snprintf(err, errlen, "ids needs --rules FILE");
		errno = EINVAL;
		return NULL;
	}
	snprintf(dirbuf, sizeof(dirbuf), "%s", o->rules);
	snprintf(vars, sizeof(vars), "%s/vars.conf", dirname(dirbuf));
	if (access(vars, R_OK) == 0)
		vp = vars;
	rs = ids_ruleset_load(o->rules, vp, &diags);
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

static void free_flow(void *priv)
{
	ids_flow_destroy(priv);
}

static void ids_thread_destroy(void *p)
{
	struct ids_ts *ts = p;

	vnf_streams_destroy(ts->st);
	ids_worker_destroy(ts->w);
	free(ts->buf);
	free(ts);
}

static void *ids_thread(const struct vnf_kind_opts *o)
{
	struct ids_ts *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->w = ids_worker_create();
	ts->st = vnf_streams_create(o->max_streams, "ids", free_flow);
	if (!ts->w || !ts->st) {
		ids_thread_destroy(ts);
		errno = ENOMEM;
		return NULL;
	}
	return ts;
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

static uint32_t ids_judge(void *p, void *engine, const struct vnf_pkt *pk,
			  const struct vnf_flow *f, uint32_t *rule)
{
	struct ids_ts *ts = p;
	struct ids_verdict v;
	struct vnf_stream *s;
	enum vnf_sdir dir;
	uint32_t skip, n, verdict = VNF_VERDICT_ALLOW;
	bool created;

	*rule = 0;
	if (pk->d.l4proto != IPPROTO_TCP)
		return VNF_VERDICT_ALLOW;	/* byte streams only: see vnfs/runtime/README.md */
	s = vnf_stream_get(ts->st, pk, f, &created);
	if (!s)
		goto fail;
	if (!s->priv) {
		struct ids_flow_key key = { .family = s->family == 6 ? AF_INET6 : AF_INET,
					    .client_port = s->client_port,
					    .server_port = s->server_port };

		memcpy(key.client_addr, s->client_addr, 16);
		memcpy(key.server_addr, s->server_addr, 16);
		s->priv = ids_flow_create(engine, &key);
		if (!s->priv) {
			vnf_stream_drop(ts->st, s);
			goto fail;
		}
	}
	dir = vnf_stream_dir(s, pk);
	if (vnf_stream_span(s, dir, pk, &skip)) {
		vnf_log_limited(5, "tochain-vnf: ids: conn %" PRIu64 ": bytes before offset %"
				PRIu64 " never seen: refused\n", s->conn_id, (uint64_t)pk->d.seq);
		*rule = VNF_RULE_STREAM_GAP;
		return VNF_VERDICT_DENY;
	}
	n = pk->len - skip;
	if (n) {
		/* One read of the guest's bytes; the engine may look twice. */
		if (n > ts->cap) {
			uint8_t *b = realloc(ts->buf, n);

			if (!b)
				goto fail;
			ts->buf = b;
			ts->cap = n;
		}
		memcpy(ts->buf, pk->data + skip, n);
		if (ids_flow_scan(ts->w, s->priv, dir == VNF_TO_SERVER ? IDS_TO_SERVER :
				  IDS_TO_CLIENT, ts->buf, n, &v))
			goto fail;
		log_alerts(&v, s);
		if (v.decision == IDS_DENY) {
			*rule = v.deny_rule ? v.deny_rule->sid : VNF_RULE_ENGINE;
			verdict = VNF_VERDICT_DENY;
		}
	}
	if (f && f->state == CH_FLOW_CLOSED)
		vnf_stream_drop(ts->st, s);
	return verdict;
fail:
	*rule = VNF_RULE_ENGINE;
	return VNF_VERDICT_DENY;
}

static void ids_forget(void *p, uint64_t conn_id)
{
	struct ids_ts *ts = p;

	vnf_stream_forget(ts->st, conn_id);
}

static struct vnf_streams *ids_streams(void *p)
{
	return ((struct ids_ts *)p)->st;
}

const struct vnf_kind vnf_kind_ids = {
	.name = "ids",
	.needs_rules = true,
	.engine_load = ids_load,
	.engine_free = ids_free,
	.thread_create = ids_thread,
	.thread_destroy = ids_thread_destroy,
	.judge = ids_judge,
	.forget = ids_forget,
	.streams = ids_streams,
};
