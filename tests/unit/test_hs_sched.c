// SPDX-License-Identifier: MIT
/* The per-period driver: eq. 1 + Algorithm 1 + Algorithm 2 together. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hs_sched.h"
#include "hs_vmshare.h"

static struct hs_chain_cfg ch[2];
static struct hs_vm_cfg vm[2];
static struct hs_sched_cfg cfg;

static void setup(void)
{
	memset(ch, 0, sizeof(ch));
	memset(vm, 0, sizeof(vm));
	/* a: 1000 pkt/s through snort (f=5000): ceil(1000*50/5000) = 10 ticks */
	ch[0] = (struct hs_chain_cfg){ .name = "a", .sla_pps = 1000, .vm = 0,
				       .nvnf = 1 };
	ch[0].vnf[0] = (struct hs_vnf_cfg){ .name = "snort", .f_pps = 5000,
					    .max_threads = 1, .vcpu = { 1 } };
	/* b: 2000 pkt/s through waf (f=4000): ceil(100000/4000) = 25 ticks */
	ch[1] = (struct hs_chain_cfg){ .name = "b", .sla_pps = 2000, .vm = 1,
				       .nvnf = 1 };
	ch[1].vnf[0] = (struct hs_vnf_cfg){ .name = "waf", .f_pps = 4000,
					    .max_threads = 1, .vcpu = { 2 } };
	vm[0] = (struct hs_vm_cfg){ .name = "vm0", .nvcpu = 2, .vcpu = { 100, 101 } };
	vm[1] = (struct hs_vm_cfg){ .name = "vm1", .nvcpu = 2, .vcpu = { 110, 111 } };
	cfg = (struct hs_sched_cfg){ .npcpu = 2, .g = 50, .period_s = 0.5,
				     .nchain = 2, .chains = ch, .nvm = 2, .vms = vm };
}

static void expect(const struct hs_plan *p, uint32_t pcpu, uint32_t idx,
		   uint32_t vcpu, uint32_t start, uint32_t ticks)
{
	uint32_t n;
	const struct hs_slot *s = hs_plan_slots(p, pcpu, &n);

	ck_assert_uint_gt(n, idx);
	ck_assert_uint_eq(s[idx].vcpu, vcpu);
	ck_assert_uint_eq(s[idx].start, start);
	ck_assert_uint_eq(s[idx].ticks, ticks);
}

START_TEST(one_period)
{
	char why[128];
	struct hs_sched *s = hs_sched_create(&cfg, why, sizeof(why));
	struct hs_plan *p;
	struct hs_chain_stats st[2] = {
		{ .in = 500, .finished = 400, .left = 100, .oq_head_ts = 50 },
		{ .in = 1000, .finished = 1000, .left = 200, .oq_head_ts = 20 },
	};
	uint32_t n;

	ck_assert_ptr_nonnull(s);
	/* RQ_vm: 100 -> p0, 101 -> p1, 110 -> p0, 111 -> p1 */
	ck_assert_uint_eq(hs_sched_plan_cap(s), 6);
	p = hs_plan_create(2, 50, hs_sched_plan_cap(s));
	/* T per period: a 1000*0.5 = 500, b 2000*0.5 = 1000.
	 * H_a = (500 + 500*100) / (400 + 500^2) = 50500/250400 = 0.2017
	 * H_b = (1000 + 1000*200) / (1000 + 1000^2) = 201000/1001000 = 0.2008
	 * a first: u = 10/2; both pCPUs (10 + 0 - 5)^2 -> p0.
	 * b: u = 35/2 = 17.5; p0 (25+10-17.5)^2 = 306.25, p1 (25-17.5)^2 =
	 * 56.25 -> p1.
	 * Alg 2, p0: 40 ticks over {100 (vm0, head 50), 110 (vm1, head 20)}
	 * -> 110 first, 20 + 20.  p1: 25 ticks over {101, 111} -> 111 gets
	 * 13, 101 gets 12. */
	ck_assert_int_eq(hs_sched_plan(s, st, p), 2);
	ck_assert_double_eq_tol(hs_sched_prio(s, 0), 50500.0 / 250400.0, 1e-12);
	ck_assert_double_eq_tol(hs_sched_prio(s, 1), 201000.0 / 1001000.0, 1e-12);
	expect(p, 0, 0, 1, 0, 10);
	expect(p, 0, 1, 110, 10, 20);
	expect(p, 0, 2, 100, 30, 20);
	expect(p, 1, 0, 2, 0, 25);
	expect(p, 1, 1, 111, 25, 13);
	expect(p, 1, 2, 101, 38, 12);
	ck_assert_uint_eq(hs_sched_quota(s, 1)->q[0].ticks, 25);
	ck_assert_ptr_null(hs_sched_quota(s, 2));

	/* b drained its input queue: H_b = 0, not run; p1 all VM time:
	 * 50 over 2 = 25 + 25; with vm1's output queue empty, 101 first. */
	st[1].left = 0;
	st[1].oq_head_ts = HS_TS_EMPTY;
	ck_assert_int_eq(hs_sched_plan(s, st, p), 1);
	ck_assert(hs_sched_prio(s, 1) == 0.0);
	hs_plan_slots(p, 1, &n);
	ck_assert_uint_eq(n, 2);
	expect(p, 1, 0, 101, 0, 25);
	expect(p, 1, 1, 111, 25, 25);
	ck_assert_uint_eq(hs_sched_rebalance(s), 0);
	/* a plan of the wrong shape is refused */
	hs_plan_destroy(p);
	p = hs_plan_create(3, 50, 8);
	ck_assert_int_eq(hs_sched_plan(s, st, p), -EINVAL);
	hs_plan_destroy(p);
	p = hs_plan_create(2, 50, 2);
	ck_assert_int_eq(hs_sched_plan(s, st, p), -ENOSPC);
	hs_plan_destroy(p);
	hs_sched_destroy(s);
}
END_TEST

START_TEST(refused)
{
	char why[128];

	ch[1].sla_pps = 4000;	/* waf 4000 >= 4000 * 1 thread */
	ck_assert_ptr_null(hs_sched_create(&cfg, why, sizeof(why)));
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_ptr_nonnull(strstr(why, "chain b, VNF waf"));
	ch[1].sla_pps = 2000;
	ch[1].vm = 5;
	ck_assert_ptr_null(hs_sched_create(&cfg, why, sizeof(why)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "chain b"));
	ck_assert_ptr_null(hs_sched_create(NULL, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(place_idle_chains_last)
{
	struct hs_sched *s;
	struct hs_plan *p;
	struct hs_chain_stats st[2] = {
		{ .in = 500, .finished = 400, .left = 100, .oq_head_ts = 50 },
		{ .in = 1000, .finished = 1000, .left = 0, .oq_head_ts = HS_TS_EMPTY },
	};
	uint32_t n;

	/* b's queue was empty at the boundary: H_b = 0.  With place_idle it
	 * still gets its 25 ticks, after a (which is placed first). */
	cfg.place_idle = true;
	s = hs_sched_create(&cfg, NULL, 0);
	ck_assert_ptr_nonnull(s);
	p = hs_plan_create(2, 50, hs_sched_plan_cap(s));
	ck_assert_int_eq(hs_sched_plan(s, st, p), 2);
	ck_assert(hs_sched_prio(s, 1) == 0.0);
	expect(p, 0, 0, 1, 0, 10);
	hs_plan_slots(p, 1, &n);
	expect(p, 1, 0, 2, 0, 25);
	/* both idle: both placed, in index order */
	st[0].left = 0;
	ck_assert_int_eq(hs_sched_plan(s, st, p), 2);
	expect(p, 0, 0, 1, 0, 10);
	expect(p, 1, 0, 2, 0, 25);
	hs_plan_destroy(p);
	hs_sched_destroy(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_sched");
	TCase *tc = tcase_create("sched");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, one_period);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, place_idle_chains_last);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
