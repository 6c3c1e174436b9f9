/* SPDX-License-Identifier: MIT */
/*
 * hs_quota — per-VNF CPU quota of a chain (paper eq. 2).
 *
 * Pure function, no state; safe from any thread.
 */
#ifndef HS_QUOTA_H
#define HS_QUOTA_H

#include <stdint.h>

struct hs_quota {
	uint32_t ticks;		/* q_ik: ticks per period for each thread */
	uint32_t threads;	/* service threads (VNF vCPUs) for the chain */
};

/*
 * Quota of VNF k of chain i:
 *
 *     t <  f            q = ceil(t*C / f),      1 thread
 *     f <= t < f*R      q = ceil(t*C / (f*R)),  R threads, flow split evenly
 *     t >= f*R_max      infeasible
 *
 * where R is the smallest thread count with t < f*R, i.e. floor(t/f) + 1.
 *
 * Equality: the paper's cases are t < f and f < t < f*R and leave t == f
 * open.  We put t == f into the multi-thread case (R = 2): a thread that
 * must run the whole period to reach the SLA has no headroom left for
 * jitter, and the paper itself adds threads when one is "not enough".  For
 * the same reason t == f*R needs R+1 threads.  Pinned by test_hs_quota.
 *
 * @sla_pps:     t, the chain's SLA in packets/s (0 gives a 0-tick quota)
 * @f_pps:       f, packets/s one service thread reaches on a dedicated pCPU
 * @period:      C, the period length in ticks
 * @max_threads: how many service threads the VNF may run for the chain
 *
 * Returns 0 and fills @q; -EINVAL if f, period or max_threads is 0 or @q is
 * NULL; -ERANGE if more than @max_threads threads would be needed.
 */
int hs_quota(uint64_t sla_pps, uint64_t f_pps, uint32_t period,
	     uint32_t max_threads, struct hs_quota *q);

#endif
