/* SPDX-License-Identifier: MIT */
/*
 * hs_prio — chain priority of the synchronous scheduler (paper eq. 1).
 *
 * Pure function, no state; safe from any thread.
 */
#ifndef HS_PRIO_H
#define HS_PRIO_H

#include <stdint.h>

/*
 * Priority H_i of a chain at the start of a period, implemented exactly as
 * the paper prints it:
 *
 *     H = (I + T*R) / (F + T*T)
 *
 * @in:       I, packets that arrived at the chain's input queue last period
 * @finished: F, packets the chain finished last period
 * @left:     R, packets left in the input queue at the end of last period
 * @sla_pp:   T, the chain's configured throughput in packets per period
 *            (SLA packets/s times the period length in seconds).  We read
 *            T in per-period units so that every term counts packets of one
 *            period; the paper does not say.
 *
 * Returns 0 when R == 0 (the chain is not scheduled this period) and when
 * the denominator is 0 (T == 0 and F == 0: a chain without an SLA has no
 * claim on the synchronous partition).  Never negative, never NaN/inf.
 */
double hs_prio(uint64_t in, uint64_t finished, uint64_t left, double sla_pp);

#endif
