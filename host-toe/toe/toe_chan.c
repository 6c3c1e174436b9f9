// SPDX-License-Identifier: MIT
/*
 * The TOE's channels, one per guest process: messages to the guest
 * (responses and events, queued while the pool is short), taking what
 * the guest puts on TX and DONE, wake-ups, and the attach handshake.
 * The lowest layer: it calls no other TOE file, and hands what the guest
 * sent up through t->chan_ops.  Contract: toe_chan.h; rules: toe_int.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
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

/* ---- messages to the guest --------------------------------------------- */

/*
 * May channel @ch be handed more RX buffers?  One guest process that never
 * returns them must not take the pool from the others.
 */
bool toe_chan_room(struct toe *t, uint32_t ch)
{
	if (tcr_pool_count(t->pool, TCR_HOLDER_CH(ch)) < (int)t->chan_cap)
		return true;
	t->ch[ch].capped = true;
	return false;
}

int toe_chan_send_bufs(struct toe *t, uint32_t ch, const uint32_t *idx, uint32_t n)
{
	struct toe_chan *c = &t->ch[ch];
	int k = n ? tcr_chan_send(&c->c, t->pool, idx, n) : 0;

	if (k > 0)
		c->kick = true;	/* kick_guest, once per turn */
	return k;
}

int toe_chan_send_buf(struct toe *t, uint32_t ch, uint32_t idx)
{
	int k = toe_chan_send_bufs(t, ch, &idx, 1);

	if (k != 1)
		return k < 0 ? k : -ENOSPC;
	return 0;
}

static int put_msg(struct toe *t, uint32_t ch, const struct srpc_msg *m)
{
	struct tcr_desc d = { 0 };
	uint32_t idx;

	if (tcr_pool_count(t->pool, TCR_HOLDER_FREE) == 0 ||
	    tcr_pool_count(t->pool, TCR_HOLDER_CH(ch)) >= (int)(t->chan_cap + CTRL_RESERVE) ||
	    tcr_pool_alloc(t->pool, &idx, 1) != 1)
		return -ENOBUFS;
	memcpy(tcr_region_slot(t->r, idx), m, srpc_msg_size(m));
	d.slot = idx;
	d.len = (uint32_t)srpc_msg_size(m);
	d.op = TCR_OP_CTRL;
	d.conn_id = m->sock;
	d.tsc = tcr_tsc_now();
	tcr_desc_store(t->r, idx, &d);
	t->buf_sock[idx] = 0;
	/* a readiness event: its DONE lets the next one go (toe_ready.h) */
	t->buf_ev[idx] = m->type == SRPC_EV_ACCEPTABLE ? m->sock : 0;
	t->buf_chan[idx] = (uint16_t)ch;
	t->buf_epoch[idx] = t->ch[ch].epoch;
	if (toe_chan_send_buf(t, ch, idx)) {
		tcr_pool_free(t->pool, &idx, 1);
		return -ENOSPC;
	}
	return 0;
}

/* Send a response or event now, or queue it until a buffer is free (ordered). */
static void send_msg(struct toe *t, uint32_t ch, const struct srpc_msg *m)
{
	struct toe_chan *c = &t->ch[ch];
	struct pending *p;

	if (!c->open)
		return;
	if (!c->pend && put_msg(t, ch, m) == 0)
		return;
	if (c->npend >= PEND_MAX) {
		c->overrun = true;	/* dropped from the main loop, not here */
		return;
	}
	p = malloc(sizeof(*p));
	if (!p)
		return;	/* out of memory: the guest's call times out, the TOE lives */
	p->next = NULL;
	p->m = *m;
	*c->pend_tail = p;
	c->pend_tail = &p->next;
	c->npend++;
}

static void flush_pending(struct toe *t, uint32_t ch)
{
	struct toe_chan *c = &t->ch[ch];

	while (c->pend && put_msg(t, ch, &c->pend->m) == 0) {
		struct pending *p = c->pend;

		c->pend = p->next;
		if (!c->pend)
			c->pend_tail = &c->pend;
		c->npend--;
		free(p);
	}
}

void toe_chan_respond(struct toe *t, uint32_t ch, uint32_t tag, uint32_t sock, int ret,
		      int b, const void *data, size_t dlen)
{
	struct srpc_msg m;

	srpc_encode(&m, SRPC_RESP, tag, sock, ret, b, 0, data, dlen);
	send_msg(t, ch, &m);
}

void toe_chan_event(struct toe *t, uint32_t ch, enum srpc_type type, uint32_t sock, int a,
		    int b)
{
	struct srpc_msg m;

	srpc_encode(&m, type, 0, sock, a, b, 0, NULL, 0);
	send_msg(t, ch, &m);
}

/* A TX buffer is done: grant it again to the channel it came from. */
void toe_chan_regrant(struct toe *t, uint32_t idx, uint32_t sock_id)
{
	struct toe_chan *c;
	struct tcr_desc d = { 0 };
	uint32_t ch;

	t->buf_sock[idx] = 0;	/* not an RX buffer: DONE must not count it */
	ch = t->buf_chan[idx];
	c = &t->ch[ch];
	if (!c->open || c->epoch != t->buf_epoch[idx]) {
		tcr_pool_free(t->pool, &idx, 1);
		return;
	}
	d.slot = idx;
	d.conn_id = sock_id;
	d.arg = sock_id ? SRPC_FREE_TXDONE : 0;
	d.len = sock_id ? t->buf_len[idx] : 0;
	tcr_desc_store(t->r, idx, &d);
	if (tcr_chan_send_ring(&c->c, t->pool, TCR_CH_FREE, &idx, 1) != 1)
		tcr_pool_free(t->pool, &idx, 1);
	else
		c->kick = true;
}

/* ---- channels ------------------------------------------------------------- */

void toe_chan_drop(struct toe *t, uint32_t ch, const char *why)
{
	struct toe_chan *c = &t->ch[ch];

	if (!c->open)
		return;
	toe_logf(t, "channel %u closed: %s", ch, why);
	c->open = false;
	t->chan_ops->dropped(t, ch);	/* its sockets, before its buffers are reclaimed */
	tcr_chan_close(&c->c, t->pool);
	c->epoch = c->c.epoch;
	while (c->pend) {
		struct pending *p = c->pend;

		c->pend = p->next;
		free(p);
	}
	c->pend_tail = &c->pend;
	c->npend = 0;
	c->overrun = false;
	c->capped = false;
	c->fresh = false;
	c->has_heir = false;
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->conn, NULL);
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->efd_in, NULL);
	close(c->conn);
	close(c->efd_in);
	close(c->efd_out);
	t->st.guests_dropped++;
}

/* Always logged, unlike an orderly close: a guest that loses its channel
 * for misbehaving is what an operator (and make soak) must be able to see. */
void toe_chan_bad_guest(struct toe *t, uint32_t ch, const char *why)
{
	t->st.bad_messages++;
	if (t->ch[ch].open && !t->p.verbose)
		fprintf(stderr, "tochain-toe[%s]: channel %u dropped: %s\n", t->p.name, ch, why);
	toe_chan_drop(t, ch, why);
}

/*
 * The destination header of datagram buffer @idx (descriptor @d), read
 * once from the guest's slot into private memory and validated.
 */
int toe_chan_dgram_dst(struct toe *t, uint32_t idx, const struct tcr_desc *d,
		       struct sockaddr_storage *a, socklen_t *len)
{
	struct srpc_dgram h;

	if (d->len < SRPC_DGRAM_HDR)
		return -EMSGSIZE;
	memcpy(&h, tcr_region_slot(t->r, idx) + d->off, sizeof(h));
	if (srpc_dgram_addr(&h, a, len)) {
		t->st.bad_messages++;
		return -EINVAL;
	}
	return 0;
}

/* A buffer the guest filled (TX ring).  false: the guest misbehaved. */
static bool take_tx(struct toe *t, uint32_t ch, uint32_t idx)
{
	struct toe_chan *c = &t->ch[ch];
	struct tcr_desc d;
	struct srpc_req q;
	int err;

	t->buf_chan[idx] = (uint16_t)ch;
	t->buf_epoch[idx] = c->epoch;
	t->buf_len[idx] = 0;
	t->buf_sock[idx] = 0;
	t->buf_ev[idx] = 0;
	if (tcr_desc_load(t->r, idx, &d)) {
		tcr_pool_free(t->pool, &idx, 1);
		return false;
	}
	if (d.op == TCR_OP_DATA) {
		t->chan_ops->tx_data(t, ch, idx, &d);
		return true;
	}
	if (d.op != TCR_OP_CTRL) {
		tcr_pool_free(t->pool, &idx, 1);
		return false;
	}
	c->fresh = false;	/* it acts for itself now: no FORK may name it */
	err = srpc_decode_req(tcr_region_slot(t->r, idx) + d.off, d.len, &q);
	toe_chan_regrant(t, idx, 0);	/* the request was copied: the buffer is free again */
	if (err == -EPROTO)
		return false;
	if (err) {
		t->st.bad_messages++;
		toe_chan_respond(t, ch, q.m.tag, q.m.sock, err, 0, NULL, 0);
		return true;
	}
	t->chan_ops->request(t, ch, &q);
	return true;
}

/* A buffer the guest is done with (DONE ring): RX data or an unused grant. */
static void take_done(struct toe *t, uint32_t ch, uint32_t idx)
{
	uint32_t sock_id = t->buf_sock[idx], ev = t->buf_ev[idx];

	/*
	 * buf_ev is private, set when the buffer carried an event to @ch in
	 * this epoch; a buffer reclaimed with a closed channel keeps a stale
	 * one, hence the channel and epoch check.
	 */
	if (ev && (sock_id || t->buf_chan[idx] != ch || t->buf_epoch[idx] != t->ch[ch].epoch))
		ev = 0;
	t->buf_sock[idx] = 0;
	t->buf_ev[idx] = 0;
	tcr_pool_free(t->pool, &idx, 1);
	if (sock_id)
		t->chan_ops->rx_done(t, sock_id);
	if (ev)
		t->chan_ops->ev_done(t, ch, ev);
}

/*
 * Take up to about @budget entries from @ch's TX ring.  Returns true when
 * it took any (or dropped the channel for a bad one).
 */
static bool take_tx_ring(struct toe *t, uint32_t ch, int budget)
{
	struct toe_chan *c = &t->ch[ch];
	uint32_t idx[64];
	bool did = false;
	int k;

	while (c->open && budget > 0) {
		k = tcr_chan_recv(&c->c, t->pool, TCR_CH_TX, idx, 64);
		if (k < 0) {
			toe_chan_bad_guest(t, ch, "bad TX ring");
			return true;
		}
		if (k == 0)
			break;
		did = true;
		budget -= k;
		for (int i = 0; i < k; i++) {
			if (!take_tx(t, ch, idx[i])) {
				/* free the rest of the batch, then drop the channel */
				for (int j = i + 1; j < k; j++)
					tcr_pool_free(t->pool, &idx[j], 1);
				toe_chan_bad_guest(t, ch, "bad message");
				return true;
			}
		}
	}
	return did;
}

/* Returns true when it did something. */
bool toe_chan_service(struct toe *t, uint32_t ch)
{
	struct toe_chan *c = &t->ch[ch];
	uint32_t idx[64];
	bool did = false;
	int k, budget = TX_BUDGET;

	while (c->open && budget > 0) {
		k = tcr_chan_recv(&c->c, t->pool, TCR_CH_DONE, idx, 64);
		if (k < 0) {
			toe_chan_bad_guest(t, ch, "bad DONE ring");
			return true;
		}
		if (k == 0)
			break;
		did = true;
		budget -= k;
		for (int i = 0; i < k; i++)
			take_done(t, ch, idx[i]);
	}
	if (c->open && c->capped &&
	    tcr_pool_count(t->pool, TCR_HOLDER_CH(ch)) < (int)t->chan_cap) {
		/* below its share again: read its sockets */
		c->capped = false;
		t->chan_ops->uncapped(t, ch);
	}
	/* A guest that leaves its answers unread gets no new ones. */
	if (c->npend < PEND_SLOW && take_tx_ring(t, ch, TX_BUDGET))
		did = true;
	return did;
}

static void kick_guest(struct toe *t, uint32_t ch)
{
	struct toe_chan *c = &t->ch[ch];
	uint64_t one = 1;

	if (!c->open || !c->kick)
		return;
	c->kick = false;
	/* Both flags come down (|, not ||): one doorbell answers both. */
	if (tcr_ring_prod_kick_needed(&c->c.ring[TCR_CH_RX]) |
	    tcr_ring_prod_kick_needed(&c->c.ring[TCR_CH_FREE])) {
		tcr_ring_kick_consumer(&c->c.ring[TCR_CH_RX]);
		if (write(c->efd_out, &one, sizeof(one)) < 0) {
			/* a full eventfd counter still wakes the guest */
		}
	}
}

/*
 * Is @fd a non-blocking eventfd?  The TOE writes the guest's doorbell from
 * its loop: any other kind of file (a pipe, a socket, a FIFO), or an
 * eventfd whose writes may block (counter near its maximum), could stall
 * every guest of this TOE.  The flags are the guest's to change later on
 * the shared open file; what the hello carries is checked here.
 */
static bool is_nonblocking_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;
	int fl;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	fl = fcntl(fd, F_GETFL);
	return !strcmp(target, "anon_inode:[eventfd]") && fl >= 0 && (fl & O_NONBLOCK);
}

static int recv_hello(int conn, struct srpc_hello *h, int *efd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { h, sizeof(*h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;

	*efd = -1;
	n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(efd, CMSG_DATA(cm), sizeof(int));
	if (n != (ssize_t)sizeof(*h) || h->magic != SRPC_HELLO_MAGIC ||
	    h->version != SRPC_VERSION || *efd < 0 || (mh.msg_flags & MSG_CTRUNC) ||
	    !is_nonblocking_eventfd(*efd)) {
		if (*efd >= 0)
			close(*efd);
		return -EPROTO;
	}
	return 0;
}

static int send_welcome(int conn, const struct srpc_welcome *w, int efd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { (void *)w, sizeof(*w) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (efd >= 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &efd, sizeof(int));
	}
	return sendmsg(conn, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(*w) ? 0 : -EIO;
}

/*
 * A new attach connection waits in t->hello[] until its hello arrives,
 * so that a guest that connects and says nothing never stalls the loop;
 * it is dropped after HELLO_TIMEOUT_S or when the list is full.
 */
void toe_chan_hello_drop(struct toe *t, int i)
{
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, t->hello[i].fd, NULL);
	close(t->hello[i].fd);
	t->hello[i].fd = -1;
}

void toe_chan_accept(struct toe *t)
{
	struct epoll_event ev = { .events = EPOLLIN };
	time_t now = time(NULL);
	int conn, slot = -1;

	conn = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (conn < 0)
		return;
	for (int i = 0; i < HELLO_MAX; i++) {
		if (t->hello[i].fd >= 0 && now - t->hello[i].since > HELLO_TIMEOUT_S) {
			toe_chan_hello_drop(t, i);
			t->st.bad_messages++;
		}
		if (t->hello[i].fd < 0 && slot < 0)
			slot = i;
	}
	ev.data.u64 = EV_KEY(EV_HELLO, slot);
	if (slot < 0 || epoll_ctl(t->epfd, EPOLL_CTL_ADD, conn, &ev)) {
		close(conn);
		return;
	}
	t->hello[slot].fd = conn;
	t->hello[slot].since = now;
}

void toe_chan_attach(struct toe *t, int slot)
{
	struct srpc_welcome w = { .magic = SRPC_WELCOME_MAGIC };
	struct srpc_hello h;
	struct epoll_event ev;
	int conn, efd_guest, efd, err;
	uint32_t ch;

	if (slot < 0 || slot >= HELLO_MAX || t->hello[slot].fd < 0)
		return;
	conn = t->hello[slot].fd;
	err = recv_hello(conn, &h, &efd_guest);
	if (err == -EAGAIN)
		return;	/* spurious: wait for the hello */
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, conn, NULL);
	t->hello[slot].fd = -1;
	if (err) {
		t->st.bad_messages++;
		close(conn);
		return;
	}
	{
		int fl = fcntl(conn, F_GETFL);

		fcntl(conn, F_SETFL, fl & ~O_NONBLOCK);	/* the welcome is small */
	}
	for (ch = 0; ch < t->p.nchannels && t->ch[ch].open; ch++)
		;
	if (ch == t->p.nchannels) {
		w.status = -EBUSY;
		send_welcome(conn, &w, -1);
		close(efd_guest);
		close(conn);
		return;
	}
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		goto out_close;
	if (tcr_chan_open(&t->ch[ch].c, t->r, ch))
		goto out_efd;
	t->ch[ch].epoch = t->ch[ch].c.epoch;
	if (tcr_chan_grant(&t->ch[ch].c, t->pool, t->p.grants) <= 0)
		goto out_chan;
	w.channel = ch;
	w.epoch = t->ch[ch].epoch;
	ev.events = EPOLLIN;
	ev.data.u64 = EV_KEY(EV_DOORBELL, ch);
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, efd, &ev))
		goto out_chan;
	ev.events = EPOLLRDHUP | EPOLLIN;
	ev.data.u64 = EV_KEY(EV_CONN, ch);
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, conn, &ev))
		goto out_epoll;
	if (send_welcome(conn, &w, efd))
		goto out_epoll2;
	t->ch[ch].open = true;
	t->ch[ch].conn = conn;
	t->ch[ch].efd_in = efd;
	t->ch[ch].efd_out = efd_guest;
	t->ch[ch].pend = NULL;
	t->ch[ch].pend_tail = &t->ch[ch].pend;
	t->ch[ch].fresh = true;
	t->ch[ch].has_heir = false;
	t->st.guests_attached++;
	toe_logf(t, "channel %u attached (pid %u)", ch, h.pid);
	return;

out_epoll2:
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, conn, NULL);
out_epoll:
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, efd, NULL);
out_chan:
	tcr_chan_close(&t->ch[ch].c, t->pool);
out_efd:
	close(efd);
out_close:
	close(efd_guest);
	close(conn);
}

/*
 * Every process holding @ch's connection went away.  What it wrote before
 * it went still reaches the peer, as with the kernel: a child that sends
 * its answer, closes and exits at once leaves SEND and CLOSE in its TX
 * ring, and the hang-up can reach us in the same turn as the doorbell,
 * before toe_chan_service read the ring.  So the ring is taken first (its
 * answers are dropped with the channel; nothing reads them), at most
 * nbufs entries: a ring a guest keeps refilling cannot hold us here.
 */
static void chan_gone(struct toe *t, uint32_t ch)
{
	take_tx_ring(t, ch, (int)t->p.nbufs);
	toe_chan_drop(t, ch, "guest process went away");
}

/*
 * The guest's UNIX connection: hang-up means the process (every process
 * holding it) went away; the only message it may carry is a struct
 * srpc_heir (exec, toe_sock.h), answered with one __s32.  Anything else
 * costs the channel.
 */
void toe_chan_conn_event(struct toe *t, uint32_t ch, uint32_t events)
{
	struct toe_chan *c = &t->ch[ch];
	struct srpc_heir h;
	int32_t ret = 0;
	ssize_t n;

	if (ch >= t->p.nchannels || !c->open)
		return;
	n = recv(c->conn, &h, sizeof(h), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		if (events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))
			chan_gone(t, ch);
		return;
	}
	if (n <= 0) {
		chan_gone(t, ch);
		return;
	}
	if (n != (ssize_t)sizeof(h) || h.magic != SRPC_HEIR_MAGIC || h.version != SRPC_VERSION) {
		toe_chan_bad_guest(t, ch, "bad message on its connection");
		return;
	}
	if (h.channel >= t->p.nchannels || h.channel == ch || !t->ch[h.channel].open ||
	    t->ch[h.channel].epoch != h.epoch) {
		ret = -ESRCH;
	} else {
		c->has_heir = true;
		c->heir = h.channel;
		c->heir_epoch = h.epoch;
	}
	if (send(c->conn, &ret, sizeof(ret), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(ret))
		toe_chan_bad_guest(t, ch, "does not read its connection");
}

/* Ownership rules: toe_sock.h. */
bool toe_chan_is_heir(const struct toe *t, uint32_t holder, uint32_t ch)
{
	const struct toe_chan *c = &t->ch[holder];

	return holder != ch && c->open && c->has_heir && c->heir == ch &&
	       c->heir_epoch == t->ch[ch].epoch;
}

int toe_chan_fork_child(struct toe *t, uint32_t parent, uint32_t kid, uint32_t epoch)
{
	struct toe_chan *k;

	if (kid >= t->p.nchannels || kid == parent)
		return -EINVAL;
	k = &t->ch[kid];
	if (!k->open || k->epoch != epoch || !k->fresh)
		return -ESRCH;
	k->fresh = false;
	return 0;
}

void toe_chan_doorbell(struct toe *t, uint32_t ch)
{
	uint64_t v;

	if (read(t->ch[ch].efd_in, &v, sizeof(v)) < 0) {
		/* spurious: nothing to read */
	}
}

void toe_chan_end_turn(struct toe *t, uint32_t ch)
{
	if (t->ch[ch].open && t->ch[ch].pend)
		flush_pending(t, ch);
	if (t->ch[ch].overrun)
		toe_chan_bad_guest(t, ch, "does not consume its RX ring");
	kick_guest(t, ch);
}

/* ---- sleeping ------------------------------------------------------------- */

/*
 * Does channel @ch have work on TX or DONE?  The positions are the
 * guest's to write: a count that cannot be (-EPROTO: more than a ring
 * between them) costs the channel rather than reading as work, which
 * would keep the loop from ever sleeping.
 */
static bool chan_has_work(struct toe *t, uint32_t ch)
{
	struct toe_chan *c = &t->ch[ch];
	int tx = tcr_ring_count(&c->c.ring[TCR_CH_TX]);
	int done = tcr_ring_count(&c->c.ring[TCR_CH_DONE]);

	if (tx < 0 || done < 0) {
		toe_chan_bad_guest(t, ch, "impossible ring positions");
		return false;
	}
	return tx || done;
}

/* Announce sleep on every TX and DONE ring; false if work arrived meanwhile. */
bool toe_chan_sleep_prepare(struct toe *t)
{
	bool idle = true;

	for (uint32_t ch = 0; ch < t->p.nchannels; ch++) {
		struct toe_chan *c = &t->ch[ch];

		if (!c->open)
			continue;
		tcr_ring_cons_wait_prepare(&c->c.ring[TCR_CH_TX]);
		tcr_ring_cons_wait_prepare(&c->c.ring[TCR_CH_DONE]);
		if (chan_has_work(t, ch) || (c->open && c->pend))
			idle = false;
	}
	return idle;
}

void toe_chan_sleep_done(struct toe *t)
{
	for (uint32_t ch = 0; ch < t->p.nchannels; ch++) {
		if (!t->ch[ch].open)
			continue;
		tcr_ring_cons_wait_done(&t->ch[ch].c.ring[TCR_CH_TX]);
		tcr_ring_cons_wait_done(&t->ch[ch].c.ring[TCR_CH_DONE]);
	}
}

bool toe_chan_work_waiting(struct toe *t)
{
	for (uint32_t ch = 0; ch < t->p.nchannels; ch++) {
		struct toe_chan *c = &t->ch[ch];

		if (c->open && chan_has_work(t, ch))
			return true;
	}
	return false;
}

uint32_t toe_chan_count_open(const struct toe *t)
{
	uint32_t n = 0;

	for (uint32_t ch = 0; ch < t->p.nchannels; ch++)
		n += t->ch[ch].open;
	return n;
}
