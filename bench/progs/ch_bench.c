// SPDX-License-Identifier: MIT
/*
 * chain-bench: throughput and added latency per hop of the packet
 * scheduler with null VNF processes (bench/40_chain_hops.sh).
 *
 *   chain-bench --vnf-bin PATH [--dir DIR] [--runs N] [--secs S] [--samples N]
 *
 * Configurations, side by side: chains of 0, 1, 2 and 4 hops of one null
 * VNF each, and one hop of 1, 2 and 4 parallel null VNFs.  Two tables:
 *   - the path's own cost: one thread plays the TOE, the scheduler and
 *     every VNF service thread (the runtime, in process), no hand-offs;
 *   - end to end, as in the TOE: the bench thread submits, runs the
 *     scheduler in its own epoll loop (ch_psched_loop_attach, chh_loop_*)
 *     and takes the results, sleeping in epoll when a turn moved nothing;
 *     the null VNFs are processes whose verdicts ring its epoll set.  For
 *     each configuration the median over runs of (a) the latency of one
 *     descriptor alone in the chain (submit to result, TSC), median of
 *     --samples, and (b) the throughput with the input queue kept full.
 * Prints medians and ratios; asserts nothing about timings.
 * CHAIN_BENCH_ONLY=N runs configuration N (0..5) alone.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <tochain/tsc.h>

#include "ch_harness.h"
#include "vnf.h"

#define NBUFS	1024
#define SLOT	2048
#define MAXV	4

struct conf {
	const char *name;
	uint32_t nhops, width;
};

static const struct conf confs[] = {
	{ "0 hops", 0, 0 }, { "1 hop", 1, 1 }, { "2 hops", 2, 1 }, { "4 hops", 4, 1 },
	{ "1 hop x 2 VNFs", 1, 2 }, { "1 hop x 4 VNFs", 1, 4 },
};
#define NCONF (sizeof(confs) / sizeof(confs[0]))

static const char *bin, *dir = "/dev/shm";
static unsigned int runs = 3, samples = 2000;
static double secs = 0.5;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * One run of configuration @c end to end, the scheduler in this thread's
 * epoll loop: median latency (ns) and throughput (desc/s).
 */
static int run_one(const struct conf *c, uint64_t *lat_ns, double *tput)
{
	struct ch_psched_cfg cfg = { .nchains = 1, .qcap = 512, .max_flight = 512,
				    .vnf_nbufs = 1024, .hang_ns = 30000000000ull };
	const struct tcr_tsc_cal *cal = tcr_tsc_calibration();
	char dpath[300], vpath[MAXV][300];
	uint32_t nvnf = c->nhops * c->width;
	struct ch_chain_cfg cc = { .region = 0, .nhops = c->nhops };
	pid_t pid[MAXV] = { 0 };
	struct chh_loop loop = { .epfd = -1 };
	struct tcr_region *data;
	struct ch_psched *s;
	struct ch_result res[64];
	struct ch_pkt p;
	uint64_t *lat, t_end, done = 0, sent = 0, t0;
	int err = -1;

	snprintf(dpath, sizeof(dpath), "%s/tochain-bench-data-%d", dir, getpid());
	data = chh_data_region(dpath, NBUFS, SLOT);
	s = ch_psched_create(&cfg);
	lat = calloc(samples, sizeof(*lat));
	if (!data || !s || !lat || ch_psched_region_add(s, 0, dpath, NBUFS, SLOT) ||
	    chh_loop_attach(&loop, s)) {
		fprintf(stderr, "chain-bench: setup: %s\n", strerror(errno));
		goto out;
	}
	for (uint32_t i = 0; i < NBUFS; i++)
		chh_fill(data, i, i, NULL);
	for (uint32_t v = 0; v < nvnf; v++) {
		struct ch_vnf_cfg vc = { .name = "bench", .nthreads = 1 };

		snprintf(vpath[v], sizeof(vpath[v]), "%s/tochain-bench-vnf%u-%d", dir, v, getpid());
		vc.region_path = vpath[v];
		if (ch_psched_vnf_add(s, &vc) != (int)v)
			goto out;
		pid[v] = chh_spawn_vnf(bin, vpath[v], NULL, (char *)NULL);
		ch_psched_vnf_set_pid(s, v, pid[v]);
		cc.hop[v / c->width].vnf[v % c->width] = v;
		cc.hop[v / c->width].nvnfs = c->width;
	}
	if (ch_psched_chain_set(s, 0, &cc, NULL)) {
		fprintf(stderr, "chain-bench: chain failed\n");
		goto out;
	}

	/* Latency: one descriptor at a time (after a warm-up of 200). */
	for (unsigned int i = 0; i < samples + 200; i++) {
		uint64_t deadline = chh_now_ns() + 10000000000ull;

		chh_pkt(&p, 0, i % NBUFS, 512, i);
		p.tsc = tcr_tsc_now();
		if (ch_psched_push(s, 0, &p, 1) != 1)
			goto out;	/* the queue is empty: cannot happen */
		for (;;) {
			/* A turn of the loop: the scheduler, then the result if it came. */
			unsigned int work = ch_psched_poll(s);
			uint64_t now;

			if (ch_psched_take(s, 0, res, 1) == 1)
				break;
			now = chh_now_ns();
			if (now > deadline) {
				fprintf(stderr, "chain-bench: no result in 10 s (sample %u, in flight %u)\n",
					i, ch_psched_in_flight(s));
				for (uint32_t v = 0; v < nvnf; v++) {
					struct ch_vnf_info in;

					ch_psched_vnf_info(s, v, &in);
					fprintf(stderr, "  vnf %u: failed %d out %u disp %" PRIu64
						" verdicts %" PRIu64 "\n", v, in.failed, in.outstanding,
						in.dispatched, in.verdicts);
				}
				goto out;
			}
			if (!work)
				chh_loop_sleep(&loop, deadline - now);	/* a VNF's bell wakes it */
		}
		if (i >= 200)
			lat[i - 200] = tcr_tsc_to_ns(cal, res[0].done_tsc - res[0].pkt.tsc);
	}
	qsort(lat, samples, sizeof(*lat), cmp_u64);
	*lat_ns = lat[samples / 2];

	/* Throughput: keep the input queue full for @secs seconds. */
	t0 = chh_now_ns();
	t_end = t0 + (uint64_t)(secs * 1e9);
	for (uint64_t now = t0; now < t_end; now = chh_now_ns()) {
		struct ch_pkt batch[32];
		unsigned int k, moved = 0;

		for (unsigned int i = 0; i < 32; i++)
			chh_pkt(&batch[i], 0, (uint32_t)((sent + i) % NBUFS), 512, sent + i);
		if (sent - done < 512 - 32) {
			k = ch_psched_push(s, 0, batch, 32);
			sent += k;
			moved += k;
		}
		moved += ch_psched_poll(s);
		k = ch_psched_take(s, 0, res, 64);
		done += k;
		if (!moved && !k)
			chh_loop_sleep(&loop, t_end - now);
	}
	*tput = (double)done / ((double)(chh_now_ns() - t0) / 1e9);
	/* Drain. */
	for (uint64_t deadline = chh_now_ns() + 2000000000ull; done < sent &&
	     chh_now_ns() < deadline;) {
		unsigned int k, work = ch_psched_poll(s);

		k = ch_psched_take(s, 0, res, 64);
		done += k;
		if (!work && !k)
			chh_loop_sleep(&loop, 1000000ull);
	}
	err = 0;
out:
	for (uint32_t v = 0; v < nvnf; v++) {
		if (s)
			ch_psched_vnf_set_pid(s, v, 0);
		chh_stop(pid[v], 2000);
	}
	ch_psched_destroy(s);
	chh_loop_close(&loop);
	tcr_region_destroy(data);
	unlink(dpath);
	for (uint32_t v = 0; v < nvnf; v++)
		unlink(vpath[v]);
	free(lat);
	return err;
}

/*
 * The path's own cost, without hand-offs between CPUs: one thread plays
 * the TOE, the scheduler (ch_psched_poll) and every VNF service thread (the
 * runtime, in process), moving batches of 32 descriptors hop by hop.
 * Returns ns per descriptor, or 0 on error.
 */
static double path_cost(const struct conf *c, unsigned int batches)
{
	struct ch_psched_cfg cfg = { .nchains = 1, .qcap = 64, .max_flight = 64,
				    .vnf_nbufs = 256, .hang_ns = 30000000000ull };
	char dpath[300], vpath[MAXV][300];
	uint32_t nvnf = c->nhops * c->width;
	struct ch_chain_cfg cc = { .region = 0, .nhops = c->nhops };
	struct vnf_thread *t[MAXV] = { 0 };
	struct ch_pkt batch[32];
	struct ch_result res[32];
	struct vnf_pkt pk[32];
	struct tcr_region *data;
	struct ch_psched *s;
	uint64_t t0 = 0, ns = 0;
	int ok = 0;

	snprintf(dpath, sizeof(dpath), "%s/tochain-bench-pdata-%d", dir, getpid());
	data = chh_data_region(dpath, NBUFS, SLOT);
	s = ch_psched_create(&cfg);
	if (!data || !s || ch_psched_region_add(s, 0, dpath, NBUFS, SLOT))
		goto out;
	for (uint32_t v = 0; v < nvnf; v++) {
		struct ch_vnf_cfg vc = { .name = "path", .nthreads = 1 };

		snprintf(vpath[v], sizeof(vpath[v]), "%s/tochain-bench-pvnf%u-%d", dir, v, getpid());
		vc.region_path = vpath[v];
		if (ch_psched_vnf_add(s, &vc) != (int)v)
			goto out;
		t[v] = vnf_attach(vpath[v], 0, 100);
		if (!t[v])
			goto out;
		cc.hop[v / c->width].vnf[v % c->width] = v;
		cc.hop[v / c->width].nvnfs = c->width;
	}
	if (ch_psched_chain_set(s, 0, &cc, NULL))
		goto out;
	for (unsigned int b = 0; b < batches + 10; b++) {
		unsigned int got = 0;

		if (b == 10)
			t0 = chh_now_ns();	/* after a warm-up (grants, caches) */
		for (unsigned int i = 0; i < 32; i++)
			chh_pkt(&batch[i], 0, (b * 32 + i) % NBUFS, 512, b * 32 + i);
		if (ch_psched_push(s, 0, batch, 32) != 32)
			goto out;
		ch_psched_poll(s);
		for (uint32_t h = 0; h < c->nhops; h++) {
			for (uint32_t i = 0; i < c->width; i++) {
				struct vnf_thread *vt = t[h * c->width + i];
				unsigned int n = 0, tries = 0;

				while (n < 32) {
					int k = vnf_recv(vt, pk, 32, 0);

					if (k < 0 || tries++ > 100)
						goto out;
					if (k == 0) {
						/* The rest is still on a TX ring: the scheduler
						 * takes up to 32 per channel and poll. */
						ch_psched_poll(s);
						continue;
					}
					for (int j = 0; j < k; j++) {
						uint32_t rule;
						uint32_t v = vnf_null_inspect(&(struct vnf_null_opts){ 0 },
									  pk[j].data, pk[j].len, &rule);

						vnf_post(vt, &pk[j], v, rule);
					}
					n += (unsigned int)k;
				}
				vnf_flush(vt);
			}
			ch_psched_poll(s);
		}
		while (got < 32) {
			unsigned int k = ch_psched_take(s, 0, res, 32);

			if (!k)
				ch_psched_poll(s);
			got += k;
		}
	}
	ns = chh_now_ns() - t0;
	ok = 1;
out:
	for (uint32_t v = 0; v < nvnf; v++)
		vnf_detach(t[v]);
	ch_psched_destroy(s);
	tcr_region_destroy(data);
	unlink(dpath);
	for (uint32_t v = 0; v < nvnf; v++)
		unlink(vpath[v]);
	return ok ? (double)ns / (batches * 32.0) : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "vnf-bin", required_argument, NULL, 'b' },
		{ "dir", required_argument, NULL, 'd' },
		{ "runs", required_argument, NULL, 'r' },
		{ "secs", required_argument, NULL, 's' },
		{ "samples", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t lat[NCONF];
	double tput[NCONF];
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'b': bin = optarg; break;
		case 'd': dir = optarg; break;
		case 'r': runs = (unsigned int)atoi(optarg); break;
		case 's': secs = atof(optarg); break;
		case 'n': samples = (unsigned int)atoi(optarg); break;
		default: return 2;
		}
	}
	if (!bin || runs == 0 || runs > 99 || samples == 0 || secs <= 0) {
		fprintf(stderr, "usage: chain-bench --vnf-bin PATH [--dir DIR] [--runs N] "
				"[--secs S] [--samples N]\n");
		return 2;
	}
	urcu_memb_register_thread();
	for (size_t i = 0; i < NCONF; i++) {
		const char *only = getenv("CHAIN_BENCH_ONLY");
		uint64_t l[99];

		if (only && (size_t)atoi(only) != i) {
			lat[i] = 0;
			tput[i] = 1;
			continue;
		}
		double t[99];

		for (unsigned int r = 0; r < runs; r++)
			if (run_one(&confs[i], &l[r], &t[r])) {
				fprintf(stderr, "chain-bench: %s: run failed\n", confs[i].name);
				return 1;
			}
		qsort(l, runs, sizeof(l[0]), cmp_u64);
		qsort(t, runs, sizeof(t[0]), cmp_dbl);
		lat[i] = l[runs / 2];
		tput[i] = t[runs / 2];
	}
	{
		double pc[NCONF];

		for (size_t i = 0; i < NCONF; i++) {
			double r[99];

			for (unsigned int k = 0; k < runs; k++)
				r[k] = path_cost(&confs[i], 2000);
			qsort(r, runs, sizeof(r[0]), cmp_dbl);
			pc[i] = r[runs / 2];
		}
		printf("path cost in one thread (TOE + scheduler + VNF runtime, no hand-offs; "
		       "batches of 32, null verdicts; median of %u runs)\n", runs);
		printf("%-16s %12s %14s\n", "chain", "ns/desc", "added/hop ns");
		for (size_t i = 0; i < NCONF; i++) {
			char added[32] = "-";

			if (confs[i].nhops)
				snprintf(added, sizeof(added), "%.0f",
					 (pc[i] - pc[0]) / confs[i].nhops);
			printf("%-16s %12.0f %14s\n", confs[i].name, pc[i], added);
		}
		printf("\n");
	}
	urcu_memb_unregister_thread();
	printf("chain hops, null VNF processes, the scheduler in this thread's epoll loop as in "
	       "the TOE (medians of %u runs; latency: median of %u single descriptors; "
	       "throughput: %.1f s with a full input queue)\n", runs, samples, secs);
	printf("%-16s %12s %14s %14s %10s\n", "chain", "latency ns", "added/hop ns",
	       "Mdesc/s", "vs 0 hops");
	for (size_t i = 0; i < NCONF; i++) {
		uint32_t hops = confs[i].nhops;
		char added[32] = "-";

		if (hops)
			snprintf(added, sizeof(added), "%.0f",
				 ((double)lat[i] - (double)lat[0]) / hops);
		printf("%-16s %12" PRIu64 " %14s %14.3f %9.0f%%\n", confs[i].name, lat[i], added,
		       tput[i] / 1e6, 100.0 * tput[i] / tput[0]);
	}
	return 0;
}
