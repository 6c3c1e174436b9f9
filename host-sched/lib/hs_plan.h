/* SPDX-License-Identifier: MIT */
/*
 * hs_plan — what every pCPU of the synchronous partition runs in one
 * period: an ordered list of (vCPU, ticks, kind, chain) slots per pCPU.
 *
 * Produced by hs_sched_plan() (sync mode) or hs_cfs_plan() (cfs model),
 * applied by the daemon, printed by `sfc-ctl sched show`.
 *
 * Building: hs_plan_reset(), then hs_plan_add() in run order for each pCPU
 * (slots for different pCPUs may interleave), then hs_plan_finish(), which
 * groups the slots by pCPU keeping their order and computes start offsets.
 * Reading (hs_plan_slots, formatters) is valid after hs_plan_finish().
 *
 * Threading: a plan is a plain object; one writer at a time, no locking.
 */
#ifndef HS_PLAN_H
#define HS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "hs_chain.h"

#define HS_NO_CHAIN UINT32_MAX

struct hs_slot {
	uint32_t vcpu;		/* vCPU id as given in the configuration */
	uint32_t chain;		/* chain index (VNF slots), HS_NO_CHAIN for VMs */
	uint32_t owner;		/* VNF slots: VNF index in the chain; VM slots: VM index */
	uint32_t start;		/* tick offset in the period (after finish) */
	uint32_t ticks;
	uint8_t kind;		/* enum hs_kind */
	uint8_t early;		/* set by the caller when the slot ended early */
};

struct hs_plan {
	uint32_t npcpu;
	uint32_t g;		/* ticks per period */
	uint32_t cap;		/* room in slot[] */
	uint32_t nslot;
	uint32_t ndeferred;	/* chains with H > 0 that did not fit (sync) */
	struct hs_slot *slot;	/* grouped by pCPU after finish */
	uint32_t *pcpu_of;	/* staging: pCPU of slot[i] before finish */
	uint32_t *first;	/* npcpu + 1 offsets into slot[] after finish */
	struct hs_slot *tmp;	/* finish's sorting space */
	uint32_t *vnf_ticks;	/* per pCPU: ticks given to VNF slots (g_vnf) */
};

/* Returns a plan for @npcpu pCPUs and up to @cap slots, or NULL with errno
 * (EINVAL, ENOMEM). */
struct hs_plan *hs_plan_create(uint32_t npcpu, uint32_t g, uint32_t cap);
void hs_plan_destroy(struct hs_plan *p);

void hs_plan_reset(struct hs_plan *p);

/* Appends a slot; returns 0, -EINVAL (pCPU out of range, bad kind), or
 * -ENOSPC if the plan is full. */
int hs_plan_add(struct hs_plan *p, uint32_t pcpu, uint32_t vcpu,
		uint32_t chain, uint32_t owner, uint32_t ticks, enum hs_kind kind);

void hs_plan_finish(struct hs_plan *p);

/* Slots of @pcpu in run order; *n gets their number. */
const struct hs_slot *hs_plan_slots(const struct hs_plan *p, uint32_t pcpu,
				    uint32_t *n);

/*
 * Human-readable and JSON renderings into @buf (always NUL-terminated when
 * @len > 0).  Return the length the full text needs, excluding the NUL, as
 * snprintf does: a result >= @len means it was truncated.  @chains/@nchain
 * (may be NULL/0) supply chain and VNF names.
 */
size_t hs_plan_format_text(const struct hs_plan *p,
			   const struct hs_chain_cfg *chains, uint32_t nchain,
			   char *buf, size_t len);
size_t hs_plan_format_json(const struct hs_plan *p,
			   const struct hs_chain_cfg *chains, uint32_t nchain,
			   char *buf, size_t len);

#endif
