/* SPDX-License-Identifier: MIT */
/*
 * hs_vmshare — Algorithm 2 of the paper: the ticks of one pCPU left after
 * its VNF slots, shared among the VM vCPUs of its RQ_vm.
 *
 * Pure function over caller memory; safe from any thread.
 */
#ifndef HS_VMSHARE_H
#define HS_VMSHARE_H

#include <stdint.h>

#include "hs_vmrq.h"

#define HS_TS_EMPTY UINT64_MAX	/* "output queue empty" arrival time */

struct hs_vmgrant {
	uint32_t vcpu;
	uint32_t vm;
	uint32_t ticks;
};

/*
 * Orders the @l vCPUs of @rq by the arrival time of the head packet of
 * their VM's output queue, head_ts[vm] (oldest first; HS_TS_EMPTY last;
 * equal keys keep their run-queue order, as the paper's insertion sort
 * does), then gives each floor((g - g_vnf)/l) ticks and one more to the
 * first (g - g_vnf) mod l.  g_vnf > g is treated as g (nothing left).
 *
 * @head_ts: indexed by VM index, @nvm entries; a VM index out of range
 *           counts as empty.
 * @out:     @l entries, in run order.
 *
 * Returns the number of entries written (l), or -EINVAL.
 */
int hs_vmshare(const struct hs_vment *rq, uint32_t l, const uint64_t *head_ts,
	       uint32_t nvm, uint32_t g, uint32_t g_vnf,
	       struct hs_vmgrant *out);

#endif
