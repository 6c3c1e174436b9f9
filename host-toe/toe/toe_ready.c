// SPDX-License-Identifier: MIT
/*
 * Coalesced readiness events of listening sockets: at most one
 * SRPC_EV_ACCEPTABLE per socket and channel on its way.  Contract:
 * toe_ready.h.  Runs on the TOE's loop thread only, as the socket layer.
 */
#include "tochain/srpc.h"
#include "toe_chan.h"
#include "toe_ready.h"
#include "toe_sock.h"

/* Send channel @ch the latest state of @s unless one is out or it knows it. */
static void ready_push(struct toe *t, struct toe_sock *s, uint32_t ch)
{
	uint64_t bit = 1ull << ch;

	if ((s->rdy_busy & bit) || !((s->rdy_want ^ s->rdy_sent) & bit))
		return;
	s->rdy_sent ^= bit;
	s->rdy_busy |= bit;	/* cleared by toe_sock_on_ev_done */
	toe_chan_event(t, ch, SRPC_EV_ACCEPTABLE, s->id, (s->rdy_sent & bit) != 0, 0);
}

void toe_ready_set_all(struct toe *t, struct toe_sock *s, bool on, int except)
{
	for (uint32_t ch = 0; ch < t->p.nchannels; ch++) {
		uint64_t bit = 1ull << ch;

		if (!(s->chans & bit) || (int)ch == except)
			continue;
		if (on)
			s->rdy_want |= bit;
		else
			s->rdy_want &= ~bit;
		ready_push(t, s, ch);
	}
}

void toe_ready_told(struct toe_sock *s, uint32_t ch, bool on)
{
	uint64_t bit = 1ull << ch;

	if (on) {
		s->rdy_want |= bit;
		s->rdy_sent |= bit;
	} else {
		s->rdy_want &= ~bit;
		s->rdy_sent &= ~bit;
	}
}

void toe_ready_forget(struct toe_sock *s, uint32_t ch)
{
	uint64_t bit = 1ull << ch;

	s->rdy_want &= ~bit;
	s->rdy_sent &= ~bit;
	s->rdy_busy &= ~bit;
}

void toe_sock_on_ev_done(struct toe *t, uint32_t ch, uint32_t sock_id)
{
	struct toe_sock *s = toe_sock_get(t, sock_id);
	uint64_t bit = 1ull << ch;

	if (!s || !(s->chans & bit) || !(s->rdy_busy & bit))
		return;
	s->rdy_busy &= ~bit;
	ready_push(t, s, ch);
}
