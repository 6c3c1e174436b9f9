// SPDX-License-Identifier: MIT
/* The stream judge of the ids and waf kinds; see vnf_sjudge.h. */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "tochain/ch_flow.h"
#include "vnf_sjudge.h"

struct vnf_sjudge *vnf_sjudge_create(const struct vnf_sjudge_ops *ops,
				     const struct vnf_kind_opts *o, void *ctx)
{
	struct vnf_sjudge *sj = calloc(1, sizeof(*sj));

	if (!sj)
		goto out_ctx;
	sj->ops = ops;
	sj->ctx = ctx;
	sj->st = vnf_streams_create(o->max_streams, ops->name, ops->flow_free);
	if (!sj->st)
		goto out_free;
	return sj;
out_free:
	free(sj);
out_ctx:
	if (ctx && ops->ctx_free)
		ops->ctx_free(ctx);
	errno = ENOMEM;
	return NULL;
}

void vnf_sjudge_destroy(void *p)
{
	struct vnf_sjudge *sj = p;

	vnf_streams_destroy(sj->st);
	if (sj->ctx && sj->ops->ctx_free)
		sj->ops->ctx_free(sj->ctx);
	free(sj->buf);
	free(sj);
}

uint32_t vnf_sjudge_judge(void *p, void *engine, const struct vnf_pkt *pk,
			  const struct vnf_flow *f, uint32_t *rule)
{
	struct vnf_sjudge *sj = p;
	struct vnf_stream *s;
	enum vnf_sdir dir;
	uint32_t skip, n, verdict = VNF_VERDICT_ALLOW;
	bool created;

	*rule = 0;
	if (pk->d.l4proto != IPPROTO_TCP)
		return VNF_VERDICT_ALLOW;	/* byte streams only: see vnfs/runtime/README.md */
	s = vnf_stream_get(sj->st, pk, f, &created);
	if (!s)
		goto fail;
	if (!s->priv) {
		s->priv = sj->ops->flow_create(sj->ctx, engine, s);
		if (!s->priv) {
			vnf_stream_drop(sj->st, s);
			goto fail;
		}
	}
	dir = vnf_stream_dir(s, pk);
	if (vnf_stream_span(s, dir, pk, &skip)) {
		vnf_log_limited(5, "tochain-vnf: %s: conn %" PRIu64 ": bytes before offset %"
				PRIu64 " never seen: refused\n", sj->ops->name, s->conn_id,
				(uint64_t)pk->d.seq);
		*rule = VNF_RULE_STREAM_GAP;
		return VNF_VERDICT_DENY;
	}
	n = pk->len - skip;
	if (n) {
		int v;

		/* One read of the guest's bytes: the engine may look twice, and
		 * the verdict holds for these bytes. */
		if (n > sj->cap) {
			uint8_t *b = realloc(sj->buf, n);

			if (!b)
				goto fail;
			sj->buf = b;
			sj->cap = n;
		}
		memcpy(sj->buf, pk->data + skip, n);
		v = sj->ops->flow_feed(sj->ctx, s, dir, sj->buf, n, rule);
		if (v < 0)
			goto fail;
		verdict = (uint32_t)v;
	}
	if (f && f->state == CH_FLOW_CLOSED)
		vnf_stream_drop(sj->st, s);
	return verdict;
fail:
	*rule = VNF_RULE_ENGINE;
	return VNF_VERDICT_DENY;
}

void vnf_sjudge_forget(void *p, uint64_t conn_id)
{
	struct vnf_sjudge *sj = p;

	vnf_stream_forget(sj->st, conn_id);
}

struct vnf_streams *vnf_sjudge_streams(void *p)
{
	return ((struct vnf_sjudge *)p)->st;
}
