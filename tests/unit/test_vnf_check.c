// SPDX-License-Identifier: MIT
/* Unit tests for vnfs/runtime/vnf_check.c: a rules file checked by its kind's engine. */
#include <stdio.h>
#include <string.h>

#include "tc_check.h"
#include "vnf_check.h"

static char base[64];

static const char *put(const char *name, const char *text)
{
	static char path[8][128];
	static int n;
	char *p = path[n++ % 8];
	FILE *f;

	snprintf(p, 128, "%s/%s", base, name);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static bool has_msg(const struct vnf_check *c, const char *s)
{
	for (size_t i = 0; i < c->nmsg; i++)
		if (strstr(c->msg[i], s))
			return true;
	return false;
}

START_TEST(test_fw)
{
	struct vnf_kind_opts o = { .rules = put("ok.fw", "accept in tcp dport 80\ndrop in tcp dport 22\n") };
	struct vnf_check c;
	char want[160];

	ck_assert_int_eq(vnf_check_run(&vnf_kind_fw, &o, &c), 0);
	ck_assert(c.usable && c.has_rules);
	ck_assert_uint_eq(c.loaded, 2);
	ck_assert_uint_eq(c.unsupported, 0);
	vnf_check_free(&c);
	/* policies alone: a usable (open) firewall */
	o.rules = put("open.fw", "policy in accept\npolicy out accept\n");
	ck_assert_int_eq(vnf_check_run(&vnf_kind_fw, &o, &c), 0);
	ck_assert(c.usable);
	ck_assert_uint_eq(c.loaded, 2);
	vnf_check_free(&c);
	o.rules = put("bad.fw", "accept in tcp dport 80\naccept in tcp dport 80x80\n");
	ck_assert_int_eq(vnf_check_run(&vnf_kind_fw, &o, &c), 0);
	ck_assert(!c.usable);
	ck_assert_uint_eq(c.unsupported, 1);
	snprintf(want, sizeof(want), "%s:2: ", o.rules);
	ck_assert_msg(has_msg(&c, want), "no %s in %s", want, c.nmsg ? c.msg[0] : "(none)");
	vnf_check_free(&c);
	/* empty: nothing loaded is not usable, and no rule is to blame */
	o.rules = put("empty.fw", "# nothing\n");
	ck_assert_int_eq(vnf_check_run(&vnf_kind_fw, &o, &c), 0);
	ck_assert(!c.usable);
	ck_assert_uint_eq(c.loaded, 0);
	ck_assert_uint_eq(c.unsupported, 0);
	vnf_check_free(&c);
	/* a file that is not there: a hard error, not an unsupported rule */
	o.rules = "/nonexistent/x.fw";
	ck_assert_int_eq(vnf_check_run(&vnf_kind_fw, &o, &c), 0);
	ck_assert(!c.usable);
	ck_assert_uint_eq(c.unsupported, 0);
	ck_assert(c.err[0]);
	vnf_check_free(&c);
}
END_TEST

START_TEST(test_ids_vars)
{
	const char *rules = put("r.rules",
		"# a rule that needs variables\n"
		"drop tcp $EXTERNAL_NET any -> $HOME_NET 80 (msg:\"x\"; content:\"evil\"; sid:7; rev:1;)\n");
	const char *vars = put("v.conf", "ipvar HOME_NET 10.0.0.0/8\nipvar EXTERNAL_NET !$HOME_NET\n");
	struct vnf_kind_opts o = { .rules = rules };
	struct vnf_check c;
	char want[160];

	/* without its variables (none beside it either): refused, with file:line */
	ck_assert_int_eq(vnf_check_run(&vnf_kind_ids, &o, &c), 0);
	ck_assert(!c.usable);
	ck_assert_uint_eq(c.unsupported, 1);
	snprintf(want, sizeof(want), "%s:2: unknown variable 'EXTERNAL_NET'", rules);
	ck_assert_msg(has_msg(&c, want), "no %s", want);
	vnf_check_free(&c);
	/* --vars */
	o.vars = vars;
	ck_assert_int_eq(vnf_check_run(&vnf_kind_ids, &o, &c), 0);
	ck_assert_msg(c.usable, "%s", c.err);
	ck_assert_uint_eq(c.loaded, 1);
	ck_assert_uint_eq(c.nmsg, 0);
	vnf_check_free(&c);
	/* every bad rule is listed, not only the first */
	o.rules = put("bad.rules",
		"alert tcp any any -> any any (msg:\"ok\"; content:\"a\"; sid:1;)\n"
		"drop tcp any any -> any any (msg:\"t\"; content:\"b\"; frobnicate; sid:2;)\n"
		"alert tcp $NOPE any -> any any (msg:\"v\"; content:\"c\"; sid:3;)\n");
	ck_assert_int_eq(vnf_check_run(&vnf_kind_ids, &o, &c), 0);
	ck_assert(!c.usable);
	ck_assert_uint_eq(c.unsupported, 2);
	ck_assert_uint_eq(c.nmsg, 2);
	snprintf(want, sizeof(want), "%s:2: ", o.rules);
	ck_assert(strstr(c.msg[0], want));
	snprintf(want, sizeof(want), "%s:3: ", o.rules);
	ck_assert(strstr(c.msg[1], want));
	vnf_check_free(&c);
}
END_TEST

START_TEST(test_waf_null)
{
	struct vnf_kind_opts o = { .rules = put("bad.waf",
		"SecRule ARGS \"@rx a\" \"id:1000,phase:2,deny\"\n"
		"SecRule ARGS \"@rx b\" \"id:1001,phase:2,deny,frobnicate:1\"\n") };
	struct vnf_check c;
	char want[160];

	ck_assert_int_eq(vnf_check_run(&vnf_kind_waf, &o, &c), 0);
	ck_assert(!c.usable);
	snprintf(want, sizeof(want), "%s:2: ", o.rules);
	ck_assert_msg(has_msg(&c, want), "no %s in %s", want, c.nmsg ? c.msg[0] : "(none)");
	vnf_check_free(&c);
	o.rules = NULL;
	ck_assert_int_eq(vnf_check_run(&vnf_kind_null, &o, &c), 0);
	ck_assert(c.usable && !c.has_rules);
	vnf_check_free(&c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vnf_check");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fw);
	tcase_add_test(tc, test_ids_vars);
	tcase_add_test(tc, test_waf_null);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int r;

	if (tc_tmpdir_make(base, sizeof(base)))
		return 1;
	r = tc_run_suite(suite());
	tc_tmpdir_remove(base);
	return r;
}
