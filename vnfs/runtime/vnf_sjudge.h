/* SPDX-License-Identifier: MIT */
/*
 * The stream judge (vnf_sjudge_*): judge() of the kinds that inspect each
 * connection's two byte streams (ids, waf), written once over vnf_stream.h,
 * with the engine behind a small per-kind table (struct vnf_sjudge_ops).
 * Private to vnfs/.
 *
 * For one descriptor: only TCP is inspected (anything else is allowed
 * unseen); its stream is found or created (the kind's flow_create gives a
 * new stream its engine state, on the engine the thread judges with now);
 * bytes already inspected are skipped, a gap denies with
 * VNF_RULE_STREAM_GAP (one rate-limited line "tochain-vnf: KIND: conn N:
 * bytes before offset O never seen: refused"); the new bytes are copied
 * once into a per-thread buffer (the guest may write its region while it
 * is read) and handed to the kind's flow_feed; a descriptor finding its
 * flow CLOSED frees the stream after its verdict.  Any failure (memory,
 * an engine error) denies with VNF_RULE_ENGINE: fail closed.
 *
 * A struct vnf_sjudge is the kind's per-thread state (vnf_kind.h
 * thread_create); its judge, forget, streams and thread_destroy are the
 * vnf_sjudge_* functions below.  THREADS: one per service thread, no locks.
 */
#ifndef TOCHAIN_VNF_SJUDGE_H
#define TOCHAIN_VNF_SJUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "vnf.h"
#include "vnf_kind.h"
#include "vnf_stream.h"

struct vnf_sjudge_ops {
	const char *name;		/* the kind, in log lines */
	/*
	 * Engine state of the new stream @s (client, server known), on
	 * @engine; NULL on failure.  @ctx: the thread's (vnf_sjudge_create).
	 */
	void *(*flow_create)(void *ctx, void *engine, const struct vnf_stream *s);
	/* Free what flow_create made (stream freed, evicted or swept). */
	void (*flow_free)(void *priv);
	/*
	 * Inspect @n new bytes @p (a private copy) of @s in direction @dir:
	 * VNF_VERDICT_ALLOW, VNF_VERDICT_DENY with *rule, or -errno (an engine
	 * error: the descriptor is denied with VNF_RULE_ENGINE).
	 */
	int (*flow_feed)(void *ctx, struct vnf_stream *s, enum vnf_sdir dir,
			 const uint8_t *p, uint32_t n, uint32_t *rule);
	/* Free @ctx (thread_destroy); may be NULL. */
	void (*ctx_free)(void *ctx);
};

struct vnf_sjudge {
	const struct vnf_sjudge_ops *ops;
	void *ctx;			/* the kind's per-thread state */
	struct vnf_streams *st;
	uint8_t *buf;			/* private copy of a payload */
	size_t cap;
};

/*
 * A thread's judge with at most o->max_streams streams; @ctx (may be NULL)
 * is handed to the ops and, from now on, owned: freed by ops->ctx_free
 * here on failure too.  NULL + errno (ENOMEM).
 */
struct vnf_sjudge *vnf_sjudge_create(const struct vnf_sjudge_ops *ops,
				     const struct vnf_kind_opts *o, void *ctx);
/* vnf_kind thread_destroy, judge, forget, streams of a stream kind. */
void vnf_sjudge_destroy(void *sj);
uint32_t vnf_sjudge_judge(void *sj, void *engine, const struct vnf_pkt *pk,
			  const struct vnf_flow *f, uint32_t *rule);
void vnf_sjudge_forget(void *sj, uint64_t conn_id);
struct vnf_streams *vnf_sjudge_streams(void *sj);

#endif /* TOCHAIN_VNF_SJUDGE_H */
