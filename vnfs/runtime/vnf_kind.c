// SPDX-License-Identifier: MIT
/*
 * The kind registry, the engine holder (reload) and the null kind's
 * adapter; see vnf_kind.h for the contract.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tochain/barrier.h>

#include "vnf_kind.h"
#include "vnf_null.h"

const struct vnf_kind *vnf_kind_find(const char *name)
{
	static const struct vnf_kind *const all[] = { &vnf_kind_null, &vnf_kind_fw,
						       &vnf_kind_ids, &vnf_kind_waf };

	for (size_t i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

static struct vnf_engine *engine_build(const struct vnf_kind *k, const struct vnf_kind_opts *o,
				       uint64_t gen, char *err, size_t errlen)
{
	struct vnf_engine *e = calloc(1, sizeof(*e));

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	err[0] = 0;
	e->impl = k->engine_load(o, err, errlen);
	if (!e->impl) {
		int saved = errno ? errno : EINVAL;

		if (!err[0])
			snprintf(err, errlen, "%s", strerror(saved));
		free(e);
		errno = saved;
		return NULL;
	}
	e->kind = k;
	e->refs = 1;
	e->gen = gen;
	return e;
}

int vnf_engines_init(struct vnf_engines *es, const struct vnf_kind *k,
		     const struct vnf_kind_opts *o, char *err, size_t errlen)
{
	memset(es, 0, sizeof(*es));
	es->kind = k;
	es->opts = *o;
	es->cur = engine_build(k, o, 1, err, errlen);
	if (!es->cur)
		return -errno;
	es->gen = 1;
	pthread_mutex_init(&es->lock, NULL);
	return 0;
}

int vnf_engines_reload(struct vnf_engines *es, char *err, size_t errlen)
{
	struct vnf_engine *n, *old;

	/* Built aside, outside the lock: threads keep judging meanwhile. */
	n = engine_build(es->kind, &es->opts, 0, err, errlen);
	if (!n)
		return -errno;
	pthread_mutex_lock(&es->lock);
	old = es->cur;
	n->gen = es->gen + 1;
	es->cur = n;
	/* R1: pairs with A1 in vnf_kthread_refresh (cur set before gen seen). */
	tc_store_release(&es->gen, n->gen);
	pthread_mutex_unlock(&es->lock);
	vnf_engine_put(old);
	return 0;
}

struct vnf_engine *vnf_engines_get(struct vnf_engines *es)
{
	struct vnf_engine *e;

	pthread_mutex_lock(&es->lock);
	e = es->cur;
	__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&es->lock);
	return e;
}

void vnf_engine_put(struct vnf_engine *e)
{
	/* acq_rel: every use of the engine by the putter happens before the free. */
	if (e && __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		e->kind->engine_free(e->impl);
		free(e);
	}
}

void vnf_engines_fini(struct vnf_engines *es)
{
	vnf_engine_put(es->cur);
	es->cur = NULL;
	pthread_mutex_destroy(&es->lock);
}

int vnf_kthread_init(struct vnf_kthread *kt, struct vnf_engines *es)
{
	kt->es = es;
	kt->ts = es->kind->thread_create(&es->opts);
	if (!kt->ts)
		return -errno;
	kt->eng = vnf_engines_get(es);
	kt->gen = kt->eng->gen;
	return 0;
}

void vnf_kthread_refresh(struct vnf_kthread *kt)
{
	struct vnf_engine *old;

	/* A1: pairs with R1 in vnf_engines_reload. */
	if (tc_load_acquire(&kt->es->gen) == kt->gen)
		return;
	old = kt->eng;
	kt->eng = vnf_engines_get(kt->es);
	kt->gen = kt->eng->gen;
	vnf_engine_put(old);
}

void vnf_kthread_fini(struct vnf_kthread *kt)
{
	if (kt->ts)
		kt->es->kind->thread_destroy(kt->ts);
	kt->ts = NULL;
	vnf_engine_put(kt->eng);
	kt->eng = NULL;
}

int vnf_kthread_post(struct vnf_kthread *kt, struct vnf_thread *t, const struct vnf_pkt *pk,
		     uint32_t v, uint32_t rule)
{
	const struct vnf_kind *k = kt->es->kind;
	const uint8_t *ans;
	uint32_t incident = 0, len;

	if (v == VNF_VERDICT_ALERT) {
		const char *msg = NULL;

		len = k->alert_msg ? k->alert_msg(kt->ts, &msg) : 0;
		return vnf_post_alert(t, pk, rule, msg, len);
	}
	if (v != VNF_VERDICT_DENY)
		return vnf_post(t, pk, v, 0);
	len = k->answer ? k->answer(kt->ts, &ans, &incident) : 0;
	if (len)
		return vnf_post_answer(t, pk, rule, incident, ans, len);
	return vnf_post(t, pk, v, rule);
}

static bool log_quiet;

void vnf_log_set_quiet(bool quiet)
{
	__atomic_store_n(&log_quiet, quiet, __ATOMIC_RELAXED);
}

void vnf_log_limited(unsigned int per_s, const char *fmt, ...)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static time_t second;
	static unsigned int used, dropped;
	struct timespec ts;
	va_list ap;
	bool print;

	if (__atomic_load_n(&log_quiet, __ATOMIC_RELAXED))
		return;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	pthread_mutex_lock(&lock);
	if (ts.tv_sec != second) {
		if (dropped)
			fprintf(stderr, "tochain-vnf: %u log lines suppressed\n", dropped);
		second = ts.tv_sec;
		used = dropped = 0;
	}
	print = used < per_s;
	if (print)
		used++;
	else
		dropped++;
	pthread_mutex_unlock(&lock);
	if (!print)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* ---- null: the existing test kind behind the interface ---- */
struct null_engine {
	struct vnf_null_opts o;
};

static void *null_load(const struct vnf_kind_opts *o, char *err, size_t errlen)
{
	struct null_engine *e = calloc(1, sizeof(*e));

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->o.deny_marker = o->deny_marker;
	return e;
}

static void null_free(void *e)
{
	free(e);
}

static void *null_thread(const struct vnf_kind_opts *o)
{
	static int dummy;

	(void)o;
	return &dummy;
}

static void null_thread_destroy(void *ts)
{
	(void)ts;
}

static uint32_t null_judge(void *ts, void *engine, const struct vnf_pkt *pk,
			   const struct vnf_flow *f, uint32_t *rule)
{
	const struct null_engine *e = engine;

	(void)ts;
	(void)f;
	return vnf_null_inspect(&e->o, pk->data, pk->len, rule);
}

const struct vnf_kind vnf_kind_null = {
	.name = "null",
	.engine_load = null_load,
	.engine_free = null_free,
	.thread_create = null_thread,
	.thread_destroy = null_thread_destroy,
	.judge = null_judge,
};
