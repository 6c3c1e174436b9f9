// SPDX-License-Identifier: MIT
/* tochain-sched: the tick timeline of a period, per-tick freezer
 * gating and early end. */
#include <stdint.h>

#include <tochain/barrier.h>

#include "hs_daemon_int.h"

int32_t hsd_owner(const struct hsd *d, uint32_t pcpu, uint32_t k)
{
	if (pcpu >= d->cfg.npcpu || k >= d->cfg.g)
		return -1;
	return d->timeline[(size_t)pcpu * d->cfg.g + k];
}

/* Gives @owner @n free ticks of @pcpu, from tick @from on; returns how
 * many it found. */
static uint32_t fill(struct hsd *d, uint32_t pcpu, int32_t owner, uint32_t n, uint32_t from)
{
	int32_t *tl = d->timeline + (size_t)pcpu * d->cfg.g;
	uint32_t got = 0;

	for (uint32_t k = from; k < d->cfg.g && got < n; k++)
		if (tl[k] < 0) {
			tl[k] = owner;
			got++;
		}
	return got;
}

/*
 * The VM slots of @pcpu take its free ticks one tick each in turn, in
 * plan order (Algorithm 2's: the oldest output-queue head first), each up
 * to its planned ticks.  Contiguous slots would leave a VM thread frozen
 * for up to the other VM threads' whole slots while its connection waits
 * (a web server's master holding a slot its worker needs); in turn, a
 * thread waits at most one tick per other VM thread.
 */
static void interleave_vms(struct hsd *d, uint32_t pcpu)
{
	int32_t *tl = d->timeline + (size_t)pcpu * d->cfg.g;
	uint32_t *left = d->vmq_left[pcpu], nq = d->nvmq[pcpu], i = 0, todo = 0;

	for (uint32_t q = 0; q < nq; q++)
		todo += left[q];
	for (uint32_t k = 0; k < d->cfg.g && todo; k++) {
		if (tl[k] >= 0)
			continue;
		while (!left[i % nq])
			i++;
		tl[k] = d->vmq[pcpu][i % nq];
		left[i % nq]--;
		todo--;
		i++;
	}
}

/*
 * The plan on a tick timeline.  Chains in priority order; a chain's VNF
 * slots start at the same tick on all its pCPUs (the latest first free
 * tick among them), which may leave gaps; VM slots then take the free
 * ticks of their pCPU in plan order, gaps included.  If an aligned gang
 * would run past the period, its slots take the earliest free ticks
 * instead (unaligned, never lost).  VM slots are interleaved
 * (interleave_vms).
 */
void hsd_timeline_build(struct hsd *d)
{
	const struct hsd_cfgset *cs = d->cs;
	uint32_t g = d->cfg.g, npcpu = d->cfg.npcpu;
	uint32_t next[HSD_MAX_PCPU] = { 0 };
	uint32_t order[HSD_MAX_CHAINS];
	uint32_t n;

	for (size_t i = 0; i < (size_t)npcpu * g; i++)
		d->timeline[i] = -1;
	for (uint32_t t = 0; t < HSD_MAX_THREADS; t++) {
		d->given_up[t] = 0;
		d->thread[t].seen_k = NONE;
	}
	for (uint32_t c = 0; c < d->nchain; c++) {
		d->chain[c].standby = false;
		d->chain[c].ended_b = false;
	}
	for (uint32_t c = 0; c < cs->nchain; c++)
		order[c] = c;
	/* insertion sort by H, descending; stable */
	for (uint32_t i = 1; i < cs->nchain; i++) {
		uint32_t x = order[i], j = i;
		double hx = hs_sched_prio(d->sched, x);

		while (j > 0 && hs_sched_prio(d->sched, order[j - 1]) < hx) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	for (uint32_t oi = 0; oi < cs->nchain; oi++) {
		uint32_t c = order[oi], start = 0;
		bool fits = true;

		for (uint32_t j = 0; j < npcpu; j++) {
			const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

			for (uint32_t i = 0; i < n; i++)
				if (s[i].kind == HS_KIND_VNF && s[i].chain == c) {
					if (next[j] > start)
						start = next[j];
				}
		}
		for (uint32_t j = 0; j < npcpu; j++) {
			const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

			for (uint32_t i = 0; i < n; i++)
				if (s[i].kind == HS_KIND_VNF && s[i].chain == c &&
				    start + s[i].ticks > g)
					fits = false;
		}
		for (uint32_t j = 0; j < npcpu; j++) {
			const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

			for (uint32_t i = 0; i < n; i++) {
				if (s[i].kind != HS_KIND_VNF || s[i].chain != c)
					continue;
				fill(d, j, (int32_t)s[i].vcpu, s[i].ticks, fits ? start : 0);
				if (fits && start + s[i].ticks > next[j])
					next[j] = start + s[i].ticks;
			}
		}
	}
	for (uint32_t j = 0; j < npcpu; j++) {
		const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

		d->nvmq[j] = 0;
		d->vmq_rr[j] = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (s[i].kind != HS_KIND_VM)
				continue;
			if (d->nvmq[j] < HSD_MAX_VMQ) {
				d->vmq_left[j][d->nvmq[j]] = s[i].ticks;
				d->vmq[j][d->nvmq[j]++] = (int32_t)s[i].vcpu;
			} else {
				fill(d, j, (int32_t)s[i].vcpu, s[i].ticks, 0);
			}
		}
		interleave_vms(d, j);
	}
}

/* Ends the running VNF slots of registry chain @c on every pCPU from tick
 * @k on: their ticks go to the pCPU's VM threads in turn (given_up keeps
 * the count for a re-wake).  Returns how many slots it ended. */
static uint32_t early_end(struct hsd *d, uint32_t c, uint32_t k)
{
	uint32_t g = d->cfg.g, ended = 0;

	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t *tl = d->timeline + (size_t)j * g;
		int32_t o = tl[k];

		if (o < 0 || d->thread[o].role != HSD_ROLE_VNF || d->thread[o].chain != c)
			continue;
		for (uint32_t t = k; t < g; t++) {
			if (tl[t] != o)
				continue;
			if (d->nvmq[j]) {
				tl[t] = d->vmq[j][d->vmq_rr[j] % d->nvmq[j]];
				d->vmq_rr[j]++;
			} else {
				tl[t] = -1;
			}
			d->given_up[o]++;
		}
		d->chain[c].early_ends++;
		d->early_total++;
		ended++;
	}
	return ended;
}

/*
 * Re-wake: chain @c's slots ended early, and packets wait in its input
 * queue again.  Each of its VNF threads takes back, from tick @k on, as
 * many of its pCPU's ticks as it handed off (ticks that VM threads hold
 * or nobody does; another chain's VNF slots stay), so it never runs more
 * than its quota.  Without this a request that arrives after the input
 * queue went empty once waits for the next period: a closed-loop client
 * is then answered once per period (README, "Re-wake").  Returns true if
 * a thread got ticks back.
 */
static bool rewake(struct hsd *d, uint32_t c, uint32_t k)
{
	uint32_t g = d->cfg.g;
	bool any = false;

	for (uint32_t t = 0; t < d->nthread; t++) {
		uint32_t j = d->pcpu_of[t];
		int32_t *tl;

		if (!d->given_up[t] || d->thread[t].chain != c || d->thread[t].role != HSD_ROLE_VNF ||
		    j >= d->cfg.npcpu)
			continue;
		tl = d->timeline + (size_t)j * g;
		for (uint32_t x = k; x < g && d->given_up[t]; x++) {
			int32_t o = tl[x];

			if (o >= 0 && d->thread[o].role == HSD_ROLE_VNF)
				continue;
			tl[x] = (int32_t)t;
			d->given_up[t]--;
			any = true;
		}
	}
	if (any) {
		d->chain[c].rewakes++;
		d->rewake_total++;
	}
	return any;
}

static void forget_given_up(struct hsd *d, uint32_t c)
{
	for (uint32_t t = 0; t < d->nthread; t++)
		if (d->thread[t].chain == c && d->thread[t].role == HSD_ROLE_VNF)
			d->given_up[t] = 0;
}

/* Packets wait in chain @c's input queue (either direction's block)?  A
 * hint from the packet scheduler: at worst it gives the chain back ticks
 * of its own quota. */
static bool has_input(struct hsd *d, const struct hsd_chain *ch)
{
	const struct tcr_region *r = d->region[ch->region].r;
	const struct tcr_chain_counters *c1 = tcr_region_chain(r, ch->index);
	const struct tcr_chain_counters *c2 =
		ch->index2 != NONE ? tcr_region_chain(r, ch->index2) : NULL;

	return (c1 && tc_load_relaxed(&c1->in_qlen)) || (c2 && tc_load_relaxed(&c2->in_qlen));
}

/* Does a VNF thread of registry chain @c own a tick @k slot? */
static bool runs_at(const struct hsd *d, uint32_t c, uint32_t k)
{
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t o = d->timeline[(size_t)j * d->cfg.g + k];

		if (o >= 0 && d->thread[o].role == HSD_ROLE_VNF && d->thread[o].chain == c)
			return true;
	}
	return false;
}

/*
 * VM ticks are pooled.  A tick of pCPU j that a VM thread owns thaws
 * every VM thread of j with VM ticks this period (or owning this one),
 * and CFS shares the pCPU among them; at VNF ticks they are frozen.
 * Algorithm 2 gives each of them an equal share, floor((g - g_vnf)/l)
 * ticks, which equal weights give each busy one at least as well, and
 * an idle one lends its share instead of holding it; the per-tick owner
 * stays on the timeline (interleave_vms) for what reads it.  Gating each
 * tick's owner alone cost two freezer writes per pCPU at every tick,
 * most of the daemon's CPU in the closed-loop bench (perf on branch
 * gang); pooled, the writes happen where a pCPU changes between VNF and
 * VM ticks.  But while a VNF thread of the pCPU waits thawed beside the
 * tick's owner (standby, gang presence), only the owner runs with it,
 * as before pooling: a standby thread shared its pCPU with every VM
 * thread there (three spinning tenant vCPUs in test 310) and gang B fell
 * to 85% of its SLA at 1.0 x SLA once.  In bench 92 a standby thread
 * sits on most VM ticks, so the writes there stay (README, "The
 * daemon's own CPU").
 */
static bool vm_pooled(const struct hsd *d, uint32_t t, uint32_t k)
{
	uint32_t j = d->pcpu_of[t];
	int32_t o = d->timeline[(size_t)j * d->cfg.g + k];

	if (o < 0 || d->thread[o].role != HSD_ROLE_VM)
		return false;
	return o == (int32_t)t || d->ticks_of[t] > 0;
}

/*
 * Gang presence.  A chain's VNFs get different quotas (eq. 2 per VNF),
 * but a descriptor leaves a hop only when every VNF of the hop answered
 * it: on the real chain ids (1 tick) and waf (20 ticks) run in one hop,
 * and everything dispatched after ids's tick waited for its next period,
 * so a request took one period and 32 closed-loop connections got ~64
 * answers/s whatever the waf's quota.  So while any VNF slot of a chain
 * runs (its window), every other VNF thread of the chain that is placed
 * this period is thawed too, beside the owner of its pCPU's tick, which
 * it shares by CFS: it wakes for the few descriptors it gets and sleeps
 * again, and what it uses is measured (busy time) like its own slot.
 *
 * Standby.  Once a chain's window came this period (a slot of it ran,
 * or early end (a) handed it off), its placed VNF threads stay thawed
 * the same way for the rest of the period, each until its busy time
 * this period (schedstat since the period's start) reaches its planned
 * ticks: the quota is spent as CPU, not as ticks held.  A backlogged
 * chain spends it in its window; an idle thread sleeps on its doorbell
 * and costs the VM threads nothing, and a request that arrives after the
 * window is served at once instead of at the next period (re-wake gives
 * back only ticks handed off, which a 1-tick slot that ran out never
 * did).  After an end by (b) (the receiver has enough): no standby.
 *
 * The busy time is read from /proc only when the budget may be spent: a
 * thread uses at most one CPU, so after a read at tick k0 it cannot have
 * spent more than (k - k0 + 1) ticks more by tick k (one tick of margin
 * for a late tick), and CPU time never goes back, so a spent budget stays
 * spent.  Reading every standby thread at every tick was most of the
 * daemon's own CPU in the closed-loop bench (README, "The daemon's own
 * CPU").
 */
static bool co_wanted(struct hsd *d, const bool *active, uint32_t t, uint32_t k)
{
	struct hsd_thread *th = &d->thread[t];
	uint64_t tick_ns = (uint64_t)d->cfg.tick_us * 1000u;
	uint64_t budget = (uint64_t)d->ticks_of[t] * tick_ns, now;

	if (th->dead || !th->enforced || d->pcpu_of[t] == NONE)
		return false;
	if (th->role == HSD_ROLE_VM)
		return vm_pooled(d, t, k);
	if (th->role != HSD_ROLE_VNF || th->chain >= d->nchain)
		return false;
	if (th->chain < HSD_MAX_CHAINS && active[th->chain])
		return true;
	if (!d->chain[th->chain].standby || d->chain[th->chain].ended_b || !th->have_busy)
		return false;
	if (th->seen_k != NONE && k >= th->seen_k) {
		uint64_t used = th->seen_ns - th->busy_ns;

		if (used >= budget)
			return false;
		if (used + (uint64_t)(k - th->seen_k + 1) * tick_ns < budget)
			return true;
	}
	if (!hsd_busy_ns(d, t, &now))
		return false;
	th->seen_ns = now;
	th->seen_k = k;
	return now - th->busy_ns < budget;
}

void hsd_tick(struct hsd *d, uint32_t k)
{
	bool active[HSD_MAX_CHAINS] = { false };
	bool want[HSD_MAX_THREADS];
	/* The timeline holds registry indices, which stay valid when a
	 * registration rebuilds the scheduler mid-period. */
	bool gate = d->mode_applied == HSD_SYNC && d->timeline_valid &&
		    d->cfg.gating == HSD_GATE_FREEZER;

	for (uint32_t c = 0; c < d->nchain; c++) {
		struct hsd_chain *ch = &d->chain[c];
		struct tcr_chain_counters *cc;
		uint32_t fl;

		if (ch->dead)
			continue;
		cc = tcr_region_chain(d->region[ch->region].r, ch->index);
		fl = cc ? tcr_counters_take_early(cc) : 0;
		if (ch->index2 != NONE) {
			/*
			 * Both directions share the slots: a flag of one ends
			 * them only if the other asks too or has nothing to do.
			 */
			struct tcr_chain_counters *c1 = cc;
			struct tcr_chain_counters *c2 = tcr_region_chain(d->region[ch->region].r,
									 ch->index2);
			uint32_t fl2 = c2 ? tcr_counters_take_early(c2) : 0;

			if (fl && !fl2)
				fl = c2 && !tc_load_relaxed(&c2->in_qlen);
			else if (fl2 && !fl)
				fl = c1 && !tc_load_relaxed(&c1->in_qlen);
		}
		/*
		 * (a) from the counters: a slot that runs while nothing of
		 * the chain waits or is in processing ends now, as if a
		 * service thread had asked.  Idle threads never raise (a)
		 * (they raise it after a batch), so without this an idle
		 * chain held its whole slot, had nothing handed off to take
		 * back, and a request arriving after the slot waited for
		 * the next period: p99 latency at light load ~ one period.
		 */
		if (!fl && gate && k < d->cfg.g && runs_at(d, c, k) && !has_input(d, ch))
			fl = TCR_EARLY_INPUT_EMPTY;
		if (fl && gate) {
			/*
			 * Standby only if a slot ended: a flag raised late in
			 * the last period and taken before this period's window
			 * put the gang's members in standby from tick 0 on,
			 * beside whatever owned their pCPUs (our reading of
			 * test 310's gang skew of 130-140 ms, the length of the
			 * slot ahead of the gang on one pCPU).
			 */
			if (early_end(d, c, k))
				ch->standby = true;
			/* (b): the receiver has enough; no re-wake, no standby */
			ch->ended_b = ch->ended_b || (fl & TCR_EARLY_OUTPUT_FULL);
			if (fl & TCR_EARLY_OUTPUT_FULL)
				forget_given_up(d, c);
		} else if (gate && k < d->cfg.g && has_input(d, ch))
			rewake(d, c, k);
	}
	if (!gate || k >= d->cfg.g) {
		for (uint32_t t = 0; t < HSD_MAX_THREADS; t++)
			d->co_thawed[t] = false;
		return;
	}
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t o = d->timeline[(size_t)j * d->cfg.g + k];

		if (o >= 0 && d->thread[o].role == HSD_ROLE_VNF && d->thread[o].chain < HSD_MAX_CHAINS) {
			active[d->thread[o].chain] = true;
			if (d->thread[o].chain < d->nchain)
				d->chain[d->thread[o].chain].standby = true;	/* window came */
		}
	}
	/* VNF threads first: a pCPU where one is thawed beside the tick's
	 * owner does not pool its VM ticks (vm_pooled) */
	bool vnf_beside[HSD_MAX_PCPU] = { false };

	for (uint32_t t = 0; t < d->nthread; t++) {
		want[t] = d->thread[t].role != HSD_ROLE_VM && co_wanted(d, active, t, k);
		if (want[t] && d->thread[t].role == HSD_ROLE_VNF && d->pcpu_of[t] < d->cfg.npcpu)
			vnf_beside[d->pcpu_of[t]] = true;
	}
	for (uint32_t t = 0; t < d->nthread; t++)
		if (d->thread[t].role == HSD_ROLE_VM)
			want[t] = co_wanted(d, active, t, k) &&
				  (!vnf_beside[d->pcpu_of[t]] ||
				   hsd_owner(d, d->pcpu_of[t], k) == (int32_t)t);
	/* Freeze first, then thaw: a pCPU never runs two planned threads
	 * (but for a running gang's members, above), and the members of a
	 * gang are thawed back to back. */
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t o = d->timeline[(size_t)j * d->cfg.g + k], cur = d->cur_owner[j];

		if (cur >= 0 && cur != o && d->thread[cur].enforced &&
		    !want[cur]) {
			hse_gate(d->enf, &d->thread[cur].enf, false);
			d->gate_writes++;
		}
	}
	for (uint32_t t = 0; t < d->nthread; t++) {
		if (!d->co_thawed[t] || want[t])
			continue;
		d->co_thawed[t] = false;
		if (d->pcpu_of[t] != NONE &&
		    d->timeline[(size_t)d->pcpu_of[t] * d->cfg.g + k] == (int32_t)t)
			continue;	/* owns this tick */
		if (d->thread[t].enforced && !d->thread[t].enf.frozen) {
			hse_gate(d->enf, &d->thread[t].enf, false);
			d->gate_writes++;
		}
	}
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t o = d->timeline[(size_t)j * d->cfg.g + k];

		if (k == 0) {
			/* New period: freeze whatever the plan does not start now. */
			for (uint32_t t = 0; t < d->nthread; t++)
				if (d->pcpu_of[t] == j && (int32_t)t != o && d->thread[t].enforced &&
				    !d->thread[t].enf.frozen && !want[t]) {
					hse_gate(d->enf, &d->thread[t].enf, false);
					d->gate_writes++;
				}
		}
	}
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t o = d->timeline[(size_t)j * d->cfg.g + k];

		if (o >= 0 && d->thread[o].enforced && d->thread[o].enf.frozen) {
			hse_gate(d->enf, &d->thread[o].enf, true);
			d->gate_writes++;
		}
		if (o >= 0)
			d->co_thawed[o] = false;
		d->cur_owner[j] = o;
	}
	for (uint32_t t = 0; t < d->nthread; t++) {
		if (!want[t] ||
		    d->timeline[(size_t)d->pcpu_of[t] * d->cfg.g + k] == (int32_t)t)
			continue;
		if (d->thread[t].enf.frozen) {
			hse_gate(d->enf, &d->thread[t].enf, true);
			d->gate_writes++;
		}
		d->co_thawed[t] = true;
	}
}
