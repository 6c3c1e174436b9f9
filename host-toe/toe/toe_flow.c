// SPDX-License-Identifier: MIT
/*
 * The 5-tuples of the TOE's sockets: their flow table entries
 * (include/tochain/ch_flow.h) and the tuple each descriptor submitted to
 * a chain carries.  A helper of the socket layer (toe_int.h): it reads a
 * socket's addresses and calls no other TOE layer.  Contract: toe_flow.h.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "toe_flow.h"
#include "toe_sock.h"

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
void toe_flow_open(struct toe *t, struct toe_sock *s, const struct sockaddr_storage *peer,
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

void toe_flow_state(struct toe *t, struct toe_sock *s, uint8_t state)
{
	if (s->flow != TCR_FLOW_NONE)
		ch_flow_set_state(toe_chain_flows(t->tc), s->flow, state);
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

/*
 * A datagram's 5-tuple: the socket's local address (looked up once) and
 * the peer of this datagram: its source (inbound, recorded privately at
 * recvfrom) or its validated destination (outbound; the connected peer
 * when it names none).
 */
static void dgram_tuple(struct toe *t, struct toe_sock *s, uint32_t idx, uint32_t dir,
			struct ch_pkt *p)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);

	if (!s->key.family && getsockname(s->fd, (struct sockaddr *)&me, &ml) == 0 &&
	    (me.ss_family == AF_INET || me.ss_family == AF_INET6)) {
		s->key.family = (uint8_t)me.ss_family;
		s->key.l4proto = IPPROTO_UDP;
		key_side(&me, s->key.saddr, &s->key.sport);
	}
	if (t->buf_dst[idx].len) {
		memcpy(&peer, &t->buf_dst[idx].a, sizeof(peer));
	} else if (getpeername(s->fd, (struct sockaddr *)&peer, &pl)) {
		return;
	}
	if (peer.ss_family != s->key.family)
		return;
	p->family = s->key.family;
	if (dir == TOE_DIR_OUT) {
		memcpy(p->saddr, s->key.saddr, 16);
		p->sport = s->key.sport;
		key_side(&peer, p->daddr, &p->dport);
	} else {
		memcpy(p->daddr, s->key.saddr, 16);
		p->dport = s->key.sport;
		key_side(&peer, p->saddr, &p->sport);
	}
}

/*
 * The 5-tuple of item @idx of @s in direction @dir (TOE_DIR_IN/OUT), as
 * the descriptor the chain stage submits: the VM's side is the source
 * outbound, the destination inbound.
 */
void toe_flow_tuple(struct toe *t, struct toe_sock *s, uint32_t idx, uint32_t dir,
		    struct ch_pkt *p)
{
	fill_pkt(s, dir, p);
	if (s->dgram)
		dgram_tuple(t, s, idx, dir, p);
}
