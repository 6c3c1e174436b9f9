/*
 * vnfs/waf: engine decisions with the OWASP CRS (Debian modsecurity-crs):
 * attacks of each family are denied with a rule of that family, ordinary
 * browser/API traffic passes, the paranoia level matters, and engines are
 * reference counted.  The CRS engines are loaded once, in main.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waf_engine.h"

static struct waf_engine *pl1;        /* CRS, paranoia 1 */
static struct waf_engine *pl2;        /* CRS, paranoia 2 */
static struct waf_engine *pl1_resp;   /* CRS, paranoia 1, responses too */

#define UA "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:115.0) " \
	"Gecko/20100101 Firefox/115.0\r\n"
#define BROWSER "Host: www.example.com\r\n" UA \
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9," \
	"image/avif,image/webp,*/*;q=0.8\r\n" \
	"Accept-Language: en-US,en;q=0.5\r\n" \
	"Accept-Encoding: gzip, deflate, br\r\n" \
	"Connection: keep-alive\r\n"

struct req_case {
	const char *name;
	const char *req;
	unsigned lo, hi;    /* expected family: ids in [lo, hi] */
};

static const struct req_case attacks[] = {
	{ "sqli tautology", "GET /item.php?id=1%27%20OR%20%271%27=%271 HTTP/1.1\r\n"
	  BROWSER "\r\n", 942000, 942999 },
	{ "sqli union select", "GET /news?id=1+UNION+SELECT+username,password+FROM+users"
	  " HTTP/1.1\r\n" BROWSER "\r\n", 942000, 942999 },
	{ "sqli in json body", "POST /api/login HTTP/1.1\r\n" BROWSER
	  "Content-Type: application/json\r\nContent-Length: 53\r\n\r\n"
	  "{\"user\":\"admin' OR 1=1 -- \",\"password\":\"x\",\"r\":true}\n",
	  942000, 942999 },
	{ "xss in query", "GET /search?q=%3Cscript%3Ealert(1)%3C/script%3E HTTP/1.1\r\n"
	  BROWSER "\r\n", 941000, 941999 },
	{ "xss in form body", "POST /comment HTTP/1.1\r\n" BROWSER
	  "Content-Type: application/x-www-form-urlencoded\r\n"
	  "Content-Length: 53\r\n\r\n"
	  "name=bob&text=%3Cscript%3Ealert(1)%3C%2Fscript%3E&x=1", 941000, 941999 },
	{ "path traversal", "GET /download?file=../../etc/passwd HTTP/1.1\r\n"
	  BROWSER "\r\n", 930000, 930999 },
	{ "encoded traversal", "GET /static/..%2f..%2f..%2fetc%2fshadow HTTP/1.1\r\n"
	  BROWSER "\r\n", 930000, 930999 },
	{ "rce semicolon", "GET /ping?host=127.0.0.1;cat%20/etc/passwd HTTP/1.1\r\n"
	  BROWSER "\r\n", 932000, 932999 },
	{ "rce subshell", "GET /ping?host=$(id) HTTP/1.1\r\n" BROWSER "\r\n",
	  932000, 932999 },
	{ "rce in body", "POST /tools/ping HTTP/1.1\r\n" BROWSER
	  "Content-Type: application/x-www-form-urlencoded\r\n"
	  "Content-Length: 28\r\n\r\nhost=8.8.8.8%7C%7Cuname%20-a", 932000, 932999 },
	{ "invalid request line", "GET /index.html HTTP/1.1 junk\r\n" BROWSER "\r\n",
	  920000, 921999 },
	{ "bad content-length", "POST /form HTTP/1.1\r\n" BROWSER
	  "Content-Type: application/x-www-form-urlencoded\r\n"
	  "Content-Length: -5\r\n\r\na=b", 920000, 921999 },
	{ "smuggling cl+te", "POST /form HTTP/1.1\r\n" BROWSER
	  "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG",
	  920000, 921999 },
	{ "response splitting", "GET /redir?url=%0d%0aSet-Cookie:%20a=b HTTP/1.1\r\n"
	  BROWSER "\r\n", 920000, 921999 },
};

static const struct req_case clean[] = {
	{ "home page", "GET / HTTP/1.1\r\n" BROWSER "\r\n", 0, 0 },
	{ "article", "GET /blog/2024/03/how-to-bake-bread.html HTTP/1.1\r\n"
	  BROWSER "Referer: https://www.example.com/blog/\r\n"
	  "Cookie: session=6f1c2a9e4b7d; theme=dark\r\n\r\n", 0, 0 },
	{ "stylesheet", "GET /assets/css/main.min.css?v=3.2.1 HTTP/1.1\r\n"
	  "Host: www.example.com\r\n" UA "Accept: text/css,*/*;q=0.1\r\n"
	  "Referer: https://www.example.com/\r\n"
	  "Accept-Encoding: gzip, deflate, br\r\n\r\n", 0, 0 },
	{ "image", "GET /img/photos/beach-sunset_1024x768.jpg HTTP/1.1\r\n"
	  "Host: www.example.com\r\n" UA
	  "Accept: image/avif,image/webp,*/*\r\n"
	  "Referer: https://www.example.com/gallery\r\n\r\n", 0, 0 },
	{ "script", "GET /js/app.bundle.js HTTP/1.1\r\nHost: www.example.com\r\n"
	  UA "Accept: */*\r\nIf-None-Match: \"5e8f-1a2b\"\r\n"
	  "If-Modified-Since: Tue, 05 Mar 2024 10:00:00 GMT\r\n\r\n", 0, 0 },
	{ "search words", "GET /search?q=best+hiking+trails+near+the+lake&page=2&sort=date"
	  " HTTP/1.1\r\n" BROWSER "\r\n", 0, 0 },
	{ "search with punctuation", "GET /search?q=what%27s+new+in+linux+6.8%3F"
	  " HTTP/1.1\r\n" BROWSER "\r\n", 0, 0 },
	{ "form post", "POST /contact HTTP/1.1\r\n" BROWSER
	  "Content-Type: application/x-www-form-urlencoded\r\n"
	  "Content-Length: 91\r\nOrigin: https://www.example.com\r\n\r\n"
	  "name=Jane+Doe&email=jane%40example.org&message=Hello%2C+I+would+like+a+quote+for+10+chairs.",
	  0, 0 },
	{ "json post", "POST /api/v1/orders HTTP/1.1\r\nHost: api.example.com\r\n"
	  UA "Accept: application/json\r\nContent-Type: application/json\r\n"
	  "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl\r\n"
	  "Content-Length: 75\r\n\r\n"
	  "{\"items\":[{\"sku\":\"A-100\",\"qty\":2}],\"note\":\"leave at the door\",\"gift\":false}",
	  0, 0 },
	{ "head", "HEAD /downloads/manual.pdf HTTP/1.1\r\n" BROWSER "\r\n", 0, 0 },
};

static struct waf_flow *new_flow(struct waf_engine *e)
{
	struct waf_flow *f = waf_flow_create(e, "203.0.113.7", 50123,
					     "10.1.0.5", 80);

	ck_assert_ptr_nonnull(f);
	return f;
}

static int run(struct waf_engine *e, const char *req, struct waf_verdict *v)
{
	struct waf_flow *f = new_flow(e);
	int rc = waf_flow_feed(f, WAF_DIR_IN, (const uint8_t *)req,
			       strlen(req), v);

	waf_flow_destroy(f);
	return rc;
}

static bool in_family(const struct waf_verdict *v, unsigned lo, unsigned hi)
{
	unsigned i;

	if (v->rule_id >= lo && v->rule_id <= hi)
		return true;
	for (i = 0; i < v->n_matched; i++)
		if (v->matched[i] >= lo && v->matched[i] <= hi)
			return true;
	return false;
}

static void dump(const char *what, const struct waf_verdict *v)
{
	unsigned i;

	fprintf(stderr, "%s: action %d rule %u status %d msg '%s' matched",
		what, v->action, v->rule_id, v->status, v->msg);
	for (i = 0; i < v->n_matched; i++)
		fprintf(stderr, " %u", v->matched[i]);
	fprintf(stderr, "\n");
}

/*
 * The tables run inside one test each (one fork, not one per row: under
 * the sanitizer every forked child pays a leak scan of the loaded CRS);
 * every failing row is reported before the test fails.
 */
static unsigned check_attack(struct waf_engine *e, const struct req_case *c)
{
	struct waf_verdict v;
	int rc = run(e, c->req, &v);
	bool ok = rc == WAF_DENY && in_family(&v, c->lo, c->hi) &&
		  v.rule_id != 0 && v.status >= 400 &&
		  /* an anomaly-score deny names the rules that scored */
		  (v.rule_id != 949110 || v.n_matched > 0);

	if (!ok || getenv("WAF_TEST_VERBOSE"))
		dump(ok ? c->name : "FAILED (want deny in family)", &v);
	if (!ok)
		fprintf(stderr, "  case '%s': want deny by %u-%u\n", c->name,
			c->lo, c->hi);
	return ok ? 0 : 1;
}

static unsigned check_clean(struct waf_engine *e, const struct req_case *c)
{
	struct waf_verdict v;
	int rc = run(e, c->req, &v);
	bool ok = rc == WAF_ALLOW && v.requests == 1;

	if (!ok || getenv("WAF_TEST_VERBOSE"))
		dump(ok ? c->name : "FAILED (false positive)", &v);
	if (!ok)
		fprintf(stderr, "  case '%s' at paranoia %d\n", c->name,
			waf_engine_paranoia(e));
	return ok ? 0 : 1;
}

START_TEST(attacks_denied)
{
	unsigned i, bad = 0, n = sizeof(attacks) / sizeof(attacks[0]);

	for (i = 0; i < n; i++)
		bad += check_attack(pl1, &attacks[i]);
	ck_assert_msg(bad == 0, "%u of %u attacks not denied as expected", bad, n);
}
END_TEST

START_TEST(clean_allowed)
{
	unsigned i, bad = 0, n = sizeof(clean) / sizeof(clean[0]);

	for (i = 0; i < n; i++)
		bad += check_clean(pl1, &clean[i]);
	ck_assert_msg(bad == 0, "%u of %u clean requests denied", bad, n);
}
END_TEST

START_TEST(clean_allowed_pl2)
{
	/* Ordinary browser traffic passes at paranoia 2 as well. */
	unsigned i, bad = 0, n = sizeof(clean) / sizeof(clean[0]);

	for (i = 0; i < n; i++)
		bad += check_clean(pl2, &clean[i]);
	ck_assert_msg(bad == 0, "%u of %u clean requests denied at PL2", bad, n);
}
END_TEST

START_TEST(pipelined_third_is_attack)
{
	char in[4096];
	struct waf_flow *f = new_flow(pl1);
	struct waf_verdict v;

	snprintf(in, sizeof(in), "%s%s%s%s", clean[0].req, clean[2].req,
		 attacks[1].req, clean[3].req);
	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_IN, (const uint8_t *)in,
				       strlen(in), &v), WAF_DENY);
	ck_assert_uint_eq(v.requests, 2);
	ck_assert_uint_eq(v.rule_id, 949110);
	ck_assert(in_family(&v, 942000, 942999));
	ck_assert_uint_eq(waf_engine_live_transactions(pl1), 0);
	waf_flow_destroy(f);
}
END_TEST

START_TEST(paranoia_level_matters)
{
	/* No Host and no Accept: 920280 (PL1, warning, 3 points) alone stays
	 * under the threshold of 5; PL2 adds 920300 (2 points) and blocks. */
	static const char req[] = "GET /status HTTP/1.1\r\nUser-Agent: probe/1.0\r\n\r\n";
	struct waf_verdict v;

	ck_assert_int_eq(waf_engine_paranoia(pl1), 1);
	ck_assert_int_eq(waf_engine_paranoia(pl2), 2);
	ck_assert_int_eq(run(pl1, req, &v), WAF_ALLOW);
	ck_assert(in_family(&v, 920280, 920280));
	ck_assert_int_eq(run(pl2, req, &v), WAF_DENY);
	ck_assert_uint_eq(v.rule_id, 949110);
	ck_assert(in_family(&v, 920280, 920280));
	ck_assert(in_family(&v, 920300, 920300));
	/* PL2 loads more rules in effect; both load the same files. */
	ck_assert_uint_eq(waf_engine_rule_count(pl1), waf_engine_rule_count(pl2));
}
END_TEST

START_TEST(response_leak_denied)
{
	static const char resp[] = "HTTP/1.1 500 Internal Server Error\r\n"
		"Content-Type: text/html\r\nContent-Length: 126\r\n\r\n"
		"<html><body>You have an error in your SQL syntax; check the manual "
		"that corresponds to your MySQL server version</body></html>";
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
		"Content-Length: 38\r\n\r\n<html><body>Welcome home</body></html>";
	struct waf_flow *f = new_flow(pl1_resp);
	struct waf_verdict v;

	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_IN, (const uint8_t *)clean[0].req,
				       strlen(clean[0].req), &v), WAF_ALLOW);
	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_IN, (const uint8_t *)clean[1].req,
				       strlen(clean[1].req), &v), WAF_ALLOW);
	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_OUT, (const uint8_t *)ok,
				       strlen(ok), &v), WAF_ALLOW);
	ck_assert_uint_eq(v.responses, 1);
	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_OUT, (const uint8_t *)resp,
				       strlen(resp), &v), WAF_DENY);
	if (v.rule_id != 959100)
		dump("response", &v);
	ck_assert_int_eq(v.dir, WAF_DIR_OUT);
	ck_assert_uint_eq(v.rule_id, 959100);
	ck_assert(in_family(&v, 951000, 951999));
	waf_flow_destroy(f);
	ck_assert_uint_eq(waf_engine_live_transactions(pl1_resp), 0);
}
END_TEST

START_TEST(refcount_and_swap)
{
	/* A reload: flows on the old engine finish on it after the owner has
	 * swapped in a new engine and dropped its reference. */
	struct waf_config cfg = { .crs_dir = "" };
	char err[256];
	struct waf_engine *old = waf_engine_create(&cfg, err, sizeof(err));
	struct waf_engine *cur;
	struct waf_flow *f;
	struct waf_verdict v;

	ck_assert_msg(old != NULL, "%s", err);
	ck_assert_uint_eq(waf_engine_refs(old), 1);
	f = new_flow(old);
	ck_assert_uint_eq(waf_engine_refs(old), 2);
	ck_assert_ptr_eq(waf_engine_get(old), old);
	ck_assert_uint_eq(waf_engine_refs(old), 3);
	waf_engine_put(old);
	ck_assert_uint_eq(waf_engine_refs(old), 2);
	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_IN, (const uint8_t *)"GET / HTTP/1.1\r\nHo",
				       18, &v), WAF_ALLOW);

	cur = waf_engine_create(&cfg, err, sizeof(err));
	ck_assert_msg(cur != NULL, "%s", err);
	waf_engine_put(old);                    /* the owner's reference */
	ck_assert_uint_eq(waf_engine_refs(old), 1);  /* held by the flow */
	ck_assert_int_eq(waf_flow_feed(f, WAF_DIR_IN, (const uint8_t *)"st: h\r\n\r\n",
				       9, &v), WAF_ALLOW);
	ck_assert_uint_eq(v.requests, 1);
	waf_flow_destroy(f);                    /* frees old */
	ck_assert_uint_eq(waf_engine_refs(cur), 1);
	waf_engine_put(cur);
	waf_engine_put(NULL);
}
END_TEST

struct reload_arg {
	struct waf_engine_slot *slot;
	atomic_int stop;
	unsigned flows, allowed;
	int err;
};

/* A service thread: every flow takes the slot's current engine. */
static void *reload_client(void *p)
{
	struct reload_arg *a = p;
	static const char req[] = "GET /x HTTP/1.1\r\nHost: h\r\n\r\n";

	while (!atomic_load(&a->stop)) {
		struct waf_engine *e = waf_slot_get(a->slot);
		struct waf_flow *f;
		struct waf_verdict v;

		if (!e) {
			a->err = 1;
			break;
		}
		f = waf_flow_create(e, "203.0.113.1", 1000, "10.1.0.5", 80);
		waf_engine_put(e);              /* the flow holds its own */
		if (!f) {
			a->err = 2;
			break;
		}
		if (waf_flow_feed(f, WAF_DIR_IN, (const uint8_t *)req,
				  sizeof(req) - 1, &v) == WAF_ALLOW && v.requests == 1)
			a->allowed++;
		waf_flow_destroy(f);
		a->flows++;
	}
	return NULL;
}

START_TEST(reload_under_traffic)
{
	struct waf_config cfg = { .crs_dir = "" };
	struct waf_engine_slot slot;
	struct reload_arg a = { .slot = &slot };
	pthread_t t;
	char err[256];
	unsigned i;

	waf_slot_init(&slot, waf_engine_create(&cfg, err, sizeof(err)));
	ck_assert_ptr_nonnull(slot.cur);
	ck_assert_int_eq(pthread_create(&t, NULL, reload_client, &a), 0);
	for (i = 0; i < 20; i++) {
		struct waf_engine *e = waf_engine_create(&cfg, err, sizeof(err));

		ck_assert_msg(e != NULL, "%s", err);
		waf_slot_swap(&slot, e);
		usleep(2000);
	}
	atomic_store(&a.stop, 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(a.err, 0);
	ck_assert_uint_gt(a.flows, 0);
	ck_assert_uint_eq(a.allowed, a.flows);
	ck_assert_uint_eq(waf_engine_refs(slot.cur), 1);
	waf_slot_destroy(&slot);
}
END_TEST

static const char *write_tmp(char *path, const char *text)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

START_TEST(create_errors)
{
	struct waf_config cfg = { .paranoia_level = 5 };
	char err[512], bad[] = "/tmp/test_waf_bad_XXXXXX";
	const char *files[1];

	errno = 0;
	ck_assert_ptr_null(waf_engine_create(&cfg, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "paranoia"));

	cfg.paranoia_level = 1;
	cfg.crs_dir = "/nonexistent/crs";
	errno = 0;
	ck_assert_ptr_null(waf_engine_create(&cfg, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);

	cfg.crs_dir = "";
	files[0] = "/nonexistent/rules.conf";
	cfg.extra_rule_files = files;
	cfg.n_extra_rule_files = 1;
	errno = 0;
	ck_assert_ptr_null(waf_engine_create(&cfg, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);

	files[0] = write_tmp(bad, "SecRule ARGS \"@rx a\" \"id:1,phase:2,nosuchaction\"\n");
	errno = 0;
	ck_assert_ptr_null(waf_engine_create(&cfg, err, sizeof(err)));
	unlink(bad);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(err, bad));

	errno = 0;
	ck_assert_ptr_null(waf_engine_create(NULL, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(extra_rules_after_crs)
{
	/* Local rules load after the CRS: a site rule of its own, and a
	 * removal of a CRS rule (the usual false-positive exclusion). */
	char path[] = "/tmp/test_waf_extra_XXXXXX";
	const char *files[1] = { path };
	struct waf_config cfg = { .extra_rule_files = files, .n_extra_rule_files = 1 };
	struct waf_engine *e;
	struct waf_verdict v;
	char err[512];

	write_tmp(path, "SecRule REQUEST_FILENAME \"@beginsWith /admin\" "
		  "\"id:10100,phase:1,t:none,deny,status:403,log,msg:'no admin'\"\n"
		  "SecRuleRemoveById 932130\n");
	e = waf_engine_create(&cfg, err, sizeof(err));
	unlink(path);
	ck_assert_msg(e != NULL, "%s", err);
	ck_assert_int_eq(run(e, "GET /admin/users HTTP/1.1\r\n" BROWSER "\r\n", &v),
			 WAF_DENY);
	ck_assert_uint_eq(v.rule_id, 10100);
	ck_assert_int_eq(v.status, 403);
	/* $(id) was caught by 932130 alone at PL1 (see attacks). */
	ck_assert_int_eq(run(pl1, attacks[8].req, &v), WAF_DENY);
	ck_assert(in_family(&v, 932130, 932130));
	ck_assert_int_eq(run(e, attacks[8].req, &v), WAF_ALLOW);
	waf_engine_put(e);
}
END_TEST

struct thr_arg {
	unsigned denied, allowed;
};

static void *thr_main(void *p)
{
	struct thr_arg *a = p;
	unsigned i, j;

	for (i = 0; i < 30; i++) {
		struct waf_flow *f = waf_flow_create(pl1, "203.0.113.9", 40000 + i,
						     "10.1.0.5", 80);
		struct waf_verdict v;

		if (!f)
			return NULL;
		for (j = 0; j < sizeof(clean) / sizeof(clean[0]); j++)
			if (waf_flow_feed(f, WAF_DIR_IN, (const uint8_t *)clean[j].req,
					  strlen(clean[j].req), &v) == WAF_ALLOW)
				a->allowed++;
		if (waf_flow_feed(f, WAF_DIR_IN, (const uint8_t *)attacks[i % 10].req,
				  strlen(attacks[i % 10].req), &v) == WAF_DENY)
			a->denied++;
		waf_flow_destroy(f);
	}
	return NULL;
}

START_TEST(threads_share_engine)
{
	pthread_t t[3];
	struct thr_arg a[3];
	unsigned i;

	memset(a, 0, sizeof(a));
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, thr_main, &a[i]), 0);
	for (i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		ck_assert_uint_eq(a[i].allowed, 30 * (sizeof(clean) / sizeof(clean[0])));
		ck_assert_uint_eq(a[i].denied, 30);
	}
	ck_assert_uint_eq(waf_engine_live_transactions(pl1), 0);
}
END_TEST

static Suite *waf_engine_suite(void)
{
	Suite *s = suite_create("waf_engine");
	TCase *tc = tcase_create("crs");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, attacks_denied);
	tcase_add_test(tc, clean_allowed);
	tcase_add_test(tc, clean_allowed_pl2);
	tcase_add_test(tc, pipelined_third_is_attack);
	tcase_add_test(tc, paranoia_level_matters);
	tcase_add_test(tc, response_leak_denied);
	tcase_add_test(tc, refcount_and_swap);
	tcase_add_test(tc, reload_under_traffic);
	tcase_add_test(tc, create_errors);
	tcase_add_test(tc, extra_rules_after_crs);
	tcase_add_test(tc, threads_share_engine);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	struct waf_config c1 = { .paranoia_level = 1 };
	struct waf_config c2 = { .paranoia_level = 2 };
	struct waf_config cr = { .paranoia_level = 1, .inspect_response = true };
	char err[512] = "";
	SRunner *sr;
	int failed;

	pl1 = waf_engine_create(&c1, err, sizeof(err));
	if (pl1)
		pl2 = waf_engine_create(&c2, err, sizeof(err));
	if (pl2)
		pl1_resp = waf_engine_create(&cr, err, sizeof(err));
	if (!pl1_resp) {
		fprintf(stderr, "cannot load the CRS: %s\n", err);
		return 1;
	}
	sr = srunner_create(waf_engine_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	waf_engine_put(pl1_resp);
	waf_engine_put(pl2);
	waf_engine_put(pl1);
	return failed ? 1 : 0;
}
