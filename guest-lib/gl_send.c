// SPDX-License-Identifier: MIT
/*
 * Sending: bytes are copied into FREE buffers and go out on TX; a socket
 * has at most gl_rt.tx_bound buffers in flight (its send buffer), and
 * GL_CTRL_RESERVE FREE buffers are left for requests.  A blocking send
 * waits for TX completions (the pump lowers tx_inflight), a non-blocking
 * one returns a short count or EAGAIN.  mu held (gl_rt.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tochain/srpc.h>

#include "gl_chan.h"
#include "gl_iov.h"
#include "gl_real.h"
#include "gl_ring.h"
#include "gl_send.h"
#include "gl_sock.h"

/*
 * The MSG_* flags a buffer passes on to the TOE's kernel send: MSG_MORE
 * on every buffer of the call (the kernel holds the last partial segment
 * until a send without it), MSG_OOB on the @last one (the urgent byte is
 * the last byte of the call).
 */
static uint16_t tx_flags(int flags, bool last)
{
	uint16_t f = 0;

	if (flags & MSG_MORE)
		f |= SRPC_TX_MORE;
	if ((flags & MSG_OOB) && last)
		f |= SRPC_TX_OOB;
	return f;
}

/*
 * A non-blocking send of @s stops for want of buffers: if the shared
 * stash, not its own bound, stopped it, no TXDONE of its own may come to
 * make it writable again; the stash's refill will (gl_rt.h, stash_gen).
 */
static void starve(struct gl_rt *rt, struct gl_sock *s)
{
	if (s->tx_inflight < rt->tx_bound && rt->nstash <= GL_CTRL_RESERVE) {
		s->tx_starved = true;
		s->starved_gen = rt->stash_gen;
		rt->starved = true;
	}
}

ssize_t gl_send_stream(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		       int flags)
{
	int64_t deadline = gl_chan_deadline(s->sndtimeo_ms);
	size_t total = gl_iov_total(iov, n), sent = 0;
	uint32_t slot = rt->r->geo.slot_size;
	bool nb = s->nonblock || (flags & MSG_DONTWAIT);

	while (s->connecting && !nb) {
		int err;

		gl_chan_pump(rt);
		if (!s->connecting)
			break;
		err = gl_chan_wait(rt, deadline);
		if (err)
			return err;
	}
	if (s->connecting)
		return -EAGAIN;
	if (s->err) {
		int e = s->err;

		s->err = 0;
		return -e;
	}
	if (s->shut_wr || s->reset || !s->connected)
		return -EPIPE;
	while (sent < total) {
		uint32_t idx, k;
		int err;

		if (s->tx_inflight >= rt->tx_bound || rt->nstash <= GL_CTRL_RESERVE)
			gl_chan_pump(rt);
		if (s->reset)
			break;
		if (s->tx_inflight < rt->tx_bound && rt->nstash > GL_CTRL_RESERVE &&
		    gl_chan_take_buf(rt, &idx) == 0) {
			uint32_t got;

			k = total - sent < slot ? (uint32_t)(total - sent) : slot;
			got = (uint32_t)gl_iov_gather(iov, n, sent, tcr_region_slot(rt->r, idx), k);
			if (!got) {	/* a bad buffer: the kernel sends what it could read */
				rt->stash[rt->nstash++] = idx;
				return sent ? (ssize_t)sent : -EFAULT;
			}
			s->tx_inflight++;
			sent += got;
			gl_ring_submit_flags(rt, idx, TCR_OP_DATA, s->id, got,
					     tx_flags(flags, sent == total || got < k));
			if (got < k)
				return (ssize_t)sent;
			continue;
		}
		if (nb) {
			starve(rt, s);
			if (sent)
				break;
			return -EAGAIN;
		}
		err = gl_chan_wait(rt, deadline);
		if (err)
			return sent ? (ssize_t)sent : err;
	}
	if (!sent && s->reset) {
		int e = s->err ? s->err : EPIPE;

		s->err = 0;
		return -e;
	}
	return (ssize_t)sent;
}

ssize_t gl_send_dgram(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		      int flags, const struct sockaddr *a, socklen_t l)
{
	int64_t deadline = gl_chan_deadline(s->sndtimeo_ms);
	size_t total = gl_iov_total(iov, n);
	bool nb = s->nonblock || (flags & MSG_DONTWAIT);
	struct srpc_dgram h;

	if (flags & MSG_OOB)
		return -EOPNOTSUPP;	/* as the kernel's UDP */
	memset(&h, 0, sizeof(h));
	if (a) {
		int err = gl_sock_check_addr(s, a, l);

		if (err)
			return err;
		h.addrlen = l < SRPC_DGRAM_ADDR_MAX ? l : SRPC_DGRAM_ADDR_MAX;
		memcpy(h.addr, a, h.addrlen);
	} else if (!s->connected) {
		return -EDESTADDRREQ;
	}
	if (s->shut_wr)
		return -EPIPE;
	gl_chan_pump(rt);
	if (s->err) {
		int e = s->err;

		s->err = 0;
		return -e;
	}
	if (total > rt->r->geo.slot_size - SRPC_DGRAM_HDR)
		return -EMSGSIZE;
	for (;;) {
		uint32_t idx;
		int err;

		if (s->tx_inflight >= rt->tx_bound || rt->nstash <= GL_CTRL_RESERVE)
			gl_chan_pump(rt);
		if (s->tx_inflight < rt->tx_bound && rt->nstash > GL_CTRL_RESERVE &&
		    gl_chan_take_buf(rt, &idx) == 0) {
			uint8_t *slot = tcr_region_slot(rt->r, idx);

			memcpy(slot, &h, sizeof(h));
			if (gl_iov_gather(iov, n, 0, slot + SRPC_DGRAM_HDR, total) < total) {
				rt->stash[rt->nstash++] = idx;
				return -EFAULT;
			}
			s->tx_inflight++;
			gl_ring_submit_flags(rt, idx, TCR_OP_DATA, s->id,
					     SRPC_DGRAM_HDR + (uint32_t)total, tx_flags(flags, true));
			return rt->broken ? -ENETDOWN : (ssize_t)total;
		}
		if (nb) {
			starve(rt, s);
			return -EAGAIN;
		}
		err = gl_chan_wait(rt, deadline);
		if (err)
			return err;
	}
}

ssize_t gl_send_file(struct gl_rt *rt, struct gl_sock *s, int in_fd, off_t *off, size_t count)
{
	uint8_t *buf;
	size_t chunk = count < 65536 ? count : 65536;
	ssize_t done = 0;

	if (count == 0)
		return 0;
	buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	while ((size_t)done < count) {
		size_t want = count - (size_t)done < chunk ? count - (size_t)done : chunk;
		ssize_t n = off ? pread(in_fd, buf, want, *off) : gl_real.read(in_fd, buf, want);
		struct iovec iov;
		ssize_t w;

		if (n < 0) {
			if (!done)
				done = -errno;
			break;
		}
		if (n == 0)
			break;
		iov.iov_base = buf;
		iov.iov_len = (size_t)n;
		w = gl_send_stream(rt, s, &iov, 1, 0);
		if (w < 0) {
			if (!off)	/* give back what we read but could not send */
				lseek(in_fd, -n, SEEK_CUR);
			if (!done)
				done = w;
			break;
		}
		if (off)
			*off += w;
		else if (w < n)
			lseek(in_fd, w - n, SEEK_CUR);
		done += w;
		if (w < n)
			break;
	}
	free(buf);
	return done;
}

/*
 * TCP_CORK and TCP_NODELAY decide when the bytes sent before them go out,
 * so the TOE applies them at their place in the stream and answers at
 * once, never with an error on a TCP socket (host-toe/toe/toe_sock.c,
 * ordered_sockopt; the kernel does not fail them either).  Waiting for
 * that answer cost a sleep and a wake-up per call: nginx's tcp_nopush
 * corks and uncorks once per keep-alive response, two round trips per
 * request.  Posted without a waiter, the answer is dropped by the pump.
 */
int gl_send_sockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, const void *val,
		    socklen_t l)
{
	if (s->dgram || !s->connected || level != IPPROTO_TCP ||
	    (name != TCP_CORK && name != TCP_NODELAY) || l != sizeof(int))
		return 1;
	return gl_chan_post(rt, NULL, SRPC_REQ_SETSOCKOPT, s->id, level, name, 0, val, l);
}
