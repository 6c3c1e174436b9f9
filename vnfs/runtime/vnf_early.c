// SPDX-License-Identifier: MIT
/* Early end of a service thread's slot; see vnf_early.h. */
#include <tochain/barrier.h>
#include <tochain/counters.h>

#include "vnf_early.h"

void vnf_early_note(struct vnf_early *e, const struct vnf_pkt *p)
{
	if (p->d.chain < 64)
		e->seen |= 1ull << p->d.chain;
}

uint32_t vnf_early_check(struct vnf_early *e, struct vnf_thread *t)
{
	bool empty = vnf_rx_empty(t);
	uint32_t all = 0;

	for (uint64_t m = e->seen; m; m &= m - 1) {
		uint32_t c = (uint32_t)__builtin_ctzll(m), fl = 0, o, mean;
		struct tcr_chain_counters *cc = vnf_chain_counters(t, c);

		if (!cc)
			continue;
		if (empty)
			fl |= TCR_EARLY_INPUT_EMPTY;
		/* Written by the packet scheduler (ch_psched_sla.c), read once each. */
		o = tc_load_relaxed(&cc->out_qlen);
		mean = tcr_counters_mean_taken(cc, VNF_EARLY_W);
		if (mean && o >= mean)
			fl |= TCR_EARLY_OUTPUT_FULL;
		fl &= ~tc_load_relaxed(&cc->early_end);	/* still pending: no new raise */
		if (fl) {
			tcr_counters_raise_early(cc, fl);
			all |= fl;
		}
	}
	if (empty)
		e->seen = 0;
	e->raised |= all;
	return all;
}
