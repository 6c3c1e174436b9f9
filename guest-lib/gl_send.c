// SPDX-License-Identifier: MIT
/*
 * Sending: bytes are copied into FREE buffers and go out on TX; a socket
 * has at most gl_rt.tx_bound buffers in flight (its send buffer),
 * GL_CTRL_RESERVE FREE buffers are left for requests, and a socket past
 * its first GL_TX_MIN buffers leaves a quarter of the grants to the
 * others (gl_tx_room, gl_send.h).  A blocking send
 * waits for TX completions (the pump lowers tx_inflight), a non-blocking
 * one returns a short count or EAGAIN.  A stream send fills all the
 * buffers it can take with one copy call and publishes them in one TX
 * burst; sendfile reads the file straight into them.  mu held (gl_rt.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
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
	if (s->tx_inflight < rt->tx_bound && !gl_tx_room(rt, s, 0)) {
		s->tx_starved = true;
		s->starved_gen = rt->stash_gen;
		rt->starved = true;
	}
}

/*
 * Where the bytes of a stream send come from: the caller's memory (send,
 * write, sendmsg) or a file (sendfile).  fill() places up to @want bytes
 * from position @pos of the source into our slots @dst (@nd of them) in
 * one system call: the bytes placed, 0 at a fault or the end of the
 * file, or -errno.
 */
struct send_src {
	ssize_t (*fill)(struct send_src *src, size_t pos, const struct iovec *dst, int nd,
			size_t want);
	bool short_ends;	/* a short fill ends the call (a fault), else go on (a pipe) */
	const struct iovec *iov;	/* the caller's memory */
	int n;
	int fd;			/* the file */
	off_t *off;		/* its offset, NULL: its file position */
};

static ssize_t fill_user(struct send_src *src, size_t pos, const struct iovec *dst, int nd,
			 size_t want)
{
	struct iovec theirs[GL_IOV_SEGS];
	int ns = gl_iov_slice(src->iov, src->n, pos, want, theirs);
	size_t got = ns ? gl_user_readv(dst, nd, theirs, ns) : 0;

	return got ? (ssize_t)got : -EFAULT;
}

/* Straight from the file into the slots: one copy, as the kernel's sendfile from the page cache. */
static ssize_t fill_file(struct send_src *src, size_t pos, const struct iovec *dst, int nd,
			 size_t want)
{
	ssize_t k;

	(void)pos;
	(void)want;
	k = src->off ? preadv(src->fd, dst, nd, *src->off) : gl_real.readv(src->fd, dst, nd);
	if (k < 0)
		return -errno;
	if (src->off)
		*src->off += k;
	return k;
}

/*
 * One step of a stream send: as many FREE buffers as the socket's bound,
 * the request reserve and the bytes left allow (at most GL_IOV_SEGS),
 * filled with one copy call and published on TX in one burst, so the TOE
 * is woken at most once and takes a response's buffers together (one
 * gathered sendmsg, host-toe/toe/README.md).  The bytes sent, 0 when no
 * buffer could be taken, -ENODATA at the end of a file, or what fill()
 * failed with.
 */
static ssize_t send_burst(struct gl_rt *rt, struct gl_sock *s, struct send_src *src, size_t sent,
			  size_t total, int flags)
{
	uint32_t slot = rt->r->geo.slot_size, room, nb = 0, used, idx[GL_IOV_SEGS];
	struct iovec dst[GL_IOV_SEGS];
	size_t want = 0;
	ssize_t got;

	room = gl_tx_room(rt, s, 0);
	if (!room)
		return 0;
	if (room > GL_IOV_SEGS)
		room = GL_IOV_SEGS;
	for (; nb < room && want < total - sent; nb++) {
		size_t left = total - sent - want;

		idx[nb] = rt->stash[rt->nstash - 1 - nb];
		dst[nb].iov_base = tcr_region_slot(rt->r, idx[nb]);
		dst[nb].iov_len = left < slot ? left : slot;
		want += dst[nb].iov_len;
	}
	got = src->fill(src, sent, dst, (int)nb, want);
	if (got <= 0)
		return got ? got : -ENODATA;	/* the end of the file */
	used = (uint32_t)(((size_t)got + slot - 1) / slot);
	rt->nstash -= used;
	for (uint32_t i = 0; i < used; i++) {
		uint32_t len = i + 1 < used ? slot : (uint32_t)((size_t)got - (size_t)i * slot);
		bool last = i + 1 == used && (sent + (size_t)got == total || (size_t)got < want);

		gl_ring_describe(rt, idx[i], TCR_OP_DATA, s->id, len, tx_flags(flags, last));
	}
	s->tx_inflight += used;
	gl_ring_publish(rt, idx, used);
	return got;
}

/* A stream send of @total bytes from @src (mu held). */
static ssize_t send_stream(struct gl_rt *rt, struct gl_sock *s, struct send_src *src,
			   size_t total, int flags)
{
	int64_t deadline = gl_chan_deadline(s->sndtimeo_ms);
	bool nb = s->nonblock || (flags & MSG_DONTWAIT);
	size_t sent = 0;

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
		ssize_t got;
		int err;

		if (!gl_tx_room(rt, s, 0))
			gl_chan_pump(rt);
		if (s->reset)
			break;
		got = send_burst(rt, s, src, sent, total, flags);
		if (got == -ENODATA)
			break;
		if (got < 0)	/* a bad buffer: the kernel sends what it could read */
			return sent ? (ssize_t)sent : got;
		if (got > 0) {
			size_t want = total - sent;

			sent += (size_t)got;
			if ((size_t)got < want && src->short_ends)
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

ssize_t gl_send_stream(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		       int flags)
{
	struct send_src src = { .fill = fill_user, .short_ends = true, .iov = iov, .n = n };

	return send_stream(rt, s, &src, gl_iov_total(iov, n), flags);
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

		if (!gl_tx_room(rt, s, 0))
			gl_chan_pump(rt);
		if (gl_tx_room(rt, s, 0) && gl_chan_take_buf(rt, &idx) == 0) {
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
	struct send_src src = { .fill = fill_file, .fd = in_fd, .off = off };

	if (count == 0)
		return 0;
	return send_stream(rt, s, &src, count, 0);
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
