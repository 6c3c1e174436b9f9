/* SPDX-License-Identifier: MIT */
/*
 * hs_sched — the synchronous scheduler, one call per period.
 *
 * The caller (tochaind, or tochain-sim) owns the configuration and the
 * counters.  At each period boundary it:
 *   1. fills one hs_chain_stats per chain with last period's counters,
 *   2. calls hs_sched_plan() and applies the plan (VNF slots first, then
 *      VM slots, per pCPU, in order),
 *   3. during the period, lets service threads ask hs_early_end(),
 *   4. after the period, calls hs_sched_rebalance() and applies any move
 *      of VM vCPUs between pCPUs (hs_sched_vmrq() shows the queues).
 *
 * Changing the chains, their SLAs or the VMs: build the new configuration,
 * hs_sched_create() it (admission runs again), and only on success swap
 * it in and destroy the old one: a refused set changes nothing.
 *
 * Threading: an hs_sched is owned by one thread (the daemon's scheduler
 * loop); nothing in it is shared or locked.  Planning allocates nothing.
 */
#ifndef HS_SCHED_H
#define HS_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hs_admit.h"
#include "hs_chain.h"
#include "hs_plan.h"
#include "hs_rate.h"
#include "hs_vmrq.h"

struct hs_sched_cfg {
	uint32_t npcpu;			/* pCPUs of the synchronous partition */
	uint32_t g;			/* ticks per period (also C of eq. 2) */
	double period_s;		/* period length in seconds */
	uint32_t nchain;
	const struct hs_chain_cfg *chains;	/* kept by reference */
	uint32_t nvm;
	const struct hs_vm_cfg *vms;		/* kept by reference */
	/*
	 * false: the paper's rule, a chain with H = 0 (R = 0) is not run
	 * this period.  true: it is placed after every chain with H > 0
	 * (room permitting), for a caller that ends an idle slot at once
	 * and gives it back when input comes (tochain-sched): a closed-loop
	 * chain's queue is often empty at the boundary with requests on
	 * their way, and skipping it froze it for a whole period.
	 */
	bool place_idle;
};

/* A chain's counters for the period that just ended. */
struct hs_chain_stats {
	uint64_t in;		/* I_i: arrivals at the input queue */
	uint64_t finished;	/* F_i: packets that left the chain */
	uint64_t left;		/* R_i: input-queue length at the end */
	uint64_t oq_head_ts;	/* arrival time of the output queue's head
				 * packet, any monotonic unit; HS_TS_EMPTY */
	/* The quota feedback (hs_rate.h); all 0: none this period. */
	uint64_t served;	/* packets in t_i's unit the chain finished */
	double busy_s[HS_MAX_VNFS];	/* per VNF (configuration order): its
					 * threads' busy seconds, summed */
};

struct hs_sched;

/*
 * Runs admission control (hs_admit) on the configuration and places the
 * VM vCPUs on the run queues.  NULL with errno: EINVAL (bad configuration,
 * @why says what), ERANGE/E2BIG/ENOSPC (admission refused, @why names the
 * chain/VNF), ENOMEM.
 */
struct hs_sched *hs_sched_create(const struct hs_sched_cfg *cfg, char *why,
				 size_t whylen);
void hs_sched_destroy(struct hs_sched *s);

/* Slots a plan passed to hs_sched_plan() needs room for. */
uint32_t hs_sched_plan_cap(const struct hs_sched *s);

/*
 * The quota feedback, then Algorithm 1, then Algorithm 2 on every pCPU.
 * Feedback: each VNF with a measurement (busy_s > 0) folds it into its
 * rate (hs_rate_update); a VNF whose rate has samples gets
 * hs_rate_ticks() instead of admission's eq. 2 quota, with admission's
 * thread count.  If the VNF quotas then exceed what admission admitted
 * and HS_FEEDBACK_SHARE of the partition (the rest is the VMs'), every
 * fed-back quota is scaled down by the same factor (at least 1 tick):
 * chains fall short of their SLAs in proportion, none starves.
 * Resets and fills @plan
 * (created with the same npcpu and g and at least hs_sched_plan_cap()
 * slots).  @st: one entry per chain.  Returns the number of chains placed
 * or -EINVAL / -ENOSPC.
 */
int hs_sched_plan(struct hs_sched *s, const struct hs_chain_stats *st,
		  struct hs_plan *plan);

/* After the period: rebalance RQ_vm; returns the number of vCPUs moved. */
uint32_t hs_sched_rebalance(struct hs_sched *s);

/* This period's quotas (fed back), or NULL. */
const struct hs_chain_quota *hs_sched_quota(const struct hs_sched *s,
					    uint32_t chain);

/* Share of the partition's ticks the fed-back VNF quotas may take in all. */
#define HS_FEEDBACK_SHARE	0.8

/* VNF @vnf of chain @chain's rate, or NULL. */
const struct hs_rate *hs_sched_rate(const struct hs_sched *s, uint32_t chain,
				    uint32_t vnf);
/*
 * Carries a rate over, e.g. from the scheduler this one replaces for the
 * same chain and VNF; its calibration must match the VNF's f (else the
 * call does nothing).  0, or -EINVAL.
 */
int hs_sched_set_rate(struct hs_sched *s, uint32_t chain, uint32_t vnf,
		      const struct hs_rate *r);
/* H_i computed by the last hs_sched_plan(). */
double hs_sched_prio(const struct hs_sched *s, uint32_t chain);
const struct hs_vmrq *hs_sched_vmrq(const struct hs_sched *s);

#endif
