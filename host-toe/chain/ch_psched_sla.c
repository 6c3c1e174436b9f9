// SPDX-License-Identifier: MIT
/*
 * The packet scheduler's side of the CPU scheduler's algorithm: counters,
 * the output queue's head, early-end flags; see ch_psched_sla.h.
 *
 * Trust: a VNF region is written by its VNF.  Its counter blocks carry
 * numbers copied there by this file (the VNF reads them) and early-end
 * flags (the VNF writes them); only the flags are read back, and only as
 * a request that the chain's own counters must confirm.
 */
#include <tochain/barrier.h>
#include <tochain/counters.h>
#include <tochain/region.h>

#include "ch_psched_sla.h"

/*
 * Arrival TSC of the output queue's head, 0 when empty.  We are the
 * queue's producer: every record between head and tail was written by
 * this thread and is not written again until we push over it, so a head
 * the consumer has just moved past still names a valid (older) record.
 */
static uint64_t out_head_tsc(struct chain_rt *ch)
{
	const struct ch_result *r = ch_queue_peek(ch->out);

	if (!r)
		return 0;
	return r->pkt.tsc ? r->pkt.tsc : 1;	/* 0 means empty */
}

/* Copy what a service thread needs from @src into a VNF's block @dst. */
static void mirror(struct tcr_chain_counters *dst, const struct tcr_chain_counters *src,
		   uint32_t waiting, uint32_t out_qlen)
{
	uint64_t p = tc_load_acquire(&src->period);	/* pairs with close_period */

	tcr_counters_queues(dst, waiting, out_qlen, 0);
	if (tc_load_relaxed(&dst->period) == p)
		return;
	for (uint64_t i = p >= TCR_TAKEN_WINDOW ? p - TCR_TAKEN_WINDOW + 1 : 1; i <= p; i++)
		tcr_counters_close_period(dst, i,
					  tc_load_relaxed(&src->taken_hist[i % TCR_TAKEN_WINDOW]));
}

static uint32_t confirm(struct chain_rt *ch, uint32_t in_total, uint32_t out_qlen)
{
	uint64_t arrivals = tc_load_relaxed(&ch->ctr->arrivals);
	uint32_t fl = 0, e;

	if (ch->early_pend & TCR_EARLY_INPUT_EMPTY) {
		if (arrivals != ch->early_arrivals)
			ch->early_pend &= ~TCR_EARLY_INPUT_EMPTY;	/* new work came */
		else if (!in_total)
			fl |= TCR_EARLY_INPUT_EMPTY;
	}
	if (ch->early_pend & TCR_EARLY_OUTPUT_FULL) {
		e = tcr_counters_mean_taken(ch->ctr, CH_SLA_EARLY_W);
		if (e && out_qlen >= e)
			fl |= TCR_EARLY_OUTPUT_FULL;
		ch->early_pend &= ~TCR_EARLY_OUTPUT_FULL;	/* a VNF asks again */
	}
	ch->early_pend &= ~fl;
	return fl;
}

void ch_psched_sla_queues(struct ch_psched *s)
{
	for (uint32_t c = 0; c < s->cfg.nchains; c++) {
		struct chain_rt *ch = &s->chain[c];

		tcr_counters_queues(ch->ctr, ch_queue_len(ch->in) + ch->inflight,
				    ch_queue_len(ch->out), out_head_tsc(ch));
	}
}

void ch_psched_sla_tick(struct ch_psched *s, uint32_t nvnfs)
{
	ch_psched_sla_queues(s);
	for (uint32_t c = 0; c < s->cfg.nchains; c++) {
		struct chain_rt *ch = &s->chain[c];
		uint32_t waiting = ch_queue_len(ch->in), out_qlen = ch_queue_len(ch->out);
		uint32_t in_total = waiting + ch->inflight, fl;

		for (uint32_t v = 0; v < nvnfs; v++) {
			struct tcr_chain_counters *vc;

			if (!s->vnf[v].r || !(vc = tcr_region_chain(s->vnf[v].r, c)))
				continue;
			mirror(vc, ch->ctr, waiting, out_qlen);
			fl = tcr_counters_take_early(vc);
			/*
			 * Every raise of (a) moves the arrivals it is judged
			 * against: a newer raise taken while an older one is
			 * still pending must not be cleared by the arrivals that
			 * came between the two (it was the chain's last one).
			 */
			if (fl & TCR_EARLY_INPUT_EMPTY)
				ch->early_arrivals = tc_load_relaxed(&ch->ctr->arrivals);
			ch->early_pend |= fl & (TCR_EARLY_INPUT_EMPTY | TCR_EARLY_OUTPUT_FULL);
		}
		fl = confirm(ch, in_total, out_qlen);
		if (fl)
			tcr_counters_raise_early(ch->ctr, fl);
	}
}
