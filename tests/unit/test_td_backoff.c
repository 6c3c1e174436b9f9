// SPDX-License-Identifier: MIT
/* Unit tests for tochaind/td_backoff.c: restart back-off of VNF instances. */
#include "td_backoff.h"
#include "tc_check.h"

START_TEST(test_delay)
{
	ck_assert_int_eq(td_backoff_delay(0), 100);
	ck_assert_int_eq(td_backoff_delay(1), 200);
	ck_assert_int_eq(td_backoff_delay(3), 800);
	ck_assert_int_eq(td_backoff_delay(8), 25600);
	ck_assert_int_eq(td_backoff_delay(9), TD_BACKOFF_MAX_MS);
	ck_assert_int_eq(td_backoff_delay(1000), TD_BACKOFF_MAX_MS);
}
END_TEST

START_TEST(test_dying_grows)
{
	struct td_backoff b = { 0 };
	long long now = 1000;

	td_backoff_started(&b, now);
	ck_assert_uint_eq(b.restarts, 0);
	for (unsigned int i = 0; i < 12; i++) {
		now += 50;	/* dies at once */
		td_backoff_died(&b, now);
		ck_assert(td_backoff_waits(&b, now));
		td_backoff_died(&b, now + 10);	/* seen again: nothing moves */
		ck_assert_int_eq(b.retry_ms, now + td_backoff_delay(i));
		ck_assert(td_backoff_waits(&b, b.retry_ms - 1));
		ck_assert(!td_backoff_waits(&b, b.retry_ms));
		now = b.retry_ms;
		td_backoff_started(&b, now);
		ck_assert_uint_eq(b.restarts, i + 1);
		ck_assert_uint_eq(b.total, i + 1);
		ck_assert(!td_backoff_waits(&b, now));
	}
	ck_assert_int_eq(td_backoff_delay(b.restarts), TD_BACKOFF_MAX_MS);
}
END_TEST

START_TEST(test_stable_resets)
{
	struct td_backoff b = { .restarts = 6 };

	td_backoff_started(&b, 5000);
	td_backoff_died(&b, 5000 + TD_BACKOFF_STABLE_MS - 1);
	ck_assert_int_eq(b.retry_ms, 5000 + TD_BACKOFF_STABLE_MS - 1 + td_backoff_delay(6));
	td_backoff_started(&b, 100000);
	ck_assert_uint_eq(b.restarts, 7);
	td_backoff_died(&b, 100000 + TD_BACKOFF_STABLE_MS);
	ck_assert_uint_eq(b.restarts, 0);
	ck_assert_uint_eq(b.total, 1);	/* the metrics' counter is never reset */
	ck_assert_int_eq(b.retry_ms, 100000 + TD_BACKOFF_STABLE_MS + TD_BACKOFF_MIN_MS);
	/* hurried (new rules): due at once, the count stays */
	td_backoff_hurry(&b);
	ck_assert(!td_backoff_waits(&b, 100000 + TD_BACKOFF_STABLE_MS));
	ck_assert_uint_eq(b.restarts, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("td_backoff");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_delay);
	tcase_add_test(tc, test_dying_grows);
	tcase_add_test(tc, test_stable_resets);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
