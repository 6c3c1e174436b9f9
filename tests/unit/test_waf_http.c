/*
 * vnfs/waf: HTTP stream parsing.  Requests and responses cut at any byte,
 * pipelined, chunked, keep-alive, malformed; transactions never leak.
 *
 * Most cases use a small rule set of our own (no CRS) so that a verdict
 * names exactly one known rule; the byte-split cases also run the CRS.
 * Engines are created once in main (the fork of each test inherits them).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waf_engine.h"

static struct waf_engine *eng;       /* our rules, requests only */
static struct waf_engine *eng_resp;  /* our rules, responses inspected */
static struct waf_engine *eng_crs;   /* CRS PL1 */

static const char test_rules[] =
	"SecRule ARGS|REQUEST_BODY \"@contains evil\" "
	"\"id:10001,phase:2,t:none,deny,status:403,log,msg:'evil argument'\"\n"
	"SecRule REQUEST_HEADERS:X-Bad \"@streq 1\" "
	"\"id:10002,phase:1,t:none,deny,status:403,log,msg:'bad header'\"\n"
	"SecRule RESPONSE_BODY \"@contains secret\" "
	"\"id:10003,phase:4,t:none,deny,status:502,log,msg:'leak'\"\n"
	"SecRule REQUEST_URI \"@contains warn\" "
	"\"id:10004,phase:1,t:none,pass,log,msg:'warning only'\"\n"
	"SecRule RESPONSE_STATUS \"@streq 418\" "
	"\"id:10005,phase:3,t:none,deny,status:502,log,msg:'teapot'\"\n"
	/* exact header name and value, exact URI: catch pieces lost when a
	 * head is cut between chunks */
	"SecRule REQUEST_HEADERS:X-Check-Header \"@streq expected-value\" "
	"\"id:10006,phase:1,t:none,deny,status:403,log,msg:'exact header'\"\n"
	"SecRule REQUEST_URI \"@streq /exact/path?arg=value\" "
	"\"id:10007,phase:1,t:none,deny,status:403,log,msg:'exact uri'\"\n"
	"SecRule REQUEST_METHOD \"@streq OPTIONS\" "
	"\"id:10008,phase:1,t:none,deny,status:405,log,msg:'method'\"\n"
	"SecRule RESPONSE_HEADERS:X-Powered-By \"@streq leaky/1.0\" "
	"\"id:10009,phase:3,t:none,deny,status:502,log,msg:'banner'\"\n";

#define GET(path) "GET " path " HTTP/1.1\r\nHost: www.example.com\r\n" \
	"User-Agent: Mozilla/5.0\r\nAccept: text/html\r\n\r\n"

static struct waf_flow *new_flow(struct waf_engine *e)
{
	struct waf_flow *f = waf_flow_create(e, "192.0.2.10", 51000,
					     "198.51.100.20", 80);

	ck_assert_ptr_nonnull(f);
	return f;
}

static int feed(struct waf_flow *f, enum waf_dir dir, const char *s,
		size_t len, struct waf_verdict *v)
{
	return waf_flow_feed(f, dir, (const uint8_t *)s, len, v);
}

static int feeds(struct waf_flow *f, enum waf_dir dir, const char *s,
		 struct waf_verdict *v)
{
	return feed(f, dir, s, strlen(s), v);
}

START_TEST(single_request_allowed)
{
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;

	ck_assert_int_eq(feeds(f, WAF_DIR_IN, GET("/index.html"), &v), WAF_ALLOW);
	ck_assert_int_eq(v.action, WAF_ALLOW);
	ck_assert_uint_eq(v.requests, 1);
	ck_assert(!waf_flow_in_message(f, WAF_DIR_IN));
	ck_assert_uint_eq(waf_engine_live_transactions(eng), 0);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(warning_rule_is_reported)
{
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;

	ck_assert_int_eq(feeds(f, WAF_DIR_IN, GET("/warn"), &v), WAF_ALLOW);
	ck_assert_uint_eq(v.n_matched, 1);
	ck_assert_uint_eq(v.matched[0], 10004);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(pipelined_third_denied)
{
	static const char in[] = GET("/a") GET("/b?x=warn") GET("/c?q=evil") GET("/d");
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;

	ck_assert_int_eq(feeds(f, WAF_DIR_IN, in, &v), WAF_DENY);
	ck_assert_int_eq(v.source, WAF_SRC_RULES);
	ck_assert_uint_eq(v.rule_id, 10001);
	ck_assert_int_eq(v.status, 403);
	ck_assert_uint_eq(v.requests, 2);
	ck_assert_ptr_nonnull(strstr(v.msg, "evil argument"));
	ck_assert_uint_eq(waf_engine_live_transactions(eng), 0);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(keep_alive_sequence)
{
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;
	unsigned i;

	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(feeds(f, WAF_DIR_IN, GET("/page"), &v), WAF_ALLOW);
		ck_assert_uint_eq(v.requests, 1);
	}
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, GET("/x?a=evil"), &v), WAF_DENY);
	ck_assert_uint_eq(v.rule_id, 10001);
	waf_flow_destroy(f);
}
END_TEST

/* Feeds s cut at position cut (two chunks); returns the final verdict. */
static int feed_split(struct waf_engine *e, const char *s, size_t len,
		      size_t cut, struct waf_verdict *v)
{
	struct waf_flow *f = new_flow(e);
	int rc = feed(f, WAF_DIR_IN, s, cut, v);

	if (rc == WAF_ALLOW)
		rc = feed(f, WAF_DIR_IN, s + cut, len - cut, v);
	waf_flow_destroy(f);
	return rc;
}

/* Every cut of s gives the verdict s gives whole: want_rc, want_rule. */
static void check_every_cut(struct waf_engine *e, const char *s, int want_rc,
			    unsigned want_rule)
{
	size_t len = strlen(s), cut;
	struct waf_verdict whole, v;
	int rc0 = feed_split(e, s, len, len, &whole);

	ck_assert_int_eq(rc0, want_rc);
	ck_assert_uint_eq(whole.rule_id, want_rule);

	for (cut = 0; cut <= len; cut++) {
		int rc = feed_split(e, s, len, cut, &v);

		ck_assert_msg(rc == rc0, "cut at %zu: %d != %d", cut, rc, rc0);
		ck_assert_msg(v.rule_id == whole.rule_id,
			      "cut at %zu: rule %u != %u", cut, v.rule_id,
			      whole.rule_id);
	}
	ck_assert_uint_eq(waf_engine_live_transactions(e), 0);
}

START_TEST(split_every_byte_own_rules)
{
	check_every_cut(eng, "POST /f?a=1 HTTP/1.1\r\nHost: h\r\n"
			"Content-Type: application/x-www-form-urlencoded\r\n"
			"Content-Length: 12\r\n\r\nq=very+evil!", WAF_DENY, 10001);
	check_every_cut(eng, GET("/ok?x=1"), WAF_ALLOW, 0);
	check_every_cut(eng, "GET / HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n"
			"X-Check-Header: expected-value\r\nX-Other: 1\r\n\r\n",
			WAF_DENY, 10006);
	check_every_cut(eng, "GET /exact/path?arg=value HTTP/1.1\r\nHost: h\r\n\r\n",
			WAF_DENY, 10007);
	check_every_cut(eng, "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
			WAF_DENY, 10008);
}
END_TEST

START_TEST(split_every_byte_crs)
{
	static const char attack[] =
		"GET /item?id=1%27%20OR%20%271%27=%271 HTTP/1.1\r\n"
		"Host: shop.example\r\nUser-Agent: Mozilla/5.0\r\n"
		"Accept: */*\r\n\r\n";
	struct waf_verdict v;
	struct waf_flow *f = new_flow(eng_crs);

	ck_assert_int_eq(feeds(f, WAF_DIR_IN, attack, &v), WAF_DENY);
	ck_assert_uint_eq(v.rule_id, 949110);
	waf_flow_destroy(f);
	check_every_cut(eng_crs, attack, WAF_DENY, 949110);
	check_every_cut(eng_crs, GET("/img/logo.png"), WAF_ALLOW, 0);
}
END_TEST

/* Response resp to one GET, cut at every point. */
static void check_every_response_cut(const char *resp, int want_rc,
				     unsigned want_rule)
{
	size_t len = strlen(resp), cut;

	for (cut = 0; cut <= len; cut++) {
		struct waf_flow *f = new_flow(eng_resp);
		struct waf_verdict v;
		int rc;

		ck_assert_int_eq(feeds(f, WAF_DIR_IN, GET("/"), &v), WAF_ALLOW);
		rc = feed(f, WAF_DIR_OUT, resp, cut, &v);
		if (rc == WAF_ALLOW)
			rc = feed(f, WAF_DIR_OUT, resp + cut, len - cut, &v);
		ck_assert_msg(rc == want_rc && v.rule_id == want_rule,
			      "cut at %zu: %d rule %u", cut, rc, v.rule_id);
		ck_assert_int_eq(v.dir, WAF_DIR_OUT);
		waf_flow_destroy(f);
	}
	ck_assert_uint_eq(waf_engine_live_transactions(eng_resp), 0);
}

START_TEST(response_split_every_byte)
{
	check_every_response_cut("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				 "X-Powered-By: leaky/1.0\r\nContent-Length: 2\r\n"
				 "\r\nhi", WAF_DENY, 10009);
	check_every_response_cut("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				 "Transfer-Encoding: chunked\r\n\r\n"
				 "4\r\nsecr\r\n2\r\net\r\n0\r\n\r\n",
				 WAF_DENY, 10003);
	check_every_response_cut("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				 "X-Powered-By: leaky/2.0\r\nContent-Length: 6\r\n"
				 "\r\npublic", WAF_ALLOW, 0);
}
END_TEST

START_TEST(byte_by_byte)
{
	static const char in[] = GET("/a") "POST /b HTTP/1.1\r\nHost: h\r\n"
		"Transfer-Encoding: chunked\r\n\r\n3\r\nq=e\r\n3\r\nvil\r\n0\r\n\r\n";
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;
	unsigned reqs = 0;
	size_t i;
	int rc = WAF_ALLOW;

	for (i = 0; i < sizeof(in) - 1 && rc == WAF_ALLOW; i++) {
		rc = feed(f, WAF_DIR_IN, in + i, 1, &v);
		reqs += v.requests;
	}
	ck_assert_int_eq(rc, WAF_DENY);
	ck_assert_uint_eq(i, sizeof(in) - 1);   /* denied on the last byte */
	ck_assert_uint_eq(reqs, 1);
	ck_assert_uint_eq(v.rule_id, 10001);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(chunked_body_clean_and_split_token)
{
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;

	/* Chunks of a clean body, then a second request whose "evil" is cut
	 * across two chunks of the chunked encoding and two feeds. */
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, "POST /up HTTP/1.1\r\nHost: h\r\n"
			       "Transfer-Encoding: chunked\r\n\r\n"
			       "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", &v),
			 WAF_ALLOW);
	ck_assert_uint_eq(v.requests, 1);
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, "POST /up HTTP/1.1\r\nHost: h\r\n"
			       "Transfer-Encoding: chunked\r\n\r\n"
			       "4\r\na=ev\r\n", &v), WAF_ALLOW);
	ck_assert(waf_flow_in_message(f, WAF_DIR_IN));
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, "2\r\nil\r\n0\r\n\r\n", &v),
			 WAF_DENY);
	ck_assert_uint_eq(v.rule_id, 10001);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(header_rule_phase1)
{
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;

	/* Denied at the end of the head, before the body arrives. */
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, "POST / HTTP/1.1\r\nHost: h\r\n"
			       "X-Bad: 1\r\nContent-Length: 100\r\n\r\n", &v),
			 WAF_DENY);
	ck_assert_uint_eq(v.rule_id, 10002);
	waf_flow_destroy(f);
}
END_TEST

struct bad_case {
	const char *name;
	const char *in;
	unsigned rule;
};

static const struct bad_case bad_cases[] = {
	{ "tls on port 80", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
	  WAF_RULE_HTTP_REQUEST_LINE },
	{ "bad version", "GET / HTTP/1.1 extra\r\nHost: h\r\n\r\n",
	  WAF_RULE_HTTP_REQUEST_LINE },
	{ "space in url", "GET /a b/c HTTP/1.1\r\nHost: h\r\n\r\n",
	  WAF_RULE_HTTP_REQUEST_LINE },
	{ "bad content-length", "POST / HTTP/1.1\r\nHost: h\r\n"
	  "Content-Length: 12x\r\n\r\n", WAF_RULE_HTTP_CONTENT_LENGTH },
	{ "two content-lengths", "POST / HTTP/1.1\r\nHost: h\r\n"
	  "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
	  WAF_RULE_HTTP_CONTENT_LENGTH },
	{ "cl and te", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", WAF_RULE_HTTP_CL_AND_TE },
	{ "bad chunk size", "POST / HTTP/1.1\r\nHost: h\r\n"
	  "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n",
	  WAF_RULE_HTTP_CHUNKED },
	{ "control char in header name", "GET / HTTP/1.1\r\nHost: h\r\n"
	  "Bad\x01Header: 1\r\n\r\n", WAF_RULE_HTTP_HEADER_SYNTAX },
	{ "bare CR in header value", "GET / HTTP/1.1\r\nHost: h\r\n"
	  "X-A: a\rb\r\n\r\n", WAF_RULE_HTTP_HEADER_SYNTAX },
	{ "TE not chunked", "POST / HTTP/1.1\r\nHost: h\r\n"
	  "Transfer-Encoding: gzip\r\n\r\nabc", WAF_RULE_HTTP_CHUNKED },
};

/* Returns 0 if case c is denied as expected, 1 (and says why) if not. */
static unsigned check_malformed(const struct bad_case *c)
{
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v, v2;
	bool ok;

	/* A clean request first: the violation is in the second message. */
	ok = feeds(f, WAF_DIR_IN, GET("/"), &v) == WAF_ALLOW &&
	     feeds(f, WAF_DIR_IN, c->in, &v) == WAF_DENY &&
	     v.source == WAF_SRC_HTTP && v.rule_id == c->rule &&
	     v.status == 400 && strstr(v.msg, "protocol violation") &&
	     waf_engine_live_transactions(eng) == 0 &&
	     /* sticky: the flow stays denied, even for clean data */
	     feeds(f, WAF_DIR_IN, GET("/"), &v2) == WAF_DENY &&
	     v2.rule_id == c->rule && waf_flow_denied(f);
	if (!ok)
		fprintf(stderr, "case '%s': action %d rule %u (want %u) '%s'\n",
			c->name, v.action, v.rule_id, c->rule, v.msg);
	waf_flow_destroy(f);
	return ok ? 0 : 1;
}

START_TEST(malformed_denied)
{
	unsigned i, bad = 0, n = sizeof(bad_cases) / sizeof(bad_cases[0]);

	for (i = 0; i < n; i++)
		bad += check_malformed(&bad_cases[i]);
	ck_assert_msg(bad == 0, "%u of %u malformed streams not denied as expected",
		      bad, n);
}
END_TEST

START_TEST(head_too_large)
{
	struct waf_config cfg = { .crs_dir = "", .max_header_bytes = 256 };
	char err[256], big[600];
	struct waf_engine *e = waf_engine_create(&cfg, err, sizeof(err));
	struct waf_flow *f;
	struct waf_verdict v;

	ck_assert_msg(e != NULL, "%s", err);
	f = new_flow(e);
	snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nHost: h\r\nCookie: %0400d\r\n\r\n", 7);
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, big, &v), WAF_DENY);
	ck_assert_uint_eq(v.rule_id, WAF_RULE_HTTP_HEADER_LIMIT);
	waf_flow_destroy(f);
	waf_engine_put(e);
}
END_TEST

START_TEST(request_body_limit)
{
	struct waf_config cfg = { .crs_dir = "", .request_body_limit = 64 };
	char err[256], req[512];
	struct waf_engine *e = waf_engine_create(&cfg, err, sizeof(err));
	struct waf_flow *f;
	struct waf_verdict v;

	ck_assert_msg(e != NULL, "%s", err);
	f = new_flow(e);
	/* At the limit: fine.  One body byte more: refused. */
	snprintf(req, sizeof(req), "POST /u HTTP/1.1\r\nHost: h\r\n"
		 "Content-Type: text/plain\r\nContent-Length: 64\r\n\r\n%064d", 0);
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, req, &v), WAF_ALLOW);
	ck_assert_uint_eq(v.requests, 1);
	snprintf(req, sizeof(req), "POST /u HTTP/1.1\r\nHost: h\r\n"
		 "Content-Type: text/plain\r\nContent-Length: 65\r\n\r\n%065d", 0);
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, req, &v), WAF_DENY);
	ck_assert_int_eq(v.source, WAF_SRC_ENGINE);
	ck_assert_uint_eq(v.rule_id, 0);
	ck_assert_int_ge(v.status, 400);
	ck_assert_ptr_nonnull(strstr(v.msg, "limit"));
	waf_flow_destroy(f);
	ck_assert_uint_eq(waf_engine_live_transactions(e), 0);
	waf_engine_put(e);
}
END_TEST

START_TEST(no_leak_on_destroy_mid_message)
{
	static const char *const partial[] = {
		"GE",
		"GET /very/long/pa",
		"GET / HTTP/1.1\r\nHost: h\r\nAcc",
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc",
		GET("/done") "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
	};
	struct waf_verdict v;
	unsigned i;

	for (i = 0; i < sizeof(partial) / sizeof(partial[0]); i++) {
		struct waf_flow *f = new_flow(eng);

		ck_assert_int_eq(feeds(f, WAF_DIR_IN, partial[i], &v), WAF_ALLOW);
		ck_assert(waf_flow_in_message(f, WAF_DIR_IN) || i == 0);
		waf_flow_destroy(f);
		ck_assert_uint_eq(waf_engine_live_transactions(eng), 0);
	}
}
END_TEST

START_TEST(eof_mid_request)
{
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;

	ck_assert_int_eq(feeds(f, WAF_DIR_IN, "GET /x HTTP/1.1\r\nHo", &v), WAF_ALLOW);
	ck_assert_uint_eq(waf_engine_live_transactions(eng), 1);
	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_IN, NULL, 0, &v), WAF_ALLOW);
	ck_assert_uint_eq(waf_engine_live_transactions(eng), 0);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(responses_paired_in_order)
{
	struct waf_flow *f = new_flow(eng_resp);
	struct waf_verdict v;

	ck_assert_int_eq(feeds(f, WAF_DIR_IN, GET("/1") "HEAD /2 HTTP/1.1\r\n"
			       "Host: h\r\n\r\n" GET("/3") GET("/4"), &v), WAF_ALLOW);
	ck_assert_uint_eq(v.requests, 4);
	ck_assert_uint_eq(waf_engine_live_transactions(eng_resp), 4);
	/* 1: interim 100 then the final response; 2: HEAD, Content-Length
	 * but no body; 3: clean body split across feeds. */
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "HTTP/1.1 100 Continue\r\n\r\n"
			       "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
			       "Content-Length: 5\r\n\r\nhello"
			       "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
			       "Content-Length: 1000\r\n\r\n"
			       "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
			       "Content-Length: 10\r\n\r\nabc", &v), WAF_ALLOW);
	ck_assert_uint_eq(v.responses, 2);
	ck_assert(waf_flow_in_message(f, WAF_DIR_OUT));
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "defghij", &v), WAF_ALLOW);
	ck_assert_uint_eq(v.responses, 1);
	ck_assert_uint_eq(waf_engine_live_transactions(eng_resp), 1);
	/* 4: leaks a secret. */
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "HTTP/1.1 200 OK\r\n"
			       "Content-Type: text/plain\r\nContent-Length: 14\r\n"
			       "\r\nthe secret is", &v), WAF_ALLOW);
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "!", &v), WAF_DENY);
	ck_assert_int_eq(v.dir, WAF_DIR_OUT);
	ck_assert_uint_eq(v.rule_id, 10003);
	ck_assert_int_eq(v.status, 502);
	ck_assert_uint_eq(waf_engine_live_transactions(eng_resp), 0);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(response_status_rule_and_close_delimited)
{
	struct waf_flow *f = new_flow(eng_resp);
	struct waf_verdict v;

	ck_assert_int_eq(feeds(f, WAF_DIR_IN, "GET / HTTP/1.0\r\n\r\n", &v), WAF_ALLOW);
	/* HTTP/1.0 body delimited by the end of the connection. */
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "HTTP/1.0 200 OK\r\n"
			       "Content-Type: text/plain\r\n\r\nall good", &v),
			 WAF_ALLOW);
	ck_assert_uint_eq(v.responses, 0);
	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_OUT, NULL, 0, &v), WAF_ALLOW);
	ck_assert_uint_eq(v.responses, 1);
	ck_assert_uint_eq(waf_engine_live_transactions(eng_resp), 0);
	waf_flow_destroy(f);

	f = new_flow(eng_resp);
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, GET("/"), &v), WAF_ALLOW);
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "HTTP/1.1 418 I'm a teapot\r\n"
			       "Content-Length: 0\r\n\r\n", &v), WAF_DENY);
	ck_assert_uint_eq(v.rule_id, 10005);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(no_leak_with_waiting_requests)
{
	struct waf_flow *f = new_flow(eng_resp);
	struct waf_verdict v;
	unsigned i;

	for (i = 0; i < 40; i++)
		ck_assert_int_eq(feeds(f, WAF_DIR_IN, GET("/p"), &v), WAF_ALLOW);
	/* Only the first 16 queued requests keep a live transaction. */
	ck_assert_uint_eq(waf_engine_live_transactions(eng_resp), 16);
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "HTTP/1.1 200 OK\r\n"
			       "Content-Length: 2\r\n\r\nok", &v), WAF_ALLOW);
	ck_assert_uint_eq(waf_engine_live_transactions(eng_resp), 15);
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "HTTP/1.1 200 OK\r\n"
			       "Content-Length: 4\r\n\r\nok", &v), WAF_ALLOW);
	waf_flow_destroy(f);
	ck_assert_uint_eq(waf_engine_live_transactions(eng_resp), 0);
}
END_TEST

START_TEST(outbound_ignored_without_inspection)
{
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;

	ck_assert_int_eq(feeds(f, WAF_DIR_IN, GET("/"), &v), WAF_ALLOW);
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "not http at all, secret", &v),
			 WAF_ALLOW);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(upgrade_becomes_tunnel)
{
	struct waf_flow *f = new_flow(eng_resp);
	struct waf_verdict v;

	ck_assert_int_eq(feeds(f, WAF_DIR_IN, "GET /chat HTTP/1.1\r\nHost: h\r\n"
			       "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
			       "\x81\x85 binary frame evil", &v), WAF_ALLOW);
	ck_assert_uint_eq(v.requests, 1);
	ck_assert_int_eq(feeds(f, WAF_DIR_IN, "\x00\xff evil", &v), WAF_ALLOW);
	ck_assert_int_eq(feeds(f, WAF_DIR_OUT, "\x81\x02hi", &v), WAF_ALLOW);
	waf_flow_destroy(f);
	ck_assert_uint_eq(waf_engine_live_transactions(eng_resp), 0);
}
END_TEST

START_TEST(bad_arguments)
{
	struct waf_flow *f = new_flow(eng);
	struct waf_verdict v;

	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_IN, NULL, 5, &v), -EINVAL);
	ck_assert_int_eq(waf_flow_feed(f, (enum waf_dir)7,
				       (const uint8_t *)"x", 1, &v), -EINVAL);
	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_IN,
				       (const uint8_t *)"x", 1, NULL), -EINVAL);
	errno = 0;
	ck_assert_ptr_null(waf_flow_create(eng, NULL, 1, "10.0.0.1", 80));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(waf_flow_create(NULL, "10.0.0.1", 1, "10.0.0.1", 80));
	ck_assert_int_eq(errno, EINVAL);
	waf_flow_destroy(f);
	waf_flow_destroy(NULL);
}
END_TEST

static Suite *waf_http_suite(void)
{
	Suite *s = suite_create("waf_http");
	TCase *tc = tcase_create("stream");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, single_request_allowed);
	tcase_add_test(tc, warning_rule_is_reported);
	tcase_add_test(tc, pipelined_third_denied);
	tcase_add_test(tc, keep_alive_sequence);
	tcase_add_test(tc, split_every_byte_own_rules);
	tcase_add_test(tc, split_every_byte_crs);
	tcase_add_test(tc, response_split_every_byte);
	tcase_add_test(tc, byte_by_byte);
	tcase_add_test(tc, chunked_body_clean_and_split_token);
	tcase_add_test(tc, header_rule_phase1);
	tcase_add_test(tc, malformed_denied);
	tcase_add_test(tc, head_too_large);
	tcase_add_test(tc, request_body_limit);
	tcase_add_test(tc, no_leak_on_destroy_mid_message);
	tcase_add_test(tc, eof_mid_request);
	tcase_add_test(tc, responses_paired_in_order);
	tcase_add_test(tc, response_status_rule_and_close_delimited);
	tcase_add_test(tc, no_leak_with_waiting_requests);
	tcase_add_test(tc, outbound_ignored_without_inspection);
	tcase_add_test(tc, upgrade_becomes_tunnel);
	tcase_add_test(tc, bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}

/* Writes the test rules to a file (the API loads rule files), loads the
 * engines, removes the file. */
static int make_engines(void)
{
	char path[] = "/tmp/test_waf_http_XXXXXX";
	const char *files[1] = { path };
	struct waf_config own = { .crs_dir = "", .extra_rule_files = files,
				  .n_extra_rule_files = 1 };
	struct waf_config crs = { .paranoia_level = 1 };
	char err[512];
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, test_rules, strlen(test_rules)) !=
	    (ssize_t)strlen(test_rules)) {
		perror("test rules");
		return -1;
	}
	close(fd);
	eng = waf_engine_create(&own, err, sizeof(err));
	if (eng) {
		own.inspect_response = true;
		eng_resp = waf_engine_create(&own, err, sizeof(err));
	}
	unlink(path);
	if (eng_resp)
		eng_crs = waf_engine_create(&crs, err, sizeof(err));
	if (!eng || !eng_resp || !eng_crs) {
		fprintf(stderr, "engine: %s\n", err);
		return -1;
	}
	return 0;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (make_engines() < 0)
		return 1;
	sr = srunner_create(waf_http_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	waf_engine_put(eng_crs);
	waf_engine_put(eng_resp);
	waf_engine_put(eng);
	return failed ? 1 : 0;
}
