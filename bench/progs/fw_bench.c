// SPDX-License-Identifier: MIT
/*
 * fw-bench - cost of fw_match() per packet for rulesets of growing size.
 *
 *   fw-bench [ITERATIONS]
 *
 * Each ruleset has N rules of the usual shapes (port sets, CIDRs, ct states,
 * negations) that mostly miss, followed by the example web rules; a fixed
 * mix of packets is matched in a loop.  Prints one line per ruleset size:
 * rules, ns per packet (median of 5 runs), share of packets that hit a rule.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tochain/util.h>

#include "fw_match.h"
#include "fw_rules.h"

enum { NPKT = 1024 };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct fw_ruleset *make_rules(int n)
{
	size_t cap = (size_t)n * 160 + 512, len = 0;
	char *t = malloc(cap);
	struct fw_diag d;
	struct fw_ruleset *rs;
	int i;

	len += (size_t)snprintf(t + len, cap - len, "policy in drop\n");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len,
			"%s in tcp from 172.%d.0.0/16,192.168.%d.0/24 dport %d,%d-%d ct new\n",
			i % 3 ? "drop" : "accept", 16 + i % 16, i % 256,
			1000 + i, 20000 + i * 10, 20000 + i * 10 + 5);
	len += (size_t)snprintf(t + len, cap - len,
		"accept in ct established,related\n"
		"accept in tcp dport 80,443 from 10.0.0.0/8 ct new comment \"web\"\n"
		"reject in tcp from !192.168.0.0/16 dport 8000-8999\n");
	rs = fw_ruleset_parse(t, len, "bench", &d);
	if (!rs)
		fprintf(stderr, "fw-bench: %s\n", d.msg);
	free(t);
	return rs;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 0, 8, 32, 128, 512 };
	long iters = argc > 1 ? atol(argv[1]) : 2000;
	struct fw_packet *pkts = calloc(NPKT, sizeof(*pkts));
	unsigned int seed = 1;
	size_t s;
	int i;

	for (i = 0; i < NPKT; i++) {
		struct fw_packet *p = &pkts[i];

		p->family = 4;
		p->dir = FW_DIR_IN;
		p->proto = 6;
		p->src[0] = 10;
		p->src[1] = (uint8_t)rand_r(&seed);
		p->src[3] = (uint8_t)rand_r(&seed);
		p->dst[0] = 10;
		p->dst[3] = 1;
		p->sport = (uint16_t)(32768 + rand_r(&seed) % 28000);
		p->dport = (uint16_t)((const int[]){ 80, 443, 8080, 22 })[rand_r(&seed) % 4];
		p->ct = (uint8_t)(rand_r(&seed) % 4 ? FW_CT_ESTABLISHED : FW_CT_NEW);
		p->tcp_flags = FW_TCP_ACK;
	}
	printf("%8s %12s %8s\n", "rules", "ns/packet", "hit%");
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct fw_ruleset *rs = make_rules(sizes[s]);
		double runs[5];
		unsigned long hits = 0;
		volatile unsigned int sink = 0;
		long it;
		int r;

		if (!rs)
			return 1;
		for (r = 0; r < 5; r++) {
			double t0 = (double)tu_now_ns();

			for (it = 0; it < iters; it++)
				for (i = 0; i < NPKT; i++)
					sink += fw_match(rs, &pkts[i], NULL);
			runs[r] = ((double)tu_now_ns() - t0) / ((double)iters * NPKT);
		}
		for (i = 0; i < NPKT; i++) {
			struct fw_hit h;

			fw_match(rs, &pkts[i], &h);
			hits += h.rule != 0;
		}
		qsort(runs, 5, sizeof(runs[0]), cmp_double);
		printf("%8u %12.1f %7.0f%%\n", fw_ruleset_count(rs), runs[2],
		       100.0 * (double)hits / NPKT);
		fw_ruleset_destroy(rs);
	}
	free(pkts);
	return 0;
}
