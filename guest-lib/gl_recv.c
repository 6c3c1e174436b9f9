// SPDX-License-Identifier: MIT
/*
 * Receiving: the pump queues RX buffers on their socket (rxq); a receive
 * copies out of them and returns each emptied buffer on DONE.  A stream
 * shared after fork is read only once this process owns it (claim, below;
 * gl_claim.c has the rules).  mu held (gl_rt.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <tochain/srpc.h>

#include "gl_chan.h"
#include "gl_iov.h"
#include "gl_recv.h"
#include "gl_ring.h"
#include "gl_sock.h"

/* Become the owner of shared @s before reading it (waits for the TOE's answer). */
static int claim(struct gl_rt *rt, struct gl_sock *s)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (!s->need_take)
		return 0;
	ret = gl_chan_call(rt, &w, SRPC_REQ_TAKE, s->id, 0, 0, 0, NULL, 0);
	if (ret == 0)
		s->need_take = false;	/* EV_OWNER came first and settled the data */
	return ret;
}

ssize_t gl_recv_dgram(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		      int flags, struct sockaddr_storage *ss, socklen_t *sl, int *mflags)
{
	int64_t deadline = gl_chan_deadline(s->rcvtimeo_ms);
	size_t total = gl_iov_total(iov, n);
	bool nb = s->nonblock || (flags & MSG_DONTWAIT);

	*sl = 0;
	if (flags & MSG_ERRQUEUE)
		return -EAGAIN;	/* nothing is ever queued there */
	for (;;) {
		int err;

		gl_chan_pump(rt);
		if (s->rx_n) {
			uint32_t idx = s->rxq[s->rx_head];
			const uint8_t *p = tcr_region_slot(rt->r, idx) + rt->buf_off[idx];
			uint32_t plen = rt->buf_len[idx] - SRPC_DGRAM_HDR;
			size_t k = total < plen ? total : plen;
			bool fault;
			struct srpc_dgram h;

			/* the TOE's header: one copy, then checked */
			memcpy(&h, p, sizeof(h));
			/* a fault loses the datagram, as the kernel's (it dequeues first) */
			fault = gl_iov_scatter(iov, n, 0, p + SRPC_DGRAM_HDR, k) < k;
			if (srpc_dgram_addr(&h, ss, sl))
				*sl = 0;
			if (mflags && (k < plen || (h.flags & SRPC_DGRAM_TRUNC)))
				*mflags |= MSG_TRUNC;
			if (!(flags & MSG_PEEK)) {
				s->rx_head = (s->rx_head + 1) % s->rx_cap;
				s->rx_n--;
				s->rx_bytes -= plen;
				gl_ring_done_add(rt, idx);
				gl_ring_done_flush(rt);
			}
			if (fault)
				return -EFAULT;
			return (flags & MSG_TRUNC) ? (ssize_t)plen : (ssize_t)k;
		}
		if (s->err) {
			err = s->err;
			s->err = 0;
			return -err;
		}
		if (s->shut_rd)
			return 0;
		if (nb)
			return -EAGAIN;
		err = gl_chan_wait(rt, deadline);
		if (err)
			return err;
	}
}

/*
 * Copy what @s's queue holds, from its head, into the caller's iovec at
 * byte @got, at most @total - @got bytes and as many buffers as one copy
 * call takes (gl_iov_scatterv: one system call, not one per slot), then
 * consume what was copied (unless @peek).  The bytes copied, or -1 for
 * a fault before any (nothing consumed).
 */
static size_t copy_out(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		       size_t got, size_t total, bool trunc, bool peek)
{
	struct iovec seg[GL_IOV_SEGS];
	uint32_t pos = s->rx_head, left = s->rx_n, off = s->rx_off;
	size_t want = total - got, room = trunc ? want : gl_iov_room(iov, n, got), sum = 0, c;
	int ns = 0;

	want = room < want ? room : want;
	while (sum < want && left && ns < GL_IOV_SEGS) {
		uint32_t idx = s->rxq[pos];
		size_t k = rt->buf_len[idx] - off;

		k = want - sum < k ? want - sum : k;
		seg[ns].iov_base = tcr_region_slot(rt->r, idx) + rt->buf_off[idx] + off;
		seg[ns].iov_len = k;
		ns++;
		sum += k;
		pos = (pos + 1) % s->rx_cap;
		left--;
		off = 0;
	}
	c = trunc || !ns ? sum : gl_iov_scatterv(iov, n, got, seg, ns, sum);
	if (c < sum && c == 0)
		return (size_t)-1;
	if (peek)
		return c;
	/* consume the @c bytes copied (a fault: what was copied is taken, as the kernel's) */
	for (size_t rest = c; rest;) {
		uint32_t idx = s->rxq[s->rx_head];
		uint32_t avail = rt->buf_len[idx] - s->rx_off;
		uint32_t k = rest < avail ? (uint32_t)rest : avail;

		s->rx_off += k;
		s->rx_bytes -= k;
		rest -= k;
		if (s->rx_off == rt->buf_len[idx]) {
			gl_ring_done_add(rt, idx);
			s->rx_head = (s->rx_head + 1) % s->rx_cap;
			s->rx_n--;
			s->rx_off = 0;
		}
	}
	return c;
}

ssize_t gl_recv_stream(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		       int flags)
{
	int64_t deadline = gl_chan_deadline(s->rcvtimeo_ms);
	size_t total = gl_iov_total(iov, n), got = 0;
	bool nb = s->nonblock || (flags & MSG_DONTWAIT);
	bool peek = flags & MSG_PEEK;
	bool trunc = flags & MSG_TRUNC;	/* a stream's MSG_TRUNC: discard, copy nothing */

	if (flags & MSG_ERRQUEUE)
		return -EAGAIN;	/* nothing is ever queued there */
	if (s->listening || (!s->connected && !s->connecting && !s->reset))
		return -ENOTCONN;
	if (flags & MSG_OOB)
		return -EINVAL;	/* the kernel's answer without urgent data; the TOE reads none */
	for (;;) {
		int err;

		/* shared after a fork (maybe by another thread while we slept): own it first */
		if (s->need_take) {
			err = claim(rt, s);
			if (err)
				return got ? (ssize_t)got : err;
		}
		gl_chan_pump(rt);
		/* first what a fork handed us (a copy), then what is queued */
		if (s->pre && got < total) {
			size_t k = s->pre_len - s->pre_off;

			k = total - got < k ? total - got : k;
			if (!trunc && gl_iov_scatter(iov, n, got, s->pre + s->pre_off, k) < k)
				return got ? (ssize_t)got : -EFAULT;	/* nothing taken */
			got += k;
			if (!peek) {
				s->pre_off += k;
				s->rx_bytes -= k;
				if (s->pre_off == s->pre_len) {
					free(s->pre);
					s->pre = NULL;
					s->pre_len = s->pre_off = 0;
				}
			}
		}
		while (got < total && s->rx_n) {
			size_t c = copy_out(rt, s, iov, n, got, total, trunc, peek);

			if (c == (size_t)-1) {
				/* the kernel copies before it consumes: these bytes stay */
				if (!peek && got)
					gl_ring_done_flush(rt);
				return got ? (ssize_t)got : -EFAULT;
			}
			got += c;
			if (peek || !c)
				break;	/* a peek copies from the head once; nothing left */
		}
		if (!peek && got)
			gl_ring_done_flush(rt);
		if (got == total || (got && !(flags & MSG_WAITALL)) || (got && peek))
			return (ssize_t)got;
		if (s->rx_bytes == 0 && s->err) {
			int e = s->err;

			s->err = 0;
			return got ? (ssize_t)got : -e;
		}
		if (s->eof || s->shut_rd)
			return (ssize_t)got;
		if (nb)
			return got ? (ssize_t)got : -EAGAIN;
		err = gl_chan_wait(rt, deadline);
		if (err)
			return got ? (ssize_t)got : err;
		if (s->connecting)
			continue;
	}
}
