/*
 * waf-bench: throughput of the WAF engine per service thread.
 *
 *   waf-bench [-t THREADS] [-s SECONDS] [-r RUNS] [-p PARANOIA] [-c CHUNK] [-n]
 *
 * Each thread plays keep-alive client connections (up to 20 requests per
 * flow, a new flow after a deny) from a fixed mix: 95% ordinary requests
 * (page and asset GETs with browser headers, form and JSON POSTs, search
 * queries) and 5% attacks (SQLi, XSS, traversal, RCE).  Requests are fed
 * whole, or cut into CHUNK-byte pieces with -c.  All threads share one
 * engine (full CRS; -n: no CRS, only the base configuration, which
 * measures HTTP parsing plus ModSecurity's per-transaction cost).  Prints
 * one line per run and thread, then the medians.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tochain/util.h>

#include "waf_engine.h"

#define UA "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:115.0) " \
	"Gecko/20100101 Firefox/115.0\r\n"
#define HDRS "Host: www.example.com\r\n" UA \
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" \
	"Accept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n" \
	"Cookie: session=6f1c2a9e4b7d0c11; theme=dark\r\nConnection: keep-alive\r\n"

static const char *const clean_reqs[] = {
	"GET / HTTP/1.1\r\n" HDRS "\r\n",
	"GET /blog/2024/03/how-to-bake-bread.html HTTP/1.1\r\n" HDRS
	"Referer: https://www.example.com/blog/\r\n\r\n",
	"GET /assets/css/main.min.css?v=3.2.1 HTTP/1.1\r\n" HDRS "\r\n",
	"GET /js/app.bundle.js HTTP/1.1\r\n" HDRS "If-None-Match: \"5e8f-1a2b\"\r\n\r\n",
	"GET /img/photos/beach-sunset_1024x768.jpg HTTP/1.1\r\n" HDRS "\r\n",
	"GET /search?q=best+hiking+trails+near+the+lake&page=2&sort=date HTTP/1.1\r\n"
	HDRS "\r\n",
	"GET /products?category=chairs&color=blue&min_price=20&max_price=150 HTTP/1.1\r\n"
	HDRS "\r\n",
	"POST /contact HTTP/1.1\r\n" HDRS
	"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 91\r\n\r\n"
	"name=Jane+Doe&email=jane%40example.org&message=Hello%2C+I+would+like+a+quote+for+10+chairs.",
	"POST /api/v1/orders HTTP/1.1\r\n" HDRS
	"Content-Type: application/json\r\nContent-Length: 75\r\n\r\n"
	"{\"items\":[{\"sku\":\"A-100\",\"qty\":2}],\"note\":\"leave at the door\",\"gift\":false}",
	"GET /favicon.ico HTTP/1.1\r\n" HDRS "\r\n",
};

static const char *const attack_reqs[] = {
	"GET /item.php?id=1%27%20OR%20%271%27=%271 HTTP/1.1\r\n" HDRS "\r\n",
	"GET /search?q=%3Cscript%3Ealert(1)%3C/script%3E HTTP/1.1\r\n" HDRS "\r\n",
	"GET /download?file=../../etc/passwd HTTP/1.1\r\n" HDRS "\r\n",
	"GET /ping?host=127.0.0.1;cat%20/etc/passwd HTTP/1.1\r\n" HDRS "\r\n",
	"GET /news?id=1+UNION+SELECT+username,password+FROM+users HTTP/1.1\r\n" HDRS "\r\n",
};

#define NCLEAN (sizeof(clean_reqs) / sizeof(clean_reqs[0]))
#define NATTACK (sizeof(attack_reqs) / sizeof(attack_reqs[0]))
#define MIX 100         /* every 20th request of the mix is an attack */

struct thr {
	pthread_t tid;
	struct waf_engine *eng;
	double seconds;
	size_t chunk;
	unsigned id;
	unsigned long reqs, denied, bytes;
	double elapsed;
	int err;
};

static const char *mix_req(unsigned i)
{
	i %= MIX;
	if (i % 20 == 19)
		return attack_reqs[(i / 20) % NATTACK];
	return clean_reqs[(i * 7) % NCLEAN];
}

static void *thr_main(void *p)
{
	struct thr *t = p;
	double start = tu_now_s(), end = start + t->seconds;
	unsigned i = t->id * 37, in_flow = 0;
	struct waf_flow *f = NULL;
	struct waf_verdict v;

	while (tu_now_s() < end) {
		unsigned batch;

		for (batch = 0; batch < 64; batch++, i++) {
			const char *r = mix_req(i);
			size_t len = strlen(r), off = 0;
			int rc = WAF_ALLOW;

			if (!f) {
				f = waf_flow_create(t->eng, "203.0.113.7",
						    (uint16_t)(1024 + i % 60000),
						    "10.1.0.5", 80);
				if (!f) {
					t->err = errno;
					return NULL;
				}
				in_flow = 0;
			}
			while (off < len && rc == WAF_ALLOW) {
				size_t n = t->chunk && len - off > t->chunk ?
					   t->chunk : len - off;

				rc = waf_flow_feed(f, WAF_DIR_IN,
						   (const uint8_t *)r + off, n, &v);
				off += n;
			}
			t->reqs++;
			t->bytes += len;
			if (rc == WAF_DENY)
				t->denied++;
			if (rc == WAF_DENY || ++in_flow == 20) {
				waf_flow_destroy(f);
				f = NULL;
			}
		}
	}
	t->elapsed = tu_now_s() - start;
	waf_flow_destroy(f);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(void)
{
	fprintf(stderr, "usage: waf-bench [-t THREADS] [-s SECONDS] [-r RUNS] "
		"[-p PARANOIA] [-c CHUNK] [-n]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned threads = 1, runs = 3, run, k;
	double seconds = 2, t0, load;
	struct waf_config cfg = { .paranoia_level = 1 };
	struct waf_engine *eng;
	size_t chunk = 0;
	double *rps, *mbps;
	char err[512];
	unsigned long denied = 0, total = 0;
	int c;

	while ((c = getopt(argc, argv, "t:s:r:p:c:n")) != -1) {
		switch (c) {
		case 't': threads = (unsigned)atoi(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'r': runs = (unsigned)atoi(optarg); break;
		case 'p': cfg.paranoia_level = atoi(optarg); break;
		case 'c': chunk = (size_t)atol(optarg); break;
		case 'n': cfg.crs_dir = ""; break;
		default: usage();
		}
	}
	if (threads == 0 || threads > 64 || runs == 0 || runs > 100 ||
	    seconds <= 0)
		usage();

	t0 = tu_now_s();
	eng = waf_engine_create(&cfg, err, sizeof(err));
	load = tu_now_s() - t0;
	if (!eng) {
		fprintf(stderr, "waf-bench: %s\n", err);
		return 1;
	}
	printf("# engine: %u rules, paranoia %d, loaded in %.3f s\n",
	       waf_engine_rule_count(eng), waf_engine_paranoia(eng), load);
	printf("# mix: %zu clean requests, %zu attacks (1 in 20); chunk %s\n",
	       NCLEAN, NATTACK, chunk ? "bytes as given" : "whole requests");
	printf("%-4s %-6s %12s %10s %8s\n", "run", "thread", "req/s", "MB/s", "denied");

	rps = calloc((size_t)threads * runs, sizeof(*rps));
	mbps = calloc((size_t)threads * runs, sizeof(*mbps));
	if (!rps || !mbps)
		return 1;
	for (run = 0; run < runs; run++) {
		struct thr t[64];

		memset(t, 0, sizeof(t));
		for (k = 0; k < threads; k++) {
			t[k].eng = eng;
			t[k].seconds = seconds;
			t[k].chunk = chunk;
			t[k].id = k;
			if (pthread_create(&t[k].tid, NULL, thr_main, &t[k]) != 0) {
				fprintf(stderr, "waf-bench: pthread_create failed\n");
				return 1;
			}
		}
		for (k = 0; k < threads; k++) {
			size_t idx = (size_t)run * threads + k;

			pthread_join(t[k].tid, NULL);
			if (t[k].err) {
				fprintf(stderr, "waf-bench: %s\n", strerror(t[k].err));
				return 1;
			}
			rps[idx] = t[k].reqs / t[k].elapsed;
			mbps[idx] = t[k].bytes / t[k].elapsed / 1e6;
			denied += t[k].denied;
			total += t[k].reqs;
			printf("%-4u %-6u %12.0f %10.2f %7.1f%%\n", run, k, rps[idx],
			       mbps[idx], 100.0 * t[k].denied / (t[k].reqs ? t[k].reqs : 1));
		}
	}
	printf("median per thread (%u threads, %u runs x %.1f s): %.0f req/s, %.2f MB/s; "
	       "denied %.1f%%\n", threads, runs, seconds,
	       median(rps, (size_t)threads * runs),
	       median(mbps, (size_t)threads * runs), 100.0 * denied / (total ? total : 1));
	free(rps);
	free(mbps);
	waf_engine_put(eng);
	return 0;
}
