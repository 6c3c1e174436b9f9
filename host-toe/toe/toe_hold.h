// SPDX-License-Identifier: MIT
/*
 * The TOE's hold (--hold): a TOE started for a VM whose chains are not set
 * yet forwards nothing until the control command chains.ready releases
 * it.  Inbound: no accept, no read (the kernel backlog and receive queues
 * keep what arrives).  Outbound: the guest's data waits in the outbound
 * input queue (toe_stage.c), before the chain stage, so it meets the out
 * chain set before the release; a guest's TCP connect is answered
 * EINPROGRESS and recorded here, and issued (the SYN) at the release.
 * Fail-closed across a TOE restart: neither the guests' re-created
 * listeners nor their new outbound connections are served before
 * tochaind set the chains.
 * THREADING: toe_hold_release runs on the control thread, the rest on the
 * TOE's thread; the eventfd (toe_hold_fd) wakes the TOE's loop.
 * TRUST: the deferred connects are the TOE's own validated copies; at
 * most one per socket slot is kept (a reused slot replaces its entry), so
 * a guest that connects and closes in a loop while held costs no more
 * memory than its sockets do.
 */
#ifndef TOCHAIN_TOE_HOLD_H
#define TOCHAIN_TOE_HOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

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
/*
 * TOE thread, while held: the connect of socket @sock_id to @a (@len
 * bytes, at most a sockaddr_storage) waits for the release.  0 (answer
 * the guest EINPROGRESS), -EALREADY (this socket's connect waits
 * already), -EINVAL (@len), -ENOMEM.
 */
int toe_hold_defer_connect(struct toe_hold *h, uint32_t sock_id, const struct sockaddr *a,
			   socklen_t len);
/*
 * TOE thread, once released: the next deferred connect (its socket may
 * be gone since: the caller checks @sock_id); false when none is left.
 */
bool toe_hold_next_connect(struct toe_hold *h, uint32_t *sock_id, struct sockaddr_storage *a,
			   socklen_t *len);

#endif /* TOCHAIN_TOE_HOLD_H */
