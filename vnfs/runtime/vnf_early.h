/* SPDX-License-Identifier: MIT */
/*
 * Early end of a service thread's slot (vnf_early_*), DESIGN section 2:
 * a service thread asks the CPU scheduler to end its chain's slot when
 * (a) the chain's input queue is empty or (b) the output queue holds
 * O_i >= E_i packets, E_i the mean the receiver took per period over the
 * last CH_SLA_EARLY_W (4) closed periods (tcr_counters_mean_taken).
 *
 * The numbers come from the VNF region's counter block of each chain,
 * which the packet scheduler keeps as a copy of the chain's own counters
 * (host-toe/chain/ch_psched_sla.h); it also confirms every flag against
 * its own numbers before the CPU scheduler sees it, so a flag raised a
 * little early costs nothing.
 *
 *   struct vnf_early e = { 0 };
 *   n = vnf_recv(t, pk, 32, 100);
 *   for (i = 0; i < n; i++) { vnf_early_note(&e, &pk[i]); ...; vnf_post(...); }
 *   vnf_early_check(&e, t);
 *
 * One struct vnf_early per service thread, used with that thread's handle.
 */
#ifndef TOCHAIN_VNF_EARLY_H
#define TOCHAIN_VNF_EARLY_H

#include <stdint.h>

#include "vnf.h"

#define VNF_EARLY_W	4	/* periods behind E_i: CH_SLA_EARLY_W */

struct vnf_early {
	uint64_t seen;		/* chains (bit = chain id < 64) served since the RX ring was last empty */
	uint64_t raised;	/* flags raised so far (for stats and tests) */
};

/* Descriptor @p was received: its chain is one this thread serves now. */
void vnf_early_note(struct vnf_early *e, const struct vnf_pkt *p);

/*
 * After a batch: raise (a) for every chain noted when the thread's RX
 * ring is empty (then forget them), (b) for a noted chain whose output
 * queue holds at least E_i.  A flag still pending in the block is not
 * raised again.  Returns the TCR_EARLY_* flags raised, OR-ed over chains.
 */
uint32_t vnf_early_check(struct vnf_early *e, struct vnf_thread *t);

#endif /* TOCHAIN_VNF_EARLY_H */
