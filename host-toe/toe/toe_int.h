/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/ (not installed, not for other modules): the
 * TOE's shared state and the helpers every layer uses.  The public API is
 * toe.h.
 *
 * LAYERS.  Calls go one way, down:
 *
 *   toe.c        the loop: ties the layers together, life cycle
 *   toe_stage.c  the per-direction stages (input queue, chain, output queue)
 *   toe_sock.c   kernel sockets, their I/O, the guest's socket calls
 *                (toe_flow.c: their 5-tuples, for the stage and socket layers)
 *   toe_chan.c   channels: the only file that speaks sockrpc to the guest
 *                (attach handshake, request decoding, answers and events)
 *
 * A lower layer that must tell an upper one something calls it back
 * through struct toe_chan_ops (toe_chan.h), which toe.c fills with the
 * socket layer's handlers.  Data moves through the queues in struct toe:
 * the socket layer fills the stages' input queues, the stages fill the
 * sockets' send queues.  toe_chain.c and toe_ctl.c (the packet scheduler
 * of the VM's chains and the control socket) sit beside the layers; see
 * their headers.
 *
 * THREADING: everything declared here runs on the thread that called
 * toe_run(); nothing is shared with other threads (the chain stage's own
 * threads are behind toe_chain.h).  The region is shared with guest
 * processes, which are untrusted: every descriptor is read with
 * tcr_desc_load (one read, validated copy), every request with
 * srpc_decode_req, and a guest that breaks the framing or the ring/pool
 * rules loses its channel (toe_chan_drop), nothing else.
 *
 * Private per-buffer state (buf_*) is the TOE's own record of what each
 * buffer is for; what the guest writes in a descriptor is never used to
 * find a socket the guest did not name in a validated request.
 * Socket ownership between channels (FORK, TAKE, ADOPT): toe_sock.h.
 */
#ifndef TOCHAIN_TOE_INT_H
#define TOCHAIN_TOE_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <tochain/pool.h>
#include <tochain/region.h>
#include <tochain/spin.h>

#include "toe.h"
#include "toe_capture.h"
#include "toe_chain.h"
#include "toe_ctl.h"

enum ev_kind { EV_ATTACH = 1, EV_SIGNAL, EV_CONN, EV_DOORBELL, EV_SOCK, EV_HELLO, EV_BELL,
	       EV_HOLD };
#define HELLO_MAX	16	/* attach connections waiting for their hello */
#define HELLO_TIMEOUT_S	2
#define EV_KEY(kind, idx)	(((uint64_t)(kind) << 32) | (uint32_t)(idx))

#define RESERVE_BUFS	8	/* pool stock kept for responses and events */
#define NO_BUF		0xffffffffu

/* A FIFO of buffer indices linked through toe.buf_next (each buffer is in one queue at most). */
struct bufq {
	uint32_t head, tail, n;
};

struct toe_chan;		/* toe_chan.h */
struct toe_chan_ops;		/* toe_chan.h */
struct toe_sock;		/* toe_sock.h */
struct toe_dgaddr;		/* toe_sock.h */

/* A FORK waiting for its sockets' data in flight (toe_sock.c's, per channel). */
struct toe_fork_wait {
	bool wait;
	uint32_t tag;		/* the FORK's, answered when done */
};

struct toe {
	struct toe_params p;
	struct tcr_region *r;
	struct tcr_pool *pool;
	char *sock_path;
	int epfd, lfd, sfd;
	bool stop;
	bool held;	/* toe_hold.h: nothing forwarded; the TOE thread's copy */
	struct toe_hold *hold;
	struct tcr_spin spin;	/* the event loop's poll before it sleeps (toe.c) */
	struct toe_chan *ch;
	const struct toe_chan_ops *chan_ops;	/* the socket layer's handlers (toe.c) */
	struct toe_sock *socks;
	struct toe_fork_wait *forks;	/* per channel */
	uint32_t next_gen;
	uint32_t chan_cap;	/* buffers one channel may hold (fair share of the pool) */
	/* per buffer */
	uint32_t *buf_next;
	uint32_t *buf_sock;	/* socket id the buffer carries data of */
	uint32_t *buf_ev;	/* socket id of the ACCEPTABLE event it carries (toe_ready.h) */
	uint32_t *buf_len, *buf_off;	/* validated copy of a TX data buffer */
	uint16_t *buf_chan;	/* channel a TX buffer came from */
	/*
	 * The buf_* arrays have nbufs + out_nbufs entries: an index at or
	 * above nbufs names slot (index - nbufs) of R.out, the TOE's private
	 * copy of an outbound payload (see toe_stage.c).
	 */
	uint32_t nitems;
	uint32_t *buf_epoch;	/* that channel's epoch then */
	struct toe_dgaddr *buf_dst;	/* destination of a TX datagram */
	uint64_t *buf_seq;	/* stream offset of an RX buffer's first byte */
	uint32_t *buf_src;	/* R.out copy: the guest buffer it was copied from */
	uint8_t *buf_txf;	/* SRPC_TX_* of a TX data buffer: MSG_* for its send */
	/* the per-direction stages: the socket layer fills the input queues */
	struct bufq in_input, in_output;	/* inbound */
	struct bufq out_input, out_output;	/* outbound */
	struct toe_stats st;
	struct toe_chain *tc;	/* the chain stage (toe_chain.h) */
	struct toe_ctl *ctl;	/* the control socket thread (toe_ctl.h) */
	struct toe_capture *cap;	/* evidence of denials (toe_capture.h) */
	char *ctl_path;
	struct {
		int fd;
		time_t since;
	} hello[HELLO_MAX];
};

/* With --verbose: one line on stderr, prefixed with the TOE's name. */
static inline __attribute__((format(printf, 2, 3)))
void toe_logf(const struct toe *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->p.verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "tochain-toe[%s]: ", t->p.name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static inline void toe_bufq_push(struct toe *t, struct bufq *q, uint32_t idx)
{
	t->buf_next[idx] = NO_BUF;
	if (q->n == 0)
		q->head = idx;
	else
		t->buf_next[q->tail] = idx;
	q->tail = idx;
	q->n++;
}

static inline uint32_t toe_bufq_pop(struct toe *t, struct bufq *q)
{
	uint32_t idx;

	if (q->n == 0)
		return NO_BUF;
	idx = q->head;
	q->head = t->buf_next[idx];
	q->n--;
	return idx;
}

/* The bytes of item @idx: a slot of the guest region or of R.out. */
static inline uint8_t *toe_item_data(struct toe *t, uint32_t idx)
{
	if (idx < t->p.nbufs)
		return tcr_region_slot(t->r, idx);
	return toe_chain_out_slot(t->tc, idx - t->p.nbufs);
}

#endif /* TOCHAIN_TOE_INT_H */
