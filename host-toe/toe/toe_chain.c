// SPDX-License-Identifier: MIT
/*
 * The TOE's service-chain stage; the contract and the threading rules are
 * in toe_chain.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/counters.h>
#include <tochain/region.h>
#include <tochain/util.h>

#include "toe_chain.h"
#include "tochain/vnf_proto.h"

#define PPS_SAMPLES	8	/* ~250 ms apart: the last ~2 s */

struct toe_vnf {
	bool used;
	struct toe_vnf_args a;
	uint32_t id;			/* scheduler's VNF id */
	pid_t pid;			/* 0 until the first attach */
	char region[256];
};

struct toe_dir {
	uint32_t configured;		/* store-release by control, load-acquire by the loop */
	struct toe_chain_spec spec;	/* under lock */
	uint32_t ids[CH_MAX_HOPS][CH_MAX_PAR];
	uint64_t version;
	uint32_t outstanding;		/* loop thread: submitted - taken */
	uint64_t arrivals;		/* loop thread: what it submitted */
	uint64_t alerted;		/* under lock: results with an Alert taken */
};

struct toe_chain {
	struct ch_psched *s;
	char *base;			/* region path R */
	char name[TCR_NAME_MAX];	/* the TOE's name: R's header name */
	char *counters_path, *flows_path, *out_path;
	struct tcr_region *out;
	uint32_t *out_free, out_nfree, out_nbufs;
	struct ch_flows *flows;
	struct toe_dir dir[2];
	pthread_mutex_t lock;		/* control calls and the denial log */
	struct toe_vnf vnf[CH_MAX_VNFS];
	struct toe_denial den[TOE_DENIALS];
	uint32_t nden, den_head;	/* ring: oldest at den_head */
	struct {
		double t;
		uint64_t fin[2];
	} samp[PPS_SAMPLES];
	uint32_t nsamp, samp_head;
};

static char *path_join(const char *base, const char *suffix)
{
	size_t n = strlen(base) + strlen(suffix) + 1;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s%s", base, suffix);
	return p;
}

void toe_chain_region_name(char out[TCR_NAME_MAX], const char *toe, const char *tag,
			   const char *x)
{
	char full[2 * TCR_NAME_MAX + 64];
	uint64_t h;
	size_t keep;

	snprintf(full, sizeof(full), "%s%s%s", toe, tag, x);
	if (strlen(full) < TCR_NAME_MAX) {
		memcpy(out, full, strlen(full) + 1);
		return;
	}
	h = tu_fnv1a64(full, strlen(full));
	/* prefix + tag + "." + 12 hex digits + NUL */
	keep = TCR_NAME_MAX - 1 - strlen(tag) - 1 - 12;
	if (keep > strlen(toe))
		keep = strlen(toe);
	snprintf(out, TCR_NAME_MAX, "%.*s%s.%012llx", (int)keep, toe, tag,
		 (unsigned long long)(h >> 16));
}

/*
 * Wall-clock seconds (CLOCK_REALTIME, not tu_now_s's monotonic clock): a
 * denial's time is reported as a date in `stats`.
 */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int names_err(int err)
{
	return err == -ENAMETOOLONG ? 0 : -err;
}

struct toe_chain *toe_chain_create(const char *region_path, const char *name, uint32_t nbufs,
				   uint32_t slot_size, uint32_t out_nbufs, uint32_t nflows,
				   int epfd, uint64_t tag)
{
	char out_name[TCR_NAME_MAX];
	struct tcr_params op = { .name = out_name, .kind = TCR_KIND_HOST, .nbufs = out_nbufs,
				 .slot_size = slot_size, .nchannels = 1 };
	/*
	 * A VNF the CPU scheduler gates (host-sched, freezer or quota) may sit
	 * frozen with work for up to two periods (2 x 500 ms with the paper's
	 * 10 ms x 50 ticks) without being hung: give it well more than that
	 * before its policy applies.  A dead VNF is found by its pid at once.
	 */
	struct ch_psched_cfg cfg = { .nchains = 2, .hang_ns = TOE_VNF_HANG_NS };
	struct toe_chain *tc;
	int err = ENOMEM;

	if (!tcr_name_valid(name)) {
		err = EINVAL;
		goto out_errno;
	}
	tc = calloc(1, sizeof(*tc));
	if (!tc)
		goto out_errno;
	snprintf(tc->name, sizeof(tc->name), "%s", name);
	toe_chain_region_name(out_name, name, ".out", "");
	pthread_mutex_init(&tc->lock, NULL);
	tc->base = strdup(region_path);
	tc->counters_path = path_join(region_path, ".counters");
	tc->flows_path = path_join(region_path, ".flows");
	tc->out_path = path_join(region_path, ".out");
	tc->out_free = calloc(out_nbufs, sizeof(uint32_t));
	if (!tc->base || !tc->counters_path || !tc->flows_path || !tc->out_path || !tc->out_free)
		goto out_free;
	tc->out_nbufs = out_nbufs;
	for (uint32_t i = 0; i < out_nbufs; i++)
		tc->out_free[tc->out_nfree++] = out_nbufs - 1 - i;

	tc->out = tcr_region_create(tc->out_path, &op);
	if (!tc->out) {
		err = errno;
		goto out_free;
	}
	tc->flows = ch_flows_create(tc->flows_path, nflows);
	if (!tc->flows) {
		err = errno;
		goto out_out;
	}
	cfg.counters_path = tc->counters_path;
	tc->s = ch_psched_create(&cfg);
	if (!tc->s) {
		err = errno;
		goto out_flows;
	}
	err = -ch_psched_region_add(tc->s, TOE_REGION_GUEST, region_path, nbufs, slot_size);
	if (!err)
		err = -ch_psched_region_add(tc->s, TOE_REGION_OUT, tc->out_path, out_nbufs, slot_size);
	/* A path too long for a grant to carry the name too: host VNFs only. */
	if (!err)
		err = names_err(ch_psched_region_name(tc->s, TOE_REGION_GUEST, name));
	if (!err)
		err = names_err(ch_psched_region_name(tc->s, TOE_REGION_OUT, out_name));
	if (!err)
		err = -ch_psched_region_flows(tc->s, TOE_REGION_GUEST, tc->flows_path);
	if (!err)
		err = -ch_psched_region_flows(tc->s, TOE_REGION_OUT, tc->flows_path);
	if (!err)
		err = -ch_psched_loop_attach(tc->s, epfd, tag);
	if (err)
		goto out_sched;
	return tc;

out_sched:
	ch_psched_destroy(tc->s);
	unlink(tc->counters_path);
out_flows:
	ch_flows_destroy(tc->flows);
	unlink(tc->flows_path);
out_out:
	tcr_region_destroy(tc->out);
	unlink(tc->out_path);
out_free:
	free(tc->out_free);
	free(tc->out_path);
	free(tc->flows_path);
	free(tc->counters_path);
	free(tc->base);
	pthread_mutex_destroy(&tc->lock);
	free(tc);
out_errno:
	errno = err;
	return NULL;
}

void toe_chain_destroy(struct toe_chain *tc)
{
	if (!tc)
		return;
	ch_psched_destroy(tc->s);	/* its bells leave the loop's epoll set */
	for (uint32_t v = 0; v < CH_MAX_VNFS; v++)
		if (tc->vnf[v].used)
			unlink(tc->vnf[v].region);
	unlink(tc->counters_path);
	ch_flows_destroy(tc->flows);
	unlink(tc->flows_path);
	tcr_region_kill(tc->out);
	tcr_region_destroy(tc->out);
	unlink(tc->out_path);
	free(tc->out_free);
	free(tc->out_path);
	free(tc->flows_path);
	free(tc->counters_path);
	free(tc->base);
	pthread_mutex_destroy(&tc->lock);
	free(tc);
}

/* ---- data path -------------------------------------------------------- */

bool toe_chain_active(struct toe_chain *tc, uint32_t dir)
{
	/* A1: pairs with R1 in toe_chain_set/_del (the table is published). */
	return tc->dir[dir].outstanding || tc_load_acquire(&tc->dir[dir].configured);
}

bool toe_chain_submit(struct toe_chain *tc, uint32_t dir, const struct ch_pkt *p)
{
	if (ch_psched_push(tc->s, dir, p, 1) != 1)
		return false;
	tc->dir[dir].outstanding++;
	tc->dir[dir].arrivals++;
	return true;
}

unsigned int toe_chain_take(struct toe_chain *tc, uint32_t dir, struct ch_result *r,
			    unsigned int n)
{
	unsigned int k;

	if (!tc->dir[dir].outstanding)
		return 0;
	k = ch_psched_take(tc->s, dir, r, n);
	tc->dir[dir].outstanding -= k;
	return k;
}

uint32_t toe_chain_outstanding(const struct toe_chain *tc, uint32_t dir)
{
	return tc->dir[dir].outstanding;
}

unsigned int toe_chain_poll(struct toe_chain *tc)
{
	return ch_psched_poll(tc->s);
}

void toe_chain_bell_rang(struct toe_chain *tc, uint32_t id)
{
	ch_psched_bell_rang(tc->s, id);
}

bool toe_chain_sleep_prepare(struct toe_chain *tc, uint64_t *ns)
{
	return !toe_chain_results_waiting(tc) && ch_psched_sleep_prepare(tc->s, ns);
}

void toe_chain_sleep_done(struct toe_chain *tc)
{
	ch_psched_sleep_done(tc->s);
}

bool toe_chain_results_waiting(struct toe_chain *tc)
{
	return (tc->dir[0].outstanding && ch_psched_out_len(tc->s, 0)) ||
	       (tc->dir[1].outstanding && ch_psched_out_len(tc->s, 1));
}

int toe_chain_out_alloc(struct toe_chain *tc)
{
	if (!tc->out_nfree)
		return -ENOBUFS;
	return (int)tc->out_free[--tc->out_nfree];
}

uint8_t *toe_chain_out_slot(struct toe_chain *tc, uint32_t slot)
{
	return tcr_region_slot(tc->out, slot);
}

void toe_chain_out_free(struct toe_chain *tc, uint32_t slot)
{
	if (slot < tc->out_nbufs && tc->out_nfree < tc->out_nbufs)
		tc->out_free[tc->out_nfree++] = slot;
}

uint32_t toe_chain_out_nbufs(const struct toe_chain *tc)
{
	return tc->out_nbufs;
}

struct ch_flows *toe_chain_flows(struct toe_chain *tc)
{
	return tc->flows;
}

void toe_chain_flow_close(struct toe_chain *tc, uint32_t idx)
{
	/* The loop's own arrival counts equal the counters' (it alone submits). */
	ch_flow_close(tc->flows, idx, tc->dir[0].arrivals, tc->dir[1].arrivals);
}

/* Arrivals of @dir all taken back, each older one too. */
static uint64_t settled(struct toe_chain *tc, uint32_t dir)
{
	uint64_t taken = tc->dir[dir].arrivals - tc->dir[dir].outstanding;
	uint64_t left = ch_psched_settled(tc->s, dir);

	/* Results leave per connection: what was taken may have passed older ones. */
	return left < taken ? left : taken;
}

void toe_chain_flow_reclaim(struct toe_chain *tc)
{
	ch_flow_reclaim(tc->flows, settled(tc, 0), settled(tc, 1));
}

const char *toe_chain_reason_name(uint32_t reason)
{
	switch (reason) {
	case CH_REASON_RULE: return "rule";
	case CH_REASON_VNF_FAILED: return "vnf-failed";
	case CH_REASON_BAD_VERDICT: return "bad-verdict";
	case CH_REASON_NO_CHAIN: return "no-chain";
	case CH_REASON_BAD_DESC: return "bad-descriptor";
	default: return "none";
	}
}

/* The names of direction @dir's chain and of VNF @vnf_id ("-" when none); under lock. */
static void names_of(struct toe_chain *tc, uint32_t dir, uint32_t vnf_id,
		     char chain_name[TOE_NAME_MAX + 1], char vnf_name[TOE_NAME_MAX + 1])
{
	snprintf(chain_name, TOE_NAME_MAX + 1, "%s",
		 tc->dir[dir].spec.name[0] ? tc->dir[dir].spec.name : "-");
	snprintf(vnf_name, TOE_NAME_MAX + 1, "-");
	for (uint32_t v = 0; v < CH_MAX_VNFS; v++)
		if (tc->vnf[v].used && tc->vnf[v].id == vnf_id)
			snprintf(vnf_name, TOE_NAME_MAX + 1, "%s", tc->vnf[v].a.name);
}

void toe_chain_alert_note(struct toe_chain *tc, const struct ch_result *r,
			  char chain_name[TOE_NAME_MAX + 1], char vnf_name[TOE_NAME_MAX + 1])
{
	uint32_t dir = r->chain < 2 ? r->chain : 0;

	pthread_mutex_lock(&tc->lock);
	names_of(tc, dir, r->alert_vnf, chain_name, vnf_name);
	tc->dir[dir].alerted++;
	pthread_mutex_unlock(&tc->lock);
}

void toe_chain_deny_note(struct toe_chain *tc, const struct ch_result *r, const char *conn,
			 char chain_name[TOE_NAME_MAX + 1], char vnf_name[TOE_NAME_MAX + 1])
{
	struct toe_denial *d;
	uint32_t dir = r->chain < 2 ? r->chain : 0;

	pthread_mutex_lock(&tc->lock);
	names_of(tc, dir, r->deny_vnf, chain_name, vnf_name);
	if (tc->nden < TOE_DENIALS) {
		d = &tc->den[(tc->den_head + tc->nden++) % TOE_DENIALS];
	} else {
		d = &tc->den[tc->den_head];
		tc->den_head = (tc->den_head + 1) % TOE_DENIALS;
	}
	memset(d, 0, sizeof(*d));
	d->time = now_s();
	d->dir = dir;
	memcpy(d->chain, chain_name, TOE_NAME_MAX + 1);
	memcpy(d->vnf, vnf_name, TOE_NAME_MAX + 1);
	d->rule = r->deny_rule;
	d->reason = r->reason;
	d->incident = r->answer ? r->incident : 0;
	snprintf(d->conn, sizeof(d->conn), "%s", conn);
	pthread_mutex_unlock(&tc->lock);
}

/* ---- control ---------------------------------------------------------- */

bool toe_chain_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > TOE_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_' || name[i] == '-'))
			return false;
	return true;
}

static struct toe_vnf *vnf_by_name(struct toe_chain *tc, const char *name)
{
	for (uint32_t v = 0; v < CH_MAX_VNFS; v++)
		if (tc->vnf[v].used && strcmp(tc->vnf[v].a.name, name) == 0)
			return &tc->vnf[v];
	return NULL;
}

int toe_chain_vnf_add(struct toe_chain *tc, const struct toe_vnf_args *a, bool *created,
		      uint32_t *id, char *region, size_t region_size)
{
	char rname[TCR_NAME_MAX];
	struct ch_vnf_cfg cfg = { .name = a->name, .region_name = rname, .nthreads = a->threads,
				  .policy = a->policy, .dispatch = a->dispatch };
	struct toe_vnf *vn, *slot = NULL;
	int ret = 0;

	if (!toe_chain_name_valid(a->name) || a->threads == 0 || a->threads > VNF_MAX_THREADS ||
	    a->policy > CH_FAIL_OPEN || a->dispatch > CH_DISPATCH_FLOW)
		return -EINVAL;
	pthread_mutex_lock(&tc->lock);
	vn = vnf_by_name(tc, a->name);
	if (vn) {
		if (vn->a.threads != a->threads || vn->a.policy != a->policy ||
		    vn->a.dispatch != a->dispatch) {
			ret = -EEXIST;
		} else {
			*created = false;
			*id = vn->id;
			snprintf(region, region_size, "%s", vn->region);
		}
		goto out;
	}
	for (uint32_t v = 0; v < CH_MAX_VNFS && !slot; v++)
		if (!tc->vnf[v].used)
			slot = &tc->vnf[v];
	if (!slot) {
		ret = -ENOSPC;
		goto out;
	}
	memset(slot, 0, sizeof(*slot));
	snprintf(slot->region, sizeof(slot->region), "%s.vnf-%s", tc->base, a->name);
	/* A fresh inode: a forgotten VNF of the same name keeps its old mapping. */
	unlink(slot->region);
	cfg.region_path = slot->region;
	toe_chain_region_name(rname, tc->name, ".vnf-", a->name);
	ret = ch_psched_vnf_add(tc->s, &cfg);
	if (ret < 0)
		goto out;
	slot->id = (uint32_t)ret;
	slot->a = *a;
	slot->used = true;
	ret = 0;
	*created = true;
	*id = slot->id;
	snprintf(region, region_size, "%s", slot->region);
out:
	pthread_mutex_unlock(&tc->lock);
	return ret;
}

int toe_chain_vnf_attach(struct toe_chain *tc, const char *name, pid_t pid, uint32_t *epoch)
{
	struct ch_vnf_info info;
	struct toe_vnf *vn;
	int ret;

	if (pid <= 0)
		return -EINVAL;
	pthread_mutex_lock(&tc->lock);
	vn = vnf_by_name(tc, name);
	if (!vn) {
		ret = -ENOENT;
	} else if (!vn->pid) {
		ret = ch_psched_vnf_set_pid(tc->s, vn->id, pid);
	} else {
		ret = ch_psched_vnf_restart(tc->s, vn->id, pid);
	}
	if (!ret) {
		bool restart = vn->pid != 0;

		vn->pid = pid;
		ch_psched_vnf_info(tc->s, vn->id, &info);
		/* A restart is done by the scheduler's next poll, in the TOE's loop. */
		*epoch = info.epoch + (restart ? 1 : 0);
	}
	pthread_mutex_unlock(&tc->lock);
	return ret;
}

int toe_chain_vnf_run(struct toe_chain *tc, const char *name, uint32_t threads)
{
	struct toe_vnf *vn;
	int ret;

	pthread_mutex_lock(&tc->lock);
	vn = vnf_by_name(tc, name);
	ret = vn ? ch_psched_vnf_run_threads(tc->s, vn->id, threads) : -ENOENT;
	pthread_mutex_unlock(&tc->lock);
	return ret;
}

static bool chain_uses(const struct toe_dir *d, uint32_t id)
{
	if (!tc_load_relaxed(&d->configured))
		return false;
	for (uint32_t h = 0; h < d->spec.nhops; h++)
		for (uint32_t i = 0; i < d->spec.nvnfs[h]; i++)
			if (d->ids[h][i] == id)
				return true;
	return false;
}

int toe_chain_vnf_del(struct toe_chain *tc, const char *name)
{
	struct toe_vnf *vn;
	int ret = 0;

	pthread_mutex_lock(&tc->lock);
	vn = vnf_by_name(tc, name);
	if (!vn) {
		ret = -ENOENT;
	} else if (chain_uses(&tc->dir[0], vn->id) || chain_uses(&tc->dir[1], vn->id)) {
		ret = -EBUSY;
	} else {
		/* The scheduler keeps the id (never reused); no chain reaches it. */
		ch_psched_vnf_set_pid(tc->s, vn->id, 0);
		unlink(vn->region);
		vn->used = false;
	}
	pthread_mutex_unlock(&tc->lock);
	return ret;
}

unsigned int toe_chain_vnf_list(struct toe_chain *tc, struct toe_vnf_view *out,
				unsigned int max)
{
	unsigned int n = 0;

	pthread_mutex_lock(&tc->lock);
	for (uint32_t v = 0; v < CH_MAX_VNFS && n < max; v++) {
		if (!tc->vnf[v].used)
			continue;
		out[n].a = tc->vnf[v].a;
		out[n].id = tc->vnf[v].id;
		out[n].pid = tc->vnf[v].pid;
		out[n].running = ch_psched_vnf_running(tc->s, tc->vnf[v].id);
		ch_psched_vnf_info(tc->s, tc->vnf[v].id, &out[n].info);
		n++;
	}
	pthread_mutex_unlock(&tc->lock);
	return n;
}

int toe_chain_set(struct toe_chain *tc, uint32_t dir, const struct toe_chain_spec *spec,
		  uint64_t *version, const char **bad)
{
	struct ch_chain_cfg cfg = { .region = dir == TOE_DIR_IN ? TOE_REGION_GUEST : TOE_REGION_OUT,
				    .dir = dir, .nhops = spec->nhops };
	struct toe_dir *d = &tc->dir[dir];
	int ret;

	*bad = NULL;
	if (dir > 1 || !toe_chain_name_valid(spec->name) || spec->nhops > CH_MAX_HOPS)
		return -EINVAL;
	pthread_mutex_lock(&tc->lock);
	for (uint32_t h = 0; h < spec->nhops; h++) {
		if (spec->nvnfs[h] == 0 || spec->nvnfs[h] > CH_MAX_PAR) {
			ret = -EINVAL;
			goto out;
		}
		cfg.hop[h].nvnfs = spec->nvnfs[h];
		for (uint32_t i = 0; i < spec->nvnfs[h]; i++) {
			struct toe_vnf *vn = vnf_by_name(tc, spec->vnf[h][i]);

			if (!vn) {
				*bad = spec->vnf[h][i];
				ret = -ENOENT;
				goto out;
			}
			/* no VNF twice in a chain */
			for (uint32_t h2 = 0; h2 <= h; h2++)
				for (uint32_t j = 0; j < (h2 == h ? i : cfg.hop[h2].nvnfs); j++)
					if (cfg.hop[h2].vnf[j] == vn->id) {
						*bad = spec->vnf[h][i];
						ret = -EINVAL;
						goto out;
					}
			cfg.hop[h].vnf[i] = vn->id;
		}
	}
	ret = ch_psched_chain_set(tc->s, dir, &cfg, version);
	if (ret)
		goto out;
	d->spec = *spec;
	for (uint32_t h = 0; h < spec->nhops; h++)
		memcpy(d->ids[h], cfg.hop[h].vnf, sizeof(d->ids[h]));
	d->version = *version;
	/* R1: the table is published before the loop may submit; pairs with A1. */
	tc_store_release(&d->configured, 1);
out:
	pthread_mutex_unlock(&tc->lock);
	return ret;
}

int toe_chain_del(struct toe_chain *tc, uint32_t dir)
{
	struct ch_chain_cfg cfg = { .region = dir == TOE_DIR_IN ? TOE_REGION_GUEST : TOE_REGION_OUT,
				    .dir = dir, .nhops = 0 };
	struct toe_dir *d = &tc->dir[dir];
	uint64_t version;
	int ret = 0;

	if (dir > 1)
		return -EINVAL;
	pthread_mutex_lock(&tc->lock);
	if (!tc_load_relaxed(&d->configured)) {
		ret = -ENOENT;
		goto out;
	}
	/*
	 * A pass-through table rather than none: what the loop still submits
	 * while its earlier descriptors drain passes (in order) instead of
	 * coming back denied for want of a chain.
	 */
	ret = ch_psched_chain_set(tc->s, dir, &cfg, &version);
	if (ret)
		goto out;
	tc_store_release(&d->configured, 0);
	memset(&d->spec, 0, sizeof(d->spec));
	memset(d->ids, 0, sizeof(d->ids));
	d->version = version;
out:
	pthread_mutex_unlock(&tc->lock);
	return ret;
}

void toe_chain_sample(struct toe_chain *tc)
{
	uint32_t i;

	pthread_mutex_lock(&tc->lock);
	if (tc->nsamp < PPS_SAMPLES) {
		i = (tc->samp_head + tc->nsamp++) % PPS_SAMPLES;
	} else {
		i = tc->samp_head;
		tc->samp_head = (tc->samp_head + 1) % PPS_SAMPLES;
	}
	tc->samp[i].t = now_s();
	for (uint32_t d = 0; d < 2; d++)
		tc->samp[i].fin[d] = tc_load_relaxed(&ch_psched_counters(tc->s, d)->finished);
	pthread_mutex_unlock(&tc->lock);
}

/* Finished per second of @dir over the last ~1 s of samples (under lock). */
static double pps_of(const struct toe_chain *tc, uint32_t dir, uint64_t fin_now, double now)
{
	for (uint32_t k = 0; k < tc->nsamp; k++) {
		uint32_t i = (tc->samp_head + k) % PPS_SAMPLES;
		double dt = now - tc->samp[i].t;

		if (dt <= 1.3 && dt > 0.2)
			return (double)(fin_now - tc->samp[i].fin[dir]) / dt;
	}
	return 0.0;
}

unsigned int toe_chain_stats(struct toe_chain *tc, struct toe_chain_stat st[2],
			     struct toe_denial *den, unsigned int max)
{
	double now = now_s();
	unsigned int n = 0;

	pthread_mutex_lock(&tc->lock);
	for (uint32_t d = 0; d < 2; d++) {
		struct tcr_counters_snap snap;
		const struct toe_dir *td = &tc->dir[d];

		memset(&st[d], 0, sizeof(st[d]));
		st[d].set = tc_load_relaxed(&td->configured);
		memcpy(st[d].name, td->spec.name, sizeof(st[d].name));
		st[d].version = td->version;
		st[d].nhops = td->spec.nhops;
		if (tcr_counters_snapshot(ch_psched_counters(tc->s, d), NULL, 1u << 20, &snap) == 0) {
			st[d].arrivals = snap.arrivals;
			st[d].taken = snap.taken;
			st[d].finished = snap.finished;
			st[d].denied = snap.denied;
			st[d].in_qlen = snap.in_qlen;
			st[d].out_qlen = snap.out_qlen;
			st[d].pps = pps_of(tc, d, snap.finished, now);
		}
		st[d].alerted = td->alerted;
	}
	for (uint32_t k = 0; k < tc->nden && n < max; k++)
		den[n++] = tc->den[(tc->den_head + k) % TOE_DENIALS];
	pthread_mutex_unlock(&tc->lock);
	return n;
}
