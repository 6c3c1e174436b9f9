// SPDX-License-Identifier: MIT
/* Early end of a VNF slot: (a) input empty, (b) O_i >= E_i over w periods. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "hs_early.h"

START_TEST(input_empty)
{
	struct hs_rxwin w;

	ck_assert_int_eq(hs_rxwin_init(&w, 3), 0);
	ck_assert_int_eq(hs_early_end(0, 0, &w), HS_EARLY_INPUT_EMPTY);
	ck_assert_int_eq(hs_early_end(0, 1000, &w), HS_EARLY_INPUT_EMPTY);
	ck_assert_int_eq(hs_early_end(0, 0, NULL), HS_EARLY_INPUT_EMPTY);
	ck_assert_int_eq(hs_early_end(1, 1000, NULL), HS_EARLY_NO);
}
END_TEST

START_TEST(window_mean)
{
	struct hs_rxwin w;

	ck_assert_int_eq(hs_rxwin_init(&w, 3), 0);
	/* no period recorded: no estimate, (b) never fires */
	ck_assert(hs_rxwin_mean(&w) == 0.0);
	ck_assert_int_eq(hs_early_end(5, 1000000, &w), HS_EARLY_NO);
	/* 10, 20: window not full, mean over 2 = 15 (not 30/3 = 10) */
	hs_rxwin_push(&w, 10);
	hs_rxwin_push(&w, 20);
	ck_assert_double_eq_tol(hs_rxwin_mean(&w), 15.0, 1e-12);
	ck_assert_int_eq(hs_early_end(5, 15, &w), HS_EARLY_OUTPUT_FULL);
	ck_assert_int_eq(hs_early_end(5, 14, &w), HS_EARLY_NO);
	/* 10, 20, 30: mean 20 */
	hs_rxwin_push(&w, 30);
	ck_assert_double_eq_tol(hs_rxwin_mean(&w), 20.0, 1e-12);
	/* 40 pushes 10 out: 20, 30, 40 -> mean 30 */
	hs_rxwin_push(&w, 40);
	ck_assert_double_eq_tol(hs_rxwin_mean(&w), 30.0, 1e-12);
	ck_assert_int_eq(hs_early_end(5, 29, &w), HS_EARLY_NO);
	ck_assert_int_eq(hs_early_end(5, 30, &w), HS_EARLY_OUTPUT_FULL);
	/* (a) wins over (b) */
	ck_assert_int_eq(hs_early_end(0, 30, &w), HS_EARLY_INPUT_EMPTY);
	/* exact comparison with a non-integer mean */
	hs_rxwin_push(&w, 20);	/* 30, 40, 20 */
	hs_rxwin_push(&w, 41);	/* 40, 20, 41 = 101 -> E = 33.67:
				 * 33*3 = 99 < 101, 34*3 = 102 >= 101 */
	ck_assert_int_eq(hs_early_end(5, 33, &w), HS_EARLY_NO);
	ck_assert_int_eq(hs_early_end(5, 34, &w), HS_EARLY_OUTPUT_FULL);
}
END_TEST

START_TEST(idle_receiver)
{
	struct hs_rxwin w;

	/* the receiver took nothing for w periods: E = 0.  An empty output
	 * queue must not end the slot (the chain could never start), one
	 * waiting packet does. */
	ck_assert_int_eq(hs_rxwin_init(&w, 2), 0);
	hs_rxwin_push(&w, 0);
	hs_rxwin_push(&w, 0);
	ck_assert_int_eq(hs_early_end(5, 0, &w), HS_EARLY_NO);
	ck_assert_int_eq(hs_early_end(5, 1, &w), HS_EARLY_OUTPUT_FULL);
}
END_TEST

START_TEST(window_sizes)
{
	struct hs_rxwin w;

	ck_assert_int_eq(hs_rxwin_init(&w, 0), -EINVAL);
	ck_assert_int_eq(hs_rxwin_init(&w, HS_RXWIN_MAX + 1), -EINVAL);
	ck_assert_int_eq(hs_rxwin_init(NULL, 1), -EINVAL);
	/* w = 1: only the last period counts */
	ck_assert_int_eq(hs_rxwin_init(&w, 1), 0);
	hs_rxwin_push(&w, 100);
	hs_rxwin_push(&w, 7);
	ck_assert_double_eq_tol(hs_rxwin_mean(&w), 7.0, 1e-12);
	/* w = max: fill it twice over, the mean follows the last w */
	ck_assert_int_eq(hs_rxwin_init(&w, HS_RXWIN_MAX), 0);
	for (int i = 0; i < 2 * HS_RXWIN_MAX; i++)
		hs_rxwin_push(&w, i < HS_RXWIN_MAX ? 1000 : 2);
	ck_assert_double_eq_tol(hs_rxwin_mean(&w), 2.0, 1e-12);
}
END_TEST

START_TEST(record_only_busy_periods)
{
	struct hs_rxwin w;

	ck_assert_int_eq(hs_rxwin_init(&w, 2), 0);
	/* the receiver drained its queue: 40 is a lower bound, not kept */
	ck_assert(!hs_rxwin_record(&w, 40, false));
	ck_assert_uint_eq(w.n, 0);
	ck_assert_int_eq(hs_early_end(5, 1000, &w), HS_EARLY_NO);
	/* 90 taken, busy all the time: the receiver's capacity, kept */
	ck_assert(hs_rxwin_record(&w, 90, true));
	ck_assert(hs_rxwin_record(&w, 110, true));
	ck_assert_double_eq_tol(hs_rxwin_mean(&w), 100.0, 1e-12);
	ck_assert(!hs_rxwin_record(&w, 5, false));
	ck_assert_double_eq_tol(hs_rxwin_mean(&w), 100.0, 1e-12);
	ck_assert_int_eq(hs_early_end(5, 99, &w), HS_EARLY_NO);
	ck_assert_int_eq(hs_early_end(5, 100, &w), HS_EARLY_OUTPUT_FULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_early");
	TCase *tc = tcase_create("early");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, input_empty);
	tcase_add_test(tc, window_mean);
	tcase_add_test(tc, idle_receiver);
	tcase_add_test(tc, window_sizes);
	tcase_add_test(tc, record_only_busy_periods);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
