// SPDX-License-Identifier: MIT
/*
 * Readiness events of a listener shared across fork (toe_ready.h), with
 * the in-process guest of toe_guest.h: a parent that holds the listener
 * and never reads its ring has one ACCEPTABLE message out however many
 * connections its child accepts; once it returns that message, it gets
 * the latest state, and a new connection tells it again.
 */
#include <arpa/inet.h>

#include "toe_guest.h"

/* Channel @g's next message is ACCEPTABLE for @lid with a = @a. */
static void expect_acceptable(struct guest *g, uint32_t lid, int a)
{
	struct srpc_msg r;

	ck_assert_int_eq(next_msg(g, &r), 0);
	ck_assert_int_eq(r.type, SRPC_EV_ACCEPTABLE);
	ck_assert_uint_eq(r.sock, lid);
	ck_assert_int_eq(r.a, a);
}

START_TEST(test_idle_holder_bounded)
{
	struct guest p, k;
	struct srpc_msg r;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint32_t lid;
	int c[21];

	ck_assert_int_eq(attach(&p), 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0, &r), 0);
	lid = (uint32_t)r.a;
	ck_assert_int_eq(request(&p, SRPC_REQ_BIND, lid, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_LISTEN, lid, 32, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_GETSOCKNAME, lid, 0, 0, 0, NULL, 0, &r), 0);
	memcpy(&sin, r.data, sizeof(sin));
	ck_assert_int_eq(attach(&k), 0);
	ck_assert_int_eq(request(&p, SRPC_REQ_FORK, 0, (int)k.channel, (int)k.epoch, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, 0);

	/* the child accepts 20 connections; the parent never looks */
	for (int i = 0; i < 20; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		ck_assert_int_eq(connect(c[i], (struct sockaddr *)&sin, sizeof(sin)), 0);
		expect_acceptable(&k, lid, 1);
		ck_assert_int_eq(request(&k, SRPC_REQ_ACCEPT, lid, 0, 0, 0, NULL, 0, &r), 0);
		ck_assert_int_gt(r.a, 0);
		ck_assert_int_eq(r.b, 0);	/* no more waiting */
	}
	usleep(50000);
	/* one message out to the parent, not 2 per connection */
	ck_assert_int_eq(tcr_ring_count(&p.ch.ring[TCR_CH_RX]), 1);
	ck_assert_int_eq(tcr_ring_count(&k.ch.ring[TCR_CH_RX]), 0);
	/* it reads and returns it: the latest state follows, then nothing */
	expect_acceptable(&p, lid, 1);
	expect_acceptable(&p, lid, 0);
	usleep(50000);
	ck_assert_int_eq(tcr_ring_count(&p.ch.ring[TCR_CH_RX]), 0);
	/* a new connection: both holders are told */
	c[20] = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(c[20], (struct sockaddr *)&sin, sizeof(sin)), 0);
	expect_acceptable(&p, lid, 1);
	expect_acceptable(&k, lid, 1);
	/* the parent takes it: more = 0, the child is told 0 */
	ck_assert_int_eq(request(&p, SRPC_REQ_ACCEPT, lid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	ck_assert_int_eq(r.b, 0);
	expect_acceptable(&k, lid, 0);
	for (int i = 0; i < 21; i++)
		close(c[i]);
	detach(&k);
	detach(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toe_ready");
	TCase *tc = tcase_create("ready");

	signal(SIGPIPE, SIG_IGN);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_idle_holder_bounded);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
