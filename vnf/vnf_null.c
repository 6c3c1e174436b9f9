// SPDX-License-Identifier: MIT
/* The null VNF kind and the tochain-vnf command line; see vnf_null.h. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/tsc.h>

#include "vnf_null.h"

uint64_t vnf_null_fnv(const uint8_t *p, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint32_t vnf_null_inspect(const struct vnf_null_opts *o, const uint8_t *p, uint32_t len,
			  uint32_t *rule)
{
	if (o->deny_marker && *o->deny_marker &&
	    memmem(p, len, o->deny_marker, strlen(o->deny_marker))) {
		*rule = VNF_NULL_RULE_MARKER;
		return VNF_VERDICT_DENY;
	}
	*rule = 0;
	return VNF_VERDICT_ALLOW;
}

struct worker {
	const struct vnf_null_opts *o;
	volatile int *stop;
	uint32_t id;
	int err;
	struct vnf_null_stats st;
	pthread_t th;
};

static void burn(uint64_t ticks)
{
	uint64_t t0 = tcr_tsc_now();

	while (tcr_tsc_now() - t0 < ticks)
		tc_cpu_relax();
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct tcr_tsc_cal *cal = tcr_tsc_calibration();
	uint64_t cost = cal->invariant ? w->o->cost_ns * cal->hz / 1000000000ull : w->o->cost_ns;
	struct vnf_thread *t;
	struct vnf_pkt pk[32];

	t = vnf_attach(w->o->region, w->id, w->o->attach_timeout_ms);
	if (!t) {
		w->err = -errno;
		return NULL;
	}
	while (!*w->stop) {
		int n = vnf_recv(t, pk, 32, 100);

		if (n < 0) {
			if (n != -ESHUTDOWN)
				w->err = n;
			break;
		}
		for (int i = 0; i < n; i++) {
			/* One read of the guest's bytes: checksum and verdict on it. */
			uint32_t rule, v = vnf_null_inspect(w->o, pk[i].data, pk[i].len, &rule);

			w->st.packets++;
			w->st.bytes += pk[i].len;
			w->st.csum += vnf_null_fnv(pk[i].data, pk[i].len);
			w->st.denied += v == VNF_VERDICT_DENY;
			if (cost)
				burn(cost);
			vnf_post(t, &pk[i], v, rule);
		}
	}
	vnf_flush(t);
	vnf_detach(t);
	return NULL;
}

static int write_stats(const char *path, const struct worker *w, uint32_t n)
{
	struct vnf_null_stats tot = { 0 };
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (uint32_t i = 0; i < n; i++) {
		tot.packets += w[i].st.packets;
		tot.bytes += w[i].st.bytes;
		tot.csum += w[i].st.csum;
		tot.denied += w[i].st.denied;
	}
	fprintf(f, "threads %u\npackets %" PRIu64 "\nbytes %" PRIu64 "\ncsum %" PRIu64
		"\ndenied %" PRIu64 "\n", n, tot.packets, tot.bytes, tot.csum, tot.denied);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "thread%u %" PRIu64 "\n", i, w[i].st.packets);
	if (fclose(f))
		return -errno;
	return rename(tmp, path) ? -errno : 0;
}

int vnf_null_run(const struct vnf_null_opts *o, volatile int *stop)
{
	struct worker *w;
	uint32_t n = o->threads;
	int err = 0;

	if (!n) {
		int k = vnf_region_threads(o->region);

		if (k < 0)
			return k;
		n = (uint32_t)k;
	}
	if (n == 0 || n > VNF_MAX_THREADS)
		return -EINVAL;
	w = calloc(n, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		w[i].o = o;
		w[i].stop = stop;
		w[i].id = i;
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i])) {
			*stop = 1;
			n = i;
			err = -EAGAIN;
			break;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].err && !err)
			err = w[i].err;
	}
	if (o->stats_path) {
		int e = write_stats(o->stats_path, w, n);

		if (e && !err)
			err = e;
	}
	free(w);
	return err;
}

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tochain-vnf --kind null --region PATH [--threads N] [--cost-ns NS]\n"
		   "                   [--deny-marker STRING] [--stats FILE] [--attach-timeout MS]\n"
		   "                   [--exit-with-parent]\n");
}

int vnf_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "kind", required_argument, NULL, 'k' },
		{ "region", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 't' },
		{ "cost-ns", required_argument, NULL, 'c' },
		{ "deny-marker", required_argument, NULL, 'd' },
		{ "stats", required_argument, NULL, 's' },
		{ "attach-timeout", required_argument, NULL, 'a' },
		{ "exit-with-parent", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vnf_null_opts o = { .attach_timeout_ms = 5000 };
	const char *kind = NULL;
	struct sigaction sa;
	char *end;
	int c, err;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'k': kind = optarg; break;
		case 'r': o.region = optarg; break;
		case 't':
			o.threads = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || o.threads == 0 || o.threads > VNF_MAX_THREADS)
				goto bad;
			break;
		case 'c':
			o.cost_ns = strtoull(optarg, &end, 10);
			if (*end)
				goto bad;
			break;
		case 'd': o.deny_marker = optarg; break;
		case 's': o.stats_path = optarg; break;
		case 'a':
			o.attach_timeout_ms = (int)strtol(optarg, &end, 10);
			if (*end)
				goto bad;
			break;
		case 'p':
			/* Tests: a VNF must not outlive the scheduler that started it. */
			if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() == 1)
				return 1;
			break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind != argc || !o.region || !kind)
		goto bad;
	if (strcmp(kind, "null")) {
		fprintf(stderr, "tochain-vnf: --kind %s: only the null kind is built in\n", kind);
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	err = vnf_null_run(&o, &stop_flag);
	if (err) {
		fprintf(stderr, "tochain-vnf: %s\n", strerror(-err));
		return 1;
	}
	return 0;
bad:
	usage(stderr);
	return 2;
}
