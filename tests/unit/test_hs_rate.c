// SPDX-License-Identifier: MIT
/* The quota feedback: a VNF's measured rate (hs_rate) and the quotas
 * hs_sched_plan() derives from it. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hs_rate.h"
#include "hs_sched.h"
#include "hs_vmshare.h"

START_TEST(rate_starts_calibrated)
{
	struct hs_rate r;

	hs_rate_init(&r, 800);
	ck_assert_uint_eq(r.samples, 0);
	ck_assert_double_eq_tol(hs_rate_f(&r), 800.0, 1e-9);
	/* eq. 2 plus headroom: ceil(200*50*1.2/800) = 15 */
	ck_assert_uint_eq(hs_rate_ticks(&r, 200, 50, 1), 15);
	ck_assert_uint_eq(hs_rate_ticks(&r, 0, 50, 1), 0);
	/* two threads split it: ceil(7.5) = 8 */
	ck_assert_uint_eq(hs_rate_ticks(&r, 200, 50, 2), 8);
	/* never above C, never 0 for t > 0 */
	ck_assert_uint_eq(hs_rate_ticks(&r, 100000, 50, 1), 50);
	ck_assert_uint_eq(hs_rate_ticks(&r, 1, 50, 1), 1);
	hs_rate_init(&r, 0);			/* taken as 1 pkt/s, no division by 0 */
	ck_assert_double_eq_tol(hs_rate_f(&r), 1.0, 1e-9);
}
END_TEST

START_TEST(rate_follows_measurements)
{
	struct hs_rate r;

	hs_rate_init(&r, 800);
	/* too few packets: no sample */
	ck_assert(!hs_rate_update(&r, HS_RATE_MIN_PKTS - 1, 0.1));
	ck_assert(!hs_rate_update(&r, 100, 0.0));
	ck_assert_uint_eq(r.samples, 0);
	/* 100 packets in 0.2 s busy: 2 ms each, f^ = 500; the first sample
	 * replaces the calibration */
	ck_assert(hs_rate_update(&r, 100, 0.2));
	ck_assert_uint_eq(r.samples, 1);
	ck_assert_double_eq_tol(hs_rate_f(&r), 500.0, 1e-6);
	/* ceil(200*50*1.2*0.002) = 24 */
	ck_assert_uint_eq(hs_rate_ticks(&r, 200, 50, 1), 24);
	/* then an exponential mean of the cost: 1 ms -> (2+1)/2 = 1.5 ms */
	ck_assert(hs_rate_update(&r, 100, 0.1));
	ck_assert_double_eq_tol(r.cost_s, 0.0015, 1e-12);
}
END_TEST

START_TEST(rate_bounded_by_calibration)
{
	struct hs_rate r;

	/* counters a guest can write: the estimate stays within 8x of f */
	hs_rate_init(&r, 800);
	ck_assert(hs_rate_update(&r, 4, 100.0));
	ck_assert_double_eq_tol(hs_rate_f(&r), 100.0, 1e-6);
	hs_rate_init(&r, 800);
	ck_assert(hs_rate_update(&r, 1000000, 0.001));
	ck_assert_double_eq_tol(hs_rate_f(&r), 6400.0, 1e-6);
}
END_TEST

/* One chain a -> (ids || waf), SLA 200, g = 50, like eval's tochain-sync. */
static struct hs_chain_cfg ch[3];
static struct hs_vm_cfg vm[1];
static struct hs_sched_cfg cfg;

static void setup(void)
{
	memset(ch, 0, sizeof(ch));
	memset(vm, 0, sizeof(vm));
	ch[0] = (struct hs_chain_cfg){ .name = "a", .sla_pps = 200, .vm = 0, .nvnf = 2 };
	/* ids: ceil(200*50/10000) = 1 tick; waf: ceil(10000/770) = 13 */
	ch[0].vnf[0] = (struct hs_vnf_cfg){ .name = "ids", .f_pps = 10000,
					    .max_threads = 1, .vcpu = { 1 } };
	ch[0].vnf[1] = (struct hs_vnf_cfg){ .name = "waf", .f_pps = 770,
					    .max_threads = 1, .vcpu = { 2 } };
	vm[0] = (struct hs_vm_cfg){ .name = "vm0", .nvcpu = 1, .vcpu = { 100 } };
	cfg = (struct hs_sched_cfg){ .npcpu = 2, .g = 50, .period_s = 0.5,
				     .nchain = 1, .chains = ch, .nvm = 1, .vms = vm };
}

static uint32_t planned_ticks(const struct hs_plan *p, uint32_t vcpu)
{
	uint32_t n, t = 0;

	for (uint32_t j = 0; j < p->npcpu; j++) {
		const struct hs_slot *s = hs_plan_slots(p, j, &n);

		for (uint32_t i = 0; i < n; i++)
			if (s[i].vcpu == vcpu)
				t += s[i].ticks;
	}
	return t;
}

START_TEST(plan_without_measurement_is_eq2)
{
	struct hs_sched *s = hs_sched_create(&cfg, NULL, 0);
	struct hs_plan *p;
	struct hs_chain_stats st = { .in = 100, .finished = 50, .left = 50,
				     .oq_head_ts = HS_TS_EMPTY };

	ck_assert_ptr_nonnull(s);
	p = hs_plan_create(2, 50, hs_sched_plan_cap(s));
	ck_assert_int_eq(hs_sched_plan(s, &st, p), 1);
	ck_assert_uint_eq(planned_ticks(p, 1), 1);
	ck_assert_uint_eq(planned_ticks(p, 2), 13);
	hs_plan_destroy(p);
	hs_sched_destroy(s);
}
END_TEST

START_TEST(plan_follows_the_measured_cost)
{
	struct hs_sched *s = hs_sched_create(&cfg, NULL, 0);
	struct hs_plan *p;
	/* The state issue 15 measured: waf got its 13 ticks (0.13 s busy)
	 * and finished 65 requests, 2 ms each; ids was busy 13 ms. */
	struct hs_chain_stats st = { .in = 100, .finished = 65, .left = 35,
				     .oq_head_ts = HS_TS_EMPTY, .served = 65,
				     .busy_s = { 0.013, 0.130 } };

	ck_assert_ptr_nonnull(s);
	p = hs_plan_create(2, 50, hs_sched_plan_cap(s));
	ck_assert_int_eq(hs_sched_plan(s, &st, p), 1);
	/* waf: ceil(200*50*1.2*0.002) = 24; ids: ceil(200*50*1.2*0.0002) = 3 */
	ck_assert_uint_eq(planned_ticks(p, 2), 24);
	ck_assert_uint_eq(planned_ticks(p, 1), 3);
	ck_assert_uint_eq(hs_sched_quota(s, 0)->q[1].ticks, 24);
	ck_assert_uint_eq(hs_sched_quota(s, 0)->ticks, 27);
	ck_assert_double_eq_tol(hs_rate_f(hs_sched_rate(s, 0, 1)), 500.0, 1e-6);
	/* the VM's one vCPU (RQ_vm of pCPU 0) gets what ids leaves there */
	ck_assert_uint_eq(planned_ticks(p, 100), 47);
	/* a period without measurement keeps the learnt rate */
	st.busy_s[0] = st.busy_s[1] = 0;
	ck_assert_int_eq(hs_sched_plan(s, &st, p), 1);
	ck_assert_uint_eq(planned_ticks(p, 2), 24);
	hs_plan_destroy(p);
	hs_sched_destroy(s);
}
END_TEST

START_TEST(plan_scales_down_to_the_partition)
{
	struct hs_sched *s;
	struct hs_plan *p;
	struct hs_chain_stats st[3];

	/* three chains whose measured need (3 x 45 ticks) is more than 80 % of
	 * the partition (80 ticks): each gets the same share, none starves */
	for (int i = 0; i < 3; i++) {
		ch[i] = (struct hs_chain_cfg){ .name = "c", .sla_pps = 100, .vm = 0, .nvnf = 1 };
		ch[i].vnf[0] = (struct hs_vnf_cfg){ .name = "waf", .f_pps = 1000,
						    .max_threads = 1, .vcpu = { 1 + i } };
		st[i] = (struct hs_chain_stats){ .in = 50, .finished = 50, .left = 10,
						 .oq_head_ts = HS_TS_EMPTY, .served = 50,
						 .busy_s = { 0.4 } };
	}
	cfg.nchain = 3;
	s = hs_sched_create(&cfg, NULL, 0);
	ck_assert_ptr_nonnull(s);
	p = hs_plan_create(2, 50, hs_sched_plan_cap(s));
	/* need: ceil(100*50*1.2*0.008) = 48 each, 144 > 80: x 80/144 -> 26 */
	hs_sched_plan(s, st, p);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(hs_sched_quota(s, i)->q[0].ticks, 26);
	hs_plan_destroy(p);
	hs_sched_destroy(s);
}
END_TEST

START_TEST(rate_carried_over)
{
	struct hs_sched *a = hs_sched_create(&cfg, NULL, 0), *b = hs_sched_create(&cfg, NULL, 0);
	struct hs_rate r;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	r = *hs_sched_rate(a, 0, 1);
	ck_assert(hs_rate_update(&r, 100, 0.2));
	ck_assert_int_eq(hs_sched_set_rate(b, 0, 1, &r), 0);
	ck_assert_double_eq_tol(hs_rate_f(hs_sched_rate(b, 0, 1)), 500.0, 1e-6);
	/* another calibration (the VNF changed): refused, nothing changes */
	hs_rate_init(&r, 900);
	ck_assert_int_eq(hs_sched_set_rate(b, 0, 1, &r), -EINVAL);
	ck_assert_int_eq(hs_sched_set_rate(b, 0, 2, &r), -EINVAL);
	ck_assert_int_eq(hs_sched_set_rate(b, 1, 0, &r), -EINVAL);
	ck_assert_ptr_null(hs_sched_rate(b, 0, 2));
	ck_assert_double_eq_tol(hs_rate_f(hs_sched_rate(b, 0, 1)), 500.0, 1e-6);
	hs_sched_destroy(a);
	hs_sched_destroy(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_rate");
	TCase *tc = tcase_create("rate");
	TCase *tp = tcase_create("plan");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, rate_starts_calibrated);
	tcase_add_test(tc, rate_follows_measurements);
	tcase_add_test(tc, rate_bounded_by_calibration);
	tcase_add_checked_fixture(tp, setup, NULL);
	tcase_add_test(tp, plan_without_measurement_is_eq2);
	tcase_add_test(tp, plan_follows_the_measured_cost);
	tcase_add_test(tp, plan_scales_down_to_the_partition);
	tcase_add_test(tp, rate_carried_over);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tp);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
