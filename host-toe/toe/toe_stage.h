/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/ (not installed): the TOE's per-direction stages
 * (toe_stage.c), the top layer under the loop (toe_int.h).  Each direction
 * has an input queue, the chain stage (toe_chain.h) and an output queue.
 */
#ifndef TOCHAIN_TOE_STAGE_H
#define TOCHAIN_TOE_STAGE_H

#include <stdbool.h>

#include "toe_int.h"

/* Results back from the chains, input queues submitted or passed on.  true: did something. */
bool toe_stage_step(struct toe *t);

/* Output queues: inbound to the guests' RX rings, outbound to the sockets' send queues. */
void toe_stage_drain(struct toe *t);

#endif /* TOCHAIN_TOE_STAGE_H */
