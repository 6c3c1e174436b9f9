// SPDX-License-Identifier: MIT
/* tochain-sched: the period boundary: counters, plan, placement of
 * every thread, the daemon's own CPU accounting. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "hs_daemon_int.h"

/* Adds block @index's numbers since @prev to @st; 0 or -EBADMSG. */
static int add_block(const struct tcr_region *r, uint32_t index, struct tcr_counters_snap *prev,
		     bool *have_prev, struct hs_chain_stats *st)
{
	struct tcr_chain_counters *cc = tcr_region_chain(r, index);
	struct tcr_counters_snap s;
	uint64_t head;

	if (!cc || tcr_counters_snapshot(cc, *have_prev ? prev : NULL, r->geo.ring_size, &s))
		return -EBADMSG;
	st->in += s.arrivals - (*have_prev ? prev->arrivals : 0);
	st->finished += s.finished - (*have_prev ? prev->finished : 0);
	st->left += s.in_qlen;
	head = s.out_qlen && s.out_head_tsc ? s.out_head_tsc : HS_TS_EMPTY;
	if (head < st->oq_head_ts)
		st->oq_head_ts = head;		/* the older head of the two */
	*prev = s;
	*have_prev = true;
	return 0;
}

/*
 * A chain registered with index2 is a VM's SLA over both directions:
 * its I, F and R are the sums of the two blocks, its output head the
 * older one.
 */
int hsd_read_counters(struct hsd *d, uint32_t c, struct hs_chain_stats *st)
{
	struct hsd_chain *ch = &d->chain[c];
	const struct tcr_region *r = d->region[ch->region].r;

	memset(st, 0, sizeof(*st));
	st->oq_head_ts = HS_TS_EMPTY;
	if (add_block(r, ch->index, &ch->prev, &ch->have_prev, st))
		goto bad;
	/* The SLA counts the packets of the chain it is set on (a VM's
	 * requests); the other direction's VNFs are sized per such packet. */
	st->served = st->finished;
	if (ch->index2 != NONE && add_block(r, ch->index2, &ch->prev2, &ch->have_prev2, st))
		goto bad;
	ch->served_last = st->served;
	return 0;
bad:
	memset(st, 0, sizeof(*st));
	st->oq_head_ts = HS_TS_EMPTY;
	ch->served_last = 0;
	ch->bad++;
	return -EBADMSG;
}

/*
 * Each VNF's busy seconds in the period that ended, summed over its
 * threads, into st[].busy_s (configuration order), for the quota
 * feedback.  A thread read for the first time (or not readable) adds
 * nothing; frozen time is neither running nor runnable.
 */
static void read_busy(struct hsd *d, struct hs_chain_stats *st)
{
	const struct hsd_cfgset *cs = d->cs;
	uint64_t delta[HSD_MAX_THREADS] = { 0 };

	for (uint32_t t = 0; t < d->nthread; t++) {
		struct hsd_thread *th = &d->thread[t];
		uint64_t now;

		if (th->dead || th->role != HSD_ROLE_VNF || th->lv)
			continue;
		if (!hsd_busy_ns(d, t, &now)) {
			th->have_busy = false;
			continue;
		}
		if (th->have_busy && now >= th->busy_ns)
			delta[t] = now - th->busy_ns;
		th->busy_ns = now;
		th->have_busy = true;
	}
	for (uint32_t i = 0; i < cs->nchain; i++) {
		const struct hs_chain_cfg *cc = &cs->chain[i];

		for (uint32_t k = 0; k < cc->nvnf; k++) {
			uint64_t ns = 0;

			for (uint32_t r = 0; r < cc->vnf[k].max_threads; r++)
				if (cc->vnf[k].vcpu[r] < HSD_MAX_THREADS)
					ns += delta[cc->vnf[k].vcpu[r]];
			st[i].busy_s[k] = (double)ns / 1e9;
		}
	}
}

static uint64_t cpu_used_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec +
	       (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
}

static void place_all_free(struct hsd *d)
{
	for (uint32_t t = 0; t < d->nthread; t++) {
		struct hsd_thread *th = &d->thread[t];

		d->pcpu_of[t] = NONE;
		if (!th->enforced)
			continue;
		hse_gate(d->enf, &th->enf, true);
		hse_place(d->enf, &th->enf, d->cfg.sync_cpus, -1, hsd_period_us(d));
	}
	for (uint32_t j = 0; j < d->cfg.npcpu; j++)
		d->cur_owner[j] = -1;
	hsd_dom_apply(d, false, d->cfg.sync_cpus, hsd_period_us(d));
}

static void place_plan(struct hsd *d)
{
	bool freezer = d->cfg.gating == HSD_GATE_FREEZER;

	for (uint32_t t = 0; t < d->nthread; t++) {
		d->pcpu_of[t] = NONE;
		d->ticks_of[t] = 0;
	}
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		uint32_t n;
		const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

		for (uint32_t i = 0; i < n; i++) {
			if (s[i].vcpu >= d->nthread)
				continue;
			d->pcpu_of[s[i].vcpu] = j;
			d->ticks_of[s[i].vcpu] += s[i].ticks;
		}
	}
	for (uint32_t t = 0; t < d->nthread; t++) {
		struct hsd_thread *th = &d->thread[t];
		char cpu[16];

		if (!th->enforced)
			continue;
		if (d->pcpu_of[t] == NONE) {
			/* Not in this period's plan (H = 0, deferred). */
			if (freezer)
				hse_gate(d->enf, &th->enf, false);
			hse_place(d->enf, &th->enf, d->cfg.sync_cpus,
				  freezer ? -1 : 1000, hsd_period_us(d));
			continue;
		}
		snprintf(cpu, sizeof(cpu), "%d", d->cfg.pcpu[d->pcpu_of[t]]);
		if (freezer) {
			hse_place(d->enf, &th->enf, cpu, -1, hsd_period_us(d));
		} else {
			hse_gate(d->enf, &th->enf, true);
			hse_place(d->enf, &th->enf, cpu,
				  (int64_t)d->ticks_of[t] * d->cfg.tick_us, hsd_period_us(d));
		}
	}
	/* Domain vCPUs have no per-thread freezer through libvirt: they
	 * get their ticks as a quota per period in both gatings. */
	hsd_dom_apply(d, true, d->cfg.sync_cpus, hsd_period_us(d));
}

/* Closes the period that just ended in every chain's counters. */
static void close_periods(struct hsd *d)
{
	for (uint32_t c = 0; c < d->nchain; c++) {
		struct hsd_chain *ch = &d->chain[c];
		struct tcr_chain_counters *cc;
		uint64_t taken;

		if (ch->dead)
			continue;
		cc = tcr_region_chain(d->region[ch->region].r, ch->index);
		if (cc && ch->have_prev) {
			taken = ch->prev.taken - ch->taken_last;
			ch->taken_last = ch->prev.taken;
			tcr_counters_close_period(cc, d->period,
						  taken > UINT32_MAX ? UINT32_MAX : (uint32_t)taken);
		}
		cc = ch->index2 == NONE ? NULL : tcr_region_chain(d->region[ch->region].r, ch->index2);
		if (cc && ch->have_prev2) {
			taken = ch->prev2.taken - ch->taken_last2;
			ch->taken_last2 = ch->prev2.taken;
			tcr_counters_close_period(cc, d->period,
						  taken > UINT32_MAX ? UINT32_MAX : (uint32_t)taken);
		}
	}
}

/*
 * Under freezer gating a period ends with every VNF thread frozen, before
 * its counters see the next one (close_periods): tick 0 thaws whoever the
 * new plan starts.  A thread still thawed in standby, or owning the last
 * tick, otherwise ran into the next period under the old plan until tick
 * 0's gating (the time to plan it): hsd-worker stamped that as the
 * thread's first run, and a gang's other member, waiting for its slot,
 * stamped 130-140 ms later (test 310's skew).
 */
static void freeze_vnfs(struct hsd *d)
{
	if (d->mode_applied != HSD_SYNC || d->cfg.gating != HSD_GATE_FREEZER ||
	    !d->timeline_valid)
		return;
	for (uint32_t t = 0; t < d->nthread; t++) {
		struct hsd_thread *th = &d->thread[t];

		if (th->role != HSD_ROLE_VNF || !th->enforced || th->enf.frozen)
			continue;
		hse_gate(d->enf, &th->enf, false);
		d->gate_writes++;
		d->co_thawed[t] = false;
		for (uint32_t j = 0; j < d->cfg.npcpu; j++)
			if (d->cur_owner[j] == (int32_t)t)
				d->cur_owner[j] = -1;
	}
}

int hsd_period_begin(struct hsd *d)
{
	struct hs_chain_stats st[HSD_MAX_CHAINS] = { 0 };
	const struct hsd_cfgset *cs = d->cs;
	uint64_t now = cpu_used_us();
	int err = 0;

	freeze_vnfs(d);

	if (d->cpu_mark_us) {
		d->cpu_us_last = now - d->cpu_mark_us;
		d->cpu_us_total += d->cpu_us_last;
		d->cpu_periods++;
	}
	d->cpu_mark_us = now;
	d->mode_applied = d->mode_next;
	/* Every registered chain's counters move forward, planned or not. */
	for (uint32_t c = 0; c < d->nchain; c++) {
		struct hs_chain_stats tmp;

		if (d->chain[c].dead)
			continue;
		hsd_read_counters(d, c, &tmp);
		for (uint32_t i = 0; i < cs->nchain; i++)
			if (cs->chain_of[i] == c)
				st[i] = tmp;
	}
	read_busy(d, st);
	close_periods(d);
	d->period++;
	d->timeline_valid = false;
	if (d->mode_applied == HSD_CFS || !d->sched) {
		d->plan_valid = false;
		place_all_free(d);
		return 0;
	}
	err = hs_sched_plan(d->sched, st, d->plan);
	if (err < 0) {
		d->plan_valid = false;
		place_all_free(d);
		return err;
	}
	d->plan_valid = true;
	hsd_timeline_build(d);
	d->timeline_valid = true;
	place_plan(d);
	hs_sched_rebalance(d->sched);
	return 0;
}
