// SPDX-License-Identifier: MIT
/* Unit tests for tochaind/td_guest.c: the guest users of a stand-in VM. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "td_guest.h"
#include "tc_check.h"

START_TEST(modes)
{
	static const struct {
		const char *s;
		unsigned int mode;	/* 0: refused */
	} cases[] = {
		{ "0660", 0660 }, { "660", 0660 }, { "0666", 0666 }, { "600", 0600 }, { "0640", 0640 },
		{ "0777", 0 }, { "4666", 0 }, { "0066", 0 }, { "0460", 0 }, { "0661", 0 },
		{ "", 0 }, { "0x1b0", 0 }, { "+660", 0 }, { " 660", 0 }, { "660 ", 0 },
		{ "00660", 0 }, { "0680", 0 }, { "-660", 0 }, { "rw", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = NULL;
		unsigned int m = 12345;
		int rc = td_guest_mode_parse(cases[i].s, &m, &why);

		if (cases[i].mode) {
			ck_assert_msg(rc == 0, "'%s' refused: %s", cases[i].s, why);
			ck_assert_uint_eq(m, cases[i].mode);
		} else {
			ck_assert_msg(rc == -EINVAL, "'%s' accepted", cases[i].s);
			ck_assert_ptr_nonnull(why);
			ck_assert_uint_eq(m, 12345);
		}
	}
}
END_TEST

START_TEST(groups)
{
	const char *why;
	char long_name[40];

	ck_assert(td_guest_group_valid("tochain", &why));
	ck_assert(td_guest_group_valid("www-data", &why));
	ck_assert(td_guest_group_valid("Domain_Users.1", &why));
	ck_assert(!td_guest_group_valid("", &why));
	ck_assert(!td_guest_group_valid("-x", &why));
	ck_assert(!td_guest_group_valid("a b", &why));
	ck_assert(!td_guest_group_valid("a:b", &why));
	ck_assert(!td_guest_group_valid("a/b", &why));
	memset(long_name, 'g', 33);
	long_name[33] = '\0';
	ck_assert(!td_guest_group_valid(long_name, &why));
	long_name[32] = '\0';
	ck_assert(td_guest_group_valid(long_name, &why));
}
END_TEST

/* From a request or a saved state, to the JSON and the TOE's options. */
START_TEST(json_and_args)
{
	unsigned int mode;
	char group[TD_GROUP_MAX], err[256], buf[12];
	const char *argv[8];
	size_t n = 0;
	json_t *o = json_pack("{s:s, s:s}", "guest_mode", "660", "guest_group", "root"), *out;

	ck_assert_int_eq(td_guest_from_json(o, true, &mode, group, err, sizeof(err)), 0);
	ck_assert_uint_eq(mode, 0660);
	ck_assert_str_eq(group, "root");
	out = json_object();
	td_guest_to_json(mode, group, out);
	ck_assert_str_eq(json_string_value(json_object_get(out, "guest_mode")), "0660");
	ck_assert_str_eq(json_string_value(json_object_get(out, "guest_group")), "root");
	td_guest_toe_args(mode, group, buf, argv, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(argv[0], "--guest-mode");
	ck_assert_str_eq(argv[1], "0660");
	ck_assert_str_eq(argv[2], "--guest-group");
	ck_assert_str_eq(argv[3], "root");
	json_decref(out);
	json_decref(o);

	/* unset: nothing in the JSON, no options */
	o = json_object();
	ck_assert_int_eq(td_guest_from_json(o, true, &mode, group, err, sizeof(err)), 0);
	ck_assert_uint_eq(mode, 0);
	ck_assert_str_eq(group, "");
	td_guest_to_json(mode, group, o);
	ck_assert_uint_eq(json_object_size(o), 0);
	n = 0;
	td_guest_toe_args(mode, group, buf, argv, &n);
	ck_assert_uint_eq(n, 0);
	json_decref(o);

	/* refusals name the field; a group that does not exist only on request */
	o = json_pack("{s:s}", "guest_mode", "0777");
	ck_assert_int_eq(td_guest_from_json(o, true, &mode, group, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "guest-mode '0777' must have read/write bits only and owner rw "
			 "(e.g. 0660, 0666)");
	json_decref(o);
	o = json_pack("{s:i}", "guest_mode", 660);
	ck_assert_int_eq(td_guest_from_json(o, true, &mode, group, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "guest-mode '' is not a string");
	json_decref(o);
	o = json_pack("{s:s}", "guest_group", "no-such-grp-x");
	ck_assert_int_eq(td_guest_from_json(o, true, &mode, group, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "guest-group 'no-such-grp-x': no such group on this host");
	ck_assert_int_eq(td_guest_from_json(o, false, &mode, group, err, sizeof(err)), 0);
	ck_assert_str_eq(group, "no-such-grp-x");
	json_decref(o);
	o = json_pack("{s:s}", "guest_group", "--x");
	ck_assert_int_eq(td_guest_from_json(o, false, &mode, group, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "guest-group '--x' must be of"), "%s", err);
	json_decref(o);
}
END_TEST

START_TEST(dir_grant)
{
	char dir[64];
	struct stat st;

	snprintf(dir, sizeof(dir), "/tmp/tc-guest-%d", getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(td_guest_dir_grant(dir), 0);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0711);
	ck_assert_int_eq(chmod(dir, 0750), 0);
	ck_assert_int_eq(td_guest_dir_grant(dir), 0);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0751);
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_int_eq(td_guest_dir_grant(dir), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("td_guest");
	TCase *tc = tcase_create("guest");

	tcase_add_test(tc, modes);
	tcase_add_test(tc, groups);
	tcase_add_test(tc, json_and_args);
	tcase_add_test(tc, dir_grant);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
