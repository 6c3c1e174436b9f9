/* SPDX-License-Identifier: MIT */
/*
 * hs_vmrq — the per-pCPU run queues of user-VM vCPUs (RQ_vm).
 *
 * Unlike RQ_vnf, these are sticky: a VM vCPU stays on its pCPU from period
 * to period until hs_vmrq_rebalance() moves it.  One owner, no locking.
 */
#ifndef HS_VMRQ_H
#define HS_VMRQ_H

#include <stdint.h>

struct hs_vment {
	uint32_t vcpu;		/* vCPU id */
	uint32_t vm;		/* VM index */
};

struct hs_vmrq {
	uint32_t npcpu;
	uint32_t cap;		/* entries per queue */
	uint32_t *len;		/* per pCPU */
	struct hs_vment *e;	/* queue j is e[j*cap .. j*cap+len[j]) */
};

/* Queues for @npcpu pCPUs holding up to @cap vCPUs each; NULL with errno. */
struct hs_vmrq *hs_vmrq_create(uint32_t npcpu, uint32_t cap);
void hs_vmrq_destroy(struct hs_vmrq *rq);

/* Appends to the shortest queue (ties: lowest pCPU); returns that pCPU
 * (>= 0) or -ENOSPC. */
int hs_vmrq_add(struct hs_vmrq *rq, uint32_t vcpu, uint32_t vm);

/* Queue of @pcpu. */
const struct hs_vment *hs_vmrq_queue(const struct hs_vmrq *rq, uint32_t pcpu,
				     uint32_t *n);

/*
 * After a period: while the longest queue (lowest index among equals) is
 * at least 2 longer than the shortest (lowest index among equals), move
 * the tail vCPU of the former to the tail of the latter.  Ends with queue
 * lengths differing by at most 1; moves as few vCPUs as that needs.
 * Returns the number of vCPUs moved.
 */
uint32_t hs_vmrq_rebalance(struct hs_vmrq *rq);

#endif
