// SPDX-License-Identifier: MIT
/* The CFS model used as the TOChain-CFS baseline. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "hs_cfs.h"

START_TEST(fair_share)
{
	struct hs_cfs_vcpu v[5];
	uint32_t scratch[5], i, n;
	struct hs_plan *p = hs_plan_create(2, 10, 8);
	const struct hs_slot *s;

	for (i = 0; i < 5; i++)
		v[i] = (struct hs_cfs_vcpu){ .vcpu = i, .chain = HS_NO_CHAIN,
					     .owner = i, .kind = HS_KIND_VM,
					     .runnable = 1 };
	ck_assert_int_eq(hs_cfs_place(v, NULL, 5, 2, NULL, NULL), 0);
	/* by count: p0 gets 0, 2, 4; p1 gets 1, 3 */
	ck_assert_uint_eq(v[4].pcpu, 0);
	ck_assert_uint_eq(v[3].pcpu, 1);
	v[4].runnable = 0;
	v[0].vruntime = 5;
	v[2].vruntime = 3;
	/* p0: runnable 0 (vrt 5) and 2 (vrt 3): 2 first; 10/2 = 5 each.
	 * p1: 1 and 3 (vrt 0, 0): by id; 5 each.  vCPU 4 not runnable. */
	ck_assert_int_eq(hs_cfs_plan(v, 5, scratch, p), 4);
	s = hs_plan_slots(p, 0, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(s[0].vcpu, 2);
	ck_assert_uint_eq(s[0].ticks, 5);
	ck_assert_uint_eq(s[1].vcpu, 0);
	ck_assert_uint_eq(s[1].start, 5);
	s = hs_plan_slots(p, 1, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(s[0].vcpu, 1);
	hs_plan_destroy(p);

	/* g = 7 over 2 runnable: 4 to the one that ran least, then 3 */
	p = hs_plan_create(2, 7, 8);
	v[3].vruntime = 1;
	ck_assert_int_eq(hs_cfs_plan(v, 5, scratch, p), 4);
	s = hs_plan_slots(p, 1, &n);
	ck_assert_uint_eq(s[0].vcpu, 1);
	ck_assert_uint_eq(s[0].ticks, 4);
	ck_assert_uint_eq(s[1].vcpu, 3);
	ck_assert_uint_eq(s[1].ticks, 3);
	hs_plan_destroy(p);
}
END_TEST

START_TEST(no_quota_for_vnfs)
{
	/* A VNF vCPU gets the same share as a VM vCPU: no SLA reserve. */
	struct hs_cfs_vcpu v[4];
	uint32_t scratch[4], i, n;
	struct hs_plan *p = hs_plan_create(1, 12, 8);
	const struct hs_slot *s;

	for (i = 0; i < 4; i++)
		v[i] = (struct hs_cfs_vcpu){ .vcpu = i, .chain = i ? HS_NO_CHAIN : 0,
					     .kind = i ? HS_KIND_VM : HS_KIND_VNF,
					     .runnable = 1 };
	ck_assert_int_eq(hs_cfs_place(v, NULL, 4, 1, NULL, NULL), 0);
	ck_assert_int_eq(hs_cfs_plan(v, 4, scratch, p), 4);
	s = hs_plan_slots(p, 0, &n);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(s[i].ticks, 3);
	/* nothing runnable: empty plan */
	for (i = 0; i < 4; i++)
		v[i].runnable = 0;
	ck_assert_int_eq(hs_cfs_plan(v, 4, scratch, p), 0);
	/* bad home pCPU */
	v[0].pcpu = 3;
	ck_assert_int_eq(hs_cfs_plan(v, 4, scratch, p), -EINVAL);
	ck_assert_int_eq(hs_cfs_place(v, NULL, 4, 0, NULL, NULL), -EINVAL);
	hs_plan_destroy(p);
}
END_TEST

START_TEST(place_by_load)
{
	/* loads 0.6, 0.5, 0.4, 0.3, 0.2 on 2 pCPUs, heaviest first onto the
	 * least loaded: 0.6 -> p0; 0.5 -> p1; 0.4 -> p1 (0.5 < 0.6);
	 * 0.3 -> p0 (0.6 < 0.9); 0.2 -> p0 (0.9 = 0.9, tie -> p0).
	 * p0 = 0.6+0.3+0.2 = 1.1, p1 = 0.9 (count-based would give 1.2/0.8). */
	struct hs_cfs_vcpu v[5];
	double load[5] = { 0.3, 0.6, 0.2, 0.5, 0.4 }, pl[2];
	uint32_t scratch[5], i;

	for (i = 0; i < 5; i++)
		v[i] = (struct hs_cfs_vcpu){ .vcpu = i };
	ck_assert_int_eq(hs_cfs_place(v, load, 5, 2, scratch, pl), 0);
	ck_assert_uint_eq(v[1].pcpu, 0);
	ck_assert_uint_eq(v[3].pcpu, 1);
	ck_assert_uint_eq(v[4].pcpu, 1);
	ck_assert_uint_eq(v[0].pcpu, 0);
	ck_assert_uint_eq(v[2].pcpu, 0);
	ck_assert_double_eq_tol(pl[0], 1.1, 1e-12);
	ck_assert_double_eq_tol(pl[1], 0.9, 1e-12);
	load[2] = -1;
	ck_assert_int_eq(hs_cfs_place(v, load, 5, 2, scratch, pl), -EINVAL);
	ck_assert_int_eq(hs_cfs_place(v, load, 5, 2, NULL, pl), -EINVAL);
}
END_TEST

START_TEST(water_filling)
{
	/* one pCPU, demands 0.1, 0.5, 0.8: equal split would be 1/3 each;
	 * 0.1 keeps 0.1, the other two split 0.9 -> 0.45 each.
	 * Second pCPU: demands 0.2 + 0.3 fit: each gets what it wants.
	 * NaN and negative demands get 0; a demand over 1 counts as 1. */
	struct hs_cfs_vcpu v[7];
	double d[7] = { 0.5, 0.1, 0.8, 0.2, 0.3, NAN, -4 }, sh[7];
	uint32_t scratch[7], i;

	for (i = 0; i < 7; i++)
		v[i] = (struct hs_cfs_vcpu){ .vcpu = i, .pcpu = i < 3 ? 0 : 1 };
	ck_assert_int_eq(hs_cfs_fair(v, d, 7, 2, sh, scratch), 0);
	ck_assert_double_eq_tol(sh[1], 0.1, 1e-12);
	ck_assert_double_eq_tol(sh[0], 0.45, 1e-12);
	ck_assert_double_eq_tol(sh[2], 0.45, 1e-12);
	ck_assert_double_eq_tol(sh[3], 0.2, 1e-12);
	ck_assert_double_eq_tol(sh[4], 0.3, 1e-12);
	ck_assert(sh[5] == 0.0);
	ck_assert(sh[6] == 0.0);
	/* over-demand: two vCPUs wanting 5.0 and 1.0 on one pCPU: 0.5 each */
	d[0] = 5.0;
	d[1] = 1.0;
	v[2].pcpu = 1;
	ck_assert_int_eq(hs_cfs_fair(v, d, 2, 2, sh, scratch), 0);
	ck_assert_double_eq_tol(sh[0], 0.5, 1e-12);
	ck_assert_double_eq_tol(sh[1], 0.5, 1e-12);
	v[0].pcpu = 2;
	ck_assert_int_eq(hs_cfs_fair(v, d, 2, 2, sh, scratch), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_cfs");
	TCase *tc = tcase_create("cfs");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, fair_share);
	tcase_add_test(tc, no_quota_for_vnfs);
	tcase_add_test(tc, place_by_load);
	tcase_add_test(tc, water_filling);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
