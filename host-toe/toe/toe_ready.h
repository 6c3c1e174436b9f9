/* SPDX-License-Identifier: MIT */
/*
 * Readiness events of listening sockets (SRPC_EV_ACCEPTABLE), coalesced
 * per socket and channel.  Private to the TOE.
 *
 * Contract: every holder of a listener learns whether a connection waits,
 * but a channel has at most one ACCEPTABLE message of a socket on its way
 * (in the pending queue, on its RX ring or held by the guest) at any time:
 * a change while one is out is only recorded, and the latest state goes
 * out when the guest returns the message's buffer on DONE, if it differs
 * from what the guest was last told.  A process that holds a listener but
 * never calls into the runtime (the nginx master after forking its
 * workers) therefore costs one ring slot and one buffer per listener, not
 * two per connection its siblings accept.
 *
 * "Told" follows what the guest runtime believes (guest-lib gl_ctl.c): it
 * clears its flag before each ACCEPT and sets it from the response's
 * "more"; so an ACCEPT answer counts as telling the caller "more".
 * A guest flag that is set while the TOE thinks it is clear only costs a
 * spurious EAGAIN; the reverse, a lost wake-up, cannot happen since the
 * guest clears its flag only before an ACCEPT or on an event a = 0.
 */
#ifndef TOCHAIN_TOE_READY_H
#define TOCHAIN_TOE_READY_H

#include <stdbool.h>
#include <stdint.h>

#include "toe_int.h"

struct toe_sock;

/* Listener @s has (@on) or has no connection waiting: tell every holder but @except (-1: none). */
void toe_ready_set_all(struct toe *t, struct toe_sock *s, bool on, int except);
/* Channel @ch was told @on in the answer to its ACCEPT. */
void toe_ready_told(struct toe_sock *s, uint32_t ch, bool on);
/* Channel @ch no longer holds @s: forget its state (a new holder starts clear). */
void toe_ready_forget(struct toe_sock *s, uint32_t ch);
/* Channel @ch returned the buffer of an ACCEPTABLE event of @sock_id (toe_chan_ops.ev_done). */
void toe_sock_on_ev_done(struct toe *t, uint32_t ch, uint32_t sock_id);

#endif
