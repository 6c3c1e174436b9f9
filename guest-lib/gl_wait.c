// SPDX-License-Identifier: MIT
/*
 * Sleeping and waking the threads of a guest process (gl_wait_sleep,
 * which the runtime calls through gl_chan_sleep).
 *
 * WAKE-UPS.  The TOE rings one doorbell per process (gl_wake.c), and only
 * while the consumer wait flags of the RX and FREE rings are up
 * (tcr_ring_cons_wait_prepare).  Several threads may sleep at once, each
 * waiting for something else (a response, data or send credit on its
 * socket, readiness in poll/select/epoll), and one doorbell cannot say
 * for whom it rang: the first thread to drain it used to be the only one
 * to know, and a thread that slept without a time bound could sleep
 * through work that another thread had pumped for it.  The rules, all
 * under gl_rt.mu except the real wait itself:
 *
 *  1. A sleeper links itself into gl_rt.sleepers with a kick eventfd of
 *     its own, raises the wait flags, re-checks both rings (the flag and
 *     the ring form a Dekker pair with the TOE, ring.h F1/F2), and only
 *     then releases mu and waits in the real poll on: the doorbell, the
 *     TOE connection (a hang-up: the TOE died), its kick fd, and the
 *     caller's ordinary fds.  The flags stay up while anyone is linked.
 *  2. Socket state changes only under mu.  Whoever makes a change a
 *     sleeper may be waiting for (a pump that took anything from RX or
 *     FREE, the channel breaking, shutdown, epoll_ctl) kicks every linked
 *     sleeper: one write to its kick fd (gl_wait_wake_all).  A kick
 *     written before the sleeper reached poll stays pending in the fd
 *     (level-triggered), so it cannot be lost, and the sleeper looks at
 *     the new state only after the kicker released mu.
 *  3. Whoever drains the doorbell pumps before it releases mu, so a
 *     wake-up taken off the shared doorbell always becomes rule-2 kicks
 *     for the others.  Nothing else drains the doorbell.  gl_wait_sleep
 *     drains it and says so (*rang); gl_chan_sleep, the only caller,
 *     pumps (this file sits below the pump and never calls it).
 *  4. A sleeper unlinks itself before it pumps, then drains its kick fd
 *     if it was kicked (or the fd was readable): nobody writes the fd once
 *     it is unlinked, so no kick is left over for the next sleep.
 *  5. Whoever drains the doorbell while other sleepers stay linked raises
 *     the flags again before it pumps.  The TOE takes the flags down when
 *     it rings (tcr_ring_prod_kick), and a sleeper whose poll looked at
 *     the doorbell only after it was drained sleeps on: if the drainer's
 *     pump found nothing new (a running thread's pump had taken what the
 *     ring was for), nobody kicks it, and with the flags down the TOE
 *     would not ring for its answer either (test_gl_wait).  Raised before
 *     the pump, the flag and the ring form the Dekker pair again: what
 *     the TOE published before it could see the flag, the pump takes (and
 *     kicks the others for, rule 2); what it publishes after, it rings for.
 *
 * A wake-up means "look again", never "your condition holds": every
 * blocking path loops (pump, re-check under mu, sleep again) until its
 * condition holds or its own deadline passes (gl_chan_wait in gl_chan.c,
 * gl_poll in gl_poll.c, gl_epoll_wait in gl_epoll.c); EOF, timeouts and errors come
 * only from socket state and clocks.  Kicks go only to linked sleepers and
 * at most once per sleep, so wake-ups cannot ping-pong between threads.
 * Cost: a pump wakes every sleeper of the process, as the shared doorbell
 * always did.
 *
 * Kick fds come from a per-process pool (one per concurrent sleeper,
 * created on demand and reused); without one (EMFILE) a sleeper bounds its
 * sleep to GL_NOKICK_MS and relies on looking again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>

#include <tochain/barrier.h>
#include <tochain/util.h>

#include "gl_real.h"
#include "gl_revive.h"
#include "gl_rt.h"
#include "gl_wait.h"
#include "gl_wake.h"

#define GL_SPIN_MAX_NS	20000	/* ceiling of the adaptive poll (tochain/spin.h) */
#define GL_NOKICK_MS	10

/* A kick fd from the pool, or a new one; -1 without (mu held). */
static int kick_get(struct gl_rt *rt)
{
	int fd;

	if (rt->nkick_free)
		return rt->kick_free[--rt->nkick_free];
	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0)
		return -1;
	/* the pool can take back every fd that exists */
	if ((rt->nkick & 7) == 0) {
		int *p = realloc(rt->kick_free, (size_t)(rt->nkick + 8) * sizeof(*p));

		if (!p) {
			gl_real.close(fd);
			return -1;
		}
		rt->kick_free = p;
	}
	rt->nkick++;
	return fd;
}

static void kick_drain(int fd)
{
	uint64_t v;

	if (gl_real.read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing pending */
	}
}

void gl_wait_wake_all(struct gl_rt *rt)
{
	uint64_t one = 1;

	for (struct gl_sleeper *s = rt->sleepers; s; s = s->next) {
		if (s->kicked)
			continue;
		s->kicked = true;
		if (s->kfd >= 0 && gl_real.write(s->kfd, &one, sizeof(one)) < 0) {
			/* EAGAIN: the counter is saturated, it wakes anyway */
		}
	}
}

void gl_wait_after_fork(struct gl_rt *rt)
{
	/* the parent's threads do not exist here; their fds are copies */
	for (struct gl_sleeper *s = rt->sleepers; s; s = s->next)
		if (s->kfd >= 0)
			gl_real.close(s->kfd);
	for (int i = 0; i < rt->nkick_free; i++)
		gl_real.close(rt->kick_free[i]);
	free(rt->kick_free);
	rt->kick_free = NULL;
	rt->nkick_free = rt->nkick = 0;
	rt->sleepers = NULL;
	rt->nsleep = 0;
}

/* The real wait: poll, or ppoll under @mask. */
static int real_wait(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask)
{
	struct timespec ts, *tp = NULL;

	if (!mask)
		return gl_real.poll(fds, n, timeout_ms);
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (timeout_ms % 1000) * 1000000L;
		tp = &ts;
	}
	return gl_real.ppoll(fds, n, tp, mask);
}

/* Raise the consumer wait flags of RX and FREE; true if either ring holds work. */
static bool raise_flags(struct gl_rt *rt)
{
	tcr_ring_cons_wait_prepare(&rt->ch.ring[TCR_CH_RX]);
	tcr_ring_cons_wait_prepare(&rt->ch.ring[TCR_CH_FREE]);
	return tcr_ring_count(&rt->ch.ring[TCR_CH_RX]) != 0 ||
	       tcr_ring_count(&rt->ch.ring[TCR_CH_FREE]) != 0;
}

bool gl_wait_link(struct gl_rt *rt, struct gl_sleeper *me)
{
	me->kfd = kick_get(rt);
	me->kicked = false;
	me->next = rt->sleepers;
	rt->sleepers = me;
	rt->nsleep++;
	return !raise_flags(rt);
}

void gl_wait_unlink(struct gl_rt *rt, struct gl_sleeper *me, bool kick_readable)
{
	for (struct gl_sleeper **p = &rt->sleepers; *p; p = &(*p)->next)
		if (*p == me) {
			*p = me->next;
			break;
		}
	if (--rt->nsleep == 0) {
		tcr_ring_cons_wait_done(&rt->ch.ring[TCR_CH_RX]);
		tcr_ring_cons_wait_done(&rt->ch.ring[TCR_CH_FREE]);
	}
	if (me->kfd >= 0) {
		if (me->kicked || kick_readable)
			kick_drain(me->kfd);
		rt->kick_free[rt->nkick_free++] = me->kfd;
		me->kfd = -1;
	}
}

/* Rules 3 and 5: drain the doorbell (it was readable); the caller pumps before it unlocks. */
static void drain_doorbell(struct gl_rt *rt)
{
	gl_wake_drain(&rt->wake);
	/* rule 5: the TOE took the flags down when it rang; others sleep on */
	if (rt->nsleep)
		raise_flags(rt);
}

int gl_wait_sleep(struct gl_rt *rt, struct pollfd *pfd, nfds_t n, int timeout_ms,
		  const sigset_t *mask, bool *rang)
{
	struct pollfd stackfds[19], *all = stackfds;
	struct gl_sleeper me;
	uint64_t slept = 0;
	int r, err = 0;

	if (!rt->attached || rt->broken) {
		if (rt->lost && (timeout_ms < 0 || timeout_ms > GL_REVIVE_MS))
			timeout_ms = GL_REVIVE_MS;	/* the caller looks for a new TOE (gl_revive.c) */
		gl_rt_unlock();
		r = real_wait(pfd, n, timeout_ms, mask);
		err = errno;
		gl_rt_lock();
		return r < 0 ? -err : r;
	}
	if (n == 0 && timeout_ms != 0) {
		/*
		 * Poll within the adaptive budget before sleeping: nothing on a
		 * crowded host or after spins that found nothing, so an idle
		 * program sleeps at once after its last work.
		 */
		uint32_t budget;

		if (!rt->spin.max_ns)
			tcr_spin_init(&rt->spin, GL_SPIN_MAX_NS);
		budget = tcr_spin_budget(&rt->spin);
		if (budget) {
			int64_t end = (int64_t)tu_now_ns() + budget;

			do {
				if (tcr_ring_count(&rt->ch.ring[TCR_CH_RX]) ||
				    tcr_ring_count(&rt->ch.ring[TCR_CH_FREE])) {
					tcr_spin_spun(&rt->spin, true);
					return 0;
				}
				tc_cpu_relax();
			} while ((int64_t)tu_now_ns() < end);
			tcr_spin_spun(&rt->spin, false);
		}
		slept = tu_now_ns();
	}
	if (n + 3 > sizeof(stackfds) / sizeof(stackfds[0])) {
		all = malloc((n + 3) * sizeof(*all));
		if (!all)
			return -ENOMEM;
	}
	/* rule 1: link, raise the flags, re-check */
	if (!gl_wait_link(rt, &me))
		timeout_ms = 0;	/* published meanwhile: do not sleep */
	else if (me.kfd < 0 && (timeout_ms < 0 || timeout_ms > GL_NOKICK_MS))
		timeout_ms = GL_NOKICK_MS;	/* nobody can kick us: look again soon */
	all[0].fd = gl_wake_fd(&rt->wake);
	all[0].events = POLLIN;
	all[0].revents = 0;
	/* The TOE never writes here after the welcome: readable = it died. */
	all[1].fd = rt->conn;
	all[1].events = POLLIN;
	all[1].revents = 0;
	all[2].fd = me.kfd;	/* -1: the kernel skips it */
	all[2].events = POLLIN;
	all[2].revents = 0;
	if (n)
		memcpy(all + 3, pfd, n * sizeof(*pfd));
	gl_rt_unlock();
	r = real_wait(all, n + 3, timeout_ms, mask);
	err = errno;
	gl_rt_lock();
	/* rule 4: unlink, then no one writes our kick fd */
	gl_wait_unlink(rt, &me, r > 0 && all[2].revents);
	if (r > 0 && all[1].revents) {
		rt->hup = true;	/* the TOE went away: the pump resets or breaks (gl_revive.c) */
		gl_wait_wake_all(rt);
	}
	if (r > 0 && all[0].revents) {
		/* rules 3 and 5: the caller pumps before it releases mu (gl_chan_sleep) */
		drain_doorbell(rt);
		*rang = true;
		if (slept)
			tcr_spin_woke(&rt->spin, tu_now_ns() - slept);
	}
	if (r >= 0) {
		r = 0;
		for (nfds_t i = 0; i < n; i++) {
			pfd[i].revents = all[i + 3].revents;
			if (pfd[i].revents)
				r++;
		}
	}
	if (all != stackfds)
		free(all);
	return r < 0 ? -err : r;
}
