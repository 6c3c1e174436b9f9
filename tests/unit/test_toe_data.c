// SPDX-License-Identifier: MIT
/*
 * tochain-toe's data paths against an in-process guest (toe_guest.h):
 * inbound flow control and outbound data, datagrams, a guest that hoards
 * buffers, and socket ownership across fork.
 */
#include "toe_chan.h"
#include "toe_guest.h"


/*
 * Inbound flow control: the TOE hands the guest at most rx_bound (16)
 * buffers of one socket while the guest holds them, and resumes when
 * they come back on DONE; every byte arrives, in order.  Outbound data
 * reaches the peer, and each sent buffer comes back on FREE marked
 * TXDONE for its socket.
 */
/* Send one datagram buffer: header @h, @n payload bytes, @len as the descriptor says. */
static void put_dgram(struct guest *g, uint32_t id, const struct srpc_dgram *h, const void *p,
		      size_t n, uint32_t len)
{
	uint8_t buf[256];

	ck_assert_uint_le(sizeof(*h) + n, sizeof(buf));
	memcpy(buf, h, sizeof(*h));
	memcpy(buf + sizeof(*h), p, n);
	put(g, take(g), TCR_OP_DATA, id, buf, len);
}

/* Next data buffer on RX (bounded wait): its index, descriptor copied out. */
static uint32_t next_data(struct guest *g, struct tcr_desc *d)
{
	for (int i = 0; i < 2000; i++) {
		uint32_t idx;

		if (tcr_ring_dequeue_burst(&g->ch.ring[TCR_CH_RX], &idx, 1) == 1) {
			ck_assert_int_eq(tcr_desc_load(g->r, idx, d), 0);
			if (d->op == TCR_OP_DATA)
				return idx;
			tcr_ring_enqueue_burst(&g->ch.ring[TCR_CH_DONE], &idx, 1);
			kick(g);
			continue;
		}
		usleep(1000);
	}
	ck_abort_msg("no datagram");
	return 0;
}

/*
 * A listener of @p on loopback made with secret @sec (SRPC_SECRET_LEN
 * bytes, or NULL), a kernel client connected to it (*@c), accepted with
 * @sec too: the connection's id.
 */
static uint32_t accepted(struct guest *p, const uint8_t *sec, int *c)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	size_t sl = sec ? SRPC_SECRET_LEN : 0;
	struct srpc_msg r;
	uint32_t lid;

	ck_assert_int_eq(request(p, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, sec, sl, &r), 0);
	lid = (uint32_t)r.a;
	ck_assert_int_eq(request(p, SRPC_REQ_BIND, lid, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(request(p, SRPC_REQ_LISTEN, lid, 5, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(request(p, SRPC_REQ_GETSOCKNAME, lid, 0, 0, 0, NULL, 0, &r), 0);
	memcpy(&sin, r.data, sizeof(sin));
	*c = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(*c, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(next_msg(p, &r), 0);
	ck_assert_int_eq(r.type, SRPC_EV_ACCEPTABLE);
	ck_assert_int_eq(request(p, SRPC_REQ_ACCEPT, lid, 0, 0, 0, sec, sl, &r), 0);
	ck_assert_int_gt(r.a, 0);
	return (uint32_t)r.a;
}

/*
 * Socket ownership (toe_sock.h): a channel that never held a socket cannot
 * reach it (ADOPT, TAKE, any call: EBADF); FORK names only a fresh
 * channel, once; the forked connection is parked until the child TAKEs
 * it, the parent's CLOSE does not close it, the TAKE says the fork's data
 * is the child's, the bytes the peer sent meanwhile reach the child, and
 * the child's going away closes the connection.  An heir named over a
 * connection may ADOPT; an heir with a wrong epoch is refused.
 */
START_TEST(test_fork_ownership)
{
	struct guest p, k, x;
	struct srpc_msg r;
	struct srpc_heir h = { SRPC_HEIR_MAGIC, SRPC_VERSION, 0, 0 };
	struct tcr_desc d;
	uint32_t cid, idx;
	int32_t hret;
	char buf[8];
	int c;

	ck_assert_int_eq(attach(&p), 0);
	cid = accepted(&p, NULL, &c);

	/* a stranger: never held it */
	ck_assert_int_eq(attach(&x), 0);
	ck_assert_int_eq(request(&x, SRPC_REQ_ADOPT, cid, 1, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EBADF);
	ck_assert_int_eq(request(&x, SRPC_REQ_ADOPT, cid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EBADF);
	ck_assert_int_eq(request(&x, SRPC_REQ_TAKE, cid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EBADF);
	ck_assert_int_eq(request(&x, SRPC_REQ_GETPEERNAME, cid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EBADF);
	/* ... and not fresh any more: no FORK may name it */
	ck_assert_int_eq(request(&p, SRPC_REQ_FORK, 0, (int)x.channel, (int)x.epoch, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -ESRCH);
	ck_assert_int_eq(request(&p, SRPC_REQ_FORK, 0, (int)p.channel, (int)p.epoch, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EINVAL);
	ck_assert_int_eq(request(&p, SRPC_REQ_FORK, 0, 99, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EINVAL);

	/* the fork's child */
	ck_assert_int_eq(attach(&k), 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_FORK, 0, (int)k.channel, (int)k.epoch + 1, 0, NULL, 0,
				 &r), 0);
	ck_assert_int_eq(r.a, -ESRCH);
	ck_assert_int_eq(request(&p, SRPC_REQ_FORK, 0, (int)k.channel, (int)k.epoch, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_FORK, 0, (int)k.channel, (int)k.epoch, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -ESRCH);	/* once */
	/* parked: what the peer sends now reaches nobody yet; the parent closes its copy */
	ck_assert_int_eq(write(c, "hello", 5), 5);
	usleep(50000);
	ck_assert_int_eq(request(&p, SRPC_REQ_CLOSE, cid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_int_eq(tcr_ring_count(&p.ch.ring[TCR_CH_RX]), 0);
	/* the child takes it: EV_OWNER (the fork's data is its), the answer, then the bytes */
	{
		struct srpc_msg m;

		srpc_encode(&m, SRPC_REQ_TAKE, ++k.tag, cid, 0, 0, 0, NULL, 0);
		put(&k, take(&k), TCR_OP_CTRL, 0, &m, (uint32_t)srpc_msg_size(&m));
		ck_assert_int_eq(next_msg(&k, &r), 0);
		ck_assert_int_eq(r.type, SRPC_EV_OWNER);
		ck_assert_int_eq(r.a, 1);
		ck_assert_int_eq(r.b, 1);
		ck_assert_int_eq(next_msg(&k, &r), 0);
		ck_assert_int_eq(r.type, SRPC_RESP);
		ck_assert_int_eq(r.a, 0);
	}
	idx = next_data(&k, &d);
	ck_assert_uint_eq(d.conn_id, cid);
	ck_assert_uint_eq(d.len, 5);
	ck_assert_int_eq(memcmp(tcr_region_slot(k.r, idx) + d.off, "hello", 5), 0);
	tcr_ring_enqueue_burst(&k.ch.ring[TCR_CH_DONE], &idx, 1);
	kick(&k);
	/* a second TAKE: the fork's data was claimed already */
	{
		struct srpc_msg m;

		srpc_encode(&m, SRPC_REQ_TAKE, ++k.tag, cid, 0, 0, 0, NULL, 0);
		put(&k, take(&k), TCR_OP_CTRL, 0, &m, (uint32_t)srpc_msg_size(&m));
		ck_assert_int_eq(next_msg(&k, &r), 0);
		ck_assert_int_eq(r.type, SRPC_EV_OWNER);
		ck_assert_int_eq(r.b, 0);
		ck_assert_int_eq(next_msg(&k, &r), 0);
		ck_assert_int_eq(r.type, SRPC_RESP);
	}

	/* exec: an heir named with a wrong epoch is refused; then the stranger is named */
	h.channel = x.channel;
	h.epoch = x.epoch + 1;
	ck_assert_int_eq(send(k.conn, &h, sizeof(h), 0), sizeof(h));
	ck_assert_int_eq(recv(k.conn, &hret, sizeof(hret), 0), sizeof(hret));
	ck_assert_int_eq(hret, -ESRCH);
	ck_assert_int_eq(request(&x, SRPC_REQ_ADOPT, cid, 1, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EBADF);
	h.epoch = x.epoch;
	ck_assert_int_eq(send(k.conn, &h, sizeof(h), 0), sizeof(h));
	ck_assert_int_eq(recv(k.conn, &hret, sizeof(hret), 0), sizeof(hret));
	ck_assert_int_eq(hret, 0);
	{
		struct srpc_msg m;

		srpc_encode(&m, SRPC_REQ_ADOPT, ++x.tag, cid, 1, 0, 0, NULL, 0);
		put(&x, take(&x), TCR_OP_CTRL, 0, &m, (uint32_t)srpc_msg_size(&m));
		ck_assert_int_eq(next_msg(&x, &r), 0);
		ck_assert_int_eq(r.type, SRPC_EV_OWNER);	/* the heir owns it */
		ck_assert_int_eq(r.a, 1);
		ck_assert_int_eq(next_msg(&x, &r), 0);
		ck_assert_int_eq(r.type, SRPC_RESP);
		ck_assert_int_eq(r.a, 0);
		ck_assert_int_eq(next_msg(&k, &r), 0);
		ck_assert_int_eq(r.type, SRPC_EV_OWNER);	/* the old image no longer */
		ck_assert_int_eq(r.a, 0);
	}
	/* the old image dies: the heir's connection lives on and gets the peer's bytes */
	detach(&k);
	usleep(50000);
	ck_assert_int_eq(write(c, "bye", 3), 3);
	idx = next_data(&x, &d);
	ck_assert_uint_eq(d.conn_id, cid);
	ck_assert_uint_eq(d.len, 3);
	ck_assert_int_eq(memcmp(tcr_region_slot(x.r, idx) + d.off, "bye", 3), 0);
	tcr_ring_enqueue_burst(&x.ch.ring[TCR_CH_DONE], &idx, 1);
	kick(&x);
	/* the last holder closes it: the peer sees EOF */
	ck_assert_int_eq(request(&x, SRPC_REQ_CLOSE, cid, 0, 0, 0, NULL, 0, &r), 0);
	{
		struct timeval tv = { .tv_sec = 2 };

		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		ck_assert_int_eq(read(c, buf, sizeof(buf)), 0);
	}
	close(c);
	detach(&x);
	detach(&p);
}
END_TEST

/*
 * UDP: datagrams with their addresses both ways; hostile headers (bad
 * length, family, address length, a buffer shorter than the header) drop
 * that datagram and nothing else; a datagram larger than a buffer
 * arrives cut with SRPC_DGRAM_TRUNC.
 */
/*
 * exec with a secret (srpc.h): a socket made with one can be ADOPTed
 * (a=2) by a channel that never held it only with that secret; a wrong
 * one or none is EBADF, and a socket made without one cannot be taken
 * that way at all.  The adopter becomes the owner.
 */
START_TEST(test_adopt_secret)
{
	static const uint8_t sec[SRPC_SECRET_LEN] = "the secret 0123";
	static const uint8_t bad[SRPC_SECRET_LEN] = "the secret 0124";
	struct guest p, x;
	struct srpc_msg r, m;
	uint32_t cid, plain;
	int c;

	ck_assert_int_eq(attach(&p), 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0, &r), 0);
	plain = (uint32_t)r.a;
	cid = accepted(&p, sec, &c);

	ck_assert_int_eq(attach(&x), 0);
	ck_assert_int_eq(request(&x, SRPC_REQ_ADOPT, cid, 2, 0, 0, bad, sizeof(bad), &r), 0);
	ck_assert_int_eq(r.a, -EBADF);
	ck_assert_int_eq(request(&x, SRPC_REQ_ADOPT, cid, 1, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EBADF);	/* no heir either */
	ck_assert_int_eq(request(&x, SRPC_REQ_ADOPT, plain, 2, 0, 0, sec, sizeof(sec), &r), 0);
	ck_assert_int_eq(r.a, -EBADF);	/* made without a secret */
	srpc_encode(&m, SRPC_REQ_ADOPT, ++x.tag, cid, 2, 0, 0, sec, sizeof(sec));
	put(&x, take(&x), TCR_OP_CTRL, 0, &m, (uint32_t)srpc_msg_size(&m));
	ck_assert_int_eq(next_msg(&x, &r), 0);
	ck_assert_int_eq(r.type, SRPC_EV_OWNER);	/* the adopter owns it */
	ck_assert_int_eq(r.a, 1);
	ck_assert_int_eq(next_msg(&x, &r), 0);
	ck_assert_int_eq(r.type, SRPC_RESP);
	ck_assert_int_eq(r.a, 0);
	ck_assert_int_eq(request(&x, SRPC_REQ_GETPEERNAME, cid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, 0);
	close(c);
	detach(&x);
	detach(&p);
}
END_TEST

START_TEST(test_udp_datagrams)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in me = sin, from;
	socklen_t sl = sizeof(sin);
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	static uint8_t big[6000];
	struct srpc_dgram h;
	struct tcr_desc d;
	struct srpc_msg r;
	struct guest g;
	uint8_t buf[8192];
	uint32_t id, idx;

	ck_assert_int_eq(bind(u, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(u, (struct sockaddr *)&sin, &sl), 0);
	ck_assert_int_eq(attach(&g), 0);
	ck_assert_int_eq(request(&g, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_DGRAM, IPPROTO_TCP, NULL, 0,
				 &r), 0);
	ck_assert_int_eq(r.a, -EPROTONOSUPPORT);
	ck_assert_int_eq(request(&g, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_DGRAM, 0, NULL, 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	id = (uint32_t)r.a;
	ck_assert_int_eq(request(&g, SRPC_REQ_BIND, id, 0, 0, 0, &me, sizeof(me), &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_int_eq(request(&g, SRPC_REQ_GETSOCKNAME, id, 0, 0, 0, NULL, 0, &r), 0);
	memcpy(&me, r.data, sizeof(me));
	ck_assert_int_ne(me.sin_port, 0);
	ck_assert_int_eq(request(&g, SRPC_REQ_LISTEN, id, 5, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EOPNOTSUPP);

	/* hostile headers first: none of them may reach the peer */
	memset(&h, 0, sizeof(h));
	h.addrlen = 0xffffffffu;
	put_dgram(&g, id, &h, "bad1", 4, sizeof(h) + 4);
	h.addrlen = 3;
	memcpy(h.addr, &sin, sizeof(sin));
	put_dgram(&g, id, &h, "bad2", 4, sizeof(h) + 4);
	h.addrlen = sizeof(sin);
	h.addr[0] = AF_UNIX;
	h.addr[1] = 0;
	put_dgram(&g, id, &h, "bad3", 4, sizeof(h) + 4);
	h.addrlen = 0;	/* not connected: the kernel refuses, the TOE drops */
	put_dgram(&g, id, &h, "bad4", 4, sizeof(h) + 4);
	memcpy(h.addr, &sin, sizeof(sin));
	h.addrlen = sizeof(sin);
	put_dgram(&g, id, &h, "bad5", 4, 12);	/* shorter than the header */
	/* then a good one */
	put_dgram(&g, id, &h, "good", 4, sizeof(h) + 4);
	sl = sizeof(from);
	ck_assert_int_eq(recvfrom(u, buf, sizeof(buf), 0, (struct sockaddr *)&from, &sl), 4);
	ck_assert_int_eq(memcmp(buf, "good", 4), 0);
	ck_assert_int_eq(from.sin_port, me.sin_port);
	ck_assert_int_eq(recv(u, buf, sizeof(buf), MSG_DONTWAIT), -1);
	/* an empty datagram is one */
	put_dgram(&g, id, &h, "", 0, sizeof(h));
	ck_assert_int_eq(recv(u, buf, sizeof(buf), 0), 0);

	/* inbound: the source address in the header */
	ck_assert_int_eq(sendto(u, "pong", 4, 0, (struct sockaddr *)&me, sizeof(me)), 4);
	idx = next_data(&g, &d);
	ck_assert_uint_eq(d.conn_id, id);
	ck_assert_uint_eq(d.len, sizeof(h) + 4);
	memcpy(&h, tcr_region_slot(g.r, idx) + d.off, sizeof(h));
	ck_assert_uint_eq(h.addrlen, sizeof(sin));
	ck_assert_uint_eq(h.flags, 0);
	memcpy(&from, h.addr, sizeof(from));
	ck_assert_int_eq(from.sin_port, sin.sin_port);
	ck_assert_int_eq(memcmp(tcr_region_slot(g.r, idx) + d.off + sizeof(h), "pong", 4), 0);
	tcr_ring_enqueue_burst(&g.ch.ring[TCR_CH_DONE], &idx, 1);
	/* larger than a buffer (4096 here): cut, flagged */
	ck_assert_int_eq(sendto(u, big, sizeof(big), 0, (struct sockaddr *)&me, sizeof(me)),
			 (ssize_t)sizeof(big));
	idx = next_data(&g, &d);
	ck_assert_uint_eq(d.len, 4096);
	memcpy(&h, tcr_region_slot(g.r, idx) + d.off, sizeof(h));
	ck_assert_uint_eq(h.flags, SRPC_DGRAM_TRUNC);
	tcr_ring_enqueue_burst(&g.ch.ring[TCR_CH_DONE], &idx, 1);
	kick(&g);
	ck_assert(!tcr_chan_stale(&g.ch));
	close(u);
	detach(&g);
}
END_TEST

/*
 * Attach @g, connect a TOE socket (its id in @id) to a loopback listener
 * (@l); returns the accepted peer, TCP_NODELAY set.
 */
static int connect_peer(struct guest *g, int *l, uint32_t *id)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);
	struct srpc_msg r;
	int peer, one = 1;

	*l = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(*l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(*l, 1), 0);
	ck_assert_int_eq(getsockname(*l, (struct sockaddr *)&sin, &sl), 0);
	ck_assert_int_eq(attach(g), 0);
	ck_assert_int_eq(request(g, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0, &r), 0);
	*id = (uint32_t)r.a;
	ck_assert_int_eq(request(g, SRPC_REQ_CONNECT, *id, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert(r.a == 0 || r.a == -EINPROGRESS);
	if (r.a == -EINPROGRESS) {
		ck_assert_int_eq(next_msg(g, &r), 0);
		ck_assert_int_eq(r.type, SRPC_EV_CONNECTED);
		ck_assert_int_eq(r.a, 0);
	}
	peer = accept(*l, NULL, NULL);
	ck_assert_int_ge(peer, 0);
	setsockopt(peer, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	return peer;
}

START_TEST(test_data_and_flow_control)
{
	static uint8_t blob[16 << 20], got[16 << 20];
	uint32_t held[64], nheld = 0, id;
	size_t ngot = 0, sent = 0;
	struct guest g;
	int l, peer;

	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 13 + (i >> 11));
	peer = connect_peer(&g, &l, &id);

	/* the peer writes 1 MiB without blocking forever: the kernel buffers fill */
	fcntl(peer, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 3000 && nheld < 16; i++) {
		ssize_t n = send(peer, blob + sent, sizeof(blob) - sent, 0);
		uint32_t idx;

		if (n > 0)
			sent += (size_t)n;
		while (tcr_ring_dequeue_burst(&g.ch.ring[TCR_CH_RX], &idx, 1) == 1)
			held[nheld++] = idx;	/* hold on: do not return them */
		usleep(1000);
	}
	usleep(100000);
	{
		uint32_t idx;

		while (tcr_ring_dequeue_burst(&g.ch.ring[TCR_CH_RX], &idx, 1) == 1)
			held[nheld++] = idx;
	}
	ck_assert_uint_eq(nheld, 16);	/* the bound, no more */
	ck_assert_uint_lt(sent, sizeof(blob));	/* the sender is held back */

	/* now consume everything, returning buffers; the rest must follow */
	for (int i = 0; i < 5000 && ngot < sizeof(blob); i++) {
		uint32_t idx;

		for (uint32_t k = 0; k < nheld; k++) {
			struct tcr_desc d;

			ck_assert_int_eq(tcr_desc_load(g.r, held[k], &d), 0);
			ck_assert_int_eq(d.op, TCR_OP_DATA);
			ck_assert_uint_eq(d.conn_id, id);
			ck_assert_uint_le(ngot + d.len, sizeof(got));
			memcpy(got + ngot, tcr_region_slot(g.r, held[k]) + d.off, d.len);
			ngot += d.len;
			tcr_ring_enqueue_burst(&g.ch.ring[TCR_CH_DONE], &held[k], 1);
		}
		if (nheld)
			kick(&g);
		nheld = 0;
		if (sent < sizeof(blob)) {
			ssize_t n = send(peer, blob + sent, sizeof(blob) - sent, 0);

			if (n > 0)
				sent += (size_t)n;
		}
		while (nheld < 64 && tcr_ring_dequeue_burst(&g.ch.ring[TCR_CH_RX], &idx, 1) == 1)
			held[nheld++] = idx;
		if (!nheld)
			usleep(1000);
	}
	ck_assert_uint_eq(ngot, sizeof(blob));
	ck_assert_int_eq(memcmp(got, blob, sizeof(blob)), 0);
	ck_assert(!tcr_chan_stale(&g.ch));
	ck_assert_int_ge(tcr_ring_count(&g.ch.ring[TCR_CH_FREE]), 3);

	/* outbound: 3 buffers to the peer, all come back marked TXDONE */
	uint32_t spare = 0, nspare = 0;
	{
		uint32_t back = 0;
		char buf[64] = { 0 };
		int fl = fcntl(peer, F_GETFL);

		fcntl(peer, F_SETFL, fl & ~O_NONBLOCK);
		put(&g, take(&g), TCR_OP_DATA, id, "one-", 4);
		put(&g, take(&g), TCR_OP_DATA, id, "two-", 4);
		put(&g, take(&g), TCR_OP_DATA, id, "three", 5);
		ck_assert_int_eq(recv(peer, buf, 13, MSG_WAITALL), 13);
		ck_assert_str_eq(buf, "one-two-three");
		for (int i = 0; i < 2000 && back < 3; i++) {
			struct tcr_desc d;
			uint32_t idx;

			while (tcr_ring_dequeue_burst(&g.ch.ring[TCR_CH_FREE], &idx, 1) == 1) {
				ck_assert_int_eq(tcr_desc_load(g.r, idx, &d), 0);
				if (d.arg == SRPC_FREE_TXDONE && d.conn_id == id)
					back++;
				spare = idx;
				nspare++;
			}
			usleep(1000);
		}
		ck_assert_uint_eq(back, 3);
	}
	/* close: the peer sees EOF */
	{
		struct srpc_msg m;
		char c;

		srpc_encode(&m, SRPC_REQ_CLOSE, ++g.tag, id, 0, 0, 0, NULL, 0);
		put(&g, nspare ? spare : take(&g), TCR_OP_CTRL, 0, &m, (uint32_t)srpc_msg_size(&m));
		ck_assert_int_eq(recv(peer, &c, 1, 0), 0);
	}
	close(peer);
	close(l);
	detach(&g);
}
END_TEST

/*
 * Outbound buffers queued together leave in as few writes as the rules
 * allow (toe_sock_flush_tx), and nothing of a buffer's meaning is lost
 * on the way: 12 full slots and a short one queued at once (one kick)
 * arrive whole and in order, and a MSG_OOB buffer among them still ends
 * a write of its own: its last byte, and no later one, is the urgent
 * byte.  Every buffer comes back marked TXDONE.
 */
START_TEST(test_tx_gather)
{
	static uint8_t want[13 * 4096], got[13 * 4096];
	uint32_t slot = 4096, id, back = 0, idx[13];
	size_t len[13], total = 0, ngot = 0, oob_at;
	struct guest g;
	int l, peer;
	char urg = 0;

	peer = connect_peer(&g, &l, &id);
	for (int i = 0; i < 13; i++) {
		struct tcr_desc d = { .op = TCR_OP_DATA, .conn_id = id };

		idx[i] = take(&g);
		len[i] = i == 12 ? 100 : slot;
		for (size_t j = 0; j < len[i]; j++)
			want[total + j] = (uint8_t)(i * 31 + j * 7);
		d.slot = idx[i];
		d.len = (uint32_t)len[i];
		d.flags = i == 5 ? SRPC_TX_OOB : 0;
		memcpy(tcr_region_slot(g.r, idx[i]), want + total, len[i]);
		tcr_desc_store(g.r, idx[i], &d);
		total += len[i];
	}
	oob_at = 6 * (size_t)slot - 1;	/* the last byte of buffer 5 */
	ck_assert_int_eq(tcr_ring_enqueue_burst(&g.ch.ring[TCR_CH_TX], idx, 13), 13);
	kick(&g);
	/*
	 * Without SO_OOBINLINE the stream skips the urgent byte, which is
	 * read apart (before reading past it, or the kernel drops it).
	 */
	while (ngot < oob_at) {
		ssize_t n = recv(peer, got + ngot, oob_at - ngot, 0);

		ck_assert_int_gt(n, 0);
		ngot += (size_t)n;
	}
	for (int i = 0; i < 2000 && recv(peer, &urg, 1, MSG_OOB | MSG_DONTWAIT) != 1; i++) {
		ck_assert_int_eq(errno, EAGAIN);
		usleep(1000);
	}
	ck_assert_int_eq((uint8_t)urg, want[oob_at]);
	while (ngot < total - 1) {
		ssize_t n = recv(peer, got + ngot, total - 1 - ngot, 0);

		ck_assert_int_gt(n, 0);
		ngot += (size_t)n;
	}
	ck_assert_int_eq(memcmp(got, want, oob_at), 0);
	ck_assert_int_eq(memcmp(got + oob_at, want + oob_at + 1, total - oob_at - 1), 0);
	for (int i = 0; i < 2000 && back < 13; i++) {
		struct tcr_desc d;
		uint32_t k;

		while (tcr_ring_dequeue_burst(&g.ch.ring[TCR_CH_FREE], &k, 1) == 1) {
			ck_assert_int_eq(tcr_desc_load(g.r, k, &d), 0);
			if (d.arg == SRPC_FREE_TXDONE && d.conn_id == id)
				back++;
		}
		if (back < 13)
			usleep(1000);
	}
	ck_assert_uint_eq(back, 13);
	close(peer);
	close(l);
	detach(&g);
}
END_TEST

/*
 * What a process wrote before it went away reaches the peer, as with the
 * kernel: a guest that puts its data and CLOSE on TX, rings and closes its
 * connection at once (a child that answers and exits) leaves the hang-up
 * and the doorbell for the same turn of the TOE; the ring is read before
 * the channel is dropped.  Each round the peer gets every byte, then EOF.
 * Several rounds: which of the two events the TOE sees first varies.
 */
START_TEST(test_data_before_exit)
{
	static const char msg[] = "pid 42 got two";

	for (int round = 0; round < 20; round++) {
		struct srpc_msg m;
		uint32_t idx[2], id;
		struct guest g;
		char got[64];
		size_t ngot = 0;
		int l, peer;
		ssize_t n;

		peer = connect_peer(&g, &l, &id);
		idx[0] = take(&g);
		idx[1] = take(&g);
		srpc_encode(&m, SRPC_REQ_CLOSE, ++g.tag, id, 0, 0, 0, NULL, 0);
		{
			struct tcr_desc d = { .slot = idx[0], .len = sizeof(msg) - 1,
					      .op = TCR_OP_DATA, .conn_id = id };
			struct tcr_desc c = { .slot = idx[1], .len = (uint32_t)srpc_msg_size(&m),
					      .op = TCR_OP_CTRL };

			memcpy(tcr_region_slot(g.r, idx[0]), msg, d.len);
			tcr_desc_store(g.r, idx[0], &d);
			memcpy(tcr_region_slot(g.r, idx[1]), &m, c.len);
			tcr_desc_store(g.r, idx[1], &c);
		}
		ck_assert_int_eq(tcr_ring_enqueue_burst(&g.ch.ring[TCR_CH_TX], idx, 2), 2);
		kick(&g);
		detach(&g);
		while ((n = recv(peer, got + ngot, sizeof(got) - ngot, 0)) > 0)
			ngot += (size_t)n;
		ck_assert_int_eq(n, 0);	/* EOF, not a reset */
		ck_assert_uint_eq(ngot, sizeof(msg) - 1);
		ck_assert_int_eq(memcmp(got, msg, ngot), 0);
		close(peer);
		close(l);
	}
}
END_TEST

/*
 * A guest that sends requests and never reads the answers holds at most
 * its share of the pool (chan_cap, and CTRL_RESERVE more for answers)
 * and then gets no service; another guest is served all along.
 */
START_TEST(test_hoarding_guest)
{
	struct guest a, b;
	struct srpc_msg m, r;
	int sent = 0;

	ck_assert_int_eq(attach(&a), 0);
	for (int i = 0; i < 400; i++) {
		uint32_t idx;

		if (tcr_ring_dequeue_burst(&a.ch.ring[TCR_CH_FREE], &idx, 1) != 1) {
			usleep(2000);
			continue;
		}
		srpc_encode(&m, SRPC_REQ_GETSOCKOPT, ++a.tag, 12345, SOL_SOCKET, SO_TYPE, 4, NULL, 0);
		put(&a, idx, TCR_OP_CTRL, 0, &m, (uint32_t)srpc_msg_size(&m));
		sent++;
	}
	ck_assert_int_gt(sent, 64);	/* it got going */
	ck_assert_int_lt(sent, 400);	/* and was then held back */
	ck_assert_int_eq(attach(&b), 0);
	ck_assert_int_eq(request(&b, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	ck_assert_int_le(tcr_ring_count(&a.ch.ring[TCR_CH_RX]), 16 + 4 * 16 + CTRL_RESERVE);
	detach(&b);
	detach(&a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toe");
	TCase *tc = tcase_create("data");

	signal(SIGPIPE, SIG_IGN);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_data_and_flow_control);
	tcase_add_test(tc, test_tx_gather);
	tcase_add_test(tc, test_data_before_exit);
	tcase_add_test(tc, test_udp_datagrams);
	tcase_add_test(tc, test_hoarding_guest);
	tcase_add_test(tc, test_fork_ownership);
	tcase_add_test(tc, test_adopt_secret);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
