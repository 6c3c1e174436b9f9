// SPDX-License-Identifier: MIT
/*
 * vnfs/ids detection_filter counters (ids_dfilter.c), with the time given:
 * the count, the window, separate rules and addresses, the bounded table.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ids_dfilter.h"
#include "tc_check.h"

static void addr_of(uint8_t a[16], uint32_t n)
{
	memset(a, 0, 16);
	memcpy(a + 12, &n, 4);
}

START_TEST(count_and_window)
{
	struct ids_dftab *t = ids_dftab_create();
	uint8_t a[16];

	ck_assert_ptr_nonnull(t);
	addr_of(a, 1);
	/* count 2 in 10 s: the third match within the window reports */
	ck_assert(!ids_dftab_hit(t, 7, a, 2, 10, 100));
	ck_assert(!ids_dftab_hit(t, 7, a, 2, 10, 101));
	ck_assert(ids_dftab_hit(t, 7, a, 2, 10, 109));
	ck_assert(ids_dftab_hit(t, 7, a, 2, 10, 109));
	/* 10 s after the window opened: a new window, counting from one */
	ck_assert(!ids_dftab_hit(t, 7, a, 2, 10, 110));
	ck_assert(!ids_dftab_hit(t, 7, a, 2, 10, 111));
	ck_assert(ids_dftab_hit(t, 7, a, 2, 10, 112));
	ids_dftab_destroy(t);
}
END_TEST

START_TEST(separate_keys)
{
	struct ids_dftab *t = ids_dftab_create();
	uint8_t a[16], b[16];

	addr_of(a, 1);
	addr_of(b, 2);
	ck_assert(!ids_dftab_hit(t, 7, a, 1, 60, 0));
	ck_assert(!ids_dftab_hit(t, 8, a, 1, 60, 0));	/* other rule */
	ck_assert(!ids_dftab_hit(t, 7, b, 1, 60, 0));	/* other address */
	ck_assert(ids_dftab_hit(t, 7, a, 1, 60, 0));
	ck_assert(ids_dftab_hit(t, 8, a, 1, 60, 0));
	ck_assert(ids_dftab_hit(t, 7, b, 1, 60, 0));
	ids_dftab_destroy(t);
}
END_TEST

/* Many more addresses than slots: bounded, and never reports early. */
START_TEST(bounded_never_early)
{
	struct ids_dftab *t = ids_dftab_create();
	uint8_t a[16];

	for (uint32_t n = 0; n < 4 * IDS_DF_SLOTS; n++) {
		addr_of(a, n);
		ck_assert(!ids_dftab_hit(t, 1, a, 1, 60, n / 100));
	}
	/* a counter evicted by the flood starts over: still not early */
	addr_of(a, 0);
	ck_assert(!ids_dftab_hit(t, 1, a, 1, 60, 200));
	ck_assert(ids_dftab_hit(t, 1, a, 1, 60, 200));
	ids_dftab_destroy(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ids_dfilter");
	TCase *tc = tcase_create("dfilter");

	tcase_add_test(tc, count_and_window);
	tcase_add_test(tc, separate_keys);
	tcase_add_test(tc, bounded_never_early);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tc_run_suite(suite());
}
