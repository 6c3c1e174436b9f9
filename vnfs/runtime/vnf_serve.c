// SPDX-License-Identifier: MIT
/*
 * The serving loop of every kind (vnf_serve) and the calibration run
 * (vnf_calibrate); see vnf_serve.h.
 *
 * THREADS.  One service thread per channel; each owns a struct vnf_kthread
 * (engine reference + kind state) and its runtime handle.  The main thread
 * only waits for signals: SIGHUP reloads the rules (vnf_engines_reload:
 * built aside, swapped, each service thread moves to the new engine between
 * two batches), SIGTERM/SIGINT stop.  Signals are blocked in every thread
 * and taken with sigtimedwait by the main thread.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/tsc.h>
#include <tochain/util.h>

#include "tochain/ch_flow.h"
#include "vnf_early.h"
#include "vnf_serve.h"
#include "vnf_mix.h"
#include "vnf_null.h"
#include "vnf_stream.h"

struct worker {
	struct vnf_engines *es;
	const struct vnf_serve_opts *o;
	volatile int *stop;
	uint32_t id;
	int err;
	struct vnf_null_stats st;
	pthread_t th;
	int *alive;
};

static void burn(uint64_t ticks)
{
	uint64_t t0 = tcr_tsc_now();

	while (tcr_tsc_now() - t0 < ticks)
		tc_cpu_relax();
}

/* A stream whose flow entry says the connection is over. */
static bool stream_gone(void *ctx, const struct vnf_stream *s)
{
	struct vnf_pkt pk = { 0 };
	struct vnf_flow f;
	int err;

	if (!s->has_flow)
		return false;	/* no flow table: only eviction frees it */
	pk.d.flow = s->fidx;
	pk.d.aux = VNF_AUX(s->region, 0);
	err = vnf_flow(ctx, &pk, &f);
	if (err == -EAGAIN)
		return false;
	return err || f.gen != s->gen || f.state == CH_FLOW_CLOSED;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct tcr_tsc_cal *cal = tcr_tsc_calibration();
	uint64_t cost = cal->invariant ? w->o->cost_ns * cal->hz / 1000000000ull : w->o->cost_ns;
	bool sums = w->o->stats_path != NULL;
	struct vnf_kthread kt;
	struct vnf_thread *t;
	struct vnf_pkt pk[32];
	struct vnf_streams *st;
	struct vnf_early early = { 0 };
	uint64_t next_sweep = 0;
	char name[16];
	int err;

	/* Named for its channel: tochaind registers the first R with the CPU scheduler. */
	snprintf(name, sizeof(name), "svc%u", w->id);
	prctl(PR_SET_NAME, name);
	err = vnf_kthread_init(&kt, w->es);
	if (err) {
		w->err = err;
		goto out;
	}
	t = vnf_attach_guest(w->o->region, w->id, w->o->attach_timeout_ms, w->o->dev_dir);
	if (!t) {
		w->err = -errno;
		vnf_kthread_fini(&kt);
		goto out;
	}
	while (!*w->stop) {
		int n = vnf_recv(t, pk, 32, 100);

		if (n < 0) {
			if (n != -ESHUTDOWN)
				w->err = n;	/* -ENODEV: the device is gone (guest) */
			break;
		}
		/* Between batches: the engine a reload installed. */
		vnf_kthread_refresh(&kt);
		st = w->es->kind->streams ? w->es->kind->streams(kt.ts) : NULL;
		if (st && tcr_tsc_now() >= next_sweep) {
			vnf_streams_sweep(st, stream_gone, t);
			next_sweep = tcr_tsc_now() + (cal->invariant ? cal->hz : 1000000000ull);
		}
		for (int i = 0; i < n; i++) {
			struct vnf_flow f;
			uint32_t rule, v;
			int fe;

			for (int k = 0; (fe = vnf_flow(t, &pk[i], &f)) == -EAGAIN && k < 4; k++)
				;
			v = vnf_kthread_judge(&kt, &pk[i], fe == 0 ? &f : NULL, &rule);
			vnf_early_note(&early, &pk[i]);
			w->st.packets++;
			w->st.bytes += pk[i].len;
			if (sums)
				w->st.csum += vnf_null_fnv(pk[i].data, pk[i].len);
			w->st.denied += v == VNF_VERDICT_DENY;
			if (cost)
				burn(cost);
			vnf_kthread_post(&kt, t, &pk[i], v, rule);
		}
		if (n > 0)
			vnf_early_check(&early, t);
	}
	vnf_flush(t);
	vnf_detach(t);
	vnf_kthread_fini(&kt);
out:
	__atomic_sub_fetch(w->alive, 1, __ATOMIC_RELEASE);
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

static void wait_signals(struct vnf_engines *es, volatile int *stop, int *alive)
{
	struct timespec tmo = { 0, 100 * 1000 * 1000 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	while (!*stop && __atomic_load_n(alive, __ATOMIC_ACQUIRE) > 0) {
		int sig = sigtimedwait(&set, NULL, &tmo);
		char err[512];

		if (sig == SIGTERM || sig == SIGINT) {
			*stop = 1;
		} else if (sig == SIGHUP) {
			if (vnf_engines_reload(es, err, sizeof(err)))
				fprintf(stderr, "tochain-vnf: %s: reload refused, the old rules stay: %s\n",
					es->kind->name, err);
			else
				fprintf(stderr, "tochain-vnf: %s: rules reloaded (generation %" PRIu64
					")\n", es->kind->name, tc_load_relaxed(&es->gen));
		}
	}
}

int vnf_serve(struct vnf_engines *es, const struct vnf_serve_opts *o, volatile int *stop,
	      bool sighup)
{
	struct worker *w;
	uint32_t n = o->threads;
	int err = 0, alive;

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
	alive = (int)n;
	for (uint32_t i = 0; i < n; i++) {
		w[i].es = es;
		w[i].o = o;
		w[i].stop = stop;
		w[i].id = i;
		w[i].alive = &alive;
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i])) {
			*stop = 1;
			__atomic_sub_fetch(&alive, (int)(n - i), __ATOMIC_RELEASE);
			n = i;
			err = -EAGAIN;
			break;
		}
	}
	if (sighup)
		wait_signals(es, stop, &alive);
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

#define CAL_REQS	1000
#define CAL_SEG		1448

int vnf_calibrate(struct vnf_engines *es, double seconds, uint64_t cost_ns,
		  struct vnf_calib *out)
{
	const struct tcr_tsc_cal *cal = tcr_tsc_calibration();
	uint64_t cost = cal->invariant ? cost_ns * cal->hz / 1000000000ull : cost_ns;
	struct vnf_kthread kt;
	char (*req)[VNF_MIX_MAX];
	uint32_t len[CAL_REQS];
	double t0, t;
	uint64_t conn = 0;
	int err;

	memset(out, 0, sizeof(*out));
	req = malloc(sizeof(*req) * CAL_REQS);
	if (!req)
		return -ENOMEM;
	for (uint32_t i = 0; i < CAL_REQS; i++) {
		enum vnf_mix_family fam;

		len[i] = vnf_mix_request(i, req[i], &fam);
	}
	err = vnf_kthread_init(&kt, es);
	if (err) {
		free(req);
		return err;
	}
	t0 = t = tu_now_s();
	do {
		uint32_t i = (uint32_t)(conn % CAL_REQS);
		struct vnf_pkt pk;

		conn++;
		memset(&pk, 0, sizeof(pk));
		pk.d.conn_id = conn;
		pk.d.family = 4;
		pk.d.l4proto = 6;
		pk.d.tcp_flags = 0x18;
		pk.d.flow = TCR_FLOW_NONE;
		pk.d.sport = (uint16_t)(32768 + conn % 28000);
		pk.d.dport = 80;
		pk.d.saddr[0] = 198, pk.d.saddr[1] = 18;	/* outside HOME_NET */
		pk.d.saddr[2] = (uint8_t)(conn >> 8), pk.d.saddr[3] = (uint8_t)conn;
		pk.d.daddr[0] = 10, pk.d.daddr[3] = 1;
		for (uint32_t off = 0; off < len[i]; off += CAL_SEG) {
			uint32_t rule;

			pk.d.seq = off;
			pk.data = (const uint8_t *)req[i] + off;
			pk.len = pk.d.len = len[i] - off < CAL_SEG ? len[i] - off : CAL_SEG;
			uint32_t v = vnf_kthread_judge(&kt, &pk, NULL, &rule);

			if (cost)
				burn(cost);
			/* a Deny is judged work too: f counts what was judged */
			out->packets++;
			out->bytes += pk.len;
			if (v == VNF_VERDICT_DENY) {
				out->denied++;
				break;	/* the connection is aborted */
			}
		}
		out->requests++;
		if (es->kind->forget)
			es->kind->forget(kt.ts, conn);
		if ((conn & 7) == 0)
			t = tu_now_s();
	} while (t - t0 < seconds);
	out->seconds = t - t0;
	vnf_kthread_fini(&kt);
	free(req);
	return 0;
}
