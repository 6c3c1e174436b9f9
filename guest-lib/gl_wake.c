// SPDX-License-Identifier: MIT
/*
 * The doorbell of a stand-in guest process: a pair of eventfds exchanged
 * with the TOE at attach time.  Inside a VM it is the ivshmem doorbell
 * of the guest driver, or a poll timer (gl_vm.c); nothing else in the
 * runtime knows how a wake-up travels.
 */
#include <errno.h>
#include <stdint.h>

#include "gl_real.h"
#include "gl_vm.h"
#include "gl_wake.h"

int gl_wake_fd(const struct gl_wake *w)
{
	return w->efd_mine;
}

void gl_wake_host(struct gl_wake *w)
{
	uint64_t one = 1;

	if (w->vm.dev >= 0) {
		gl_vm_wake_host(&w->vm);
		return;
	}
	if (gl_real.write(w->efd_host, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, the TOE wakes anyway */
	}
}

void gl_wake_drain(struct gl_wake *w)
{
	uint64_t v;

	if (gl_real.read(w->efd_mine, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing pending */
	} else if (w->vm.dev >= 0) {
		gl_vm_poll_tick(&w->vm);	/* poll mode: adapt the timer */
	}
}

void gl_wake_close(struct gl_wake *w)
{
	if (w->efd_mine >= 0)
		gl_real.close(w->efd_mine);
	if (w->efd_host >= 0)
		gl_real.close(w->efd_host);
	w->efd_mine = w->efd_host = -1;
	w->vm.dev = -1;	/* the claim file is the runtime's conn: closed there */
}
