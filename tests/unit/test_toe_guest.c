// SPDX-License-Identifier: MIT
/*
 * tochain-toe against a hostile in-process guest: the TOE runs in a
 * thread; the test attaches through the real handshake and drives the
 * channel's rings by hand.  Bad requests cost the call, broken framing
 * or ring abuse cost the channel, and the TOE keeps serving new guests.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>

#include "tochain/srpc.h"
#include "tc_check.h"
#include "toe.h"

static char path[64];
static struct toe *toe;
static pthread_t thr;

struct guest {
	struct tcr_region *r;
	struct tcr_chan ch;
	int conn, efd_mine, efd_toe;
	uint32_t tag;
	uint32_t channel, epoch;
};

static void *run(void *arg)
{
	(void)arg;
	toe_run(toe);
	return NULL;
}

static void setup(void)
{
	struct toe_params p;
	sigset_t s;

	snprintf(path, sizeof(path), "/dev/shm/test-toe-%d", getpid());
	toe_params_default(&p);
	p.region_path = path;
	p.name = "unit";
	p.nbufs = 256;
	p.slot_size = 4096;
	p.nchannels = 4;
	p.grants = 16;
	p.rx_bound = 16;
	toe = toe_create(&p);
	ck_assert_ptr_nonnull(toe);
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	ck_assert_int_eq(pthread_create(&thr, NULL, run, NULL), 0);
}

static void teardown(void)
{
	kill(getpid(), SIGTERM);	/* taken by the TOE's signalfd */
	pthread_join(thr, NULL);
	toe_destroy(toe);
	ck_assert_int_eq(access(path, F_OK) == 0, 1);	/* region file stays */
	unlink(path);
}

static int attach(struct guest *g)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct srpc_hello h = { SRPC_HELLO_MAGIC, SRPC_VERSION, 1, 0 };
	struct srpc_welcome w;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	memset(g, 0, sizeof(*g));
	g->r = tcr_region_attach(path, TCR_ATTACH_GUEST);
	ck_assert_ptr_nonnull(g->r);
	g->efd_mine = eventfd(0, EFD_NONBLOCK);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s.sock", path);
	g->conn = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(g->conn, (struct sockaddr *)&sun, sizeof(sun)), 0);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &g->efd_mine, sizeof(int));
	ck_assert_int_eq(sendmsg(g->conn, &mh, 0), sizeof(h));
	iov.iov_base = &w;
	iov.iov_len = sizeof(w);
	mh.msg_controllen = sizeof(cbuf);
	ck_assert_int_eq(recvmsg(g->conn, &mh, 0), sizeof(w));
	if (w.status)
		return w.status;
	memcpy(&g->efd_toe, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
	g->channel = w.channel;
	g->epoch = w.epoch;
	ck_assert_int_eq(tcr_chan_attach(&g->ch, g->r, w.channel, 0), 0);
	return 0;
}

static void detach(struct guest *g)
{
	close(g->conn);
	close(g->efd_mine);
	close(g->efd_toe);
	tcr_region_destroy(g->r);
}

static void kick(struct guest *g)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(g->efd_toe, &one, 8), 8);
}

/* A FREE buffer, waiting for grants (bounded). */
static uint32_t take(struct guest *g)
{
	uint32_t idx;

	for (int i = 0; i < 2000; i++) {
		if (tcr_ring_dequeue_burst(&g->ch.ring[TCR_CH_FREE], &idx, 1) == 1)
			return idx;
		usleep(1000);
	}
	ck_abort_msg("no FREE buffer");
	return 0;
}

static void put(struct guest *g, uint32_t idx, enum tcr_op op, uint64_t conn, const void *p,
		uint32_t len)
{
	struct tcr_desc d = { .slot = idx, .len = len, .op = op, .conn_id = conn };

	memcpy(tcr_region_slot(g->r, idx), p, len);
	tcr_desc_store(g->r, idx, &d);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&g->ch.ring[TCR_CH_TX], &idx, 1), 1);
	kick(g);
}

/* Next control message on RX (bounded wait); returns its buffer to DONE. */
static int next_msg(struct guest *g, struct srpc_msg *m)
{
	for (int i = 0; i < 2000; i++) {
		struct tcr_desc d;
		uint32_t idx;

		if (tcr_ring_dequeue_burst(&g->ch.ring[TCR_CH_RX], &idx, 1) == 1) {
			ck_assert_int_eq(tcr_desc_load(g->r, idx, &d), 0);
			ck_assert_int_eq(d.op, TCR_OP_CTRL);
			ck_assert_int_eq(srpc_decode_msg(tcr_region_slot(g->r, idx) + d.off, d.len, m), 0);
			tcr_ring_enqueue_burst(&g->ch.ring[TCR_CH_DONE], &idx, 1);
			kick(g);
			return 0;
		}
		if (tcr_chan_stale(&g->ch))
			return -ENOTCONN;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static int request(struct guest *g, enum srpc_type type, uint32_t sock, int a, int b, int c,
		   const void *data, size_t dlen, struct srpc_msg *resp)
{
	struct srpc_msg m;
	int err;

	srpc_encode(&m, type, ++g->tag, sock, a, b, c, data, dlen);
	put(g, take(g), TCR_OP_CTRL, 0, &m, (uint32_t)srpc_msg_size(&m));
	err = next_msg(g, resp);
	if (err)
		return err;
	ck_assert_int_eq(resp->type, SRPC_RESP);
	ck_assert_uint_eq(resp->tag, g->tag);
	return 0;
}

static bool dropped(struct guest *g)
{
	for (int i = 0; i < 2000; i++) {
		if (tcr_chan_stale(&g->ch))
			return true;
		usleep(1000);
	}
	return false;
}

START_TEST(test_calls_and_bad_arguments)
{
	struct guest g;
	struct srpc_msg r;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);
	uint32_t id;

	ck_assert_int_eq(attach(&g), 0);
	ck_assert_int_eq(request(&g, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	id = (uint32_t)r.a;
	/* bad arguments: answered, the channel lives */
	ck_assert_int_eq(request(&g, SRPC_REQ_SOCKET, 0, AF_UNIX, SOCK_STREAM, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EAFNOSUPPORT);
	ck_assert_int_eq(request(&g, SRPC_REQ_LISTEN, id + 1, 5, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EBADF);
	ck_assert_int_eq(request(&g, SRPC_REQ_BIND, id, 0, 0, 0, &sin, 3, &r), 0);
	ck_assert_int_eq(r.a, -EINVAL);
	ck_assert_int_eq(request(&g, SRPC_REQ_SETSOCKOPT, id, SOL_SOCKET, SO_BINDTODEVICE, 0, "lo", 2, &r), 0);
	ck_assert_int_eq(r.a, -ENOPROTOOPT);
	/* a real bind + listen + getsockname on loopback */
	ck_assert_int_eq(request(&g, SRPC_REQ_BIND, id, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_int_eq(request(&g, SRPC_REQ_LISTEN, id, 5, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_int_eq(request(&g, SRPC_REQ_GETSOCKNAME, id, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_uint_eq(r.dlen, sl);
	memcpy(&sin, r.data, sizeof(sin));
	ck_assert_int_ne(sin.sin_port, 0);
	ck_assert_int_eq(request(&g, SRPC_REQ_ACCEPT, id, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EAGAIN);
	/* a connection to the listener: ACCEPTABLE, then ACCEPT gives a socket */
	{
		int c = socket(AF_INET, SOCK_STREAM, 0);

		ck_assert_int_eq(connect(c, (struct sockaddr *)&sin, sizeof(sin)), 0);
		ck_assert_int_eq(next_msg(&g, &r), 0);
		ck_assert_int_eq(r.type, SRPC_EV_ACCEPTABLE);
		ck_assert_int_eq(request(&g, SRPC_REQ_ACCEPT, id, 0, 0, 0, NULL, 0, &r), 0);
		ck_assert_int_gt(r.a, 0);
		close(c);
	}
	/* data for a socket the guest does not hold: dropped, buffer granted again */
	{
		uint32_t idx = take(&g), back = 0;

		put(&g, idx, TCR_OP_DATA, 0x12345678, "zz", 2);
		for (int i = 0; i < 2000 && !back; i++) {
			uint32_t x;

			while (tcr_ring_dequeue_burst(&g.ch.ring[TCR_CH_FREE], &x, 1) == 1)
				if (x == idx)
					back = 1;
			usleep(1000);
		}
		ck_assert_int_eq(back, 1);
	}
	ck_assert(!tcr_chan_stale(&g.ch));
	detach(&g);
}
END_TEST

START_TEST(test_broken_framing_drops_channel)
{
	struct guest g, g2;
	struct srpc_msg m, r;

	ck_assert_int_eq(attach(&g), 0);
	srpc_encode(&m, SRPC_REQ_LISTEN, 1, 1, 0, 0, 0, NULL, 0);
	m.dlen = 1000;	/* lies about its length */
	put(&g, take(&g), TCR_OP_CTRL, 0, &m, SRPC_HDR_SIZE);
	ck_assert(dropped(&g));
	detach(&g);
	/* the TOE still serves others */
	ck_assert_int_eq(attach(&g2), 0);
	ck_assert_int_eq(request(&g2, SRPC_REQ_SOCKET, 0, AF_INET6, SOCK_STREAM, 0, NULL, 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	detach(&g2);
}
END_TEST

START_TEST(test_ring_abuse_drops_channel)
{
	struct guest g;
	uint32_t bogus = 5000, notmine;

	ck_assert_int_eq(attach(&g), 0);
	/* an index beyond the region */
	tc_store_release(&g.ch.ring[TCR_CH_TX].entries[g.ch.ring[TCR_CH_TX].prod & g.ch.ring[TCR_CH_TX].mask], bogus);
	tc_store_release(&g.ch.ring[TCR_CH_TX].ctl->prod_tail, g.ch.ring[TCR_CH_TX].prod + 1);
	kick(&g);
	ck_assert(dropped(&g));
	detach(&g);

	ck_assert_int_eq(attach(&g), 0);
	/* a buffer the channel does not hold (returned twice) */
	notmine = take(&g);
	tcr_ring_enqueue_burst(&g.ch.ring[TCR_CH_DONE], &notmine, 1);
	tcr_ring_enqueue_burst(&g.ch.ring[TCR_CH_DONE], &notmine, 1);
	kick(&g);
	ck_assert(dropped(&g));
	detach(&g);
}
END_TEST

/*
 * Ring positions no honest guest writes: a producer position more than a
 * ring ahead of the consumer, or a consumer position the guest scribbled
 * over.  Counting such a ring gives -EPROTO, which must cost the channel
 * (not read as "work waiting", which kept the TOE spinning forever).
 */
START_TEST(test_impossible_positions_drop_channel)
{
	struct tcr_ring *tx, *done;
	struct guest g;
	struct srpc_msg r;

	ck_assert_int_eq(attach(&g), 0);
	tx = &g.ch.ring[TCR_CH_TX];
	tc_store_release(&tx->ctl->prod_tail, tx->prod + 3 * tx->size);
	kick(&g);
	ck_assert(dropped(&g));
	detach(&g);

	ck_assert_int_eq(attach(&g), 0);
	done = &g.ch.ring[TCR_CH_DONE];
	tc_store_release(&done->ctl->cons_tail, 0x80000000u);
	kick(&g);
	ck_assert(dropped(&g));
	detach(&g);

	/* the TOE still serves others */
	ck_assert_int_eq(attach(&g), 0);
	ck_assert_int_eq(request(&g, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	detach(&g);
}
END_TEST

START_TEST(test_channels_run_out_and_come_back)
{
	struct guest g[5];
	int ok = 0;

	for (int i = 0; i < 4; i++)
		ok += attach(&g[i]) == 0;
	ck_assert_int_eq(ok, 4);
	ck_assert_int_eq(attach(&g[4]), -EBUSY);
	close(g[4].conn);
	close(g[4].efd_mine);
	tcr_region_destroy(g[4].r);
	/* a guest that goes away frees its channel */
	detach(&g[0]);
	for (int i = 0; i < 200; i++) {
		if (attach(&g[4]) == 0)
			break;
		close(g[4].conn);
		close(g[4].efd_mine);
		tcr_region_destroy(g[4].r);
		usleep(5000);
	}
	ck_assert(!tcr_chan_stale(&g[4].ch));
	for (int i = 1; i < 5; i++)
		detach(&g[i]);
}
END_TEST

START_TEST(test_garbage_handshake)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct guest g;
	struct srpc_msg r;
	int c = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s.sock", path);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(write(c, "garbage!garbage!", 16), 16);
	close(c);
	/* a guest that connects and says nothing does not hold up others */
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&sun, sizeof(sun)), 0);
	{
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		ck_assert_int_eq(attach(&g), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ck_assert_int_lt((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 500);
	}
	close(c);
	ck_assert_int_eq(request(&g, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	detach(&g);
}
END_TEST

/* Send a valid hello carrying @fd as the guest's doorbell; true if refused (closed, no welcome). */
static bool hello_refused(int fd)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct srpc_hello h = { SRPC_HELLO_MAGIC, SRPC_VERSION, 1, 0 };
	struct srpc_welcome w;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	ssize_t n;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s.sock", path);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&sun, sizeof(sun)), 0);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	ck_assert_int_eq(sendmsg(c, &mh, 0), sizeof(h));
	n = read(c, &w, sizeof(w));	/* 0: closed by the TOE */
	close(c);
	return n == 0;
}

/*
 * The hello's doorbell must be a non-blocking eventfd: the TOE writes it
 * from its loop, and a pipe (or a blocking eventfd near its maximum)
 * could stall every guest of the TOE.
 */
START_TEST(test_hello_needs_nonblocking_eventfd)
{
	struct guest g;
	int p[2], blocking = eventfd(0, 0);

	ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
	ck_assert(hello_refused(p[1]));
	ck_assert(hello_refused(blocking));
	close(p[0]);
	close(p[1]);
	close(blocking);
	/* an honest guest still attaches */
	ck_assert_int_eq(attach(&g), 0);
	detach(&g);
}
END_TEST

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
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct srpc_heir h = { SRPC_HEIR_MAGIC, SRPC_VERSION, 0, 0 };
	struct tcr_desc d;
	uint32_t lid, cid, idx;
	int32_t hret;
	char buf[8];
	int c;

	ck_assert_int_eq(attach(&p), 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0, &r), 0);
	lid = (uint32_t)r.a;
	ck_assert_int_eq(request(&p, SRPC_REQ_BIND, lid, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_LISTEN, lid, 5, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_GETSOCKNAME, lid, 0, 0, 0, NULL, 0, &r), 0);
	memcpy(&sin, r.data, sizeof(sin));
	c = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(next_msg(&p, &r), 0);
	ck_assert_int_eq(r.type, SRPC_EV_ACCEPTABLE);
	ck_assert_int_eq(request(&p, SRPC_REQ_ACCEPT, lid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	cid = (uint32_t)r.a;

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

START_TEST(test_data_and_flow_control)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);
	int l = socket(AF_INET, SOCK_STREAM, 0), peer, one = 1;
	static uint8_t blob[16 << 20], got[16 << 20];
	uint32_t held[64], nheld = 0, id;
	size_t ngot = 0, sent = 0;
	struct srpc_msg r;
	struct guest g;

	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 13 + (i >> 11));
	ck_assert_int_eq(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&sin, &sl), 0);
	ck_assert_int_eq(attach(&g), 0);
	ck_assert_int_eq(request(&g, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0, &r), 0);
	id = (uint32_t)r.a;
	ck_assert_int_eq(request(&g, SRPC_REQ_CONNECT, id, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert(r.a == 0 || r.a == -EINPROGRESS);
	if (r.a == -EINPROGRESS) {
		ck_assert_int_eq(next_msg(&g, &r), 0);
		ck_assert_int_eq(r.type, SRPC_EV_CONNECTED);
		ck_assert_int_eq(r.a, 0);
	}
	peer = accept(l, NULL, NULL);
	ck_assert_int_ge(peer, 0);
	setsockopt(peer, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));

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
 * A guest that sends requests and never reads the answers holds at most
 * its share of the pool and then gets no service; another guest is
 * served all along.
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
	ck_assert_int_le(tcr_ring_count(&a.ch.ring[TCR_CH_RX]), 16 + 4 * 16);	/* chan_cap */
	detach(&b);
	detach(&a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toe");
	TCase *tc = tcase_create("guest");

	signal(SIGPIPE, SIG_IGN);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_calls_and_bad_arguments);
	tcase_add_test(tc, test_broken_framing_drops_channel);
	tcase_add_test(tc, test_ring_abuse_drops_channel);
	tcase_add_test(tc, test_impossible_positions_drop_channel);
	tcase_add_test(tc, test_hello_needs_nonblocking_eventfd);
	tcase_add_test(tc, test_channels_run_out_and_come_back);
	tcase_add_test(tc, test_garbage_handshake);
	tcase_add_test(tc, test_data_and_flow_control);
	tcase_add_test(tc, test_udp_datagrams);
	tcase_add_test(tc, test_hoarding_guest);
	tcase_add_test(tc, test_fork_ownership);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
