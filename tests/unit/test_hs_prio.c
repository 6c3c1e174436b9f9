// SPDX-License-Identifier: MIT
/* Eq. 1, chain priority, as printed: H = (I + T*R) / (F + T*T). */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "hs_prio.h"

START_TEST(hand_worked)
{
	/* I=10 F=20 R=5 T=2: (10 + 2*5) / (20 + 2*2) = 20/24 = 0.8333... */
	ck_assert_double_eq_tol(hs_prio(10, 20, 5, 2.0), 20.0 / 24.0, 1e-12);
	/* I=100 F=500 R=250 T=500: (100 + 125000) / (500 + 250000)
	 * = 125100 / 250500 = 0.49940... */
	ck_assert_double_eq_tol(hs_prio(100, 500, 250, 500.0),
				125100.0 / 250500.0, 1e-12);
}
END_TEST

START_TEST(no_backlog_is_zero)
{
	/* R = 0: not scheduled this period, whatever else happened. */
	ck_assert(hs_prio(1000, 0, 0, 500.0) == 0.0);
	ck_assert(hs_prio(0, 0, 0, 0.0) == 0.0);
}
END_TEST

START_TEST(zero_denominator_guarded)
{
	/* T = 0 and F = 0: denominator 0, priority 0 rather than inf. */
	ck_assert(hs_prio(5, 0, 3, 0.0) == 0.0);
	/* T = 0, F = 4: (8 + 0) / (4 + 0) = 2 */
	ck_assert_double_eq_tol(hs_prio(8, 4, 1, 0.0), 2.0, 1e-12);
	/* negative or NaN SLA counts as 0 */
	ck_assert_double_eq_tol(hs_prio(8, 4, 1, -3.0), 2.0, 1e-12);
	ck_assert(!isnan(hs_prio(8, 0, 1, NAN)));
	ck_assert(hs_prio(8, 0, 1, NAN) == 0.0);
}
END_TEST

START_TEST(rewards_backlog_relative_to_sla)
{
	/* Same backlog of 250 packets: the chain with the smaller SLA is
	 * further behind in periods of its own work and goes first.
	 * T=500: 0.4994; T=1000: (100 + 250000)/(500 + 1e6) = 0.24998 */
	double small = hs_prio(100, 500, 250, 500.0);
	double big = hs_prio(100, 500, 250, 1000.0);

	ck_assert(small > big);
	ck_assert_double_eq_tol(big, 250100.0 / 1000500.0, 1e-12);
	/* More backlog, same SLA: higher priority. */
	ck_assert(hs_prio(100, 500, 500, 500.0) > small);
	/* More finished last period, same rest: lower priority. */
	ck_assert(hs_prio(100, 5000, 250, 500.0) < small);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_prio");
	TCase *tc = tcase_create("eq1");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, hand_worked);
	tcase_add_test(tc, no_backlog_is_zero);
	tcase_add_test(tc, zero_denominator_guarded);
	tcase_add_test(tc, rewards_backlog_relative_to_sla);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
