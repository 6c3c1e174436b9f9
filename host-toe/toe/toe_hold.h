// SPDX-License-Identifier: MIT
/*
 * The TOE's hold (--hold): a TOE started for a VM whose chains are not set
 * yet forwards nothing inbound (no accept, no read: the kernel backlog and
 * receive queues keep what arrives) until the control command
 * chains.ready releases it.  Fail-closed across a TOE restart: the guests'
 * re-created listeners are not served before tochaind set the chains.
 * THREADING: toe_hold_release runs on the control thread, the rest on the
 * TOE's thread; the eventfd (toe_hold_fd) wakes the TOE's loop.
 */
#ifndef TOCHAIN_TOE_HOLD_H
#define TOCHAIN_TOE_HOLD_H

#include <stdbool.h>

struct toe_hold;

/* A hold, held or not.  NULL with errno. */
struct toe_hold *toe_hold_create(bool held);
void toe_hold_destroy(struct toe_hold *h);
/* Readable once a release is due (the TOE's epoll set has it). */
int toe_hold_fd(const struct toe_hold *h);
/* Control thread: release; true if it was held until now. */
bool toe_hold_release(struct toe_hold *h);
/* TOE thread: is it still held?  Clears the eventfd. */
bool toe_hold_held(struct toe_hold *h);

#endif /* TOCHAIN_TOE_HOLD_H */
