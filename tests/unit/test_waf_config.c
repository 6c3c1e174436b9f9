/*
 * vnfs/waf: configuration files (waf_config.h): every key, relative paths,
 * and each documented error.  The example file must load and build an
 * engine.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waf_answer.h"
#include "waf_config.h"

static char dir[] = "/tmp/test_waf_config_XXXXXX";
static char path[512];

static void write_conf(const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_ge(fputs(text, fp), 0);
	ck_assert_int_eq(fclose(fp), 0);
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/waf.conf", dir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
	strcpy(dir, "/tmp/test_waf_config_XXXXXX");
}

START_TEST(all_keys)
{
	struct waf_config_file c;
	char err[256], want[600];

	write_conf("# a comment\n\n"
		   "crs_dir = /opt/crs   # trailing comment\n"
		   "paranoia_level=3\n"
		   "  inspect_response =  On \n"
		   "request_body_limit = 2M\n"
		   "response_body_limit = 100k\n"
		   "max_header_bytes = 8192\n"
		   "inbound_threshold = 10\n"
		   "outbound_threshold = 7\n"
		   "pre_rules = before.conf\n"
		   "rules = /etc/site.conf\n"
		   "rules = local/after.conf\n");
	ck_assert_int_eq(waf_config_load(path, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.cfg.crs_dir, "/opt/crs");
	ck_assert_int_eq(c.cfg.paranoia_level, 3);
	ck_assert(c.cfg.inspect_response);
	ck_assert_uint_eq(c.cfg.request_body_limit, 2u << 20);
	ck_assert_uint_eq(c.cfg.response_body_limit, 100u << 10);
	ck_assert_uint_eq(c.cfg.max_header_bytes, 8192);
	ck_assert_int_eq(c.cfg.inbound_threshold, 10);
	ck_assert_int_eq(c.cfg.outbound_threshold, 7);
	ck_assert_uint_eq(c.cfg.n_pre_rule_files, 1);
	snprintf(want, sizeof(want), "%s/before.conf", dir);
	ck_assert_str_eq(c.cfg.pre_rule_files[0], want);
	ck_assert_uint_eq(c.cfg.n_extra_rule_files, 2);
	ck_assert_str_eq(c.cfg.extra_rule_files[0], "/etc/site.conf");
	snprintf(want, sizeof(want), "%s/local/after.conf", dir);
	ck_assert_str_eq(c.cfg.extra_rule_files[1], want);
	waf_config_free(&c);
}
END_TEST

START_TEST(defaults_and_none)
{
	struct waf_config_file c;
	char err[256];

	write_conf("crs_dir = none\n");
	ck_assert_int_eq(waf_config_load(path, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.cfg.crs_dir, "");
	ck_assert_int_eq(c.cfg.paranoia_level, 0);
	ck_assert(!c.cfg.inspect_response);
	ck_assert_uint_eq(c.cfg.n_extra_rule_files, 0);
	waf_config_free(&c);
}
END_TEST

static const struct {
	const char *text, *in_err;
} bad[] = {
	{ "paranoia_level = 5\n", "paranoia_level" },
	{ "paranoia_level = two\n", "bad value" },
	{ "inspect_response = maybe\n", "inspect_response" },
	{ "request_body_limit = 10G\n", "request_body_limit" },
	{ "request_body_limit = -1\n", "bad value" },
	{ "paranoia = 2\n", "unknown key 'paranoia'" },
	{ "\n\njust words\n", ":3:" },
	{ "rules =\n", "empty value" },
};

START_TEST(bad_lines)
{
	struct waf_config_file c;
	char err[256];
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_conf(bad[i].text);
		err[0] = '\0';
		ck_assert_msg(waf_config_load(path, &c, err, sizeof(err)) == -EINVAL,
			      "'%s' accepted", bad[i].text);
		ck_assert_msg(strstr(err, bad[i].in_err) != NULL,
			      "'%s': error '%s' lacks '%s'", bad[i].text, err,
			      bad[i].in_err);
		waf_config_free(&c);
	}
}
END_TEST

START_TEST(too_many_files)
{
	struct waf_config_file c;
	char err[256], *text = malloc(64 * 40);
	unsigned i;

	ck_assert_ptr_nonnull(text);
	text[0] = '\0';
	for (i = 0; i <= WAF_CONFIG_MAX_FILES; i++)
		strcat(text, "rules = x.conf\n");
	write_conf(text);
	free(text);
	ck_assert_int_eq(waf_config_load(path, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":33:"));
	waf_config_free(&c);
}
END_TEST

START_TEST(missing_file)
{
	struct waf_config_file c;
	char err[256];

	ck_assert_int_eq(waf_config_load("/nonexistent/waf.conf", &c, err,
					 sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/waf.conf"));
	waf_config_free(&c);
}
END_TEST

/* deny_page: read relative to the file, filled in by waf_answer_build; each error named. */
START_TEST(deny_page)
{
	struct waf_config_file c;
	char err[512], page[600], ans[WAF_ANSWER_MAX], nul[] = "a\0b";
	size_t n;
	FILE *fp;

	snprintf(page, sizeof(page), "%s/p.html", dir);
	fp = fopen(page, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("<b>@STATUS@</b> @INCIDENT@ @INCIDENT@\n", fp);
	fclose(fp);
	write_conf("crs_dir = none\ndeny_page = p.html\n");
	ck_assert_int_eq(waf_config_load(path, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.deny_page, "<b>@STATUS@</b> @INCIDENT@ @INCIDENT@\n");
	n = waf_answer_build(c.deny_page, 400, 0x12ab, ans, sizeof(ans));
	ck_assert_uint_gt(n, 0);
	ans[n < sizeof(ans) ? n : sizeof(ans) - 1] = '\0';
	ck_assert_msg(strstr(ans, "\r\n\r\n<b>400 Bad Request</b> 000012ab 000012ab\n"), "%s", ans);
	ck_assert_msg(strstr(ans, "Content-Length: 41\r\n"), "%s", ans);
	/* does not fit the destination: 0, the caller resets */
	ck_assert_uint_eq(waf_answer_build(c.deny_page, 403, 1, ans, 100), 0);
	waf_config_free(&c);
	/* the built-in page */
	n = waf_answer_build(NULL, 403, 7, ans, sizeof(ans));
	ck_assert_uint_gt(n, 0);
	ans[n] = '\0';
	ck_assert_msg(strstr(ans, "Incident id: <code>00000007</code>"), "%s", ans);
	/* a missing page, one with a NUL byte */
	write_conf("crs_dir = none\n\ndeny_page = nope.html\n");
	ck_assert_int_eq(waf_config_load(path, &c, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "waf.conf:3: deny_page: ") && strstr(err, "nope.html"), "%s", err);
	waf_config_free(&c);
	fp = fopen(page, "w");
	fwrite(nul, 1, 3, fp);
	fclose(fp);
	write_conf("deny_page = p.html\n");
	ck_assert_int_eq(waf_config_load(path, &c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "waf.conf:1: deny_page: ") && strstr(err, "NUL"), "%s", err);
	waf_config_free(&c);
	unlink(page);
}
END_TEST

START_TEST(example_builds_engine)
{
	struct waf_config_file c;
	struct waf_engine *e;
	char err[512];

	ck_assert_msg(waf_config_load("vnfs/waf/conf/waf.conf.example", &c, err,
				      sizeof(err)) == 0, "%s", err);
	e = waf_engine_create(&c.cfg, err, sizeof(err));
	ck_assert_msg(e != NULL, "%s", err);
	ck_assert_int_eq(waf_engine_paranoia(e), 1);
	ck_assert_uint_gt(waf_engine_rule_count(e), 500);
	waf_engine_put(e);
	waf_config_free(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("waf_config");
	TCase *tc = tcase_create("file");
	SRunner *sr;
	int failed;

	/* The example path is relative to the top of the tree. */
	if (access("vnfs/waf/conf/waf.conf.example", R_OK) < 0 && getenv("TOCHAIN_TOP"))
		if (chdir(getenv("TOCHAIN_TOP")) < 0)
			return 1;
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, all_keys);
	tcase_add_test(tc, defaults_and_none);
	tcase_add_test(tc, bad_lines);
	tcase_add_test(tc, too_many_files);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, deny_page);
	tcase_add_test(tc, example_builds_engine);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
