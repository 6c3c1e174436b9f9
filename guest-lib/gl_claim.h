/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: ownership of streams shared after
 * fork (gl_claim.c, whose top comment has the rules).  mu held.
 */
#ifndef TOCHAIN_GL_CLAIM_H
#define TOCHAIN_GL_CLAIM_H

#include <stdbool.h>

#include <tochain/srpc.h>

#include "gl_rt.h"

struct gl_sock;

/* Parent, before fork: connected stream @s is shared from now on (a copy goes to the child). */
void gl_claim_freeze(struct gl_rt *rt, struct gl_sock *s);
/* Child, after fork: @s is inherited; its buffers were the parent's. */
void gl_claim_inherit(struct gl_sock *s);
/* The pump got EV_OWNER @m for @s: settle who reads and whose the fork's data is. */
void gl_claim_owner_event(struct gl_rt *rt, struct gl_sock *s, const struct srpc_msg *m);
/* Post TAKE for @s without waiting (poll); false: no buffer now, try again later. */
bool gl_claim_take_async(struct gl_rt *rt, struct gl_sock *s);

#endif /* TOCHAIN_GL_CLAIM_H */
