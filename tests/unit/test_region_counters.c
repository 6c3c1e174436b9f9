// SPDX-License-Identifier: MIT
/* Unit tests for lib/region/counters.c. */
#include <errno.h>
#include <string.h>

#include <tochain/counters.h>
#include "tc_check.h"

static struct tcr_chain_counters c;

static void setup(void)
{
	memset(&c, 0, sizeof(c));
}

START_TEST(cumulative_counters_and_snapshot)
{
	struct tcr_counters_snap a, b;

	tcr_counters_arrived(&c, 10);
	tcr_counters_arrived(&c, 5);
	tcr_counters_finished(&c, 7, 2);
	tcr_counters_taken(&c, 4);
	tcr_counters_queues(&c, 8, 3, 12345);
	ck_assert_int_eq(tcr_counters_snapshot(&c, NULL, 64, &a), 0);
	ck_assert_uint_eq(a.arrivals, 15);
	ck_assert_uint_eq(a.finished, 7);
	ck_assert_uint_eq(a.denied, 2);
	ck_assert_uint_eq(a.taken, 4);
	ck_assert_uint_eq(a.in_qlen, 8);
	ck_assert_uint_eq(a.out_qlen, 3);
	ck_assert_uint_eq(a.out_head_tsc, 12345);
	tcr_counters_arrived(&c, 1);
	ck_assert_int_eq(tcr_counters_snapshot(&c, &a, 64, &b), 0);
	ck_assert_uint_eq(b.arrivals - a.arrivals, 1);
}
END_TEST

START_TEST(snapshot_refuses_impossible_values)
{
	struct tcr_counters_snap a, b;

	tcr_counters_arrived(&c, 10);
	tcr_counters_finished(&c, 10, 0);
	ck_assert_int_eq(tcr_counters_snapshot(&c, NULL, 64, &a), 0);
	c.arrivals = 9;		/* went backwards */
	ck_assert_int_eq(tcr_counters_snapshot(&c, &a, 64, &b), -EBADMSG);
	c.arrivals = 10;
	c.in_qlen = 65;
	ck_assert_int_eq(tcr_counters_snapshot(&c, &a, 64, &b), -EBADMSG);
	c.in_qlen = 0;
	c.denied = 11;		/* more denied than finished */
	ck_assert_int_eq(tcr_counters_snapshot(&c, &a, 64, &b), -EBADMSG);
	c.denied = 0;
	c.taken = 0;
	a.taken = 1;
	ck_assert_int_eq(tcr_counters_snapshot(&c, &a, 64, &b), -EBADMSG);
}
END_TEST

START_TEST(early_end_flags)
{
	uint32_t seq = c.early_seq;

	tcr_counters_raise_early(&c, TCR_EARLY_INPUT_EMPTY);
	tcr_counters_raise_early(&c, TCR_EARLY_OUTPUT_FULL | 0x80);
	tcr_counters_raise_early(&c, 0x80);	/* unknown bits only: nothing */
	ck_assert_uint_eq(c.early_seq, seq + 2);
	ck_assert_uint_eq(tcr_counters_take_early(&c),
			  TCR_EARLY_INPUT_EMPTY | TCR_EARLY_OUTPUT_FULL);
	ck_assert_uint_eq(tcr_counters_take_early(&c), 0);
}
END_TEST

START_TEST(mean_taken_over_window)
{
	ck_assert_uint_eq(tcr_counters_mean_taken(&c, 4), 0);	/* no period yet */
	tcr_counters_close_period(&c, 1, 10);
	ck_assert_uint_eq(tcr_counters_mean_taken(&c, 4), 10);	/* only one so far */
	tcr_counters_close_period(&c, 2, 20);
	tcr_counters_close_period(&c, 3, 30);
	ck_assert_uint_eq(tcr_counters_mean_taken(&c, 2), 25);
	ck_assert_uint_eq(tcr_counters_mean_taken(&c, 3), 20);
	for (uint64_t per = 4; per <= 20; per++)
		tcr_counters_close_period(&c, per, (uint32_t)per);
	/* Window of 8: periods 13..20 -> mean 16.5, rounded to 17. */
	ck_assert_uint_eq(tcr_counters_mean_taken(&c, 8), 17);
	ck_assert_uint_eq(tcr_counters_mean_taken(&c, 100), 17);	/* clamped to 8 */
	ck_assert_uint_eq(tcr_counters_mean_taken(&c, 0), 20);		/* at least 1 */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region_counters");
	TCase *tc = tcase_create("counters");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, cumulative_counters_and_snapshot);
	tcase_add_test(tc, snapshot_refuses_impossible_values);
	tcase_add_test(tc, early_end_flags);
	tcase_add_test(tc, mean_taken_over_window);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
