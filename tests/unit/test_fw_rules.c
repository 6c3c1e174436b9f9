// SPDX-License-Identifier: MIT
/* Unit tests of the firewall rule file parser (vnfs/fw/fw_rules.c). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fw_nft.h"
#include "fw_rules.h"
#include "fw_rules_priv.h"

static struct fw_ruleset *parse(const char *text, struct fw_diag *d)
{
	return fw_ruleset_parse(text, strlen(text), "t.rules", d);
}

/* The nft line of the only rule of @text (without the leading tabs). */
static char *nft_line(const char *text)
{
	struct fw_diag d;
	struct fw_ruleset *rs = parse(text, &d);
	char *all, *p, *line = NULL;

	ck_assert_msg(rs, "refused: %s", d.msg);
	ck_assert_uint_eq(fw_ruleset_count(rs), 1);
	all = fw_nft_render(rs);
	ck_assert_ptr_nonnull(all);
	for (p = all; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (!strncmp(p, "\t\t", 2) && strncmp(p, "\t\ttype ", 7)) {
			line = strndup(p + 2, strcspn(p + 2, "\n"));
			break;
		}
	}
	ck_assert_ptr_nonnull(line);
	free(all);
	fw_ruleset_destroy(rs);
	return line;
}

static void expect_rule(const char *text, const char *nft)
{
	char *got = nft_line(text);

	ck_assert_str_eq(got, nft);
	free(got);
}

START_TEST(test_empty_file)
{
	struct fw_diag d;
	struct fw_ruleset *rs = parse("", &d);

	ck_assert_ptr_nonnull(rs);
	ck_assert_uint_eq(fw_ruleset_count(rs), 0);
	ck_assert_int_eq(fw_ruleset_policy(rs, FW_DIR_IN), FW_ACCEPT);
	ck_assert_int_eq(fw_ruleset_policy(rs, FW_DIR_OUT), FW_ACCEPT);
	fw_ruleset_destroy(rs);

	rs = parse("# only a comment\n\n   \t\r\n# another\n", &d);
	ck_assert_ptr_nonnull(rs);
	ck_assert_uint_eq(fw_ruleset_count(rs), 0);
	fw_ruleset_destroy(rs);
}
END_TEST

START_TEST(test_policy)
{
	static const struct {
		const char *text;
		enum fw_verdict in, out;
	} cases[] = {
		{ "policy in drop\n", FW_DROP, FW_ACCEPT },
		{ "policy input drop\npolicy output drop\n", FW_DROP, FW_DROP },
		{ "policy out drop\npolicy in accept", FW_ACCEPT, FW_DROP },
		{ "policy output drop # trailing comment\r\n", FW_ACCEPT, FW_DROP },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fw_diag d;
		struct fw_ruleset *rs = parse(cases[i].text, &d);

		ck_assert_msg(rs, "case %zu refused: %s", i, d.msg);
		ck_assert_int_eq(fw_ruleset_policy(rs, FW_DIR_IN), cases[i].in);
		ck_assert_int_eq(fw_ruleset_policy(rs, FW_DIR_OUT), cases[i].out);
		fw_ruleset_destroy(rs);
	}
}
END_TEST

/* Each keyword, and its exact nftables form. */
START_TEST(test_keywords)
{
	expect_rule("accept in", "accept");
	expect_rule("drop input", "drop");
	expect_rule("reject in", "reject");
	expect_rule("reject in tcp", "meta l4proto tcp reject with tcp reset");
	expect_rule("reject in udp", "meta l4proto udp reject");
	expect_rule("accept in icmp", "meta l4proto icmp accept");
	expect_rule("accept in icmpv6", "meta l4proto ipv6-icmp accept");
	expect_rule("accept in proto 47", "meta l4proto 47 accept");
	expect_rule("accept in proto 6 dport 1", "tcp dport 1 accept");
	expect_rule("accept in ip4", "meta nfproto ipv4 accept");
	expect_rule("accept in ip6 udp", "meta nfproto ipv6 meta l4proto udp accept");
	expect_rule("accept in from 10.0.0.0/8", "ip saddr 10.0.0.0/8 accept");
	expect_rule("accept in to 10.1.2.3", "ip daddr 10.1.2.3 accept");
	expect_rule("accept in to 10.1.2.3/32", "ip daddr 10.1.2.3 accept");
	expect_rule("accept in ip4 from 0.0.0.0/0", "ip saddr 0.0.0.0/0 accept");
	expect_rule("accept in from 2001:db8::/32", "ip6 saddr 2001:db8::/32 accept");
	expect_rule("accept in ip6 to ::1", "ip6 daddr ::1 accept");
	expect_rule("accept in from !192.168.0.0/16", "ip saddr != 192.168.0.0/16 accept");
	expect_rule("accept in udp sport 53", "udp sport 53 accept");
	expect_rule("accept in tcp dport !22", "tcp dport != 22 accept");
	expect_rule("accept in tcp dport 0-65535", "tcp dport 0-65535 accept");
	expect_rule("accept in ct new", "ct state new accept");
	expect_rule("accept in ct established,related",
		    "ct state { established, related } accept");
	expect_rule("drop in ct !established,new",
		    "ct state != { new, established } drop");
	expect_rule("accept in tcp flags syn", "tcp flags & syn == syn accept");
	expect_rule("accept in tcp flags syn,!ack",
		    "tcp flags & (syn | ack) == syn accept");
	expect_rule("accept in tcp flags !rst,!fin",
		    "tcp flags & (fin | rst) == 0 accept");
	expect_rule("accept in tcp flags cwr,ecn,urg,ack,psh,rst,syn,fin",
		    "tcp flags & (fin | syn | rst | psh | ack | urg | ecn | cwr) == "
		    "fin | syn | rst | psh | ack | urg | ecn | cwr accept");
	expect_rule("accept in comment \"hello, world #1\"",
		    "accept comment \"hello, world #1\"");
	/* the example of the brief, clauses in any order */
	expect_rule("accept in tcp dport 80,443 from 10.0.0.0/8 ct new,established comment \"web\"",
		    "ip saddr 10.0.0.0/8 tcp dport { 80, 443 } ct state { new, established } accept comment \"web\"");
	expect_rule("reject in tcp from !192.168.0.0/16 dport 8000-8999",
		    "ip saddr != 192.168.0.0/16 tcp dport 8000-8999 reject with tcp reset");
	expect_rule("drop out comment \"x\" to 10.0.0.0/8 from 10.1.0.0/16 sport 1 udp ip4",
		    "ip saddr 10.1.0.0/16 ip daddr 10.0.0.0/8 udp sport 1 drop comment \"x\"");
}
END_TEST

/* Sets are sorted; duplicates, covered prefixes and adjacent ranges merge. */
START_TEST(test_normalise)
{
	expect_rule("accept in tcp dport 443,80,80,81-90,85,91",
		    "tcp dport { 80-91, 443 } accept");
	expect_rule("accept in tcp dport 5,3,4", "tcp dport 3-5 accept");
	expect_rule("accept in tcp dport 65535,0", "tcp dport { 0, 65535 } accept");
	expect_rule("accept in from 192.168.1.1,10.1.0.0/16,10.0.0.0/8,192.168.1.1",
		    "ip saddr { 10.0.0.0/8, 192.168.1.1 } accept");
	expect_rule("accept in from 2001:db8::1,2001:db8::/64,fe80::/10",
		    "ip6 saddr { 2001:db8::/64, fe80::/10 } accept");
	expect_rule("accept in from 10.0.0.0/8,0.0.0.0/0", "ip saddr 0.0.0.0/0 accept");
}
END_TEST

START_TEST(test_numbers_and_lines)
{
	struct fw_diag d;
	struct fw_ruleset *rs = parse("# header\npolicy in drop\n\naccept in tcp\n"
				      "drop out udp\n   reject in icmp  \n", &d);

	ck_assert_ptr_nonnull(rs);
	ck_assert_uint_eq(fw_ruleset_count(rs), 3);
	ck_assert_uint_eq(rs->chain[FW_DIR_IN].n, 2);
	ck_assert_uint_eq(rs->chain[FW_DIR_OUT].n, 1);
	ck_assert_uint_eq(rs->chain[FW_DIR_IN].rules[0].number, 1);
	ck_assert_uint_eq(rs->chain[FW_DIR_IN].rules[0].line, 4);
	ck_assert_uint_eq(rs->chain[FW_DIR_OUT].rules[0].number, 2);
	ck_assert_uint_eq(rs->chain[FW_DIR_OUT].rules[0].line, 5);
	ck_assert_uint_eq(rs->chain[FW_DIR_IN].rules[1].number, 3);
	ck_assert_uint_eq(rs->chain[FW_DIR_IN].rules[1].line, 6);
	fw_ruleset_destroy(rs);
}
END_TEST

static const struct {
	const char *text;
	unsigned int line;
	const char *reason;
} bad[] = {
	{ "bogus in", 1, "unknown keyword 'bogus'" },
	{ "accept in tcp bogus 1", 1, "unknown keyword 'bogus'" },
	{ "\n\naccept in tcp dport 70000", 3, "out of range" },
	{ "accept in tcp dport 65536", 1, "out of range" },
	{ "accept in tcp dport 1-999999", 1, "out of range" },
	{ "accept in tcp dport 90-80", 1, "empty port range" },
	{ "accept in tcp dport 80,,81", 1, "empty element" },
	{ "accept in tcp dport 80,", 1, "empty element" },
	{ "accept in tcp dport !", 1, "empty element" },
	{ "accept in tcp dport abc", 1, "bad port" },
	{ "accept in tcp dport -5", 1, "bad port" },
	{ "accept in tcp dport 1-", 1, "bad port" },
	{ "accept in tcp dport +5", 1, "bad port" },
	{ "accept in tcp dport", 1, "needs an argument" },
	{ "accept in dport 80", 1, "needs protocol tcp or udp" },
	{ "accept in icmp sport 80", 1, "needs protocol tcp or udp" },
	{ "accept in udp flags syn", 1, "'flags' needs protocol tcp" },
	{ "accept in from 10.0.0.0/33", 1, "bad prefix length" },
	{ "accept in from 10.0.0.0/", 1, "bad prefix length" },
	{ "accept in from 10.0.0.0/x", 1, "bad prefix length" },
	{ "accept in from 2001:db8::/129", 1, "bad prefix length" },
	{ "accept in from 10.0.0.1/8", 1, "host bits set in '10.0.0.1/8' (network is 10.0.0.0/8)" },
	{ "accept in to 2001:db8::1/32", 1, "host bits set" },
	{ "accept in from 300.1.1.1", 1, "bad IPv4 address '300.1.1.1'" },
	{ "accept in from 10.1", 1, "bad IPv4 address" },
	{ "accept in from 2001:zz::1", 1, "bad IPv6 address" },
	{ "accept in from 10.0.0.0/8,::1", 1, "mixes IPv4 and IPv6" },
	{ "accept in from 10.0.0.0/8 to ::1", 1, "'from' is IPv4 but 'to' is IPv6" },
	{ "accept in ip6 from 10.0.0.0/8", 1, "'ip6' contradicts the IPv4 addresses" },
	{ "accept in ip4 ip6", 1, "given twice" },
	{ "accept in tcp tcp", 1, "given twice" },
	{ "accept in tcp udp", 1, "given twice" },
	{ "accept in tcp dport 1 dport 2", 1, "'dport' given twice" },
	{ "accept in proto 256", 1, "bad protocol" },
	{ "accept in proto gre", 1, "bad protocol" },
	{ "accept sideways", 1, "needs a direction" },
	{ "accept", 1, "needs a direction" },
	{ "accept \"in\"", 1, "needs a direction" },
	{ "accept in ct new,bogus", 1, "unknown ct state 'bogus'" },
	{ "accept in ct !new,established,related,invalid", 1, "matches no state" },
	{ "accept in tcp flags syn,!syn", 1, "both required and forbidden" },
	{ "accept in tcp flags foo", 1, "unknown TCP flag 'foo'" },
	{ "accept in comment web", 1, "must be in double quotes" },
	{ "accept in comment \"\"", 1, "empty comment" },
	{ "accept in comment \"a\\b\"", 1, "may not contain" },
	{ "accept in comment \"abc", 1, "unterminated string" },
	{ "accept in comment \"abc\"def", 1, "junk after closing" },
	{ "accept in comment", 1, "needs an argument" },
	{ "accept in tcp dport \"80\"", 1, "does not take a quoted string" },
	{ "accept in \"x\"", 1, "unexpected string" },
	{ "accept in com\"ment", 1, "unexpected '\"' inside a word" },
	{ "\"accept\" in", 1, "line starts with a string" },
	{ "policy in reject", 1, "policy must be accept or drop" },
	{ "policy in", 1, "usage: policy" },
	{ "policy in drop extra", 1, "usage: policy" },
	{ "policy sideways drop", 1, "unknown direction 'sideways'" },
	{ "policy in drop\npolicy input accept", 2, "policy for 'input' given twice" },
	{ "accept in\naccept in\x01", 2, "invalid byte 0x01 at column 10" },
	{ "accept in comment \"caf\xc3\xa9\"", 1, "invalid byte 0xc3" },
	{ "accept in \x7f", 1, "invalid byte 0x7f" },
	{ "accept in tcp dport 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"
	  "21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,"
	  "45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65", 1,
	  "too many elements" },
};

START_TEST(test_errors)
{
	struct fw_diag d;
	struct fw_ruleset *rs;
	char want[64];

	errno = 0;
	rs = parse(bad[_i].text, &d);
	ck_assert_msg(!rs, "accepted: %s", bad[_i].text);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(d.line, bad[_i].line);
	snprintf(want, sizeof(want), "t.rules:%u: ", bad[_i].line);
	ck_assert_msg(!strncmp(d.msg, want, strlen(want)), "'%s' for %s", d.msg, bad[_i].text);
	ck_assert_msg(strstr(d.msg, bad[_i].reason), "'%s' lacks '%s'", d.msg, bad[_i].reason);
}
END_TEST

START_TEST(test_error_no_diag)
{
	/* A NULL diag is allowed. */
	errno = 0;
	ck_assert_ptr_null(fw_ruleset_parse("bogus", 5, NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* A long file name keeps its end, where the file's own name is. */
START_TEST(test_long_name)
{
	char name[300];
	struct fw_diag d;

	memset(name, 'd', sizeof(name));
	strcpy(name + 250, "/web.rules");
	ck_assert_ptr_null(fw_ruleset_parse("\nbogus", 6, name, &d));
	ck_assert_msg(!strncmp(d.msg, "...ddd", 6), "%s", d.msg);
	ck_assert_msg(strstr(d.msg, "/web.rules:2: unknown keyword 'bogus'"), "%s", d.msg);
}
END_TEST

START_TEST(test_binary)
{
	static const char nul[] = "accept in\n\nacc\0ept in\n";
	struct fw_diag d;

	ck_assert_ptr_null(fw_ruleset_parse(nul, sizeof(nul) - 1, "b", &d));
	ck_assert_str_eq(d.msg, "b:3: binary data (NUL byte) at column 4");
	ck_assert_uint_eq(d.line, 3);
}
END_TEST

START_TEST(test_limits)
{
	size_t n = 200000, i;
	char *big = malloc(n + 1), comment[FW_MAX_COMMENT + 40];
	struct fw_diag d;
	struct fw_ruleset *rs;
	int k;

	/* A line one byte over the limit, after a good line. */
	memset(big, ' ', n);
	memcpy(big, "accept in\n", 10);
	memcpy(big + 10, "accept in", 9);
	big[10 + FW_MAX_LINE + 1] = '\n';
	ck_assert_ptr_null(fw_ruleset_parse(big, 10 + FW_MAX_LINE + 2, "t", &d));
	ck_assert_msg(strstr(d.msg, "t:2: line too long"), "%s", d.msg);
	/* Exactly at the limit is fine. */
	ck_assert_ptr_nonnull(rs = fw_ruleset_parse(big, 10 + FW_MAX_LINE, "t", &d));
	fw_ruleset_destroy(rs);

	/* A huge line without newline. */
	memset(big, 'a', n);
	ck_assert_ptr_null(fw_ruleset_parse(big, n, "t", &d));
	ck_assert_msg(strstr(d.msg, "t:1: line too long"), "%s", d.msg);

	/* Comment length: FW_MAX_COMMENT ok, one more refused. */
	for (k = 0; k <= 1; k++) {
		int len = FW_MAX_COMMENT + k;

		snprintf(comment, sizeof(comment), "accept in comment \"%.*s\"", len,
			 "0123456789012345678901234567890123456789012345678901234567890123456789"
			 "0123456789012345678901234567890123456789012345678901234567890123456789");
		rs = parse(comment, &d);
		ck_assert_msg(!!rs == (k == 0), "len %d: %s", len, d.msg);
		fw_ruleset_destroy(rs);
	}

	/* Too many words on a line. */
	for (i = 0; i < 70; i++)
		memcpy(big + 2 * i, "x ", 2);
	ck_assert_ptr_null(fw_ruleset_parse(big, 140, "t", &d));
	ck_assert_msg(strstr(d.msg, "t:1: too many words"), "%s", d.msg);
	free(big);
}
END_TEST

START_TEST(test_too_many_rules)
{
	size_t per = strlen("accept in\n"), n = FW_MAX_RULES + 1;
	char *buf = malloc(per * n);
	struct fw_diag d;
	struct fw_ruleset *rs;
	size_t i;

	for (i = 0; i < n; i++)
		memcpy(buf + i * per, "accept in\n", per);
	rs = fw_ruleset_parse(buf, per * (n - 1), "t", &d);
	ck_assert_ptr_nonnull(rs);
	ck_assert_uint_eq(fw_ruleset_count(rs), FW_MAX_RULES);
	fw_ruleset_destroy(rs);
	ck_assert_ptr_null(fw_ruleset_parse(buf, per * n, "t", &d));
	ck_assert_msg(strstr(d.msg, "t:4097: too many rules"), "%s", d.msg);
	free(buf);
}
END_TEST

static char tmpdir[64];

static void tmp_setup(void)
{
	strcpy(tmpdir, "/tmp/fw-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

START_TEST(test_load)
{
	char path[128];
	struct fw_diag d;
	struct fw_ruleset *rs;
	char *big;

	snprintf(path, sizeof(path), "%s/ok.rules", tmpdir);
	write_file(path, "policy in drop\naccept in tcp dport 80\n", 38);
	rs = fw_ruleset_load(path, &d);
	ck_assert_msg(rs, "%s", d.msg);
	ck_assert_uint_eq(fw_ruleset_count(rs), 1);
	ck_assert_int_eq(fw_ruleset_policy(rs, FW_DIR_IN), FW_DROP);
	fw_ruleset_destroy(rs);

	snprintf(path, sizeof(path), "%s/bad.rules", tmpdir);
	write_file(path, "accept in\ndrop in tcp dport 99999\n", 34);
	errno = 0;
	ck_assert_ptr_null(fw_ruleset_load(path, &d));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(d.msg, "/bad.rules:2: port '99999' out of range"), "%s", d.msg);

	snprintf(path, sizeof(path), "%s/missing.rules", tmpdir);
	errno = 0;
	ck_assert_ptr_null(fw_ruleset_load(path, &d));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_msg(strstr(d.msg, "missing.rules: No such file"), "%s", d.msg);

	errno = 0;
	ck_assert_ptr_null(fw_ruleset_load(tmpdir, &d));
	ck_assert_int_eq(errno, EISDIR);

	/* Over the size limit: refused before parsing. */
	snprintf(path, sizeof(path), "%s/big.rules", tmpdir);
	big = malloc(FW_MAX_FILE_BYTES + 1);
	memset(big, '\n', FW_MAX_FILE_BYTES + 1);
	write_file(path, big, FW_MAX_FILE_BYTES + 1);
	errno = 0;
	ck_assert_ptr_null(fw_ruleset_load(path, &d));
	ck_assert_int_eq(errno, EFBIG);
	ck_assert_msg(strstr(d.msg, "file too large"), "%s", d.msg);
	/* At the limit: accepted (all blank lines). */
	write_file(path, big, FW_MAX_FILE_BYTES);
	rs = fw_ruleset_load(path, &d);
	ck_assert_msg(rs, "%s", d.msg);
	fw_ruleset_destroy(rs);
	free(big);
}
END_TEST

/* Garbage and mutated files: never a crash (ASan build checks leaks). */
START_TEST(test_garbage)
{
	static const char good[] =
		"policy in drop\n"
		"accept in tcp dport 80,443 from 10.0.0.0/8 ct new,established comment \"web\"\n"
		"drop in tcp dport 22\n"
		"reject in tcp from !192.168.0.0/16 dport 8000-8999\n"
		"accept out udp to 2001:db8::/32 sport 1-1023\n"
		"accept in tcp flags syn,!ack\n";
	char buf[sizeof(good)];
	unsigned int seed = 12345, i, accepted = 0;

	for (i = 0; i < 20000; i++) {
		struct fw_diag d;
		struct fw_ruleset *rs;
		size_t len = sizeof(good) - 1, k;

		memcpy(buf, good, len);
		for (k = 0; k < 1 + (size_t)rand_r(&seed) % 4; k++)
			buf[rand_r(&seed) % len] = (char)(i & 1 ? rand_r(&seed) :
				" ,-/!:\"#0123456789abcdefin\n"[rand_r(&seed) % 27]);
		len = rand_r(&seed) % 8 ? len : (size_t)rand_r(&seed) % len;
		rs = fw_ruleset_parse(buf, len, "fuzz", &d);
		if (rs) {
			char *text = fw_nft_render(rs);

			ck_assert_ptr_nonnull(text);
			free(text);
			accepted++;
		} else {
			ck_assert_msg(!strncmp(d.msg, "fuzz:", 5), "%s", d.msg);
			ck_assert_uint_gt(d.line, 0);
		}
		fw_ruleset_destroy(rs);
	}
	/* Some mutations stay valid (e.g. digits changed): both paths ran. */
	ck_assert_uint_gt(accepted, 0);
	ck_assert_uint_lt(accepted, 20000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fw_rules");
	TCase *tc = tcase_create("parse");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_empty_file);
	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_keywords);
	tcase_add_test(tc, test_normalise);
	tcase_add_test(tc, test_numbers_and_lines);
	tcase_add_loop_test(tc, test_errors, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_error_no_diag);
	tcase_add_test(tc, test_long_name);
	tcase_add_test(tc, test_binary);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_too_many_rules);
	tcase_add_test(tc, test_garbage);
	suite_add_tcase(s, tc);

	tc = tcase_create("load");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, test_load);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
