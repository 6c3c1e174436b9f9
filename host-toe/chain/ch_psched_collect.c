// SPDX-License-Identifier: MIT
/*
 * The packet scheduler, scheduler thread: verdicts collected from the
 * VNFs, and results released in each connection's arrival order.  State and rules:
 * ch_psched_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Flight @id of @chain to its output queue; false if the queue is full. */
static bool release(struct ch_psched *s, struct chain_rt *ch, uint32_t chain, uint32_t id)
{
	struct flight *f = &s->fl[id];
	struct ch_result r;

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
	r.answer = f->answer;		/* the taker frees it */
	r.answer_len = f->answer_len;
	r.incident = f->incident;
	r.alert_vnf = f->alert_vnf;
	r.alert_rule = f->alert_rule;
	r.alert_msg = f->alert_msg;	/* the taker frees it */
	r.alert_msg_len = f->alert_msg_len;
	if (ch_queue_push(ch->out, &r, 1) != 1)
		return false;	/* cannot happen: admission keeps room */
	f->answer = NULL;
	f->alert_msg = NULL;
	ch->inflight--;
	ch->ndone--;
	if (f->tb)
		ch_table_put(s->tables, f->tb);
	f->tb = NULL;
	f->state = FL_FREE;
	s->free_fl[s->nfree++] = id;
	return true;
}

static bool held(const uint64_t *conns, uint32_t n, uint64_t conn)
{
	for (uint32_t i = 0; i < n; i++)
		if (conns[i] == conn)
			return true;
	return false;
}

/*
 * Release finished flights of @chain, each connection's in arrival order:
 * a flight leaves once it is done and no older flight of its connection is
 * still here.  One connection's slow descriptor (a waf thread's backlog)
 * no longer holds back the others' (a TCP stream may not be reordered,
 * two streams may).  The pass walks from the oldest flight until it has
 * seen every done one, or until it holds back HOLD_CONNS connections.
 */
unsigned int ch_psched_collect_release(struct ch_psched *s, uint32_t chain)
{
	struct chain_rt *ch = &s->chain[chain];
	uint64_t conns[HOLD_CONNS];
	uint32_t nconns = 0, ndone = 0, ndenied = 0, left = ch->ndone, settled = 0;

	for (uint32_t p = ch->ohead; p != ch->otail && left; p++) {
		uint32_t *slot = &ch->order[p & s->flight_mask];
		struct flight *f;
		bool back;

		if (*slot == ORDER_GONE)
			continue;
		f = &s->fl[*slot];
		back = held(conns, nconns, f->pkt.conn_id);
		if (f->state == FL_DONE) {
			left--;
			if (!back) {
				bool denied = f->verdict == CH_DENY;

				if (!release(s, ch, chain, *slot))
					break;
				*slot = ORDER_GONE;
				ndone++;
				ndenied += denied;
				continue;
			}
		}
		/* Not released: its connection's younger flights wait for it. */
		if (!back) {
			if (nconns == HOLD_CONNS)
				break;
			conns[nconns++] = f->pkt.conn_id;
		}
	}
	while (ch->ohead != ch->otail && ch->order[ch->ohead & s->flight_mask] == ORDER_GONE) {
		ch->ohead++;
		settled++;
	}
	if (settled)
		tc_store_relaxed(&ch->settled, ch->settled + settled);
	if (ndone) {
		tcr_counters_finished(ch->ctr, ndone, ndenied);
		tc_store_relaxed(&s->in_flight, s->cfg.max_flight - s->nfree);
	}
	return ndone;
}

/* A verdict (or a loss) for work descriptor @vd of VNF @vn. */
void ch_psched_collect_verdict(struct ch_psched *s, struct vnf *vn, const struct vdesc *vd,
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
	} else if (verdict == VNF_VERDICT_ALERT) {
		stat_add(&vn->alerts, 1);
		if (f->alert_vnf == CH_VNF_NONE) {
			f->alert_vnf = vn->id;
			f->alert_rule = rule;
		}
	} else if (verdict == VNF_VERDICT_DENY) {
		flight_deny(f, CH_REASON_RULE, vn->id, rule);
	} else if (verdict != VNF_VERDICT_ALLOW) {
		stat_add(&vn->bad_verdicts, 1);
		flight_deny(f, CH_REASON_BAD_VERDICT, vn->id, verdict);
	}
	ch_psched_dispatch_advance(s, vd->flight);
}

/*
 * VNF @vn answered work descriptor @idx (VNF_VERDICT_ANSWER): copy its
 * answer out of the VNF's region, once, bounded, and attach it to the
 * flight unless that flight is already denied (the first Deny is the
 * recorded one) or gone.  A bad length or incident leaves a plain Deny.
 */
static void collect_answer(struct ch_psched *s, struct vnf *vn, const struct vdesc *vd,
			   uint32_t idx, uint32_t len, uint32_t incident)
{
	const uint8_t *slot = tcr_region_slot(vn->r, idx);
	struct flight *f;

	if (vd->flight == FLIGHT_CTRL || vd->flight >= s->cfg.max_flight || !slot ||
	    len == 0 || len > VNF_ANSWER_MAX || incident == 0)
		return;
	f = &s->fl[vd->flight];
	if (f->state != FL_BUSY || f->gen != vd->gen || f->verdict == CH_DENY || f->answer ||
	    !(f->outstanding & (1u << vd->slot)))
		return;
	f->answer = malloc(len);
	if (!f->answer)
		return;		/* a reset instead */
	memcpy(f->answer, slot, len);
	f->answer_len = len;
	f->incident = incident;
}

/*
 * VNF @vn alerted on work descriptor @idx (VNF_VERDICT_ALERT): copy the
 * message out of the VNF's region, once, at most VNF_ALERT_MSG_MAX bytes,
 * for the flight's first Alert (the verdict, collected next, records its
 * VNF and rule).  No memory: the Alert goes without its message.
 */
static void collect_alert_msg(struct ch_psched *s, const struct vnf *vn, const struct vdesc *vd,
			      uint32_t idx, uint32_t len)
{
	const uint8_t *slot = tcr_region_slot(vn->r, idx);
	struct flight *f;

	if (vd->flight == FLIGHT_CTRL || vd->flight >= s->cfg.max_flight || !slot || len == 0)
		return;
	f = &s->fl[vd->flight];
	if (f->state != FL_BUSY || f->gen != vd->gen || f->alert_vnf != CH_VNF_NONE ||
	    f->alert_msg || !(f->outstanding & (1u << vd->slot)))
		return;
	if (len > VNF_ALERT_MSG_MAX)
		len = VNF_ALERT_MSG_MAX;
	f->alert_msg = malloc(len);
	if (!f->alert_msg)
		return;
	memcpy(f->alert_msg, slot, len);
	f->alert_msg_len = len;
}

unsigned int ch_psched_collect_vnf(struct ch_psched *s, struct vnf *vn, const char **why)
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
			*why = n == -EPERM ? "returned a descriptor it was not given" : "corrupt ring";
			break;
		}
		if (n == 0)
			continue;
		vc->last_progress = tu_now_ns();
		vc->taken += (uint32_t)n;
		for (int i = 0; i < n; i++) {
			struct tcr_desc *d = tcr_region_desc(vn->r, idx[i]);
			struct vdesc vd = vn->vd[idx[i]];
			/* The only fields read back, each once. */
			uint32_t verdict = tc_load_relaxed(&d->arg);
			uint32_t rule = tc_load_relaxed(&d->deny_rule);

			vc->outstanding--;
			if (verdict == VNF_VERDICT_ANSWER) {
				collect_answer(s, vn, &vd, idx[i], tc_load_relaxed(&d->allow_mask),
					       tc_load_relaxed(&d->deny_vnf));
				verdict = VNF_VERDICT_DENY;
			} else if (verdict == VNF_VERDICT_ALERT) {
				collect_alert_msg(s, vn, &vd, idx[i], tc_load_relaxed(&d->allow_mask));
			}
			if (vd.flight != FLIGHT_CTRL) {
				stat_add(&vn->verdicts, 1);
				ch_psched_collect_verdict(s, vn, &vd, verdict, rule, false);
			}
		}
		tcr_pool_free(vn->pool, idx, (unsigned int)n);
		pool_note(vn);
		tc_store_relaxed(&vc->outstanding, vc->outstanding);
		total += (unsigned int)n;
	}
	return total;
}
