/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: the process's channel to its TOE
 * (gl_chan.c): attaching, the pump, requests and their answers, waiting.
 * mu held everywhere (gl_rt.c); a wait releases it while it sleeps.
 */
#ifndef TOCHAIN_GL_CHAN_H
#define TOCHAIN_GL_CHAN_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tochain/srpc.h>
#include <tochain/util.h>

#include "gl_rt.h"

/*
 * A socket's send buffer (gl_rt.tx_bound): bytes in flight towards the
 * TOE, at most an eighth of the pool, at least GL_TX_MIN buffers.  128
 * KiB kept one bulk stream in lock-step (the guest filled the bound and
 * slept while the TOE wrote it out): bench 20's upload went from 0.68x
 * to 0.80x of the kernel path with 1 MiB (guest-lib README, Sending).
 */
#define GL_TX_BYTES	SRPC_TX_BYTES
#define GL_TX_MIN	8
/*
 * FREE buffers stream data never takes: a socket whose peer stopped
 * reading must not starve the requests of other sockets (their buffers
 * come back as soon as the TOE has copied the request).
 */
#define GL_CTRL_RESERVE	2

/* A call waiting for its response: on the caller's stack, linked into gl_rt.waiters. */
struct gl_waiter {
	struct gl_waiter *next;
	uint32_t tag;
	uint16_t type;		/* request type */
	bool done;
	uint32_t incarnation;	/* gl_rt.incarnation when posted */
	struct srpc_msg resp;
	struct gl_sock *made;	/* SOCKET/ACCEPT: the socket the pump created */
	int family;		/* its family */
};

/*
 * Attach this process if needed: 0, -ENETDOWN (now and for every later
 * call), -ENOBUFS (no free slot in a VM: the next call tries again),
 * -EAFNOSUPPORT (not configured).
 */
int gl_chan_ensure(struct gl_rt *rt);
/*
 * The handshake with the TOE on a new UNIX connection to <path>.sock: it
 * sends rt->wake.efd_mine and leaves the connection in rt->conn and the
 * TOE's eventfd in rt->wake.efd_host.  0 with *@w filled, or -errno.
 */
int gl_chan_handshake(struct gl_rt *rt, struct srpc_welcome *w);
/*
 * Map the region if needed and attach a channel (a handshake, or a claim
 * inside a VM): 0, -ENOBUFS (no free channel), -ENETDOWN.
 */
int gl_chan_attach(struct gl_rt *rt);
/* Close the channel's connection and doorbell: the process is not attached. */
void gl_chan_detach(struct gl_rt *rt);
/*
 * Drain RX and FREE, return DONE buffers.  When it took anything, or
 * found the channel broken, it kicks every sleeper (gl_wait.c, rule 2).
 */
void gl_chan_pump(struct gl_rt *rt);
/* Send a request; with @w, register it to wait for the response.  0 or -errno. */
int gl_chan_post(struct gl_rt *rt, struct gl_waiter *w, enum srpc_type type, uint32_t sock,
		 int a, int b, int c, const void *data, size_t dlen);
/* Post and wait for the answer (signals do not interrupt it): the response's a, or -errno. */
int gl_chan_call(struct gl_rt *rt, struct gl_waiter *w, enum srpc_type type, uint32_t sock,
		 int a, int b, int c, const void *data, size_t dlen);
/*
 * gl_wait_sleep (same contract), and when the doorbell rang, pump before
 * mu is released (gl_wait.c, rule 3).  The one way the runtime sleeps.
 */
int gl_chan_sleep(struct gl_rt *rt, struct pollfd *pfd, nfds_t n, int timeout_ms,
		  const sigset_t *mask);
/*
 * Sleep once, bounded by @deadline (ns, -1 none).  0: woken, look again;
 * -EAGAIN: deadline passed; -EINTR; -ENETDOWN.
 */
int gl_chan_wait(struct gl_rt *rt, int64_t deadline);

/* The deadline of a timeout of @ms (ns of CLOCK_MONOTONIC), -1 for none (@ms < 0). */
static inline int64_t gl_chan_deadline(int ms)
{
	return ms < 0 ? -1 : (int64_t)tu_now_ns() + (int64_t)ms * 1000000;
}

/* A FREE buffer, or -EAGAIN without one (no wait).  Inline: every buffer sent takes one. */
static inline int gl_chan_take_buf(struct gl_rt *rt, uint32_t *idx)
{
	if (rt->nstash == 0)
		gl_chan_pump(rt);
	if (rt->nstash == 0)
		return -EAGAIN;
	*idx = rt->stash[--rt->nstash];
	return 0;
}

#endif /* TOCHAIN_GL_CHAN_H */
