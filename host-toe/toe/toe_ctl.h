/* SPDX-License-Identifier: MIT */
/*
 * The TOE control socket (toe_ctl_*): R.ctl, protocol v1 (include/tochain/ctl_proto.h
 * framing; commands in host-toe/toe/README.md "Control protocol"), served by a
 * thread of its own so that a slow client or a chain replacement (an RCU
 * grace period) never stalls the data path.  It drives the chain stage
 * through its control calls (toe_chain.h) only.
 *
 * Trust: a client is whoever may open the socket file (mode 0600, the
 * TOE's user): the control plane.  Every request is still validated
 * completely before anything changes; a refused one changes nothing.
 */
#ifndef TOCHAIN_TOE_CTL_H
#define TOCHAIN_TOE_CTL_H

#include "toe_capture.h"
#include "toe_chain.h"
#include "toe_hold.h"

struct toe_ctl;

/*
 * Bind @path (mode 0600) and start the thread serving it for VM @name.
 * @cap: the capture facility (NULL: capture.* refused).  @hold: released
 * by chains.ready (NULL: nothing to release).  The socket
 * accepts connections when this returns.  NULL with errno.
 */
struct toe_ctl *toe_ctl_start(const char *path, const char *name, struct toe_chain *tc,
			      struct toe_capture *cap, struct toe_hold *hold);
/* Stop the thread, close and remove the socket. */
void toe_ctl_stop(struct toe_ctl *c);

#endif /* TOCHAIN_TOE_CTL_H */
