// SPDX-License-Identifier: MIT
/*
 * vnfs/ids HTTP buffers: request (http_uri, http_raw_uri, http_header,
 * http_cookie, http_method, http_client_body, urilen) and response
 * (file_data de-chunked and gunzipped, http_stat_code/msg, http_header).
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <zlib.h>

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
}

static struct ids_ruleset *load(const char *text)
{
	struct ids_diags d = { 0 };
	struct ids_ruleset *rs = ids_ruleset_load_mem("h.rules", text,
						      strlen(text), NULL, &d);

	for (size_t i = 0; i < d.n; i++)
		fprintf(stderr, "diag: %s\n", d.msg[i]);
	ck_assert_ptr_nonnull(rs);
	ck_assert_uint_eq(d.n, 0);
	ids_diags_free(&d);
	return rs;
}

static struct ids_flow *flow(struct ids_ruleset *rs)
{
	struct ids_flow_key k = { .family = AF_INET, .client_port = 40000,
				  .server_port = 80 };
	struct ids_flow *f;

	inet_pton(AF_INET, "192.168.1.10", k.client_addr);
	inet_pton(AF_INET, "10.0.0.1", k.server_addr);
	f = ids_flow_create(rs, &k);
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

/* Sends @len bytes in direction @d in @chunk-byte pieces; how often @sid fired. */
static unsigned send_dir(struct ids_flow *f, enum ids_dir d, const uint8_t *p,
			 size_t len, size_t chunk, uint32_t sid)
{
	unsigned hits = 0;

	for (size_t at = 0; at < len; at += chunk) {
		struct ids_verdict v;
		size_t n = len - at < chunk ? len - at : chunk;

		ck_assert_int_eq(ids_flow_scan(w, f, d, p + at, n, &v), 0);
		hits += has_sid(&v, sid);
	}
	return hits;
}

static unsigned send_req(struct ids_flow *f, const char *req, size_t len,
			 size_t chunk, uint32_t sid)
{
	return send_dir(f, IDS_TO_SERVER, (const uint8_t *)req, len, chunk, sid);
}

/* Whether @sid fires on @req sent whole, in a fresh flow. */
static bool fires(struct ids_ruleset *rs, const char *req, uint32_t sid)
{
	struct ids_flow *f = flow(rs);
	unsigned h = send_req(f, req, strlen(req), strlen(req), sid);

	ids_flow_destroy(f);
	return h > 0;
}

#define A "alert tcp any any -> any any "

START_TEST(uri)
{
	struct ids_ruleset *rs = load(
		A "(content:\"/admin.php\"; http_uri; sid:1;)\n"
		A "(content:\"../../etc/passwd\"; http_uri; sid:2;)\n"
		A "(content:\"../../etc/passwd\"; sid:3;)\n"
		A "(content:\"/adm\"; http_uri; depth:4; sid:4;)\n"
		A "(uricontent:\"cmd.exe\"; nocase; sid:5;)\n");

	ck_assert(fires(rs, "GET /admin.php?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", 1));
	ck_assert(!fires(rs, "GET /index.html HTTP/1.1\r\nReferer: "
			 "http://a/admin.php\r\n\r\n", 1));
	ck_assert(fires(rs, "GET /a/%2e%2e/%2E%2E/etc/passwd HTTP/1.1\r\n\r\n",
			2));
	ck_assert(!fires(rs, "GET /a/%2e%2e/%2E%2E/etc/passwd HTTP/1.1\r\n\r\n",
			 3));
	ck_assert(fires(rs, "GET /admin HTTP/1.1\r\n\r\n", 4));
	ck_assert(!fires(rs, "GET /x/admin HTTP/1.1\r\n\r\n", 4));
	ck_assert(fires(rs, "GET /scripts/CMD.EXE HTTP/1.0\r\n\r\n", 5));
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(raw_uri_cookie_urilen)
{
	struct ids_ruleset *rs = load(
		A "(content:\"%2e%2e\"; http_raw_uri; sid:1;)\n"
		A "(content:\"..\"; http_raw_uri; sid:2;)\n"
		A "(pcre:\"/%2e%2e/I\"; sid:3;)\n"
		A "(content:\"session=evil\"; http_cookie; sid:4;)\n"
		A "(pcre:\"/^admin=1/Cm\"; sid:5;)\n"
		A "(urilen:5; sid:6;)\n"
		A "(urilen:>10; sid:7;)\n"
		A "(urilen:<3; sid:8;)\n"
		A "(urilen:2<>5; sid:9;)\n"
		A "(urilen:2<=>5; sid:10;)\n"
		A "(urilen:3,norm; sid:11;)\n"
		A "(content:\"/a\"; http_uri; urilen:>4; sid:12;)\n"
		A "(content:\"X-Raw: 1\"; http_raw_header; sid:13;)\n"
		A "(pcre:\"/^X-Raw: 2/Km\"; sid:14;)\n"
		A "(content:\"session=evil\"; http_raw_cookie; sid:15;)\n"
		A "(pcre:\"/session=evil/D\"; sid:16;)\n"
		A "(content:\"Authorization|3a| Basic \"; http_header; "
		"base64_decode:relative; base64_data; content:\"root:\"; "
		"depth:5; sid:17;)\n");
	const char *enc = "GET /%2e%2e/x HTTP/1.1\r\n\r\n";
	const char *ck = "GET / HTTP/1.1\r\nHost: a\r\nCookie: a=b; "
		"session=evil\r\n\r\n";

	ck_assert(fires(rs, enc, 1));
	ck_assert(!fires(rs, enc, 2));		/* raw: not decoded */
	ck_assert(fires(rs, enc, 3));
	ck_assert(!fires(rs, "GET /../x HTTP/1.1\r\n\r\n", 1));
	ck_assert(fires(rs, "GET /../x HTTP/1.1\r\n\r\n", 2));
	ck_assert(fires(rs, ck, 4));
	ck_assert(!fires(rs, "GET /session=evil HTTP/1.1\r\n\r\n", 4));
	ck_assert(!fires(rs, "GET / HTTP/1.1\r\nX-Cookie: session=evil\r\n\r\n",
			 4));
	ck_assert(fires(rs, "GET / HTTP/1.1\r\nCookie: x=1\r\n"
			"Cookie: admin=1\r\n\r\n", 5));
	ck_assert(!fires(rs, "GET / HTTP/1.1\r\nCookie: x=1; admin=1\r\n\r\n",
			 5));
	/* urilen counts the raw target: "/%41b" is 5 bytes, decoded 3 */
	ck_assert(fires(rs, "GET /%41b HTTP/1.1\r\n\r\n", 6));
	ck_assert(fires(rs, "GET /%41b HTTP/1.1\r\n\r\n", 11));
	ck_assert(!fires(rs, "GET /abcd HTTP/1.1\r\n\r\n", 11));
	ck_assert(!fires(rs, "GET /abc HTTP/1.1\r\n\r\n", 6));
	ck_assert(fires(rs, "GET /abcdefghij HTTP/1.1\r\n\r\n", 7));
	ck_assert(!fires(rs, "GET /abcdefghi HTTP/1.1\r\n\r\n", 7));
	ck_assert(fires(rs, "GET /a HTTP/1.1\r\n\r\n", 8));
	ck_assert(!fires(rs, "GET /ab HTTP/1.1\r\n\r\n", 8));
	ck_assert(fires(rs, "GET /abc HTTP/1.1\r\n\r\n", 9));
	ck_assert(!fires(rs, "GET /abcd HTTP/1.1\r\n\r\n", 9));	/* 5: excl. */
	ck_assert(fires(rs, "GET /abcd HTTP/1.1\r\n\r\n", 10));
	ck_assert(!fires(rs, "GET /abcde HTTP/1.1\r\n\r\n", 10));
	ck_assert(fires(rs, "GET /abcd HTTP/1.1\r\n\r\n", 12));
	ck_assert(!fires(rs, "GET /abc HTTP/1.1\r\n\r\n", 12));
	ck_assert(!fires(rs, "POST /abcd HTTP/1.1\r\n\r\n", 99));
	ck_assert(fires(rs, "GET / HTTP/1.1\r\nX-Raw: 1\r\n\r\n", 13));
	ck_assert(!fires(rs, "GET /X-Raw:%201 HTTP/1.1\r\n\r\n", 13));
	ck_assert(fires(rs, "GET / HTTP/1.1\r\nA: b\r\nX-Raw: 2\r\n\r\n", 14));
	ck_assert(!fires(rs, "GET / HTTP/1.1\r\nA: X-Raw: 2\r\n\r\n", 14));
	ck_assert(fires(rs, ck, 15));
	ck_assert(fires(rs, ck, 16));
	ck_assert(!fires(rs, "GET /session=evil HTTP/1.1\r\n\r\n", 16));
	ck_assert(fires(rs, "GET / HTTP/1.1\r\nAuthorization: Basic "
			"cm9vdDp4\r\n\r\n", 17));
	ck_assert(!fires(rs, "GET / HTTP/1.1\r\nAuthorization: Basic "
			 "dXNlcjp4\r\n\r\n", 17));
	ids_ruleset_put(rs);
}
END_TEST

static unsigned send_resp(struct ids_flow *f, const uint8_t *resp, size_t len,
			  size_t chunk, uint32_t sid)
{
	return send_dir(f, IDS_TO_CLIENT, resp, len, chunk, sid);
}

static bool resp_fires(struct ids_ruleset *rs, const void *resp, size_t len,
		       uint32_t sid)
{
	struct ids_flow *f = flow(rs);
	unsigned h = send_resp(f, resp, len, len, sid);

	ids_flow_destroy(f);
	return h > 0;
}

#define C "alert tcp any any -> any any (flow:to_client,established; "

static const char *resp_rules =
	C "file_data; content:\"evil payload\"; sid:1;)\n"
	C "file_data; content:\"<html>\"; depth:6; sid:2;)\n"
	C "content:\"404\"; http_stat_code; sid:3;)\n"
	C "content:\"Not Found\"; http_stat_msg; sid:4;)\n"
	C "content:\"X-Evil: 1\"; http_header; sid:5;)\n"
	C "file_data; content:\"Content-Length\"; sid:6;)\n"
	C "file_data; pkt_data; content:\"Content-Length\"; sid:7;)\n"
	C "file_data; content:\"A\"; byte_test:1,=,66,0,relative; sid:8;)\n"
	C "pcre:\"/^40[34]$/S\"; file_data; content:\"denied\"; sid:9;)\n";

/* A gzip member of @text, in a static buffer of its own. */
static size_t gzip_of(const char *text, uint8_t *out, size_t cap, int wbits)
{
	z_stream z = { 0 };

	ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, wbits, 8,
				      Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)text;
	z.avail_in = (uInt)strlen(text);
	z.next_out = out;
	z.avail_out = (uInt)cap;
	ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	deflateEnd(&z);
	return cap - z.avail_out;
}

/* An HTTP/1.1 response with @body and @hdrs (CRLF-ended lines). */
static size_t make_resp(uint8_t *out, size_t cap, const char *hdrs,
			const void *body, size_t blen)
{
	int n = snprintf((char *)out, cap, "HTTP/1.1 200 OK\r\n%s"
			 "Content-Length: %zu\r\n\r\n", hdrs, blen);

	ck_assert_uint_lt((size_t)n + blen, cap);
	memcpy(out + n, body, blen);
	return (size_t)n + blen;
}

START_TEST(response_buffers)
{
	struct ids_ruleset *rs = load(resp_rules);
	const char *plain = "HTTP/1.1 200 OK\r\nContent-Length: 25\r\n\r\n"
		"<html>evil payload</html>";
	const char *nf = "HTTP/1.1 404 Not Found\r\nX-Evil: 1\r\n"
		"Content-Length: 6\r\n\r\ndenied";
	const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
		"\r\n\r\n6\r\n<html>\r\n5\r\nevil \r\n7\r\npayload\r\n"
		"0\r\n\r\n";

	ck_assert_uint_eq(ids_ruleset_nrules(rs), 9);
	ck_assert(resp_fires(rs, plain, strlen(plain), 1));
	ck_assert(resp_fires(rs, plain, strlen(plain), 2));
	ck_assert(!resp_fires(rs, plain, strlen(plain), 3));
	ck_assert(!resp_fires(rs, plain, strlen(plain), 5));
	ck_assert(!resp_fires(rs, plain, strlen(plain), 6));	/* head: no */
	ck_assert(resp_fires(rs, plain, strlen(plain), 7));	/* pkt_data */
	ck_assert(resp_fires(rs, nf, strlen(nf), 3));
	ck_assert(resp_fires(rs, nf, strlen(nf), 4));
	ck_assert(resp_fires(rs, nf, strlen(nf), 5));
	ck_assert(resp_fires(rs, nf, strlen(nf), 9));
	ck_assert(!resp_fires(rs, nf, strlen(nf), 1));
	/* de-chunked: the pattern spans three chunks of the encoding */
	ck_assert(resp_fires(rs, chunked, strlen(chunked), 1));
	ck_assert(resp_fires(rs, chunked, strlen(chunked), 2));
	/* relative byte_test in file_data */
	{
		const char *ab = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nAB";
		const char *ac = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nAC";

		ck_assert(resp_fires(rs, ab, strlen(ab), 8));
		ck_assert(!resp_fires(rs, ac, strlen(ac), 8));
	}
	/* a request body is not file_data; a non-HTTP stream has none */
	ck_assert(!fires(rs, "POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n"
			 "evil payload", 1));
	ck_assert(!resp_fires(rs, "SSH-2.0 evil payload", 20, 1));
	ids_ruleset_put(rs);
}
END_TEST

/* gzip and deflate (zlib and raw) bodies, split at every position. */
START_TEST(response_gzip)
{
	static const struct { const char *enc; int wbits; } encs[] = {
		{ "gzip", 15 + 16 }, { "deflate", 15 }, { "deflate", -15 },
		{ "x-gzip", 15 + 16 },
	};
	struct ids_ruleset *rs = load(resp_rules);
	uint8_t z[512], resp[1024];
	char hdr[64];
	const char *body = "<html><p>Hello</p> and an evil payload here</html>";
	size_t zn, n;

	snprintf(hdr, sizeof(hdr), "Content-Encoding: %s\r\n", encs[_i].enc);
	zn = gzip_of(body, z, sizeof(z), encs[_i].wbits);
	n = make_resp(resp, sizeof(resp), hdr, z, zn);
	for (size_t chunk = 1; chunk <= n; chunk++) {
		struct ids_flow *f = flow(rs);

		ck_assert_msg(send_resp(f, resp, n, chunk, 1) == 1,
			      "%s in %zu-byte chunks", encs[_i].enc, chunk);
		ids_flow_destroy(f);
	}
	/* compressed bytes are not searched as they are */
	n = make_resp(resp, sizeof(resp), "", z, zn);
	ck_assert(!resp_fires(rs, resp, n, 1));
	/* corrupted after a good start: what decoded is kept, no crash */
	n = make_resp(resp, sizeof(resp), hdr, z, zn);
	resp[n - zn / 2] ^= 0xff;
	(void)resp_fires(rs, resp, n, 1);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(header_method_body)
{
	struct ids_ruleset *rs = load(
		A "(content:\"User-Agent: sqlmap\"; http_header; nocase; sid:1;)\n"
		A "(content:\"POST\"; http_method; content:\"/login\"; http_uri; "
		"sid:2;)\n"
		A "(content:\"union select\"; nocase; http_client_body; sid:3;)\n"
		A "(pcre:\"/id=\\d+'/U\"; sid:4;)\n"
		A "(pcre:\"/^X-Forwarded-For: 6\\.6\\.6\\.6\\r?$/Hm\"; sid:5;)\n"
		A "(content:\"pass=\"; http_client_body; pcre:\"/^hunter2/PR\"; "
		"sid:6;)\n"
		A "(content:\"/cgi-bin/\"; http_uri; content:\"Host: evil\"; "
		"sid:7;)\n");
	const char *post = "POST /login HTTP/1.1\r\nHost: a\r\n"
			   "User-Agent: SQLMap/1.0\r\nContent-Length: 36\r\n\r\n"
			   "user=a&q=1 UNION SELECT&pass=hunter2";

	ck_assert(fires(rs, post, 1));
	ck_assert(fires(rs, post, 2));
	ck_assert(fires(rs, post, 3));
	ck_assert(fires(rs, post, 6));
	ck_assert(!fires(rs, "GET /login HTTP/1.1\r\n\r\n", 2));
	/* body text in the URI or header is not body */
	ck_assert(!fires(rs, "GET /union%20select HTTP/1.1\r\nX: union select"
			 "\r\n\r\n", 3));
	ck_assert(!fires(rs, "GET /?q=User-Agent:%20sqlmap HTTP/1.1\r\n\r\n", 1));
	ck_assert(fires(rs, "GET /item?id=12' HTTP/1.1\r\n\r\n", 4));
	ck_assert(!fires(rs, "GET /item HTTP/1.1\r\nX: id=12'\r\n\r\n", 4));
	ck_assert(fires(rs, "GET / HTTP/1.1\r\nX-Forwarded-For: 6.6.6.6\r\n"
			"Host: a\r\n\r\n", 5));
	ck_assert(!fires(rs, "GET / HTTP/1.1\r\nX-Forwarded-For: 6.6.6.66\r\n"
			 "\r\n", 5));
	ck_assert(fires(rs, "GET /cgi-bin/x HTTP/1.1\r\nHost: evil\r\n\r\n", 7));
	ck_assert(!fires(rs, "GET /cgi-bin/x HTTP/1.1\r\nHost: good\r\n\r\n", 7));
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(chunked_body)
{
	struct ids_ruleset *rs = load(
		A "(content:\"union select\"; http_client_body; sid:3;)\n");
	const char *req = "POST /q HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "6\r\nunion \r\n6\r\nselect\r\n0\r\n\r\n";

	/* the chunk framing is removed: the body is "union select" */
	ck_assert(fires(rs, req, 3));
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(split_every_position)
{
	struct ids_ruleset *rs = load(
		A "(content:\"/admin.php\"; http_uri; sid:1;)\n"
		A "(content:\"evil body\"; http_client_body; sid:2;)\n");
	const char *req = "POST /x/admin.php HTTP/1.1\r\nContent-Length: 9\r\n"
			  "\r\nevil body";
	size_t len = strlen(req);

	for (size_t k = 1; k < len; k++) {
		struct ids_flow *f = flow(rs);
		unsigned h1 = send_req(f, req, k, k, 1);
		unsigned h2 = send_req(f, req + k, len - k, len, 1);

		ck_assert_uint_eq(h1 + h2, 1);
		ids_flow_destroy(f);
		f = flow(rs);
		h1 = send_req(f, req, k, k, 2);
		h2 = send_req(f, req + k, len - k, len, 2);
		ck_assert_uint_eq(h1, 0);	/* body completes at the end */
		ck_assert_uint_eq(h2, 1);
		ids_flow_destroy(f);
	}
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(keep_alive)
{
	struct ids_ruleset *rs = load(
		"drop tcp any any -> any any (content:\"/shell\"; http_uri; "
		"sid:1;)\n");
	const char *clean = "GET /a HTTP/1.1\r\nHost: a\r\n\r\n";
	const char *bad = "GET /shell HTTP/1.1\r\nHost: a\r\n\r\n";
	struct ids_flow *f = flow(rs);
	char two[256];
	struct ids_verdict v;

	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(send_req(f, clean, strlen(clean), 7, 1), 0);
	/* the response direction does not disturb the request parser */
	ck_assert_int_eq(ids_flow_scan(w, f, IDS_TO_CLIENT, (const uint8_t *)
				       "HTTP/1.1 200 OK\r\n\r\n", 19, &v), 0);
	ck_assert_uint_eq(send_req(f, bad, strlen(bad), 5, 1), 1);
	ck_assert_int_eq(ids_flow_scan(w, f, IDS_TO_SERVER,
				       (const uint8_t *)"x", 1, &v), 0);
	ck_assert_int_eq(v.decision, IDS_DENY);
	ids_flow_destroy(f);

	/* pipelined in one chunk */
	snprintf(two, sizeof(two), "%s%s", clean, bad);
	ck_assert(fires(rs, two, 1));
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(not_http)
{
	struct ids_ruleset *rs = load(
		A "(content:\"/admin.php\"; http_uri; sid:1;)\n"
		A "(content:\"/admin.php\"; sid:2;)\n");

	ck_assert(!fires(rs, "HELLO /admin.php HTTP/1.1\r\n\r\n", 1));
	ck_assert(fires(rs, "HELLO /admin.php HTTP/1.1\r\n\r\n", 2));
	ck_assert(!fires(rs, "G", 1));
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(parse_error_stops_http)
{
	struct ids_ruleset *rs = load(
		A "(content:\"/a\"; http_uri; sid:1;)\n"
		A "(content:\"/b\"; http_uri; sid:2;)\n"
		A "(content:\"raw-b\"; sid:3;)\n");
	const char *req = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nBad Header"
			  "\r\n\r\nGET /b raw-b HTTP/1.1\r\n\r\n";
	struct ids_flow *f = flow(rs);
	struct ids_verdict v;

	ck_assert_int_eq(ids_flow_scan(w, f, IDS_TO_SERVER, (const uint8_t *)
				       req, strlen(req), &v), 0);
	ck_assert(has_sid(&v, 1));
	ck_assert(!has_sid(&v, 2));
	ck_assert(has_sid(&v, 3));
	ids_flow_destroy(f);
	ids_ruleset_put(rs);
}
END_TEST

START_TEST(caps)
{
	struct ids_ruleset *rs = load(
		A "(content:\"ATTACK\"; http_client_body; sid:1;)\n"
		A "(content:\"deep\"; http_uri; sid:2;)\n");
	size_t blen = 40000;
	char *req = malloc(blen + 20000);
	struct ids_flow *f;
	int n;

	/* attack early in a large body: found when the body cap fills */
	n = sprintf(req, "POST / HTTP/1.1\r\nContent-Length: %zu\r\n\r\n", blen);
	memset(req + n, 'b', blen);
	memcpy(req + n + 100, "ATTACK", 6);
	f = flow(rs);
	ck_assert_uint_eq(send_req(f, req, (size_t)n + blen, 1460, 1), 1);
	ids_flow_destroy(f);
	/* beyond the cap: documented miss */
	memset(req + n, 'b', blen);
	memcpy(req + n + 30000, "ATTACK", 6);
	f = flow(rs);
	ck_assert_uint_eq(send_req(f, req, (size_t)n + blen, 1460, 1), 0);
	ids_flow_destroy(f);
	/* an over-long URI is truncated, not fatal */
	n = sprintf(req, "GET /");
	memset(req + n, 'u', 12000);
	n += 12000;
	n += sprintf(req + n, "deep HTTP/1.1\r\n\r\n");
	f = flow(rs);
	ck_assert_uint_eq(send_req(f, req, (size_t)n, 1000, 2), 0);
	ids_flow_destroy(f);
	free(req);
	ids_ruleset_put(rs);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ids_http");
	TCase *tc = tcase_create("http");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, uri);
	tcase_add_test(tc, raw_uri_cookie_urilen);
	tcase_add_test(tc, response_buffers);
	tcase_add_loop_test(tc, response_gzip, 0, 4);
	tcase_add_test(tc, header_method_body);
	tcase_add_test(tc, chunked_body);
	tcase_add_test(tc, split_every_position);
	tcase_add_test(tc, keep_alive);
	tcase_add_test(tc, not_http);
	tcase_add_test(tc, parse_error_stops_http);
	tcase_add_test(tc, caps);
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
