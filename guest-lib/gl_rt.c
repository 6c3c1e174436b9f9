// SPDX-License-Identifier: MIT
/*
 * The process's runtime object, gl_rt, and its one mutex.
 *
 * LOCKING AND THREADS.  One mutex per process, gl_rt.mu, protects
 * everything in struct gl_rt: the channel and its buffers (gl_chan.c,
 * gl_ring.h), the socket objects (gl_sock.c), the calls waiting for a
 * response, the epoll tables (gl_epoll.c), the sleeping threads and the
 * kick pool (gl_wait.c).  Every gl_* function that takes a struct gl_rt *
 * expects it held ("mu held") unless it says otherwise; the interposers
 * (gl_api.c) take it around each offloaded call.
 *
 *  - Blocking: a call that waits releases mu only inside the real wait of
 *    gl_chan_sleep (gl_wait.c has the rules of who wakes whom), and looks
 *    at socket state again after it took mu back.
 *  - No runtime thread: whoever holds mu and needs progress pumps the
 *    channel (gl_chan_pump).
 *  - Without mu: the fd table is read through atomic loads, so calls on
 *    ordinary fds never contend (gl_fd.c); gl_real is set up once
 *    (pthread_once); the resolver (gl_resolv.c) runs without mu and uses
 *    the interposed calls, which take it.
 *  - fork: the prepare handler returns with mu held and the parent's
 *    handler releases it; the child initialises it again (gl_fork.c).
 *  - Signals: offloaded calls are not async-signal-safe; a handler that
 *    makes one while the interrupted code holds mu deadlocks.
 *  - The region library is linked into the runtime, so its close() is the
 *    interposed one: a close of the runtime's own fd under mu (a region
 *    mapped again after a TOE restart, gl_revive.c) must not take mu
 *    again (gl_rt_held).
 *
 * Nothing in the runtime exits or aborts: it lives in other programs.
 */
#include <pthread.h>

#include "gl_rt.h"

struct gl_rt gl_rt = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.conn = -1,
	.wake = { .efd_mine = -1, .efd_host = -1, .vm = { .dev = -1 } },
	.kid = { .conn = -1, .wake = { .efd_mine = -1, .efd_host = -1, .vm = { .dev = -1 } } },
};

/* Does this thread hold mu?  Set only by its holder, so no ordering is needed. */
static __thread bool held;

void gl_rt_lock(void)
{
	pthread_mutex_lock(&gl_rt.mu);
	held = true;
}

void gl_rt_unlock(void)
{
	held = false;
	pthread_mutex_unlock(&gl_rt.mu);
}

bool gl_rt_held(void)
{
	return held;
}
