// SPDX-License-Identifier: MIT
/*
 * Tick-stepped simulation of one (scenario, mode, load) run.  Quantities
 * of packets are fluid (double); what the library sees is rounded down to
 * whole packets, as a daemon's counters would be.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tochain/util.h"

#include "hs_admit.h"
#include "hs_cfs.h"
#include "hs_early.h"
#include "hs_plan.h"
#include "hs_sched.h"
#include "hs_sim.h"
#include "hs_vmshare.h"

#define EPS 1e-9
#define NBATCH 64		/* output-queue arrival batches kept per chain */

struct batch {
	double t;		/* slice number it entered the output queue */
	double n;
};

struct chs {
	double A, D, recv;	/* cumulative: accepted, finished, received */
	double drop, offered;
	double done[HS_MAX_VNFS][HS_MAX_THREADS];
	double run[HS_MAX_VNFS][HS_MAX_THREADS];	/* CPU share this slice */
	uint32_t nsync;
	uint32_t hop_of[HS_MAX_VNFS];
	uint32_t threads[HS_MAX_VNFS];
	double f[HS_MAX_VNFS];
	double svc_cost;	/* service CPU seconds per packet */
	double phase_ms;
	double in_hop[HS_SCN_MAX_HOPS + 1];
	/* period snapshots */
	double A_p, D_p, recv_p;
	bool dry;		/* its receiver ran with nothing to take */
	struct hs_rxwin win;
	struct batch b[NBATCH];
	uint32_t bh, bn;
	/* measurement snapshots and integrals */
	double A_w, recv_w, drop_w, off_w, inq_int, outq_int;
};

struct vc {
	uint8_t kind;
	uint32_t chain, sk, r, vm;
};

struct run {
	const struct hs_scn *scn;
	enum hs_sim_mode mode;
	const struct hs_scn_load *load;
	uint32_t nsync_cpu, nvc, nchain, nvm;
	double dt;		/* seconds per slice */
	struct chs *ch;
	struct vc *vc;		/* vCPU id -> what it is */
	struct hs_chain_cfg *cfg;
	struct hs_vm_cfg *vmcfg;
	struct hs_chain_quota *q;
	uint32_t **vm_chains;	/* per VM: its chains */
	uint32_t *vm_nchains;
	double *vmcap;
	int64_t *runner;	/* sync: per pCPU, vCPU id or -1, this tick */
	uint32_t *act;		/* vCPUs with a CPU share this slice */
	double *frac;		/* per vCPU: share of this slice */
	uint32_t nact;
	/* sync */
	struct hs_sched *sched;
	struct hs_plan *plan;
	uint32_t *cur, *used, *rr;
	struct hs_chain_stats *st;
	double *plan_us;
	uint64_t nplan, nplan_cap;
	/* cfs */
	struct hs_cfs_vcpu *cv;
	uint32_t *scratch;
	double *demand;
	/* accounting */
	double busy_sync, busy_svc;
	bool measuring;
};

const char *hs_sim_mode_name(enum hs_sim_mode mode)
{
	return mode == HS_SIM_SYNC ? "sync" : "cfs";
}

/* Offered rate of chain @i at time @t_ms. */
static double rate(const struct run *R, uint32_t i, double t_ms)
{
	const struct hs_scn_load *l = R->load;
	double mean = l->scale * (double)R->scn->chain[i].sla_pps, cyc, x;

	if (l->off_ms <= 0)
		return mean;
	cyc = l->on_ms + l->off_ms;
	x = fmod(t_ms + R->ch[i].phase_ms, cyc);
	return x < l->on_ms ? mean * cyc / l->on_ms : 0.0;
}

static void free_run(struct run *R)
{
	uint32_t i;

	if (R->vm_chains)
		for (i = 0; i < R->nvm; i++)
			free(R->vm_chains[i]);
	free(R->vm_chains);
	free(R->vm_nchains);
	free(R->demand);
	free(R->scratch);
	free(R->cv);
	free(R->plan_us);
	free(R->st);
	free(R->rr);
	free(R->used);
	free(R->cur);
	hs_plan_destroy(R->plan);
	hs_sched_destroy(R->sched);
	free(R->runner);
	free(R->act);
	free(R->frac);
	free(R->vmcap);
	free(R->q);
	free(R->vmcfg);
	free(R->cfg);
	free(R->vc);
	free(R->ch);
}

/* Library configuration and vCPU table from the scenario. */
static int build(struct run *R, char *err, size_t errlen)
{
	const struct hs_scn *s = R->scn;
	uint32_t i, h, k, r, v, id = 0, nvc = 0;
	int rc;

	R->nchain = s->nchain;
	R->nvm = s->nvm;
	R->nsync_cpu = s->cores - s->service;
	R->ch = calloc(s->nchain, sizeof(*R->ch));
	R->cfg = calloc(s->nchain, sizeof(*R->cfg));
	R->q = calloc(s->nchain, sizeof(*R->q));
	R->vmcfg = calloc(s->nvm, sizeof(*R->vmcfg));
	R->vmcap = calloc(s->nvm, sizeof(*R->vmcap));
	R->vm_nchains = calloc(s->nvm, sizeof(*R->vm_nchains));
	R->vm_chains = calloc(s->nvm, sizeof(*R->vm_chains));
	R->runner = calloc(R->nsync_cpu, sizeof(*R->runner));
	if (!R->ch || !R->cfg || !R->q || !R->vmcfg || !R->vmcap ||
	    !R->vm_nchains || !R->vm_chains || !R->runner)
		return -ENOMEM;

	for (i = 0; i < s->nchain; i++) {
		const struct hs_scn_chain *sc = &s->chain[i];
		struct hs_chain_cfg *c = &R->cfg[i];
		struct chs *x = &R->ch[i];

		c->name = sc->name;
		c->sla_pps = sc->sla_pps;
		c->vm = (int32_t)sc->vm;
		for (h = 0; h < sc->nhop; h++) {
			for (k = 0; k < sc->hop_n[h]; k++) {
				const struct hs_scn_vnf *f = &s->vnf[sc->hop_vnf[h][k]];

				if (f->service) {
					x->svc_cost += 1.0 / (double)f->f_pps;
					continue;
				}
				c->vnf[c->nvnf].name = f->name;
				c->vnf[c->nvnf].f_pps = f->f_pps;
				c->vnf[c->nvnf].max_threads = f->threads;
				x->hop_of[c->nvnf] = h;
				x->f[c->nvnf] = (double)f->f_pps;
				c->nvnf++;
			}
		}
		x->nsync = c->nvnf;
		x->svc_cost += s->svc_cost_us * 1e-6;
		/* spread burst phases deterministically (golden ratio) */
		x->phase_ms = fmod(i * 0.6180339887 * (R->load->on_ms + R->load->off_ms),
				   R->load->on_ms + R->load->off_ms + EPS);
		hs_rxwin_init(&x->win, s->window);
		R->vm_nchains[sc->vm]++;
	}
	for (v = 0; v < s->nvm; v++) {
		R->vm_chains[v] = calloc(R->vm_nchains[v] ? R->vm_nchains[v] : 1,
					 sizeof(uint32_t));
		if (!R->vm_chains[v])
			return -ENOMEM;
		R->vm_nchains[v] = 0;
	}
	for (i = 0; i < s->nchain; i++) {
		v = s->chain[i].vm;
		R->vm_chains[v][R->vm_nchains[v]++] = i;
	}

	/* Quotas and thread counts (both modes run the same threads). */
	rc = hs_admit(R->cfg, s->nchain, R->nsync_cpu, s->period, R->q, err, errlen);
	if (rc) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "admission refused: %s", why);
		return -EINVAL;
	}
	for (i = 0; i < s->nchain; i++) {
		for (k = 0; k < R->cfg[i].nvnf; k++) {
			R->ch[i].threads[k] = R->q[i].q[k].threads;
			nvc += R->q[i].q[k].threads;
		}
	}
	for (v = 0; v < s->nvm; v++)
		nvc += s->vm[v].nvcpu;
	R->nvc = nvc;
	R->vc = calloc(nvc ? nvc : 1, sizeof(*R->vc));
	R->act = calloc(nvc ? nvc : 1, sizeof(*R->act));
	R->frac = calloc(nvc ? nvc : 1, sizeof(*R->frac));
	if (!R->vc || !R->act || !R->frac)
		return -ENOMEM;
	for (i = 0; i < s->nchain; i++) {
		for (k = 0; k < R->cfg[i].nvnf; k++) {
			for (r = 0; r < R->q[i].q[k].threads; r++) {
				R->cfg[i].vnf[k].vcpu[r] = id;
				R->vc[id] = (struct vc){ HS_KIND_VNF, i, k, r, 0 };
				id++;
			}
		}
	}
	for (v = 0; v < s->nvm; v++) {
		R->vmcfg[v].name = s->vm[v].name;
		R->vmcfg[v].nvcpu = s->vm[v].nvcpu;
		for (r = 0; r < s->vm[v].nvcpu; r++) {
			R->vmcfg[v].vcpu[r] = id;
			R->vc[id] = (struct vc){ HS_KIND_VM, HS_NO_CHAIN, 0, r, v };
			id++;
		}
	}
	return 0;
}

static int setup_sync(struct run *R, char *err, size_t errlen)
{
	const struct hs_scn *s = R->scn;
	struct hs_sched_cfg cfg = {
		.npcpu = R->nsync_cpu, .g = s->period,
		.period_s = s->period * s->tick_ms / 1000.0,
		.nchain = s->nchain, .chains = R->cfg,
		.nvm = s->nvm, .vms = R->vmcfg,
	};
	char why[256];

	R->sched = hs_sched_create(&cfg, why, sizeof(why));
	if (!R->sched) {
		snprintf(err, errlen, "admission refused: %s", why);
		return errno == ENOMEM ? -ENOMEM : -EINVAL;
	}
	R->plan = hs_plan_create(R->nsync_cpu, s->period, hs_sched_plan_cap(R->sched));
	R->cur = calloc(R->nsync_cpu, sizeof(*R->cur));
	R->used = calloc(R->nsync_cpu, sizeof(*R->used));
	R->rr = calloc(R->nsync_cpu, sizeof(*R->rr));
	R->st = calloc(s->nchain, sizeof(*R->st));
	R->nplan_cap = (uint64_t)(s->duration_s * 1000.0 / s->tick_ms / s->period) + 2;
	R->plan_us = calloc(R->nplan_cap, sizeof(*R->plan_us));
	if (!R->plan || !R->cur || !R->used || !R->rr || !R->st || !R->plan_us)
		return -ENOMEM;
	return 0;
}

static int setup_cfs(struct run *R)
{
	double *pl;
	uint32_t i;
	int rc;

	R->cv = calloc(R->nvc ? R->nvc : 1, sizeof(*R->cv));
	R->scratch = calloc(R->nvc ? R->nvc : 1, sizeof(*R->scratch));
	R->demand = calloc(R->nvc ? R->nvc : 1, sizeof(*R->demand));
	if (!R->cv || !R->scratch || !R->demand)
		return -ENOMEM;
	for (i = 0; i < R->nvc; i++) {
		R->cv[i].vcpu = i;
		R->cv[i].kind = R->vc[i].kind;
		R->cv[i].chain = R->vc[i].chain;
		R->cv[i].owner = R->vc[i].kind == HS_KIND_VNF ? R->vc[i].sk : R->vc[i].vm;
	}
	/* Expected CPU share of each vCPU at the offered load: what a
	 * load-based balancer would see and even out. */
	for (i = 0; i < R->nvc; i++) {
		const struct vc *c = &R->vc[i];
		double l;

		if (c->kind == HS_KIND_VNF) {
			const struct chs *x = &R->ch[c->chain];

			l = R->load->scale * (double)R->scn->chain[c->chain].sla_pps /
				(x->threads[c->sk] * x->f[c->sk]);
		} else {
			const struct hs_scn_vm *vm = &R->scn->vm[c->vm];
			uint32_t m;

			l = 0;
			for (m = 0; m < R->vm_nchains[c->vm]; m++)
				l += R->load->scale *
					(double)R->scn->chain[R->vm_chains[c->vm][m]].sla_pps;
			l = l / (vm->rx_pps * vm->nvcpu) + vm->busy;
		}
		R->demand[i] = l > 1.0 ? 1.0 : l;
	}
	pl = calloc(R->nsync_cpu, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	rc = hs_cfs_place(R->cv, R->demand, R->nvc, R->nsync_cpu, R->scratch, pl);
	free(pl);
	return rc;
}

static double head_ts(const struct chs *x)
{
	return x->bn ? x->b[x->bh].t : -1.0;
}

static void oq_push(struct chs *x, double t, double n)
{
	uint32_t tail;

	if (n <= 0)
		return;
	if (x->bn == NBATCH) {	/* full: fold into the newest batch */
		x->b[(x->bh + NBATCH - 1) % NBATCH].n += n;
		return;
	}
	tail = (x->bh + x->bn) % NBATCH;
	x->b[tail].t = t;
	x->b[tail].n = n;
	x->bn++;
}

static double oq_take(struct chs *x, double want)
{
	double got = 0;

	while (want > EPS && x->bn) {
		struct batch *b = &x->b[x->bh];
		double t = b->n < want ? b->n : want;

		b->n -= t;
		want -= t;
		got += t;
		if (b->n <= EPS) {
			x->bh = (x->bh + 1) % NBATCH;
			x->bn--;
		}
	}
	return got;
}

/* Inputs of every hop from the current state (hop h gets in_hop[h]). */
static void hop_inputs(struct chs *x, const struct hs_scn_chain *sc)
{
	uint32_t h, k, r;

	x->in_hop[0] = x->A;
	for (h = 0; h < sc->nhop; h++) {
		double out = x->in_hop[h];

		for (k = 0; k < x->nsync; k++) {
			double sum = 0;

			if (x->hop_of[k] != h)
				continue;
			for (r = 0; r < x->threads[k]; r++)
				sum += x->done[k][r];
			if (sum < out)
				out = sum;
		}
		x->in_hop[h + 1] = out;
	}
}

/* Traffic of one slice into the input queues (drop beyond qcap). */
static void arrive(struct run *R, double slice_no)
{
	const struct hs_scn *s = R->scn;
	double t_ms = slice_no * R->dt * 1000.0;
	uint32_t i;

	for (i = 0; i < R->nchain; i++) {
		struct chs *x = &R->ch[i];
		double a = rate(R, i, t_ms) * R->dt;
		double room = s->chain[i].qcap - (x->A - x->D);
		double acc = a < room ? a : (room > 0 ? room : 0);

		x->A += acc;
		x->offered += a;
		x->drop += a - acc;
		if (R->measuring)
			R->busy_svc += acc * x->svc_cost;
	}
}

/* One slice: the vCPUs in act[] run for frac[] of it: VNF processing,
 * VM receiving, accounting. */
static void step(struct run *R, double slice_no)
{
	const struct hs_scn *s = R->scn;
	uint32_t i, a, k, r, h, v;

	for (v = 0; v < R->nvm; v++)
		R->vmcap[v] = 0;
	for (a = 0; a < R->nact; a++) {
		uint32_t id = R->act[a];
		const struct vc *c = &R->vc[id];

		if (c->kind == HS_KIND_VNF)
			R->ch[c->chain].run[c->sk][c->r] = R->frac[id];
		else
			R->vmcap[c->vm] += s->vm[c->vm].rx_pps * R->dt * R->frac[id];
	}
	for (i = 0; i < R->nchain; i++) {
		struct chs *x = &R->ch[i];
		const struct hs_scn_chain *sc = &s->chain[i];
		double in;

		x->in_hop[0] = x->A;
		for (h = 0; h < sc->nhop; h++) {
			double out;

			in = x->in_hop[h];
			out = in;
			for (k = 0; k < x->nsync; k++) {
				double sum = 0, share;

				if (x->hop_of[k] != h)
					continue;
				share = in / x->threads[k];
				for (r = 0; r < x->threads[k]; r++) {
					if (x->run[k][r] > 0) {
						double can = x->f[k] * R->dt * x->run[k][r];
						double todo = share - x->done[k][r];
						double d = todo < can ? todo : can;

						if (d > 0) {
							x->done[k][r] += d;
							if (R->measuring)
								R->busy_sync += d / x->f[k];
						}
						x->run[k][r] = 0;
					}
					sum += x->done[k][r];
				}
				if (sum < out)
					out = sum;
			}
			x->in_hop[h + 1] = out;
		}
		in = x->in_hop[sc->nhop];
		if (in > x->D + EPS) {
			oq_push(x, slice_no, in - x->D);
			x->D = in;
		}
	}
	for (v = 0; v < R->nvm; v++) {
		double cap = R->vmcap[v], recv_s = 0, cpu_s;

		while (cap > EPS) {
			struct chs *best = NULL;
			uint32_t m;
			double got;

			for (m = 0; m < R->vm_nchains[v]; m++) {
				struct chs *x = &R->ch[R->vm_chains[v][m]];

				if (x->bn && (!best || head_ts(x) < head_ts(best)))
					best = x;
			}
			if (!best)
				break;
			got = oq_take(best, cap);
			if (got <= 0)
				break;
			best->recv += got;
			cap -= got;
			recv_s += got / s->vm[v].rx_pps;
		}
		if (R->vmcap[v] > 0 && cap > EPS) {
			uint32_t m;

			/* ran out of packets while running: not saturated */
			for (m = 0; m < R->vm_nchains[v]; m++)
				R->ch[R->vm_chains[v][m]].dry = true;
		}
		if (!R->measuring || R->vmcap[v] <= 0)
			continue;
		/* CPU the VM got this slice; receiving comes first, its own
		 * work (busy) uses what is left, up to busy per vCPU */
		cpu_s = R->vmcap[v] / s->vm[v].rx_pps;
		R->busy_sync += recv_s;
		if (s->vm[v].busy > 0) {
			double own = cpu_s - recv_s, most = s->vm[v].busy *
				s->vm[v].nvcpu * R->dt;

			R->busy_sync += own < most ? (own > 0 ? own : 0) : most;
		}
	}
	if (R->measuring) {
		for (i = 0; i < R->nchain; i++) {
			struct chs *x = &R->ch[i];

			x->inq_int += (x->A - x->D) * R->dt;
			x->outq_int += (x->D - x->recv) * R->dt;
		}
	}
}

static uint64_t whole(double x)
{
	return x > 0 ? (uint64_t)floor(x + EPS) : 0;
}

/* Period boundary in sync mode: counters, window, plan (timed). */
static int period_start(struct run *R, struct hs_sim_res *res, double slice_no)
{
	uint32_t i, j;
	double t0;
	int rc;

	for (i = 0; i < R->nchain; i++) {
		struct chs *x = &R->ch[i];

		R->st[i].in = whole(x->A - x->A_p);
		R->st[i].finished = whole(x->D - x->D_p);
		R->st[i].left = whole(x->A - x->D);
		R->st[i].oq_head_ts = x->bn ? (uint64_t)head_ts(x) : HS_TS_EMPTY;
		if (slice_no > 0) {
			uint64_t got = whole(x->recv - x->recv_p);

			if (R->scn->early_b == HS_SCN_EARLY_B_LITERAL)
				hs_rxwin_push(&x->win, got);
			else
				hs_rxwin_record(&x->win, got,
						!x->dry && whole(x->D - x->recv) > 0);
		}
		x->dry = false;
		x->A_p = x->A;
		x->D_p = x->D;
		x->recv_p = x->recv;
	}
	if (slice_no > 0)
		hs_sched_rebalance(R->sched);
	t0 = (double)tu_now_ns() / 1e3;
	rc = hs_sched_plan(R->sched, R->st, R->plan);
	if (rc < 0)
		return rc;
	if (R->nplan < R->nplan_cap)
		R->plan_us[R->nplan++] = (double)tu_now_ns() / 1e3 - t0;
	res->deferred += R->plan->ndeferred;
	for (j = 0; j < R->nsync_cpu; j++) {
		R->cur[j] = 0;
		R->used[j] = 0;
	}
	return 0;
}

/* Sync mode: who runs on each pCPU during this tick. */
static void pick_sync(struct run *R, struct hs_sim_res *res)
{
	const struct hs_vmrq *rq = hs_sched_vmrq(R->sched);
	uint32_t j;

	for (j = 0; j < R->nsync_cpu; j++) {
		uint32_t n, l;
		struct hs_slot *sl = R->plan->slot + R->plan->first[j];
		const struct hs_vment *q;

		n = R->plan->first[j + 1] - R->plan->first[j];
		R->runner[j] = -1;
		while (R->cur[j] < n) {
			struct hs_slot *x = &sl[R->cur[j]];

			if (R->used[j] >= x->ticks) {
				R->cur[j]++;
				R->used[j] = 0;
				continue;
			}
			if (x->kind == HS_KIND_VNF) {
				struct chs *c = &R->ch[x->chain];
				enum hs_early_reason why =
					hs_early_end(whole(c->A - c->D),
						     whole(c->D - c->recv),
						     R->scn->early_b == HS_SCN_EARLY_B_OFF ?
						     NULL : &c->win);

				if (why != HS_EARLY_NO) {
					x->early = 1;
					if (why == HS_EARLY_INPUT_EMPTY)
						res->early_input++;
					else
						res->early_output++;
					R->cur[j]++;
					R->used[j] = 0;
					continue;
				}
			}
			R->runner[j] = x->vcpu;
			R->used[j]++;
			break;
		}
		if (R->runner[j] >= 0)
			continue;
		/* Time freed by early ends goes to this pCPU's VM vCPUs. */
		q = hs_sched_vmrq(R->sched) ? hs_vmrq_queue(rq, j, &l) : NULL;
		if (q && l) {
			R->runner[j] = q[R->rr[j] % l].vcpu;
			R->rr[j]++;
		}
	}
}

/* Sync mode: this tick's runners each own the whole slice. */
static void act_sync(struct run *R)
{
	uint32_t j;

	R->nact = 0;
	for (j = 0; j < R->nsync_cpu; j++) {
		if (R->runner[j] < 0)
			continue;
		R->act[R->nact++] = (uint32_t)R->runner[j];
		R->frac[R->runner[j]] = 1.0;
	}
}

/*
 * CFS mode, once per slice: what each vCPU could use of the slice (VNF
 * thread: its pending share of the hop's input at f; VM vCPU: an equal
 * part of its VM's output queue at rx), then the fluid fair share.
 */
static int pick_cfs(struct run *R)
{
	const struct hs_scn *s = R->scn;
	uint32_t i;
	int rc;

	for (i = 0; i < R->nchain; i++)
		hop_inputs(&R->ch[i], &s->chain[i]);
	for (i = 0; i < R->nvc; i++) {
		const struct vc *c = &R->vc[i];

		if (c->kind == HS_KIND_VNF) {
			const struct chs *ch = &R->ch[c->chain];
			double share = ch->in_hop[ch->hop_of[c->sk]] / ch->threads[c->sk];

			R->demand[i] = (share - ch->done[c->sk][c->r]) /
				(ch->f[c->sk] * R->dt);
		} else {
			const struct hs_scn_vm *vm = &s->vm[c->vm];
			double o = 0;
			uint32_t m;

			for (m = 0; m < R->vm_nchains[c->vm]; m++) {
				const struct chs *x = &R->ch[R->vm_chains[c->vm][m]];

				o += x->D - x->recv;
			}
			R->demand[i] = o / (vm->rx_pps * R->dt * vm->nvcpu) + vm->busy;
		}
	}
	rc = hs_cfs_fair(R->cv, R->demand, R->nvc, R->nsync_cpu, R->frac, R->scratch);
	if (rc)
		return rc;
	R->nact = 0;
	for (i = 0; i < R->nvc; i++)
		if (R->frac[i] > 0)
			R->act[R->nact++] = i;
	return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void results(struct run *R, struct hs_sim_res *res, double meas_s)
{
	const struct hs_scn *s = R->scn;
	double sum = 0, sq = 0, *ach, *sla;
	uint32_t i, v, nv = 0;

	for (i = 0; i < R->nchain; i++) {
		struct chs *x = &R->ch[i];
		struct hs_sim_chain_res *c = &res->chain[i];

		c->offered = (x->offered - x->off_w) / meas_s;
		c->achieved = (x->recv - x->recv_w) / meas_s;
		c->dropped = (x->drop - x->drop_w) / meas_s;
		c->inq = x->inq_int / meas_s;
		c->outq = x->outq_int / meas_s;
		c->quota = (uint32_t)R->q[i].ticks;
		c->vcpus = R->q[i].nvcpu;
	}
	ach = calloc(s->nvm ? s->nvm : 1, sizeof(*ach));
	sla = calloc(s->nvm ? s->nvm : 1, sizeof(*sla));
	if (ach && sla) {
		for (i = 0; i < R->nchain; i++) {
			ach[s->chain[i].vm] += res->chain[i].achieved;
			sla[s->chain[i].vm] += (double)s->chain[i].sla_pps;
		}
		for (v = 0; v < s->nvm; v++) {
			double xv;

			if (sla[v] <= 0)
				continue;
			xv = ach[v] / sla[v];
			sum += xv;
			sq += xv * xv;
			nv++;
		}
	}
	res->jain = nv && sq > 0 ? sum * sum / (nv * sq) : 1.0;
	free(ach);
	free(sla);
	res->cpu_sync = R->busy_sync / (R->nsync_cpu * meas_s);
	res->cpu_service = s->service ? R->busy_svc / (s->service * meas_s) : 0;
	res->cpu_host = (R->busy_sync + R->busy_svc) / (s->cores * meas_s);
	res->periods = R->nplan;
	if (R->nplan) {
		qsort(R->plan_us, R->nplan, sizeof(double), cmp_dbl);
		res->plan_us_median = R->plan_us[R->nplan / 2];
		res->plan_us_p99 = R->plan_us[(R->nplan * 99) / 100];
		res->plan_us_max = R->plan_us[R->nplan - 1];
	}
}

/* The last plan, rendered by the library's formatter (what `sfc-ctl
 * sched show` prints); on allocation failure res->plan stays NULL. */
static void save_plan(struct run *R, struct hs_sim_res *res, bool json)
{
	size_t need = json ?
		hs_plan_format_json(R->plan, R->cfg, R->nchain, NULL, 0) :
		hs_plan_format_text(R->plan, R->cfg, R->nchain, NULL, 0);

	res->plan = malloc(need + 1);
	if (!res->plan)
		return;
	if (json)
		hs_plan_format_json(R->plan, R->cfg, R->nchain, res->plan, need + 1);
	else
		hs_plan_format_text(R->plan, R->cfg, R->nchain, res->plan, need + 1);
}

int hs_sim_run(const struct hs_scn *scn, enum hs_sim_mode mode, uint32_t load,
	       struct hs_sim_res *res, char *err, size_t errlen)
{
	struct run R;
	struct hs_sim_chain_res *keep = res->chain;
	int want_plan = res->want_plan;
	uint64_t ticks, warm, tk, sl;
	uint32_t i;
	int rc;

	memset(&R, 0, sizeof(R));
	memset(res, 0, sizeof(*res));
	res->chain = keep;
	res->want_plan = want_plan;
	res->mode = mode;
	res->load = load;
	if (load >= scn->nload || !keep) {
		snprintf(err, errlen, "bad run arguments");
		return -EINVAL;
	}
	R.scn = scn;
	R.mode = mode;
	R.load = &scn->load[load];
	R.dt = scn->tick_ms / 1000.0 / scn->slices;
	rc = build(&R, err, errlen);
	if (!rc)
		rc = mode == HS_SIM_SYNC ? setup_sync(&R, err, errlen) : setup_cfs(&R);
	if (rc) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		free_run(&R);
		return rc;
	}
	ticks = (uint64_t)llround(scn->duration_s * 1000.0 / scn->tick_ms);
	warm = (uint64_t)llround(scn->warmup_s * 1000.0 / scn->tick_ms);
	if (ticks == 0)
		ticks = 1;
	if (warm >= ticks)
		warm = ticks - 1;
	for (tk = 0; tk < ticks; tk++) {
		if (tk == warm) {
			R.measuring = true;
			for (i = 0; i < R.nchain; i++) {
				struct chs *x = &R.ch[i];

				x->A_w = x->A;
				x->recv_w = x->recv;
				x->drop_w = x->drop;
				x->off_w = x->offered;
			}
		}
		if (mode == HS_SIM_SYNC) {
			if (tk % scn->period == 0) {
				rc = period_start(&R, res, (double)(tk * scn->slices));
				if (rc)
					goto out_err;
			}
			pick_sync(&R, res);
			act_sync(&R);
		}
		for (sl = 0; sl < scn->slices; sl++) {
			double now = (double)(tk * scn->slices + sl);

			arrive(&R, now);
			if (mode == HS_SIM_CFS) {
				rc = pick_cfs(&R);
				if (rc)
					goto out_err;
			}
			step(&R, now);
		}
	}
	results(&R, res, (double)(ticks - warm) * scn->tick_ms / 1000.0);
	if (mode == HS_SIM_SYNC && want_plan)
		save_plan(&R, res, want_plan == 2);
	free_run(&R);
	return 0;

out_err:
	snprintf(err, errlen, "scheduler error %d", rc);
	free_run(&R);
	return rc;
}

int hs_sim_admit(const struct hs_scn *scn, char *err, size_t errlen)
{
	struct hs_scn_load none = { .scale = 0 };
	struct run R;
	int rc;

	memset(&R, 0, sizeof(R));
	R.scn = scn;
	R.load = scn->nload ? &scn->load[0] : &none;
	rc = build(&R, err, errlen);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free_run(&R);
	return rc;
}
