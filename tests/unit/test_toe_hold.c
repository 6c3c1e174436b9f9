// SPDX-License-Identifier: MIT
/*
 * The hold's deferred connects (toe_hold.h): kept in order, one per
 * socket, one per socket slot (a reused slot replaces its entry, so a
 * guest that connects and closes in a loop while held costs nothing
 * more), the documented errors, and the release.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "tc_check.h"
#include "toe_hold.h"

static struct sockaddr_in addr(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

START_TEST(test_defer_and_release)
{
	struct toe_hold *h = toe_hold_create(true);
	struct sockaddr_in a1 = addr(1001), a2 = addr(1002), a3 = addr(1003);
	struct sockaddr_storage got;
	socklen_t len;
	uint32_t id;

	ck_assert_ptr_nonnull(h);
	ck_assert(toe_hold_held(h));
	ck_assert_int_eq(toe_hold_defer_connect(h, (1u << 16) | 1, (struct sockaddr *)&a1, sizeof(a1)), 0);
	ck_assert_int_eq(toe_hold_defer_connect(h, (1u << 16) | 2, (struct sockaddr *)&a2, sizeof(a2)), 0);
	/* the same socket again: its connect waits already */
	ck_assert_int_eq(toe_hold_defer_connect(h, (1u << 16) | 1, (struct sockaddr *)&a3, sizeof(a3)),
			 -EALREADY);
	/* slot 2 reused by a new socket (generation 2): it replaces the entry */
	ck_assert_int_eq(toe_hold_defer_connect(h, (2u << 16) | 2, (struct sockaddr *)&a3, sizeof(a3)), 0);
	ck_assert_int_eq(toe_hold_defer_connect(h, 3, (struct sockaddr *)&a1, 0), -EINVAL);
	ck_assert_int_eq(toe_hold_defer_connect(h, 3, (struct sockaddr *)&a1,
						sizeof(struct sockaddr_storage) + 1), -EINVAL);
	ck_assert(toe_hold_release(h));
	ck_assert(!toe_hold_release(h));	/* again: nothing changes */
	ck_assert(!toe_hold_held(h));
	ck_assert(toe_hold_next_connect(h, &id, &got, &len));
	ck_assert_uint_eq(id, (1u << 16) | 1);
	ck_assert_uint_eq(len, sizeof(a1));
	ck_assert_int_eq(memcmp(&got, &a1, sizeof(a1)), 0);
	ck_assert(toe_hold_next_connect(h, &id, &got, &len));
	ck_assert_uint_eq(id, (2u << 16) | 2);
	ck_assert_int_eq(memcmp(&got, &a3, sizeof(a3)), 0);
	ck_assert(!toe_hold_next_connect(h, &id, &got, &len));
	ck_assert(!toe_hold_next_connect(h, &id, &got, &len));
	toe_hold_destroy(h);
}
END_TEST

START_TEST(test_bounded_by_slots)
{
	struct toe_hold *h = toe_hold_create(true);
	struct sockaddr_in a = addr(80);
	struct sockaddr_storage got;
	socklen_t len;
	uint32_t id, n = 0;

	/* 10000 sockets in the same 4 slots: 4 entries */
	for (uint32_t gen = 1; gen <= 2500; gen++)
		for (uint32_t slot = 1; slot <= 4; slot++)
			ck_assert_int_eq(toe_hold_defer_connect(h, (gen << 16) | slot,
								(struct sockaddr *)&a, sizeof(a)), 0);
	toe_hold_release(h);
	while (toe_hold_next_connect(h, &id, &got, &len)) {
		ck_assert_uint_eq(id >> 16, 2500);
		n++;
	}
	ck_assert_uint_eq(n, 4);
	toe_hold_destroy(h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toe_hold");
	TCase *tc = tcase_create("hold");

	tcase_add_test(tc, test_defer_and_release);
	tcase_add_test(tc, test_bounded_by_slots);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
