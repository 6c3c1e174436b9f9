/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/chain/ (not installed): what the packet scheduler
 * tells the CPU scheduler, and what it tells the VNFs so that they can
 * end their slots early (ch_psched_sla.c, DESIGN section 2).  Scheduler
 * thread only (ch_psched_int.h).
 */
#ifndef TOCHAIN_CH_PSCHED_SLA_H
#define TOCHAIN_CH_PSCHED_SLA_H

#include <stdint.h>

#include "ch_psched_int.h"

/* Periods of receiver history behind E_i, for VNFs and for the check here. */
#define CH_SLA_EARLY_W	4

/*
 * Every liveness check (2 ms), for the first @nvnfs VNFs:
 *  - each chain's counters get its queue lengths and the arrival TSC of
 *    its output queue's head (0 when empty), for Algorithm 2;
 *  - each VNF region's counter block of a chain gets a copy of the
 *    chain's queue lengths (the input queue: what waits for admission)
 *    and of its receiver history (closed periods), from which a service
 *    thread computes E_i (tcr_counters_mean_taken);
 *  - early-end flags the VNFs raised move to the chain's counters once
 *    this scheduler's own numbers agree: (a) when nothing of the chain is
 *    waiting or in processing (a flag raised while descriptors are still
 *    in flight waits for them; new arrivals cancel it), (b) when the
 *    output queue holds at least E_i.  A VNF cannot end a chain's slot
 *    that still has work.
 */
void ch_psched_sla_tick(struct ch_psched *s, uint32_t nvnfs);

/*
 * The first point of the tick alone: each chain's queue lengths and
 * output-queue head, written again before the owner's loop sleeps
 * (ch_psched_sleep_prepare()), so that the CPU scheduler never reads an
 * empty input queue (early end, issue 15) from a tick older than what
 * waits now.
 */
void ch_psched_sla_queues(struct ch_psched *s);

#endif /* TOCHAIN_CH_PSCHED_SLA_H */
