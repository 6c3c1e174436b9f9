/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: sleeping and waking the threads of
 * a process (gl_wait.c, whose top comment has the rules).  mu held.
 */
#ifndef TOCHAIN_GL_WAIT_H
#define TOCHAIN_GL_WAIT_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>

#include "gl_rt.h"

/*
 * Sleep until the TOE publishes something, another thread changed socket
 * state (a kick), one of @pfd is ready, or @timeout_ms (-1: none) passes;
 * with @mask, the real wait runs under that signal mask (ppoll).  mu held;
 * released while sleeping.  Returns how many of @pfd are ready (>= 0), or
 * -errno (-EINTR).  A return says "look again", never "ready": callers
 * loop until their own condition holds or their own deadline passes.
 * *@rang: the doorbell rang and was drained; the caller must pump before
 * it releases mu (rule 3).  Callers use gl_chan_sleep, which does.
 */
int gl_wait_sleep(struct gl_rt *rt, struct pollfd *pfd, nfds_t n, int timeout_ms,
		  const sigset_t *mask, bool *rang);
/*
 * The steps of gl_wait_sleep before and after its real wait, for the unit test
 * (tests/unit/test_gl_wait.c), which plays a thread asleep in poll with
 * them.  A sleeper is linked into gl_rt.sleepers while it waits.
 */
struct gl_sleeper {
	struct gl_sleeper *next;
	int kfd;		/* its kick eventfd, -1: none */
	bool kicked;		/* written since it linked itself */
};
/* Rule 1 up to the wait: link @me, raise the flags; false if a ring holds work (do not sleep). */
bool gl_wait_link(struct gl_rt *rt, struct gl_sleeper *me);
/* Rule 4: unlink @me; @kick_readable: its poll saw the kick fd readable. */
void gl_wait_unlink(struct gl_rt *rt, struct gl_sleeper *me, bool kick_readable);
/* Socket state changed in a way a sleeper may wait for: every sleeper looks again. */
void gl_wait_wake_all(struct gl_rt *rt);
/* In a forked child: the parent's sleepers and kick fds are not ours. */
void gl_wait_after_fork(struct gl_rt *rt);

#endif /* TOCHAIN_GL_WAIT_H */
