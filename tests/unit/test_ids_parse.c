// SPDX-License-Identifier: MIT
/* vnfs/ids rule parser: good rules, unsupported options, malformed rules. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ids.h"

static struct ids_diags diags;

static struct ids_ruleset *load(const char *text)
{
	ids_diags_free(&diags);
	return ids_ruleset_load_mem("t.rules", text, strlen(text), NULL,
				    &diags);
}

static bool has_diag(const char *exact)
{
	for (size_t i = 0; i < diags.n; i++)
		if (!strcmp(diags.msg[i], exact))
			return true;
	return false;
}

static void dump_diags(void)
{
	for (size_t i = 0; i < diags.n; i++)
		fprintf(stderr, "  diag: %s\n", diags.msg[i]);
}

static void teardown(void)
{
	ids_diags_free(&diags);
}

#define HDR "alert tcp any any -> any 80 "

START_TEST(good_rules)
{
	const char *text =
		"# comment\n"
		"ipvar HOME_NET [10.0.0.0/8,192.168.0.0/16]\n"
		"portvar HTTP_PORTS [80,8080:8090]\n"
		"var EXTERNAL_NET !$HOME_NET\n"
		"\n"
		"alert tcp $EXTERNAL_NET any -> $HOME_NET $HTTP_PORTS "
		"(msg:\"web attack \\\"x\\\"\"; flow:to_server,established; "
		"content:\"GET\"; depth:3; content:\"/etc/passwd\"; nocase; "
		"distance:0; classtype:web-application-attack; sid:1000; "
		"rev:3; metadata:policy balanced-ips drop; reference:cve,2020-1; "
		"priority:2;)\n"
		"drop tcp any any <> any any (msg:\"hex\"; content:\"|de ad|be|EF|\"; "
		"offset:2; sid:1001;)\n"
		"reject ip any any -> any any (msg:\"pcre\"; pcre:\"/a[0-9]+b/ismx\"; "
		"sid:1002; rev:1;)\n"
		"alert tcp any any -> any any (msg:\"bits\"; flowbits:set,x; "
		"flowbits:noalert; content:\"a;b\"; sid:1003;)\n"
		"alert tcp any any -> any any (msg:\"multi\"; \\\n"
		"   content:\"x\"; sid:1004;)\n";
	struct ids_ruleset *rs = load(text);
	const struct ids_rule_info *ri;

	ck_assert_ptr_nonnull(rs);
	dump_diags();
	ck_assert_uint_eq(diags.n, 0);
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 5);
	ri = ids_ruleset_find(rs, 1000);
	ck_assert_ptr_nonnull(ri);
	ck_assert_str_eq(ri->msg, "web attack \"x\"");
	ck_assert_str_eq(ri->classtype, "web-application-attack");
	ck_assert_uint_eq(ri->rev, 3);
	ck_assert_int_eq(ri->action, IDS_ACTION_ALERT);
	ck_assert_int_eq(ri->line, 6);
	ck_assert_str_eq(ri->file, "t.rules");
	ri = ids_ruleset_find(rs, 1001);
	ck_assert_int_eq(ri->action, IDS_ACTION_DROP);
	ck_assert_str_eq(ri->classtype, "");
	ck_assert_int_eq(ids_ruleset_find(rs, 1002)->action,
			 IDS_ACTION_REJECT);
	ck_assert_int_eq(ids_ruleset_find(rs, 1004)->line, 10);
	ck_assert_ptr_null(ids_ruleset_find(rs, 999));
	ids_ruleset_put(rs);
}
END_TEST

/* Each unsupported thing: reported at its line, the rule skipped. */
static const struct {
	const char *rule;
	const char *diag;
} unsupported[] = {
	{ HDR "(byte_extract:1,0,a; byte_extract:1,0,b; byte_extract:1,0,c; "
	  "sid:1;)", "unsupported byte_extract 'c' (at most 2 variables, each "
	  "named once)" },
	{ HDR "(content:\"a\"; byte_test:4,>,1,0,relative,dce; sid:1;)",
	  "unsupported byte_test flag 'dce'" },
	{ HDR "(content:\"a\"; byte_jump:4,0,from_end; sid:1;)",
	  "unsupported byte_jump flag 'from_end'" },
	{ "alert ip any any -> any any (dsize:>10; sid:1;)",
	  "unsupported option 'dsize'" },
	{ HDR "(content:\"a\"; threshold:type limit,track by_src,count 1,"
	  "seconds 60; sid:1;)", "unsupported option 'threshold'" },
	{ HDR "(content:\"a\"; tag:session,10,packets; sid:1;)",
	  "unsupported option 'tag'" },
	{ HDR "(flow:not_established; sid:1;)",
	  "unsupported flow option 'not_established'" },
	{ HDR "(flowbits:set,a,grp; sid:1;)",
	  "unsupported flowbits 'a,grp' (groups are not supported)" },
	{ HDR "(flowbits:set,a|b; sid:1;)",
	  "unsupported flowbits 'a|b' ('|' only tests bits)" },
	{ HDR "(flowbits:reset; sid:1;)", "unsupported flowbits 'reset'" },
	{ HDR "(flowbits:setx,a; sid:1;)",
	  "unsupported flowbits operation 'setx'" },
	{ "pass tcp any any -> any any (sid:1;)", "unsupported action 'pass'" },
	{ "log tcp any any -> any any (sid:1;)", "unsupported action 'log'" },
	{ "activate tcp any any -> any any (sid:1;)",
	  "unsupported action 'activate'" },
	{ "dynamic tcp any any -> any any (sid:1;)",
	  "unsupported action 'dynamic'" },
	{ "alert sctp any any -> any any (sid:1;)",
	  "unsupported protocol 'sctp'" },
	{ "alert udp any any -> any 53 (flowbits:isset,x; sid:1;)",
	  "unsupported flowbits on a udp rule (datagrams are inspected one by "
	  "one)" },
	{ "include $RULE_PATH/x.rules", "unsupported keyword 'include'" },
	{ "preprocessor stream5_global: track_tcp yes",
	  "unsupported keyword 'preprocessor'" },
	{ "config detection: search-method ac", "unsupported keyword 'config'" },
};

/* Loads a good rule (sid 7) and @rule two lines below it, so that line
 * numbers are not all 1; @want gets the diagnostic expected for line 3. */
static struct ids_ruleset *load_line3(const char *rule, const char *diag, char *want, size_t size)
{
	char text[512];
	struct ids_ruleset *rs;

	snprintf(text, sizeof(text), HDR "(content:\"ok\"; sid:7;)\n\n%s\n", rule);
	snprintf(want, size, "t.rules:3: %s", diag);
	rs = load(text);
	ck_assert_ptr_nonnull(rs);
	dump_diags();
	return rs;
}

START_TEST(unsupported_option)
{
	char want[256];
	struct ids_ruleset *rs;

	rs = load_line3(unsupported[_i].rule, unsupported[_i].diag, want, sizeof(want));
	ck_assert_uint_eq(diags.n, 1);
	ck_assert_msg(has_diag(want), "want '%s'", want);
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 1);
	ck_assert_ptr_nonnull(ids_ruleset_find(rs, 7));
	ids_ruleset_put(rs);
}
END_TEST

/* Rules no TOE can feed: skipped, listed apart, not a problem. */
static const struct {
	const char *rule;
	const char *diag;
} not_applicable[] = {
	{ "alert icmp any any -> any any (itype:8; sid:1;)",
	  "not applicable: protocol 'icmp' (TOEs carry TCP and UDP payload)" },
	{ HDR "(flow:stateless; flags:SA,12; content:\"x\"; sid:1;)",
	  "not applicable: 'flags' tests packet headers, a TOE delivers "
	  "payload only" },
	{ HDR "(ttl:<5; sid:1;)", "not applicable: 'ttl' tests packet "
	  "headers, a TOE delivers payload only" },
	{ "alert ip any any -> any any (ip_proto:47; sid:1;)",
	  "not applicable: 'ip_proto' tests packet headers, a TOE delivers "
	  "payload only" },
	{ HDR "(content:\"a\"; dsize:>10; sid:1;)", "not applicable: 'dsize' "
	  "tests the size of a TCP segment, a TOE delivers a byte stream" },
	{ HDR "(flow:to_server,no_stream; content:\"a\"; sid:1;)",
	  "not applicable: flow:no_stream never applies: a TOE delivers "
	  "reassembled streams, not packets" },
	{ "alert udp any any -> any 53 (flow:to_server,only_stream; sid:1;)",
	  "not applicable: flow:only_stream never applies: a TOE delivers "
	  "datagrams, not reassembled" },
	/* an unsupported option before does not hide it */
	{ HDR "(threshold:type limit; ack:0; sid:1;)", "not applicable: "
	  "'ack' tests packet headers, a TOE delivers payload only" },
};

START_TEST(not_applicable_rule)
{
	char want[256];
	struct ids_ruleset *rs;

	rs = load_line3(not_applicable[_i].rule, not_applicable[_i].diag, want, sizeof(want));
	ck_assert_uint_eq(diags.n, 0);
	ck_assert_uint_eq(diags.nna, 1);
	ck_assert_str_eq(diags.na[0], want);
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 1);
	ids_ruleset_put(rs);
}
END_TEST

static const struct {
	const char *rule;
	const char *diag;
} malformed[] = {
	{ HDR "(msg:\"open; sid:1;)", "unterminated quote in 'msg'" },
	{ HDR "(byte_test:4,=>,1,0; sid:1;)", "bad byte_test operator '=>'" },
	{ HDR "(flowbits:isset,a&; sid:1;)", "bad flowbits name ''" },
	{ HDR "(flowbits:isset,a&b c; sid:1;)", "bad flowbits name 'b c'" },
	{ "alert udp any any -> any 53 (content:\"a\"; http_uri; sid:1;)",
	  "http buffers on a udp rule" },
	{ "alert udp any any -> any 53 (dsize:>5,raw; sid:1;)",
	  "bad dsize: want N, <N, >N, A<>B or A<=>B" },
	{ HDR "(urilen:5,both; sid:1;)", "bad urilen: want N, <N, >N, A<>B "
	  "or A<=>B, then raw or norm" },
	{ HDR "(urilen:5<>; sid:1;)", "bad urilen bound ''" },
	{ HDR "(urilen:=5; sid:1;)", "bad urilen '=5'" },
	{ HDR "(content:\"a\"; http_cookie; http_raw_uri; sid:1;)",
	  "content with two http buffers" },
	{ HDR "(byte_test:5,>,1,0; sid:1;)",
	  "byte_test: 5 bytes is too many for a binary number" },
	{ HDR "(byte_test:11,>,1,0,string; sid:1;)", "bad byte count '11'" },
	{ HDR "(byte_test:2,>,1,0,hex; sid:1;)",
	  "byte_test: hex/dec/oct need 'string'" },
	{ HDR "(byte_test:2,>,1; sid:1;)", "'byte_test' needs more arguments" },
	{ HDR "(byte_jump:2,0,multiplier 0; sid:1;)", "bad multiplier '0'" },
	{ HDR "(byte_jump:2,0,sideways; sid:1;)",
	  "bad byte_jump flag 'sideways'" },
	{ HDR "(isdataat:x1; sid:1;)", "unknown variable for isdataat offset "
	  "'x1'" },
	{ HDR "(content:\"a\"; byte_test:4,>,len,0; sid:1;)",
	  "unknown variable for byte_test value 'len'" },
	{ HDR "(content:\"a\"; within:len; sid:1;)", "bad value for 'within'" },
	{ HDR "(byte_extract:1,0,9x; sid:1;)", "bad byte_extract name '9x'" },
	{ HDR "(content:\"a\"; detection_filter:track by_src, count 5; sid:1;)",
	  "detection_filter needs track, count and seconds" },
	{ HDR "(content:\"a\"; detection_filter:track by_rule, count 5, "
	  "seconds 1; sid:1;)", "bad detection_filter 'track by_rule'" },
	{ HDR "(content:\"a\"; detection_filter:track by_src, count 0, "
	  "seconds 1; sid:1;)", "bad detection_filter 'count 0'" },
	{ HDR "(base64_data; content:\"a\"; sid:1;)",
	  "base64_data without base64_decode" },
	{ HDR "(base64_decode:bits 4; sid:1;)",
	  "bad base64_decode argument 'bits 4'" },
	{ HDR "(base64_decode; base64_data; base64_decode; sid:1;)",
	  "base64_decode of decoded data" },
	{ HDR "(byte_extract:1,0,n,align 3; sid:1;)", "bad align: 2 or 4" },
	{ HDR "(byte_extract:1,0; sid:1;)", "'byte_extract' needs more arguments" },
	{ HDR "(byte_extract:1,0,n,post_offset 2; sid:1;)",
	  "bad byte_extract flag 'post_offset 2'" },
	{ HDR "(isdataat:-1; sid:1;)", "bad isdataat offset '-1'" },
	{ HDR "(isdataat:1,relativ; sid:1;)", "bad isdataat flag 'relativ'" },
	{ HDR "(content:\"a\"; byte_jump:1,0; distance:1; sid:1;)",
	  "'distance' without a preceding content" },
	{ HDR "(content:\"abc; sid:1;)", "unterminated quote in 'content'" },
	{ "alert tcp any any -> any 65536 (sid:1;)", "bad port '65536'" },
	{ "alert tcp any any -> any http (sid:1;)", "bad port 'http'" },
	{ "alert tcp any 90:80 -> any any (sid:1;)", "bad port '90:80'" },
	{ "alert tcp any [80,:] -> any any (sid:1;)", "bad port ':'" },
	{ HDR "(msg:\"no sid\"; content:\"a\";)", "missing sid" },
	{ HDR "(sid:0;)", "bad sid" },
	{ HDR "(sid:12x;)", "bad sid" },
	{ "alert tcp $NOPE any -> any any (sid:1;)",
	  "unknown variable 'NOPE'" },
	{ "alert tcp any $NOPORTS -> any any (sid:1;)",
	  "unknown variable 'NOPORTS'" },
	{ "alert tcp 10.0.0.300 any -> any any (sid:1;)",
	  "bad address '10.0.0.300'" },
	{ "alert tcp 10.0.0.0/33 any -> any any (sid:1;)",
	  "bad address '10.0.0.0/33'" },
	{ "alert tcp ![1.2.3.4,!5.6.7.8] any -> any any (sid:1;)",
	  "nested negation '!5.6.7.8' not supported" },
	{ "alert tcp [1.2.3.4 any -> any any (sid:1;)",
	  "malformed rule header" },
	{ "alert tcp any any => any any (sid:1;)", "bad direction '=>'" },
	{ "alert tcp any any -> any any sid:1;", "missing rule options" },
	{ "alert tcp any any -> any any (sid:1;", "missing ')'" },
	{ "alert tcp any any -> any any (sid:1) x", "missing ';' after 'sid'" },
	{ "alert tcp any any -> any any (sid:1; =x;)",
	  "malformed option near '=x;)'" },
	{ "alert tcp any any -> any any (sid:1;) x", "text after ')'" },
	{ HDR "(nocase; sid:1;)", "'nocase' without a preceding content" },
	{ HDR "(depth:4; sid:1;)", "'depth' without a preceding content" },
	{ HDR "(content:\"abcdef\"; depth:3; sid:1;)",
	  "depth 3 shorter than content" },
	{ HDR "(content:\"a\"; content:\"bcd\"; within:2; sid:1;)",
	  "within 2 shorter than content" },
	{ HDR "(content:\"a\"; offset:1; distance:2; sid:1;)",
	  "offset/depth mixed with distance/within" },
	{ HDR "(content:\"a\"; offset:1; offset:2; sid:1;)",
	  "'offset' given twice" },
	{ HDR "(content:\"a\"; offset:-1; sid:1;)", "bad value for 'offset'" },
	{ HDR "(content:\"a\"; distance:x; sid:1;)",
	  "bad value for 'distance'" },
	{ HDR "(content:\"|4|\"; sid:1;)", "odd number of hex digits in content" },
	{ HDR "(content:\"|4g|\"; sid:1;)", "bad hex digit 'g' in content" },
	{ HDR "(content:\"|41\"; sid:1;)", "unterminated '|' in content" },
	{ HDR "(content:\"\"; sid:1;)", "empty content" },
	{ HDR "(content:abc; sid:1;)", "value must be a quoted string" },
	{ HDR "(pcre:\"/a(/\"; sid:1;)",
	  "bad pcre at offset 2: missing closing parenthesis" },
	{ HDR "(pcre:\"abc\"; sid:1;)", "pcre must be \"/regex/flags\"" },
	{ HDR "(content:\"a\"; http_uri; http_header; sid:1;)",
	  "content with two http buffers" },
	{ HDR "(flow:to_server,to_client; sid:1;)",
	  "conflicting flow directions" },
	{ HDR "(content:\"a\"; nocase:1; sid:1;)", "'nocase' takes no value" },
	{ HDR "(sid:1; sid;)", "'sid' needs a value" },
	{ "ipvar BAD [1.2.3.4", "ipvar BAD: unterminated list '[1.2.3.4'" },
	{ "portvar P 70000", "portvar P: bad port '70000'" },
	{ "var", "malformed var line" },
	{ HDR "(flow:to_client; content:\"a\"; http_uri; sid:1;)",
	  "http buffers other than http_header are request buffers: not "
	  "with to_client" },
	{ HDR "(flow:to_server; file_data; content:\"a\"; sid:1;)",
	  "response buffers (file_data, http_stat_*) need flow:to_client" },
	{ HDR "(content:\"200\"; http_stat_code; sid:1;)",
	  "response buffers (file_data, http_stat_*) need flow:to_client" },
	{ HDR "(flow:to_client; file_data:mime; sid:1;)",
	  "unsupported file_data 'mime'" },
};

START_TEST(malformed_rule)
{
	char text[512], want[256];
	struct ids_ruleset *rs;

	snprintf(text, sizeof(text),
		 "# c\n" HDR "(content:\"ok\"; sid:7;)\n%s\n"
		 HDR "(content:\"ok2\"; sid:8;)\n", malformed[_i].rule);
	snprintf(want, sizeof(want), "t.rules:3: %s", malformed[_i].diag);
	rs = load(text);
	ck_assert_ptr_nonnull(rs);
	dump_diags();
	ck_assert_uint_eq(diags.n, 1);
	ck_assert_msg(has_diag(want), "want '%s'", want);
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 2);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(crlf_file)
{
	struct ids_ruleset *rs = load(
		"# dos\r\nportvar P [80, 8080]\r\n"
		"alert tcp any any -> any $P (msg:\"a\"; \\\r\n"
		"  content:\"x\"; sid:1;)\r\n"
		HDR "(content:\"y\"; sid:2;)\r\n");

	ck_assert_ptr_nonnull(rs);
	dump_diags();
	ck_assert_uint_eq(diags.n, 0);
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 2);
	ck_assert_int_eq(ids_ruleset_find(rs, 2)->line, 5);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(duplicate_sid)
{
	struct ids_ruleset *rs = load(
		HDR "(content:\"a\"; sid:5;)\n"
		HDR "(content:\"b\"; sid:6;)\n"
		HDR "(content:\"c\"; sid:5;)\n");

	ck_assert_ptr_nonnull(rs);
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 2);
	ck_assert(has_diag("t.rules:3: duplicate sid 5 (first at t.rules:1)"));
	ck_assert_int_eq(ids_ruleset_find(rs, 5)->line, 1);
	ids_ruleset_put(rs);
}
END_TEST

/* A temporary file that is gone whatever happens: its /proc/self/fd path. */
static int anon_file(char *path, size_t len)
{
	char tmpl[] = "/tmp/test_ids_XXXXXX";
	int fd = mkstemp(tmpl);

	ck_assert_int_ge(fd, 0);
	unlink(tmpl);
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

START_TEST(vars_file)
{
	char path[64];
	int fd = anon_file(path, sizeof(path));
	const char *vars = "ipvar HOME_NET 10.1.0.0/16\n"
			   "portvar WEB [80,443]\n"
			   "alert tcp any any -> any any (sid:1;)\n"
			   "ipvar BAD $UNDEFINED\n";
	const char *rule = "alert tcp any any -> $HOME_NET $WEB "
			   "(content:\"x\"; sid:2;)\n";
	struct ids_ruleset *rs;
	char want[300];

	ck_assert_int_eq(write(fd, vars, strlen(vars)), (int)strlen(vars));
	ids_diags_free(&diags);
	rs = ids_ruleset_load_mem("t.rules", rule, strlen(rule), path, &diags);
	ck_assert_ptr_nonnull(rs);
	dump_diags();
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 1);
	ck_assert_uint_eq(diags.n, 2);
	snprintf(want, sizeof(want), "%s:3: rule in a variables file", path);
	ck_assert(has_diag(want));
	snprintf(want, sizeof(want),
		 "%s:4: ipvar BAD: unknown variable 'UNDEFINED'", path);
	ck_assert(has_diag(want));
	ids_ruleset_put(rs);
	close(fd);
}
END_TEST

START_TEST(load_errno)
{
	errno = 0;
	ck_assert_ptr_null(ids_ruleset_load("/nonexistent/x.rules", NULL,
					    &diags));
	ck_assert_int_eq(errno, ENOENT);
	errno = 0;
	ck_assert_ptr_null(ids_ruleset_load("/tmp", NULL, &diags));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ids_ruleset_load_mem("t", "", 0, "/nonexistent/v",
						&diags));
	ck_assert_int_eq(errno, ENOENT);
	errno = 0;
	ck_assert_ptr_null(ids_ruleset_load(NULL, NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
	{
		char path[64];
		int fd = anon_file(path, sizeof(path));

		/* sparse: 65 MiB of nothing */
		ck_assert_int_eq(ftruncate(fd, 65 << 20), 0);
		errno = 0;
		ck_assert_ptr_null(ids_ruleset_load(path, NULL, &diags));
		ck_assert_int_eq(errno, EFBIG);
		close(fd);
	}
}
END_TEST

START_TEST(empty_ruleset)
{
	struct ids_ruleset *rs = load("# nothing\n\n   \n");

	ck_assert_ptr_nonnull(rs);
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 0);
	ck_assert_uint_eq(diags.n, 0);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(huge_line)
{
	size_t n = 200000;
	char *text = malloc(n + 256);
	struct ids_ruleset *rs;

	strcpy(text, HDR "(content:\"");
	memset(text + strlen(text), 'A', n);
	strcpy(text + strlen(HDR) + 10 + n, "\"; sid:1;)\n" HDR
	       "(content:\"b\"; sid:2;)\n");
	rs = load(text);
	ck_assert_ptr_nonnull(rs);
	dump_diags();
	ck_assert(has_diag("t.rules:1: line longer than 65536 bytes"));
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 1);
	ck_assert_ptr_nonnull(ids_ruleset_find(rs, 2));
	ids_ruleset_put(rs);
	free(text);
}
END_TEST

START_TEST(binary_garbage)
{
	/* deterministic pseudo-random bytes, with rule-like fragments */
	static const char *frags[] = { "alert tcp any any -> any any (",
		"content:\"", "\";", "sid:", "pcre:\"/", "|", "[", "]", "$",
		"!", ":", ";", ")", "\\\n", "\n", "flowbits:", "ipvar X " };
	uint64_t x = 0x9e3779b97f4a7c15ull + (uint64_t)_i;
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	struct ids_ruleset *rs;

	while (n < cap - 64) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (x % 3 == 0) {
			const char *f = frags[(x >> 8) % (sizeof(frags) /
							  sizeof(frags[0]))];

			memcpy(buf + n, f, strlen(f));
			n += strlen(f);
		} else {
			buf[n++] = (char)(x >> 24);
		}
	}
	ids_diags_free(&diags);
	rs = ids_ruleset_load_mem("g.rules", buf, n, NULL, &diags);
	ck_assert_ptr_nonnull(rs);
	ck_assert_uint_gt(diags.n, 0);
	for (size_t i = 0; i < diags.n; i++)
		ck_assert_msg(!strncmp(diags.msg[i], "g.rules:", 8),
			      "%s", diags.msg[i]);
	ids_ruleset_put(rs);
	free(buf);
}
END_TEST

START_TEST(nul_byte_reported)
{
	const char text[] = HDR "(content:\"a\0b\"; sid:1;)\n" HDR
			    "(content:\"c\"; sid:2;)\n";
	struct ids_ruleset *rs;

	ids_diags_free(&diags);
	rs = ids_ruleset_load_mem("t.rules", text, sizeof(text) - 1, NULL,
				  &diags);
	ck_assert_ptr_nonnull(rs);
	ck_assert(has_diag("t.rules:1: NUL byte in line"));
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 1);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(refcount)
{
	struct ids_ruleset *rs = load(HDR "(content:\"a\"; sid:1;)\n");
	struct ids_flow_key k = { .family = AF_INET, .server_port = 80 };
	struct ids_flow *f;

	ck_assert_ptr_nonnull(rs);
	ck_assert_ptr_eq(ids_ruleset_get(rs), rs);
	ids_ruleset_put(rs);
	f = ids_flow_create(rs, &k);
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_eq(ids_flow_ruleset(f), rs);
	ids_ruleset_put(rs);	/* the flow keeps it alive */
	ck_assert_uint_eq(ids_ruleset_nrules(ids_flow_ruleset(f)), 1);
	ids_flow_destroy(f);	/* frees it; ASan/LSan check the rest */
}
END_TEST

/* The shipped sample rules stay loadable without a single diagnostic. */
START_TEST(sample_rules)
{
	const char *top = getenv("TOCHAIN_TOP");
	char rules[4096], vars[4096];
	struct ids_ruleset *rs;

	snprintf(rules, sizeof(rules), "%s/vnfs/ids/rules/local.rules",
		 top ? top : ".");
	snprintf(vars, sizeof(vars), "%s/vnfs/ids/rules/vars.conf",
		 top ? top : ".");
	ids_diags_free(&diags);
	rs = ids_ruleset_load(rules, vars, &diags);
	ck_assert_msg(rs, "%s: %s", rules, strerror(errno));
	dump_diags();
	ck_assert_uint_eq(diags.n, 0);
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 20);
	ck_assert_int_eq(ids_ruleset_find(rs, 9000041)->action,
			 IDS_ACTION_DROP);
	ids_ruleset_put(rs);
}
END_TEST

/* tests/data/ids/coverage.rules: every feature loads; the rest is listed. */
START_TEST(coverage_rules)
{
	const char *top = getenv("TOCHAIN_TOP");
	char rules[4096], vars[4096], want[4200];
	struct ids_ruleset *rs;

	snprintf(rules, sizeof(rules), "%s/tests/data/ids/coverage.rules",
		 top ? top : ".");
	snprintf(vars, sizeof(vars), "%s/tests/data/ids/coverage.vars",
		 top ? top : ".");
	ids_diags_free(&diags);
	rs = ids_ruleset_load(rules, vars, &diags);
	ck_assert_msg(rs, "%s: %s", rules, strerror(errno));
	dump_diags();
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 26);
	ck_assert_uint_eq(diags.n, 2);
	for (int i = 0; i < 2; i++) {
		snprintf(want, sizeof(want), "%s:%d: unsupported option", rules,
			 51 + i);
		ck_assert_msg(!strncmp(diags.msg[i], want, strlen(want)),
			      "%s", diags.msg[i]);
	}
	ck_assert_uint_eq(diags.nna, 6);
	for (int i = 0; i < 6; i++) {
		snprintf(want, sizeof(want), "%s:%d: not applicable: ", rules,
			 42 + i);
		ck_assert_msg(!strncmp(diags.na[i], want, strlen(want)),
			      "%s", diags.na[i]);
	}
	for (uint32_t sid = 9100001; sid <= 9100025; sid++)
		ck_assert_msg(ids_ruleset_find(rs, sid), "sid %u", sid);
	ids_ruleset_put(rs);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ids_parse");
	TCase *tc = tcase_create("parse");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, good_rules);
	tcase_add_loop_test(tc, unsupported_option, 0,
			    sizeof(unsupported) / sizeof(unsupported[0]));
	tcase_add_loop_test(tc, not_applicable_rule, 0,
			    sizeof(not_applicable) / sizeof(not_applicable[0]));
	tcase_add_loop_test(tc, malformed_rule, 0,
			    sizeof(malformed) / sizeof(malformed[0]));
	tcase_add_test(tc, crlf_file);
	tcase_add_test(tc, duplicate_sid);
	tcase_add_test(tc, vars_file);
	tcase_add_test(tc, load_errno);
	tcase_add_test(tc, empty_ruleset);
	tcase_add_test(tc, huge_line);
	tcase_add_loop_test(tc, binary_garbage, 0, 8);
	tcase_add_test(tc, nul_byte_reported);
	tcase_add_test(tc, refcount);
	tcase_add_test(tc, sample_rules);
	tcase_add_test(tc, coverage_rules);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
