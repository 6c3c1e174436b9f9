/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: socket objects (gl_sock.c), the
 * per-socket state the pump fills and the calls read, found by TOE id in
 * gl_rt.by_id.  mu held throughout.
 */
#ifndef TOCHAIN_GL_SOCK_H
#define TOCHAIN_GL_SOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <tochain/srpc.h>

#include "gl_rt.h"

struct gl_revive_rec;

struct gl_sock {
	uint32_t id;		/* TOE socket id */
	int refs;		/* fds of this process naming it */
	int family;
	bool nonblock;
	bool listening, connecting, connected, acceptable, eof, shut_rd, shut_wr;
	bool reset;		/* connection failed or was reset */
	bool connect_unseen;	/* async connect completed, no connect() since */
	int err;		/* error for the next call (reported once) */
	int so_error;		/* SO_ERROR */
	uint32_t *rxq;		/* buffers with data, in order */
	uint32_t rx_head, rx_n, rx_cap;
	uint32_t rx_off;	/* bytes of the head buffer consumed */
	size_t rx_bytes;
	uint32_t tx_inflight;	/* buffers sent, not yet written by the TOE */
	uint32_t rseq, wseq;	/* bumped on read/write readiness changes (edge triggering) */
	bool tx_starved;	/* a send stopped for want of stash (gl_rt.stash_gen) */
	uint32_t starved_gen;
	int rcvtimeo_ms, sndtimeo_ms;	/* -1: none */
	bool dgram;		/* UDP: each rxq buffer is one datagram (struct srpc_dgram) */
	/*
	 * Shared after fork (host-toe/toe/toe_sock.h, ownership; gl_claim.c): a holder reads only
	 * after TAKE made it the owner.  need_take: not (or no longer) the
	 * owner; frozen_n/frozen_bytes: the head of rxq (and pre) received
	 * before the fork, dropped if another holder claimed it first; fk: a
	 * private copy of that data for the child (fk_mine), which becomes
	 * @pre, a readable prefix, when the child's TAKE claims it.
	 */
	bool need_take, fk_mine;
	bool frozen;		/* frozen_* and pre are the fork's: dropped unless claimed */
	bool take_posted;	/* poll posted a TAKE, its answer is on the way */
	uint32_t frozen_n;
	size_t frozen_bytes;
	uint8_t *fk, *pre;
	size_t fk_len, pre_len, pre_off;
	struct gl_revive_rec *rv;	/* what a new TOE must be told (gl_revive.c) */
	bool has_secret;	/* secret was given to the TOE (srpc.h) and is in its fds */
	uint8_t secret[SRPC_SECRET_LEN];
};

/* The socket of TOE id @id, or NULL.  Inline: the pump looks up every buffer. */
static inline struct gl_sock *gl_sock_find(struct gl_rt *rt, uint64_t id)
{
	struct gl_sock *s;

	if (!rt->by_id || id == 0 || id > 0xffffffffu)
		return NULL;
	s = rt->by_id[id & 0xffff];
	return s && s->id == id ? s : NULL;
}

/* A new socket object for TOE socket @id, entered in gl_rt.by_id; NULL without memory. */
struct gl_sock *gl_sock_make(struct gl_rt *rt, uint32_t id, int family);
/* Free @s, which no fd names any more (its queues must be returned already). */
void gl_sock_free(struct gl_rt *rt, struct gl_sock *s);

/* Queue RX buffer @idx with data of @s; false without memory.  Inline: per buffer. */
static inline bool gl_sock_rxq_push(struct gl_sock *s, uint32_t idx)
{
	if (s->rx_n == s->rx_cap) {
		uint32_t cap = s->rx_cap ? s->rx_cap * 2 : 32;
		uint32_t *q = malloc(cap * sizeof(*q));

		if (!q)
			return false;
		for (uint32_t i = 0; i < s->rx_n; i++)
			q[i] = s->rxq[(s->rx_head + i) % s->rx_cap];
		free(s->rxq);
		s->rxq = q;
		s->rx_cap = cap;
		s->rx_head = 0;
	}
	s->rxq[(s->rx_head + s->rx_n) % s->rx_cap] = idx;
	s->rx_n++;
	return true;
}

/* Return every queued buffer of @s to DONE (not flushed) and forget the fork's data. */
void gl_sock_rxq_drop(struct gl_rt *rt, struct gl_sock *s);
/* Free the fork-time copies of @s (fk, pre). */
void gl_sock_fork_data_free(struct gl_sock *s);
/* Is @a/@l an address @s may bind, connect or send to?  0 or -errno. */
int gl_sock_check_addr(const struct gl_sock *s, const struct sockaddr *a, socklen_t l);

#endif /* TOCHAIN_GL_SOCK_H */
