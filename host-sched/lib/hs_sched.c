// SPDX-License-Identifier: MIT
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "hs_gang.h"
#include "hs_prio.h"
#include "hs_sched.h"
#include "hs_vmshare.h"

struct hs_sched {
	struct hs_sched_cfg cfg;
	struct hs_chain_quota *q;	/* this period's (fed back) */
	struct hs_chain_quota *q0;	/* admission's, eq. 2 from f */
	struct hs_rate *rate;		/* [chain * HS_MAX_VNFS + vnf] */
	uint64_t admitted_ticks;	/* sum of q0 */
	double *prio;			/* H_i of eq. 1 */
	double *place;			/* what Algorithm 1 orders by */
	uint64_t *head_ts;		/* per VM */
	struct hs_vmgrant *grant;	/* scratch, longest RQ_vm */
	struct hs_gang_ws *ws;
	struct hs_vmrq *rq;
	uint32_t nvmvcpu;
	uint32_t nvnfvcpu;
};

static int check_cfg(const struct hs_sched_cfg *cfg, char *why, size_t whylen)
{
	uint32_t i;

	if (!cfg || cfg->npcpu == 0 || cfg->g == 0 || !(cfg->period_s > 0) ||
	    (cfg->nchain && !cfg->chains) || (cfg->nvm && !cfg->vms)) {
		snprintf(why, whylen, "bad scheduler configuration");
		return -EINVAL;
	}
	for (i = 0; i < cfg->nchain; i++) {
		int32_t vm = cfg->chains[i].vm;

		if (vm >= 0 && (uint32_t)vm >= cfg->nvm) {
			snprintf(why, whylen, "chain %s: VM index %" PRId32 " out of range",
				 cfg->chains[i].name ? cfg->chains[i].name : "?", vm);
			return -EINVAL;
		}
	}
	for (i = 0; i < cfg->nvm; i++) {
		if (cfg->vms[i].nvcpu > HS_MAX_VM_VCPUS) {
			snprintf(why, whylen, "VM %s: too many vCPUs",
				 cfg->vms[i].name ? cfg->vms[i].name : "?");
			return -EINVAL;
		}
	}
	return 0;
}

struct hs_sched *hs_sched_create(const struct hs_sched_cfg *cfg, char *why,
				 size_t whylen)
{
	struct hs_sched *s;
	uint32_t i, v;
	char dummy[1];
	int rc;

	if (!why) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	rc = check_cfg(cfg, why, whylen);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto out_nomem;
	s->cfg = *cfg;
	for (i = 0; i < cfg->nvm; i++)
		s->nvmvcpu += cfg->vms[i].nvcpu;
	s->q = calloc(cfg->nchain ? cfg->nchain : 1, sizeof(*s->q));
	s->q0 = calloc(cfg->nchain ? cfg->nchain : 1, sizeof(*s->q0));
	s->rate = calloc((size_t)(cfg->nchain ? cfg->nchain : 1) * HS_MAX_VNFS, sizeof(*s->rate));
	s->prio = calloc(cfg->nchain ? cfg->nchain : 1, sizeof(*s->prio));
	s->place = calloc(cfg->nchain ? cfg->nchain : 1, sizeof(*s->place));
	s->head_ts = calloc(cfg->nvm ? cfg->nvm : 1, sizeof(*s->head_ts));
	s->grant = calloc(s->nvmvcpu ? s->nvmvcpu : 1, sizeof(*s->grant));
	if (!s->q || !s->q0 || !s->rate || !s->prio || !s->place || !s->head_ts || !s->grant)
		goto out_free;
	rc = hs_admit(cfg->chains, cfg->nchain, cfg->npcpu, cfg->g, s->q, why,
		      whylen);
	if (rc) {
		hs_sched_destroy(s);
		errno = -rc;
		return NULL;
	}
	for (i = 0; i < cfg->nchain; i++) {
		s->nvnfvcpu += s->q[i].nvcpu;
		s->admitted_ticks += s->q[i].ticks;
		s->q0[i] = s->q[i];
		for (v = 0; v < cfg->chains[i].nvnf; v++)
			hs_rate_init(&s->rate[i * HS_MAX_VNFS + v], cfg->chains[i].vnf[v].f_pps);
	}
	s->ws = hs_gang_ws_create(cfg->nchain, cfg->npcpu, cfg->g);
	s->rq = hs_vmrq_create(cfg->npcpu, s->nvmvcpu ? s->nvmvcpu : 1);
	if (!s->ws || !s->rq)
		goto out_free;
	/* VM vCPUs round the queues, one VM after the other. */
	for (i = 0; i < cfg->nvm; i++)
		for (v = 0; v < cfg->vms[i].nvcpu; v++)
			if (hs_vmrq_add(s->rq, cfg->vms[i].vcpu[v], i) < 0)
				goto out_free;
	return s;

out_free:
	hs_sched_destroy(s);
out_nomem:
	snprintf(why, whylen, "out of memory");
	errno = ENOMEM;
	return NULL;
}

void hs_sched_destroy(struct hs_sched *s)
{
	if (!s)
		return;
	hs_vmrq_destroy(s->rq);
	hs_gang_ws_destroy(s->ws);
	free(s->grant);
	free(s->head_ts);
	free(s->place);
	free(s->prio);
	free(s->rate);
	free(s->q0);
	free(s->q);
	free(s);
}

uint32_t hs_sched_plan_cap(const struct hs_sched *s)
{
	return s->nvnfvcpu + s->nvmvcpu;
}

/* The fed-back quotas of this period into s->q; see hs_sched.h. */
static void feedback(struct hs_sched *s, const struct hs_chain_stats *st)
{
	const struct hs_sched_cfg *c = &s->cfg;
	uint64_t total = 0, fed = 0, cap;
	uint32_t i, k;

	for (i = 0; i < c->nchain; i++) {
		struct hs_chain_quota *q = &s->q[i];

		q->ticks = 0;
		for (k = 0; k < c->chains[i].nvnf; k++) {
			struct hs_rate *r = &s->rate[i * HS_MAX_VNFS + k];

			if (st[i].busy_s[k] > 0.0)
				hs_rate_update(r, st[i].served, st[i].busy_s[k]);
			q->q[k].ticks = r->samples ?
				hs_rate_ticks(r, c->chains[i].sla_pps, c->g, q->q[k].threads) :
				s->q0[i].q[k].ticks;
			q->ticks += (uint64_t)q->q[k].threads * q->q[k].ticks;
			if (r->samples)
				fed += (uint64_t)q->q[k].threads * q->q[k].ticks;
		}
		total += q->ticks;
	}
	cap = (uint64_t)(HS_FEEDBACK_SHARE * c->npcpu * c->g);
	if (cap < s->admitted_ticks)
		cap = s->admitted_ticks;
	if (total <= cap || fed == 0)
		return;
	/* Scale the fed-back part so that the total fits (at least 1 tick). */
	for (i = 0; i < c->nchain; i++) {
		struct hs_chain_quota *q = &s->q[i];
		double f = total - fed >= cap ? 0.0 : (double)(cap - (total - fed)) / (double)fed;

		q->ticks = 0;
		for (k = 0; k < c->chains[i].nvnf; k++) {
			if (s->rate[i * HS_MAX_VNFS + k].samples) {
				uint32_t t = (uint32_t)(q->q[k].ticks * f);

				q->q[k].ticks = t ? t : 1;
			}
			q->ticks += (uint64_t)q->q[k].threads * q->q[k].ticks;
		}
	}
}

int hs_sched_plan(struct hs_sched *s, const struct hs_chain_stats *st,
		  struct hs_plan *plan)
{
	const struct hs_sched_cfg *c = &s->cfg;
	uint32_t i, j;
	int placed, rc;

	if (!plan || plan->npcpu != c->npcpu || plan->g != c->g ||
	    (c->nchain && !st))
		return -EINVAL;
	hs_plan_reset(plan);
	feedback(s, st);
	for (i = 0; i < c->nchain; i++) {
		s->prio[i] = hs_prio(st[i].in, st[i].finished, st[i].left,
				     (double)c->chains[i].sla_pps * c->period_s);
		/* place_idle: below every H > 0 (H >= T/(F + T^2) there) */
		s->place[i] = s->prio[i] > 0.0 || !c->place_idle ? s->prio[i] : DBL_MIN;
	}
	placed = hs_gang_place(c->chains, s->q, s->place, c->nchain, s->ws, plan);
	if (placed < 0)
		return placed;

	for (i = 0; i < c->nvm; i++)
		s->head_ts[i] = HS_TS_EMPTY;
	for (i = 0; i < c->nchain; i++) {
		int32_t vm = c->chains[i].vm;

		if (vm >= 0 && st[i].oq_head_ts < s->head_ts[vm])
			s->head_ts[vm] = st[i].oq_head_ts;
	}
	for (j = 0; j < c->npcpu; j++) {
		uint32_t l, d;
		const struct hs_vment *q = hs_vmrq_queue(s->rq, j, &l);

		rc = hs_vmshare(q, l, s->head_ts, c->nvm, c->g,
				plan->vnf_ticks[j], s->grant);
		if (rc < 0)
			return rc;
		for (d = 0; d < l; d++) {
			if (s->grant[d].ticks == 0)
				continue;
			rc = hs_plan_add(plan, j, s->grant[d].vcpu, HS_NO_CHAIN,
					 s->grant[d].vm, s->grant[d].ticks,
					 HS_KIND_VM);
			if (rc)
				return rc;
		}
	}
	hs_plan_finish(plan);
	return placed;
}

uint32_t hs_sched_rebalance(struct hs_sched *s)
{
	return hs_vmrq_rebalance(s->rq);
}

const struct hs_chain_quota *hs_sched_quota(const struct hs_sched *s,
					    uint32_t chain)
{
	return chain < s->cfg.nchain ? &s->q[chain] : NULL;
}

const struct hs_rate *hs_sched_rate(const struct hs_sched *s, uint32_t chain,
				    uint32_t vnf)
{
	if (chain >= s->cfg.nchain || vnf >= s->cfg.chains[chain].nvnf)
		return NULL;
	return &s->rate[chain * HS_MAX_VNFS + vnf];
}

int hs_sched_set_rate(struct hs_sched *s, uint32_t chain, uint32_t vnf,
		      const struct hs_rate *r)
{
	struct hs_rate *mine;

	if (!r || chain >= s->cfg.nchain || vnf >= s->cfg.chains[chain].nvnf)
		return -EINVAL;
	mine = &s->rate[chain * HS_MAX_VNFS + vnf];
	if (mine->cal_cost_s != r->cal_cost_s)
		return -EINVAL;
	*mine = *r;
	return 0;
}

double hs_sched_prio(const struct hs_sched *s, uint32_t chain)
{
	return chain < s->cfg.nchain ? s->prio[chain] : 0.0;
}

const struct hs_vmrq *hs_sched_vmrq(const struct hs_sched *s)
{
	return s->rq;
}
