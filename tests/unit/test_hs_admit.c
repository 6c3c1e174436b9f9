// SPDX-License-Identifier: MIT
/* Admission control: quotas must fit the synchronous partition. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hs_admit.h"

static void vnf(struct hs_chain_cfg *c, const char *name, uint64_t f,
		uint32_t threads)
{
	struct hs_vnf_cfg *v = &c->vnf[c->nvnf++];

	memset(v, 0, sizeof(*v));
	v->name = name;
	v->f_pps = f;
	v->max_threads = threads;
}

static struct hs_chain_cfg ch[3];
static struct hs_chain_quota q[3];
static char why[200];

static void setup(void)
{
	memset(ch, 0, sizeof(ch));
	ch[0].name = "alpha";
	ch[0].sla_pps = 1000;
	vnf(&ch[0], "snort", 5000, 4);	/* ceil(1000*50/5000) = 10 */
	vnf(&ch[0], "waf", 4000, 4);	/* ceil(50000/4000) = 13 */
	ch[1].name = "beta";
	ch[1].sla_pps = 5000;
	vnf(&ch[1], "snort", 5000, 4);	/* R=2, 25 each -> 50 */
	vnf(&ch[1], "waf", 4000, 4);	/* R=2, ceil(250000/8000)=32 each -> 64 */
}

START_TEST(fits)
{
	/* alpha 10+13 = 23, beta 2*25 + 2*32 = 114: 137 <= 4 pCPUs * 50 */
	ck_assert_int_eq(hs_admit(ch, 2, 4, 50, q, why, sizeof(why)), 0);
	ck_assert_uint_eq(q[0].nvcpu, 2);
	ck_assert_uint_eq(q[0].ticks, 23);
	ck_assert_uint_eq(q[1].nvcpu, 4);
	ck_assert_uint_eq(q[1].ticks, 114);
	ck_assert_uint_eq(q[1].q[1].threads, 2);
	ck_assert_uint_eq(q[1].q[1].ticks, 32);
	/* Quotas scale with the period (C = g).  g=35: alpha
	 * ceil(35000/5000)=7 + ceil(35000/4000)=ceil(8.75)=9 = 16; beta
	 * 2*ceil(175000/10000)=2*18 + 2*ceil(175000/8000)=2*22 = 80;
	 * 96 <= 4*35 = 140. */
	ck_assert_int_eq(hs_admit(ch, 2, 4, 35, q, why, sizeof(why)), 0);
	ck_assert_uint_eq(q[0].ticks, 16);
	ck_assert_uint_eq(q[1].ticks, 80);
}
END_TEST

START_TEST(exactly_full)
{
	struct hs_chain_cfg c[2];

	memset(c, 0, sizeof(c));
	/* t=4999 f=5000 one thread: ceil(249950/5000) = 50 = g on 1 pCPU */
	c[0].name = "full";
	c[0].sla_pps = 4999;
	vnf(&c[0], "ids", 5000, 1);
	ck_assert_int_eq(hs_admit(c, 1, 1, 50, q, why, sizeof(why)), 0);
	ck_assert_uint_eq(q[0].ticks, 50);
	/* one more tick anywhere does not fit: t=1 -> ceil(50/5000) = 1 */
	c[1].name = "tiny";
	c[1].sla_pps = 1;
	vnf(&c[1], "fw", 5000, 1);
	ck_assert_int_eq(hs_admit(c, 2, 1, 50, q, why, sizeof(why)), -ENOSPC);
	ck_assert_ptr_nonnull(strstr(why, "chain tiny"));
}
END_TEST

START_TEST(total_over_capacity)
{
	/* 4 pCPUs * 50 = 200; alpha 23 + beta 114 + a second beta 114 = 251 */
	ch[2] = ch[1];
	ch[2].name = "gamma";
	ck_assert_int_eq(hs_admit(ch, 3, 4, 50, q, why, sizeof(why)), -ENOSPC);
	ck_assert_ptr_nonnull(strstr(why, "chain gamma"));
	ck_assert_ptr_nonnull(strstr(why, "251"));
	ck_assert_ptr_nonnull(strstr(why, "200"));
}
END_TEST

START_TEST(gang_needs_distinct_pcpus)
{
	/* beta has 4 VNF vCPUs; 3 pCPUs cannot run them at once */
	ck_assert_int_eq(hs_admit(ch, 2, 3, 50, q, why, sizeof(why)), -E2BIG);
	ck_assert_ptr_nonnull(strstr(why, "chain beta"));
	ck_assert_ptr_nonnull(strstr(why, "4 VNF vCPUs"));
}
END_TEST

START_TEST(sla_unreachable_names_vnf)
{
	ch[1].vnf[1].max_threads = 1;	/* waf: 5000 >= 4000*1 */
	ck_assert_int_eq(hs_admit(ch, 2, 8, 50, q, why, sizeof(why)), -ERANGE);
	ck_assert_ptr_nonnull(strstr(why, "chain beta, VNF waf"));
}
END_TEST

START_TEST(bad_config)
{
	ch[0].vnf[0].max_threads = HS_MAX_THREADS + 1;
	ck_assert_int_eq(hs_admit(ch, 1, 8, 50, q, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "alpha"));
	ch[0].vnf[0].max_threads = 1;
	ch[0].nvnf = HS_MAX_VNFS + 1;
	ck_assert_int_eq(hs_admit(ch, 1, 8, 50, q, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(hs_admit(ch, 1, 0, 50, q, why, sizeof(why)), -EINVAL);
	/* no reason buffer is fine */
	ck_assert_int_eq(hs_admit(ch, 1, 8, 50, q, NULL, 0), -EINVAL);
	/* empty set always fits */
	ck_assert_int_eq(hs_admit(NULL, 0, 1, 50, NULL, why, sizeof(why)), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_admit");
	TCase *tc = tcase_create("admit");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, fits);
	tcase_add_test(tc, exactly_full);
	tcase_add_test(tc, total_over_capacity);
	tcase_add_test(tc, gang_needs_distinct_pcpus);
	tcase_add_test(tc, sla_unreachable_names_vnf);
	tcase_add_test(tc, bad_config);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
