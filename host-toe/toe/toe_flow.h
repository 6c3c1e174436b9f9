/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/ (not installed): the 5-tuples of the TOE's
 * sockets (toe_flow.c), for the flow table (include/tochain/ch_flow.h,
 * the VM's side as source) and for the descriptors the stages submit.
 */
#ifndef TOCHAIN_TOE_FLOW_H
#define TOCHAIN_TOE_FLOW_H

#include <stdint.h>
#include <sys/socket.h>

#include "toe_int.h"

struct toe_sock;

/*
 * Record the 5-tuple of TCP socket @s (@peer, or the kernel's peer address
 * when NULL) and open its flow entry in @state; a full table leaves it
 * without one (TCR_FLOW_NONE).
 */
void toe_flow_open(struct toe *t, struct toe_sock *s, const struct sockaddr_storage *peer,
		   uint8_t state);

/* Set @s's flow table entry to @state (if it has one). */
void toe_flow_state(struct toe *t, struct toe_sock *s, uint8_t state);

/* The 5-tuple of item @idx of @s in direction @dir (TOE_DIR_IN/OUT) into @p (the rest zeroed). */
void toe_flow_tuple(struct toe *t, struct toe_sock *s, uint32_t idx, uint32_t dir,
		    struct ch_pkt *p);

#endif /* TOCHAIN_TOE_FLOW_H */
