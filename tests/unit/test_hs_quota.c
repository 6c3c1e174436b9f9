// SPDX-License-Identifier: MIT
/* Eq. 2: quota in ticks per period and thread count, C = 50 ticks. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "hs_quota.h"

static struct hs_quota q;

START_TEST(one_thread)
{
	/* t=1000 f=5000: ceil(1000*50/5000) = ceil(10) = 10, 1 thread */
	ck_assert_int_eq(hs_quota(1000, 5000, 50, 4, &q), 0);
	ck_assert_uint_eq(q.ticks, 10);
	ck_assert_uint_eq(q.threads, 1);
	/* t=1000 f=3000: ceil(50000/3000) = ceil(16.67) = 17 */
	ck_assert_int_eq(hs_quota(1000, 3000, 50, 1, &q), 0);
	ck_assert_uint_eq(q.ticks, 17);
	ck_assert_uint_eq(q.threads, 1);
	/* t=4999 f=5000: ceil(249950/5000) = ceil(49.99) = 50 = C */
	ck_assert_int_eq(hs_quota(4999, 5000, 50, 1, &q), 0);
	ck_assert_uint_eq(q.ticks, 50);
	ck_assert_uint_eq(q.threads, 1);
}
END_TEST

START_TEST(several_threads)
{
	/* t=5000 f=4000: R = floor(5000/4000)+1 = 2 (4000 <= 5000 < 8000),
	 * ceil(5000*50/(4000*2)) = ceil(31.25) = 32 */
	ck_assert_int_eq(hs_quota(5000, 4000, 50, 4, &q), 0);
	ck_assert_uint_eq(q.ticks, 32);
	ck_assert_uint_eq(q.threads, 2);
	/* t=9000 f=4000: R=3, ceil(450000/12000) = ceil(37.5) = 38 */
	ck_assert_int_eq(hs_quota(9000, 4000, 50, 3, &q), 0);
	ck_assert_uint_eq(q.ticks, 38);
	ck_assert_uint_eq(q.threads, 3);
}
END_TEST

START_TEST(equality_pinned)
{
	/* t == f goes to the multi-thread case: R=2,
	 * ceil(5000*50/(5000*2)) = 25 */
	ck_assert_int_eq(hs_quota(5000, 5000, 50, 2, &q), 0);
	ck_assert_uint_eq(q.ticks, 25);
	ck_assert_uint_eq(q.threads, 2);
	/* ... so with one thread allowed it is infeasible */
	ck_assert_int_eq(hs_quota(5000, 5000, 50, 1, &q), -ERANGE);
	/* t == f*R (8000 = 4000*2): needs R+1 = 3, ceil(400000/12000) = 34 */
	ck_assert_int_eq(hs_quota(8000, 4000, 50, 3, &q), 0);
	ck_assert_uint_eq(q.ticks, 34);
	ck_assert_uint_eq(q.threads, 3);
	ck_assert_int_eq(hs_quota(8000, 4000, 50, 2, &q), -ERANGE);
}
END_TEST

START_TEST(infeasible_and_bad_args)
{
	/* beyond f * max_threads */
	ck_assert_int_eq(hs_quota(20000, 4000, 50, 4, &q), -ERANGE);
	ck_assert_int_eq(hs_quota(1000, 0, 50, 1, &q), -EINVAL);
	ck_assert_int_eq(hs_quota(1000, 1000, 0, 1, &q), -EINVAL);
	ck_assert_int_eq(hs_quota(1000, 1000, 50, 0, &q), -EINVAL);
	ck_assert_int_eq(hs_quota(1000, 1000, 50, 1, NULL), -EINVAL);
	/* overflow of t*C is refused, not wrapped */
	ck_assert_int_eq(hs_quota(UINT64_MAX / 2, UINT64_MAX / 4, 50, 8, &q),
			 -ERANGE);
}
END_TEST

START_TEST(no_sla_no_quota)
{
	ck_assert_int_eq(hs_quota(0, 4000, 50, 1, &q), 0);
	ck_assert_uint_eq(q.ticks, 0);
	ck_assert_uint_eq(q.threads, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_quota");
	TCase *tc = tcase_create("eq2");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, one_thread);
	tcase_add_test(tc, several_threads);
	tcase_add_test(tc, equality_pinned);
	tcase_add_test(tc, infeasible_and_bad_args);
	tcase_add_test(tc, no_sla_no_quota);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
