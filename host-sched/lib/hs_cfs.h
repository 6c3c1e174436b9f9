/* SPDX-License-Identifier: MIT */
/*
 * hs_cfs — a model of the stock fair scheduler (TOChain-CFS baseline), as
 * a planner with the same output as the synchronous one.
 *
 * No quotas, no gangs, no partition between VNF and VM vCPUs: every vCPU
 * has a home pCPU, and each pCPU's time is split evenly among its
 * runnable vCPUs, the ones that ran least (smallest vruntime) first.  The
 * simulator calls it with a short "period" (the CFS granularity) and
 * advances vruntime itself.  Pure function over caller memory.
 */
#ifndef HS_CFS_H
#define HS_CFS_H

#include <stdint.h>

#include "hs_plan.h"

struct hs_cfs_vcpu {
	uint32_t vcpu;		/* id */
	uint32_t pcpu;		/* home pCPU (hs_cfs_place) */
	uint32_t chain;		/* VNF vCPUs: chain index; else HS_NO_CHAIN */
	uint32_t owner;		/* VNF index in the chain, or VM index */
	uint8_t kind;		/* enum hs_kind */
	uint8_t runnable;	/* has work */
	uint64_t vruntime;	/* time run so far, any unit */
};

/*
 * Home pCPUs, as the stock load balancer would settle them.  With @load
 * NULL: by count (i mod npcpu), its steady state for equal loads.  With
 * @load (expected CPU share of each vCPU, 0..1): greedy balance, heaviest
 * first onto the least-loaded pCPU (ties: lower vCPU index, lower pCPU),
 * the steady state of load-based balancing.  @scratch: n entries (only
 * with @load).  Returns 0 or -EINVAL.
 */
int hs_cfs_place(struct hs_cfs_vcpu *v, const double *load, uint32_t n,
		 uint32_t npcpu, uint32_t *scratch, double *pcpu_load);

/*
 * Resets @plan and fills it: per pCPU its runnable vCPUs ordered by
 * (vruntime, vcpu id), each floor(g/l) ticks and the first g mod l one
 * more, where g = plan->g.  @scratch: n entries.
 * Returns the number of slots, or -EINVAL / -ENOSPC.
 */
int hs_cfs_plan(const struct hs_cfs_vcpu *v, uint32_t n, uint32_t *scratch,
		struct hs_plan *plan);

/*
 * Fluid fair share ("water-filling"), the ideal CFS approximates: on each
 * pCPU, every vCPU gets min(demand, level), the level chosen so that the
 * pCPU is fully used if its vCPUs want that much.  A vCPU that needs less
 * than an equal share keeps only what it needs (it blocks), the rest is
 * shared by the others.  @demand[i] and @share[i] are fractions of the
 * pCPU's time (demand clamped to 0..1, NaN counts as 0).  @scratch: n
 * entries.  Returns 0 or -EINVAL.
 */
int hs_cfs_fair(const struct hs_cfs_vcpu *v, const double *demand, uint32_t n,
		uint32_t npcpu, double *share, uint32_t *scratch);

#endif
