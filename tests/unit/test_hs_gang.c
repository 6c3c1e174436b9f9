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
	ws = hs_gang_ws_create(4, npcpu, g);
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
	ws = hs_gang_ws_create(1, 4, 50);
	hs_plan_reset(plan);
	vnf(0, 5, 3);
	prio[0] = 1.0;
	ck_assert_int_eq(hs_gang_place(ch, q, prio, 1, ws, plan), -ENOSPC);
	ck_assert_uint_eq(plan->nslot, 0);
	teardown();
}
END_TEST

/*
 * Reference: Algorithm 1 written the obvious way (linear scan over pCPUs,
 * (q + u_j - u)^2 in exact integers scaled by m^2, capacity guard and
 * rollback as documented).  The library uses load buckets instead; both
 * must choose the same pCPUs on random instances.
 */
struct ref_slot {
	uint32_t pcpu, vcpu, ticks;
};

static uint32_t ref_place(const struct hs_chain_cfg *c, const struct hs_chain_quota *cq,
			  const double *h, uint32_t n, uint32_t m, uint32_t g,
			  struct ref_slot *out, uint32_t *deferred)
{
	uint32_t order[64], i, o, k, r, j, ns = 0;
	uint64_t u[128] = { 0 }, total = 0;

	for (i = 0; i < n; i++)
		order[i] = i;
	/* insertion sort, priority descending, index ascending (stable) */
	for (i = 1; i < n; i++) {
		uint32_t x = order[i], e = i;

		while (e > 0 && h[order[e - 1]] < h[x]) {
			order[e] = order[e - 1];
			e--;
		}
		order[e] = x;
	}
	*deferred = 0;
	for (o = 0; o < n; o++) {
		uint32_t ci = order[o], from = ns;
		int used[128] = { 0 }, fits = 1;
		int64_t U;

		if (!(h[ci] > 0) || cq[ci].nvcpu == 0)
			continue;
		U = (int64_t)(total + cq[ci].ticks);
		for (k = 0; k < c[ci].nvnf && fits; k++) {
			for (r = 0; r < cq[ci].q[k].threads && fits; r++) {
				int64_t qt = cq[ci].q[k].ticks, best = -1;
				uint32_t s = m;

				for (j = 0; j < m; j++) {
					int64_t d;

					if (used[j] || u[j] + qt > g)
						continue;
					d = (int64_t)m * (qt + (int64_t)u[j]) - U;
					if (best < 0 || d * d < best) {
						best = d * d;
						s = j;
					}
				}
				if (s == m) {
					fits = 0;
					break;
				}
				used[s] = 1;
				u[s] += qt;
				out[ns++] = (struct ref_slot){ s, c[ci].vnf[k].vcpu[r], (uint32_t)qt };
			}
		}
		if (!fits) {
			while (ns > from) {
				ns--;
				u[out[ns].pcpu] -= out[ns].ticks;
			}
			(*deferred)++;
			continue;
		}
		total += cq[ci].ticks;
	}
	return ns;
}

static uint32_t rnd_state = 12345;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

START_TEST(matches_reference)
{
	static struct hs_chain_cfg c[64];
	static struct hs_chain_quota cq[64];
	static struct ref_slot ref[64 * 16];
	double h[64];
	uint32_t iter;

	for (iter = 0; iter < 400; iter++) {
		uint32_t m = 1 + rnd(iter % 4 ? 20 : 128), g = 1 + rnd(60);
		uint32_t n = 1 + rnd(40), i, k, r, j, nref, dref, pos = 0;
		struct hs_plan *p = hs_plan_create(m, g, 64 * 16);
		struct hs_gang_ws *w = hs_gang_ws_create(n, m, g);

		memset(c, 0, sizeof(c));
		memset(cq, 0, sizeof(cq));
		for (i = 0; i < n; i++) {
			c[i].nvnf = 1 + rnd(4);
			h[i] = rnd(4) == 0 ? 0.0 : (double)rnd(5) / 4.0;
			for (k = 0; k < c[i].nvnf; k++) {
				cq[i].q[k].threads = 1 + rnd(3);
				cq[i].q[k].ticks = 1 + rnd(g);
				for (r = 0; r < cq[i].q[k].threads; r++)
					c[i].vnf[k].vcpu[r] = i * 100 + k * 10 + r;
				cq[i].nvcpu += cq[i].q[k].threads;
				cq[i].ticks += (uint64_t)cq[i].q[k].ticks *
					cq[i].q[k].threads;
			}
		}
		nref = ref_place(c, cq, h, n, m, g, ref, &dref);
		hs_plan_reset(p);
		ck_assert_int_ge(hs_gang_place(c, cq, h, n, w, p), 0);
		ck_assert_uint_eq(p->nslot, nref);
		ck_assert_uint_eq(p->ndeferred, dref);
		/* staged order = placement order: compare before finish */
		for (j = 0; j < nref; j++, pos++) {
			ck_assert_uint_eq(p->pcpu_of[pos], ref[j].pcpu);
			ck_assert_uint_eq(p->slot[pos].vcpu, ref[j].vcpu);
			ck_assert_uint_eq(p->slot[pos].ticks, ref[j].ticks);
		}
		hs_plan_destroy(p);
		hs_gang_ws_destroy(w);
	}
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
	tcase_add_test(tc, matches_reference);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
