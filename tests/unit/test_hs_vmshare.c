// SPDX-License-Identifier: MIT
/* Algorithm 2 (VM vCPU shares per pCPU) and RQ_vm rebalancing. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "hs_vmrq.h"
#include "hs_vmshare.h"

START_TEST(oldest_first_remainder_to_front)
{
	/* RQ: vcpu 10 (vm 0), 11 (vm 1), 12 (vm 2), 13 (vm 3).
	 * Output-queue heads: vm0 t=300, vm1 t=100, vm2 empty, vm3 t=100.
	 * Sorted: 11 (100), 13 (100, after 11: stable), 10 (300), 12 (empty).
	 * g=50, g_vnf=23: 27 ticks for l=4: floor(27/4) = 6, 27 mod 4 = 3
	 * -> 7, 7, 7, 6. */
	struct hs_vment rq[4] = { { 10, 0 }, { 11, 1 }, { 12, 2 }, { 13, 3 } };
	uint64_t ts[4] = { 300, 100, HS_TS_EMPTY, 100 };
	struct hs_vmgrant out[4];

	ck_assert_int_eq(hs_vmshare(rq, 4, ts, 4, 50, 23, out), 4);
	ck_assert_uint_eq(out[0].vcpu, 11);
	ck_assert_uint_eq(out[1].vcpu, 13);
	ck_assert_uint_eq(out[2].vcpu, 10);
	ck_assert_uint_eq(out[3].vcpu, 12);
	ck_assert_uint_eq(out[0].ticks, 7);
	ck_assert_uint_eq(out[1].ticks, 7);
	ck_assert_uint_eq(out[2].ticks, 7);
	ck_assert_uint_eq(out[3].ticks, 6);
	ck_assert_uint_eq(out[3].vm, 2);
}
END_TEST

START_TEST(edges)
{
	struct hs_vment rq[3] = { { 1, 0 }, { 2, 0 }, { 3, 9 } };
	uint64_t ts[1] = { 5 };
	struct hs_vmgrant out[3];

	/* exact division: 30 ticks / 3 = 10 each, no remainder */
	ck_assert_int_eq(hs_vmshare(rq, 3, ts, 1, 50, 20, out), 3);
	ck_assert_uint_eq(out[0].ticks, 10);
	ck_assert_uint_eq(out[2].ticks, 10);
	/* VM index 9 is out of range: treated as empty, goes last */
	ck_assert_uint_eq(out[2].vcpu, 3);
	/* VNFs took the whole period (or more): nothing left */
	ck_assert_int_eq(hs_vmshare(rq, 3, ts, 1, 50, 50, out), 3);
	ck_assert_uint_eq(out[0].ticks + out[1].ticks + out[2].ticks, 0);
	ck_assert_int_eq(hs_vmshare(rq, 3, ts, 1, 50, 60, out), 3);
	ck_assert_uint_eq(out[0].ticks, 0);
	/* fewer ticks than vCPUs: 2 ticks over 3 -> 1, 1, 0 */
	ck_assert_int_eq(hs_vmshare(rq, 3, ts, 1, 50, 48, out), 3);
	ck_assert_uint_eq(out[0].ticks, 1);
	ck_assert_uint_eq(out[1].ticks, 1);
	ck_assert_uint_eq(out[2].ticks, 0);
	/* empty queue; bad arguments */
	ck_assert_int_eq(hs_vmshare(NULL, 0, NULL, 0, 50, 0, NULL), 0);
	ck_assert_int_eq(hs_vmshare(rq, 3, NULL, 1, 50, 0, out), -EINVAL);
}
END_TEST

START_TEST(add_to_shortest)
{
	struct hs_vmrq *rq = hs_vmrq_create(3, 8);
	uint32_t i, n;

	ck_assert_ptr_nonnull(rq);
	/* 7 vCPUs over 3 queues: 0,1,2,0,1,2,0 -> lengths 3,2,2 */
	for (i = 0; i < 7; i++)
		ck_assert_int_eq(hs_vmrq_add(rq, 100 + i, i), (int)(i % 3));
	hs_vmrq_queue(rq, 0, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(hs_vmrq_rebalance(rq), 0);	/* differ by 1: keep */
	hs_vmrq_destroy(rq);
	ck_assert_ptr_null(hs_vmrq_create(0, 1));
}
END_TEST

START_TEST(rebalance_moves_tails)
{
	struct hs_vmrq *rq = hs_vmrq_create(3, 8);
	const struct hs_vment *e;
	uint32_t i, n;

	/* Force lengths 5, 1, 0: q0 = [a b c d e] (1..5), q1 = [x] (9). */
	for (i = 0; i < 5; i++)
		rq->e[i] = (struct hs_vment){ 1 + i, 0 };
	rq->e[8] = (struct hs_vment){ 9, 1 };
	rq->len[0] = 5;
	rq->len[1] = 1;
	rq->len[2] = 0;
	/* 5,1,0: e (5) -> q2: 4,1,1.  4,1,1: d (4) -> q1 (lowest shortest):
	 * 3,2,1.  3,2,1: c (3) -> q2: 2,2,2.  Three moves. */
	ck_assert_uint_eq(hs_vmrq_rebalance(rq), 3);
	e = hs_vmrq_queue(rq, 0, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(e[1].vcpu, 2);
	e = hs_vmrq_queue(rq, 1, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(e[0].vcpu, 9);
	ck_assert_uint_eq(e[1].vcpu, 4);
	e = hs_vmrq_queue(rq, 2, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(e[0].vcpu, 5);
	ck_assert_uint_eq(e[1].vcpu, 3);
	ck_assert_uint_eq(hs_vmrq_rebalance(rq), 0);
	hs_vmrq_destroy(rq);
}
END_TEST

START_TEST(full_queue)
{
	struct hs_vmrq *rq = hs_vmrq_create(1, 2);

	ck_assert_int_eq(hs_vmrq_add(rq, 1, 0), 0);
	ck_assert_int_eq(hs_vmrq_add(rq, 2, 0), 0);
	ck_assert_int_eq(hs_vmrq_add(rq, 3, 0), -ENOSPC);
	hs_vmrq_destroy(rq);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_vmshare");
	TCase *tc = tcase_create("alg2");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, oldest_first_remainder_to_front);
	tcase_add_test(tc, edges);
	tcase_add_test(tc, add_to_shortest);
	tcase_add_test(tc, rebalance_moves_tails);
	tcase_add_test(tc, full_queue);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
