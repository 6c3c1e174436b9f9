// SPDX-License-Identifier: MIT
/*
 * ids-bench: per-thread throughput of the IDS engine on a generated HTTP
 * traffic mix.
 *
 *   ids-bench [--rules N] [--flows F] [--requests R] [--runs K]
 *             [--attacks PERMILLE] [--seed S] [--write-rules FILE]
 *             [--header]
 *
 * Everything is generated deterministically from the seed: a ruleset of N
 * rules (HTTP URI/header/body rules, raw to-server and to-client content
 * rules with positional modifiers, pcre rules, some drop rules) and F
 * keep-alive connections of R requests each (GETs and form POSTs with
 * realistic headers, HTML responses of 2-32 KiB sent in 1448-byte
 * segments).  PERMILLE of the requests carry an attack that one of the
 * alert rules catches.  All connections are interleaved segment by
 * segment, as a VNF thread would see them.  One thread scans; the table
 * gives the median of K runs, by wall-clock time and by the thread's CPU
 * time (steadier on a shared machine).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "ids.h"

#define MSS 1448

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

static unsigned rndn(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static void word(char *out, unsigned minlen, unsigned maxlen)
{
	unsigned n = minlen + rndn(maxlen - minlen + 1);

	for (unsigned i = 0; i < n; i++)
		out[i] = (char)('a' + rndn(26));
	out[n] = 0;
}

struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < b->cap - b->len)
			break;
		b->cap = b->cap ? b->cap * 2 + (size_t)n : 4096;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			perror("realloc");
			exit(1);
		}
	}
	b->len += (size_t)n;
}

/* What an attack request must contain to hit alert rule i. */
enum akind { AK_URI, AK_UA, AK_RAW, AK_BODY, AK_PCRE, AK_NONE };

struct grule {
	enum akind kind;
	char w1[16], w2[16];
};

static struct grule *gen_rules(unsigned n, struct sbuf *out)
{
	struct grule *g = calloc(n ? n : 1, sizeof(*g));

	sb_printf(out, "ipvar HOME_NET [10.0.0.0/8,192.168.0.0/16]\n"
		  "ipvar EXTERNAL_NET any\n"
		  "portvar HTTP_PORTS [80,8000:8090]\n");
	for (unsigned i = 0; i < n; i++) {
		unsigned k = rndn(100), sid = 1000000 + i;
		const char *act = rndn(100) < 5 ? "drop" : "alert";

		word(g[i].w1, 6, 10);
		word(g[i].w2, 4, 8);
		if (k < 35) {
			g[i].kind = AK_URI;
			sb_printf(out, "%s tcp $EXTERNAL_NET any -> $HOME_NET "
				  "$HTTP_PORTS (msg:\"BENCH uri %u\"; "
				  "flow:to_server,established; content:\"/%s.php\"; "
				  "http_uri; nocase; content:\"%s=\"; http_uri; "
				  "distance:0; classtype:web-application-attack; "
				  "sid:%u; rev:1;)\n", act, i, g[i].w1, g[i].w2,
				  sid);
		} else if (k < 50) {
			g[i].kind = AK_UA;
			sb_printf(out, "%s tcp $EXTERNAL_NET any -> $HOME_NET "
				  "$HTTP_PORTS (msg:\"BENCH ua %u\"; "
				  "flow:to_server,established; content:\"User-Agent|3a| "
				  "%s\"; http_header; classtype:trojan-activity; "
				  "sid:%u; rev:1;)\n", act, i, g[i].w1, sid);
		} else if (k < 65) {
			g[i].kind = AK_RAW;
			sb_printf(out, "%s tcp $EXTERNAL_NET any -> $HOME_NET "
				  "$HTTP_PORTS (msg:\"BENCH raw %u\"; "
				  "flow:to_server,established; content:\"%s\"; "
				  "content:\"%s\"; distance:1; within:32; "
				  "classtype:attempted-recon; sid:%u; rev:1;)\n",
				  act, i, g[i].w1, g[i].w2, sid);
		} else if (k < 75) {
			g[i].kind = AK_BODY;
			sb_printf(out, "%s tcp $EXTERNAL_NET any -> $HOME_NET "
				  "$HTTP_PORTS (msg:\"BENCH body %u\"; "
				  "flow:to_server,established; content:\"%s\"; "
				  "http_client_body; nocase; classtype:"
				  "web-application-attack; sid:%u; rev:1;)\n", act,
				  i, g[i].w1, sid);
		} else if (k < 90) {
			g[i].kind = AK_NONE;	/* response-side signature */
			sb_printf(out, "%s tcp $HOME_NET $HTTP_PORTS -> "
				  "$EXTERNAL_NET any (msg:\"BENCH resp %u\"; "
				  "flow:to_client,established; content:\"<script>%s\"; "
				  "nocase; content:!\"%s\"; distance:0; within:200; "
				  "classtype:bad-unknown; sid:%u; rev:1;)\n", act, i,
				  g[i].w1, g[i].w2, sid);
		} else {
			g[i].kind = AK_PCRE;
			sb_printf(out, "%s tcp $EXTERNAL_NET any -> $HOME_NET "
				  "$HTTP_PORTS (msg:\"BENCH pcre %u\"; "
				  "flow:to_server,established; content:\"/%s/\"; "
				  "http_uri; pcre:\"/\\/%s\\/[a-z]+\\d*\\.cgi/U\"; "
				  "classtype:web-application-attack; sid:%u; "
				  "rev:1;)\n", act, i, g[i].w1, g[i].w1, sid);
		}
		if (act[0] == 'd')
			g[i].kind = AK_NONE;	/* attacks target alerts only */
	}
	return g;
}

static const char *const lorem[] = { "lorem", "ipsum", "dolor", "sit",
	"amet", "consectetur", "adipiscing", "elit", "sed", "do", "eiusmod",
	"tempor", "incididunt", "ut", "labore", "et", "dolore", "magna",
	"aliqua", "enim", "ad", "minim", "veniam", "quis", "nostrud" };

static void html(struct sbuf *b, size_t n)
{
	size_t start = b->len;

	sb_printf(b, "<!DOCTYPE html><html><head><title>page</title>"
		  "<link rel=\"stylesheet\" href=\"/css/site.css\"></head><body>");
	while (b->len - start < n) {
		sb_printf(b, "<p class=\"t%u\">", rndn(9));
		for (int i = 0; i < 12; i++)
			sb_printf(b, "%s ", lorem[rndn(25)]);
		sb_printf(b, "<a href=\"/doc/%s/%u.html\">more</a></p>\n",
			  lorem[rndn(25)], rndn(1000));
	}
	b->len = start + n;	/* exact Content-Length */
}

struct seg {
	unsigned flow;
	enum ids_dir dir;
	size_t off, len;	/* into the traffic buffer */
};

struct traffic {
	struct sbuf data;
	struct seg *seg;
	size_t nseg, capseg;
	unsigned requests, attacks;
};

static void add_segs(struct traffic *t, unsigned flow, enum ids_dir dir,
		     size_t off, size_t len)
{
	for (size_t at = 0; at < len; at += MSS) {
		if (t->nseg == t->capseg) {
			t->capseg = t->capseg ? t->capseg * 2 : 1024;
			t->seg = realloc(t->seg, t->capseg * sizeof(*t->seg));
			if (!t->seg) {
				perror("realloc");
				exit(1);
			}
		}
		t->seg[t->nseg++] = (struct seg){ flow, dir, off + at,
			len - at < MSS ? len - at : MSS };
	}
}

static void request(struct sbuf *b, const struct grule *g, unsigned nrules,
		    bool attack, unsigned *attacks)
{
	const struct grule *a = NULL;
	char w[16], body[2200];
	bool post = rndn(10) == 0;
	size_t blen = 0;

	if (attack && nrules) {
		for (int tries = 0; tries < 50 && !a; tries++) {
			const struct grule *c = &g[rndn(nrules)];

			if (c->kind != AK_NONE)
				a = c;
		}
	}
	if (a && a->kind == AK_BODY)
		post = true;
	if (post) {
		unsigned n = 200 + rndn(1800);

		blen = (size_t)snprintf(body, sizeof(body), "csrf=%016llx",
					(unsigned long long)rnd());
		while (blen < n) {
			word(w, 3, 9);
			blen += (size_t)snprintf(body + blen, sizeof(body) - blen,
						 "&%s=%s+%s", w, lorem[rndn(25)],
						 lorem[rndn(25)]);
		}
		/* n < 2000 and each step adds < 40 bytes: body cannot fill */
		if (a && a->kind == AK_BODY)
			blen += (size_t)snprintf(body + blen, sizeof(body) - blen,
						 "&q=%s", a->w1);
		blen = strlen(body);
	}
	word(w, 4, 10);
	sb_printf(b, "%s ", post ? "POST" : "GET");
	if (a && a->kind == AK_URI)
		sb_printf(b, "/app/%s.php?%s=1&x=%s", a->w1, a->w2, w);
	else if (a && a->kind == AK_PCRE)
		sb_printf(b, "/%s/%s%u.cgi", a->w1, w, rndn(100));
	else if (post)
		sb_printf(b, "/account/%s/update", w);
	else
		sb_printf(b, "/static/%s/%s.%s?v=%u", lorem[rndn(25)], w,
			  rndn(2) ? "js" : "png", rndn(100000));
	sb_printf(b, " HTTP/1.1\r\nHost: www.example.com\r\n"
		  "User-Agent: %s\r\n"
		  "Accept: text/html,application/xhtml+xml,application/xml;"
		  "q=0.9,*/*;q=0.8\r\nAccept-Language: en-US,en;q=0.5\r\n"
		  "Accept-Encoding: gzip, deflate\r\n"
		  "Referer: https://www.example.com/%s/index.html\r\n"
		  "Cookie: session=%016llx%016llx; theme=dark\r\n",
		  a && a->kind == AK_UA ? a->w1 :
		  "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 "
		  "Firefox/115.0", lorem[rndn(25)],
		  (unsigned long long)rnd(), (unsigned long long)rnd());
	if (a && a->kind == AK_RAW)
		sb_printf(b, "X-Trace: %s-%s\r\n", a->w1, a->w2);
	if (post)
		sb_printf(b, "Content-Type: application/x-www-form-urlencoded"
			  "\r\nContent-Length: %zu\r\n", blen);
	sb_printf(b, "Connection: keep-alive\r\n\r\n");
	if (post)
		sb_printf(b, "%s", body);
	if (a)
		(*attacks)++;
}

static void gen_traffic(struct traffic *t, const struct grule *g,
			unsigned nrules, unsigned flows, unsigned reqs,
			unsigned permille)
{
	/* per flow: the message offsets of its requests and responses */
	size_t (*msg)[2][2] = calloc((size_t)flows * reqs, sizeof(*msg));

	for (unsigned f = 0; f < flows; f++) {
		for (unsigned r = 0; r < reqs; r++) {
			size_t i = (size_t)f * reqs + r, at = t->data.len;
			size_t n = 2048 + rndn(30 * 1024);

			request(&t->data, g, nrules, rndn(1000) < permille,
				&t->attacks);
			msg[i][0][0] = at;
			msg[i][0][1] = t->data.len - at;
			at = t->data.len;
			sb_printf(&t->data, "HTTP/1.1 200 OK\r\nServer: nginx\r\n"
				  "Content-Type: text/html; charset=utf-8\r\n"
				  "Cache-Control: max-age=60\r\n"
				  "Content-Length: %zu\r\n\r\n", n);
			html(&t->data, n);
			msg[i][1][0] = at;
			msg[i][1][1] = t->data.len - at;
			t->requests++;
		}
	}
	/* interleave: round r of every flow, request then response */
	for (unsigned r = 0; r < reqs; r++)
		for (unsigned f = 0; f < flows; f++)
			for (int d = 0; d < 2; d++)
				add_segs(t, f, (enum ids_dir)d,
					 msg[(size_t)f * reqs + r][d][0],
					 msg[(size_t)f * reqs + r][d][1]);
	free(msg);
}

struct result {
	double secs, cpu;
	unsigned alerts, denies;
};

static int run(struct ids_ruleset *rs, const struct traffic *t,
	       unsigned flows, struct result *res)
{
	struct ids_worker *w = ids_worker_create();
	struct ids_flow **f = calloc(flows, sizeof(*f));
	struct timespec a, b, ca, cb;

	if (!w || !f)
		return -ENOMEM;
	memset(res, 0, sizeof(*res));
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
	for (unsigned i = 0; i < flows; i++) {
		struct ids_flow_key k = { .family = AF_INET,
			.client_port = (uint16_t)(20000 + i),
			.server_port = 80 };

		inet_pton(AF_INET, "203.0.113.7", k.client_addr);
		inet_pton(AF_INET, "10.1.2.3", k.server_addr);
		f[i] = ids_flow_create(rs, &k);
		if (!f[i])
			return -errno;
	}
	for (size_t i = 0; i < t->nseg; i++) {
		const struct seg *s = &t->seg[i];
		struct ids_verdict v;

		if (ids_flow_scan(w, f[s->flow], s->dir,
				  (const uint8_t *)t->data.p + s->off, s->len,
				  &v))
			return -EIO;
		res->alerts += v.nalerts + v.alerts_lost;
		if (v.decision == IDS_DENY && v.deny_rule)
			res->denies++;
	}
	for (unsigned i = 0; i < flows; i++)
		ids_flow_destroy(f[i]);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	res->secs = (double)(b.tv_sec - a.tv_sec) +
		    (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	res->cpu = (double)(cb.tv_sec - ca.tv_sec) +
		   (double)(cb.tv_nsec - ca.tv_nsec) / 1e9;
	free(f);
	ids_worker_destroy(w);
	return 0;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned nrules = 1000, flows = 64, reqs = 20, runs = 5;
	unsigned permille = 20, seed = 1;
	const char *write_rules = NULL;
	bool header = false;
	struct sbuf rules = { 0 };
	struct traffic t = { 0 };
	struct ids_diags d = { 0 };
	struct ids_ruleset *rs;
	struct grule *g;
	struct timespec a, b;
	double load_ms, *mbs, *rps, *cmbs, *crps;
	struct result res = { 0 };

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--header")) {
			header = true;
			continue;
		}
		if (!v)
			goto usage;
		i++;
		if (!strcmp(o, "--rules"))
			nrules = (unsigned)atoi(v);
		else if (!strcmp(o, "--flows"))
			flows = (unsigned)atoi(v);
		else if (!strcmp(o, "--requests"))
			reqs = (unsigned)atoi(v);
		else if (!strcmp(o, "--runs"))
			runs = (unsigned)atoi(v);
		else if (!strcmp(o, "--attacks"))
			permille = (unsigned)atoi(v);
		else if (!strcmp(o, "--seed"))
			seed = (unsigned)atoi(v);
		else if (!strcmp(o, "--write-rules"))
			write_rules = v;
		else
			goto usage;
	}
	if (!flows || !reqs || !runs)
		goto usage;
	rng_state = 0x9e3779b97f4a7c15ull ^ seed;
	g = gen_rules(nrules, &rules);
	gen_traffic(&t, g, nrules, flows, reqs, permille);
	if (write_rules) {
		FILE *fp = fopen(write_rules, "w");

		if (!fp || fwrite(rules.p, 1, rules.len, fp) != rules.len ||
		    fclose(fp)) {
			perror(write_rules);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	rs = ids_ruleset_load_mem("bench.rules", rules.p, rules.len, NULL, &d);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (!rs || d.n) {
		fprintf(stderr, "ids-bench: ruleset: %s\n",
			rs ? d.msg[0] : strerror(errno));
		return 1;
	}
	load_ms = (double)(b.tv_sec - a.tv_sec) * 1e3 +
		  (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	mbs = calloc(runs, sizeof(*mbs));
	rps = calloc(runs, sizeof(*rps));
	cmbs = calloc(runs, sizeof(*cmbs));
	crps = calloc(runs, sizeof(*crps));
	for (unsigned r = 0; r < runs; r++) {
		if (run(rs, &t, flows, &res)) {
			fprintf(stderr, "ids-bench: scan failed\n");
			return 1;
		}
		mbs[r] = (double)t.data.len / res.secs / 1e6;
		rps[r] = (double)t.requests / res.secs;
		cmbs[r] = (double)t.data.len / res.cpu / 1e6;
		crps[r] = (double)t.requests / res.cpu;
	}
	qsort(mbs, runs, sizeof(*mbs), dcmp);
	qsort(rps, runs, sizeof(*rps), dcmp);
	qsort(cmbs, runs, sizeof(*cmbs), dcmp);
	qsort(crps, runs, sizeof(*crps), dcmp);
	if (header)
		printf("%6s %6s %7s %8s %4s %9s %9s %9s %9s %8s %7s %6s\n",
		       "rules", "flows", "MB", "requests", "runs", "MB/s",
		       "req/s", "cpuMB/s", "cpureq/s", "load_ms", "attacks",
		       "alerts");
	printf("%6zu %6u %7.1f %8u %4u %9.1f %9.0f %9.1f %9.0f %8.1f %7u "
	       "%6u\n", ids_ruleset_nrules(rs), flows,
	       (double)t.data.len / 1e6, t.requests, runs, mbs[runs / 2],
	       rps[runs / 2], cmbs[runs / 2], crps[runs / 2], load_ms,
	       t.attacks, res.alerts);
	ids_ruleset_put(rs);
	ids_diags_free(&d);
	free(mbs);
	free(rps);
	free(cmbs);
	free(crps);
	free(g);
	free(rules.p);
	free(t.data.p);
	free(t.seg);
	return 0;

usage:
	fprintf(stderr, "usage: ids-bench [--rules N] [--flows F] "
		"[--requests R] [--runs K] [--attacks PERMILLE] [--seed S] "
		"[--write-rules FILE] [--header]\n");
	return 2;
}
