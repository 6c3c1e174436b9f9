/* SPDX-License-Identifier: MIT */
/*
 * hs_gang — Algorithm 1 of the paper: greedy gang placement of the VNF
 * vCPUs of every chain onto the pCPUs of the synchronous partition.
 *
 * A workspace (hs_gang_ws) holds the per-call scratch arrays so that a
 * period's planning allocates nothing; one workspace per thread.
 */
#ifndef HS_GANG_H
#define HS_GANG_H

#include <stdint.h>

#include "hs_admit.h"
#include "hs_chain.h"
#include "hs_plan.h"

struct hs_gang_ws;

/* Scratch for up to @nchain chains, @npcpu pCPUs and @g ticks per period
 * (plans passed with it must have the same npcpu and g); NULL with errno. */
struct hs_gang_ws *hs_gang_ws_create(uint32_t nchain, uint32_t npcpu,
				     uint32_t g);
void hs_gang_ws_destroy(struct hs_gang_ws *ws);

/*
 * Places the VNF vCPUs of the chains with prio[i] > 0, highest priority
 * first (ties: lower chain index first), appending one VNF slot per vCPU
 * to @plan (which the caller reset and will finish).  For each chain:
 *
 *   u = (sum_j u_j + sum of the chain's quotas) / m
 *   for each VNF k, thread r: among pCPUs not yet used by this chain,
 *   pick j minimising (q_ik + u_j - u)^2 (ties: lowest j); u_j += q_ik.
 *
 * u_j starts at 0 every period (RQ_vnf is filled anew).  Beyond the paper,
 * a pCPU is only eligible if q_ik + u_j <= g; if some vCPU of a chain finds
 * none, the chain's placements are undone, it is not run this period and
 * plan->ndeferred counts it (admission makes this rare, not impossible).
 *
 * Returns the number of chains placed, or -EINVAL / -ENOSPC (plan full).
 */
int hs_gang_place(const struct hs_chain_cfg *chains,
		  const struct hs_chain_quota *q, const double *prio,
		  uint32_t n, struct hs_gang_ws *ws, struct hs_plan *plan);

#endif
