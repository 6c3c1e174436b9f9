// SPDX-License-Identifier: MIT
/*
 * The packet scheduler; the contract is in ch_psched.h.
 *
 * SYNCHRONIZATION.
 *  - Everything below "scheduler thread state" belongs to the one thread
 *    that runs ch_psched_poll(): flights, VNF pools, channels, grants.
 *  - Control-plane calls publish new data regions and VNFs by filling the
 *    slot and then store-releasing `present` (paired with the scheduler's
 *    load-acquire); they never touch a published object again except
 *    through atomic request words (pid, restart_pid).
 *  - Forwarding tables: RCU (ch_table.c).  Each flight holds a table
 *    reference from admission to completion, so a descriptor finishes on
 *    the table it started on.  Retired tables are freed here, after their
 *    grants were revoked.
 *  - Statistics read by other threads are written with relaxed atomics.
 *  - Input/output queues: SPSC (ch_queue.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/counters.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/region.h>
#include <tochain/tsc.h>

#include "ch_queue.h"
#include "ch_psched.h"
#include "tochain/vnf_proto.h"

_Static_assert(CH_MAX_PAR <= 16, "hop masks are 16 bits");
_Static_assert(CH_MAX_REGIONS <= VNF_REGION_CHAINS, "region ids fit the protocol");

#define BURST		32
#define FLIGHT_CTRL	0xffffffffu	/* vdesc of a control message */
#define CHECK_NS	2000000ull	/* liveness checks every 2 ms */

enum flight_state { FL_FREE = 0, FL_BUSY = 1, FL_DONE = 2 };

struct flight {
	struct ch_pkt pkt;
	struct ch_table *tb;		/* reference held while busy */
	uint32_t chain;
	uint32_t gen;			/* bumped at each reuse */
	uint8_t state;			/* enum flight_state */
	uint8_t hop;			/* current hop */
	uint8_t stalled;		/* in the stall ring */
	uint8_t pad0;
	uint16_t pending;		/* VNFs of the hop still to dispatch */
	uint16_t outstanding;		/* dispatched, verdict not back */
	uint32_t verdict, reason, deny_vnf, deny_rule, bypassed;
};

/* What the scheduler gave a VNF work descriptor for (private). */
struct vdesc {
	uint32_t flight;		/* flight id or FLIGHT_CTRL */
	uint32_t gen;
	uint8_t slot;			/* position of the VNF in the hop */
	uint8_t chan;			/* channel it was sent on */
};

struct vchan {
	uint32_t outstanding;		/* work descriptors the thread holds */
	uint64_t last_progress;		/* ns, monotonic */
	bool kick;			/* enqueued on RX this round */
};

struct vnf {
	uint32_t present;		/* store-release by the control plane */
	uint32_t id, nthreads, policy, dispatch;
	char name[TCR_NAME_MAX];
	int pid;			/* atomic: process serving it */
	int restart_pid;		/* atomic: -1 none, else restart request */
	/* scheduler thread state */
	struct tcr_region *r;
	struct tcr_pool *pool;
	struct tcr_chan chan[VNF_MAX_THREADS];
	struct vchan vc[VNF_MAX_THREADS];
	struct vdesc *vd;
	uint32_t rr;
	uint32_t grants[CH_MAX_REGIONS];
	bool failed;			/* also read (relaxed) by info */
	uint32_t pool_free;		/* snapshot of the pool's free stock, for info */
	uint32_t epoch;
	uint64_t dispatched, verdicts, bad_verdicts, bypassed, failures;
};

struct dregion {
	uint32_t present;		/* store-release by the control plane */
	uint32_t nbufs, slot_size;
	char path[VNF_REGION_SLOT];
	uint32_t has_flows;		/* store-release after flows_path */
	char flows_path[VNF_REGION_SLOT];
	uint32_t has_name;		/* store-release after name */
	char name[TCR_NAME_MAX];	/* its header name, for guests */
};

struct chain_rt {
	struct ch_queue *in, *out;
	struct tcr_chain_counters *ctr;
	uint32_t *order;		/* flight ids in arrival order */
	uint32_t ohead, otail;
	uint32_t inflight;
};

struct ch_psched {
	struct ch_psched_cfg cfg;
	struct ch_tables *tables;
	struct chain_rt *chain;
	struct vnf vnf[CH_MAX_VNFS];
	uint32_t nvnfs;			/* store-release after a VNF is ready */
	struct dregion region[CH_MAX_REGIONS];
	pthread_mutex_t ctl_lock;	/* serialises control-plane calls */
	struct tcr_region *ctr_region;
	void *ctr_mem;
	/* scheduler thread state */
	struct flight *fl;
	uint32_t *free_fl, nfree;
	uint32_t *stall, shead, stail;	/* ring of flight ids, max_flight slots */
	uint32_t flight_mask;		/* order/stall ring mask */
	uint64_t next_check;
	uint32_t in_flight;		/* atomic for readers */
	/* thread */
	pthread_t thread;
	bool running;
	int stop;
	uint32_t sleeping;		/* scheduler thread is (about to be) asleep */
	uint32_t doorbell;		/* futex word: bumped by a submit that wakes it */
	/* result notification (ch_psched_notify_*) */
	int notify_fd;
	uint32_t notify_armed;		/* set by the consumer, cleared by a release */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void futex_wake(__u32 *word)
{
	/* Shared mapping: not FUTEX_PRIVATE. */
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Publish the free stock of @vn's pool for ch_psched_vnf_info (relaxed). */
#define pool_note(vn) \
	tc_store_relaxed(&(vn)->pool_free, (uint32_t)tcr_pool_count((vn)->pool, TCR_HOLDER_FREE))

static void stat_add(uint64_t *p, uint64_t v)
{
	tc_store_relaxed(p, tc_load_relaxed(p) + v);
}

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
	s->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
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
	if (s->notify_fd >= 0)
		close(s->notify_fd);
	pthread_mutex_destroy(&s->ctl_lock);
	free(s);
	errno = err;
	return NULL;
}

void ch_psched_destroy(struct ch_psched *s)
{
	if (!s)
		return;
	ch_psched_stop(s);
	for (uint32_t v = 0; v < CH_MAX_VNFS; v++) {
		struct vnf *vn = &s->vnf[v];

		if (!vn->present)
			continue;
		for (uint32_t c = 0; c < vn->nthreads; c++)
			tcr_chan_close(&vn->chan[c], vn->pool);
		tcr_region_kill(vn->r);
		tcr_pool_destroy(vn->pool);
		tcr_region_destroy(vn->r);
		free(vn->vd);
	}
	for (uint32_t c = 0; c < s->cfg.nchains; c++) {
		ch_queue_destroy(s->chain[c].in);
		ch_queue_destroy(s->chain[c].out);
		free(s->chain[c].order);
	}
	for (uint32_t i = 0; i < s->cfg.max_flight; i++)
		if (s->fl[i].tb)
			ch_table_put(s->tables, s->fl[i].tb);
	ch_tables_destroy(s->tables);	/* frees the retired list too */
	free(s->chain);
	free(s->fl);
	free(s->free_fl);
	free(s->stall);
	tcr_region_destroy(s->ctr_region);
	free(s->ctr_mem);
	if (s->notify_fd >= 0)
		close(s->notify_fd);
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
		tc_store_release(&d->present, 1);	/* pairs with region_get() */
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
		tc_store_release(&d->has_flows, 1);	/* pairs with vnf_ctrl_all() */
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
		tc_store_release(&d->has_name, 1);	/* pairs with vnf_ctrl_all() */
	}
	pthread_mutex_unlock(&s->ctl_lock);
	return err;
}

static const struct dregion *region_get(struct ch_psched *s, uint32_t id)
{
	if (id >= CH_MAX_REGIONS || !tc_load_acquire(&s->region[id].present))
		return NULL;
	return &s->region[id];
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
		vn->vc[c].last_progress = now_ns();
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
	for (uint32_t c = 0; c < vn->nthreads; c++)
		outstanding += tc_load_relaxed(&vn->vc[c].outstanding);
	out->outstanding = outstanding;
	out->pool_free = tc_load_relaxed(&vn->pool_free);
	return 0;
}

int ch_psched_chain_set(struct ch_psched *s, uint32_t chain, const struct ch_chain_cfg *cfg,
			uint64_t *version)
{
	uint32_t nvnfs = tc_load_acquire(&s->nvnfs);

	if (chain >= s->cfg.nchains)
		return -EINVAL;
	if (cfg) {
		if (ch_chain_cfg_check(cfg, nvnfs) || !region_get(s, cfg->region))
			return -EINVAL;
	}
	return ch_tables_set(s->tables, chain, cfg, version);
}

/* ---- TOE side ------------------------------------------------------ */

unsigned int ch_psched_submit(struct ch_psched *s, uint32_t chain, const struct ch_pkt *p,
			      unsigned int n)
{
	unsigned int k;

	if (chain >= s->cfg.nchains)
		return 0;
	k = ch_queue_push(s->chain[chain].in, p, n);
	if (!k)
		return 0;
	tcr_counters_arrived(s->chain[chain].ctr, k);
	/* F2: the records are visible before we look at the flag; pairs with F1. */
	tc_fence_seq_cst();
	if (tc_load_relaxed(&s->sleeping)) {
		tc_fetch_add_release(&s->doorbell, 1);
		syscall(SYS_futex, &s->doorbell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
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

int ch_psched_notify_fd(struct ch_psched *s)
{
	return s->notify_fd;
}

uint32_t ch_psched_out_len(struct ch_psched *s, uint32_t chain)
{
	if (chain >= s->cfg.nchains)
		return 0;
	return ch_queue_len(s->chain[chain].out);
}

bool ch_psched_notify_arm(struct ch_psched *s)
{
	tc_store_relaxed(&s->notify_armed, 1);
	/* N1: the flag is visible before we look at the queues; pairs with N2. */
	tc_fence_seq_cst();
	for (uint32_t c = 0; c < s->cfg.nchains; c++)
		if (ch_queue_len(s->chain[c].out))
			return false;
	return true;
}

/* Scheduler thread, after releasing results: wake an armed consumer. */
static void notify_results(struct ch_psched *s)
{
	uint64_t one = 1;

	/* N2: the results are visible before we look at the flag; pairs with N1. */
	tc_fence_seq_cst();
	if (!tc_load_relaxed(&s->notify_armed))
		return;
	tc_store_relaxed(&s->notify_armed, 0);
	if (s->notify_fd >= 0 && write(s->notify_fd, &one, sizeof(one)) < 0) {
		/* a full counter is readable anyway */
	}
}

uint32_t ch_psched_in_flight(struct ch_psched *s)
{
	return tc_load_relaxed(&s->in_flight);
}

/* ---- scheduler thread: VNF channels -------------------------------- */

static void kick_channels(struct vnf *vn)
{
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		struct tcr_ring *rx = &vn->chan[c].ring[TCR_CH_RX];

		if (!vn->vc[c].kick)
			continue;
		vn->vc[c].kick = false;
		if (tcr_ring_prod_kick_needed(rx))
			futex_wake(tcr_ring_kick_consumer(rx));
	}
}

/* Send one work descriptor @d on channel @c; 0, or -EAGAIN (no room). */
static int vnf_send(struct vnf *vn, uint32_t c, struct tcr_desc *d, const struct vdesc *vd,
		    const void *slot_data, uint32_t slot_len)
{
	uint32_t idx;
	int k;

	if (tcr_pool_alloc(vn->pool, &idx, 1) != 1)
		return -EAGAIN;
	d->slot = idx;
	tcr_desc_store(vn->r, idx, d);
	if (slot_len)
		memcpy(tcr_region_slot(vn->r, idx), slot_data, slot_len);
	vn->vd[idx] = *vd;
	vn->vd[idx].chan = (uint8_t)c;
	k = tcr_chan_send(&vn->chan[c], vn->pool, &idx, 1);
	if (k != 1) {
		tcr_pool_free(vn->pool, &idx, 1);
		return -EAGAIN;
	}
	pool_note(vn);
	if (vn->vc[c].outstanding++ == 0)
		vn->vc[c].last_progress = now_ns();
	tc_store_relaxed(&vn->vc[c].outstanding, vn->vc[c].outstanding);
	vn->vc[c].kick = true;
	return 0;
}

/*
 * The slot of a control message: @path (d.len bytes), and with a @name,
 * a NUL, the name and a NUL (the data region's header name, vnf_proto.h);
 * ch_psched_region_name() checked that both fit.
 */
static void vnf_ctrl(struct vnf *vn, uint32_t c, uint32_t op, uint32_t region,
		     const char *path, const char *name)
{
	struct vdesc vd = { .flight = FLIGHT_CTRL };
	struct tcr_desc d;
	char slot[VNF_REGION_SLOT];
	uint32_t len = (uint32_t)strlen(path), slen = len;

	memcpy(slot, path, len);
	if (name && len + 1 + strlen(name) + 1 <= sizeof(slot)) {
		slot[slen++] = '\0';
		memcpy(slot + slen, name, strlen(name) + 1);
		slen += (uint32_t)strlen(name) + 1;
	}

	memset(&d, 0, sizeof(d));
	d.op = TCR_OP_CTRL;
	d.flags = (__u16)op;
	d.aux = region;
	d.len = len;
	d.flow = TCR_FLOW_NONE;
	if (vnf_send(vn, c, &d, &vd, slot, slen))
		fprintf(stderr, "chain: vnf %s: no room for a control message\n", vn->name);
}

static void vnf_ctrl_all(struct ch_psched *s, struct vnf *vn, uint32_t op, uint32_t region)
{
	const struct dregion *dr = region_get(s, region);

	if (!dr || vn->failed)
		return;
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		vnf_ctrl(vn, c, op, region, dr->path,
			 op == VNF_CTRL_GRANT && tc_load_acquire(&dr->has_name) ? dr->name : NULL);
		/* The flow table goes with the data region (seed 002). */
		if (op == VNF_CTRL_GRANT && tc_load_acquire(&dr->has_flows))
			vnf_ctrl(vn, c, VNF_CTRL_GRANT_FLOWS, region, dr->flows_path, NULL);
	}
}

static void table_grant(struct ch_psched *s, struct ch_table *tb)
{
	for (uint32_t h = 0; h < tb->cfg.nhops; h++)
		for (uint32_t i = 0; i < tb->cfg.hop[h].nvnfs; i++) {
			struct vnf *vn = &s->vnf[tb->cfg.hop[h].vnf[i]];

			if (vn->grants[tb->cfg.region]++ == 0)
				vnf_ctrl_all(s, vn, VNF_CTRL_GRANT, tb->cfg.region);
		}
	tb->granted = true;
}

static void table_revoke(struct ch_psched *s, struct ch_table *tb)
{
	if (!tb->granted)
		return;
	for (uint32_t h = 0; h < tb->cfg.nhops; h++)
		for (uint32_t i = 0; i < tb->cfg.hop[h].nvnfs; i++) {
			struct vnf *vn = &s->vnf[tb->cfg.hop[h].vnf[i]];

			if (--vn->grants[tb->cfg.region] == 0)
				vnf_ctrl_all(s, vn, VNF_CTRL_REVOKE, tb->cfg.region);
		}
}

/* ---- scheduler thread: flights ------------------------------------- */

static void flight_deny(struct flight *f, uint32_t reason, uint32_t vnf, uint32_t rule)
{
	if (f->verdict == CH_DENY)
		return;		/* the first Deny is the one recorded */
	f->verdict = CH_DENY;
	f->reason = reason;
	f->deny_vnf = vnf;
	f->deny_rule = rule;
}

static void flight_complete(struct ch_psched *s, struct flight *f)
{
	(void)s;
	if (f->verdict != CH_DENY)
		f->verdict = CH_ALLOW;
	f->state = FL_DONE;
}

static void stall_push(struct ch_psched *s, uint32_t id)
{
	if (s->fl[id].stalled)
		return;
	s->fl[id].stalled = 1;
	s->stall[s->stail++ & s->flight_mask] = id;
}

/*
 * The service thread of a connection (CH_DISPATCH_FLOW): a mix of the
 * connection id (the TOE's ids differ in a few low bits) reduced to
 * @nthreads.  The same id always gets the same thread.
 */
static uint32_t flow_thread(uint64_t conn_id, uint32_t nthreads)
{
	uint64_t x = conn_id + 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)(x % nthreads);
}

/* Dispatch what is pending of flight @id's hop; stall what cannot go yet. */
static void flight_dispatch(struct ch_psched *s, uint32_t id)
{
	struct flight *f = &s->fl[id];
	const struct ch_hop_cfg *hop = &f->tb->cfg.hop[f->hop];

	for (uint32_t i = 0; i < hop->nvnfs; i++) {
		struct vnf *vn = &s->vnf[hop->vnf[i]];
		struct vdesc vd = { .flight = id, .gen = f->gen, .slot = (uint8_t)i };
		const struct ch_pkt *p = &f->pkt;
		struct tcr_desc d;
		uint32_t c;

		if (!(f->pending & (1u << i)))
			continue;
		if (vn->failed) {
			f->pending &= (uint16_t)~(1u << i);
			if (vn->policy == CH_FAIL_OPEN) {
				f->bypassed++;
				stat_add(&vn->bypassed, 1);
			} else {
				flight_deny(f, CH_REASON_VNF_FAILED, vn->id, 0);
			}
			continue;
		}
		memset(&d, 0, sizeof(d));
		d.op = TCR_OP_DATA;
		d.conn_id = p->conn_id;
		d.seq = p->seq;
		d.tsc = p->tsc;
		d.off = p->off;
		d.len = p->len;
		d.family = p->family;
		d.l4proto = p->l4proto;
		d.tcp_flags = p->tcp_flags;
		d.hop = f->hop;
		d.sport = p->sport;
		d.dport = p->dport;
		memcpy(d.saddr, p->saddr, 16);
		memcpy(d.daddr, p->daddr, 16);
		d.flow = p->flow;
		d.chain = f->chain;
		d.aux = VNF_AUX(p->region, p->buf);
		d.arg = VNF_VERDICT_NONE;	/* the VNF must write its own */
		c = vn->dispatch == CH_DISPATCH_FLOW ? flow_thread(p->conn_id, vn->nthreads)
						     : vn->rr++ % vn->nthreads;
		if (vnf_send(vn, c, &d, &vd, NULL, 0)) {
			stall_push(s, id);
			continue;
		}
		f->pending &= (uint16_t)~(1u << i);
		f->outstanding |= (uint16_t)(1u << i);
		stat_add(&vn->dispatched, 1);
	}
}

/* Move flight @id on after an event: next hop, completion. */
static void flight_advance(struct ch_psched *s, uint32_t id)
{
	struct flight *f = &s->fl[id];

	while (f->state == FL_BUSY && !f->pending && !f->outstanding) {
		if (f->verdict == CH_DENY || f->hop + 1u >= f->tb->cfg.nhops) {
			if (f->verdict != CH_DENY)
				f->hop++;	/* count the last hop as passed */
			flight_complete(s, f);
			return;
		}
		f->hop++;
		f->pending = (uint16_t)((1u << f->tb->cfg.hop[f->hop].nvnfs) - 1);
		flight_dispatch(s, id);
	}
}

static bool pkt_valid(struct ch_psched *s, const struct ch_pkt *p, const struct ch_table *tb)
{
	const struct dregion *dr = region_get(s, p->region);

	return dr && p->region == tb->cfg.region && p->buf < dr->nbufs &&
	       (uint64_t)p->off + p->len <= dr->slot_size;
}

static unsigned int admit(struct ch_psched *s, uint32_t chain)
{
	struct chain_rt *ch = &s->chain[chain];
	struct ch_pkt pkts[BURST];
	uint32_t room, want;
	unsigned int n;

	/* Never more in processing than the output queue can take. */
	room = ch_queue_room(ch->out);
	if (room <= ch->inflight || !s->nfree)
		return 0;
	want = room - ch->inflight;
	if (want > s->nfree)
		want = s->nfree;
	if (want > BURST)
		want = BURST;
	n = ch_queue_pop(ch->in, pkts, want);
	for (unsigned int i = 0; i < n; i++) {
		uint32_t id = s->free_fl[--s->nfree];
		struct flight *f = &s->fl[id];
		uint32_t gen = f->gen + 1;
		uint8_t stalled = f->stalled;	/* may still sit in the stall ring */

		memset(f, 0, sizeof(*f));
		f->gen = gen;
		f->stalled = stalled;
		f->pkt = pkts[i];
		if (!f->pkt.tsc)
			f->pkt.tsc = tcr_tsc_now();
		f->chain = chain;
		f->state = FL_BUSY;
		f->deny_vnf = CH_VNF_NONE;
		ch->order[ch->otail++ & s->flight_mask] = id;
		ch->inflight++;
		f->tb = ch_tables_get(s->tables, chain);
		if (!f->tb) {
			flight_deny(f, CH_REASON_NO_CHAIN, CH_VNF_NONE, 0);
			flight_complete(s, f);
			continue;
		}
		if (!pkt_valid(s, &f->pkt, f->tb)) {
			flight_deny(f, CH_REASON_BAD_DESC, CH_VNF_NONE, 0);
			flight_complete(s, f);
			continue;
		}
		if (!f->tb->granted)
			table_grant(s, f->tb);
		if (f->tb->cfg.nhops == 0) {
			flight_complete(s, f);
			continue;
		}
		f->pending = (uint16_t)((1u << f->tb->cfg.hop[0].nvnfs) - 1);
		flight_dispatch(s, id);
		flight_advance(s, id);
	}
	if (n)
		tc_store_relaxed(&s->in_flight, s->cfg.max_flight - s->nfree);
	return n;
}

/* Release finished flights of @chain in arrival order. */
static unsigned int release(struct ch_psched *s, uint32_t chain)
{
	struct chain_rt *ch = &s->chain[chain];
	uint32_t ndone = 0, ndenied = 0;
	struct ch_result r;

	while (ch->ohead != ch->otail) {
		uint32_t id = ch->order[ch->ohead & s->flight_mask];
		struct flight *f = &s->fl[id];

		if (f->state != FL_DONE)
			break;
		memset(&r, 0, sizeof(r));
		r.pkt = f->pkt;
		r.table_version = f->tb ? f->tb->version : 0;
		r.done_tsc = tcr_tsc_now();
		r.chain = chain;
		r.verdict = f->verdict;
		r.reason = f->reason;
		r.deny_vnf = f->deny_vnf;
		r.deny_rule = f->deny_rule;
		r.hops = f->hop;
		r.bypassed = f->bypassed;
		if (ch_queue_push(ch->out, &r, 1) != 1)
			break;	/* cannot happen: admission keeps room */
		ch->ohead++;
		ch->inflight--;
		ndone++;
		ndenied += f->verdict == CH_DENY;
		if (f->tb)
			ch_table_put(s->tables, f->tb);
		f->tb = NULL;
		f->state = FL_FREE;
		s->free_fl[s->nfree++] = id;
	}
	if (ndone) {
		tcr_counters_finished(ch->ctr, ndone, ndenied);
		tc_store_relaxed(&s->in_flight, s->cfg.max_flight - s->nfree);
	}
	return ndone;
}

/* A verdict (or a loss) for work descriptor @vd of VNF @vn. */
static void verdict_in(struct ch_psched *s, struct vnf *vn, const struct vdesc *vd,
		       uint32_t verdict, uint32_t rule, bool lost)
{
	struct flight *f;

	if (vd->flight == FLIGHT_CTRL || vd->flight >= s->cfg.max_flight)
		return;
	f = &s->fl[vd->flight];
	if (f->state != FL_BUSY || f->gen != vd->gen || !(f->outstanding & (1u << vd->slot)))
		return;
	f->outstanding &= (uint16_t)~(1u << vd->slot);
	if (lost) {
		if (vn->policy == CH_FAIL_OPEN) {
			f->bypassed++;
			stat_add(&vn->bypassed, 1);
		} else {
			flight_deny(f, CH_REASON_VNF_FAILED, vn->id, 0);
		}
	} else if (verdict == VNF_VERDICT_DENY) {
		flight_deny(f, CH_REASON_RULE, vn->id, rule);
	} else if (verdict != VNF_VERDICT_ALLOW) {
		stat_add(&vn->bad_verdicts, 1);
		flight_deny(f, CH_REASON_BAD_VERDICT, vn->id, verdict);
	}
	flight_advance(s, vd->flight);
}

static void vnf_fail(struct ch_psched *s, struct vnf *vn, const char *why)
{
	if (vn->failed)
		return;
	fprintf(stderr, "chain: vnf %s failed (%s), policy %s\n", vn->name, why,
		vn->policy == CH_FAIL_OPEN ? "open: bypassing it" : "closed: denying");
	tc_store_relaxed(&vn->failed, true);
	stat_add(&vn->failures, 1);
	for (uint32_t idx = 0; idx < s->cfg.vnf_nbufs; idx++) {
		int h = tcr_pool_holder(vn->pool, idx);

		if (h >= (int)TCR_HOLDER_CH(0))
			verdict_in(s, vn, &vn->vd[idx], 0, 0, true);
	}
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		tcr_chan_close(&vn->chan[c], vn->pool);
		vn->vc[c].outstanding = 0;
		tc_store_relaxed(&vn->vc[c].outstanding, 0);
		vn->vc[c].kick = false;
	}
	pool_note(vn);
	/* Wake threads sleeping on RX so that they see the channel closed. */
	for (uint32_t c = 0; c < vn->nthreads; c++)
		futex_wake(tcr_ring_kick_consumer(&vn->chan[c].ring[TCR_CH_RX]));
}

static void vnf_reopen(struct ch_psched *s, struct vnf *vn, int pid)
{
	vnf_fail(s, vn, "restart");
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		tcr_chan_open(&vn->chan[c], vn->r, c);
		vn->vc[c].last_progress = now_ns();
	}
	tc_store_relaxed(&vn->epoch, vn->epoch + 1);
	tc_store_relaxed(&vn->failed, false);
	tc_store_relaxed(&vn->pid, pid);
	for (uint32_t r = 0; r < CH_MAX_REGIONS; r++)
		if (vn->grants[r])
			vnf_ctrl_all(s, vn, VNF_CTRL_GRANT, r);
	fprintf(stderr, "chain: vnf %s reopened for pid %d\n", vn->name, pid);
}

static unsigned int vnf_collect(struct ch_psched *s, struct vnf *vn)
{
	uint32_t idx[BURST];
	unsigned int total = 0;

	for (uint32_t c = 0; c < vn->nthreads && !vn->failed; c++) {
		struct vchan *vc = &vn->vc[c];
		int n;

		if (!vc->outstanding)
			continue;
		n = tcr_chan_recv(&vn->chan[c], vn->pool, TCR_CH_TX, idx, BURST);
		if (n < 0) {
			vnf_fail(s, vn, n == -EPERM ? "returned a descriptor it was not given"
						    : "corrupt ring");
			break;
		}
		if (n == 0)
			continue;
		vc->last_progress = now_ns();
		for (int i = 0; i < n; i++) {
			struct tcr_desc *d = tcr_region_desc(vn->r, idx[i]);
			struct vdesc vd = vn->vd[idx[i]];
			/* The only fields read back, each once. */
			uint32_t verdict = tc_load_relaxed(&d->arg);
			uint32_t rule = tc_load_relaxed(&d->deny_rule);

			vc->outstanding--;
			if (vd.flight != FLIGHT_CTRL) {
				stat_add(&vn->verdicts, 1);
				verdict_in(s, vn, &vd, verdict, rule, false);
			}
		}
		tcr_pool_free(vn->pool, idx, (unsigned int)n);
		pool_note(vn);
		tc_store_relaxed(&vc->outstanding, vc->outstanding);
		total += (unsigned int)n;
	}
	return total;
}

static bool pid_dead(int pid)
{
	char path[64], buf[256];
	FILE *f;
	char *p;
	bool dead = false;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) && errno == ESRCH)
		return true;
	/* A zombie still answers kill(): look at its state. */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		dead = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return dead;
}

static void liveness(struct ch_psched *s, uint32_t nvnfs)
{
	for (uint32_t v = 0; v < nvnfs; v++) {
		struct vnf *vn = &s->vnf[v];
		int rp = tc_load_acquire(&vn->restart_pid);
		/* Per VNF: failing one may just have dispatched work to the next. */
		uint64_t now = now_ns();

		if (rp >= 0) {
			tc_store_relaxed(&vn->restart_pid, -1);
			vnf_reopen(s, vn, rp);
			continue;
		}
		if (vn->failed)
			continue;
		if (pid_dead(tc_load_acquire(&vn->pid))) {
			vnf_fail(s, vn, "process died");
			continue;
		}
		for (uint32_t c = 0; c < vn->nthreads; c++)
			if (vn->vc[c].outstanding && now > vn->vc[c].last_progress &&
			    now - vn->vc[c].last_progress > s->cfg.hang_ns) {
				vnf_fail(s, vn, "no progress: hung");
				break;
			}
	}
}

/* Early-end flags the VNFs raised move to the chains' own counters. */
static void early_flags(struct ch_psched *s, uint32_t nvnfs)
{
	for (uint32_t v = 0; v < nvnfs; v++)
		for (uint32_t c = 0; c < s->cfg.nchains; c++) {
			struct tcr_chain_counters *vc = tcr_region_chain(s->vnf[v].r, c);
			uint32_t fl = vc ? tcr_counters_take_early(vc) : 0;

			if (fl)
				tcr_counters_raise_early(s->chain[c].ctr, fl);
		}
}

unsigned int ch_psched_poll(struct ch_psched *s)
{
	uint32_t nvnfs = tc_load_acquire(&s->nvnfs);
	unsigned int work = 0, released = 0;
	struct ch_table *tb, *next;
	uint32_t nstall;
	uint64_t now;

	for (tb = ch_tables_take_retired(s->tables); tb; tb = next) {
		next = tb->next;
		table_revoke(s, tb);
		free(tb);
		work++;
	}
	now = tcr_tsc_now();
	if (now >= s->next_check) {
		const struct tcr_tsc_cal *cal = tcr_tsc_calibration();

		liveness(s, nvnfs);
		early_flags(s, nvnfs);
		s->next_check = now + (cal->hz ? cal->hz / (1000000000ull / CHECK_NS) : CHECK_NS);
		/*
		 * Queue lengths.  The output queue's head belongs to its
		 * consumer (the TOE), so out_head_tsc is left to it.
		 */
		for (uint32_t c = 0; c < s->cfg.nchains; c++) {
			struct chain_rt *ch = &s->chain[c];

			tcr_counters_queues(ch->ctr, ch_queue_len(ch->in) + ch->inflight,
					    ch_queue_len(ch->out), 0);
		}
	}
	for (uint32_t v = 0; v < nvnfs; v++)
		work += vnf_collect(s, &s->vnf[v]);
	/* Retry stalled dispatches, oldest first, once each. */
	nstall = s->stail - s->shead;
	for (uint32_t i = 0; i < nstall; i++) {
		uint32_t id = s->stall[s->shead++ & s->flight_mask];
		struct flight *f = &s->fl[id];

		f->stalled = 0;
		if (f->state != FL_BUSY || !f->pending)
			continue;
		flight_dispatch(s, id);
		flight_advance(s, id);
	}
	for (uint32_t c = 0; c < s->cfg.nchains; c++) {
		unsigned int out;

		work += admit(s, c);
		out = release(s, c);
		work += out;
		released += out;
	}
	if (released)
		notify_results(s);
	for (uint32_t v = 0; v < nvnfs; v++)
		kick_channels(&s->vnf[v]);
	return work;
}

/* ---- the scheduler's own thread ------------------------------------ */

static bool inputs_empty(struct ch_psched *s)
{
	for (uint32_t c = 0; c < s->cfg.nchains; c++)
		if (ch_queue_len(s->chain[c].in))
			return false;
	return true;
}

/*
 * Nothing in flight: sleep until a submit rings the doorbell, or 50 ms
 * (liveness checks, retired tables, restarts keep going; with nothing in
 * flight none of them is urgent).  Returns true when the doorbell rang
 * (or the inputs were not empty), false on a timeout.
 */
static bool sched_sleep(struct ch_psched *s)
{
	struct timespec ts = { 0, 50000000 };
	uint32_t bell = tc_load_acquire(&s->doorbell);
	bool rang = true;

	tc_store_relaxed(&s->sleeping, 1);
	/* F1: the flag is visible before we re-check the queues; pairs with F2. */
	tc_fence_seq_cst();
	if (inputs_empty(s)) {
		syscall(SYS_futex, &s->doorbell, FUTEX_WAIT_PRIVATE, bell, &ts, NULL, 0);
		rang = tc_load_acquire(&s->doorbell) != bell;
	}
	tc_store_relaxed(&s->sleeping, 0);
	return rang;
}

#define SPIN_NS	50000ull	/* idle polling before napping or sleeping */
#define NAP_NS	50000		/* work out at the VNFs: look again after this */

/* Sleep NAP_NS, or until a submit rings the doorbell. */
static void sched_nap(struct ch_psched *s)
{
	struct timespec ts = { 0, NAP_NS };
	uint32_t bell = tc_load_acquire(&s->doorbell);

	tc_store_relaxed(&s->sleeping, 1);
	/* F1 again: the flag is visible before we re-check the queues. */
	tc_fence_seq_cst();
	if (inputs_empty(s))
		syscall(SYS_futex, &s->doorbell, FUTEX_WAIT_PRIVATE, bell, &ts, NULL, 0);
	tc_store_relaxed(&s->sleeping, 0);
}

static void *sched_main(void *arg)
{
	struct ch_psched *s = arg;
	const struct tcr_tsc_cal *cal = tcr_tsc_calibration();
	uint64_t spin = cal->invariant ? cal->hz / (1000000000ull / SPIN_NS) : SPIN_NS;
	uint64_t idle_since = 0;

	urcu_memb_register_thread();
	while (!tc_load_acquire(&s->stop)) {
		uint64_t now;

		if (ch_psched_poll(s)) {
			idle_since = 0;
			continue;
		}
		/*
		 * Poll under load and for a short while after.  Then, with
		 * work out at the VNFs, keep polling but yield the CPU (VNFs
		 * may share it); with nothing in flight sleep until a submit.
		 */
		now = tcr_tsc_now();
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < spin) {
			tc_cpu_relax();
			continue;
		}
		if (s->nfree != s->cfg.max_flight || s->shead != s->stail) {
			/*
			 * Work out at the VNFs: their verdicts do not wake
			 * this thread, so look again soon.  A short sleep, not
			 * a sched_yield() loop: yielding spun in the kernel at
			 * a whole CPU (perf: the TOE process's kernel time was
			 * the largest item of a chained request, 2.5 CPU-ms),
			 * taking the CPU from the VNFs it waits for.  A submit
			 * rings the doorbell and ends the sleep early.
			 */
			sched_nap(s);
			continue;
		}
		/*
		 * A timed-out sleep found nothing to do: sleep again without
		 * the polling phase, so that an idle scheduler costs a short
		 * poll every 50 ms and nothing more.
		 */
		if (sched_sleep(s))
			idle_since = 0;
		else
			idle_since = tcr_tsc_now() - spin - 1;
	}
	urcu_memb_unregister_thread();
	return NULL;
}

int ch_psched_start(struct ch_psched *s)
{
	int err;

	if (s->running)
		return -EBUSY;
	tc_store_relaxed(&s->stop, 0);
	err = pthread_create(&s->thread, NULL, sched_main, s);
	if (err)
		return -err;
	s->running = true;
	return 0;
}

void ch_psched_stop(struct ch_psched *s)
{
	if (!s->running)
		return;
	tc_store_release(&s->stop, 1);
	pthread_join(s->thread, NULL);
	s->running = false;
}
