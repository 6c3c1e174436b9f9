// SPDX-License-Identifier: MIT
/* tochain-sched's control socket and scheduler loop; see hs_daemon_ctl.h. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "hs_daemon_ctl.h"

/* Optional string member: NULL if absent; *bad set if present and not a string. */
static const char *opt_str(json_t *args, const char *key, bool *bad)
{
	json_t *v = json_object_get(args, key);

	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v)) {
		*bad = true;
		return NULL;
	}
	return json_string_value(v);
}

/* Optional non-negative integer member; *bad if present and not one. */
static uint64_t opt_uint(json_t *args, const char *key, bool *bad)
{
	json_t *v = json_object_get(args, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		*bad = true;
		return 0;
	}
	return (uint64_t)json_integer_value(v);
}

/* sched.register {"role": "vm", "domain": NAME, "vm": NAME}: the daemon
 * finds the domain's vCPU threads itself. */
static json_t *register_domain(struct hsd *d, json_t *args, const char *role)
{
	const char *dom, *vm;
	json_t *tids;
	char why[512];
	bool bad = false;
	int err;

	if (strcmp(role, "vm"))
		return ctl_reply_fail("\"domain\" registers the vCPUs of a VM: role must be \"vm\"");
	if (json_object_get(args, "tid"))
		return ctl_reply_fail("give \"tid\" or \"domain\", not both");
	dom = opt_str(args, "domain", &bad);
	vm = opt_str(args, "vm", &bad);
	if (bad || !dom)
		return ctl_reply_fail("\"domain\" and \"vm\" must be strings");
	pthread_mutex_lock(&d->lock);
	err = hsd_register_domain(d, dom, vm, why, sizeof(why));
	if (err) {
		pthread_mutex_unlock(&d->lock);
		return ctl_reply_fail("%s", why[0] ? why : strerror(-err));
	}
	tids = json_array();
	for (uint32_t i = 0; i < d->ndom; i++) {
		const struct hsd_domain *dm = &d->dom[i];

		if (dm->gone || strcmp(dm->name, dom))
			continue;
		for (uint32_t k = 0; k < dm->st.nvcpu; k++)
			json_array_append_new(tids, json_integer(dm->st.vcpu[k].tid));
	}
	pthread_mutex_unlock(&d->lock);
	return ctl_reply_ok(json_pack("{s:s, s:s, s:s, s:o}", "domain", dom, "role", "vm",
				      "vm", vm ? vm : dom, "tids", tids));
}

static json_t *cmd_register(struct hsd *d, json_t *args)
{
	struct hsd_reg r = { 0 };
	const char *role;
	char why[512];
	bool bad = false;
	uint64_t tid, index;
	int err;

	if (!args)
		return ctl_reply_fail("sched.register needs args");
	role = opt_str(args, "role", &bad);
	if (bad || !role || (strcmp(role, "vnf") && strcmp(role, "vm")))
		return ctl_reply_fail("\"role\" must be \"vnf\" or \"vm\"");
	r.role = !strcmp(role, "vnf") ? HSD_ROLE_VNF : HSD_ROLE_VM;
	if (json_object_get(args, "domain"))
		return register_domain(d, args, role);
	tid = opt_uint(args, "tid", &bad);
	if (bad || !tid || tid > INT32_MAX)
		return ctl_reply_fail("\"tid\" must be a positive thread id");
	r.tid = (pid_t)tid;
	r.vm = opt_str(args, "vm", &bad);
	if (bad)
		return ctl_reply_fail("\"vm\" must be a string");
	r.chain = opt_str(args, "chain", &bad);
	r.vnf = opt_str(args, "vnf", &bad);
	r.region = opt_str(args, "region", &bad);
	if (bad)
		return ctl_reply_fail("\"chain\", \"vnf\" and \"region\" must be strings");
	r.sla_pps = opt_uint(args, "sla", &bad);
	r.f_pps = opt_uint(args, "f", &bad);
	index = opt_uint(args, "index", &bad);
	r.threads = (uint32_t)opt_uint(args, "threads", &bad);
	if (bad || index > UINT32_MAX)
		return ctl_reply_fail("\"sla\", \"f\", \"threads\" and \"index\" must be non-negative integers");
	r.index = (uint32_t)index;
	if (json_object_get(args, "index2")) {
		index = opt_uint(args, "index2", &bad);
		if (bad || index > UINT32_MAX)
			return ctl_reply_fail("\"index2\" must be a non-negative integer");
		r.has_index2 = true;
		r.index2 = (uint32_t)index;
	}
	pthread_mutex_lock(&d->lock);
	err = hsd_register(d, &r, why, sizeof(why));
	pthread_mutex_unlock(&d->lock);
	if (err)
		return ctl_reply_fail("%s", why[0] ? why : strerror(-err));
	return ctl_reply_ok(json_pack("{s:i, s:s}", "tid", (int)r.tid, "role", role));
}

/* sched.unregister {"chain": NAME}: the chain's threads run unmanaged again. */
static json_t *cmd_unregister(struct hsd *d, json_t *args)
{
	const char *chain;
	char why[256];
	bool bad = false;
	int err;

	chain = args ? opt_str(args, "chain", &bad) : NULL;
	if (bad || !chain)
		return ctl_reply_fail("\"chain\" must name a registered chain");
	pthread_mutex_lock(&d->lock);
	err = hsd_unregister_chain(d, chain, why, sizeof(why));
	pthread_mutex_unlock(&d->lock);
	if (err)
		return ctl_reply_fail("%s", why[0] ? why : strerror(-err));
	return ctl_reply_ok(json_pack("{s:s}", "unregistered", chain));
}

/*
 * Registry chain @c's VNFs as the scheduler sizes them now: calibrated
 * f, measured f^ (f_est; = f until a period was measured), periods
 * measured, and this period's quota per thread (ticks) and threads.
 */
static json_t *vnf_rates(const struct hsd *d, uint32_t c)
{
	const struct hsd_cfgset *cs = d->cs;
	json_t *a = json_array();

	for (uint32_t i = 0; d->sched && i < cs->nchain; i++) {
		const struct hs_chain_quota *q = hs_sched_quota(d->sched, i);

		if (cs->chain_of[i] != c || !q)
			continue;
		for (uint32_t k = 0; k < cs->chain[i].nvnf; k++) {
			const struct hs_rate *r = hs_sched_rate(d->sched, i, k);

			json_array_append_new(a, json_pack("{s:s, s:I, s:f, s:I, s:i, s:i}",
				"vnf", cs->chain[i].vnf[k].name,
				"f", (json_int_t)cs->chain[i].vnf[k].f_pps,
				"f_est", r ? hs_rate_f(r) : 0.0,
				"samples", (json_int_t)(r ? r->samples : 0),
				"quota", (int)q->q[k].ticks, "threads", (int)q->q[k].threads));
		}
	}
	return a;
}

static json_t *cmd_show(struct hsd *d)
{
	json_t *res, *threads, *chains, *plan, *domains;

	pthread_mutex_lock(&d->lock);
	hsd_render(d);
	plan = json_loads(d->plan_json, 0, NULL);
	threads = json_array();
	for (uint32_t i = 0; i < d->nthread; i++) {
		const struct hsd_thread *t = &d->thread[i];

		if (t->dead)
			continue;
		json_t *o = json_pack("{s:i, s:i, s:s, s:s?, s:s?, s:i, s:b}",
			"vcpu", (int)i, "tid", (int)t->tid,
			"role", t->role == HSD_ROLE_VNF ? "vnf" : "vm",
			"chain", t->role == HSD_ROLE_VNF ? d->chain[t->chain].name : NULL,
			"vm", t->vm == UINT32_MAX ? NULL : d->vm[t->vm].name,
			"pcpu", d->pcpu_of[i] == UINT32_MAX ? -1 : d->cfg.pcpu[d->pcpu_of[i]],
			"frozen", t->enforced && t->enf.frozen);

		if (t->lv) {
			const struct hsd_domain *dm = &d->dom[t->dom];

			json_object_set_new(o, "domain", json_string(dm->name));
			json_object_set_new(o, "vcpu_index", json_integer(t->vcpu_index));
			/* what its vCPU group holds as far as we wrote it */
			for (uint32_t k = 0; k < dm->st.nvcpu; k++)
				if (dm->slot[k] == i && dm->st.eff_known[k])
					json_object_set_new(o, "quota_us",
							    json_integer(dm->st.eff_quota[k]));
		}
		json_array_append_new(threads, o);
	}
	domains = json_array();
	for (uint32_t i = 0; i < d->ndom; i++) {
		const struct hsd_domain *dm = &d->dom[i];
		json_t *tids;

		if (dm->gone)
			continue;
		tids = json_array();
		for (uint32_t k = 0; dm->running && k < dm->st.nvcpu; k++)
			json_array_append_new(tids, json_integer(dm->st.vcpu[k].tid));
		json_array_append_new(domains, json_pack("{s:s, s:s, s:s, s:i, s:o, s:I, s:I, s:s?}",
			"domain", dm->name, "vm", d->vm[dm->vm].name,
			"state", dm->running ? "running" : "waiting",
			"id", dm->running ? dm->st.id : -1, "tids", tids,
			"restarts", (json_int_t)dm->restarts, "errors", (json_int_t)dm->errors,
			"last_error", dm->last_error[0] ? dm->last_error : NULL));
	}
	chains = json_array();
	for (uint32_t c = 0; c < d->nchain; c++) {
		const struct hsd_chain *ch = &d->chain[c];

		json_array_append_new(chains, json_pack("{s:s, s:I, s:s?, s:I, s:I, s:I, s:I, s:I, s:o}",
			"chain", ch->name, "sla", (json_int_t)ch->sla_pps,
			"vm", ch->vm == UINT32_MAX ? NULL : d->vm[ch->vm].name,
			"taken", (json_int_t)ch->prev.taken,
			"served_last", (json_int_t)ch->served_last,
			"early_ends", (json_int_t)ch->early_ends,
			"rewakes", (json_int_t)ch->rewakes,
			"bad_counters", (json_int_t)ch->bad, "vnfs", vnf_rates(d, c)));
	}
	res = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s, s:i, s:i, s:I, s:I, s:f, s:I, s:I, s:o, s:o, s:o, s:o, s:s}",
		"mode", hsd_mode_name(d->mode_applied),
		"mode_next", hsd_mode_name(d->mode_next),
		"gating", d->cfg.gating == HSD_GATE_FREEZER ? "freezer" : "quota",
		"backend", d->enf ? hse_kind_name(d->enf->kind) : "none",
		"libvirt", d->lv ? hsl_uri(d->lv) : NULL,
		"sync_cpus", d->cfg.sync_cpus,
		"tick_us", (int)d->cfg.tick_us, "period", (int)d->cfg.g,
		"periods", (json_int_t)d->period,
		"cpu_us_last", (json_int_t)d->cpu_us_last,
		"cpu_us_mean", d->cpu_periods ? (double)d->cpu_us_total / (double)d->cpu_periods : 0.0,
		"early_ends", (json_int_t)d->early_total,
		"rewakes", (json_int_t)d->rewake_total,
		"threads", threads, "chains", chains, "domains", domains,
		"plan", plan ? plan : json_null(),
		"text", d->plan_text);
	pthread_mutex_unlock(&d->lock);
	return ctl_reply_ok(res);
}

static json_t *cmd_mode(struct hsd *d, json_t *args)
{
	enum hsd_mode m;
	bool bad = false;
	const char *s = args ? opt_str(args, "mode", &bad) : NULL;

	if (bad || !s || hsd_mode_parse(s, &m))
		return ctl_reply_fail("\"mode\" must be \"sync\" or \"cfs\"");
	pthread_mutex_lock(&d->lock);
	d->mode_next = m;
	pthread_mutex_unlock(&d->lock);
	return ctl_reply_ok(json_pack("{s:s}", "mode", hsd_mode_name(m)));
}

/* sched.period {"period": G, "tick_us": U}: either may be left out. */
static json_t *cmd_period(struct hsd *d, json_t *args)
{
	bool bad = false;
	uint64_t g = args ? opt_uint(args, "period", &bad) : 0;
	uint64_t tick = args ? opt_uint(args, "tick_us", &bad) : 0;
	char why[256];
	json_t *res;
	int err;

	if (bad || (!g && !tick) || g > UINT32_MAX || tick > UINT32_MAX)
		return ctl_reply_fail("sched.period needs \"period\" (ticks) and/or \"tick_us\", "
				      "positive integers");
	pthread_mutex_lock(&d->lock);
	err = hsd_set_period(d, tick ? (uint32_t)tick : d->cfg.tick_us,
			     g ? (uint32_t)g : d->cfg.g, why, sizeof(why));
	res = err ? NULL : json_pack("{s:i, s:i}", "tick_us", (int)d->cfg.tick_us,
				     "period", (int)d->cfg.g);
	pthread_mutex_unlock(&d->lock);
	if (err)
		return ctl_reply_fail("%s", why);
	return ctl_reply_ok(res);
}

json_t *hsd_ctl_handle(struct hsd *d, json_t *req)
{
	json_t *v = json_object_get(req, "v"), *args = json_object_get(req, "args");
	const char *cmd;

	if (!json_is_object(req))
		return ctl_reply_fail("request must be a JSON object");
	if (!json_is_integer(v) || json_integer_value(v) != CTL_VERSION)
		return ctl_reply_fail("unsupported protocol version; tochain-sched speaks v%d", CTL_VERSION);
	if (!json_is_string(json_object_get(req, "cmd")))
		return ctl_reply_fail("request has no \"cmd\"");
	if (args && !json_is_object(args))
		return ctl_reply_fail("\"args\" must be an object");
	cmd = json_string_value(json_object_get(req, "cmd"));
	if (!strcmp(cmd, "version"))
		return ctl_reply_ok(json_pack("{s:i, s:s}", "protocol", CTL_VERSION, "daemon", "tochain-sched"));
	if (!strcmp(cmd, "sched.show"))
		return cmd_show(d);
	if (!strcmp(cmd, "sched.mode"))
		return cmd_mode(d, args);
	if (!strcmp(cmd, "sched.period"))
		return cmd_period(d, args);
	if (!strcmp(cmd, "sched.register"))
		return cmd_register(d, args);
	if (!strcmp(cmd, "sched.unregister"))
		return cmd_unregister(d, args);
	return ctl_reply_fail("unknown command '%.64s'", cmd);
}

static void *serve(void *arg)
{
	struct hsd_ctl *c = arg;

	while (!__atomic_load_n(c->stop, __ATOMIC_RELAXED)) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		const char *why = NULL;
		json_t *req, *reply;
		int fd;

		if (poll(&p, 1, 100) <= 0)
			continue;
		fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		req = ctl_recv(fd, 2000, &why);
		reply = req ? hsd_ctl_handle(c->d, req) : ctl_reply_fail("bad request: %s", why);
		if (reply)
			ctl_send(fd, reply);
		json_decref(reply);
		json_decref(req);
		close(fd);
	}
	return NULL;
}

int hsd_ctl_start(struct hsd_ctl *c, struct hsd *d, const char *path, const int *stop)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int err;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->d = d;
	c->stop = stop;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	unlink(path);
	{
		/* The default lives in /run/tochain, which may not exist yet. */
		char dir[sizeof(sa.sun_path)];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			mkdir(dir, 0755);
		}
	}
	if (bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0600) ||
	    listen(c->fd, 16)) {
		err = -errno;
		goto out_close;
	}
	err = -pthread_create(&c->th, NULL, serve, c);
	if (err)
		goto out_unlink;
	return 0;

out_unlink:
	unlink(path);
out_close:
	close(c->fd);
	c->fd = -1;
	return err;
}

void hsd_ctl_stop(struct hsd_ctl *c)
{
	if (c->fd < 0)
		return;
	pthread_join(c->th, NULL);
	close(c->fd);
	unlink(c->path);
	c->fd = -1;
}

static void add_ns(struct timespec *t, uint64_t ns)
{
	ns += (uint64_t)t->tv_nsec;
	t->tv_sec += (time_t)(ns / 1000000000u);
	t->tv_nsec = (long)(ns % 1000000000u);
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

int hsd_run(struct hsd *d, const int *stop, double duration_s,
	    uint32_t print_every, FILE *out)
{
	struct timespec start, next;
	uint64_t tick_ns;
	uint32_t g;
	uint64_t limit = duration_s > 0 ? (uint64_t)(duration_s * 1e9) : 0, done = 0;
	bool ticking;

	clock_gettime(CLOCK_MONOTONIC, &start);
	next = start;
	while (!__atomic_load_n(stop, __ATOMIC_RELAXED) && (!limit || done < limit)) {
		pthread_mutex_lock(&d->lock);
		/* sched.period may change both between periods */
		tick_ns = (uint64_t)d->cfg.tick_us * 1000;
		g = d->cfg.g;
		hsd_reap(d);
		hsd_period_begin(d);
		hsd_tick(d, 0);
		if (print_every && d->period % print_every == 0) {
			hsd_render(d);
			fputs(d->plan_text, out);
			fflush(out);
		}
		/* Only freezer gating needs the ticks; otherwise sleep
		 * through the period (early-end flags are then cleared at the
		 * next boundary's tick 0). */
		ticking = d->timeline_valid && d->mode_applied == HSD_SYNC &&
			  d->cfg.gating == HSD_GATE_FREEZER;
		pthread_mutex_unlock(&d->lock);
		for (uint32_t k = 1; k < g; k++) {
			add_ns(&next, tick_ns);
			if (!ticking)
				continue;
			sleep_until(&next);
			if (__atomic_load_n(stop, __ATOMIC_RELAXED))
				break;
			pthread_mutex_lock(&d->lock);
			hsd_tick(d, k);
			pthread_mutex_unlock(&d->lock);
		}
		add_ns(&next, tick_ns);
		sleep_until(&next);
		done += tick_ns * g;
	}
	return 0;
}
