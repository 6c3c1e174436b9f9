// SPDX-License-Identifier: MIT
/*
 * Eq. 1 of the paper, as printed.  What it rewards:
 *
 * For the chains that matter (a backlog R > 0 and an SLA T of tens of
 * packets per period or more) the T*T term dominates the denominator and
 * T*R the numerator, so
 *
 *     H ~= R/T + I/T^2 - F*R/T^3 ...
 *
 * i.e. the priority is essentially the backlog measured in periods of SLA
 * work ("how many periods would this chain need, at its SLA rate, to drain
 * what is waiting").  A chain that is further behind its own SLA goes
 * first, independently of the size of its SLA; arrivals I only break near
 * ties, and a chain that finished much (F) last period loses a little.  The
 * printed form is dimensionally odd (I + T*R mixes packets with
 * packets^2/period), which is why it reads as garbled; a cleaner candidate
 * would be (I + R) / (F + T), but DESIGN.md asks for the printed one unless
 * a measurement justifies a change, so this is the only place to change.
 *
 * Ordering only matters to Algorithm 1 (placement order and slot order on
 * a pCPU); the quotas themselves do not depend on H.
 */
#include "hs_prio.h"

double hs_prio(uint64_t in, uint64_t finished, uint64_t left, double sla_pp)
{
	double num, den;

	if (left == 0)
		return 0.0;
	if (!(sla_pp > 0.0))	/* also rejects NaN */
		sla_pp = 0.0;
	num = (double)in + sla_pp * (double)left;
	den = (double)finished + sla_pp * sla_pp;
	if (den <= 0.0 || num <= 0.0)
		return 0.0;
	return num / den;
}
