/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/chain/ (not installed): VNF liveness in the packet
 * scheduler (ch_psched_live.c): a dead process or a thread without
 * progress fails its VNF and a restart request reopens it (early-end
 * flags: ch_psched_sla.h).  Scheduler thread only
 * (ch_psched_int.h).
 */
#ifndef TOCHAIN_CH_PSCHED_LIVE_H
#define TOCHAIN_CH_PSCHED_LIVE_H

#include <stdint.h>

#include "ch_psched_int.h"

/*
 * Fail @vn (@why is logged): its channels close, its work descriptors
 * follow its policy (denied or bypassed).  Idempotent.
 */
void ch_psched_live_fail(struct ch_psched *s, struct vnf *vn, const char *why);

/* Liveness of the first @nvnfs VNFs: restarts asked for, dead pids, hung threads. */
void ch_psched_live_check(struct ch_psched *s, uint32_t nvnfs);

/* Close what the checks keep open for @vn (its pidfd, and the bells taken through it). */
void ch_psched_live_forget(struct ch_psched *s, struct vnf *vn);

#endif /* TOCHAIN_CH_PSCHED_LIVE_H */
