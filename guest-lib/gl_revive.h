/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: surviving a TOE restart
 * (gl_revive.c).  mu held everywhere (gl_rt.c).
 */
#ifndef TOCHAIN_GL_REVIVE_H
#define TOCHAIN_GL_REVIVE_H

#include <sys/socket.h>

#include "gl_rt.h"

struct gl_sock;

/* How long a sleeper waits at most while the TOE is gone, before it looks for a new one. */
#define GL_REVIVE_MS	100

/*
 * The TOE went away (its connection hung up, or our channel went stale):
 * connected streams fail with ECONNRESET, the channel is dropped, the
 * process waits for a new TOE (rt->lost).  Kicks every sleeper.
 */
void gl_revive_lost(struct gl_rt *rt);
/*
 * While lost: attach to a new TOE if one is there (at most every
 * GL_REVIVE_MS/2), and re-create the sockets that had no peer
 * (listeners, datagram sockets, unconnected ones) under their fds.
 * 0 when attached again, -ENETDOWN while there is no TOE yet.
 */
int gl_revive_try(struct gl_rt *rt);

/* What a new TOE must be told again; recorded after the TOE accepted it. */
void gl_revive_note_bind(struct gl_sock *s, const struct sockaddr *a, socklen_t l);
void gl_revive_note_connect(struct gl_sock *s, const struct sockaddr *a, socklen_t l);
void gl_revive_note_listen(struct gl_sock *s, int backlog);
void gl_revive_note_opt(struct gl_sock *s, int level, int name, const void *v, socklen_t l);
/* @s is freed: forget its record and drop it from the list of sockets to re-create. */
void gl_revive_forget(struct gl_rt *rt, struct gl_sock *s);

#endif /* TOCHAIN_GL_REVIVE_H */
