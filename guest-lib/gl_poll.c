// SPDX-License-Identifier: MIT
/*
 * poll/select over a mix of offloaded and ordinary fds, and the readiness
 * of an offloaded socket as poll(2) reports it (also epoll's, gl_epoll.c).
 *
 * Offloaded sockets are placeholders the kernel cannot wait on, so their
 * readiness comes from the runtime's socket state (after a pump) and the
 * wait itself is a real poll on the ordinary fds plus the process's
 * doorbell (gl_chan_sleep): a sleeping program costs no CPU.  mu held
 * while socket state is read (gl_rt.c); sleeping and wake-ups follow
 * gl_wait.c.  A wait loops until something is ready or its own deadline
 * passed: a wake-up alone never ends it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gl_chan.h"
#include "gl_claim.h"
#include "gl_fd.h"
#include "gl_poll.h"
#include "gl_real.h"
#include "gl_rt.h"
#include "gl_send.h"
#include "gl_sock.h"

short gl_poll_revents(struct gl_rt *rt, struct gl_sock *s)
{
	short ev = 0;
	int freebufs;
	size_t rx_bytes = s->rx_bytes;

	if (rt->broken)	/* the TOE is gone: every call fails now, say so */
		return POLLIN | POLLOUT | POLLERR | POLLHUP;
	if (s->need_take && rt->attached) {
		/* not ours to read yet: claim it; what we hold may go to another holder */
		if (!s->take_posted)
			s->take_posted = gl_claim_take_async(rt, s);
		rx_bytes = 0;
	}

	if (s->tx_starved && s->starved_gen != rt->stash_gen) {
		s->tx_starved = false;
		s->wseq++;	/* the stash it waited for is back (gl_rt.h) */
	}
	freebufs = tcr_ring_count(&rt->ch.ring[TCR_CH_FREE]);
	if (freebufs < 0)
		freebufs = 0;
	if (s->dgram) {
		if (s->rx_n || s->shut_rd)
			ev |= POLLIN | POLLRDNORM;
		if (s->shut_wr ||
		    gl_tx_room(rt, s, (uint32_t)freebufs))
			ev |= POLLOUT | POLLWRNORM;
		if (s->err)
			ev |= POLLERR;
		return ev;
	}
	if (s->listening)
		return s->acceptable ? POLLIN | POLLRDNORM : 0;
	if (s->connecting)
		return 0;
	if (!s->connected) {
		ev = POLLOUT | POLLWRNORM | POLLHUP;
		if (s->so_error)
			ev |= POLLERR;
		return ev;
	}
	if (rx_bytes || s->eof || s->shut_rd)
		ev |= POLLIN | POLLRDNORM;
	if (s->eof || s->shut_rd)
		ev |= POLLRDHUP;
	freebufs = tcr_ring_count(&rt->ch.ring[TCR_CH_FREE]);
	if (freebufs < 0)
		freebufs = 0;
	if (s->shut_wr || s->reset ||
	    gl_tx_room(rt, s, (uint32_t)freebufs))
		ev |= POLLOUT | POLLWRNORM;
	if ((s->eof && s->shut_wr) || s->reset)
		ev |= POLLHUP;
	if (s->err || s->so_error)
		ev |= POLLERR;
	return ev;
}

/* Offloaded entries of @fds: their revents from socket state; count ready. */
static int scan_offloaded(struct pollfd *fds, nfds_t n, const bool *off)
{
	int ready = 0;

	gl_chan_pump(&gl_rt);
	for (nfds_t i = 0; i < n; i++) {
		struct gl_sock *s;

		if (!off[i])
			continue;
		s = gl_fd_sock(fds[i].fd);
		fds[i].revents = s ? gl_poll_revents(&gl_rt, s) &
				     (fds[i].events | POLLERR | POLLHUP) : POLLNVAL;
		if (fds[i].revents)
			ready++;
	}
	return ready;
}

int gl_poll(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask)
{
	bool stack_off[64], *off = stack_off;
	struct pollfd stack_real[64], *real = stack_real;
	int64_t deadline = gl_chan_deadline(timeout_ms);
	int nreal_ready = 0, noff = 0, ret;

	for (nfds_t i = 0; i < n; i++)
		if (gl_fd_sock(fds[i].fd))
			noff++;
	if (!noff) {
		if (mask) {
			struct timespec ts, *tp = NULL;

			if (timeout_ms >= 0) {
				ts.tv_sec = timeout_ms / 1000;
				ts.tv_nsec = (timeout_ms % 1000) * 1000000L;
				tp = &ts;
			}
			return gl_real.ppoll(fds, n, tp, mask);
		}
		return gl_real.poll(fds, n, timeout_ms);
	}
	if (n > 64) {
		off = malloc(n * sizeof(*off));
		real = malloc(n * sizeof(*real));
		if (!off || !real) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (nfds_t i = 0; i < n; i++) {
		off[i] = gl_fd_sock(fds[i].fd) != NULL;
		real[i] = fds[i];
		real[i].revents = 0;
		if (off[i])
			real[i].fd = -1;	/* the kernel skips negative fds */
	}
	gl_rt_lock();
	for (;;) {
		int ready = scan_offloaded(fds, n, off);
		int r, tmo;

		if (ready || timeout_ms == 0) {
			gl_rt_unlock();
			r = gl_real.poll(real, n, 0);
			nreal_ready = r > 0 ? r : 0;
			ret = ready;
			break;
		}
		tmo = gl_poll_left_ms(deadline);
		if (deadline >= 0 && tmo == 0) {
			gl_rt_unlock();
			ret = 0;
			break;
		}
		r = gl_chan_sleep(&gl_rt, real, n, tmo, mask);
		if (r < 0) {
			gl_rt_unlock();
			ret = r;
			goto out;
		}
		if (r > 0) {
			ret = scan_offloaded(fds, n, off);
			gl_rt_unlock();
			nreal_ready = r;
			break;
		}
	}
	for (nfds_t i = 0; i < n; i++)
		if (!off[i])
			fds[i].revents = real[i].revents;
	ret += nreal_ready;
out:
	if (off != stack_off)
		free(off);
	if (real != stack_real)
		free(real);
	return ret;
}

