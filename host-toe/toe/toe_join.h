/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/: processes that shared a socket before a TOE
 * restart share it again after it (toe_join.c).
 */
#ifndef TOCHAIN_TOE_JOIN_H
#define TOCHAIN_TOE_JOIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "toe_int.h"

struct toe_sock;

/*
 * Channel @ch's BIND or LISTEN of @s at @addr failed with EADDRINUSE.
 * When @s is a fresh socket of @ch alone (never listened, connected or
 * shared) and another open socket of the same family and type, with the
 * same secret, is bound to @addr, @ch becomes a holder of that sibling,
 * @s is closed, and the request @tag is answered 0 with b = the
 * sibling's id: true.  Otherwise nothing changes: false (the caller
 * answers EADDRINUSE).
 */
bool toe_join(struct toe *t, uint32_t ch, struct toe_sock *s, const struct sockaddr *addr,
	      socklen_t len, uint32_t tag);

#endif
