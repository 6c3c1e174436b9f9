// SPDX-License-Identifier: MIT
/*
 * The packet scheduler: creation, the control plane, the TOE side and the
 * poll.  The contract is in ch_psched.h; the state and its synchronization
 * rules in ch_psched_int.h; the owner's loop that runs it in
 * ch_psched_loop.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/region.h>
#include <tochain/tsc.h>
#include <tochain/util.h>

#include "ch_psched_int.h"
#include "ch_psched_collect.h"
#include "ch_psched_dispatch.h"
#include "ch_psched_live.h"
#include "ch_psched_loop.h"
#include "ch_psched_sla.h"

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 2;

	while (p < v)
		p <<= 1;
	return p;
}

/* ---- creation ------------------------------------------------------ */

struct ch_psched *ch_psched_create(const struct ch_psched_cfg *cfg)
{
	struct tcr_params cp = { .name = "chain-counters", .kind = TCR_KIND_HOST,
				 .nbufs = 1, .slot_size = 64, .nchannels = 1 };
	struct tcr_geometry g;
	struct ch_psched *s;
	uint32_t osize;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (cfg)
		s->cfg = *cfg;
	if (!s->cfg.nchains)
		s->cfg.nchains = 16;
	if (!s->cfg.qcap)
		s->cfg.qcap = 1024;
	if (!s->cfg.max_flight)
		s->cfg.max_flight = 1024;
	if (!s->cfg.vnf_nbufs)
		s->cfg.vnf_nbufs = 1024;
	if (!s->cfg.hang_ns)
		s->cfg.hang_ns = 1000000000ull;
	if (s->cfg.nchains > TCR_MAX_CHAINS || s->cfg.max_flight > (1u << 20) ||
	    s->cfg.vnf_nbufs > (1u << 20) || s->cfg.qcap > (1u << 20)) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_init(&s->ctl_lock, NULL);
	s->loop_epfd = -1;
	s->tables = ch_tables_create(s->cfg.nchains, CH_MAX_VNFS);
	if (!s->tables)
		goto out_free;

	cp.nchains = s->cfg.nchains;
	/*
	 * Readers (the CPU scheduler, tcr_counters_snapshot) take the
	 * region's ring size as the bound of a queue length: an input queue
	 * holds at most qcap waiting plus max_flight in processing.
	 */
	cp.ring_size = 1;
	while (cp.ring_size < s->cfg.qcap + s->cfg.max_flight && cp.ring_size < TCR_MAX_RING)
		cp.ring_size <<= 1;
	if (s->cfg.counters_path) {
		s->ctr_region = tcr_region_create(s->cfg.counters_path, &cp);
	} else {
		tcr_geometry_compute(&cp, &g);
		if (posix_memalign(&s->ctr_mem, TCR_PAGE, g.region_size))
			goto out_tables;
		s->ctr_region = tcr_region_create_mem(s->ctr_mem, g.region_size, &cp);
	}
	if (!s->ctr_region)
		goto out_tables;

	osize = pow2_at_least(s->cfg.max_flight);
	s->flight_mask = osize - 1;
	s->chain = calloc(s->cfg.nchains, sizeof(*s->chain));
	s->fl = calloc(s->cfg.max_flight, sizeof(*s->fl));
	s->free_fl = calloc(s->cfg.max_flight, sizeof(*s->free_fl));
	s->stall = calloc(osize, sizeof(*s->stall));
	if (!s->chain || !s->fl || !s->free_fl || !s->stall)
		goto out_arrays;
	for (uint32_t i = 0; i < s->cfg.max_flight; i++)
		s->free_fl[s->nfree++] = s->cfg.max_flight - 1 - i;
	for (uint32_t c = 0; c < s->cfg.nchains; c++) {
		struct chain_rt *ch = &s->chain[c];

		ch->in = ch_queue_create(s->cfg.qcap, sizeof(struct ch_pkt));
		ch->out = ch_queue_create(s->cfg.qcap, sizeof(struct ch_result));
		ch->order = calloc(osize, sizeof(*ch->order));
		ch->ctr = tcr_region_chain(s->ctr_region, c);
		if (!ch->in || !ch->out || !ch->order)
			goto out_arrays;
	}
	return s;

out_arrays:
	err = errno ? errno : ENOMEM;
	for (uint32_t c = 0; s->chain && c < s->cfg.nchains; c++) {
		ch_queue_destroy(s->chain[c].in);
		ch_queue_destroy(s->chain[c].out);
		free(s->chain[c].order);
	}
	free(s->chain);
	free(s->fl);
	free(s->free_fl);
	free(s->stall);
	tcr_region_destroy(s->ctr_region);
	errno = err;
out_tables:
	err = errno;
	free(s->ctr_mem);
	ch_tables_destroy(s->tables);
	errno = err;
out_free:
	err = errno;
	pthread_mutex_destroy(&s->ctl_lock);
	free(s);
	errno = err;
	return NULL;
}

void ch_psched_destroy(struct ch_psched *s)
{
	if (!s)
		return;
	for (uint32_t v = 0; v < CH_MAX_VNFS; v++) {
		struct vnf *vn = &s->vnf[v];

		if (!vn->present)
			continue;
		for (uint32_t c = 0; c < vn->nthreads; c++)
			tcr_chan_close(&vn->chan[c], vn->pool);
		ch_psched_live_forget(s, vn);
		tcr_region_kill(vn->r);
		tcr_pool_destroy(vn->pool);
		tcr_region_destroy(vn->r);
		free(vn->vd);
	}
	for (uint32_t c = 0; c < s->cfg.nchains; c++) {
		struct ch_result r;

		while (ch_queue_pop(s->chain[c].out, &r, 1) == 1)
		{
			free(r.answer);		/* results nobody took */
			free(r.alert_msg);
		}
		ch_queue_destroy(s->chain[c].in);
		ch_queue_destroy(s->chain[c].out);
		free(s->chain[c].order);
	}
	for (uint32_t i = 0; i < s->cfg.max_flight; i++) {
		if (s->fl[i].tb)
			ch_table_put(s->tables, s->fl[i].tb);
		free(s->fl[i].answer);
		free(s->fl[i].alert_msg);
	}
	ch_tables_destroy(s->tables);	/* frees the retired list too */
	free(s->chain);
	free(s->fl);
	free(s->free_fl);
	free(s->stall);
	tcr_region_destroy(s->ctr_region);
	free(s->ctr_mem);
	pthread_mutex_destroy(&s->ctl_lock);
	free(s);
}

/* ---- control plane ------------------------------------------------- */

int ch_psched_region_add(struct ch_psched *s, uint32_t id, const char *path,
			 uint32_t nbufs, uint32_t slot_size)
{
	struct dregion *d;
	int err = 0;

	if (id >= CH_MAX_REGIONS || !path || strlen(path) >= VNF_REGION_SLOT ||
	    nbufs == 0 || nbufs > TCR_MAX_BUFS || slot_size == 0 || slot_size > TCR_MAX_SLOT)
		return -EINVAL;
	pthread_mutex_lock(&s->ctl_lock);
	d = &s->region[id];
	if (tc_load_relaxed(&d->present)) {
		err = -EEXIST;
	} else {
		d->nbufs = nbufs;
		d->slot_size = slot_size;
		snprintf(d->path, sizeof(d->path), "%s", path);
		tc_store_release(&d->present, 1);	/* pairs with dregion_get() */
	}
	pthread_mutex_unlock(&s->ctl_lock);
	return err;
}

int ch_psched_region_flows(struct ch_psched *s, uint32_t id, const char *path)
{
	struct dregion *d;
	int err = 0;

	if (id >= CH_MAX_REGIONS || !path || strlen(path) >= VNF_REGION_SLOT)
		return -EINVAL;
	pthread_mutex_lock(&s->ctl_lock);
	d = &s->region[id];
	if (!tc_load_relaxed(&d->present)) {
		err = -ENOENT;
	} else if (tc_load_relaxed(&d->has_flows)) {
		err = -EEXIST;
	} else {
		snprintf(d->flows_path, sizeof(d->flows_path), "%s", path);
		tc_store_release(&d->has_flows, 1);	/* pairs with ch_psched_dispatch_ctrl_all() */
	}
	pthread_mutex_unlock(&s->ctl_lock);
	return err;
}

int ch_psched_region_name(struct ch_psched *s, uint32_t id, const char *name)
{
	struct dregion *d;
	int err = 0;

	if (id >= CH_MAX_REGIONS || !tcr_name_valid(name))
		return -EINVAL;
	pthread_mutex_lock(&s->ctl_lock);
	d = &s->region[id];
	if (!tc_load_relaxed(&d->present)) {
		err = -ENOENT;
	} else if (tc_load_relaxed(&d->has_name)) {
		err = -EEXIST;
	} else if (strlen(d->path) + 1 + strlen(name) + 1 > VNF_REGION_SLOT) {
		err = -ENAMETOOLONG;	/* the grant's slot holds both */
	} else {
		memcpy(d->name, name, strlen(name) + 1);	/* < TCR_NAME_MAX: valid */
		tc_store_release(&d->has_name, 1);	/* pairs with ch_psched_dispatch_ctrl_all() */
	}
	pthread_mutex_unlock(&s->ctl_lock);
	return err;
}

int ch_psched_vnf_add(struct ch_psched *s, const struct ch_vnf_cfg *cfg)
{
	struct tcr_params p = { .kind = TCR_KIND_HOST, .slot_size = VNF_REGION_SLOT,
				.nchains = VNF_REGION_CHAINS };
	struct vnf *vn;
	uint32_t id;
	int err;

	if (!cfg || !cfg->region_path || cfg->nthreads == 0 ||
	    (cfg->region_name && !tcr_name_valid(cfg->region_name)) ||
	    cfg->nthreads > VNF_MAX_THREADS ||
	    (cfg->policy != CH_FAIL_CLOSED && cfg->policy != CH_FAIL_OPEN) ||
	    (cfg->dispatch != CH_DISPATCH_RR && cfg->dispatch != CH_DISPATCH_FLOW))
		return -EINVAL;
	pthread_mutex_lock(&s->ctl_lock);
	id = s->nvnfs;
	if (id >= CH_MAX_VNFS) {
		err = -ENOSPC;
		goto out_unlock;
	}
	vn = &s->vnf[id];
	memset(vn, 0, sizeof(*vn));
	snprintf(vn->name, sizeof(vn->name), "%s", cfg->name ? cfg->name : "vnf");
	if (!tcr_name_valid(vn->name))
		snprintf(vn->name, sizeof(vn->name), "vnf%u", id);
	p.name = cfg->region_name ? cfg->region_name : vn->name;
	p.nbufs = s->cfg.vnf_nbufs;
	p.nchannels = cfg->nthreads;
	vn->id = id;
	vn->nthreads = cfg->nthreads;
	vn->policy = cfg->policy;
	vn->dispatch = cfg->dispatch;
	vn->restart_pid = -1;
	vn->r = tcr_region_create(cfg->region_path, &p);
	if (!vn->r) {
		err = -errno;
		goto out_unlock;
	}
	vn->pool = tcr_pool_create(vn->r);
	vn->vd = calloc(p.nbufs, sizeof(*vn->vd));
	if (!vn->pool || !vn->vd) {
		err = -ENOMEM;
		goto out_destroy;
	}
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		err = tcr_chan_open(&vn->chan[c], vn->r, c);
		if (err)
			goto out_destroy;
		vn->vc[c].last_progress = tu_now_ns();
		vn->vc[c].bell = -1;
	}
	vn->pool_free = p.nbufs;
	tc_store_release(&vn->present, 1);
	tc_store_release(&s->nvnfs, id + 1);	/* pairs with the scheduler's acquire */
	pthread_mutex_unlock(&s->ctl_lock);
	return (int)id;

out_destroy:
	tcr_pool_destroy(vn->pool);
	free(vn->vd);
	tcr_region_destroy(vn->r);
	unlink(cfg->region_path);
	memset(vn, 0, sizeof(*vn));
out_unlock:
	pthread_mutex_unlock(&s->ctl_lock);
	return err;
}

static struct vnf *vnf_get(struct ch_psched *s, uint32_t id)
{
	if (id >= tc_load_acquire(&s->nvnfs))
		return NULL;
	return &s->vnf[id];
}

int ch_psched_vnf_set_pid(struct ch_psched *s, uint32_t vnf, pid_t pid)
{
	struct vnf *vn = vnf_get(s, vnf);

	if (!vn || pid < 0)
		return -EINVAL;
	tc_store_release(&vn->pid, (int)pid);
	return 0;
}

int ch_psched_vnf_restart(struct ch_psched *s, uint32_t vnf, pid_t pid)
{
	struct vnf *vn = vnf_get(s, vnf);

	if (!vn || pid < 0)
		return -EINVAL;
	tc_store_release(&vn->restart_pid, (int)pid);
	return 0;
}

int ch_psched_vnf_info(struct ch_psched *s, uint32_t vnf, struct ch_vnf_info *out)
{
	struct vnf *vn = vnf_get(s, vnf);
	uint32_t outstanding = 0;

	if (!vn || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->failed = tc_load_relaxed(&vn->failed);
	out->epoch = tc_load_relaxed(&vn->epoch);
	out->dispatched = tc_load_relaxed(&vn->dispatched);
	out->verdicts = tc_load_relaxed(&vn->verdicts);
	out->bad_verdicts = tc_load_relaxed(&vn->bad_verdicts);
	out->bypassed = tc_load_relaxed(&vn->bypassed);
	out->failures = tc_load_relaxed(&vn->failures);
	out->alerts = tc_load_relaxed(&vn->alerts);
	for (uint32_t c = 0; c < vn->nthreads; c++)
		outstanding += tc_load_relaxed(&vn->vc[c].outstanding);
	out->outstanding = outstanding;
	out->pool_free = tc_load_relaxed(&vn->pool_free);
	out->bells = ch_psched_loop_bells(vn);
	return 0;
}

int ch_psched_chain_set(struct ch_psched *s, uint32_t chain, const struct ch_chain_cfg *cfg,
			uint64_t *version)
{
	uint32_t nvnfs = tc_load_acquire(&s->nvnfs);

	if (chain >= s->cfg.nchains)
		return -EINVAL;
	if (cfg) {
		if (ch_chain_cfg_check(cfg, nvnfs) || !dregion_get(s, cfg->region))
			return -EINVAL;
	}
	return ch_tables_set(s->tables, chain, cfg, version);
}

/* ---- TOE side ------------------------------------------------------ */

unsigned int ch_psched_push(struct ch_psched *s, uint32_t chain, const struct ch_pkt *p,
			    unsigned int n)
{
	unsigned int k;

	if (chain >= s->cfg.nchains)
		return 0;
	k = ch_queue_push(s->chain[chain].in, p, n);
	if (k)
		tcr_counters_arrived(s->chain[chain].ctr, k);
	return k;
}

unsigned int ch_psched_take(struct ch_psched *s, uint32_t chain, struct ch_result *r,
			    unsigned int n)
{
	unsigned int k;

	if (chain >= s->cfg.nchains)
		return 0;
	k = ch_queue_pop(s->chain[chain].out, r, n);
	if (k)
		tcr_counters_taken(s->chain[chain].ctr, k);
	return k;
}

struct tcr_chain_counters *ch_psched_counters(struct ch_psched *s, uint32_t chain)
{
	if (chain >= s->cfg.nchains)
		return NULL;
	return s->chain[chain].ctr;
}

uint64_t ch_psched_settled(struct ch_psched *s, uint32_t chain)
{
	if (chain >= s->cfg.nchains)
		return 0;
	return tc_load_relaxed(&s->chain[chain].settled);
}

uint32_t ch_psched_out_len(struct ch_psched *s, uint32_t chain)
{
	if (chain >= s->cfg.nchains)
		return 0;
	return ch_queue_len(s->chain[chain].out);
}

uint32_t ch_psched_in_flight(struct ch_psched *s)
{
	return tc_load_relaxed(&s->in_flight);
}

unsigned int ch_psched_poll(struct ch_psched *s)
{
	uint32_t nvnfs = tc_load_acquire(&s->nvnfs);
	unsigned int work = 0;
	struct ch_table *tb, *next;
	uint32_t nstall;
	uint64_t now;

	for (tb = ch_tables_take_retired(s->tables); tb; tb = next) {
		next = tb->next;
		ch_psched_dispatch_revoke(s, tb);
		free(tb);
		work++;
	}
	now = tcr_tsc_now();
	if (now >= s->next_check) {
		const struct tcr_tsc_cal *cal = tcr_tsc_calibration();

		ch_psched_live_check(s, nvnfs);
		ch_psched_sla_tick(s, nvnfs);
		s->next_check = now + (cal->hz ? cal->hz / (1000000000ull / CHECK_NS) : CHECK_NS);
	}
	for (uint32_t v = 0; v < nvnfs; v++) {
		const char *why = NULL;

		work += ch_psched_collect_vnf(s, &s->vnf[v], &why);
		if (why)
			ch_psched_live_fail(s, &s->vnf[v], why);
	}
	/* Retry stalled dispatches, oldest first, once each. */
	nstall = s->stail - s->shead;
	for (uint32_t i = 0; i < nstall; i++) {
		uint32_t id = s->stall[s->shead++ & s->flight_mask];
		struct flight *f = &s->fl[id];

		f->stalled = 0;
		if (f->state != FL_BUSY || !f->pending)
			continue;
		ch_psched_dispatch_flight(s, id);
		ch_psched_dispatch_advance(s, id);
	}
	for (uint32_t c = 0; c < s->cfg.nchains; c++) {
		work += ch_psched_dispatch_admit(s, c);
		work += ch_psched_collect_release(s, c);
	}
	for (uint32_t v = 0; v < nvnfs; v++)
		ch_psched_dispatch_kick(&s->vnf[v]);
	return work;
}
