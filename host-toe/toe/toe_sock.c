// SPDX-License-Identifier: MIT
/*
 * The TOE's kernel sockets: the socket table, reading and writing them
 * (flow control both ways), their flow table entries, and the guest's
 * socket calls executed on them.  Above the channel layer, which it calls
 * to answer the guest; never calls the stages.  Contract and ownership
 * rules: toe_sock.h; threading and trust: toe_int.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/region.h>
#include <tochain/tsc.h>

#include "tochain/srpc.h"
#include "toe_chan.h"
#include "toe_flow.h"
#include "toe_hold.h"
#include "toe_join.h"
#include "toe_ready.h"
#include "toe_sock.h"

/* ---- sockets ---------------------------------------------------------- */

struct toe_sock *toe_sock_get(struct toe *t, uint32_t id)
{
	uint32_t slot = (id & 0xffffu);

	if (slot == 0 || slot > t->p.max_socks)
		return NULL;
	if (t->socks[slot - 1].id != id)
		return NULL;
	return &t->socks[slot - 1];
}

/* A socket channel @ch may use. */
static struct toe_sock *sock_of(struct toe *t, uint32_t ch, uint32_t id)
{
	struct toe_sock *s = toe_sock_get(t, id);

	if (!s || !(s->chans & (1ull << ch)) || s->closing)
		return NULL;
	return s;
}

static void event_all(struct toe *t, struct toe_sock *s, enum srpc_type type, int a)
{
	for (uint32_t ch = 0; ch < t->p.nchannels; ch++)
		if (s->chans & (1ull << ch))
			toe_chan_event(t, ch, type, s->id, a, 0);
}

static void sock_arm(struct toe *t, struct toe_sock *s)
{
	uint32_t want = 0;
	struct epoll_event ev;

	if (s->dgram) {
		if (!s->closing && !s->failed && s->rx_inflight < t->p.rx_bound &&
		    toe_chan_room(t, s->owner))
			want |= EPOLLIN;
		if (s->txq.n)
			want |= EPOLLOUT;
	} else if (s->listening) {
		if (s->accept_armed && !t->held)
			want |= EPOLLIN;
	} else if (s->connecting) {
		want |= EPOLLOUT;
	} else if (s->connected && !s->failed) {
		if (!s->rd_eof && !s->closing && !s->parked && s->rx_inflight < t->p.rx_bound &&
		    toe_chan_room(t, s->owner))
			want |= EPOLLIN | EPOLLRDHUP;
		if (s->txq.n)
			want |= EPOLLOUT;
	}
	if (t->held)	/* toe_hold.h: what arrives waits in the kernel */
		want &= ~(uint32_t)(EPOLLIN | EPOLLRDHUP);
	/*
	 * EPOLLHUP and EPOLLERR are reported whatever the interest: a socket
	 * we want nothing from leaves the set, or a hung-up socket would
	 * spin the loop.
	 */
	if (!want) {
		if (s->registered && epoll_ctl(t->epfd, EPOLL_CTL_DEL, s->fd, NULL) == 0)
			s->registered = false;
		s->armed = 0;
		return;
	}
	if (s->registered && want == s->armed)
		return;
	ev.events = want;
	ev.data.u64 = EV_KEY(EV_SOCK, s->id);
	if (epoll_ctl(t->epfd, s->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s->fd, &ev) == 0) {
		s->armed = want;
		s->registered = true;
	}
}

static struct toe_sock *sock_new(struct toe *t, int fd, uint32_t ch)
{
	for (uint32_t i = 0; i < t->p.max_socks; i++) {
		struct toe_sock *s = &t->socks[i];

		if (s->id)
			continue;
		memset(s, 0, sizeof(*s));
		t->next_gen = (t->next_gen + 1) & 0x7fffu;
		if (t->next_gen == 0)
			t->next_gen = 1;
		s->id = (t->next_gen << 16) | (i + 1);
		s->fd = fd;
		s->chans = 1ull << ch;
		s->owner = ch;
		s->flow = TCR_FLOW_NONE;
		t->st.socks_open++;
		return s;
	}
	errno = EMFILE;
	return NULL;
}


void toe_sock_free(struct toe *t, struct toe_sock *s)
{
	uint32_t idx;

	while ((idx = toe_bufq_pop(t, &s->txq)) != NO_BUF)
		toe_sock_regrant(t, idx, s->id);
	/* nothing of it is submitted any more: its flow may close */
	if (s->flow != TCR_FLOW_NONE)
		toe_chain_flow_close(t->tc, s->flow);
	if (s->registered)
		epoll_ctl(t->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	s->id = 0;
	t->st.socks_open--;
}

/* Channel @ch drops its reference; the kernel socket closes with the last one. */
static void sock_unref(struct toe *t, struct toe_sock *s, uint32_t ch)
{
	s->chans &= ~(1ull << ch);
	toe_ready_forget(s, ch);
	if (s->chans) {
		if (s->owner == ch) {
			/* a remaining holder receives from now on (a parked one waits for TAKE) */
			s->owner = (uint32_t)__builtin_ctzll(s->chans);
			if (!s->dgram && s->rd_eof && !s->eof_pending)
				toe_chan_event(t, s->owner, SRPC_EV_EOF, s->id, 0, 0);
			sock_arm(t, s);
		}
		return;
	}
	if (s->tx_pending && !s->failed) {
		s->closing = true;	/* flush what the guest sent, as close() does */
		sock_arm(t, s);
		return;
	}
	toe_sock_free(t, s);
}

/* ---- kernel socket I/O --------------------------------------------------- */

/*
 * An outbound item is done: a guest buffer is granted again to the channel
 * it came from; an R.out copy is freed and its guest buffer granted back.
 */
void toe_sock_regrant(struct toe *t, uint32_t idx, uint32_t sock_id)
{
	if (idx >= t->p.nbufs) {	/* a private copy in R.out */
		uint32_t src = t->buf_src[idx];

		t->buf_sock[idx] = 0;
		toe_chain_out_free(t->tc, idx - t->p.nbufs);
		/* the guest's buffer goes back now, as without a chain */
		if (src < t->p.nbufs)
			toe_chan_regrant(t, src, sock_id);
		return;
	}
	toe_chan_regrant(t, idx, sock_id);
}

void toe_sock_fail(struct toe *t, struct toe_sock *s, int err)
{
	uint32_t idx;

	if (s->failed)
		return;
	s->failed = true;
	while ((idx = toe_bufq_pop(t, &s->txq)) != NO_BUF) {
		s->tx_pending--;
		toe_sock_regrant(t, idx, s->id);
	}
	if (s->closing && !s->tx_pending) {
		toe_sock_free(t, s);
		return;
	}
	event_all(t, s, SRPC_EV_ERROR, err);
	sock_arm(t, s);
}

/*
 * Datagrams: one sendto per buffer.  EAGAIN keeps it queued (EPOLLOUT);
 * any other error drops that datagram and is reported to the guest as a
 * pending socket error (EV_ERROR), as the kernel reports it to the next
 * call; the socket stays usable.
 */
/*
 * The MSG_* flags the guest's send call gave buffer @idx (SRPC_TX_*):
 * MSG_MORE holds a partial segment (a UDP datagram grows) until a send
 * without it, MSG_OOB sends the buffer's last byte as urgent data.
 */
static int tx_msg_flags(const struct toe *t, uint32_t idx)
{
	return (t->buf_txf[idx] & SRPC_TX_MORE ? MSG_MORE : 0) |
	       (t->buf_txf[idx] & SRPC_TX_OOB ? MSG_OOB : 0);
}

static void dgram_flush_tx(struct toe *t, struct toe_sock *s)
{
	while (s->txq.n) {
		uint32_t idx = s->txq.head;
		const struct toe_dgaddr *dst = &t->buf_dst[idx];
		ssize_t n;

		n = sendto(s->fd, toe_item_data(t, idx) + t->buf_off[idx], t->buf_len[idx],
			   MSG_NOSIGNAL | MSG_DONTWAIT | tx_msg_flags(t, idx),
			   dst->len ? (const struct sockaddr *)&dst->a : NULL, dst->len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n < 0)
			toe_chan_event(t, s->owner, SRPC_EV_ERROR, s->id, errno, 0);
		if (n > 0)
			t->st.bytes_out += (uint64_t)n;
		toe_bufq_pop(t, &s->txq);
		s->tx_pending--;
		toe_sock_regrant(t, idx, s->id);
	}
	if (!s->tx_pending && s->closing) {
		toe_sock_free(t, s);
		return;
	}
	sock_arm(t, s);
}

/* Apply the queued TCP options whose earlier bytes are now in the kernel. */
static void opts_due(struct toe_sock *s)
{
	uint32_t k = 0;

	while (k < s->optq_n && s->optq[k].at <= s->tx_out) {
		setsockopt(s->fd, IPPROTO_TCP, s->optq[k].name, &s->optq[k].val, sizeof(int));
		k++;
	}
	if (k) {
		memmove(s->optq, s->optq + k, (s->optq_n - k) * sizeof(s->optq[0]));
		s->optq_n -= k;
	}
}

/* What the guest last set of ordered option @name, still queued: 1 and *@val, or 0. */
static int optq_value(const struct toe_sock *s, int name, int *val)
{
	for (uint32_t k = s->optq_n; k-- > 0;)
		if (s->optq[k].name == name) {
			*val = s->optq[k].val;
			return 1;
		}
	return 0;
}

/*
 * setsockopt of TCP_CORK or TCP_NODELAY: both decide when bytes already
 * written go out, so they take effect where the guest set them in its
 * stream, after the bytes it sent before (still in the TOE's queues or
 * at an out chain).  Applied at once it would uncork before the response
 * it was meant to push, whose pieces then wait for the peer's delayed
 * ACK (Nagle): the 40 ms stall of nginx's tcp_nopush.  A full queue
 * applies the oldest now.  The call is answered at once; an error of the
 * deferred one is not reported (neither fails on a TCP socket).
 */
static int ordered_sockopt(struct toe_sock *s, const struct srpc_msg *m)
{
	int val;

	if (s->dgram || m->a != IPPROTO_TCP || (m->b != TCP_CORK && m->b != TCP_NODELAY) ||
	    m->dlen != sizeof(int))
		return 1;	/* not ordered: now */
	memcpy(&val, m->data, sizeof(val));
	if (s->tx_out >= s->tx_in && !s->optq_n && !(m->b == TCP_CORK && val))
		return 1;	/* nothing before it: now; a cork waits for its bytes (cork_pair) */
	if (s->optq_n == TOE_OPTQ) {
		setsockopt(s->fd, IPPROTO_TCP, s->optq[0].name, &s->optq[0].val, sizeof(int));
		memmove(s->optq, s->optq + 1, (TOE_OPTQ - 1) * sizeof(s->optq[0]));
		s->optq_n--;
	}
	s->optq[s->optq_n].name = m->b;
	s->optq[s->optq_n].val = val;
	s->optq[s->optq_n].at = s->tx_in;
	s->optq_n++;
	return 0;
}

/*
 * The bytes of @s's send queue that may go to the kernel in one call,
 * gathered into @iov (at most TOE_TX_IOV buffers) from the head (past
 * tx_off), sent with the flags of the last one: a buffer with MSG_OOB
 * ends a call (its urgent byte is the call's last); buffers sent without
 * MSG_MORE are not joined with later ones that have it (that would hold
 * back bytes the guest pushed); and a call ends at stream position @at
 * (the first ordered socket option's, which applies between two calls),
 * past the first buffer.  Returns the number of iovecs, their flags in
 * @flags.
 */
static int tx_gather(struct toe *t, struct toe_sock *s, struct iovec *iov, int *flags,
		     uint64_t at)
{
	uint64_t pos = s->tx_out;
	uint32_t idx = s->txq.head, off = s->tx_off;
	int k = 0;

	*flags = 0;
	for (uint32_t i = 0; i < s->txq.n && k < TOE_TX_IOV; i++, idx = t->buf_next[idx]) {
		uint32_t len = t->buf_len[idx] - off;

		if (k && pos >= at)
			break;	/* the option applies before these bytes */
		if (k && !(*flags & MSG_MORE) && (tx_msg_flags(t, idx) & MSG_MORE))
			break;	/* what came before is pushed, not held with these */
		iov[k].iov_base = toe_item_data(t, idx) + t->buf_off[idx] + off;
		iov[k].iov_len = len;
		k++;
		pos += len;
		off = 0;
		*flags = tx_msg_flags(t, idx);
		if (*flags & MSG_OOB)
			break;
	}
	return k;
}

/* @n bytes of @s's send queue are in the kernel: whole buffers go back, a partial one stays. */
static void tx_sent(struct toe *t, struct toe_sock *s, size_t n)
{
	s->tx_out += (uint64_t)n;
	t->st.bytes_out += (uint64_t)n;
	for (size_t left = n; s->txq.n;) {
		uint32_t idx = s->txq.head, rest = t->buf_len[idx] - s->tx_off;

		if (left < rest) {
			s->tx_off += (uint32_t)left;
			break;
		}
		left -= rest;
		toe_bufq_pop(t, &s->txq);
		s->tx_off = 0;
		s->tx_pending--;
		toe_sock_regrant(t, idx, s->id);
	}
}

/*
 * One sendmsg of the @k buffers gathered in @iov (@want bytes) with
 * @flags, the bytes taken accounted (tx_sent).  With an out chain, the
 * buffers are the TOE's private copies in R.out (what the VNFs
 * inspected); without one, the guest's slots, zero copy (design section
 * 3).  Returns the bytes taken (0 when the send buffer is full), or -1:
 * the socket failed.
 */
static ssize_t tx_write(struct toe *t, struct toe_sock *s, struct iovec *iov, int k, size_t want,
			int flags)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)k };
	ssize_t n = want ? sendmsg(s->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT | flags) : 0;

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		toe_sock_fail(t, s, errno);
		return -1;
	}
	tx_sent(t, s, (size_t)n);
	return n;
}

static size_t iov_bytes(const struct iovec *iov, int k)
{
	size_t n = 0;

	for (int i = 0; i < k; i++)
		n += iov[i].iov_len;
	return n;
}

/*
 * A cork due now, an uncork queued behind it and every byte between them
 * in the send queue (nginx's tcp_nopush: cork, header, file, uncork, per
 * keep-alive response): those bytes go in one sendmsg that pushes at its
 * end.  That is what the pair asks for (full segments, pushed at the
 * uncork; an uncork ignores Nagle only under TCP_NODELAY, as a push
 * does), and neither option costs a system call: they were two of the
 * TOE's five per 1 KiB request.  Bytes the kernel does not take at once
 * are corked for, as the guest asked.  1: the pair is gone (-1 with the
 * socket failed, 2 with the send buffer full); 0: no such pair, or more
 * than one call takes: the options apply as they come.
 */
static int cork_pair(struct toe *t, struct toe_sock *s)
{
	struct iovec iov[TOE_TX_IOV];
	int k = 0, flags = 0, one = 1;
	size_t want = 0;
	ssize_t n = 0;
	uint64_t end;

	if (s->optq_n < 2 || s->optq[0].name != TCP_CORK || !s->optq[0].val ||
	    s->optq[1].name != TCP_CORK || s->optq[1].val || s->optq[0].at != s->tx_out)
		return 0;
	end = s->optq[1].at;
	if (end > s->tx_out) {
		k = tx_gather(t, s, iov, &flags, end);
		want = iov_bytes(iov, k);
		if (s->tx_out + want != end)
			return 0;
		n = tx_write(t, s, iov, k, want, flags & ~MSG_MORE);	/* the uncork pushes */
		if (n < 0)
			return -1;
	}
	if ((size_t)n < want) {
		/* the rest waits for room: corked, as the guest asked */
		setsockopt(s->fd, IPPROTO_TCP, TCP_CORK, &one, sizeof(one));
		memmove(s->optq, s->optq + 1, (s->optq_n - 1) * sizeof(s->optq[0]));
		s->optq_n--;
		return 2;
	}
	memmove(s->optq, s->optq + 2, (s->optq_n - 2) * sizeof(s->optq[0]));
	s->optq_n -= 2;
	return 1;
}

/*
 * Write the send queue: many buffers per sendmsg, so that a response cut
 * into small slots still reaches TCP as one large write (one segment
 * train, GSO-sized skbs) instead of a send, a push and a trip through
 * the host's stack per slot.
 */
void toe_sock_flush_tx(struct toe *t, struct toe_sock *s)
{
	struct iovec iov[TOE_TX_IOV];

	if (s->dgram) {
		dgram_flush_tx(t, s);
		return;
	}
	while (s->txq.n) {
		int flags, k;
		size_t want;
		ssize_t n;

		if (s->optq_n && s->optq[0].at <= s->tx_out) {
			int r = cork_pair(t, s);

			if (r < 0)
				return;
			if (r == 2)
				break;
			if (r == 1)
				continue;
			opts_due(s);	/* a cork that waited for its bytes */
		}
		k = tx_gather(t, s, iov, &flags, s->optq_n ? s->optq[0].at : UINT64_MAX);
		want = iov_bytes(iov, k);
		n = tx_write(t, s, iov, k, want, flags);
		if (n < 0)
			return;
		if (s->optq_n)
			opts_due(s);
		if ((size_t)n < want)
			break;	/* the kernel's send buffer is full: wait for EPOLLOUT */
	}
	if (!s->tx_pending) {
		if (s->shut_wr_pending) {
			s->shut_wr_pending = false;
			shutdown(s->fd, SHUT_WR);
		}
		if (s->closing) {
			toe_sock_free(t, s);
			return;
		}
	}
	sock_arm(t, s);
}

/*
 * @len payload bytes of @s read into buffer @idx at @off (a datagram's
 * header before it): its descriptor, onto the inbound input queue.
 */
static void rx_queue(struct toe *t, struct toe_sock *s, uint32_t idx, uint32_t off, uint32_t len)
{
	struct tcr_desc d = { 0 };

	d.slot = idx;
	d.len = off + len;
	d.op = TCR_OP_DATA;
	d.conn_id = s->id;
	d.l4proto = s->dgram ? IPPROTO_UDP : IPPROTO_TCP;
	d.tsc = tcr_tsc_now();
	tcr_desc_store(t->r, idx, &d);
	t->buf_sock[idx] = s->id;
	t->buf_off[idx] = off;
	t->buf_len[idx] = len;
	t->buf_seq[idx] = s->dgram ? 0 : s->rx_seq;
	if (!s->dgram)
		s->rx_seq += len;
	s->rx_inflight++;
	s->rx_queued++;
	t->st.bytes_in += len;
	toe_bufq_push(t, &t->in_input, idx);	/* inbound input queue */
}

/*
 * Datagrams: one per buffer, its source address in the header.  At the
 * per-socket bound the socket is not read, and the kernel drops what its
 * receive buffer cannot hold (UDP semantics).
 */
static void dgram_read(struct toe *t, struct toe_sock *s)
{
	uint32_t cap = t->p.slot_size - SRPC_DGRAM_HDR;

	while (!t->held && !s->failed && s->rx_inflight < t->p.rx_bound &&
	       tcr_pool_count(t->pool, TCR_HOLDER_FREE) > RESERVE_BUFS && toe_chan_room(t, s->owner)) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct srpc_dgram h = { 0 };
		uint8_t *slot;
		uint32_t idx;
		ssize_t n;

		tcr_pool_alloc(t->pool, &idx, 1);
		slot = tcr_region_slot(t->r, idx);
		n = recvfrom(s->fd, slot + SRPC_DGRAM_HDR, cap, MSG_DONTWAIT | MSG_TRUNC,
			     (struct sockaddr *)&ss, &sl);
		if (n < 0) {
			int err = errno;

			tcr_pool_free(t->pool, &idx, 1);
			if (err == EAGAIN || err == EINTR)
				break;
			/* an ICMP error for an earlier datagram: the kernel reports it once */
			toe_chan_event(t, s->owner, SRPC_EV_ERROR, s->id, err, 0);
			continue;
		}
		if ((size_t)n > cap) {
			h.flags = SRPC_DGRAM_TRUNC;
			n = cap;
		}
		h.addrlen = sl <= SRPC_DGRAM_ADDR_MAX ? sl : 0;
		memcpy(h.addr, &ss, h.addrlen);
		/* the source, kept private for the chain stage (the slot is the guest's) */
		memcpy(&t->buf_dst[idx].a, &ss, sizeof(ss));
		t->buf_dst[idx].len = sl;
		memcpy(slot, &h, sizeof(h));
		rx_queue(t, s, idx, SRPC_DGRAM_HDR, (uint32_t)n);
	}
	sock_arm(t, s);
}

/*
 * How many buffers one read of stream @s may fill: its room under the
 * per-socket bound, the pool's stock above the reserve and its owner's
 * share, at most TOE_RX_IOV; at least 1 (the caller checked each).
 */
static uint32_t rx_room(const struct toe *t, const struct toe_sock *s)
{
	int64_t k = TOE_RX_IOV, v;

	v = (int64_t)t->p.rx_bound - s->rx_inflight;
	k = v < k ? v : k;
	v = (int64_t)tcr_pool_count(t->pool, TCR_HOLDER_FREE) - RESERVE_BUFS;
	k = v < k ? v : k;
	v = (int64_t)t->chan_cap - tcr_pool_count(t->pool, TCR_HOLDER_CH(s->owner));
	k = v < k ? v : k;
	return k > 1 ? (uint32_t)k : 1;
}

/*
 * Read stream @s into as many buffers per readv as it may fill (rx_room),
 * so a large arrival costs one system call, not one per slot.
 */
static void sock_read(struct toe *t, struct toe_sock *s)
{
	if (t->held) {	/* toe_hold.h */
		sock_arm(t, s);
		return;
	}
	if (s->dgram) {
		dgram_read(t, s);
		return;
	}
	while (!s->rd_eof && !s->failed && !s->parked && s->rx_inflight < t->p.rx_bound &&
	       tcr_pool_count(t->pool, TCR_HOLDER_FREE) > RESERVE_BUFS && toe_chan_room(t, s->owner)) {
		uint32_t idx[TOE_RX_IOV], k = rx_room(t, s), got, i;
		struct iovec iov[TOE_RX_IOV];
		ssize_t n;

		k = tcr_pool_alloc(t->pool, idx, k);
		if (!k)
			break;
		for (i = 0; i < k; i++) {
			iov[i].iov_base = tcr_region_slot(t->r, idx[i]);
			iov[i].iov_len = t->p.slot_size;
		}
		n = readv(s->fd, iov, (int)k);
		if (n <= 0) {
			int err = n < 0 ? errno : 0;

			tcr_pool_free(t->pool, idx, k);
			if (n < 0 && (err == EAGAIN || err == EINTR))
				break;
			if (n == 0) {
				s->rd_eof = true;
				if (s->flow != TCR_FLOW_NONE)
					ch_flow_set_state(toe_chain_flows(t->tc), s->flow,
							  CH_FLOW_CLOSING);
				if (s->rx_queued)
					s->eof_pending = true;	/* after the data (drain_outputs) */
				else
					toe_chan_event(t, s->owner, SRPC_EV_EOF, s->id, 0, 0);
			} else {
				toe_sock_fail(t, s, err);
				return;
			}
			break;
		}
		got = (uint32_t)((size_t)n + t->p.slot_size - 1) / t->p.slot_size;
		for (i = 0; i < got; i++) {
			uint32_t len = i + 1 < got ? t->p.slot_size
						   : (uint32_t)n - i * t->p.slot_size;

			rx_queue(t, s, idx[i], 0, len);
		}
		tcr_pool_free(t->pool, idx + got, k - got);
		if (got < k)
			break;	/* drained: epoll says when more comes */
	}
	sock_arm(t, s);
}

void toe_sock_event(struct toe *t, uint32_t id, uint32_t events)
{
	struct toe_sock *s = toe_sock_get(t, id);

	if (!s)
		return;
	if (s->dgram) {
		if (events & EPOLLERR) {
			int err = 0;
			socklen_t len = sizeof(err);

			/* a pending ICMP error: the guest's next call reports it, not fatal */
			getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
			if (err)
				toe_chan_event(t, s->owner, SRPC_EV_ERROR, s->id, err, 0);
		}
		if (events & (EPOLLIN | EPOLLERR))
			dgram_read(t, s);
		s = toe_sock_get(t, id);
		if (s && (events & (EPOLLOUT | EPOLLERR)) && s->txq.n)
			dgram_flush_tx(t, s);
		return;
	}
	if (s->listening) {
		if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
			s->accept_armed = false;
			toe_ready_set_all(t, s, true, -1);
			sock_arm(t, s);
		}
		return;
	}
	if (s->connecting) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		s->connecting = false;
		if (err) {
			s->failed = true;
		} else {
			s->connected = true;
			toe_flow_state(t, s, CH_FLOW_ESTABLISHED);
		}
		toe_chan_event(t, s->owner, SRPC_EV_CONNECTED, s->id, err, 0);
		sock_arm(t, s);
		return;
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))
		sock_read(t, s);
	s = toe_sock_get(t, id);
	if (s && (events & (EPOLLOUT | EPOLLERR)) && s->txq.n)
		toe_sock_flush_tx(t, s);
}

/*
 * A chain denied a descriptor of TCP socket @s: RST now (an abortive
 * disconnect) while the descriptor stays valid (the guest still holds the
 * socket id until it closes), ECONNRESET to the guest; what of it is
 * still on its way is dropped (s->denied).
 */
void toe_sock_abort(struct toe *t, struct toe_sock *s)
{
	s->denied = true;
	if (!s->failed) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };
		struct sockaddr sa = { .sa_family = AF_UNSPEC };

		setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		if (connect(s->fd, &sa, sizeof(sa))) {
			/* already disconnected: nothing more to send */
		}
		toe_sock_fail(t, s, ECONNRESET);
	}
	if (s->flow != TCR_FLOW_NONE)
		ch_flow_set_state(toe_chain_flows(t->tc), s->flow, CH_FLOW_CLOSING);
}

bool toe_sock_answer(struct toe *t, struct toe_sock *s, const uint8_t *answer, uint32_t len)
{
	char sink[4096];
	ssize_t n;

	/*
	 * Only where no byte of the guest's own is on its way to the peer
	 * (so the answer cannot land inside a response), where the guest has
	 * answered what it was given last (or was given nothing: else the
	 * answer would pass for the response to an earlier, pipelined
	 * request), and while the stream is open for writing.  The VNF is
	 * trusted with the bytes (bounded by the scheduler), not with when
	 * they may be sent.
	 */
	if (s->failed || s->dgram || s->listening || s->tx_pending || s->txq.n ||
	    s->shut_wr_pending || (s->rx_given && s->tx_in == s->tx_in_at_rx) || !answer || !len)
		return false;
	n = send(s->fd, answer, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n != (ssize_t)len)
		return false;	/* the caller resets: a cut answer is no answer */
	/* FIN after the answer; what the client still sends is read and dropped. */
	shutdown(s->fd, SHUT_WR);
	while (recv(s->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
	s->denied = true;
	toe_sock_fail(t, s, ECONNRESET);
	if (s->flow != TCR_FLOW_NONE)
		ch_flow_set_state(toe_chain_flows(t->tc), s->flow, CH_FLOW_CLOSING);
	return true;
}

/* ---- ownership (rules: toe_sock.h) ---------------------------------------- */

/* ADOPT(a=1) from channel @ch: @id if a channel holding it named @ch its heir. */
static struct toe_sock *heir_sock(struct toe *t, uint32_t ch, uint32_t id)
{
	struct toe_sock *s = toe_sock_get(t, id);

	if (!s || s->closing)
		return NULL;
	for (uint32_t o = 0; o < t->p.nchannels; o++)
		if ((s->chans & (1ull << o)) && toe_chan_is_heir(t, o, ch))
			return s;
	return NULL;
}

bool toe_sock_secret_is(const struct toe_sock *s, const uint8_t *secret)
{
	uint8_t diff = 0;

	if (!s->has_secret)
		return false;
	for (int i = 0; i < SRPC_SECRET_LEN; i++)	/* no early exit: no timing to learn from */
		diff |= (uint8_t)(s->secret[i] ^ secret[i]);
	return diff == 0;
}

/* ADOPT(a=2): @id if @secret (SRPC_SECRET_LEN bytes, the request's copy) is its secret. */
static struct toe_sock *secret_sock(struct toe *t, uint32_t id, const uint8_t *secret)
{
	struct toe_sock *s = toe_sock_get(t, id);

	if (!s || s->closing || !toe_sock_secret_is(s, secret))
		return NULL;
	return s;
}

/* The secret a SOCKET or ACCEPT request gave the socket it makes, if any. */
static void set_secret(struct toe_sock *s, const struct srpc_msg *m)
{
	if (m->dlen != SRPC_SECRET_LEN)
		return;
	memcpy(s->secret, m->data, SRPC_SECRET_LEN);
	s->has_secret = true;
}

/* Holder @ch becomes the owner of @s: EV_OWNER to it (and to the old owner), resume reading. */
static void take(struct toe *t, struct toe_sock *s, uint32_t ch)
{
	uint32_t old = s->owner;
	int fork_data = s->fork_data;

	s->fork_data = false;
	s->parked = false;
	s->owner = ch;
	toe_chan_event(t, ch, SRPC_EV_OWNER, s->id, 1, fork_data);
	if (old != ch && (s->chans & (1ull << old)))
		toe_chan_event(t, old, SRPC_EV_OWNER, s->id, 0, 0);
	/* an EOF the old owner got must reach the new one too */
	if (!s->dgram && s->rd_eof && !s->eof_pending)
		toe_chan_event(t, ch, SRPC_EV_EOF, s->id, 0, 0);
	sock_read(t, s);
}

/* Answer a pending FORK of channel @ch once none of its data is in flight. */
void toe_sock_fork_check(struct toe *t, uint32_t ch)
{
	struct toe_fork_wait *fw = &t->forks[ch];

	if (!fw->wait)		/* cleared when the channel goes (toe_sock_on_dropped) */
		return;
	for (uint32_t i = 0; i < t->p.max_socks; i++) {
		const struct toe_sock *s = &t->socks[i];

		if (s->id && s->parked && s->owner == ch && (s->rx_queued || s->eof_pending))
			return;
	}
	fw->wait = false;
	toe_chan_respond(t, ch, fw->tag, 0, 0, 0, NULL, 0);
}

/*
 * FORK on channel @ch (the parent) naming channel a / epoch b (the child,
 * attached by the parent just before fork()).  The child must be fresh:
 * a channel that made a request of its own or already inherited is
 * refused, so sockets cannot be pushed into a channel that is in use.
 */
static void do_fork(struct toe *t, uint32_t ch, const struct srpc_req *q)
{
	const struct srpc_msg *m = &q->m;
	uint32_t kid = (uint32_t)m->a;
	int err = toe_chan_fork_child(t, ch, kid, (uint32_t)m->b);

	if (err) {
		toe_chan_respond(t, ch, m->tag, 0, err, 0, NULL, 0);
		return;
	}
	for (uint32_t i = 0; i < t->p.max_socks; i++) {
		struct toe_sock *s = &t->socks[i];

		if (!s->id || !(s->chans & (1ull << ch)) || s->closing)
			continue;
		s->chans |= 1ull << kid;
		if (s->owner == ch && !s->dgram && !s->listening && !s->failed && s->connected) {
			s->parked = true;
			s->fork_data = true;
			sock_arm(t, s);
		}
	}
	t->forks[ch].wait = true;
	t->forks[ch].tag = m->tag;
	toe_sock_fork_check(t, ch);
}

/* ---- requests --------------------------------------------------------------- */

/* connect() of @s to @a: 0, -EINPROGRESS (EV_CONNECTED follows) or -errno. */
static int sock_connect(struct toe *t, struct toe_sock *s, const struct sockaddr_storage *a,
			socklen_t len)
{
	int ret = 0;

	if (connect(s->fd, (const struct sockaddr *)a, len) == 0) {
		s->connected = true;
	} else {
		ret = -errno;
		if (ret == -EINPROGRESS)
			s->connecting = true;
	}
	if (!s->dgram && s->flow == TCR_FLOW_NONE && (ret == 0 || ret == -EINPROGRESS)) {
		struct sockaddr_storage peer = { 0 };

		memcpy(&peer, a, len < sizeof(peer) ? len : sizeof(peer));
		toe_flow_open(t, s, &peer, ret ? CH_FLOW_SYN : CH_FLOW_ESTABLISHED);
	}
	sock_arm(t, s);
	return ret;
}

void toe_sock_on_request(struct toe *t, uint32_t ch, const struct srpc_req *q)
{
	const struct srpc_msg *m = &q->m;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct toe_sock *s = NULL;
	int ret = 0, fd;

	if (m->type == SRPC_REQ_FORK) {
		do_fork(t, ch, q);
		return;
	}
	if (m->type != SRPC_REQ_SOCKET) {
		s = sock_of(t, ch, m->sock);
		if (!s && m->type == SRPC_REQ_ADOPT && m->a == 1)
			s = heir_sock(t, ch, m->sock);
		if (!s && m->type == SRPC_REQ_ADOPT && m->a == 2)
			s = secret_sock(t, m->sock, m->data);
		if (!s) {
			toe_chan_respond(t, ch, m->tag, m->sock, -EBADF, 0, NULL, 0);
			return;
		}
	}

	switch (m->type) {
	case SRPC_REQ_SOCKET:
		fd = socket(m->a, m->b | SOCK_NONBLOCK | SOCK_CLOEXEC, m->c);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		s = sock_new(t, fd, ch);
		if (!s) {
			ret = -errno;
			close(fd);
			break;
		}
		set_secret(s, m);
		if (m->b == SOCK_DGRAM) {
			s->dgram = true;
			s->connected = true;	/* data may flow from the start */
			sock_arm(t, s);
		}
		ret = (int)(s->id & 0x7fffffff);
		break;
	case SRPC_REQ_BIND:
		ret = bind(s->fd, (const struct sockaddr *)&q->addr, q->addrlen) ? -errno : 0;
		if (ret == -EADDRINUSE &&
		    toe_join(t, ch, s, (const struct sockaddr *)&q->addr, q->addrlen, m->tag))
			return;	/* answered: the caller holds its sibling instead */
		break;
	case SRPC_REQ_LISTEN:
		if (s->dgram) {
			ret = -EOPNOTSUPP;
			break;
		}
		ret = listen(s->fd, m->a) ? -errno : 0;
		if (ret == -EADDRINUSE && !getsockname(s->fd, (struct sockaddr *)&ss, &sl) &&
		    toe_join(t, ch, s, (const struct sockaddr *)&ss, sl, m->tag))
			return;	/* as BIND */
		if (!ret) {
			s->listening = true;
			s->accept_armed = true;
			sock_arm(t, s);
		}
		break;
	case SRPC_REQ_ACCEPT: {
		struct pollfd pfd;
		struct toe_sock *n;
		int more;

		if (!s->listening) {
			ret = s->dgram ? -EOPNOTSUPP : -EINVAL;
			break;
		}
		/* held (toe_hold.h): the SYNs wait in the backlog, as if none came */
		fd = t->held ? -1 : accept4(s->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 || !(n = sock_new(t, fd, ch))) {
			ret = t->held ? -EAGAIN : -errno;
			if (fd >= 0)
				close(fd);	/* no room for it here (EMFILE): the peer sees a reset */
			/*
			 * Whatever failed (none waiting, EMFILE, ECONNABORTED),
			 * the listener's next readiness must tell its holders
			 * again: the runtime cleared its flag, and an error that
			 * left connections waiting would otherwise leave the
			 * listener deaf for good.
			 */
			s->accept_armed = true;
			sock_arm(t, s);
			toe_ready_told(s, ch, false);
			break;
		}
		n->connected = true;
		set_secret(n, m);
		toe_flow_open(t, n, &ss, CH_FLOW_ESTABLISHED);
		sock_arm(t, n);
		pfd.fd = s->fd;
		pfd.events = POLLIN;
		more = poll(&pfd, 1, 0) > 0;
		if (!more) {
			s->accept_armed = true;
			sock_arm(t, s);
			/* processes sharing the listener: nothing is waiting now */
			toe_ready_set_all(t, s, false, (int)ch);
		}
		toe_ready_told(s, ch, more);	/* the answer's "more" */
		toe_chan_respond(t, ch, m->tag, m->sock, (int)n->id, more, &ss,
			sl < sizeof(ss) ? sl : sizeof(ss));
		return;
	}
	case SRPC_REQ_CONNECT:
		if (t->held && !s->dgram && !s->connected && !s->connecting && !s->listening) {
			/* toe_hold.h: no SYN before the out chain is set */
			ret = toe_hold_defer_connect(t->hold, s->id, (const struct sockaddr *)&q->addr,
						     q->addrlen);
			ret = ret ? ret : -EINPROGRESS;
			break;
		}
		ret = sock_connect(t, s, &q->addr, q->addrlen);
		break;
	case SRPC_REQ_SHUTDOWN:
		if (m->a == SHUT_WR || m->a == SHUT_RDWR)
			toe_flow_state(t, s, CH_FLOW_CLOSING);
		if ((m->a == SHUT_WR || m->a == SHUT_RDWR) && s->tx_pending) {
			/* after the data the guest queued before it */
			s->shut_wr_pending = true;
			if (m->a == SHUT_RDWR)
				shutdown(s->fd, SHUT_RD);
			ret = 0;
		} else {
			ret = shutdown(s->fd, m->a) ? -errno : 0;
		}
		break;
	case SRPC_REQ_CLOSE:
		toe_chan_respond(t, ch, m->tag, m->sock, 0, 0, NULL, 0);
		sock_unref(t, s, ch);
		return;
	case SRPC_REQ_SETSOCKOPT:
		if (!ordered_sockopt(s, m)) {
			ret = 0;
			break;
		}
		ret = setsockopt(s->fd, m->a, m->b, m->data, m->dlen) ? -errno : 0;
		break;
	case SRPC_REQ_GETSOCKOPT: {
		uint8_t val[SRPC_DATA_MAX];
		socklen_t vl = (socklen_t)m->c;
		int qv;

		/* an ordered option still queued: what the guest set, not yet the kernel's */
		if (!s->dgram && m->a == IPPROTO_TCP && (m->b == TCP_CORK || m->b == TCP_NODELAY) &&
		    vl >= sizeof(int) && optq_value(s, m->b, &qv)) {
			qv = qv != 0;
			toe_chan_respond(t, ch, m->tag, m->sock, 0, (int)sizeof(qv), &qv, sizeof(qv));
			return;
		}
		if (getsockopt(s->fd, m->a, m->b, val, &vl)) {
			ret = -errno;
			break;
		}
		toe_chan_respond(t, ch, m->tag, m->sock, 0, (int)vl, val,
			vl < (socklen_t)m->c ? vl : (socklen_t)m->c);
		return;
	}
	case SRPC_REQ_GETSOCKNAME:
	case SRPC_REQ_GETPEERNAME:
		if ((m->type == SRPC_REQ_GETSOCKNAME ? getsockname : getpeername)(
			    s->fd, (struct sockaddr *)&ss, &sl)) {
			ret = -errno;
			break;
		}
		toe_chan_respond(t, ch, m->tag, m->sock, 0, (int)sl, &ss, sl < sizeof(ss) ? sl : sizeof(ss));
		return;
	case SRPC_REQ_ADOPT:
		s->chans |= 1ull << ch;
		if (m->a != 0)	/* exec: the new image is where the data must go */
			take(t, s, ch);
		ret = 0;
		break;
	case SRPC_REQ_TAKE:
		take(t, s, ch);
		ret = 0;
		break;
	}
	toe_chan_respond(t, ch, m->tag, m->sock, ret, 0, NULL, 0);
}

/* ---- the channel layer's events (struct toe_chan_ops) -------------------- */

/* A data buffer channel @ch put on TX: onto the outbound input queue, or back. */
void toe_sock_on_tx_data(struct toe *t, uint32_t ch, uint32_t idx, const struct tcr_desc *d)
{
	struct toe_sock *s = d->conn_id <= 0xffffffffu ? sock_of(t, ch, (uint32_t)d->conn_id) : NULL;

	t->buf_off[idx] = d->off;
	t->buf_len[idx] = d->len;
	t->buf_txf[idx] = (uint8_t)(d->flags & (SRPC_TX_MORE | SRPC_TX_OOB));
	if (s && s->dgram) {
		struct toe_dgaddr *dst = &t->buf_dst[idx];

		/* header read once into private memory, then validated */
		if (toe_chan_dgram_dst(t, idx, d, &dst->a, &dst->len)) {
			toe_sock_regrant(t, idx, s->id);
			return;
		}
		t->buf_off[idx] = d->off + SRPC_DGRAM_HDR;
		t->buf_len[idx] = d->len - SRPC_DGRAM_HDR;
		t->buf_sock[idx] = s->id;
		s->tx_pending++;
		toe_bufq_push(t, &t->out_input, idx);
		return;
	}
	if (!s || s->failed || s->listening || d->len == 0) {
		/* data for a socket it does not hold, or a dead one: drop it */
		toe_sock_regrant(t, idx, s ? s->id : 0);
		return;
	}
	t->buf_sock[idx] = s->id;
	s->tx_pending++;
	s->tx_in += d->len;	/* ordered socket options wait for these bytes */
	toe_bufq_push(t, &t->out_input, idx);	/* outbound input queue */
}

/*
 * An RX buffer of socket @sock_id came back on DONE.  A socket read up to
 * its bound resumes once a quarter of the bound is free again (or all of
 * it): resuming at every returned buffer read one slot per system call
 * and re-armed epoll each time.  A socket epoll still watches for input
 * was not stopped: epoll reports its data, and reading it here found
 * nothing but EAGAIN once per request (half the TOE's readv calls in
 * bench 92, where every connection has one request out at a time).
 */
void toe_sock_on_rx_done(struct toe *t, uint32_t sock_id)
{
	struct toe_sock *s = toe_sock_get(t, sock_id);

	if (s && s->rx_inflight) {
		uint32_t low = t->p.rx_bound - (t->p.rx_bound + 3) / 4;

		s->rx_inflight--;
		if ((s->rx_inflight == low || s->rx_inflight == 0) && !(s->armed & EPOLLIN))
			sock_read(t, s);	/* room again: resume reading */
	}
}

/*
 * The hold ended: the connects it deferred go out now, each answered as
 * the guest was told (EINPROGRESS): by EV_CONNECTED, at once when
 * connect() settles at once, else from the socket's EPOLLOUT.
 */
static void unhold_connects(struct toe *t)
{
	struct sockaddr_storage a;
	struct toe_sock *s;
	socklen_t len;
	uint32_t id;
	int ret;

	while (toe_hold_next_connect(t->hold, &id, &a, &len)) {
		s = toe_sock_get(t, id);
		if (!s || s->closing || s->failed || s->connected || s->connecting)
			continue;	/* closed (or reset) while it waited */
		ret = sock_connect(t, s, &a, len);
		if (ret == -EINPROGRESS)
			continue;
		if (ret)
			s->failed = true;
		toe_chan_event(t, s->owner, SRPC_EV_CONNECTED, s->id, -ret, 0);
		sock_arm(t, s);
	}
}

/* The hold ended (toe_hold.h): read every socket, arm the listeners, connect. */
void toe_sock_unhold(struct toe *t)
{
	for (uint32_t i = 0; i < t->p.max_socks; i++) {
		struct toe_sock *s = &t->socks[i];

		if (!s->id)
			continue;
		if (s->listening || s->connecting || !(s->dgram || s->connected))
			sock_arm(t, s);
		else
			sock_read(t, s);
	}
	unhold_connects(t);
}

/* Channel @ch is below its share of the pool again: read its sockets. */
void toe_sock_on_uncapped(struct toe *t, uint32_t ch)
{
	for (uint32_t i = 0; i < t->p.max_socks; i++)
		if (t->socks[i].id && t->socks[i].owner == ch)
			sock_read(t, &t->socks[i]);
}

/* Channel @ch goes away: it drops every reference it holds, and its FORK. */
void toe_sock_on_dropped(struct toe *t, uint32_t ch)
{
	for (uint32_t i = 0; i < t->p.max_socks; i++) {
		struct toe_sock *s = &t->socks[i];

		if (s->id && (s->chans & (1ull << ch)))
			sock_unref(t, s, ch);
	}
	t->forks[ch].wait = false;
}
