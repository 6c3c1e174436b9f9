// SPDX-License-Identifier: MIT
/*
 * tochain-toe against a hostile in-process guest (toe_guest.h): bad
 * requests cost the call; broken framing, ring abuse, impossible ring
 * positions and a bad handshake cost the channel; and the TOE keeps
 * serving new guests.  Data paths: test_toe_data.c.
 */
#include "toe_guest.h"

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
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
