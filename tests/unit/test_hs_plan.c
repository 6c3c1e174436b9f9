// SPDX-License-Identifier: MIT
/* The plan object and its text/JSON renderings. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hs_plan.h"

static struct hs_chain_cfg ch[1];

static struct hs_plan *sample(void)
{
	struct hs_plan *p = hs_plan_create(2, 50, 8);

	ck_assert_ptr_nonnull(p);
	memset(ch, 0, sizeof(ch));
	ch[0].name = "web\"1";
	ch[0].nvnf = 2;
	ch[0].vnf[0].name = "snort";
	ch[0].vnf[1].name = "waf";
	hs_plan_reset(p);
	/* interleaved adds: grouping by pCPU keeps per-pCPU order */
	ck_assert_int_eq(hs_plan_add(p, 1, 7, 0, 1, 20, HS_KIND_VNF), 0);
	ck_assert_int_eq(hs_plan_add(p, 0, 5, 0, 0, 10, HS_KIND_VNF), 0);
	ck_assert_int_eq(hs_plan_add(p, 1, 40, HS_NO_CHAIN, 3, 30, HS_KIND_VM), 0);
	ck_assert_int_eq(hs_plan_add(p, 0, 41, HS_NO_CHAIN, 4, 25, HS_KIND_VM), 0);
	ck_assert_int_eq(hs_plan_add(p, 0, 42, HS_NO_CHAIN, 4, 15, HS_KIND_VM), 0);
	hs_plan_finish(p);
	return p;
}

START_TEST(group_and_start)
{
	struct hs_plan *p = sample();
	const struct hs_slot *s;
	uint32_t n;

	s = hs_plan_slots(p, 0, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(s[0].vcpu, 5);
	ck_assert_uint_eq(s[1].vcpu, 41);
	ck_assert_uint_eq(s[2].vcpu, 42);
	/* starts: 0, 10, 10+25 = 35 */
	ck_assert_uint_eq(s[1].start, 10);
	ck_assert_uint_eq(s[2].start, 35);
	s = hs_plan_slots(p, 1, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(s[1].start, 20);
	ck_assert_uint_eq(p->vnf_ticks[0], 10);
	ck_assert_uint_eq(p->vnf_ticks[1], 20);
	ck_assert_ptr_null(hs_plan_slots(p, 2, &n));
	ck_assert_uint_eq(n, 0);
	hs_plan_destroy(p);
}
END_TEST

START_TEST(full_and_bad)
{
	struct hs_plan *p = hs_plan_create(1, 50, 1);

	hs_plan_reset(p);
	ck_assert_int_eq(hs_plan_add(p, 1, 0, 0, 0, 1, HS_KIND_VNF), -EINVAL);
	ck_assert_int_eq(hs_plan_add(p, 0, 0, 0, 0, 1, 7), -EINVAL);
	ck_assert_int_eq(hs_plan_add(p, 0, 0, 0, 0, 1, HS_KIND_VNF), 0);
	ck_assert_int_eq(hs_plan_add(p, 0, 0, 0, 0, 1, HS_KIND_VNF), -ENOSPC);
	hs_plan_destroy(p);
	ck_assert_ptr_null(hs_plan_create(0, 50, 1));
	ck_assert_int_eq(errno, EINVAL);
	hs_plan_destroy(NULL);
}
END_TEST

START_TEST(text)
{
	struct hs_plan *p = sample();
	char buf[1024];
	size_t n = hs_plan_format_text(p, ch, 1, buf, sizeof(buf));

	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_ptr_nonnull(strstr(buf, "pcpu 0 vnf 10/50: [0+10 vnf vcpu 5 web\"1/snort] [10+25 vm vcpu 41] [35+15 vm vcpu 42]\n"));
	ck_assert_ptr_nonnull(strstr(buf, "pcpu 1 vnf 20/50: [0+20 vnf vcpu 7 web\"1/waf] [20+30 vm vcpu 40]\n"));
	/* without names: chain index */
	hs_plan_format_text(p, NULL, 0, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "vnf vcpu 5 chain 0]"));
	hs_plan_destroy(p);
}
END_TEST

START_TEST(truncation)
{
	struct hs_plan *p = sample();
	char big[1024], small[16];
	size_t n = hs_plan_format_json(p, ch, 1, big, sizeof(big));

	/* snprintf semantics: same length reported, prefix written, NUL */
	ck_assert_uint_eq(hs_plan_format_json(p, ch, 1, small, sizeof(small)), n);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert(strncmp(small, big, sizeof(small) - 1) == 0);
	ck_assert_uint_eq(hs_plan_format_text(p, ch, 1, NULL, 0),
			  hs_plan_format_text(p, ch, 1, big, sizeof(big)));
	hs_plan_destroy(p);
}
END_TEST

START_TEST(json)
{
	struct hs_plan *p = sample();
	char buf[2048];

	hs_plan_format_json(p, ch, 1, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "{\"period\":50,\"deferred\":0,\"pcpus\":[{\"pcpu\":0,\"vnf_ticks\":10,\"slots\":["));
	ck_assert_ptr_nonnull(strstr(buf, "{\"vcpu\":5,\"start\":0,\"ticks\":10,\"kind\":\"vnf\",\"chain\":0,\"chain_name\":\"web\\\"1\",\"vnf\":\"snort\"}"));
	ck_assert_ptr_nonnull(strstr(buf, "{\"vcpu\":40,\"start\":20,\"ticks\":30,\"kind\":\"vm\",\"vm\":3}"));
	ck_assert(buf[strlen(buf) - 1] == '}');
	hs_plan_destroy(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_plan");
	TCase *tc = tcase_create("plan");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, group_and_start);
	tcase_add_test(tc, full_and_bad);
	tcase_add_test(tc, text);
	tcase_add_test(tc, truncation);
	tcase_add_test(tc, json);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
