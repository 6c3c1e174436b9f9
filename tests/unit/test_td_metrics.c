// SPDX-License-Identifier: MIT
/*
 * Unit tests for tochaind/td_metrics.c, its pure parts: the Prometheus
 * text exposition (escaping, the line grammar of what it writes), the
 * request router and the --metrics address parser.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <regex.h>
#include <string.h>

#include "td_metrics.h"
#include "tc_check.h"

/* A sample line of the exposition format 0.0.4 (no timestamp). */
#define SAMPLE_RE "^[a-zA-Z_:][a-zA-Z0-9_:]*" \
	"(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\n]|\\\\[\\\\\"n])*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\n]|\\\\[\\\\\"n])*\")*)?\\})?" \
	" (NaN|[+-]Inf|[-+]?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?)$"
#define COMMENT_RE "^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* ([^\\\\\n]|\\\\[\\\\n])*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped))$"

static bool matches(const char *re, const char *line)
{
	regex_t r;
	int rc;

	ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	rc = regexec(&r, line, 0, NULL, 0);
	regfree(&r);
	return rc == 0;
}

/* Every line of @text is a comment or a sample line. */
static void check_grammar(const char *text)
{
	char *copy = strdup(text), *save = NULL;

	ck_assert_ptr_nonnull(copy);
	ck_assert(text[0] && text[strlen(text) - 1] == '\n');
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		ck_assert_msg(matches(l[0] == '#' ? COMMENT_RE : SAMPLE_RE, l), "bad line: %s", l);
	free(copy);
}

START_TEST(test_escape_label)
{
	struct td_mbuf b = { 0 };

	td_metrics_escape_label(&b, "a\\b\"c\nd");
	ck_assert_str_eq(b.s, "a\\\\b\\\"c\\nd");
	td_mbuf_free(&b);
	td_metrics_escape_label(&b, "");
	ck_assert_ptr_null(b.s);	/* nothing appended */
	td_mbuf_free(&b);
}
END_TEST

START_TEST(test_family_and_samples)
{
	struct td_mbuf b = { 0 };
	const char *l1[] = { "vm", "web1", "chain", "web-in", NULL };
	const char *l2[] = { "vm", "we\"b\\1\n", "domain", NULL, "rule", "7", NULL };

	td_metrics_family(&b, "tochain_chain_arrivals_total", "counter", "Help with \\ and\nnewline \"quoted\"");
	td_metrics_sample(&b, "tochain_chain_arrivals_total", l1, 42);
	td_metrics_sample(&b, "tochain_chain_arrivals_total", l2, 1e300);
	td_metrics_sample(&b, "tochain_up", NULL, 0.25);
	td_metrics_sample(&b, "tochain_x", NULL, NAN);
	td_metrics_sample(&b, "tochain_x", NULL, INFINITY);
	td_metrics_sample(&b, "tochain_x", NULL, -INFINITY);
	td_metrics_sample(&b, "tochain_x", NULL, 18446744073709551615.0);
	td_metrics_sample(&b, "tochain_x", NULL, -3);
	td_metrics_sample(&b, "tochain_x", NULL, 0.04);
	td_metrics_sample(&b, "tochain_x", NULL, 0.1 + 0.2);
	ck_assert(!b.oom);
	ck_assert_str_eq(b.s,
		"# HELP tochain_chain_arrivals_total Help with \\\\ and\\nnewline \"quoted\"\n"
		"# TYPE tochain_chain_arrivals_total counter\n"
		"tochain_chain_arrivals_total{vm=\"web1\",chain=\"web-in\"} 42\n"
		"tochain_chain_arrivals_total{vm=\"we\\\"b\\\\1\\n\",rule=\"7\"} 1e+300\n"
		"tochain_up 0.25\n"
		"tochain_x NaN\n"
		"tochain_x +Inf\n"
		"tochain_x -Inf\n"
		"tochain_x 1.8446744073709552e+19\n"
		"tochain_x -3\n"
		"tochain_x 0.04\n"
		"tochain_x 0.30000000000000004\n");
	check_grammar(b.s);
	td_mbuf_free(&b);
}
END_TEST

START_TEST(test_grammar_rejects)
{
	/* the checker itself: what the format forbids is refused */
	ck_assert(!matches(SAMPLE_RE, "1bad 1"));
	ck_assert(!matches(SAMPLE_RE, "x{a=\"unescaped\"quote\"} 1"));
	ck_assert(!matches(SAMPLE_RE, "x{a=\"v\",} 1"));
	ck_assert(!matches(SAMPLE_RE, "x{a=\"v\\q\"} 1"));
	ck_assert(!matches(SAMPLE_RE, "x 1 2 3"));
	ck_assert(!matches(SAMPLE_RE, "x nan"));
	ck_assert(!matches(COMMENT_RE, "# TYPE x counters"));
	ck_assert(matches(SAMPLE_RE, "x{a=\"q\\\"\\\\\\n\"} 1.5e-3"));
}
END_TEST

START_TEST(test_big_text)
{
	struct td_mbuf b = { 0 };
	char v[64];

	for (unsigned int i = 0; i < 5000; i++) {
		const char *l[] = { "n", v, NULL };

		snprintf(v, sizeof(v), "%u", i);
		td_metrics_sample(&b, "tochain_many", l, i);
	}
	ck_assert(!b.oom);
	ck_assert_uint_eq(b.len, strlen(b.s));
	ck_assert_ptr_nonnull(strstr(b.s, "tochain_many{n=\"4999\"} 4999\n"));
	check_grammar(b.s);
	td_mbuf_free(&b);
}
END_TEST

START_TEST(test_names)
{
	ck_assert(td_metrics_name_valid("tochain_chain_done_total", false));
	ck_assert(td_metrics_name_valid("a:b", false));
	ck_assert(!td_metrics_name_valid("a:b", true));
	ck_assert(!td_metrics_name_valid("9a", false));
	ck_assert(!td_metrics_name_valid("a-b", true));
	ck_assert(!td_metrics_name_valid("", true));
	ck_assert(!td_metrics_name_valid(NULL, true));
}
END_TEST

static int route(const char *s)
{
	return td_metrics_http_route(s, strlen(s));
}

START_TEST(test_route)
{
	ck_assert_int_eq(route("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), 200);
	ck_assert_int_eq(route("GET /metrics HTTP/1.0\n\n"), 200);
	ck_assert_int_eq(route("GET /metrics?x=1 HTTP/1.1\r\n\r\n"), 200);
	ck_assert_int_eq(route("GET / HTTP/1.1\r\n\r\n"), 404);
	ck_assert_int_eq(route("GET /metricsx HTTP/1.1\r\n\r\n"), 404);
	ck_assert_int_eq(route("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n"), 404);
	/* incomplete: wait for more */
	ck_assert_int_eq(route(""), 0);
	ck_assert_int_eq(route("GET /metr"), 0);
	ck_assert_int_eq(route("GET /metrics HTTP/1.1\r\nHost: x\r\n"), 0);
	/* bad, as soon as the first line is */
	ck_assert_int_eq(route("\r\n"), 400);
	ck_assert_int_eq(route("garbage\r\n"), 400);
	ck_assert_int_eq(route("GET /metrics HTTP/2.0\r\n"), 400);
	ck_assert_int_eq(route("GET /metrics HTTP/1.1 x\r\n"), 400);
	ck_assert_int_eq(route("GET metrics HTTP/1.1\r\n"), 400);
	ck_assert_int_eq(route("get /metrics HTTP/1.1\r\n"), 400);
	ck_assert_int_eq(route("GET  /metrics HTTP/1.1\r\n"), 400);
	ck_assert_int_eq(route("GET /met\x01rics HTTP/1.1\r\n"), 400);
	ck_assert_int_eq(route("GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n"), 400);
	ck_assert_int_eq(route("GET /metrics HTTP/1.1\r\nA: \x01\r\n\r\n"), 400);
	{
		static const char nul[] = "GET /metrics HTTP/1.1\r\nA: b\0c";
		static const char tls[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n";

		ck_assert_int_eq(td_metrics_http_route(nul, sizeof(nul) - 1), 400);
		ck_assert_int_eq(td_metrics_http_route(tls, sizeof(tls) - 1), 400);	/* a TLS hello */
	}
}
END_TEST

START_TEST(test_parse_addr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;

	ck_assert_int_eq(td_metrics_parse_addr("127.0.0.1:9464", &ss, &len), 0);
	ck_assert_int_eq(a4->sin_family, AF_INET);
	ck_assert_int_eq(ntohs(a4->sin_port), 9464);
	ck_assert_int_eq(ntohl(a4->sin_addr.s_addr), 0x7f000001);
	ck_assert_uint_eq(len, sizeof(*a4));
	ck_assert_int_eq(td_metrics_parse_addr("[::1]:80", &ss, &len), 0);
	ck_assert_int_eq(a6->sin6_family, AF_INET6);
	ck_assert_int_eq(ntohs(a6->sin6_port), 80);
	ck_assert_int_eq(td_metrics_parse_addr("0.0.0.0:65535", &ss, &len), 0);
	ck_assert_int_eq(td_metrics_parse_addr("127.0.0.1:0", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr("127.0.0.1:65536", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr("127.0.0.1:", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr("127.0.0.1:-1", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr("127.0.0.1:80x", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr("127.0.0.1", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr("localhost:80", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr("::1:80", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr("[::1:80", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr("[]:80", &ss, &len), -EINVAL);
	ck_assert_int_eq(td_metrics_parse_addr(":80", &ss, &len), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("td_metrics");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_escape_label);
	tcase_add_test(tc, test_family_and_samples);
	tcase_add_test(tc, test_grammar_rejects);
	tcase_add_test(tc, test_big_text);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_route);
	tcase_add_test(tc, test_parse_addr);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
