// SPDX-License-Identifier: MIT
/*
 * fork (pthread_atfork).  A process that holds sockets attaches its
 * child's channel itself in the prepare handler (a second handshake, or a
 * second claim inside a VM) and sends FORK naming it on its own channel;
 * the TOE gives that channel a reference to every socket the parent holds
 * and answers once none of the parent's data is between a kernel socket
 * and its RX ring.  Connected streams are then shared (gl_claim.c).
 * After fork() the parent closes its copies of the child's channel, the
 * child closes its copies of the parent's and uses its own.  A process
 * without sockets forks for free: its child attaches on its first call.
 *
 * LOCKING.  gl_fork_prepare takes mu and returns with it held, so no
 * other thread is inside the runtime while fork() copies the process;
 * gl_fork_parent releases it; the child, whose copy of mu may be in any
 * state, initialises it again.  A socket a second thread creates while
 * prepare waits for FORK is not inherited.
 */
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <tochain/srpc.h>

#include "gl_chan.h"
#include "gl_claim.h"
#include "gl_fork.h"
#include "gl_real.h"
#include "gl_rt.h"
#include "gl_sock.h"
#include "gl_user.h"
#include "gl_vm.h"
#include "gl_wait.h"
#include "gl_wake.h"

static bool holds_sockets(const struct gl_rt *rt)
{
	for (uint32_t i = 0; i < 65536; i++)
		if (rt->by_id[i])
			return true;
	return false;
}

/* Close our copies of the child's channel (after fork, or when it failed). */
static void kid_close(struct gl_rt *rt)
{
	if (rt->kid.conn >= 0)
		gl_real.close(rt->kid.conn);
	gl_wake_close(&rt->kid.wake);	/* every fd in it is -1 or ours */
	rt->kid.conn = -1;
	rt->kid.ok = false;
}

/* Attach the child-to-be's channel into rt->kid; ours stays in use. */
static int kid_attach(struct gl_rt *rt)
{
	struct gl_wake mine = rt->wake;
	int conn = rt->conn, err;
	struct srpc_welcome w = { 0 };

	rt->conn = -1;
	rt->wake.efd_mine = rt->wake.efd_host = -1;
	rt->wake.vm.dev = rt->wake.vm.tfd = -1;
	if (rt->vm) {
		err = gl_vm_claim(rt, &w.channel, &w.epoch);
	} else {
		rt->wake.efd_mine = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		err = rt->wake.efd_mine < 0 ? -errno : gl_chan_handshake(rt, &w);
	}
	rt->kid.conn = rt->conn;
	rt->kid.wake = rt->wake;
	rt->kid.chan_no = w.channel;
	rt->kid.chan_epoch = w.epoch;
	rt->conn = conn;
	rt->wake = mine;
	if (err)
		kid_close(rt);
	return err;
}

void gl_fork_prepare(void)
{
	struct gl_rt *rt = &gl_rt;
	struct gl_waiter w = { 0 };

	gl_rt_lock();
	if (rt->attached && !rt->broken && (rt->hup || tcr_chan_stale(&rt->ch)))
		gl_chan_pump(rt);	/* the TOE died meanwhile: revive first, then share (gl_revive.c) */
	if (!rt->configured || !rt->attached || rt->broken || !rt->by_id || !holds_sockets(rt))
		return;	/* the child attaches when it first needs to */
	if (kid_attach(rt))
		return;
	/* answered once nothing of ours is between a kernel socket and our RX ring */
	if (gl_chan_call(rt, &w, SRPC_REQ_FORK, 0, (int)rt->kid.chan_no, (int)rt->kid.chan_epoch, 0,
			 NULL, 0)) {
		kid_close(rt);
		return;
	}
	gl_chan_pump(rt);
	rt->kid.ok = true;
	for (uint32_t i = 0; i < 65536; i++) {
		struct gl_sock *s = rt->by_id[i];

		if (s && !s->dgram && !s->listening && s->connected && !s->need_take)
			gl_claim_freeze(rt, s);
	}
}

void gl_fork_parent(void)
{
	struct gl_rt *rt = &gl_rt;

	if (rt->kid.ok && rt->sleepers)
		gl_wait_wake_all(rt);	/* our other threads' sockets need TAKE now */
	kid_close(rt);	/* the child holds its channel's connection now */
	gl_rt_unlock();
}

static void fork_reattach(struct gl_rt *rt)
{
	/* The parent's channel, buffers and waiters are not ours. */
	gl_chan_detach(rt);
	rt->waiters = NULL;
	for (uint32_t i = 0; i < 65536; i++)
		if (rt->by_id[i])
			gl_claim_inherit(rt->by_id[i]);
	if (!rt->kid.ok)
		return;	/* nothing inherited: attach on the first call */
	rt->conn = rt->kid.conn;
	rt->wake = rt->kid.wake;
	rt->kid.conn = -1;
	rt->kid.ok = false;
	rt->kid.wake.efd_mine = rt->kid.wake.efd_host = -1;	/* ours now */
	rt->kid.wake.vm.dev = -1;
	if (tcr_chan_attach(&rt->ch, rt->r, rt->kid.chan_no, 0)) {
		gl_chan_detach(rt);
		rt->broken = true;
		return;
	}
	rt->pid = getpid();
	rt->chan_no = rt->kid.chan_no;
	rt->chan_epoch = rt->kid.chan_epoch;
	rt->attached = true;
	rt->broken = false;
}

void gl_fork_child(void)
{
	struct gl_rt *rt = &gl_rt;

	gl_user_forked();
	pthread_mutex_init(&rt->mu, NULL);
	gl_rt_lock();	/* what follows expects mu held (it sleeps through gl_chan_sleep) */
	gl_wait_after_fork(rt);
	if (rt->attached)
		fork_reattach(rt);
	gl_rt_unlock();
}
