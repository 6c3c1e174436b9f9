/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/chain/ (not installed): the packet scheduler's
 * result side (ch_psched_collect.c): verdicts read back from the VNFs
 * (each once, untrusted) and finished descriptors released to a chain's
 * output queue in each connection's arrival order.  Scheduler thread
 * only (ch_psched_int.h).
 */
#ifndef TOCHAIN_CH_PSCHED_COLLECT_H
#define TOCHAIN_CH_PSCHED_COLLECT_H

#include <stdbool.h>
#include <stdint.h>

#include "ch_psched_int.h"

/* Release finished flights of @chain, each connection's in arrival order; how many. */
unsigned int ch_psched_collect_release(struct ch_psched *s, uint32_t chain);

/*
 * A verdict (or, with @lost, the loss of the work descriptor: its VNF
 * failed) for work descriptor @vd of VNF @vn.  Stale ones are ignored.
 */
void ch_psched_collect_verdict(struct ch_psched *s, struct vnf *vn, const struct vdesc *vd,
			       uint32_t verdict, uint32_t rule, bool lost);

/*
 * Take what @vn's threads returned on TX; the number of descriptors taken.
 * On a protocol violation it stops and sets *@why to the reason, for the
 * caller to fail @vn with (ch_psched_live_fail): liveness sits above
 * collection, which never calls it.
 */
unsigned int ch_psched_collect_vnf(struct ch_psched *s, struct vnf *vn, const char **why);

#endif /* TOCHAIN_CH_PSCHED_COLLECT_H */
