/* SPDX-License-Identifier: MIT */
/*
 * hs_admit — admission control for a set of chain SLAs.
 *
 * Pure function over caller memory; safe from any thread.
 */
#ifndef HS_ADMIT_H
#define HS_ADMIT_H

#include <stddef.h>
#include <stdint.h>

#include "hs_chain.h"
#include "hs_quota.h"

/* Quotas of one chain, as admission computed them. */
struct hs_chain_quota {
	uint32_t nvcpu;			/* VNF vCPUs (sum of threads) */
	uint64_t ticks;			/* sum of ticks over those vCPUs */
	struct hs_quota q[HS_MAX_VNFS];
};

/*
 * Decide whether the chains' quotas (eq. 2, C = @g) fit the synchronous
 * partition of @npcpu pCPUs with @g ticks per period each:
 *   - every VNF's SLA is reachable with its thread limit,
 *   - no VNF vCPU quota exceeds g,
 *   - no chain has more VNF vCPUs than there are pCPUs (gang members run
 *     at the same time, so on distinct pCPUs),
 *   - the quotas of all chains sum to at most npcpu * g ticks.
 * This is the precondition of Algorithm 1 (it does not prove that a
 * placement without overflowing a pCPU exists: that is bin packing).
 *
 * @q: array of @n results, filled for the chains examined.
 * @why/@whylen: on refusal, a one-line reason naming the chain (and VNF).
 *
 * Returns 0 if admitted; -EINVAL on bad arguments (also a chain with more
 * than HS_MAX_VNFS VNFs or a thread limit out of range); -ERANGE if a VNF
 * cannot reach its SLA; -E2BIG if a chain needs more vCPUs than pCPUs;
 * -ENOSPC if the total does not fit.
 */
int hs_admit(const struct hs_chain_cfg *chains, uint32_t n, uint32_t npcpu,
	     uint32_t g, struct hs_chain_quota *q, char *why, size_t whylen);

#endif
