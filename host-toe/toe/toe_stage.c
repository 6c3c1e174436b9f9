// SPDX-License-Identifier: MIT
/*
 * The TOE's per-direction stages: input queue, chain stage, output queue.
 * The top layer under the loop: it calls the socket and channel layers,
 * neither calls it.  Rules: toe_int.h; the chain stage's own contract:
 * toe_chain.h.
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
#include "toe_flow.h"
#include "toe_sock.h"
#include "toe_stage.h"


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


static void addr_str(char *out, size_t size, uint8_t family, const uint8_t *a, uint16_t port)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, a, ip, sizeof(ip));
	snprintf(out, size, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
}

/*
 * A chain denied a descriptor of @s.  TCP: the connection is aborted
 * (RST to the peer, ECONNRESET to the guest) and everything of it still
 * on its way is dropped; on the inbound chain, a VNF's answer (an HTTP
 * 403 page) goes to the peer first and the connection ends with a FIN
 * instead (toe_sock_answer says when).  UDP: only that datagram is
 * dropped.  All are logged and recorded for stats.
 */
static void sock_deny(struct toe *t, struct toe_sock *s, const struct ch_result *r)
{
	char src[54], dst[54], conn[112], cname[TOE_NAME_MAX + 1], vname[TOE_NAME_MAX + 1];
	char how[64];
	bool answered;

	if (s->denied)
		return;		/* already reset: later descriptors go quietly */
	answered = r->answer && r->chain == TOE_DIR_IN && !s->dgram &&
		   toe_sock_answer(t, s, r->answer, r->answer_len);
	if (answered)
		snprintf(how, sizeof(how), ": answered (incident %08x), connection closed", r->incident);
	else
		snprintf(how, sizeof(how), "%s", s->dgram ? ": datagram dropped" : ": connection reset");
	addr_str(src, sizeof(src), r->pkt.family, r->pkt.saddr, r->pkt.sport);
	addr_str(dst, sizeof(dst), r->pkt.family, r->pkt.daddr, r->pkt.dport);
	snprintf(conn, sizeof(conn), "%s>%s", src, dst);
	toe_chain_deny_note(t->tc, r, conn, cname, vname);
	t->st.denials++;
	if (toe_capture_on(t->cap))
		toe_capture_deny(t->cap, s->id, s->dgram, r,
				 toe_item_data(t, (uint32_t)r->pkt.cookie) + r->pkt.off, cname, vname);
	fprintf(stderr, "tochain-toe[%s]: denied: chain %s (%s) vnf %s rule %u reason %s conn %s%s\n",
		t->p.name, cname, r->chain == TOE_DIR_IN ? "in" : "out", vname, r->deny_rule,
		toe_chain_reason_name(r->reason), conn, how);
	if (s->dgram || answered)
		return;
	toe_sock_abort(t, s);
}

/*
 * A chain let a descriptor of @s through with an Alert: counted, logged
 * and captured like a denial (the capture has no reset), the data goes on.
 */
static void sock_alert(struct toe *t, struct toe_sock *s, const struct ch_result *r)
{
	char src[54], dst[54], cname[TOE_NAME_MAX + 1], vname[TOE_NAME_MAX + 1];

	if (s->denied)
		return;		/* already reset: later descriptors go quietly */
	toe_chain_alert_note(t->tc, r, cname, vname);
	t->st.alerts++;
	if (toe_capture_on(t->cap))
		toe_capture_alert(t->cap, s->id, s->dgram, r,
				  toe_item_data(t, (uint32_t)r->pkt.cookie) + r->pkt.off, cname, vname);
	addr_str(src, sizeof(src), r->pkt.family, r->pkt.saddr, r->pkt.sport);
	addr_str(dst, sizeof(dst), r->pkt.family, r->pkt.daddr, r->pkt.dport);
	fprintf(stderr, "tochain-toe[%s]: alert: chain %s (%s) vnf %s rule %u conn %s>%s: %.*s\n",
		t->p.name, cname, r->chain == TOE_DIR_IN ? "in" : "out", vname, r->alert_rule,
		src, dst, (int)r->alert_msg_len, r->alert_msg ? r->alert_msg : "");
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
		struct toe_sock *s = toe_sock_get(t, t->buf_sock[idx]);
		struct ch_pkt p;

		if (s && !s->denied && toe_chain_active(t->tc, TOE_DIR_IN)) {
			toe_flow_tuple(t, s, idx, TOE_DIR_IN, &p);
			p.cookie = idx;
			p.region = TOE_REGION_GUEST;
			p.buf = idx;
			p.off = t->buf_off[idx];
			p.len = t->buf_len[idx];
			p.seq = t->buf_seq[idx];
			if (!toe_chain_submit(t->tc, TOE_DIR_IN, &p))
				break;	/* full: retried when results come back */
			toe_bufq_pop(t, &t->in_input);
		} else {
			toe_bufq_pop(t, &t->in_input);
			toe_bufq_push(t, &t->in_output, idx);
		}
		if (toe_capture_on(t->cap) && s && !s->dgram)
			toe_capture_data(t->cap, s->id, TOE_DIR_IN, idx,
					 toe_item_data(t, idx) + t->buf_off[idx], t->buf_len[idx]);
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

	if (t->held)	/* toe_hold.h: it meets the out chain set before the release */
		return false;
	while (t->out_input.n) {
		uint32_t idx = t->out_input.head;
		struct toe_sock *s = toe_sock_get(t, t->buf_sock[idx]);
		uint32_t len = t->buf_len[idx], x;
		struct ch_pkt p;
		int o;

		if (!s || s->failed || !toe_chain_active(t->tc, TOE_DIR_OUT)) {
			toe_bufq_pop(t, &t->out_input);
			toe_bufq_push(t, &t->out_output, idx);
			if (toe_capture_on(t->cap) && s && !s->dgram)
				toe_capture_data(t->cap, s->id, TOE_DIR_OUT, idx,
						 toe_item_data(t, idx) + t->buf_off[idx], len);
			did = true;
			continue;
		}
		o = toe_chain_out_alloc(t->tc);
		if (o < 0)
			break;	/* cannot happen: one slot per guest buffer */
		x = t->p.nbufs + (uint32_t)o;
		/* buf_off/buf_len were validated against the slot in take_tx */
		memcpy(toe_item_data(t, x), toe_item_data(t, idx) + t->buf_off[idx], len);
		toe_flow_tuple(t, s, idx, TOE_DIR_OUT, &p);
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
		t->buf_txf[x] = t->buf_txf[idx];
		toe_bufq_pop(t, &t->out_input);
		/*
		 * The copy is what goes on; the guest's buffer (never read
		 * again) is granted back with it once its bytes are in the
		 * kernel, so the guest's per-socket bound on data in flight
		 * holds as without a chain and no socket can fill R.out.
		 */
		t->buf_src[x] = idx;
		if (toe_capture_on(t->cap) && !s->dgram)
			toe_capture_data(t->cap, s->id, TOE_DIR_OUT, x, toe_item_data(t, x), len);
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
			struct toe_sock *s = toe_sock_get(t, t->buf_sock[idx]);

			if (r[i].verdict == CH_ALLOW) {
				if (s && r[i].alert_vnf != CH_VNF_NONE)
					sock_alert(t, s, &r[i]);
				free(r[i].alert_msg);
				toe_bufq_push(t, &t->in_output, idx);
				continue;
			}
			if (s)
				sock_deny(t, s, &r[i]);
			free(r[i].answer);
			free(r[i].alert_msg);
			/* the reset may have freed a closing socket */
			rx_drop(t, toe_sock_get(t, t->buf_sock[idx]), idx);
		}
	}
	while ((k = toe_chain_take(t->tc, TOE_DIR_OUT, r, 32)) > 0) {
		did = true;
		for (unsigned int i = 0; i < k; i++) {
			uint32_t x = (uint32_t)r[i].pkt.cookie;
			struct toe_sock *s = toe_sock_get(t, t->buf_sock[x]);

			if (r[i].verdict == CH_ALLOW) {
				if (s && r[i].alert_vnf != CH_VNF_NONE)
					sock_alert(t, s, &r[i]);
				free(r[i].alert_msg);
				toe_bufq_push(t, &t->out_output, x);
				continue;
			}
			if (s)
				sock_deny(t, s, &r[i]);
			free(r[i].answer);
			free(r[i].alert_msg);
			toe_sock_regrant(t, x, t->buf_sock[x]);	/* frees the R.out slot */
			if (s && --s->tx_pending == 0 && s->closing)
				toe_sock_free(t, s);
		}
	}
	return did;
}

bool toe_stage_step(struct toe *t)
{
	bool did = stage_results(t);

	did |= stage_in(t);
	did |= stage_out(t);
	toe_chain_flow_reclaim(t->tc);
	return did;
}

/*
 * Outbound output queue, up to DRAIN_BATCH buffers: each onto its
 * socket's send queue first, then each socket written once, so the
 * buffers of one guest write leave in one sendmsg (toe_sock_flush_tx).
 */
#define DRAIN_BATCH 64

static void drain_out(struct toe *t)
{
	uint32_t ids[DRAIN_BATCH], idx;
	int n = 0;

	while (n < DRAIN_BATCH && (idx = toe_bufq_pop(t, &t->out_output)) != NO_BUF) {
		struct toe_sock *s = toe_sock_get(t, t->buf_sock[idx]);

		if (!s || s->failed) {
			toe_sock_regrant(t, idx, t->buf_sock[idx]);
			if (s && --s->tx_pending == 0 && s->closing)
				toe_sock_free(t, s);
			continue;
		}
		toe_bufq_push(t, &s->txq, idx);
		if (!n || ids[n - 1] != s->id)
			ids[n++] = s->id;
	}
	for (int i = 0; i < n; i++) {
		struct toe_sock *s = toe_sock_get(t, ids[i]);

		if (s && s->txq.n)
			toe_sock_flush_tx(t, s);
	}
}

/*
 * Inbound buffers for one channel's RX ring, published together: the
 * buffers one readv filled cost one ring operation (and one ownership
 * change in the pool) instead of one per slot; the guest is woken at
 * most once per turn (kick_guest).
 */
#define RXB_MAX 64

struct rx_burst {
	uint32_t ch, n;
	uint32_t idx[RXB_MAX];
};

/*
 * Publish @b.  Its buffers already left their sockets' queues (rx_queued);
 * one the ring did not take (it cannot happen: the ring holds every
 * buffer) is dropped as rx_drop would, after those that went.
 */
static void rxb_flush(struct toe *t, struct rx_burst *b)
{
	int k = toe_chan_send_bufs(t, b->ch, b->idx, b->n);

	for (uint32_t i = k > 0 ? (uint32_t)k : 0; i < b->n; i++) {
		uint32_t idx = b->idx[i];
		struct toe_sock *s = toe_sock_get(t, t->buf_sock[idx]);

		if (s && s->rx_inflight)
			s->rx_inflight--;
		t->buf_sock[idx] = 0;
		tcr_pool_free(t->pool, &idx, 1);
	}
	b->n = 0;
}

/* Buffer @idx of @s into the burst (a burst of another channel, or a full one, goes first). */
static void rxb_add(struct toe *t, struct rx_burst *b, struct toe_sock *s, uint32_t idx)
{
	if (b->n && (b->ch != s->owner || b->n == RXB_MAX))
		rxb_flush(t, b);
	b->ch = s->owner;
	b->idx[b->n++] = idx;
	s->rx_queued--;
	s->tx_in_at_rx = s->tx_in;
	s->rx_given = true;
}

/* Output queues: inbound to the guest's RX ring, outbound to socket queues. */
void toe_stage_drain(struct toe *t)
{
	struct rx_burst b = { .n = 0 };
	uint32_t idx;

	while ((idx = toe_bufq_pop(t, &t->in_output)) != NO_BUF) {
		struct toe_sock *s = toe_sock_get(t, t->buf_sock[idx]);

		if (!s || s->denied || !t->ch[s->owner].open)
			rx_drop(t, s, idx);
		else
			rxb_add(t, &b, s, idx);
		/* the EOF follows the last byte before it (srpc.h): publish those first */
		if (s && s->eof_pending && !s->rx_queued) {
			s->eof_pending = false;
			if (b.n)
				rxb_flush(t, &b);
			if (!s->denied)
				toe_chan_event(t, s->owner, SRPC_EV_EOF, s->id, 0, 0);
		}
	}
	if (b.n)
		rxb_flush(t, &b);
	while (t->out_output.n)
		drain_out(t);
}
