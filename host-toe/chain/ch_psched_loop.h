/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/chain/ (not installed): the packet scheduler run by
 * its owner's epoll loop (ch_psched_loop.c): the VNF threads' bells, taken
 * through the VNF's pidfd.  Scheduler thread only (ch_psched_int.h); the
 * loop's own calls are in ch_psched.h.
 */
#ifndef TOCHAIN_CH_PSCHED_LOOP_H
#define TOCHAIN_CH_PSCHED_LOOP_H

#include "ch_psched_int.h"

/*
 * Take the bells @vn's threads announce, through @pidfd, the pidfd of
 * @vn's process; again when an announcement changed.  Nothing without an
 * owner's loop.
 */
void ch_psched_loop_take(struct ch_psched *s, struct vnf *vn, int pidfd);

/* How many of @vn's threads ring us now (bell taken, not muted); any thread. */
uint32_t ch_psched_loop_bells(struct vnf *vn);

/* Drop @vn's bells (its process changed or is gone). */
void ch_psched_loop_forget(struct ch_psched *s, struct vnf *vn);

#endif /* TOCHAIN_CH_PSCHED_LOOP_H */
