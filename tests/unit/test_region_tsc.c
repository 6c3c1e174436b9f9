// SPDX-License-Identifier: MIT
/* Unit tests for lib/region/tsc.c: conversion and calibration. */
#include <time.h>

#include <tochain/tsc.h>
#include "tc_check.h"

START_TEST(conversion_from_hz)
{
	struct tcr_tsc_cal c;

	tcr_tsc_cal_from_hz(&c, 1000000000ull);
	ck_assert_uint_eq(tcr_tsc_to_ns(&c, 123456789ull), 123456789ull);
	tcr_tsc_cal_from_hz(&c, 2500000000ull);
	/* mult is rounded down: within a nanosecond per second. */
	ck_assert_uint_le(1000000000ull - tcr_tsc_to_ns(&c, 2500000000ull), 1);
	/* Large values do not overflow: one day of ticks at 3 GHz. */
	tcr_tsc_cal_from_hz(&c, 3000000000ull);
	ck_assert_uint_le(86400000000000ull - tcr_tsc_to_ns(&c, 3000000000ull * 86400), 100000);
	tcr_tsc_cal_from_hz(&c, 100);	/* a slow clock: mult stays in 32 bits */
	ck_assert_uint_eq(tcr_tsc_to_ns(&c, 1), 10000000ull);
}
END_TEST

START_TEST(calibration_tracks_the_clock)
{
	const struct tcr_tsc_cal *c = tcr_tsc_calibration();
	struct timespec a, b, d = { 0, 50000000 };
	uint64_t t0, t1, ns, tsc_ns;

	ck_assert_ptr_eq(c, tcr_tsc_calibration());
	ck_assert_uint_gt(c->hz, 0);
	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	t0 = tcr_tsc_now();
	nanosleep(&d, NULL);
	t1 = tcr_tsc_now();
	clock_gettime(CLOCK_MONOTONIC_RAW, &b);
	ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull + (uint64_t)(b.tv_nsec - a.tv_nsec);
	tsc_ns = tcr_tsc_to_ns(c, t1 - t0);
	/* Within 5% (a generous bound for a shared machine). */
	ck_assert_uint_lt(tsc_ns, ns + ns / 20);
	ck_assert_uint_gt(tsc_ns, ns - ns / 20 - 100000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region_tsc");
	TCase *tc = tcase_create("tsc");

	tcase_add_test(tc, conversion_from_hz);
	tcase_add_test(tc, calibration_tracks_the_clock);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
