/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: poll/select emulation and the
 * readiness of offloaded sockets (gl_poll.c).
 */
#ifndef TOCHAIN_GL_POLL_H
#define TOCHAIN_GL_POLL_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>

#include <tochain/util.h>

#include "gl_rt.h"

struct gl_sock;

/* poll/ppoll (@mask) over offloaded and ordinary fds: ready count or -errno.  Takes mu. */
int gl_poll(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask);
/*
 * Readiness of @s as poll(2) reports it (mu held).  A shared socket this
 * process does not own is claimed (TAKE posted without waiting): it shows
 * data once the TOE answered.
 */
short gl_poll_revents(struct gl_rt *rt, struct gl_sock *s);

/* Milliseconds left until @deadline (ns, -1: none, gives -1), 0 when passed. */
static inline int gl_poll_left_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - (int64_t)tu_now_ns();
	return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}


#endif /* TOCHAIN_GL_POLL_H */
