/* SPDX-License-Identifier: MIT */
/*
 * Repair of what runs for the chains (td_repair_*): after a daemon
 * (re)start, after a TOE restart, and every tick (~500 ms): a VNF
 * instance whose process (or domain's QEMU) died is started again, a VNF
 * the TOE failed in a live domain is attached again, a repair that
 * failed is retried every 2 s.  Everything goes through td_converge.
 * Runs on the daemon's one thread (td_priv.h).
 */
#ifndef TOCHAIN_TD_REPAIR_H
#define TOCHAIN_TD_REPAIR_H

#include "td_state.h"

struct daemon;

/* After a (re)start: bring every TOE's VNFs and chains back to the state. */
void td_repair_reconcile(struct daemon *d);

/* A VM's TOE was restarted: its chains and VNFs are gone; redo them. */
void td_repair_toe_restarted(struct daemon *d, struct td_vm *vm);

/*
 * Every ~500 ms, and at once when a child died: restart dead VNF
 * instances, repair TOEs that lost chains.  Returns the ms (1..500)
 * within which to call again: sooner than 500 when an instance waits for
 * its restart back-off (td_backoff.h), so that it restarts when its delay
 * is over, not up to 500 ms later.
 */
int td_repair_tick(struct daemon *d);

#endif
