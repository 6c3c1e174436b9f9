// SPDX-License-Identifier: MIT
/*
 * The TOE: socket calls and payload of the guest's channels; see toe.h.
 *
 * THREADING: everything in this file runs on the thread that called
 * toe_run(); nothing is shared with other threads.  The region is shared
 * with guest processes, which are untrusted: every descriptor is read
 * with tcr_desc_load (one read, validated copy), every request with
 * srpc_decode_req, and a guest that breaks the framing or the ring/pool
 * rules loses its channel (toe_chan_drop), nothing else.
 *
 * Private per-buffer state (buf_*) is the TOE's own record of what each
 * buffer is for; what the guest writes in a descriptor is never used to
 * find a socket the guest did not name in a validated request.
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

#include "srpc.h"
#include "toe.h"
#include "toe_chain.h"
#include "toe_ctl.h"

enum ev_kind { EV_ATTACH = 1, EV_SIGNAL, EV_CONN, EV_DOORBELL, EV_SOCK, EV_HELLO, EV_CHAIN };
#define HELLO_MAX	16	/* attach connections waiting for their hello */
#define HELLO_TIMEOUT_S	2
#define EV_KEY(kind, idx)	(((uint64_t)(kind) << 32) | (uint32_t)(idx))

#define RESERVE_BUFS	8	/* pool stock kept for responses and events */
#define NO_BUF		0xffffffffu
#define TX_BUDGET	256	/* TX/DONE entries per channel per loop turn */
#define PEND_SLOW	64	/* queued messages: stop taking the channel's requests */
#define PEND_MAX	4096	/* queued messages: the guest does not consume, drop it */

/* A FIFO of buffer indices linked through toe.buf_next (each buffer is in one queue at most). */
struct bufq {
	uint32_t head, tail, n;
};

struct toe_sock {
	uint32_t id;		/* 0: slot unused */
	int fd;
	uint64_t chans;		/* channels holding a reference */
	uint32_t owner;		/* channel that receives data and responses */
	uint32_t rx_inflight;	/* buffers towards or held by the guest */
	uint32_t tx_off;	/* bytes of the txq head already written */
	struct bufq txq;	/* outbound output queue towards the kernel */
	uint32_t tx_pending;	/* outbound buffers anywhere in the pipeline */
	uint32_t armed;		/* epoll events registered */
	bool listening, connecting, rd_eof, failed, shut_wr_pending, closing;
	bool accept_armed;
	bool connected;		/* established: data may flow */
	bool registered;	/* in the epoll set */
	bool dgram;		/* UDP: one buffer per datagram (struct srpc_dgram) */
	bool denied;		/* a chain denied it: reset, later data dropped */
	bool eof_pending;	/* EOF seen, data before it still on its way */
	uint32_t rx_queued;	/* inbound buffers not yet on the RX ring */
	uint64_t rx_seq, tx_seq;	/* stream offsets (bytes read / submitted) */
	uint32_t flow;		/* flow table entry or TCR_FLOW_NONE */
	struct ch_flow_key key;	/* local side as source (ports host order) */
};

/* The validated destination of an outbound datagram (TOE-private copy). */
struct toe_dgaddr {
	struct sockaddr_storage a;
	socklen_t len;		/* 0: the connected peer */
};

struct pending {		/* a message waiting for a pool buffer */
	struct pending *next;
	struct srpc_msg m;
};

struct toe_chan {
	bool open;
	struct tcr_chan c;
	uint32_t epoch;
	int conn;		/* UNIX connection to the guest process */
	int efd_in;		/* TOE's doorbell (guest writes it) */
	int efd_out;		/* guest's doorbell */
	bool kick;		/* something published: maybe wake the guest */
	struct pending *pend, **pend_tail;
	uint32_t npend;		/* messages waiting for a pool buffer */
	bool overrun;		/* too many: the guest does not consume RX; drop it */
	bool capped;		/* holds chan_cap buffers: its sockets are not read */
};

struct toe {
	struct toe_params p;
	struct tcr_region *r;
	struct tcr_pool *pool;
	char *sock_path;
	int epfd, lfd, sfd;
	bool stop;
	struct toe_chan *ch;
	struct toe_sock *socks;
	uint32_t next_gen;
	uint32_t chan_cap;	/* buffers one channel may hold (fair share of the pool) */
	/* per buffer */
	uint32_t *buf_next;
	uint32_t *buf_sock;	/* socket id the buffer carries data of */
	uint32_t *buf_len, *buf_off;	/* validated copy of a TX data buffer */
	uint16_t *buf_chan;	/* channel a TX buffer came from */
	/*
	 * The buf_* arrays have nbufs + out_nbufs entries: an index at or
	 * above nbufs names slot (index - nbufs) of R.out, the TOE's private
	 * copy of an outbound payload (see out_copy).
	 */
	uint32_t nitems;
	uint32_t *buf_epoch;	/* that channel's epoch then */
	struct toe_dgaddr *buf_dst;	/* destination of a TX datagram */
	uint64_t *buf_seq;	/* stream offset of an RX buffer's first byte */
	/* the per-direction stages */
	struct bufq in_input, in_output;	/* inbound */
	struct bufq out_input, out_output;	/* outbound */
	struct toe_stats st;
	struct toe_chain *tc;	/* the chain stage (toe_chain.h) */
	struct toe_ctl *ctl;	/* the control socket thread (toe_ctl.h) */
	char *ctl_path;
	struct {
		int fd;
		time_t since;
	} hello[HELLO_MAX];
};

static void logf_(const struct toe *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logf_(const struct toe *t, const char *fmt, ...)
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

static void bufq_push(struct toe *t, struct bufq *q, uint32_t idx)
{
	t->buf_next[idx] = NO_BUF;
	if (q->n == 0)
		q->head = idx;
	else
		t->buf_next[q->tail] = idx;
	q->tail = idx;
	q->n++;
}

static uint32_t bufq_pop(struct toe *t, struct bufq *q)
{
	uint32_t idx;

	if (q->n == 0)
		return NO_BUF;
	idx = q->head;
	q->head = t->buf_next[idx];
	q->n--;
	return idx;
}

void toe_params_default(struct toe_params *p)
{
	memset(p, 0, sizeof(*p));
	p->nbufs = 1024;
	p->slot_size = 16384;
	p->nchannels = 16;
	p->grants = 64;
	p->rx_bound = 0;	/* toe_create: 256 KiB worth, at least 16 buffers */
	p->max_socks = 4096;
	p->ready_fd = -1;
}

/* ---- sockets ---------------------------------------------------------- */

static struct toe_sock *sock_get(struct toe *t, uint32_t id)
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
	struct toe_sock *s = sock_get(t, id);

	if (!s || !(s->chans & (1ull << ch)) || s->closing)
		return NULL;
	return s;
}

/*
 * May channel @ch be handed more RX buffers?  One guest process that never
 * returns them must not take the pool from the others.
 */
static bool chan_room(struct toe *t, uint32_t ch)
{
	if (tcr_pool_count(t->pool, TCR_HOLDER_CH(ch)) < (int)t->chan_cap)
		return true;
	t->ch[ch].capped = true;
	return false;
}

static void sock_arm(struct toe *t, struct toe_sock *s)
{
	uint32_t want = 0;
	struct epoll_event ev;

	if (s->dgram) {
		if (!s->closing && !s->failed && s->rx_inflight < t->p.rx_bound &&
		    chan_room(t, s->owner))
			want |= EPOLLIN;
		if (s->txq.n)
			want |= EPOLLOUT;
	} else if (s->listening) {
		if (s->accept_armed)
			want |= EPOLLIN;
	} else if (s->connecting) {
		want |= EPOLLOUT;
	} else if (s->connected && !s->failed) {
		if (!s->rd_eof && !s->closing && s->rx_inflight < t->p.rx_bound &&
		    chan_room(t, s->owner))
			want |= EPOLLIN | EPOLLRDHUP;
		if (s->txq.n)
			want |= EPOLLOUT;
	}
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

static void regrant(struct toe *t, uint32_t idx, uint32_t sock_id);

static void sock_free(struct toe *t, struct toe_sock *s)
{
	uint32_t idx;

	while ((idx = bufq_pop(t, &s->txq)) != NO_BUF)
		regrant(t, idx, s->id);
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
	if (s->chans) {
		if (s->owner == ch)
			s->owner = (uint32_t)__builtin_ctzll(s->chans);
		return;
	}
	if (s->tx_pending && !s->failed) {
		s->closing = true;	/* flush what the guest sent, as close() does */
		sock_arm(t, s);
		return;
	}
	sock_free(t, s);
}

/* ---- messages to the guest --------------------------------------------- */

static bool chan_room(struct toe *t, uint32_t ch);

static int chan_send_buf(struct toe *t, uint32_t ch, uint32_t idx)
{
	struct toe_chan *c = &t->ch[ch];
	int k = tcr_chan_send(&c->c, t->pool, &idx, 1);

	if (k != 1)
		return k < 0 ? k : -ENOSPC;
	c->kick = true;
	return 0;
}

static int put_msg(struct toe *t, uint32_t ch, const struct srpc_msg *m)
{
	struct tcr_desc d = { 0 };
	uint32_t idx;

	if (tcr_pool_count(t->pool, TCR_HOLDER_FREE) == 0 || !chan_room(t, ch) ||
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
	if (chan_send_buf(t, ch, idx)) {
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

static void respond(struct toe *t, uint32_t ch, uint32_t tag, uint32_t sock, int ret,
		    int b, const void *data, size_t dlen)
{
	struct srpc_msg m;

	srpc_encode(&m, SRPC_RESP, tag, sock, ret, b, 0, data, dlen);
	send_msg(t, ch, &m);
}

static void event_to(struct toe *t, uint32_t ch, enum srpc_type type, uint32_t sock, int a)
{
	struct srpc_msg m;

	srpc_encode(&m, type, 0, sock, a, 0, 0, NULL, 0);
	send_msg(t, ch, &m);
}

static void event_all(struct toe *t, struct toe_sock *s, enum srpc_type type, int a)
{
	for (uint32_t ch = 0; ch < t->p.nchannels; ch++)
		if (s->chans & (1ull << ch))
			event_to(t, ch, type, s->id, a);
}

/* ---- the per-direction stages ------------------------------------------- */

/*
 * Each direction has an input queue (buffers as they come from the
 * kernel socket or the TX ring, in order) and an output queue (what may
 * go on to the guest or the wire).  Between them, the chain stage: with
 * no chain set in that direction a buffer passes straight through; with
 * one (toe_chain_active) it is submitted to the packet scheduler and its
 * result comes back in the same global order.  A direction whose chain
 * was deleted keeps submitting until what it submitted has come back, so
 * nothing overtakes.  Outbound payload is first copied into R.out (the
 * guest's buffer is granted back at once): the VNFs inspect, and the
 * kernel socket sends, that private copy only (TOCTOU, design section 3).
 */

static void sock_flush_tx(struct toe *t, struct toe_sock *s);
static void sock_fail(struct toe *t, struct toe_sock *s, int err);
static void flow_state(struct toe *t, struct toe_sock *s, uint8_t state);

/* The bytes of item @idx: a slot of the guest region or of R.out. */
static uint8_t *item_data(struct toe *t, uint32_t idx)
{
	if (idx < t->p.nbufs)
		return tcr_region_slot(t->r, idx);
	return toe_chain_out_slot(t->tc, idx - t->p.nbufs);
}

static void fill_pkt(const struct toe_sock *s, uint32_t dir, struct ch_pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->conn_id = s->id;
	p->flow = s->flow;
	p->family = s->key.family;
	p->l4proto = s->dgram ? IPPROTO_UDP : IPPROTO_TCP;
	if (dir == TOE_DIR_OUT) {	/* the VM's side is the source */
		p->sport = s->key.sport;
		p->dport = s->key.dport;
		memcpy(p->saddr, s->key.saddr, 16);
		memcpy(p->daddr, s->key.daddr, 16);
	} else {
		p->sport = s->key.dport;
		p->dport = s->key.sport;
		memcpy(p->saddr, s->key.daddr, 16);
		memcpy(p->daddr, s->key.saddr, 16);
	}
}

static void addr_str(char *out, size_t size, uint8_t family, const uint8_t *a, uint16_t port)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, a, ip, sizeof(ip));
	snprintf(out, size, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
}

/*
 * A chain denied a descriptor of @s.  TCP: the connection is aborted
 * (RST to the peer, ECONNRESET to the guest) and everything of it still
 * on its way is dropped.  UDP: only that datagram is dropped.  Both are
 * logged and recorded for stats.
 */
static void sock_deny(struct toe *t, struct toe_sock *s, const struct ch_result *r)
{
	char src[54], dst[54], conn[112], cname[TOE_NAME_MAX + 1], vname[TOE_NAME_MAX + 1];

	if (s->denied)
		return;		/* already reset: later descriptors go quietly */
	addr_str(src, sizeof(src), r->pkt.family, r->pkt.saddr, r->pkt.sport);
	addr_str(dst, sizeof(dst), r->pkt.family, r->pkt.daddr, r->pkt.dport);
	snprintf(conn, sizeof(conn), "%s>%s", src, dst);
	toe_chain_deny_note(t->tc, r, conn, cname, vname);
	t->st.denials++;
	fprintf(stderr, "tochain-toe[%s]: denied: chain %s (%s) vnf %s rule %u reason %s conn %s%s\n",
		t->p.name, cname, r->chain == TOE_DIR_IN ? "in" : "out", vname, r->deny_rule,
		toe_chain_reason_name(r->reason), conn,
		s->dgram ? ": datagram dropped" : ": connection reset");
	if (s->dgram)
		return;
	s->denied = true;
	if (!s->failed) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };
		struct sockaddr sa = { .sa_family = AF_UNSPEC };

		/*
		 * RST now (an abortive disconnect) while the descriptor stays
		 * valid: the guest still holds the socket id until it closes.
		 */
		setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		if (connect(s->fd, &sa, sizeof(sa))) {
			/* already disconnected: nothing more to send */
		}
		sock_fail(t, s, ECONNRESET);
	}
	if (s->flow != TCR_FLOW_NONE)
		ch_flow_set_state(toe_chain_flows(t->tc), s->flow, CH_FLOW_CLOSING);
}

static void rx_drop(struct toe *t, struct toe_sock *s, uint32_t idx)
{
	if (s) {
		s->rx_queued--;
		if (s->rx_inflight)
			s->rx_inflight--;
	}
	t->buf_sock[idx] = 0;
	tcr_pool_free(t->pool, &idx, 1);
}

/* Inbound: submit (or pass) the input queue in order.  true: did something. */
static bool stage_in(struct toe *t)
{
	bool did = false;

	while (t->in_input.n) {
		uint32_t idx = t->in_input.head;
		struct toe_sock *s = sock_get(t, t->buf_sock[idx]);
		struct ch_pkt p;

		if (s && !s->denied && toe_chain_active(t->tc, TOE_DIR_IN)) {
			fill_pkt(s, TOE_DIR_IN, &p);
			p.cookie = idx;
			p.region = TOE_REGION_GUEST;
			p.buf = idx;
			p.off = t->buf_off[idx];
			p.len = t->buf_len[idx];
			p.seq = t->buf_seq[idx];
			if (!toe_chain_submit(t->tc, TOE_DIR_IN, &p))
				break;	/* full: retried when results come back */
			bufq_pop(t, &t->in_input);
		} else {
			bufq_pop(t, &t->in_input);
			bufq_push(t, &t->in_output, idx);
		}
		did = true;
	}
	return did;
}

/*
 * Outbound: copy each payload into R.out and submit the copy, or pass
 * the buffer when no chain is set (zero copy, as without chains).
 */
static bool stage_out(struct toe *t)
{
	bool did = false;

	while (t->out_input.n) {
		uint32_t idx = t->out_input.head;
		struct toe_sock *s = sock_get(t, t->buf_sock[idx]);
		uint32_t len = t->buf_len[idx], x;
		struct ch_pkt p;
		int o;

		if (!s || s->failed || !toe_chain_active(t->tc, TOE_DIR_OUT)) {
			bufq_pop(t, &t->out_input);
			bufq_push(t, &t->out_output, idx);
			did = true;
			continue;
		}
		o = toe_chain_out_alloc(t->tc);
		if (o < 0)
			break;	/* R.out full: slots come back as data is sent */
		x = t->p.nbufs + (uint32_t)o;
		/* buf_off/buf_len were validated against the slot in take_tx */
		memcpy(item_data(t, x), item_data(t, idx) + t->buf_off[idx], len);
		fill_pkt(s, TOE_DIR_OUT, &p);
		p.cookie = x;
		p.region = TOE_REGION_OUT;
		p.buf = (uint32_t)o;
		p.off = 0;
		p.len = len;
		p.seq = s->tx_seq;
		if (!toe_chain_submit(t->tc, TOE_DIR_OUT, &p)) {
			toe_chain_out_free(t->tc, (uint32_t)o);
			break;
		}
		s->tx_seq += len;
		t->buf_sock[x] = s->id;
		t->buf_len[x] = len;
		t->buf_off[x] = 0;
		t->buf_dst[x] = t->buf_dst[idx];
		bufq_pop(t, &t->out_input);
		/* the copy is what goes on: the guest's buffer is granted back now */
		regrant(t, idx, s->id);
		did = true;
	}
	return did;
}

/* Results of both chains, in their order, to the output queues. */
static bool stage_results(struct toe *t)
{
	struct ch_result r[32];
	unsigned int k;
	bool did = false;

	while ((k = toe_chain_take(t->tc, TOE_DIR_IN, r, 32)) > 0) {
		did = true;
		for (unsigned int i = 0; i < k; i++) {
			uint32_t idx = (uint32_t)r[i].pkt.cookie;
			struct toe_sock *s = sock_get(t, t->buf_sock[idx]);

			if (r[i].verdict == CH_ALLOW) {
				bufq_push(t, &t->in_output, idx);
				continue;
			}
			if (s)
				sock_deny(t, s, &r[i]);
			rx_drop(t, s, idx);
		}
	}
	while ((k = toe_chain_take(t->tc, TOE_DIR_OUT, r, 32)) > 0) {
		did = true;
		for (unsigned int i = 0; i < k; i++) {
			uint32_t x = (uint32_t)r[i].pkt.cookie;
			struct toe_sock *s = sock_get(t, t->buf_sock[x]);

			if (r[i].verdict == CH_ALLOW) {
				bufq_push(t, &t->out_output, x);
				continue;
			}
			if (s)
				sock_deny(t, s, &r[i]);
			regrant(t, x, t->buf_sock[x]);	/* frees the R.out slot */
			if (s && --s->tx_pending == 0 && s->closing)
				sock_free(t, s);
		}
	}
	return did;
}

static bool toe_chain_step(struct toe *t)
{
	bool did = stage_results(t);

	did |= stage_in(t);
	did |= stage_out(t);
	toe_chain_flow_reclaim(t->tc);
	return did;
}

/* Output queues: inbound to the guest's RX ring, outbound to socket queues. */
static void drain_outputs(struct toe *t)
{
	uint32_t idx;

	while ((idx = bufq_pop(t, &t->in_output)) != NO_BUF) {
		struct toe_sock *s = sock_get(t, t->buf_sock[idx]);

		if (!s || s->denied || !t->ch[s->owner].open || chan_send_buf(t, s->owner, idx)) {
			rx_drop(t, s, idx);
		} else {
			s->rx_queued--;
		}
		/* the EOF follows the last byte before it (srpc.h) */
		if (s && s->eof_pending && !s->rx_queued) {
			s->eof_pending = false;
			if (!s->denied)
				event_to(t, s->owner, SRPC_EV_EOF, s->id, 0);
		}
	}
	while ((idx = bufq_pop(t, &t->out_output)) != NO_BUF) {
		struct toe_sock *s = sock_get(t, t->buf_sock[idx]);

		if (!s || s->failed) {
			regrant(t, idx, t->buf_sock[idx]);
			if (s && --s->tx_pending == 0 && s->closing)
				sock_free(t, s);
			continue;
		}
		bufq_push(t, &s->txq, idx);
		sock_flush_tx(t, s);
	}
}

/* ---- kernel socket I/O --------------------------------------------------- */

/* A TX buffer is done: grant it again to the channel it came from. */
static void regrant(struct toe *t, uint32_t idx, uint32_t sock_id)
{
	struct toe_chan *c;
	struct tcr_desc d = { 0 };
	uint32_t ch;

	t->buf_sock[idx] = 0;	/* not an RX buffer: DONE must not count it */
	if (idx >= t->p.nbufs) {	/* a private copy in R.out */
		toe_chain_out_free(t->tc, idx - t->p.nbufs);
		return;
	}
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

static void sock_fail(struct toe *t, struct toe_sock *s, int err)
{
	uint32_t idx;

	if (s->failed)
		return;
	s->failed = true;
	while ((idx = bufq_pop(t, &s->txq)) != NO_BUF) {
		s->tx_pending--;
		regrant(t, idx, s->id);
	}
	if (s->closing && !s->tx_pending) {
		sock_free(t, s);
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
static void dgram_flush_tx(struct toe *t, struct toe_sock *s)
{
	while (s->txq.n) {
		uint32_t idx = s->txq.head;
		const struct toe_dgaddr *dst = &t->buf_dst[idx];
		ssize_t n;

		n = sendto(s->fd, item_data(t, idx) + t->buf_off[idx], t->buf_len[idx],
			   MSG_NOSIGNAL | MSG_DONTWAIT,
			   dst->len ? (const struct sockaddr *)&dst->a : NULL, dst->len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n < 0)
			event_to(t, s->owner, SRPC_EV_ERROR, s->id, errno);
		if (n > 0)
			t->st.bytes_out += (uint64_t)n;
		bufq_pop(t, &s->txq);
		s->tx_pending--;
		regrant(t, idx, s->id);
	}
	if (!s->tx_pending && s->closing) {
		sock_free(t, s);
		return;
	}
	sock_arm(t, s);
}

static void sock_flush_tx(struct toe *t, struct toe_sock *s)
{
	if (s->dgram) {
		dgram_flush_tx(t, s);
		return;
	}
	while (s->txq.n) {
		uint32_t idx = s->txq.head;
		uint32_t len = t->buf_len[idx];
		ssize_t n;

		if (s->tx_off < len) {
			/*
			 * With an out chain, idx names the TOE's private copy in
			 * R.out (what the VNFs inspected); without one, the
			 * guest's slot, zero copy (design section 3).
			 */
			n = send(s->fd, item_data(t, idx) + t->buf_off[idx] + s->tx_off,
				 len - s->tx_off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				sock_fail(t, s, errno);
				return;
			}
			s->tx_off += (uint32_t)n;
			t->st.bytes_out += (uint64_t)n;
			if (s->tx_off < len)
				break;
		}
		bufq_pop(t, &s->txq);
		s->tx_off = 0;
		s->tx_pending--;
		regrant(t, idx, s->id);
	}
	if (!s->tx_pending) {
		if (s->shut_wr_pending) {
			s->shut_wr_pending = false;
			shutdown(s->fd, SHUT_WR);
		}
		if (s->closing) {
			sock_free(t, s);
			return;
		}
	}
	sock_arm(t, s);
}

/*
 * Datagrams: one per buffer, its source address in the header.  At the
 * per-socket bound the socket is not read, and the kernel drops what its
 * receive buffer cannot hold (UDP semantics).
 */
static void dgram_read(struct toe *t, struct toe_sock *s)
{
	uint32_t cap = t->p.slot_size - SRPC_DGRAM_HDR;

	while (!s->failed && s->rx_inflight < t->p.rx_bound &&
	       tcr_pool_count(t->pool, TCR_HOLDER_FREE) > RESERVE_BUFS && chan_room(t, s->owner)) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct srpc_dgram h = { 0 };
		struct tcr_desc d = { 0 };
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
			event_to(t, s->owner, SRPC_EV_ERROR, s->id, err);
			continue;
		}
		if ((size_t)n > cap) {
			h.flags = SRPC_DGRAM_TRUNC;
			n = cap;
		}
		h.addrlen = sl <= SRPC_DGRAM_ADDR_MAX ? sl : 0;
		memcpy(h.addr, &ss, h.addrlen);
		memcpy(slot, &h, sizeof(h));
		d.slot = idx;
		d.len = SRPC_DGRAM_HDR + (uint32_t)n;
		d.op = TCR_OP_DATA;
		d.conn_id = s->id;
		d.l4proto = IPPROTO_UDP;
		d.tsc = tcr_tsc_now();
		tcr_desc_store(t->r, idx, &d);
		t->buf_sock[idx] = s->id;
		t->buf_off[idx] = SRPC_DGRAM_HDR;
		t->buf_len[idx] = (uint32_t)n;
		t->buf_seq[idx] = 0;
		s->rx_inflight++;
		s->rx_queued++;
		t->st.bytes_in += (uint64_t)n;
		bufq_push(t, &t->in_input, idx);
	}
	sock_arm(t, s);
}

static void sock_read(struct toe *t, struct toe_sock *s)
{
	if (s->dgram) {
		dgram_read(t, s);
		return;
	}
	while (!s->rd_eof && !s->failed && s->rx_inflight < t->p.rx_bound &&
	       tcr_pool_count(t->pool, TCR_HOLDER_FREE) > RESERVE_BUFS && chan_room(t, s->owner)) {
		struct tcr_desc d = { 0 };
		uint32_t idx;
		ssize_t n;

		tcr_pool_alloc(t->pool, &idx, 1);
		n = recv(s->fd, tcr_region_slot(t->r, idx), t->p.slot_size, MSG_DONTWAIT);
		if (n <= 0) {
			int err = n < 0 ? errno : 0;

			tcr_pool_free(t->pool, &idx, 1);
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
					event_to(t, s->owner, SRPC_EV_EOF, s->id, 0);
			} else {
				sock_fail(t, s, err);
				return;
			}
			break;
		}
		d.slot = idx;
		d.len = (uint32_t)n;
		d.op = TCR_OP_DATA;
		d.conn_id = s->id;
		d.l4proto = IPPROTO_TCP;
		d.tsc = tcr_tsc_now();
		tcr_desc_store(t->r, idx, &d);
		t->buf_sock[idx] = s->id;
		t->buf_off[idx] = 0;
		t->buf_len[idx] = (uint32_t)n;
		t->buf_seq[idx] = s->rx_seq;
		s->rx_seq += (uint64_t)n;
		s->rx_inflight++;
		s->rx_queued++;
		t->st.bytes_in += (uint64_t)n;
		bufq_push(t, &t->in_input, idx);	/* inbound input queue */
	}
	sock_arm(t, s);
}

static void sock_event(struct toe *t, uint32_t id, uint32_t events)
{
	struct toe_sock *s = sock_get(t, id);

	if (!s)
		return;
	if (s->dgram) {
		if (events & EPOLLERR) {
			int err = 0;
			socklen_t len = sizeof(err);

			/* a pending ICMP error: the guest's next call reports it, not fatal */
			getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
			if (err)
				event_to(t, s->owner, SRPC_EV_ERROR, s->id, err);
		}
		if (events & (EPOLLIN | EPOLLERR))
			dgram_read(t, s);
		s = sock_get(t, id);
		if (s && (events & (EPOLLOUT | EPOLLERR)) && s->txq.n)
			dgram_flush_tx(t, s);
		return;
	}
	if (s->listening) {
		if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
			s->accept_armed = false;
			event_all(t, s, SRPC_EV_ACCEPTABLE, 1);
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
			flow_state(t, s, CH_FLOW_ESTABLISHED);
		}
		event_to(t, s->owner, SRPC_EV_CONNECTED, s->id, err);
		sock_arm(t, s);
		return;
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))
		sock_read(t, s);
	s = sock_get(t, id);
	if (s && (events & (EPOLLOUT | EPOLLERR)) && s->txq.n)
		sock_flush_tx(t, s);
}

/* ---- flows (chain/ch_flow.h) ---------------------------------------------- */

static void key_side(const struct sockaddr_storage *ss, uint8_t *addr, uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		memcpy(addr, &in->sin_addr, 4);
		*port = ntohs(in->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		memcpy(addr, &in6->sin6_addr, 16);
		*port = ntohs(in6->sin6_port);
	}
}

/*
 * Record the 5-tuple of TCP socket @s (the VM's side as source; @peer, or
 * the kernel's peer address when NULL) and open its flow entry in @state.
 * A full table leaves the connection without one (TCR_FLOW_NONE).
 */
static void flow_open(struct toe *t, struct toe_sock *s, const struct sockaddr_storage *peer,
		      uint8_t state)
{
	struct sockaddr_storage me, pe;
	socklen_t ml = sizeof(me), pl = sizeof(pe);
	int idx;

	if (getsockname(s->fd, (struct sockaddr *)&me, &ml))
		return;
	if (!peer) {
		if (getpeername(s->fd, (struct sockaddr *)&pe, &pl))
			return;
		peer = &pe;
	}
	if ((me.ss_family != AF_INET && me.ss_family != AF_INET6) ||
	    peer->ss_family != me.ss_family)
		return;
	memset(&s->key, 0, sizeof(s->key));
	s->key.family = (uint8_t)me.ss_family;
	s->key.l4proto = IPPROTO_TCP;
	key_side(&me, s->key.saddr, &s->key.sport);
	key_side(peer, s->key.daddr, &s->key.dport);
	idx = ch_flow_open(toe_chain_flows(t->tc), &s->key, state);
	s->flow = idx >= 0 ? (uint32_t)idx : TCR_FLOW_NONE;
}

static void flow_state(struct toe *t, struct toe_sock *s, uint8_t state)
{
	if (s->flow != TCR_FLOW_NONE)
		ch_flow_set_state(toe_chain_flows(t->tc), s->flow, state);
}

/* ---- requests --------------------------------------------------------------- */

static void do_request(struct toe *t, uint32_t ch, const struct srpc_req *q)
{
	const struct srpc_msg *m = &q->m;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct toe_sock *s = NULL;
	int ret = 0, fd;

	if (m->type != SRPC_REQ_SOCKET) {
		s = sock_of(t, ch, m->sock);
		if (!s && m->type == SRPC_REQ_ADOPT) {
			s = sock_get(t, m->sock);
			/* only sockets a sibling of this guest holds */
			if (s && s->closing)
				s = NULL;
		}
		if (!s) {
			respond(t, ch, m->tag, m->sock, -EBADF, 0, NULL, 0);
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
		if (m->b == SOCK_DGRAM) {
			s->dgram = true;
			s->connected = true;	/* data may flow from the start */
			sock_arm(t, s);
		}
		ret = (int)(s->id & 0x7fffffff);
		break;
	case SRPC_REQ_BIND:
		ret = bind(s->fd, (const struct sockaddr *)&q->addr, q->addrlen) ? -errno : 0;
		break;
	case SRPC_REQ_LISTEN:
		if (s->dgram) {
			ret = -EOPNOTSUPP;
			break;
		}
		ret = listen(s->fd, m->a) ? -errno : 0;
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
		fd = accept4(s->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			if (ret == -EAGAIN) {
				s->accept_armed = true;
				sock_arm(t, s);
			}
			break;
		}
		n = sock_new(t, fd, ch);
		if (!n) {
			ret = -errno;
			close(fd);
			break;
		}
		n->connected = true;
		flow_open(t, n, &ss, CH_FLOW_ESTABLISHED);
		sock_arm(t, n);
		pfd.fd = s->fd;
		pfd.events = POLLIN;
		more = poll(&pfd, 1, 0) > 0;
		if (!more) {
			s->accept_armed = true;
			sock_arm(t, s);
			/* processes sharing the listener: nothing is waiting now */
			for (uint32_t o = 0; o < t->p.nchannels; o++)
				if (o != ch && (s->chans & (1ull << o)))
					event_to(t, o, SRPC_EV_ACCEPTABLE, s->id, 0);
		}
		respond(t, ch, m->tag, m->sock, (int)n->id, more, &ss,
			sl < sizeof(ss) ? sl : sizeof(ss));
		return;
	}
	case SRPC_REQ_CONNECT:
		if (connect(s->fd, (const struct sockaddr *)&q->addr, q->addrlen) == 0) {
			ret = 0;
			s->connected = true;
		} else {
			ret = -errno;
			if (ret == -EINPROGRESS)
				s->connecting = true;
		}
		if (!s->dgram && s->flow == TCR_FLOW_NONE && (ret == 0 || ret == -EINPROGRESS)) {
			struct sockaddr_storage peer = { 0 };

			memcpy(&peer, &q->addr, q->addrlen < sizeof(peer) ? q->addrlen : sizeof(peer));
			flow_open(t, s, &peer, ret ? CH_FLOW_SYN : CH_FLOW_ESTABLISHED);
		}
		sock_arm(t, s);
		break;
	case SRPC_REQ_SHUTDOWN:
		if (m->a == SHUT_WR || m->a == SHUT_RDWR)
			flow_state(t, s, CH_FLOW_CLOSING);
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
		respond(t, ch, m->tag, m->sock, 0, 0, NULL, 0);
		sock_unref(t, s, ch);
		return;
	case SRPC_REQ_SETSOCKOPT:
		ret = setsockopt(s->fd, m->a, m->b, m->data, m->dlen) ? -errno : 0;
		break;
	case SRPC_REQ_GETSOCKOPT: {
		uint8_t val[SRPC_DATA_MAX];
		socklen_t vl = (socklen_t)m->c;

		if (getsockopt(s->fd, m->a, m->b, val, &vl)) {
			ret = -errno;
			break;
		}
		respond(t, ch, m->tag, m->sock, 0, (int)vl, val,
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
		respond(t, ch, m->tag, m->sock, 0, (int)sl, &ss, sl < sizeof(ss) ? sl : sizeof(ss));
		return;
	case SRPC_REQ_ADOPT:
		s->chans |= 1ull << ch;
		if (m->a == 1) {
			/* exec: the new image is where the data must go */
			s->owner = ch;
			sock_arm(t, s);
		}
		ret = 0;
		break;
	}
	respond(t, ch, m->tag, m->sock, ret, 0, NULL, 0);
}

/* ---- channels ------------------------------------------------------------- */

static void chan_drop(struct toe *t, uint32_t ch, const char *why)
{
	struct toe_chan *c = &t->ch[ch];

	if (!c->open)
		return;
	logf_(t, "channel %u closed: %s", ch, why);
	c->open = false;
	for (uint32_t i = 0; i < t->p.max_socks; i++) {
		struct toe_sock *s = &t->socks[i];

		if (s->id && (s->chans & (1ull << ch)))
			sock_unref(t, s, ch);
	}
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
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->conn, NULL);
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->efd_in, NULL);
	close(c->conn);
	close(c->efd_in);
	close(c->efd_out);
	t->st.guests_dropped++;
}

static void bad_guest(struct toe *t, uint32_t ch, const char *why)
{
	t->st.bad_messages++;
	chan_drop(t, ch, why);
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
	if (tcr_desc_load(t->r, idx, &d)) {
		tcr_pool_free(t->pool, &idx, 1);
		return false;
	}
	if (d.op == TCR_OP_DATA) {
		struct toe_sock *s = d.conn_id <= 0xffffffffu ? sock_of(t, ch, (uint32_t)d.conn_id)
							       : NULL;

		t->buf_off[idx] = d.off;
		t->buf_len[idx] = d.len;
		if (s && s->dgram) {
			struct srpc_dgram h;
			struct toe_dgaddr *dst = &t->buf_dst[idx];

			/* header read once into private memory, then validated */
			if (d.len < SRPC_DGRAM_HDR)
				goto drop;
			memcpy(&h, tcr_region_slot(t->r, idx) + d.off, sizeof(h));
			if (srpc_dgram_addr(&h, &dst->a, &dst->len)) {
				t->st.bad_messages++;
				goto drop;
			}
			t->buf_off[idx] = d.off + SRPC_DGRAM_HDR;
			t->buf_len[idx] = d.len - SRPC_DGRAM_HDR;
			t->buf_sock[idx] = s->id;
			s->tx_pending++;
			bufq_push(t, &t->out_input, idx);
			return true;
drop:
			regrant(t, idx, s->id);
			return true;
		}
		if (!s || s->failed || s->listening || d.len == 0) {
			/* data for a socket it does not hold, or a dead one: drop it */
			regrant(t, idx, s ? s->id : 0);
			return true;
		}
		t->buf_sock[idx] = s->id;
		s->tx_pending++;
		bufq_push(t, &t->out_input, idx);	/* outbound input queue */
		return true;
	}
	if (d.op != TCR_OP_CTRL) {
		tcr_pool_free(t->pool, &idx, 1);
		return false;
	}
	err = srpc_decode_req(tcr_region_slot(t->r, idx) + d.off, d.len, &q);
	regrant(t, idx, 0);	/* the request was copied: the buffer is free again */
	if (err == -EPROTO)
		return false;
	if (err) {
		t->st.bad_messages++;
		respond(t, ch, q.m.tag, q.m.sock, err, 0, NULL, 0);
		return true;
	}
	do_request(t, ch, &q);
	return true;
}

/* A buffer the guest is done with (DONE ring): RX data or an unused grant. */
static void take_done(struct toe *t, uint32_t idx)
{
	struct toe_sock *s = t->buf_sock[idx] ? sock_get(t, t->buf_sock[idx]) : NULL;

	t->buf_sock[idx] = 0;
	tcr_pool_free(t->pool, &idx, 1);
	if (s && s->rx_inflight) {
		s->rx_inflight--;
		if (s->rx_inflight + 1 == t->p.rx_bound || s->rx_inflight == 0)
			sock_read(t, s);	/* room again: resume reading */
	}
}

/* Returns true when it did something. */
static bool chan_service(struct toe *t, uint32_t ch)
{
	struct toe_chan *c = &t->ch[ch];
	uint32_t idx[64];
	bool did = false;
	int k, budget = TX_BUDGET;

	while (c->open && budget > 0) {
		k = tcr_chan_recv(&c->c, t->pool, TCR_CH_DONE, idx, 64);
		if (k < 0) {
			bad_guest(t, ch, "bad DONE ring");
			return true;
		}
		if (k == 0)
			break;
		did = true;
		budget -= k;
		for (int i = 0; i < k; i++)
			take_done(t, idx[i]);
	}
	if (c->open && c->capped &&
	    tcr_pool_count(t->pool, TCR_HOLDER_CH(ch)) < (int)t->chan_cap) {
		/* below its share again: read its sockets */
		c->capped = false;
		for (uint32_t i = 0; i < t->p.max_socks; i++)
			if (t->socks[i].id && t->socks[i].owner == ch)
				sock_read(t, &t->socks[i]);
	}
	/* A guest that leaves its answers unread gets no new ones. */
	budget = c->npend >= PEND_SLOW ? 0 : TX_BUDGET;
	while (c->open && budget > 0) {
		k = tcr_chan_recv(&c->c, t->pool, TCR_CH_TX, idx, 64);
		if (k < 0) {
			bad_guest(t, ch, "bad TX ring");
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
				bad_guest(t, ch, "bad message");
				return true;
			}
		}
	}
	return did;
}

static void chan_kick(struct toe *t, uint32_t ch)
{
	struct toe_chan *c = &t->ch[ch];
	uint64_t one = 1;

	if (!c->open || !c->kick)
		return;
	c->kick = false;
	if (tcr_ring_prod_kick_needed(&c->c.ring[TCR_CH_RX]) ||
	    tcr_ring_prod_kick_needed(&c->c.ring[TCR_CH_FREE])) {
		tcr_ring_kick_consumer(&c->c.ring[TCR_CH_RX]);
		if (write(c->efd_out, &one, sizeof(one)) < 0) {
			/* a full eventfd counter still wakes the guest */
		}
	}
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
	    h->version != SRPC_VERSION || *efd < 0 || (mh.msg_flags & MSG_CTRUNC)) {
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
static void hello_drop(struct toe *t, int i)
{
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, t->hello[i].fd, NULL);
	close(t->hello[i].fd);
	t->hello[i].fd = -1;
}

static void accept_guest(struct toe *t)
{
	struct epoll_event ev = { .events = EPOLLIN };
	time_t now = time(NULL);
	int conn, slot = -1;

	conn = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (conn < 0)
		return;
	for (int i = 0; i < HELLO_MAX; i++) {
		if (t->hello[i].fd >= 0 && now - t->hello[i].since > HELLO_TIMEOUT_S) {
			hello_drop(t, i);
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

static void attach_guest(struct toe *t, int slot)
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
	t->st.guests_attached++;
	logf_(t, "channel %u attached (pid %u)", ch, h.pid);
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

/* ---- life cycle ------------------------------------------------------------- */

struct toe *toe_create(const struct toe_params *p)
{
	struct tcr_params rp = {
		.name = p->name, .kind = TCR_KIND_GUEST, .nbufs = p->nbufs,
		.slot_size = p->slot_size, .nchannels = p->nchannels,
	};
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct epoll_event ev;
	sigset_t sigs;
	struct toe *t;
	uint32_t out_nbufs;
	int err = EINVAL;

	if (!p->region_path || !tcr_name_valid(p->name) || p->slot_size < SRPC_MSG_MAX ||
	    p->nchannels == 0 || p->nchannels > TCR_MAX_CHANNELS ||
	    p->max_socks == 0 || p->max_socks > 0xffff ||
	    (uint64_t)p->nchannels * p->grants + RESERVE_BUFS * 2 > p->nbufs)
		goto out_errno;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = ENOMEM;
		goto out_errno;
	}
	t->p = *p;
	t->chan_cap = p->nbufs / 4;
	if (t->chan_cap < p->grants + 4 * 16)
		t->chan_cap = p->grants + 4 * 16;
	if (!t->p.rx_bound) {
		t->p.rx_bound = (256u << 10) / p->slot_size;
		if (t->p.rx_bound < 16)
			t->p.rx_bound = 16;
		if (t->p.rx_bound > p->nbufs / 8)
			t->p.rx_bound = p->nbufs / 8 > 1 ? p->nbufs / 8 : 1;
	}
	t->epfd = t->lfd = t->sfd = -1;
	for (int i = 0; i < HELLO_MAX; i++)
		t->hello[i].fd = -1;
	err = ENOMEM;
	out_nbufs = p->nbufs / 4 > 16 ? p->nbufs / 4 : 16;
	t->nitems = p->nbufs + out_nbufs;
	t->ch = calloc(p->nchannels, sizeof(*t->ch));
	t->socks = calloc(p->max_socks, sizeof(*t->socks));
	t->buf_next = calloc(t->nitems, sizeof(uint32_t));
	t->buf_sock = calloc(t->nitems, sizeof(uint32_t));
	t->buf_len = calloc(t->nitems, sizeof(uint32_t));
	t->buf_off = calloc(t->nitems, sizeof(uint32_t));
	t->buf_chan = calloc(p->nbufs, sizeof(uint16_t));
	t->buf_epoch = calloc(p->nbufs, sizeof(uint32_t));
	t->buf_dst = calloc(t->nitems, sizeof(*t->buf_dst));
	t->buf_seq = calloc(t->nitems, sizeof(uint64_t));
	t->sock_path = malloc(strlen(p->region_path) + 6);
	t->ctl_path = malloc(strlen(p->region_path) + 5);
	if (!t->ch || !t->socks || !t->buf_next || !t->buf_sock || !t->buf_len ||
	    !t->buf_off || !t->buf_chan || !t->buf_epoch || !t->buf_dst || !t->buf_seq ||
	    !t->sock_path || !t->ctl_path)
		goto out_free;
	sprintf(t->ctl_path, "%s.ctl", p->region_path);
	sprintf(t->sock_path, "%s.sock", p->region_path);
	err = ENAMETOOLONG;
	if (strlen(t->sock_path) >= sizeof(sun.sun_path))
		goto out_free;
	strcpy(sun.sun_path, t->sock_path);

	t->r = tcr_region_create(p->region_path, &rp);
	if (!t->r) {
		err = errno;
		goto out_free;
	}
	t->pool = tcr_pool_create(t->r);
	if (!t->pool) {
		err = errno;
		goto out_region;
	}
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	t->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (t->epfd < 0 || t->lfd < 0) {
		err = errno;
		goto out_fds;
	}
	unlink(t->sock_path);
	if (bind(t->lfd, (struct sockaddr *)&sun, sizeof(sun)) || listen(t->lfd, 64)) {
		err = errno;
		goto out_fds;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	t->sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (t->sfd < 0) {
		err = errno;
		goto out_unlink;
	}
	ev.events = EPOLLIN;
	ev.data.u64 = EV_KEY(EV_ATTACH, 0);
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->lfd, &ev)) {
		err = errno;
		goto out_unlink;
	}
	ev.data.u64 = EV_KEY(EV_SIGNAL, 0);
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->sfd, &ev)) {
		err = errno;
		goto out_unlink;
	}
	t->tc = toe_chain_create(p->region_path, p->nbufs, p->slot_size, out_nbufs,
				 2 * p->max_socks);
	if (!t->tc) {
		err = errno;
		goto out_unlink;
	}
	ev.data.u64 = EV_KEY(EV_CHAIN, 0);
	if (toe_chain_notify_fd(t->tc) < 0 ||
	    epoll_ctl(t->epfd, EPOLL_CTL_ADD, toe_chain_notify_fd(t->tc), &ev)) {
		err = toe_chain_notify_fd(t->tc) < 0 ? EMFILE : errno;
		goto out_chain;
	}
	t->ctl = toe_ctl_start(t->ctl_path, p->name, t->tc);
	if (!t->ctl) {
		err = errno;
		goto out_chain;
	}
	return t;

out_chain:
	toe_chain_destroy(t->tc);
out_unlink:
	unlink(t->sock_path);
out_fds:
	if (t->sfd >= 0)
		close(t->sfd);
	if (t->lfd >= 0)
		close(t->lfd);
	if (t->epfd >= 0)
		close(t->epfd);
	tcr_pool_destroy(t->pool);
out_region:
	tcr_region_kill(t->r);
	tcr_region_destroy(t->r);
out_free:
	free(t->ctl_path);
	free(t->buf_seq);
	free(t->sock_path);
	free(t->buf_epoch);
	free(t->buf_dst);
	free(t->buf_chan);
	free(t->buf_off);
	free(t->buf_len);
	free(t->buf_sock);
	free(t->buf_next);
	free(t->socks);
	free(t->ch);
	free(t);
out_errno:
	errno = err;
	return NULL;
}

void toe_stop(struct toe *t)
{
	t->stop = true;
}

/* Announce sleep on every TX and DONE ring; false if work arrived meanwhile. */
static bool prepare_sleep(struct toe *t)
{
	bool idle = true;

	for (uint32_t ch = 0; ch < t->p.nchannels; ch++) {
		struct toe_chan *c = &t->ch[ch];

		if (!c->open)
			continue;
		tcr_ring_cons_wait_prepare(&c->c.ring[TCR_CH_TX]);
		tcr_ring_cons_wait_prepare(&c->c.ring[TCR_CH_DONE]);
		if (tcr_ring_count(&c->c.ring[TCR_CH_TX]) != 0 ||
		    tcr_ring_count(&c->c.ring[TCR_CH_DONE]) != 0 || c->pend)
			idle = false;
	}
	return idle;
}

static void wake_done(struct toe *t)
{
	for (uint32_t ch = 0; ch < t->p.nchannels; ch++) {
		if (!t->ch[ch].open)
			continue;
		tcr_ring_cons_wait_done(&t->ch[ch].c.ring[TCR_CH_TX]);
		tcr_ring_cons_wait_done(&t->ch[ch].c.ring[TCR_CH_DONE]);
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Under load, poll a little before sleeping: a request/response exchange
 * then costs no wake-up on either side.  Bounded (SPIN_NS), so an idle
 * TOE still sleeps at once after its last work.  Everything in the epoll
 * set is level-triggered, so a peek with epoll_wait(0) loses nothing.
 */
#define SPIN_NS 20000

static bool spin_for_work(struct toe *t)
{
	uint64_t end = mono_ns() + SPIN_NS;
	struct epoll_event ev;

	do {
		for (uint32_t ch = 0; ch < t->p.nchannels; ch++) {
			struct toe_chan *c = &t->ch[ch];

			if (c->open && (tcr_ring_count(&c->c.ring[TCR_CH_TX]) ||
					tcr_ring_count(&c->c.ring[TCR_CH_DONE])))
				return true;
		}
		if (toe_chain_results_waiting(t->tc))
			return true;
		if (epoll_wait(t->epfd, &ev, 1, 0) > 0)
			return true;
		tc_cpu_relax();
	} while (mono_ns() < end);
	return false;
}

int toe_run(struct toe *t)
{
	struct epoll_event evs[64];
	bool busy = true;

	if (t->p.ready_fd >= 0) {
		char c = 'R';

		if (write(t->p.ready_fd, &c, 1) != 1)
			return -errno;
		close(t->p.ready_fd);
		t->p.ready_fd = -1;
	}
	while (!t->stop) {
		int n, timeout = 0;

		/* with descriptors out at the chains, sleep only until results come */
		if (!busy && !spin_for_work(t) && prepare_sleep(t) && toe_chain_arm(t->tc))
			timeout = -1;
		n = epoll_wait(t->epfd, evs, 64, timeout);
		if (timeout)
			wake_done(t);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			uint32_t kind = (uint32_t)(evs[i].data.u64 >> 32);
			uint32_t idx = (uint32_t)evs[i].data.u64;
			uint64_t v;

			switch (kind) {
			case EV_ATTACH:
				accept_guest(t);
				break;
			case EV_HELLO:
				attach_guest(t, (int)idx);
				break;
			case EV_SIGNAL:
				t->stop = true;
				break;
			case EV_CONN:
				chan_drop(t, idx, "guest process went away");
				break;
			case EV_DOORBELL:
				if (read(t->ch[idx].efd_in, &v, sizeof(v)) < 0) {
					/* spurious: nothing to read */
				}
				break;
			case EV_SOCK:
				sock_event(t, idx, evs[i].events);
				break;
			case EV_CHAIN:
				if (read(toe_chain_notify_fd(t->tc), &v, sizeof(v)) < 0) {
					/* already cleared */
				}
				break;
			}
		}
		busy = false;
		for (uint32_t ch = 0; ch < t->p.nchannels; ch++)
			if (t->ch[ch].open && chan_service(t, ch))
				busy = true;
		if (toe_chain_step(t))
			busy = true;
		drain_outputs(t);
		for (uint32_t ch = 0; ch < t->p.nchannels; ch++) {
			if (t->ch[ch].open && t->ch[ch].pend)
				flush_pending(t, ch);
			if (t->ch[ch].overrun)
				bad_guest(t, ch, "does not consume its RX ring");
			chan_kick(t, ch);
		}
	}
	return 0;
}

void toe_destroy(struct toe *t)
{
	if (!t)
		return;
	toe_ctl_stop(t->ctl);
	for (uint32_t ch = 0; ch < t->p.nchannels; ch++)
		chan_drop(t, ch, "shutting down");
	for (uint32_t i = 0; i < t->p.max_socks; i++)
		if (t->socks[i].id)
			sock_free(t, &t->socks[i]);
	for (int i = 0; i < HELLO_MAX; i++)
		if (t->hello[i].fd >= 0)
			hello_drop(t, i);
	toe_chain_destroy(t->tc);	/* stops the scheduler: nothing reads the region now */
	tcr_region_kill(t->r);
	unlink(t->sock_path);
	close(t->sfd);
	close(t->lfd);
	close(t->epfd);
	tcr_pool_destroy(t->pool);
	tcr_region_destroy(t->r);
	free(t->ctl_path);
	free(t->buf_seq);
	free(t->sock_path);
	free(t->buf_epoch);
	free(t->buf_dst);
	free(t->buf_chan);
	free(t->buf_off);
	free(t->buf_len);
	free(t->buf_sock);
	free(t->buf_next);
	free(t->socks);
	free(t->ch);
	free(t);
}

void toe_get_stats(const struct toe *t, struct toe_stats *s)
{
	*s = t->st;
}
