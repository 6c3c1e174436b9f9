// SPDX-License-Identifier: MIT
/*
 * Re-joining a shared socket after a TOE restart (toe_join.h), with the
 * in-process guest of toe_guest.h: a process whose BIND or LISTEN of a
 * fresh socket fails with EADDRINUSE becomes a holder of the socket of
 * the same secret bound there (answer 0, b = its id; its own socket is
 * closed), and accepts from it; a bind without that secret is refused
 * with EADDRINUSE as ever.
 */
#include <arpa/inet.h>

#include "toe_guest.h"

static const uint8_t sec[SRPC_SECRET_LEN] = "shared-listener";
static const uint8_t other[SRPC_SECRET_LEN] = "another-secret!";

/* A socket of @g with @secret (NULL: none), SO_REUSEADDR when @reuse: its id. */
static uint32_t sock_of(struct guest *g, const uint8_t *secret, bool reuse)
{
	struct srpc_msg r;
	int one = 1;

	ck_assert_int_eq(request(g, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, secret,
				 secret ? SRPC_SECRET_LEN : 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	if (reuse) {
		uint32_t id = (uint32_t)r.a;

		ck_assert_int_eq(request(g, SRPC_REQ_SETSOCKOPT, id, SOL_SOCKET, SO_REUSEADDR, 0,
					 &one, sizeof(one), &r), 0);
		ck_assert_int_eq(r.a, 0);
		return id;
	}
	return (uint32_t)r.a;
}

START_TEST(test_join_by_secret)
{
	struct guest a, b;
	struct srpc_msg r;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint32_t lid, mine;
	int c;

	ck_assert_int_eq(attach(&a), 0);
	ck_assert_int_eq(attach(&b), 0);
	lid = sock_of(&a, sec, false);
	ck_assert_int_eq(request(&a, SRPC_REQ_BIND, lid, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(request(&a, SRPC_REQ_LISTEN, lid, 8, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_int_eq(request(&a, SRPC_REQ_GETSOCKNAME, lid, 0, 0, 0, NULL, 0, &r), 0);
	memcpy(&sin, r.data, sizeof(sin));

	/* without the secret, or with another: EADDRINUSE, the socket stays the caller's */
	mine = sock_of(&b, NULL, false);
	ck_assert_int_eq(request(&b, SRPC_REQ_BIND, mine, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(r.a, -EADDRINUSE);
	mine = sock_of(&b, other, false);
	ck_assert_int_eq(request(&b, SRPC_REQ_BIND, mine, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(r.a, -EADDRINUSE);
	ck_assert_int_eq(request(&b, SRPC_REQ_ACCEPT, lid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EBADF);

	/* with it: b holds a's listener, its own socket is gone */
	mine = sock_of(&b, sec, false);
	ck_assert_int_eq(request(&b, SRPC_REQ_BIND, mine, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_uint_eq((uint32_t)r.b, lid);
	ck_assert_int_eq(request(&b, SRPC_REQ_GETSOCKNAME, mine, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EBADF);
	ck_assert_int_eq(request(&b, SRPC_REQ_ACCEPT, lid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EAGAIN);
	c = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(next_msg(&b, &r), 0);
	ck_assert_int_eq(r.type, SRPC_EV_ACCEPTABLE);
	ck_assert_uint_eq(r.sock, lid);
	ck_assert_int_eq(request(&b, SRPC_REQ_ACCEPT, lid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_gt(r.a, 0);
	close(c);

	detach(&b);
	detach(&a);
}
END_TEST

/* Both bound with SO_REUSEADDR (nginx): the second LISTEN is what fails, and joins. */
START_TEST(test_join_at_listen)
{
	struct guest a, b;
	struct srpc_msg r;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint32_t lid, mine;

	ck_assert_int_eq(attach(&a), 0);
	ck_assert_int_eq(attach(&b), 0);
	lid = sock_of(&a, sec, true);
	ck_assert_int_eq(request(&a, SRPC_REQ_BIND, lid, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(request(&a, SRPC_REQ_GETSOCKNAME, lid, 0, 0, 0, NULL, 0, &r), 0);
	memcpy(&sin, r.data, sizeof(sin));
	mine = sock_of(&b, sec, true);
	ck_assert_int_eq(request(&b, SRPC_REQ_BIND, mine, 0, 0, 0, &sin, sizeof(sin), &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_int_eq(r.b, 0);	/* both bound: nothing to join yet */
	ck_assert_int_eq(request(&a, SRPC_REQ_LISTEN, lid, 8, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_int_eq(request(&b, SRPC_REQ_LISTEN, mine, 8, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, 0);
	ck_assert_uint_eq((uint32_t)r.b, lid);
	ck_assert_int_eq(request(&b, SRPC_REQ_ACCEPT, lid, 0, 0, 0, NULL, 0, &r), 0);
	ck_assert_int_eq(r.a, -EAGAIN);
	detach(&b);
	detach(&a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toe_join");
	TCase *tc = tcase_create("join");

	signal(SIGPIPE, SIG_IGN);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_join_by_secret);
	tcase_add_test(tc, test_join_at_listen);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
