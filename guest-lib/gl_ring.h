/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: the channel's rings as the runtime
 * uses them, inline because every buffer of the data path passes here
 * (no .c file): DONE is batched in gl_rt.done and flushed in bursts, TX
 * takes the buffers of one send step in one burst.  mu held.  The TOE is
 * woken only when the ring says it sleeps (tcr_ring_prod_kick_needed, tochain/ring.h).
 */
#ifndef TOCHAIN_GL_RING_H
#define TOCHAIN_GL_RING_H

#include <stdint.h>

#include <tochain/desc.h>

#include "gl_rt.h"
#include "gl_wake.h"

/*
 * After a publication: wake the TOE if it sleeps.  One doorbell serves
 * TX and DONE, so both flags come down (|, not ||) and it rings once.
 */
static inline void gl_ring_kick(struct gl_rt *rt)
{
	if (tcr_ring_prod_kick_needed(&rt->ch.ring[TCR_CH_TX]) |
	    tcr_ring_prod_kick_needed(&rt->ch.ring[TCR_CH_DONE]))
		gl_wake_host(&rt->wake);
}

/* Publish the batched DONE buffers. */
static inline void gl_ring_done_flush(struct gl_rt *rt)
{
	uint32_t off = 0;

	while (off < rt->ndone) {
		int k = tcr_ring_enqueue_burst(&rt->ch.ring[TCR_CH_DONE], rt->done + off,
					       rt->ndone - off);
		if (k <= 0)
			break;	/* cannot happen: the ring holds every buffer */
		off += (uint32_t)k;
	}
	rt->ndone = 0;
	if (off)
		gl_ring_kick(rt);
}

/* Batch RX buffer @idx for DONE (flushed when the batch is full). */
static inline void gl_ring_done_add(struct gl_rt *rt, uint32_t idx)
{
	rt->done[rt->ndone++] = idx;
	if (rt->ndone == sizeof(rt->done) / sizeof(rt->done[0]))
		gl_ring_done_flush(rt);
}

/* Describe buffer @idx: a request, or @len bytes of socket @sock with @flags (SRPC_TX_*). */
static inline void gl_ring_describe(struct gl_rt *rt, uint32_t idx, enum tcr_op op, uint32_t sock,
				    uint32_t len, uint16_t flags)
{
	struct tcr_desc d = { 0 };

	d.flags = flags;
	d.slot = idx;
	d.len = len;
	d.op = (uint16_t)op;
	d.conn_id = sock;
	d.l4proto = 6;
	tcr_desc_store(rt->r, idx, &d);
}

/*
 * Publish the described buffers @idx[@n] on TX in one burst and wake the
 * TOE at most once, if it sleeps.  A full ring breaks the channel.
 */
static inline void gl_ring_publish(struct gl_rt *rt, const uint32_t *idx, uint32_t n)
{
	if (tcr_ring_enqueue_burst(&rt->ch.ring[TCR_CH_TX], idx, n) != (int)n) {
		rt->broken = true;
		return;
	}
	gl_ring_kick(rt);
}

/* Send buffer @idx on TX (gl_ring_describe, gl_ring_publish). */
static inline void gl_ring_submit_flags(struct gl_rt *rt, uint32_t idx, enum tcr_op op,
					uint32_t sock, uint32_t len, uint16_t flags)
{
	gl_ring_describe(rt, idx, op, sock, len, flags);
	gl_ring_publish(rt, &idx, 1);
}

static inline void gl_ring_submit(struct gl_rt *rt, uint32_t idx, enum tcr_op op, uint32_t sock,
				  uint32_t len)
{
	gl_ring_submit_flags(rt, idx, op, sock, len, 0);
}

#endif /* TOCHAIN_GL_RING_H */
