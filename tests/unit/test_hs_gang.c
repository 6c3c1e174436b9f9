// SPDX-License-Identifier: MIT
/* Algorithm 1: greedy gang placement. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hs_gang.h"

static struct hs_chain_cfg ch[4];
static struct hs_chain_quota q[4];
static double prio[4];
static struct hs_plan *plan;
static struct hs_gang_ws *ws;

/* A VNF with a given quota and thread count; vCPU ids chain*100+k*10+r. */
static void vnf(uint32_t i, uint32_t ticks, uint32_t threads)
{
	uint32_t k = ch[i].nvnf++, r;

	ch[i].vnf[k].max_threads = threads;
	ch[i].vnf[k].f_pps = 1;
	for (r = 0; r < threads; r++)
		ch[i].vnf[k].vcpu[r] = i * 100 + k * 10 + r;
	q[i].q[k].ticks = ticks;
	q[i].q[k].threads = threads;
	q[i].nvcpu += threads;
	q[i].ticks += (uint64_t)ticks * threads;
}

static void make(uint32_t npcpu, uint32_t g)
{
	memset(ch, 0, sizeof(ch));
	memset(q, 0, sizeof(q));
	memset(prio, 0, sizeof(prio));
	plan = hs_plan_create(npcpu, g, 64);
	ws = hs_gang_ws_create(4, npcpu);
	ck_assert_ptr_nonnull(plan);
	ck_assert_ptr_nonnull(ws);
	hs_plan_reset(plan);
}

static void teardown(void)
{
	hs_plan_destroy(plan);
	hs_gang_ws_destroy(ws);
	plan = NULL;
	ws = NULL;
}

/* Slot number @idx on @pcpu must be vCPU @vcpu with @ticks. */
static void expect(uint32_t pcpu, uint32_t idx, uint32_t vcpu, uint32_t ticks)
{
	uint32_t n;
	const struct hs_slot *s = hs_plan_slots(plan, pcpu, &n);

	ck_assert_uint_gt(n, idx);
	ck_assert_uint_eq(s[idx].vcpu, vcpu);
	ck_assert_uint_eq(s[idx].ticks, ticks);
	ck_assert_uint_eq(s[idx].kind, HS_KIND_VNF);
}

START_TEST(hand_worked)
{
	uint32_t n;

	/* m=3, g=50.  A (H=2): a1 q=20, a2 q=10.  B (H=1): b1 q=30.
	 * C (H=0): skipped. */
	make(3, 50);
	vnf(0, 20, 1);
	vnf(0, 10, 1);
	vnf(1, 30, 1);
	vnf(2, 5, 1);
	prio[0] = 2.0;
	prio[1] = 1.0;
	prio[2] = 0.0;
	/* Order: A, B.
	 * A: u = (0 + 30)/3 = 10.  a1: (20 + 0 - 10)^2 = 100 on every pCPU,
	 *    tie -> pCPU 0, u0 = 20.  a2 (not pCPU 0): (10 + 0 - 10)^2 = 0 on
	 *    1 and 2, tie -> pCPU 1, u1 = 10.
	 * B: u = (30 + 30)/3 = 20.  b1: p0 (30+20-20)^2 = 900,
	 *    p1 (30+10-20)^2 = 400, p2 (30+0-20)^2 = 100 -> pCPU 2. */
	ck_assert_int_eq(hs_gang_place(ch, q, prio, 3, ws, plan), 2);
	hs_plan_finish(plan);
	expect(0, 0, 0, 20);
	expect(1, 0, 10, 10);
	expect(2, 0, 100, 30);
	ck_assert_uint_eq(plan->nslot, 3);	/* nothing of C */
	ck_assert_uint_eq(plan->vnf_ticks[0], 20);
	ck_assert_uint_eq(plan->vnf_ticks[1], 10);
	ck_assert_uint_eq(plan->vnf_ticks[2], 30);
	hs_plan_slots(plan, 0, &n);
	ck_assert_uint_eq(n, 1);
	teardown();
}
END_TEST

START_TEST(priority_order_and_ties)
{
	/* m=2, g=50; three single-vCPU chains q=10 with H = 1, 3, 1.
	 * Order: chain 1 (H=3), then chains 0 and 2 (tie -> lower index).
	 * chain 1: u = 10/2 = 5; (10+0-5)^2 equal -> pCPU 0.
	 * chain 0: u = 20/2 = 10; p0 (10+10-10)^2=100, p1 (10+0-10)^2=0 -> p1.
	 * chain 2: u = 30/2 = 15; p0 (10+10-15)^2 = 25 = p1 -> tie -> p0.
	 * So pCPU 0 runs chain 1 then chain 2; pCPU 1 runs chain 0. */
	make(2, 50);
	vnf(0, 10, 1);
	vnf(1, 10, 1);
	vnf(2, 10, 1);
	prio[0] = 1.0;
	prio[1] = 3.0;
	prio[2] = 1.0;
	ck_assert_int_eq(hs_gang_place(ch, q, prio, 3, ws, plan), 3);
	hs_plan_finish(plan);
	expect(0, 0, 100, 10);
	expect(0, 1, 200, 10);
	expect(1, 0, 0, 10);
	ck_assert_uint_eq(hs_plan_slots(plan, 0, &(uint32_t){0})[1].start, 10);
	teardown();
}
END_TEST

START_TEST(gang_on_distinct_pcpus)
{
	uint32_t j, n, seen = 0;

	/* One chain with 2 VNFs x 2 threads = 4 vCPUs on 4 pCPUs: each pCPU
	 * gets exactly one, even though piling up would be "balanced" too. */
	make(4, 50);
	vnf(0, 5, 2);
	vnf(0, 5, 2);
	prio[0] = 1.0;
	ck_assert_int_eq(hs_gang_place(ch, q, prio, 1, ws, plan), 1);
	hs_plan_finish(plan);
	for (j = 0; j < 4; j++) {
		const struct hs_slot *s = hs_plan_slots(plan, j, &n);

		ck_assert_uint_eq(n, 1);
		ck_assert_uint_eq(s[0].chain, 0);
		seen |= 1u << (s[0].owner * 2 + s[0].vcpu % 10);
	}
	ck_assert_uint_eq(seen, 0xf);	/* all four threads placed */
	teardown();
}
END_TEST

START_TEST(chain_that_does_not_fit_is_deferred)
{
	uint32_t n;

	/* m=2, g=50.  X (H=2): one vCPU q=40 -> pCPU 0 (tie).  Y (H=1): two
	 * vCPUs q=20: first can only go to pCPU 1 (40+20 > 50), second has
	 * no pCPU left (1 used by Y, 0 full) -> Y undone, deferred. */
	make(2, 50);
	vnf(0, 40, 1);
	vnf(1, 20, 2);
	prio[0] = 2.0;
	prio[1] = 1.0;
	ck_assert_int_eq(hs_gang_place(ch, q, prio, 2, ws, plan), 1);
	hs_plan_finish(plan);
	ck_assert_uint_eq(plan->ndeferred, 1);
	ck_assert_uint_eq(plan->nslot, 1);
	expect(0, 0, 0, 40);
	hs_plan_slots(plan, 1, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(plan->vnf_ticks[1], 0);
	teardown();
}
END_TEST

START_TEST(deterministic)
{
	struct hs_slot a[64];
	uint32_t na, i;

	make(3, 50);
	vnf(0, 7, 2);
	vnf(1, 11, 3);
	vnf(2, 13, 1);
	prio[0] = prio[1] = prio[2] = 0.5;
	ck_assert_int_eq(hs_gang_place(ch, q, prio, 3, ws, plan), 3);
	hs_plan_finish(plan);
	na = plan->nslot;
	memcpy(a, plan->slot, na * sizeof(a[0]));
	for (i = 0; i < 5; i++) {
		hs_plan_reset(plan);
		ck_assert_int_eq(hs_gang_place(ch, q, prio, 3, ws, plan), 3);
		hs_plan_finish(plan);
		ck_assert_uint_eq(plan->nslot, na);
		ck_assert(memcmp(a, plan->slot, na * sizeof(a[0])) == 0);
	}
	teardown();
}
END_TEST

START_TEST(bad_args)
{
	make(2, 50);
	ck_assert_int_eq(hs_gang_place(ch, q, prio, 5, ws, plan), -EINVAL);
	ck_assert_int_eq(hs_gang_place(ch, q, NULL, 1, ws, plan), -EINVAL);
	teardown();
	/* plan too small: -ENOSPC and nothing left half-placed */
	memset(ch, 0, sizeof(ch));
	memset(q, 0, sizeof(q));
	plan = hs_plan_create(4, 50, 2);
	ws = hs_gang_ws_create(1, 4);
	hs_plan_reset(plan);
	vnf(0, 5, 3);
	prio[0] = 1.0;
	ck_assert_int_eq(hs_gang_place(ch, q, prio, 1, ws, plan), -ENOSPC);
	ck_assert_uint_eq(plan->nslot, 0);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_gang");
	TCase *tc = tcase_create("alg1");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, hand_worked);
	tcase_add_test(tc, priority_order_and_ties);
	tcase_add_test(tc, gang_on_distinct_pcpus);
	tcase_add_test(tc, chain_that_does_not_fit_is_deferred);
	tcase_add_test(tc, deterministic);
	tcase_add_test(tc, bad_args);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
