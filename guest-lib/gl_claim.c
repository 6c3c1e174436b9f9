// SPDX-License-Identifier: MIT
/*
 * Streams shared after fork: who may read them, and whose the bytes
 * received before the fork are (the TOE's side: host-toe/toe/toe_sock.h,
 * "SOCKET OWNERSHIP").
 *
 * OWNERSHIP.  fork gives the child a reference to every socket; for each
 * connected stream, both holders then read only after a TAKE made them the
 * owner (need_take).  Before fork() the parent freezes each such stream:
 * the buffers it holds (rxq, pre) stay queued but are marked the fork's
 * (frozen_*), and a private copy of their bytes (fk) goes with the child,
 * whose own queues start empty (gl_claim_inherit).  The TOE answers the
 * first TAKE after the fork with EV_OWNER b=1: that holder keeps the
 * fork-time data (the parent its frozen buffers, a child its copy, which
 * becomes pre); every later owner drops it (gl_claim_owner_event).
 * EV_OWNER a=0 tells a holder that another one took over.
 *
 * A TAKE that waits for its answer is the receive path's (gl_recv.c: it
 * needs a call, and this file sits below the channel, whose pump calls
 * gl_claim_owner_event); poll posts one without waiting here.  All under
 * mu (gl_rt.c).
 */
#include <stdlib.h>
#include <string.h>

#include <tochain/srpc.h>

#include "gl_claim.h"
#include "gl_ring.h"
#include "gl_sock.h"

/*
 * The parent's half of a shared connected stream: it no longer reads it
 * before TAKE, and keeps a copy of what it has received (fk) for the
 * child, which gets it if its TAKE comes first (host-toe/toe/toe_sock.h).
 */
void gl_claim_freeze(struct gl_rt *rt, struct gl_sock *s)
{
	size_t n = 0;

	s->need_take = true;
	s->take_posted = false;
	s->frozen = true;
	s->frozen_n = s->rx_n;
	s->frozen_bytes = s->rx_bytes;
	free(s->fk);
	s->fk = s->rx_bytes ? malloc(s->rx_bytes) : NULL;
	s->fk_len = 0;
	s->fk_mine = false;
	if (!s->fk)
		return;	/* nothing received (or no memory: the child starts without it) */
	if (s->pre) {
		n = s->pre_len - s->pre_off;
		memcpy(s->fk, s->pre + s->pre_off, n);
	}
	for (uint32_t i = 0; i < s->rx_n; i++) {
		uint32_t idx = s->rxq[(s->rx_head + i) % s->rx_cap];
		uint32_t off = i == 0 ? s->rx_off : 0;
		uint32_t len = rt->buf_len[idx] - off;

		if (n + len > s->rx_bytes)
			break;
		memcpy(s->fk + n, tcr_region_slot(rt->r, idx) + rt->buf_off[idx] + off, len);
		n += len;
	}
	s->fk_len = n;
}

void gl_claim_inherit(struct gl_sock *s)
{
	s->rx_n = s->rx_head = s->rx_off = 0;
	s->rx_bytes = 0;
	s->tx_inflight = 0;
	s->frozen = false;
	s->frozen_n = 0;
	s->frozen_bytes = 0;
	free(s->pre);	/* the parent's; our share of it is in fk */
	s->pre = NULL;
	s->pre_len = s->pre_off = 0;
	s->fk_mine = s->fk != NULL;
	s->take_posted = false;
	if (!s->dgram && !s->listening)
		s->need_take = true;	/* read only after TAKE */
}

/*
 * EV_OWNER: a = 0, another holder took the socket (read again only after
 * TAKE); a = 1, we own it, and with b = 1 the data of the fork is ours:
 * the parent keeps its frozen buffers, a child reads its copy.  Without
 * b the frozen data went to another holder: drop it.
 */
void gl_claim_owner_event(struct gl_rt *rt, struct gl_sock *s, const struct srpc_msg *m)
{
	if (m->a == 0) {
		s->need_take = true;
		s->take_posted = false;
		return;
	}
	if (!s->need_take)
		return;	/* a repeated TAKE's answer */
	s->need_take = false;
	s->take_posted = false;
	if (m->b == 1 && s->fk_mine) {
		free(s->pre);
		s->pre = s->fk;
		s->pre_len = s->fk_len;
		s->pre_off = 0;
		s->rx_bytes += s->fk_len;
		s->fk = NULL;
		s->fk_len = 0;
	} else if (m->b != 1 && s->frozen) {
		/* another holder read the bytes received before the fork */
		while (s->frozen_n && s->rx_n) {
			gl_ring_done_add(rt, s->rxq[s->rx_head]);
			s->rx_head = (s->rx_head + 1) % s->rx_cap;
			s->rx_n--;
			s->frozen_n--;
		}
		s->rx_off = 0;
		s->rx_bytes = s->rx_bytes > s->frozen_bytes ? s->rx_bytes - s->frozen_bytes : 0;
		free(s->pre);
		s->pre = NULL;
		s->pre_len = s->pre_off = 0;
		gl_ring_done_flush(rt);
	}
	s->frozen = false;
	s->frozen_n = 0;
	s->frozen_bytes = 0;
	free(s->fk);
	s->fk = NULL;
	s->fk_len = 0;
	s->fk_mine = false;
}

/* TAKE without waiting (poll): EV_OWNER settles it when pumped. */
bool gl_claim_take_async(struct gl_rt *rt, struct gl_sock *s)
{
	struct srpc_msg m;
	uint32_t idx;

	if (++rt->tag == 0)
		rt->tag = 1;
	if (srpc_encode(&m, SRPC_REQ_TAKE, rt->tag, s->id, 0, 0, 0, NULL, 0) ||
	    rt->nstash == 0)
		return false;	/* no buffer now: the next look tries again */
	idx = rt->stash[--rt->nstash];
	memcpy(tcr_region_slot(rt->r, idx), &m, srpc_msg_size(&m));
	gl_ring_submit(rt, idx, TCR_OP_CTRL, 0, (uint32_t)srpc_msg_size(&m));
	return true;
}
