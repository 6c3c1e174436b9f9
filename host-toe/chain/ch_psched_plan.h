/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/chain/ (not installed): which service threads of a
 * VNF the packet scheduler dispatches to (ch_psched_plan.c).  The CPU
 * scheduler runs exactly the threads eq. 2 asks for (R of a VNF's
 * threads); the others are never planned, so they must get no work: a
 * descriptor given to a thread that never runs would hang the VNF
 * (ch_psched_live.c) and, fail-closed, reset the chain's connections.
 * The contract of ch_psched_vnf_run_threads() is in ch_psched.h.
 */
#ifndef TOCHAIN_CH_PSCHED_PLAN_H
#define TOCHAIN_CH_PSCHED_PLAN_H

#include <stdint.h>

#include "ch_psched_int.h"

/*
 * Scheduler thread: the channel of @vn for a descriptor of connection
 * @conn_id, among the threads planned to run, by @vn's dispatch policy.
 */
uint32_t ch_psched_plan_thread(struct vnf *vn, uint64_t conn_id);

#endif /* TOCHAIN_CH_PSCHED_PLAN_H */
