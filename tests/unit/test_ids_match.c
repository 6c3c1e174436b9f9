// SPDX-License-Identifier: MIT
/*
 * vnfs/ids matcher and flows: content modifiers, pcre, chunk boundaries,
 * interleaved flows, flowbits, verdicts, headers, reload.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ids.h"

static struct ids_worker *w;

static void setup(void)
{
	w = ids_worker_create();
	ck_assert_ptr_nonnull(w);
}

static void teardown(void)
{
	ids_worker_destroy(w);
	w = NULL;
}

static struct ids_ruleset *load(const char *text)
{
	struct ids_diags d = { 0 };
	struct ids_ruleset *rs = ids_ruleset_load_mem("m.rules", text,
						      strlen(text), NULL, &d);

	for (size_t i = 0; i < d.n; i++)
		fprintf(stderr, "diag: %s\n", d.msg[i]);
	ck_assert_ptr_nonnull(rs);
	ck_assert_uint_eq(d.n, 0);
	ids_diags_free(&d);
	return rs;
}

static struct ids_flow_key key4(const char *cli, uint16_t cport,
				const char *srv, uint16_t sport)
{
	struct ids_flow_key k = { .family = AF_INET, .client_port = cport,
				  .server_port = sport };

	ck_assert_int_eq(inet_pton(AF_INET, cli, k.client_addr), 1);
	ck_assert_int_eq(inet_pton(AF_INET, srv, k.server_addr), 1);
	return k;
}

static struct ids_flow *flow(struct ids_ruleset *rs)
{
	struct ids_flow_key k = key4("192.168.1.10", 40000, "10.0.0.1", 80);
	struct ids_flow *f = ids_flow_create(rs, &k);

	ck_assert_ptr_nonnull(f);
	return f;
}

static bool has_sid(const struct ids_verdict *v, uint32_t sid)
{
	if (v->deny_rule && v->deny_rule->sid == sid)
		return true;
	for (unsigned i = 0; i < v->nalerts; i++)
		if (v->alerts[i]->sid == sid)
			return true;
	return false;
}

static void scan(struct ids_flow *f, enum ids_dir d, const void *p, size_t n,
		 struct ids_verdict *v)
{
	ck_assert_int_eq(ids_flow_scan(w, f, d, p, n, v), 0);
}

/* Whether rule 1 of @rules fires on @payload sent to the server at once. */
static bool fires(const char *rules, const char *payload)
{
	struct ids_ruleset *rs = load(rules);
	struct ids_flow *f = flow(rs);
	struct ids_verdict v;
	bool hit;

	scan(f, IDS_TO_SERVER, payload, strlen(payload), &v);
	hit = has_sid(&v, 1);
	ids_flow_destroy(f);
	ids_ruleset_put(rs);
	return hit;
}

#define R(opts) "alert tcp any any -> any any (" opts " sid:1;)"

static const struct {
	const char *rule;
	const char *payload;
	bool hit;
} cases[] = {
	{ R("content:\"abc\";"), "xxabcxx", true },
	{ R("content:\"abc\";"), "xxabxcx", false },
	{ R("content:\"ABC\"; nocase;"), "xxaBcx", true },
	{ R("content:\"ABC\";"), "xxaBcx", false },
	{ R("content:\"abc\"; offset:2;"), "xxabc", true },
	{ R("content:\"abc\"; offset:2;"), "xabc", false },
	{ R("content:\"abc\"; depth:5;"), "xxabc", true },
	{ R("content:\"abc\"; depth:5;"), "xxxabc", false },
	{ R("content:\"abc\"; offset:2; depth:3;"), "xxabc", true },
	{ R("content:\"abc\"; offset:2; depth:3;"), "xxxabc", false },
	{ R("content:\"abc\"; offset:2; depth:3;"), "xabcx", false },
	{ R("content:\"ab\"; content:\"cd\"; distance:2;"), "abxxcd", true },
	{ R("content:\"ab\"; content:\"cd\"; distance:2;"), "abxcd", false },
	{ R("content:\"ab\"; content:\"cd\"; within:4;"), "abxxcd", true },
	{ R("content:\"ab\"; content:\"cd\"; within:4;"), "abxxxcd", false },
	{ R("content:\"ab\"; content:\"cd\"; distance:1; within:3;"),
	  "abxcd", true },
	{ R("content:\"ab\"; content:\"cd\"; distance:1; within:3;"),
	  "abxxcd", true },
	{ R("content:\"ab\"; content:\"cd\"; distance:1; within:3;"),
	  "abxxxcd", false },
	{ R("content:\"ab\"; content:\"cd\"; distance:1; within:3;"),
	  "abcd", false },
	{ R("content:\"cd\"; content:\"ab\"; distance:-4; within:4;"),
	  "abcd", true },
	{ R("content:\"cd\"; content:\"ab\"; distance:-4; within:4;"),
	  "abxxcd", false },
	/* the second "ab" is the one that works: backtracking */
	{ R("content:\"ab\"; content:\"cd\"; within:2;"), "abxxabcd", true },
	{ R("content:\"ab\"; content:\"cd\"; within:2;"), "abxxabxcd", false },
	{ R("content:\"ab\"; content:!\"cd\"; within:4;"), "abxxxxcd", true },
	{ R("content:\"ab\"; content:!\"cd\"; within:4;"), "abcd", false },
	{ R("content:\"GET\"; content:!\"evil\";"), "GET good", true },
	{ R("content:\"GET\"; content:!\"evil\";"), "GET evil", false },
	{ R("content:\"|41 42|C\";"), "xxABCx", true },
	{ R("content:\"|41 42|C\";"), "xxABcx", false },
	{ R("content:\"a\\\"b\\;c\";"), "a\"b;c", true },
	{ R("content:\"x;y\";"), "x;y", true },
	{ R("pcre:\"/a\\d+b/\";"), "xa123b", true },
	{ R("pcre:\"/a\\d+b/\";"), "xab", false },
	{ R("pcre:\"/a\\d+B/i\";"), "xa1b", true },
	{ R("pcre:\"/a\\d+B/\";"), "xa1b", false },
	{ R("pcre:\"/a.b/s\";"), "a\nb", true },
	{ R("pcre:\"/a.b/\";"), "a\nb", false },
	{ R("pcre:\"/^foo/m\";"), "x\nfoo", true },
	{ R("pcre:\"/^foo/\";"), "x\nfoo", false },
	{ R("pcre:\"/a b c/x\";"), "abc", true },
	{ R("content:\"user=\"; pcre:\"/^admin/R\";"), "user=admin", true },
	{ R("content:\"user=\"; pcre:\"/^admin/R\";"), "user=xadmin", false },
	{ R("content:\"user=\"; pcre:\"/^admin/R\";"), "admin user=", false },
	{ R("content:\"x\"; pcre:!\"/y+/\";"), "x", true },
	{ R("content:\"x\"; pcre:!\"/y+/\";"), "xy", false },
	{ R("pcre:\"/(a|b)\\1/\";"), "xaax", true },
	{ R("pcre:\"/(a|b)\\1/\";"), "xabx", false },
	{ R("content:\"a\"; pcre:\"/b+c/R\"; content:\"d\"; distance:0; "
	    "within:1;"), "abbbcd", true },
	{ R("content:\"a\"; pcre:\"/b+c/R\"; content:\"d\"; distance:0; "
	    "within:1;"), "abbbcxd", false },
	{ R("content:\"x\"; uricontent:\"y\";"), "xy", false },
	/* byte_extract: a variable for later offsets, values and positions */
	{ R("content:\"L\"; byte_extract:1,0,n,relative; content:\"Z\"; "
	    "distance:n; within:1;"), "L\x03" "abcZ", true },
	{ R("content:\"L\"; byte_extract:1,0,n,relative; content:\"Z\"; "
	    "distance:n; within:1;"), "L\x02" "abcZ", false },
	{ R("content:\"L\"; byte_extract:1,0,n,relative; "
	    "byte_test:1,=,n,0,relative;"), "L\x05\x05", true },
	{ R("content:\"L\"; byte_extract:1,0,n,relative; "
	    "byte_test:1,=,n,0,relative;"), "L\x05\x06", false },
	{ R("content:\"a\"; byte_extract:1,0,n; isdataat:n;"), "\x03" "abc", true },
	{ R("content:\"a\"; byte_extract:1,0,n; isdataat:n;"), "\x04" "abc", false },
	{ R("content:\"Z\"; byte_extract:1,0,n; byte_jump:1,n; content:\"Z\"; "
	    "within:1;"), "\x02" "a\x01" "bZ", true },
	{ R("content:\"Z\"; byte_extract:1,0,n; byte_jump:1,n; content:\"Z\"; "
	    "within:1;"), "\x02" "a\x02" "bZ", false },
	{ R("content:\"Z\"; byte_extract:1,0,n,multiplier 2,align 4; "
	    "content:\"Z\"; distance:n; within:1;"), "\x03" "abcdefghZ", true },
	{ R("content:\"Z\"; byte_extract:1,0,n,multiplier 2,align 4; "
	    "content:\"Z\"; distance:n; within:1;"), "\x03" "abcdefZ", false },
	{ R("content:\"Z\"; byte_extract:1,0,n; content:\"Z\"; offset:n; "
	    "depth:1;"), "\x02" "aZ", true },
	{ R("content:\"Z\"; byte_extract:1,0,n; content:\"Z\"; offset:n; "
	    "depth:1;"), "\x01" "aZ", false },
	{ R("content:\"len=\"; byte_extract:2,0,n,relative,string,dec; "
	    "byte_test:2,>,n,1,relative,string,dec;"), "len=10 11", true },
	{ R("content:\"len=\"; byte_extract:2,0,n,relative,string,dec; "
	    "byte_test:2,>,n,1,relative,string,dec;"), "len=12 11", false },
	/* base64_decode + base64_data: contents and byte tests on the decoded */
	{ R("content:\"Basic \"; base64_decode:relative; base64_data; "
	    "content:\"admin:\";"), "Authorization: Basic YWRtaW46cGFzcw==", true },
	{ R("content:\"Basic \"; base64_decode:relative; base64_data; "
	    "content:\"admin:\";"), "Authorization: Basic dXNlcjpwYXNz", false },
	{ R("content:\"Basic \"; base64_decode:bytes 4,relative; base64_data; "
	    "content:\"adm\"; depth:3;"), "Basic YWRtaW46cGFzcw==", true },
	{ R("content:\"Basic \"; base64_decode:bytes 4,relative; base64_data; "
	    "content:\"admi\";"), "Basic YWRtaW46cGFzcw==", false },
	{ R("content:\"X\"; base64_decode:offset 1,relative; base64_data; "
	    "content:\"admin\";"), "X-YWRtaW4=", true },
	{ R("content:\"Basic \"; base64_decode:relative; base64_data; "
	    "content:\"admin:\";"), "Basic YWRt\r\n aW46", true },
	{ R("content:\"B \"; base64_decode:relative; base64_data; "
	    "byte_test:1,=,65,0;"), "B QQ==", true },
	{ R("content:\"B \"; base64_decode:relative; base64_data; "
	    "byte_test:1,=,65,0;"), "B Qg==", false },
	/* the encoded bytes themselves are not the decoded buffer */
	{ R("content:\"B \"; base64_decode:relative; base64_data; "
	    "content:\"QQ\";"), "B QQ==", false },
	/* a TOE's stream is reassembled: only_stream rules always apply */
	{ R("flow:to_server,only_stream; content:\"abc\";"), "xxabcxx", true },
	/* counted repeats are opened in the trigger, exact in the check */
	{ R("pcre:\"/a[^b]{6}c/\";"), "xaxxxxxxcx", true },
	{ R("pcre:\"/a[^b]{6}c/\";"), "xaxxxxxcx", false },
	{ R("pcre:\"/a[^b]{6}c/\";"), "xaxxxxxxxcx", false },
	{ R("pcre:\"/a\\d{2,7}c/\";"), "a1234567c", true },
	{ R("pcre:\"/a\\d{2,7}c/\";"), "a12345678c", false },
	{ R("pcre:\"/a\\d{9,}c/\";"), "a123456789c", true },
	{ R("pcre:\"/a\\d{9,}c/\";"), "a12345678c", false },
	{ R("pcre:\"/a[{]9}c/\";"), "a{9}c", true },
	{ R("pcre:\"/a\\{9}c/\";"), "a{9}c", true },
	{ R("pcre:\"/ab{2,9}+b/\";"), "abbbb", false },
	/* isdataat: a byte at that position, absolute or after the cursor */
	{ R("content:\"ab\"; isdataat:3,relative;"), "abxyz", false },
	{ R("content:\"ab\"; isdataat:3,relative;"), "abwxyz", true },
	{ R("content:\"ab\"; isdataat:!3,relative;"), "abxyz", true },
	{ R("content:\"ab\"; isdataat:!3,relative;"), "abwxyz", false },
	{ R("content:\"ab\"; isdataat:5;"), "abcdef", true },
	{ R("content:\"ab\"; isdataat:5;"), "abcde", false },
	/* only the last "ab" ends the data: backtracking into isdataat */
	{ R("content:\"ab\"; isdataat:!1,relative;"), "abxxab", true },
	{ R("content:\"ab\"; isdataat:!1,relative;"), "abxxabxx", false },
	/* byte_test: binary big/little endian, string, operators, bitmask */
	{ R("content:\"L\"; byte_test:2,>,256,0,relative;"), "L\x01\x02", true },
	{ R("content:\"L\"; byte_test:2,>,258,0,relative;"), "L\x01\x02", false },
	{ R("content:\"L\"; byte_test:2,=,513,0,relative,little;"),
	  "L\x01\x02", true },
	{ R("content:\"L\"; byte_test:2,=,258,0,relative,little;"),
	  "L\x01\x02", false },
	{ R("content:\"L\"; byte_test:2,<=,258,0,relative;"), "L\x01\x02", true },
	{ R("content:\"L\"; byte_test:2,<,258,0,relative;"), "L\x01\x02", false },
	{ R("content:\"L\"; byte_test:1,&,0x80,1,relative;"), "Lx\x81", true },
	{ R("content:\"L\"; byte_test:1,&,0x80,1,relative;"), "Lx\x71", false },
	{ R("content:\"L\"; byte_test:1,!&,0x80,1,relative;"), "Lx\x71", true },
	{ R("content:\"L\"; byte_test:1,^,0x7f,0,relative;"), "L\x7f", false },
	{ R("content:\"L\"; byte_test:1,=,3,0,relative,bitmask 0x30;"),
	  "L\x3f", true },
	{ R("content:\"L\"; byte_test:1,=,3,0,relative,bitmask 0x30;"),
	  "L\x2f", false },
	{ R("content:\"len=\"; byte_test:5,>,1000,0,relative,string,dec;"),
	  "len=1234;", true },
	{ R("content:\"len=\"; byte_test:5,>,1000,0,relative,string,dec;"),
	  "len=999;x", false },
	{ R("content:\"len=\"; byte_test:5,>,1000,0,relative,string,dec;"),
	  "len=abcde", false },
	{ R("content:\"len=\"; byte_test:4,=,255,0,relative,string,hex;"),
	  "len=00ff", true },
	{ R("content:\"len=\"; byte_test:3,=,8,0,relative,string,oct;"),
	  "len=010", true },
	/* not enough bytes: the option fails */
	{ R("content:\"L\"; byte_test:4,>,0,0,relative;"), "L\x01\x02\x03", false },
	{ R("content:\"L\"; byte_test:1,=,76,-1,relative;"), "xL", true },
	/* byte_jump: length-prefixed field, then a content right after it */
	{ R("content:\"H\"; byte_jump:1,0,relative; content:\"Z\"; within:1;"),
	  "H\x03" "abcZ", true },
	{ R("content:\"H\"; byte_jump:1,0,relative; content:\"Z\"; within:1;"),
	  "H\x02" "abcZ", false },
	{ R("content:\"H\"; byte_jump:1,0,relative,multiplier 2; "
	    "content:\"Z\"; within:1;"), "H\x02" "abcdZ", true },
	{ R("content:\"H\"; byte_jump:1,0,relative,align; content:\"Z\"; "
	    "within:1;"), "H\x03" "abcxZ", true },
	{ R("content:\"H\"; byte_jump:1,0,relative,post_offset -1; "
	    "content:\"cZ\"; within:2;"), "H\x03" "abcZ", true },
	{ R("content:\"H\"; byte_jump:1,0,from_beginning,relative; "
	    "content:\"Z\"; within:1;"), "H\x04xxZ", true },
	{ R("content:\"H\"; byte_jump:2,0,relative,string,dec; "
	    "content:\"Z\"; within:1;"), "H03abcZ", true },
	/* a jump past the data fails */
	{ R("content:\"H\"; byte_jump:1,0,relative; isdataat:!0,relative;"),
	  "H\x09" "ab", false },
	/* no Hyperscan trigger: checked on every chunk */
	{ R("content:!\"evil\";"), "good", true },
	{ R("content:!\"evil\";"), "evil", false },
	{ R(""), "x", true },
	{ R("pcre:\"/^x*$/\";"), "xxx", true },
	{ R("pcre:\"/^x*$/\";"), "xxy", false },
};

START_TEST(modifiers)
{
	ck_assert_msg(fires(cases[_i].rule, cases[_i].payload) == cases[_i].hit,
		      "%s on '%s' should %s", cases[_i].rule,
		      cases[_i].payload, cases[_i].hit ? "match" : "not match");
}
END_TEST

/* Returns in which chunk rule 1 fired (-1: never); fails if twice. */
static int fire_chunk(struct ids_flow *f, const char *s, const size_t *cuts,
		      int ncuts)
{
	size_t len = strlen(s), at = 0;
	int where = -1;

	for (int c = 0; c <= ncuts; c++) {
		size_t end = c < ncuts ? cuts[c] : len;
		struct ids_verdict v;

		scan(f, IDS_TO_SERVER, s + at, end - at, &v);
		if (has_sid(&v, 1)) {
			ck_assert_int_eq(where, -1);
			where = c;
		}
		at = end;
	}
	return where;
}

START_TEST(split_every_position)
{
	const char *p = "hello ATTACKSTRING bye";
	struct ids_ruleset *rs = load(R("content:\"ATTACKSTRING\";"));
	size_t len = strlen(p);

	for (size_t k = 1; k < len; k++) {
		struct ids_flow *f = flow(rs);
		int c = fire_chunk(f, p, &k, 1);

		/* the pattern ends at offset 18 */
		ck_assert_int_eq(c, k >= 18 ? 0 : 1);
		ids_flow_destroy(f);
	}
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(split_positional_three_chunks)
{
	const char *p = "GET /scripts/..%c1%1c../winnt/system32/cmd.exe?/c+dir "
			"HTTP/1.0\r\n";
	struct ids_ruleset *rs = load(R(
		"content:\"GET /\"; depth:5; content:\"cmd.exe\"; distance:0; "
		"within:50; pcre:\"/c\\+dir\\s+HTTP/R\"; content:\"|0d 0a|\"; "
		"distance:0; content:!\"POST\";"));
	size_t len = strlen(p);

	for (size_t i = 1; i < len; i++) {
		for (size_t j = i + 1; j < len; j++) {
			size_t cuts[2] = { i, j };
			struct ids_flow *f = flow(rs);

			ck_assert_int_eq(fire_chunk(f, p, cuts, 2), 2);
			ids_flow_destroy(f);
		}
	}
	ids_ruleset_put(rs);
}
END_TEST

/* A relative pcre anchored at the cursor, arriving after its content. */
START_TEST(split_relative_pcre)
{
	const char *p = "xxuser=admin yy";
	struct ids_ruleset *rs = load(R("content:\"user=\"; "
					"pcre:\"/^adm[^x]n/R\";"));
	size_t len = strlen(p);

	for (size_t k = 1; k < len; k++) {
		struct ids_flow *f = flow(rs);

		/* the match ends at offset 12 */
		ck_assert_int_eq(fire_chunk(f, p, &k, 1), k >= 12 ? 0 : 1);
		ids_flow_destroy(f);
	}
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(split_depth_negative)
{
	struct ids_ruleset *rs = load(R("content:\"abc\"; offset:10; depth:5;"));
	const char *in = "0123456789xxabc--";	/* abc ends at 15: inside */
	const char *out = "0123456789xxxabc-";	/* ends at 16: outside */

	for (size_t k = 1; k < strlen(in); k++) {
		struct ids_flow *f = flow(rs);

		ck_assert_int_ne(fire_chunk(f, in, &k, 1), -1);
		ids_flow_destroy(f);
		f = flow(rs);
		ck_assert_int_eq(fire_chunk(f, out, &k, 1), -1);
		ids_flow_destroy(f);
	}
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(byte_at_a_time)
{
	const char *p = "xxuser=admin&pw=secret";
	struct ids_ruleset *rs = load(R(
		"content:\"user=\"; pcre:\"/^admin/R\"; content:\"pw=\"; "
		"distance:1; within:4;"));
	struct ids_flow *f = flow(rs);
	size_t len = strlen(p);
	size_t cuts[64];

	for (size_t i = 0; i + 1 < len; i++)
		cuts[i] = i + 1;
	ck_assert_int_eq(fire_chunk(f, p, cuts, (int)len - 1), 15);
	ids_flow_destroy(f);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(interleaved_flows)
{
	enum { N = 300 };
	struct ids_ruleset *rs = load(
		"alert tcp any any -> any any (flow:to_server; "
		"content:\"EVIL\"; content:\"PAYLOAD\"; distance:1; within:9; "
		"sid:1;)\nalert tcp any any -> any any (flow:to_client; "
		"content:\"LEAK\"; sid:2;)");
	struct ids_flow *f[N];
	char msg[N][64];
	int fired[N][2] = { { 0 } };
	size_t maxlen = 0;

	for (int i = 0; i < N; i++) {
		struct ids_flow_key k = key4("192.168.1.10",
					     (uint16_t)(1000 + i), "10.0.0.1",
					     80);

		f[i] = ids_flow_create(rs, &k);
		ck_assert_ptr_nonnull(f[i]);
		/* every third flow carries the attack, others near misses */
		snprintf(msg[i], sizeof(msg[i]), "%03d %s %s LEAK", i,
			 i % 3 == 0 ? "EVIL -PAYLOAD" : "EVIL ----------PAYLOAD",
			 "tail");
		if (strlen(msg[i]) > maxlen)
			maxlen = strlen(msg[i]);
	}
	/* round robin, 3-byte chunks, both directions */
	for (size_t at = 0; at < maxlen; at += 3) {
		for (int i = 0; i < N; i++) {
			size_t len = strlen(msg[i]);
			struct ids_verdict v;

			if (at >= len)
				continue;
			for (int d = 0; d < 2; d++) {
				scan(f[i], (enum ids_dir)d, msg[i] + at,
				     len - at < 3 ? len - at : 3, &v);
				fired[i][0] += has_sid(&v, 1);
				fired[i][1] += has_sid(&v, 2) * (d + 1);
			}
		}
	}
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(fired[i][0], i % 3 == 0);
		ck_assert_int_eq(fired[i][1], 2);	/* once, to-client */
		ids_flow_destroy(f[i]);
	}
	ids_ruleset_put(rs);
}
END_TEST

static void send_filler(struct ids_flow *f, size_t n)
{
	char buf[1000];

	memset(buf, '.', sizeof(buf));
	while (n) {
		size_t c = n < sizeof(buf) ? n : sizeof(buf);
		struct ids_verdict v;

		scan(f, IDS_TO_SERVER, buf, c, &v);
		ck_assert(!has_sid(&v, 1));
		n -= c;
	}
}

START_TEST(window_bound)
{
	struct ids_ruleset *rs = load(R("content:\"START\"; content:\"END\"; "
					"distance:0;"));
	struct ids_ruleset *rs2 = load(R("content:\"XYZ\"; offset:100000; "
					 "depth:3;"));
	struct ids_verdict v;
	struct ids_flow *f;

	/* within the window: found */
	f = flow(rs);
	scan(f, IDS_TO_SERVER, "START", 5, &v);
	send_filler(f, IDS_WINDOW / 2);
	scan(f, IDS_TO_SERVER, "END", 3, &v);
	ck_assert(has_sid(&v, 1));
	ids_flow_destroy(f);
	/* farther apart than 2 * window: documented miss */
	f = flow(rs);
	scan(f, IDS_TO_SERVER, "START", 5, &v);
	send_filler(f, 3 * IDS_WINDOW);
	scan(f, IDS_TO_SERVER, "END", 3, &v);
	ck_assert(!has_sid(&v, 1));
	ids_flow_destroy(f);
	/* absolute offsets stay exact far into the stream */
	f = flow(rs2);
	send_filler(f, 100000);
	scan(f, IDS_TO_SERVER, "XYZ", 3, &v);
	ck_assert(has_sid(&v, 1));
	ids_flow_destroy(f);
	f = flow(rs2);
	send_filler(f, 100001);
	scan(f, IDS_TO_SERVER, "XYZ", 3, &v);
	ck_assert(!has_sid(&v, 1));
	ids_flow_destroy(f);
	ids_ruleset_put(rs);
	ids_ruleset_put(rs2);
}
END_TEST

/* History that wraps around the ring boundary at every offset of a match. */
START_TEST(ring_wrap)
{
	struct ids_ruleset *rs = load(R("content:\"0123456789abcdef\"; "
					"content:\"XY\"; distance:3; within:2;"));
	const char *p = "0123456789abcdef---XY";
	size_t len = strlen(p);

	for (size_t j = 0; j <= len; j++) {
		for (size_t cut = 1; cut < len; cut += 4) {
			struct ids_flow *f = flow(rs);
			struct ids_verdict v;

			/* the pattern starts j bytes before a ring boundary */
			send_filler(f, 2 * IDS_WINDOW - j);
			scan(f, IDS_TO_SERVER, p, cut, &v);
			ck_assert(!has_sid(&v, 1));
			send_filler(f, 0);
			scan(f, IDS_TO_SERVER, p + cut, len - cut, &v);
			ck_assert_msg(has_sid(&v, 1), "j=%zu cut=%zu", j, cut);
			ids_flow_destroy(f);
		}
	}
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(flowbits)
{
	struct ids_ruleset *rs = load(
		"alert tcp any any -> any any (flow:to_server; content:\"LOGIN "
		"admin\"; flowbits:set,admin; flowbits:noalert; sid:10;)\n"
		"alert tcp any any -> any any (flow:to_client; content:\"secret\"; "
		"flowbits:isset,admin; sid:11;)\n"
		"alert tcp any any -> any any (flow:to_client; content:\"secret\"; "
		"flowbits:isnotset,admin; sid:12;)\n"
		"alert tcp any any -> any any (flow:to_server; content:\"LOGOUT\"; "
		"flowbits:unset,admin; flowbits:noalert; sid:13;)\n"
		"alert tcp any any -> any any (flow:to_server; content:\"cmd\"; "
		"flowbits:isset,admin; sid:14;)\n");
	struct ids_verdict v;
	struct ids_flow *f;

	f = flow(rs);
	scan(f, IDS_TO_SERVER, "LOGIN admin", 11, &v);
	ck_assert_uint_eq(v.nalerts, 0);
	scan(f, IDS_TO_CLIENT, "the secret", 10, &v);
	ck_assert_uint_eq(v.nalerts, 1);
	ck_assert(has_sid(&v, 11));
	ids_flow_destroy(f);

	f = flow(rs);
	scan(f, IDS_TO_CLIENT, "the secret", 10, &v);
	ck_assert_uint_eq(v.nalerts, 1);
	ck_assert(has_sid(&v, 12));
	ids_flow_destroy(f);

	f = flow(rs);
	scan(f, IDS_TO_SERVER, "LOGIN admin", 11, &v);
	scan(f, IDS_TO_SERVER, "LOGOUT", 6, &v);
	ck_assert_uint_eq(v.nalerts, 0);
	scan(f, IDS_TO_CLIENT, "secret", 6, &v);
	ck_assert(has_sid(&v, 12));
	ck_assert(!has_sid(&v, 11));
	ids_flow_destroy(f);

	/* set and check in the same chunk: setters run first */
	f = flow(rs);
	scan(f, IDS_TO_SERVER, "cmd LOGIN admin", 15, &v);
	ck_assert_uint_eq(v.nalerts, 1);
	ck_assert(has_sid(&v, 14));
	ids_flow_destroy(f);
	f = flow(rs);
	scan(f, IDS_TO_SERVER, "cmd LOGIN", 9, &v);
	ck_assert_uint_eq(v.nalerts, 0);
	ids_flow_destroy(f);
	ids_ruleset_put(rs);
}
END_TEST

/* flowbits a&b (all) and a|b (any), for set, isset and isnotset. */
START_TEST(flowbits_operators)
{
	struct ids_ruleset *rs = load(
		"alert tcp any any -> any any (content:\"A\"; flowbits:set,a; "
		"flowbits:noalert; sid:1;)\n"
		"alert tcp any any -> any any (content:\"B\"; flowbits:set,b; "
		"flowbits:noalert; sid:2;)\n"
		"alert tcp any any -> any any (content:\"C\"; flowbits:set,a&b; "
		"flowbits:noalert; sid:3;)\n"
		"alert tcp any any -> any any (content:\"x\"; "
		"flowbits:isset,a&b; sid:10;)\n"
		"alert tcp any any -> any any (content:\"x\"; "
		"flowbits:isset,a|b; sid:11;)\n"
		"alert tcp any any -> any any (content:\"x\"; "
		"flowbits:isnotset,a&b; sid:12;)\n"
		"alert tcp any any -> any any (content:\"x\"; "
		"flowbits:isnotset,a|b; sid:13;)\n");
	static const struct {
		const char *first;
		bool s10, s11, s12, s13;
	} fb_cases[] = {
		{ "-", false, false, true, true },
		{ "A", false, true, false, true },
		{ "B", false, true, false, true },
		{ "AB", true, true, false, false },
		{ "C", true, true, false, false },
	};
	struct ids_verdict v;

	for (size_t i = 0; i < sizeof(fb_cases) / sizeof(fb_cases[0]); i++) {
		struct ids_flow *f = flow(rs);

		scan(f, IDS_TO_SERVER, fb_cases[i].first, strlen(fb_cases[i].first),
		     &v);
		scan(f, IDS_TO_SERVER, "x", 1, &v);
		ck_assert_msg(has_sid(&v, 10) == fb_cases[i].s10, "%s: 10", fb_cases[i].first);
		ck_assert_msg(has_sid(&v, 11) == fb_cases[i].s11, "%s: 11", fb_cases[i].first);
		ck_assert_msg(has_sid(&v, 12) == fb_cases[i].s12, "%s: 12", fb_cases[i].first);
		ck_assert_msg(has_sid(&v, 13) == fb_cases[i].s13, "%s: 13", fb_cases[i].first);
		ids_flow_destroy(f);
	}
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(drop_vs_alert)
{
	struct ids_ruleset *rs = load(
		"alert tcp any any -> any any (msg:\"warn\"; content:\"warn\"; "
		"classtype:misc-activity; sid:20; rev:2;)\n"
		"drop tcp any any -> any any (msg:\"kill\"; content:\"kill\"; "
		"classtype:attempted-admin; sid:21; rev:4;)\n"
		"reject tcp any any -> any any (content:\"reset\"; sid:22;)\n");
	struct ids_verdict v;
	struct ids_flow *f;

	f = flow(rs);
	scan(f, IDS_TO_SERVER, "a warn", 6, &v);
	ck_assert_int_eq(v.decision, IDS_ALLOW);
	ck_assert_ptr_null(v.deny_rule);
	ck_assert_uint_eq(v.nalerts, 1);
	ck_assert_uint_eq(v.alerts[0]->sid, 20);
	ck_assert_uint_eq(v.alerts[0]->rev, 2);
	ck_assert_str_eq(v.alerts[0]->msg, "warn");
	ck_assert_str_eq(v.alerts[0]->classtype, "misc-activity");
	scan(f, IDS_TO_SERVER, "warn again", 10, &v);	/* once per flow */
	ck_assert_uint_eq(v.nalerts, 0);
	ck_assert_int_eq(v.decision, IDS_ALLOW);
	ids_flow_destroy(f);

	f = flow(rs);
	scan(f, IDS_TO_SERVER, "warn then kill", 14, &v);
	ck_assert_int_eq(v.decision, IDS_DENY);
	ck_assert_uint_eq(v.deny_rule->sid, 21);
	ck_assert_uint_eq(v.deny_rule->rev, 4);
	ck_assert_int_eq(v.deny_rule->action, IDS_ACTION_DROP);
	ck_assert_str_eq(v.deny_rule->msg, "kill");
	ck_assert_str_eq(v.deny_rule->classtype, "attempted-admin");
	ck_assert(has_sid(&v, 20));
	scan(f, IDS_TO_CLIENT, "harmless", 8, &v);	/* stays denied */
	ck_assert_int_eq(v.decision, IDS_DENY);
	ck_assert_uint_eq(v.deny_rule->sid, 21);
	ids_flow_destroy(f);

	f = flow(rs);
	scan(f, IDS_TO_SERVER, "reset", 5, &v);
	ck_assert_int_eq(v.decision, IDS_DENY);
	ck_assert_int_eq(v.deny_rule->action, IDS_ACTION_REJECT);
	ids_flow_destroy(f);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(many_alerts)
{
	char text[8192] = "";
	struct ids_ruleset *rs;
	struct ids_flow *f;
	struct ids_verdict v;

	for (int i = 0; i < IDS_MAX_ALERTS + 3; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "alert tcp any any -> any any (content:\"z%d\"; "
			 "sid:%d;)\n", i, 100 + i);
	rs = load(text);
	f = flow(rs);
	scan(f, IDS_TO_SERVER, "z0 z1 z2 z3 z4 z5 z6 z7 z8 z9 z10", 33, &v);
	ck_assert_uint_eq(v.nalerts, IDS_MAX_ALERTS);
	ck_assert_uint_eq(v.alerts_lost, 3);
	ids_flow_destroy(f);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(headers_and_direction)
{
	struct ids_ruleset *rs = load(
		"ipvar SRV [10.0.0.1]\n"
		"alert tcp any any -> any 80 (content:\"x1\"; sid:30;)\n"
		"alert tcp any 80 -> any any (flow:to_client; content:\"x2\"; "
		"sid:31;)\n"
		"alert tcp 10.0.0.0/8 any <> 192.168.0.0/16 any (content:\"x3\"; "
		"sid:32;)\n"
		"alert tcp any any -> any [8000:8100,!8050] (content:\"x4\"; "
		"sid:33;)\n"
		"alert tcp any any -> !$SRV any (content:\"x5\"; sid:34;)\n"
		"alert tcp any any -> 2001:db8::/32 any (content:\"x6\"; "
		"sid:35;)\n"
		"alert ip any any -> any !:1023 (content:\"x7\"; sid:36;)\n");
	struct ids_flow_key k = key4("192.168.1.10", 40000, "10.0.0.1", 80);
	struct ids_flow_key k2 = key4("192.168.1.10", 40000, "10.0.0.2", 8050);
	struct ids_flow_key k3 = key4("192.168.1.10", 40000, "10.0.0.2", 8060);
	struct ids_flow_key k6 = { .family = AF_INET6, .client_port = 1,
				   .server_port = 2000 };
	struct ids_flow *f, *f2, *f3, *f6;
	struct ids_verdict v;

	inet_pton(AF_INET6, "2001:db8::1", k6.server_addr);
	inet_pton(AF_INET6, "fe80::1", k6.client_addr);
	f = ids_flow_create(rs, &k);
	f2 = ids_flow_create(rs, &k2);
	f3 = ids_flow_create(rs, &k3);
	f6 = ids_flow_create(rs, &k6);
	ck_assert(f && f2 && f3 && f6);

	scan(f, IDS_TO_CLIENT, "x1", 2, &v);
	ck_assert(!has_sid(&v, 30));
	scan(f, IDS_TO_SERVER, "x1", 2, &v);
	ck_assert(has_sid(&v, 30));
	scan(f, IDS_TO_SERVER, "x2", 2, &v);
	ck_assert(!has_sid(&v, 31));
	scan(f, IDS_TO_CLIENT, "x2", 2, &v);
	ck_assert(has_sid(&v, 31));
	scan(f, IDS_TO_SERVER, "x3", 2, &v);
	ck_assert(has_sid(&v, 32));
	scan(f2, IDS_TO_CLIENT, "x3", 2, &v);
	ck_assert(has_sid(&v, 32));
	scan(f2, IDS_TO_SERVER, "x4", 2, &v);
	ck_assert(!has_sid(&v, 33));
	scan(f3, IDS_TO_SERVER, "x4", 2, &v);
	ck_assert(has_sid(&v, 33));
	scan(f, IDS_TO_SERVER, "x5", 2, &v);
	ck_assert(!has_sid(&v, 34));
	scan(f2, IDS_TO_SERVER, "x5", 2, &v);
	ck_assert(has_sid(&v, 34));
	scan(f, IDS_TO_SERVER, "x6", 2, &v);
	ck_assert(!has_sid(&v, 35));
	scan(f6, IDS_TO_SERVER, "x6", 2, &v);
	ck_assert(has_sid(&v, 35));
	scan(f, IDS_TO_SERVER, "x7", 2, &v);
	ck_assert(!has_sid(&v, 36));
	scan(f6, IDS_TO_SERVER, "x7", 2, &v);
	ck_assert(has_sid(&v, 36));
	ids_flow_destroy(f);
	ids_flow_destroy(f2);
	ids_flow_destroy(f3);
	ids_flow_destroy(f6);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(bad_arguments)
{
	struct ids_ruleset *rs = load(R("content:\"a\";"));
	struct ids_flow_key k = { .family = 99 };
	struct ids_flow *f;
	struct ids_verdict v;

	errno = 0;
	ck_assert_ptr_null(ids_flow_create(rs, &k));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ids_flow_create(rs, NULL));
	ck_assert_int_eq(errno, EINVAL);
	f = flow(rs);
	ck_assert_int_eq(ids_flow_scan(w, f, IDS_TO_SERVER, NULL, 5, &v),
			 -EINVAL);
	ck_assert_int_eq(v.decision, IDS_DENY);
	ck_assert_int_eq(ids_flow_scan(w, f, (enum ids_dir)7,
				       (const uint8_t *)"a", 1, &v), -EINVAL);
	ck_assert_int_eq(ids_flow_scan(NULL, f, IDS_TO_SERVER,
				       (const uint8_t *)"a", 1, &v), -EINVAL);
	ck_assert_int_eq(ids_flow_scan(w, f, IDS_TO_SERVER,
				       (const uint8_t *)"a", 1, NULL), -EINVAL);
	ck_assert_int_eq(ids_flow_scan(w, f, IDS_TO_SERVER, NULL, 0, &v), 0);
	ck_assert_int_eq(v.decision, IDS_ALLOW);
	ids_flow_destroy(f);
	ids_flow_destroy(NULL);
	ids_ruleset_put(NULL);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(binary_payload)
{
	/* hostile bytes: NULs, high bytes, long runs; nothing must break */
	struct ids_ruleset *rs = load(
		R("content:\"|00 ff 00|\"; content:\"|90 90|\"; distance:0; "
		  "pcre:\"/\\x00{3,}/R\";") "\n"
		"alert tcp any any -> any any (pcre:\"/(a+)+$/\"; sid:2;)\n");
	struct ids_flow *f = flow(rs);
	uint8_t buf[4096];
	uint64_t x = 88172645463325252ull;
	struct ids_verdict v;

	for (int round = 0; round < 64; round++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)(x % 5 == 0 ? 'a' : x >> 32);
		}
		scan(f, (enum ids_dir)(round & 1), buf, sizeof(buf), &v);
	}
	scan(f, IDS_TO_SERVER, "\x00\xff\x00\x90\x90\x00\x00\x00", 8, &v);
	ck_assert(has_sid(&v, 1));
	ids_flow_destroy(f);
	ids_ruleset_put(rs);
}
END_TEST

/* Reload under traffic: a scanner thread takes the current ruleset. */
struct reload_ctx {
	pthread_mutex_t lock;
	struct ids_ruleset *cur;
	int stop;
	int flows, wrong;
};

static const char *ruleset_text(int i)
{
	return i % 2 ? "alert tcp any any -> any any (content:\"foo\"; sid:1;)\n"
		     : "alert tcp any any -> any any (content:\"bar\"; sid:2;)\n"
		       "alert tcp any any -> any any (content:\"baz\"; sid:3;)\n";
}

static void *scanner(void *arg)
{
	struct reload_ctx *c = arg;
	struct ids_worker *tw = ids_worker_create();

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		struct ids_ruleset *rs;
		struct ids_flow *f;
		struct ids_verdict v;
		bool old;

		pthread_mutex_lock(&c->lock);
		rs = ids_ruleset_get(c->cur);
		pthread_mutex_unlock(&c->lock);
		f = ids_flow_create(rs, &(struct ids_flow_key){
			.family = AF_INET });
		ids_ruleset_put(rs);	/* the flow holds it now */
		old = ids_ruleset_nrules(ids_flow_ruleset(f)) == 1;
		ids_flow_scan(tw, f, IDS_TO_SERVER, (const uint8_t *)"foo bar",
			      7, &v);
		if (v.nalerts != 1 || v.alerts[0]->sid != (old ? 1u : 2u))
			c->wrong++;
		ids_flow_destroy(f);
		__atomic_fetch_add(&c->flows, 1, __ATOMIC_RELEASE);
	}
	ids_worker_destroy(tw);
	return NULL;
}

START_TEST(reload_refcount)
{
	struct reload_ctx c = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct ids_ruleset *rs1 = load(ruleset_text(1));
	struct ids_ruleset *rs2;
	struct ids_flow *f;
	struct ids_verdict v;
	pthread_t t;

	/* a flow keeps the old ruleset after the swap */
	f = flow(rs1);
	rs2 = load(ruleset_text(0));
	ids_ruleset_put(rs1);
	scan(f, IDS_TO_SERVER, "foo bar", 7, &v);
	ck_assert_uint_eq(v.nalerts, 1);
	ck_assert_uint_eq(v.alerts[0]->sid, 1);
	ids_flow_destroy(f);	/* last reference of rs1 */
	f = flow(rs2);
	scan(f, IDS_TO_SERVER, "foo bar", 7, &v);
	ck_assert_uint_eq(v.nalerts, 1);
	ck_assert_uint_eq(v.alerts[0]->sid, 2);
	ids_flow_destroy(f);

	c.cur = rs2;
	ck_assert_int_eq(pthread_create(&t, NULL, scanner, &c), 0);
	for (int i = 1; i <= 20; i++) {
		struct ids_ruleset *n = load(ruleset_text(i)), *old;

		pthread_mutex_lock(&c.lock);
		old = c.cur;
		c.cur = n;
		pthread_mutex_unlock(&c.lock);
		ids_ruleset_put(old);
		/* let the scanner run some flows on each ruleset (<= 2 s) */
		for (int ms = 0; ms < 2000; ms++) {
			int seen = __atomic_load_n(&c.flows, __ATOMIC_ACQUIRE);

			if (seen >= i * 10)
				break;
			usleep(1000);
		}
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ids_ruleset_put(c.cur);
	ck_assert_int_gt(c.flows, 0);
	ck_assert_int_eq(c.wrong, 0);
}
END_TEST

/*
 * detection_filter: a rule reports once its matches for the tracked
 * address exceed the count (within a window far longer than the test).
 */
START_TEST(detection_filter)
{
	struct ids_ruleset *rs = load(
		"alert tcp any any -> any any (content:\"LOGIN\"; "
		"detection_filter:track by_src, count 3, seconds 3600; sid:1;)\n"
		"alert tcp any any -> any any (content:\"LOGIN\"; "
		"detection_filter:track by_dst, count 1, seconds 3600; sid:2;)\n");
	struct ids_flow_key a = key4("192.168.1.10", 40000, "10.0.0.1", 80);
	struct ids_flow_key b = key4("192.168.1.11", 40000, "10.0.0.1", 80);
	struct ids_verdict v;

	for (int i = 1; i <= 5; i++) {
		struct ids_flow *f = ids_flow_create(rs, &a);

		ck_assert_ptr_nonnull(f);
		scan(f, IDS_TO_SERVER, "LOGIN x", 7, &v);
		/* 4th and later from this client; by_dst: 2nd and later */
		ck_assert_msg(has_sid(&v, 1) == (i > 3), "match %d", i);
		ck_assert_msg(has_sid(&v, 2) == (i > 1), "match %d", i);
		ids_flow_destroy(f);
	}
	/* another client: its own count for by_src, the same server's for by_dst */
	{
		struct ids_flow *f = ids_flow_create(rs, &b);

		scan(f, IDS_TO_SERVER, "LOGIN x", 7, &v);
		ck_assert(!has_sid(&v, 1));
		ck_assert(has_sid(&v, 2));
		ids_flow_destroy(f);
	}
	ids_ruleset_put(rs);
}
END_TEST

/* UDP rules on datagrams, each by itself; TCP streams do not see them. */
START_TEST(udp_datagrams)
{
	struct ids_ruleset *rs = load(
		"alert udp any any -> any 53 (flow:to_server; content:\"|00 01 00 00|\"; "
		"offset:4; depth:4; content:\"evil\"; nocase; sid:1;)\n"
		"alert udp any 53 -> any any (flow:to_client; byte_test:1,&,0x80,2; "
		"byte_test:2,>,3,6; sid:2;)\n"
		"alert udp any any -> any 53 (dsize:>20; content:\"AAAA\"; sid:3;)\n"
		"alert udp any any -> any 53 (content:\"|03|www\"; byte_jump:1,-4,"
		"relative; content:\"|00|\"; within:1; sid:4;)\n"
		"alert tcp any any -> any 53 (content:\"tcpevil\"; sid:5;)\n"
		"drop udp any any -> any 5300 (content:\"ATTACK\"; sid:6;)\n"
		"alert udp any any -> any any (dsize:0; sid:7;)\n");
	struct ids_flow_key k = key4("192.168.1.10", 40000, "10.0.0.1", 53);
	struct ids_flow_key k2 = key4("192.168.1.10", 40000, "10.0.0.1", 5300);
	struct ids_verdict v;
	static const uint8_t q[] = "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00"
		"\x00\x00\x04" "EVIL\x03" "com";
	static const uint8_t r[] = "\x12\x34\x81\x80\x00\x01\x00\x04";
	static const uint8_t r2[] = "\x12\x34\x01\x80\x00\x01\x00\x04";
	static const uint8_t www[] = "\x03www\x00";
	struct ids_worker *wk = ids_worker_create();

	ck_assert_ptr_nonnull(wk);
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_SERVER, q,
					   sizeof(q) - 1, &v), 0);
	ck_assert(has_sid(&v, 1));
	ck_assert(!has_sid(&v, 3));	/* 21 bytes but no AAAA */
	/* the same bytes the other way: flow:to_server does not apply */
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_CLIENT, q,
					   sizeof(q) - 1, &v), 0);
	ck_assert(!has_sid(&v, 1));
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_CLIENT, r,
					   sizeof(r) - 1, &v), 0);
	ck_assert(has_sid(&v, 2));
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_CLIENT, r2,
					   sizeof(r2) - 1, &v), 0);
	ck_assert(!has_sid(&v, 2));	/* QR bit clear */
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_SERVER,
		(const uint8_t *)"AAAAxxxxxxxxxxxxxxxxx", 21, &v), 0);
	ck_assert(has_sid(&v, 3));
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_SERVER,
		(const uint8_t *)"AAAAxxxxxxxxxxxxxxxx", 20, &v), 0);
	ck_assert(!has_sid(&v, 3));	/* dsize:>20 */
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_SERVER, www,
					   sizeof(www) - 1, &v), 0);
	ck_assert(has_sid(&v, 4));
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_SERVER, www,
					   sizeof(www) - 2, &v), 0);
	ck_assert(!has_sid(&v, 4));
	/* no state: "evil" in a later datagram alone does not complete sid 1 */
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_SERVER,
		(const uint8_t *)"evil", 4, &v), 0);
	ck_assert(!has_sid(&v, 1));
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_SERVER,
		(const uint8_t *)"", 0, &v), 0);
	ck_assert(has_sid(&v, 7));
	/* a udp rule is not a tcp rule, and the other way round */
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k, IDS_TO_SERVER,
		(const uint8_t *)"tcpevil", 7, &v), 0);
	ck_assert(!has_sid(&v, 5));
	{
		struct ids_flow *f = ids_flow_create(rs, &k);

		ck_assert_int_eq(ids_flow_scan(wk, f, IDS_TO_SERVER, q,
					       sizeof(q) - 1, &v), 0);
		ck_assert(!has_sid(&v, 1));
		ck_assert_int_eq(ids_flow_scan(wk, f, IDS_TO_SERVER,
			(const uint8_t *)"tcpevil", 7, &v), 0);
		ck_assert(has_sid(&v, 5));
		ids_flow_destroy(f);
	}
	/* drop: this datagram is denied; the next one is judged afresh */
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k2, IDS_TO_SERVER,
		(const uint8_t *)"an ATTACK", 9, &v), 0);
	ck_assert_int_eq(v.decision, IDS_DENY);
	ck_assert_uint_eq(v.deny_rule->sid, 6);
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k2, IDS_TO_SERVER,
		(const uint8_t *)"hello", 5, &v), 0);
	ck_assert_int_eq(v.decision, IDS_ALLOW);
	/* bad arguments fail closed */
	ck_assert_int_eq(ids_datagram_scan(wk, rs, &k2, (enum ids_dir)7,
		(const uint8_t *)"x", 1, &v), -EINVAL);
	ck_assert_int_eq(v.decision, IDS_DENY);
	ck_assert_int_eq(ids_datagram_scan(NULL, rs, &k2, IDS_TO_SERVER,
		(const uint8_t *)"x", 1, &v), -EINVAL);
	ids_worker_destroy(wk);
	ids_ruleset_put(rs);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ids_match");
	TCase *tc = tcase_create("match");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, modifiers, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, split_every_position);
	tcase_add_test(tc, split_positional_three_chunks);
	tcase_add_test(tc, split_relative_pcre);
	tcase_add_test(tc, split_depth_negative);
	tcase_add_test(tc, byte_at_a_time);
	tcase_add_test(tc, interleaved_flows);
	tcase_add_test(tc, window_bound);
	tcase_add_test(tc, ring_wrap);
	tcase_add_test(tc, flowbits);
	tcase_add_test(tc, flowbits_operators);
	tcase_add_test(tc, drop_vs_alert);
	tcase_add_test(tc, many_alerts);
	tcase_add_test(tc, headers_and_direction);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, binary_payload);
	tcase_add_test(tc, reload_refcount);
	tcase_add_test(tc, udp_datagrams);
	tcase_add_test(tc, detection_filter);
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
