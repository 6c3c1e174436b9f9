/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/chain/ (not installed): how the packet scheduler's
 * thread sleeps (ch_psched_wait.c).  Scheduler thread only
 * (ch_psched_int.h).
 */
#ifndef TOCHAIN_CH_PSCHED_WAIT_H
#define TOCHAIN_CH_PSCHED_WAIT_H

#include <stdbool.h>

#include "ch_psched_int.h"

/*
 * Sleep until a submit rings the doorbell, a VNF thread holding work of
 * ours returns verdicts, or a timeout: 50 ms with nothing out at the
 * VNFs (liveness, retired tables and restarts are not urgent then),
 * longer-lived waits otherwise (see the file).  Returns without sleeping
 * when an input queue or a verdict ring is not empty after the sleep was
 * announced.  Returns false on a timeout, true otherwise.
 */
bool ch_psched_wait(struct ch_psched *s);

#endif /* TOCHAIN_CH_PSCHED_WAIT_H */
