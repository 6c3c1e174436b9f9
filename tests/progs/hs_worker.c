// SPDX-License-Identifier: MIT
/* Stand-in VNFs and VMs for tochain-sched; see hs_worker.h. */
#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tochain/counters.h>
#include <tochain/region.h>

#include "tochain/ctl_proto.h"
#include "tochain/util.h"
#include "hs_worker.h"

#define RLX __ATOMIC_RELAXED

static uint64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void nap_us(long us)
{
	struct timespec t = { 0, us * 1000 };

	nanosleep(&t, NULL);
}

/* Sleeps until the main thread admits packets to @c; at most 50 ms, so
 * that a stop is seen.  Pairs: see hs_worker.h. */
static void wait_input(struct hsw_chain *c)
{
	struct timespec t = { 0, 50 * 1000000L };
	uint32_t seq = __atomic_load_n(&c->kick, __ATOMIC_SEQ_CST);

	__atomic_fetch_add(&c->sleepers, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->claimed, RLX) >= __atomic_load_n(&c->arrived, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &c->kick, FUTEX_WAIT_PRIVATE, seq, &t, NULL, 0);
	__atomic_fetch_sub(&c->sleepers, 1, RLX);
}

/* Wakes @c's sleeping service threads after new arrivals were stored. */
static void kick_input(struct hsw_chain *c)
{
	__atomic_fetch_add(&c->kick, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->sleepers, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &c->kick, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static uint64_t qcap(const struct hsw *w, const struct hsw_chain *c)
{
	uint64_t cap = 2 * c->sla, ring = w->region->geo.ring_size;

	return cap < ring ? cap : ring;
}

/* ---- parsing ---- */

static int kv(const char *arg, const char *key, double *out)
{
	size_t n = strlen(key);
	char *end;

	if (strncmp(arg, key, n) || arg[n] != '=')
		return 0;
	*out = strtod(arg + n + 1, &end);
	return *end || arg[n + 1] == '\0' ? -1 : 1;
}

static uint32_t find_vm(const struct hsw *w, const char *name)
{
	for (uint32_t i = 0; i < w->nvm; i++)
		if (!strcmp(w->vm[i].name, name))
			return i;
	return UINT32_MAX;
}

int hsw_parse(struct hsw *w, int argc, char **argv, int *i, char *why, size_t len)
{
	const char *what = argv[*i], *name;
	double v;
	int r;

	if (*i + 1 >= argc) {
		snprintf(why, len, "%s needs a name", what);
		return -EINVAL;
	}
	name = argv[*i + 1];
	if (strlen(name) >= 48 || !name[0]) {
		snprintf(why, len, "bad name '%s'", name);
		return -EINVAL;
	}
	*i += 2;
	if (!strcmp(what, "vm") || !strcmp(what, "tenant")) {
		struct hsw_vm *m;

		if (w->nvm == HSW_MAX_VMS || find_vm(w, name) != UINT32_MAX) {
			snprintf(why, len, "too many VMs or duplicate '%s'", name);
			return -EINVAL;
		}
		m = &w->vm[w->nvm];
		memset(m, 0, sizeof(*m));
		snprintf(m->name, sizeof(m->name), "%s", name);
		m->tenant = !strcmp(what, "tenant");
		m->nvcpu = 1;
		m->rx_ns = 20000;
		for (; *i < argc && strchr(argv[*i], '='); (*i)++) {
			if ((r = kv(argv[*i], "vcpus", &v)) == 1 && v >= 1 && v <= HSW_MAX_THREADS)
				m->nvcpu = (uint32_t)v;
			else if (r == 0 && (r = kv(argv[*i], "rx_us", &v)) == 1 && v > 0 && v < 1e6)
				m->rx_ns = (uint64_t)(v * 1000);
			else {
				snprintf(why, len, "vm %s: bad option '%s'", name, argv[*i]);
				return -EINVAL;
			}
		}
		w->nvm++;
		return 0;
	}
	if (!strcmp(what, "chain")) {
		struct hsw_chain *c;

		if (w->nchain == HSW_MAX_CHAINS) {
			snprintf(why, len, "too many chains");
			return -EINVAL;
		}
		c = &w->chain[w->nchain];
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->vm = UINT32_MAX;
		c->load = 1.0;
		c->nthreads = 1;
		for (; *i < argc && strchr(argv[*i], '='); (*i)++) {
			const char *a = argv[*i];

			if (!strncmp(a, "vm=", 3)) {
				c->vm = find_vm(w, a + 3);
				if (c->vm == UINT32_MAX || w->vm[c->vm].tenant) {
					snprintf(why, len, "chain %s: no receiving vm '%s' declared before it",
						 name, a + 3);
					return -EINVAL;
				}
			} else if (kv(a, "sla", &v) == 1 && v >= 1 && v <= 1e6) {
				c->sla = (uint64_t)v;
			} else if (kv(a, "vnf_us", &v) == 1 && v > 0 && v < 1e6) {
				c->vnf_ns = (uint64_t)(v * 1000);
			} else if (kv(a, "threads", &v) == 1 && v >= 1 && v <= HSW_MAX_THREADS) {
				c->nthreads = (uint32_t)v;
			} else if (kv(a, "load", &v) == 1 && v >= 0 && v <= 100) {
				c->load = v;
			} else {
				snprintf(why, len, "chain %s: bad option '%s'", name, a);
				return -EINVAL;
			}
		}
		if (!c->sla || !c->vnf_ns || c->vm == UINT32_MAX) {
			snprintf(why, len, "chain %s needs sla=, vnf_us= and vm=", name);
			return -EINVAL;
		}
		w->nchain++;
		return 0;
	}
	snprintf(why, len, "expected chain, vm or tenant, not '%s'", what);
	return -EINVAL;
}

/* ---- threads ---- */


static void wait_go(struct hsw *w)
{
	__atomic_fetch_add(&w->nstarted, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&w->go, __ATOMIC_ACQUIRE))
		nap_us(1000);
}

/* The first time thread @r of @c runs in a period: stamp it. */
static void stamp(struct hsw_chain *c, uint32_t r, struct tcr_chain_counters *cc, uint64_t *last)
{
	uint64_t p = __atomic_load_n(&cc->period, RLX);

	if (p == *last)
		return;
	*last = p;
	c->stamp_ns[r][p % HSW_STAMPS] = tu_now_ns();
	__atomic_store_n(&c->stamp_p[r][p % HSW_STAMPS], p + 1, __ATOMIC_RELEASE);
}

static void *vnf_thread(void *arg)
{
	struct hsw_targ *a = arg;
	struct hsw *w = a->w;
	struct hsw_chain *c = &w->chain[a->idx];
	struct tcr_chain_counters *cc = tcr_region_chain(w->region, a->idx);
	uint64_t last = UINT64_MAX, raised = UINT64_MAX, cap = qcap(w, c);

	__atomic_store_n(&c->tid[a->r], (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	wait_go(w);
	while (!__atomic_load_n(&w->stop, RLX)) {
		uint64_t cl = __atomic_load_n(&c->claimed, RLX);
		uint64_t ar = __atomic_load_n(&c->arrived, __ATOMIC_ACQUIRE);
		uint64_t out = __atomic_load_n(&c->done, RLX) - __atomic_load_n(&c->vm_claimed, RLX);

		stamp(c, a->r, cc, &last);
		if (cl < ar && out < cap) {
			uint64_t end, i;

			/* Lost the packet to another service thread: try the
			 * next one (the queue was not empty: no early end). */
			if (!__atomic_compare_exchange_n(&c->claimed, &cl, cl + 1, false, RLX, RLX))
				continue;
			end = cpu_ns() + c->vnf_ns;
			while (cpu_ns() < end)
				stamp(c, a->r, cc, &last);
			/* Release: pairs with the acquire loads of done by the
			 * VM threads and the main thread (the packet exists). */
			i = __atomic_fetch_add(&c->done, 1, __ATOMIC_RELEASE);
			c->fin_ts[i % HSW_RING] = tu_now_ns();
			continue;
		}
		if (raised != last) {
			/* Nothing to do this period: (a), or (b) if the
			 * receiver is the one that is behind. */
			tcr_counters_raise_early(cc, cl >= ar ? TCR_EARLY_INPUT_EMPTY :
						 TCR_EARLY_OUTPUT_FULL);
			raised = last;
		}
		if (cl >= ar)
			wait_input(c);
		else
			nap_us(1000);	/* the receiver is behind */
	}
	return NULL;
}

/* The oldest output-queue head among @v's chains with one, or NULL. */
static struct hsw_chain *oldest(struct hsw *w, uint32_t v, uint64_t *slot)
{
	struct hsw_chain *best = NULL;
	uint64_t best_ts = UINT64_MAX;

	for (uint32_t i = 0; i < w->nchain; i++) {
		struct hsw_chain *c = &w->chain[i];
		uint64_t vc = __atomic_load_n(&c->vm_claimed, RLX);

		if (c->vm != v || vc >= __atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
			continue;
		if (c->fin_ts[vc % HSW_RING] < best_ts || !best) {
			best = c;
			best_ts = c->fin_ts[vc % HSW_RING];
			*slot = vc;
		}
	}
	return best;
}

static void *vm_thread(void *arg)
{
	struct hsw_targ *a = arg;
	struct hsw *w = a->w;
	struct hsw_vm *m = &w->vm[a->idx];

	__atomic_store_n(&m->tid[a->r], (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	wait_go(w);
	while (!__atomic_load_n(&w->stop, RLX)) {
		struct hsw_chain *c;
		uint64_t vc = 0, end;

		if (m->tenant) {
			end = cpu_ns() + 100000;
			while (cpu_ns() < end)
				;
			__atomic_fetch_add(&m->work_ns, 100000, RLX);
			continue;
		}
		c = oldest(w, a->idx, &vc);
		if (!c || !__atomic_compare_exchange_n(&c->vm_claimed, &vc, vc + 1, false, RLX, RLX)) {
			if (!c)
				nap_us(100);
			continue;
		}
		end = cpu_ns() + m->rx_ns;
		while (cpu_ns() < end)
			;
		__atomic_fetch_add(&c->taken, 1, RLX);
	}
	return NULL;
}

int hsw_start(struct hsw *w, const char *path)
{
	struct tcr_params p = {
		.name = "hsw", .kind = TCR_KIND_HOST, .nbufs = 16384, .slot_size = 64,
		.nchannels = 1, .nchains = w->nchain,
	};
	uint32_t n = 0, want = 0;
	pthread_t th;

	w->region = tcr_region_create(path, &p);
	if (!w->region)
		return -errno;
	for (uint32_t i = 0; i < w->nchain; i++) {
		struct tcr_chain_counters *cc = tcr_region_chain(w->region, i);

		cc->sla_pps = (uint32_t)w->chain[i].sla;
		cc->chain_id = i;
		w->chain[i].fin_ts = calloc(HSW_RING, sizeof(uint64_t));
		if (!w->chain[i].fin_ts)
			return -ENOMEM;
		for (uint32_t r = 0; r < w->chain[i].nthreads; r++, n++) {
			w->targ[n] = (struct hsw_targ){ w, i, r };
			if (pthread_create(&th, NULL, vnf_thread, &w->targ[n]))
				return -EAGAIN;
			pthread_detach(th);
		}
	}
	for (uint32_t v = 0; v < w->nvm; v++)
		for (uint32_t r = 0; r < w->vm[v].nvcpu; r++, n++) {
			w->targ[n] = (struct hsw_targ){ w, v, r };
			if (pthread_create(&th, NULL, vm_thread, &w->targ[n]))
				return -EAGAIN;
			pthread_detach(th);
		}
	want = n;
	while (__atomic_load_n(&w->nstarted, __ATOMIC_ACQUIRE) < want)
		nap_us(1000);
	return 0;
}

/* Registers one thread.  A refusal that names a chain "already" held by
 * threads of a process that is exiting (frozen threads die only once
 * thawed, within a period) is retried for up to 3 s. */
static int reg(const char *sock, json_t *args, char *why, size_t len)
{
	for (int attempt = 0;; attempt++) {
		const char *err = NULL, *msg;
		json_t *rep = ctl_call(sock, "sched.register", json_incref(args), &err);

		if (!rep) {
			snprintf(why, len, "%s: %s", sock, err ? err : strerror(errno));
			json_decref(args);
			return -EIO;
		}
		if (json_is_true(json_object_get(rep, "ok"))) {
			json_decref(rep);
			json_decref(args);
			return 0;
		}
		msg = json_string_value(json_object_get(rep, "error"));
		snprintf(why, len, "refused: %s", msg ? msg : "?");
		json_decref(rep);
		if (!msg || !strstr(msg, "already") || attempt == 30) {
			json_decref(args);
			return -EINVAL;
		}
		nap_us(100000);
	}
}

int hsw_register(struct hsw *w, const char *sock, const char *region, char *why, size_t len)
{
	int err;

	for (uint32_t v = 0; v < w->nvm; v++)
		for (uint32_t r = 0; r < w->vm[v].nvcpu; r++) {
			err = reg(sock, json_pack("{s:s, s:i, s:s}", "role", "vm",
						  "tid", (int)w->vm[v].tid[r], "vm", w->vm[v].name),
				  why, len);
			if (err)
				return err;
		}
	for (uint32_t i = 0; i < w->nchain; i++) {
		struct hsw_chain *c = &w->chain[i];
		double f = 1e9 / (double)c->vnf_ns * (1.0 - w->headroom);

		for (uint32_t r = 0; r < c->nthreads; r++) {
			err = reg(sock, json_pack("{s:s, s:i, s:s, s:s, s:s, s:I, s:I, s:s, s:i, s:i}",
						  "role", "vnf", "tid", (int)c->tid[r],
						  "chain", c->name, "vnf", "svc",
						  "vm", w->vm[c->vm].name,
						  "sla", (json_int_t)c->sla,
						  "f", (json_int_t)(f < 1 ? 1 : f),
						  "region", region, "index", (int)i,
						  "threads", (int)c->nthreads),
				  why, len);
			if (err)
				return err;
		}
	}
	return 0;
}

double hsw_jain(const double *x, uint32_t n)
{
	double s = 0, s2 = 0;

	for (uint32_t i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	return n && s2 > 0 ? s * s / (n * s2) : 1.0;
}

/* One millisecond of the packet scheduler. */
static void step(struct hsw *w, uint64_t t0, uint64_t now)
{
	for (uint32_t i = 0; i < w->nchain; i++) {
		struct hsw_chain *c = &w->chain[i];
		struct tcr_chain_counters *cc = tcr_region_chain(w->region, i);
		uint64_t target = (uint64_t)(c->load * (double)c->sla * (double)(now - t0) / 1e9);
		uint64_t fresh = target - c->gen, arrived = c->arrived;
		uint64_t inq = arrived - __atomic_load_n(&c->claimed, RLX);
		uint64_t room = qcap(w, c) > inq ? qcap(w, c) - inq : 0;
		uint64_t acc = fresh < room ? fresh : room, done, taken, vc, outq;

		c->gen = target;
		__atomic_store_n(&c->dropped, c->dropped + fresh - acc, RLX);
		arrived += acc;
		__atomic_store_n(&c->arrived, arrived, __ATOMIC_SEQ_CST);
		if (acc)
			kick_input(c);
		done = __atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
		taken = __atomic_load_n(&c->taken, RLX);
		vc = __atomic_load_n(&c->vm_claimed, RLX);
		if (vc > done)
			vc = done;
		outq = done - vc;
		tcr_counters_arrived(cc, (uint32_t)(arrived - c->pub_arrived));
		tcr_counters_finished(cc, (uint32_t)(done - c->pub_done), 0);
		tcr_counters_taken(cc, (uint32_t)(taken - c->pub_taken));
		c->pub_arrived = arrived;
		c->pub_done = done;
		c->pub_taken = taken;
		inq = arrived - __atomic_load_n(&c->claimed, RLX);
		if (inq > qcap(w, c))
			inq = qcap(w, c);
		if (outq > w->region->geo.ring_size)
			outq = w->region->geo.ring_size;
		tcr_counters_queues(cc, (uint32_t)inq, (uint32_t)outq,
				    outq ? c->fin_ts[vc % HSW_RING] | 1 : 0);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t period_of(const struct hsw *w)
{
	return w->nchain ? __atomic_load_n(&tcr_region_chain(w->region, 0)->period, RLX) : 0;
}

/* Gang skew of @c over periods (p0, p1): max - min of first-run stamps. */
static uint32_t skews(const struct hsw_chain *c, uint64_t p0, uint64_t p1, uint64_t *out)
{
	uint32_t n = 0;

	if (c->nthreads < 2)
		return 0;
	if (p1 > p0 + HSW_STAMPS - 2)
		p0 = p1 - (HSW_STAMPS - 2);
	for (uint64_t p = p0 + 1; p < p1; p++) {
		uint64_t lo = UINT64_MAX, hi = 0;
		bool all = true;

		for (uint32_t r = 0; r < c->nthreads && all; r++) {
			uint64_t s = p % HSW_STAMPS;

			if (__atomic_load_n(&c->stamp_p[r][s], __ATOMIC_ACQUIRE) != p + 1) {
				all = false;
				break;
			}
			if (c->stamp_ns[r][s] < lo)
				lo = c->stamp_ns[r][s];
			if (c->stamp_ns[r][s] > hi)
				hi = c->stamp_ns[r][s];
		}
		if (all)
			out[n++] = hi - lo;
	}
	qsort(out, n, sizeof(*out), cmp_u64);
	return n;
}

void hsw_run(struct hsw *w, double warmup, double measure, bool json, FILE *out)
{
	uint64_t t0 = tu_now_ns(), tw = t0 + (uint64_t)(warmup * 1e9);
	uint64_t te = 0, now, p0 = 0, p1, prev;
	struct timespec next;
	double ratio[HSW_MAX_CHAINS];
	uint64_t sk[HSW_STAMPS];
	bool measuring = false;
	json_t *jc = json_array(), *jt = json_array(), *doc;

	/* The packet scheduler belongs to the service partition: it must
	 * not queue behind the vCPU threads it feeds.  It sleeps nearly
	 * always, so a real-time priority costs the others nothing. */
	struct sched_param sp = { .sched_priority = 5 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		fprintf(stderr, "hsd-worker: no SCHED_FIFO for the packet scheduler: arrivals may lag\n");
	clock_gettime(CLOCK_MONOTONIC, &next);
	__atomic_store_n(&w->go, 1, __ATOMIC_RELEASE);
	prev = period_of(w);
	for (;;) {
		bool boundary;

		now = tu_now_ns();
		step(w, t0, now);
		p1 = period_of(w);
		boundary = p1 != prev;
		prev = p1;
		/* With a daemon closing periods (w->aligned), measure whole
		 * periods: a chain's backlog has the same phase at both ends.
		 * Give up waiting for a boundary after 2 s. */
		if (!measuring && now >= tw && (!w->aligned || boundary || now >= tw + 2000000000u)) {
			measuring = true;
			tw = now;
			te = tw + (uint64_t)(measure * 1e9);
			p0 = p1;
			for (uint32_t i = 0; i < w->nchain; i++) {
				w->chain[i].m_taken = __atomic_load_n(&w->chain[i].taken, RLX);
				w->chain[i].m_gen = w->chain[i].gen;
				w->chain[i].m_dropped = w->chain[i].dropped;
			}
			for (uint32_t v = 0; v < w->nvm; v++)
				w->vm[v].m_work = __atomic_load_n(&w->vm[v].work_ns, RLX);
		} else if (measuring && now >= te &&
			   (!w->aligned || boundary || now >= te + 2000000000u)) {
			break;
		}
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	measure = (double)(now - tw) / 1e9;
	if (!json)
		fprintf(out, "%-10s %8s %9s %9s %7s %8s %6s %9s %9s\n", "chain", "sla", "offered",
			"achieved", "ratio", "dropped", "skewn", "skew_p50", "skew_max");
	for (uint32_t i = 0; i < w->nchain; i++) {
		struct hsw_chain *c = &w->chain[i];
		double got = (double)(__atomic_load_n(&c->taken, RLX) - c->m_taken) / measure;
		double off = (double)(c->gen - c->m_gen) / measure;
		double drop = (double)(c->dropped - c->m_dropped) / measure;
		uint32_t n = skews(c, p0, p1, sk);
		double p50 = n ? sk[n / 2] / 1e6 : 0, p95 = n ? sk[(n * 95) / 100 < n ? (n * 95) / 100 : n - 1] / 1e6 : 0;
		double mx = n ? sk[n - 1] / 1e6 : 0;

		ratio[i] = got / (double)c->sla;
		if (!json)
			fprintf(out, "%-10s %8" PRIu64 " %9.0f %9.0f %7.3f %8.0f %6u %9.3f %9.3f\n",
				c->name, c->sla, off, got, ratio[i], drop, n, p50, mx);
		json_array_append_new(jc, json_pack("{s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:i,"
						    " s:{s:i, s:f, s:f, s:f}}",
			"chain", c->name, "vm", w->vm[c->vm].name, "sla", (json_int_t)c->sla,
			"offered", off, "achieved", got, "ratio", ratio[i], "dropped", drop,
			"threads", (int)c->nthreads,
			"skew_ms", "periods", (int)n, "median", p50, "p95", p95, "max", mx));
	}
	for (uint32_t v = 0; v < w->nvm; v++) {
		double share;

		if (!w->vm[v].tenant)
			continue;
		share = (double)(__atomic_load_n(&w->vm[v].work_ns, RLX) - w->vm[v].m_work) /
			1e9 / measure;
		if (!json)
			fprintf(out, "tenant %-10s vcpus %u cpu %.2f\n", w->vm[v].name,
				w->vm[v].nvcpu, share);
		json_array_append_new(jt, json_pack("{s:s, s:i, s:f}", "vm", w->vm[v].name,
						    "vcpus", (int)w->vm[v].nvcpu, "cpu", share));
	}
	if (!json) {
		fprintf(out, "jain %.3f over %u chains, %.1f s measured, periods %" PRIu64 "\n",
			hsw_jain(ratio, w->nchain), w->nchain, measure, p1 - p0);
	} else {
		doc = json_pack("{s:f, s:I, s:f, s:o, s:o}", "measure_s", measure,
				"periods", (json_int_t)(p1 - p0), "jain", hsw_jain(ratio, w->nchain),
				"chains", jc, "tenants", jt);
		jc = jt = NULL;
		char *s = json_dumps(doc, JSON_COMPACT);

		if (s)
			fprintf(out, "%s\n", s);
		free(s);
		json_decref(doc);
	}
	json_decref(jc);
	json_decref(jt);
	fflush(out);
	__atomic_store_n(&w->stop, 1, RLX);
}
