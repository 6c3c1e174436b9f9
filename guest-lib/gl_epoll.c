// SPDX-License-Identifier: MIT
/*
 * epoll over a mix of offloaded and ordinary fds.
 *
 * Registrations of offloaded fds live in a per-epoll-fd table in the
 * process; ordinary fds stay in the real epoll set, and a wait sleeps in
 * gl_chan_sleep with the epoll fd itself as the one ordinary fd (an epoll
 * fd polls readable when its set has events), then collects those with a
 * real epoll_wait that does not block.  Edge triggering reports an entry
 * again only after its socket's state changed (gl_sock.rseq/wseq);
 * EPOLLONESHOT disables it until EPOLL_CTL_MOD.
 * Locking: the tables are under mu (gl_rt.c); sleeping and wake-ups follow
 * gl_wait.c.  A wait loops until something is ready or its own deadline
 * passed: a wake-up alone never ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "gl_chan.h"
#include "gl_epoll.h"
#include "gl_fd.h"
#include "gl_poll.h"
#include "gl_real.h"
#include "gl_rt.h"
#include "gl_sock.h"
#include "gl_wait.h"

struct ep_ent {
	int fd;
	struct gl_sock *s;
	uint32_t events;
	epoll_data_t data;
	uint32_t last_rseq, last_wseq;
	bool fired;		/* EPOLLET: reported since last change */
};

struct gl_epoll {
	struct gl_epoll *next;
	int epfd;
	struct ep_ent *ent;
	int n, cap;
};

static struct gl_epoll *ep_find(int epfd, bool create)
{
	struct gl_epoll *e;

	for (e = gl_rt.epolls; e; e = e->next)
		if (e->epfd == epfd)
			return e;
	if (!create)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->epfd = epfd;
	e->next = gl_rt.epolls;
	gl_rt.epolls = e;
	return e;
}

static struct ep_ent *ent_find(struct gl_epoll *e, int fd)
{
	for (int i = 0; i < e->n; i++)
		if (e->ent[i].fd == fd)
			return &e->ent[i];
	return NULL;
}

int gl_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct gl_sock *s = gl_fd_sock(fd);
	struct gl_epoll *e;
	struct ep_ent *x;
	int ret = 0;

	if (epfd == fd)
		return -EINVAL;
	if (op != EPOLL_CTL_DEL && !ev)
		return -EFAULT;
	/* Is epfd an epoll fd at all?  A DEL of a fd never added tells us. */
	if (gl_real.epoll_ctl(epfd, EPOLL_CTL_DEL, -1, NULL) < 0 && errno != EBADF)
		return errno == EINVAL ? -EINVAL : -errno;
	if (errno == EBADF && gl_real.fcntl(epfd, F_GETFD) < 0)
		return -EBADF;
	gl_rt_lock();
	e = ep_find(epfd, op == EPOLL_CTL_ADD);
	x = e ? ent_find(e, fd) : NULL;
	switch (op) {
	case EPOLL_CTL_ADD:
		if (!e) {
			ret = -ENOMEM;
			break;
		}
		if (x) {
			ret = -EEXIST;
			break;
		}
		if (e->n == e->cap) {
			int cap = e->cap ? e->cap * 2 : 16;
			struct ep_ent *ne = realloc(e->ent, (size_t)cap * sizeof(*ne));

			if (!ne) {
				ret = -ENOMEM;
				break;
			}
			e->ent = ne;
			e->cap = cap;
		}
		x = &e->ent[e->n++];
		memset(x, 0, sizeof(*x));
		x->fd = fd;
		x->s = s;
		x->events = ev->events;
		x->data = ev->data;
		x->last_rseq = s->rseq - 1;
		x->last_wseq = s->wseq - 1;
		break;
	case EPOLL_CTL_MOD:
		if (!x) {
			ret = -ENOENT;
			break;
		}
		x->events = ev->events;
		x->data = ev->data;
		x->last_rseq = s->rseq - 1;
		x->last_wseq = s->wseq - 1;
		x->fired = false;
		break;
	case EPOLL_CTL_DEL:
		if (!x) {
			ret = -ENOENT;
			break;
		}
		*x = e->ent[--e->n];
		break;
	default:
		ret = -EINVAL;
	}
	if (!ret && op != EPOLL_CTL_DEL)
		gl_wait_wake_all(&gl_rt);	/* an epoll_wait may have something now */
	gl_rt_unlock();
	return ret;
}

void gl_epoll_forget_sock(struct gl_sock *s)
{
	for (struct gl_epoll *e = gl_rt.epolls; e; e = e->next)
		for (int i = 0; i < e->n;)
			if (e->ent[i].s == s)
				e->ent[i] = e->ent[--e->n];
			else
				i++;
}

void gl_epoll_forget_fd(int fd)
{
	for (struct gl_epoll *e = gl_rt.epolls; e; e = e->next)
		for (int i = 0; i < e->n;)
			if (e->ent[i].fd == fd)
				e->ent[i] = e->ent[--e->n];
			else
				i++;
}

void gl_epoll_forget_epfd(int epfd)
{
	for (struct gl_epoll **p = &gl_rt.epolls; *p; p = &(*p)->next) {
		struct gl_epoll *e = *p;

		if (e->epfd != epfd)
			continue;
		*p = e->next;
		free(e->ent);
		free(e);
		return;
	}
}

static int collect(struct gl_epoll *e, struct epoll_event *evs, int max)
{
	int k = 0;

	gl_chan_pump(&gl_rt);
	for (int i = 0; i < e->n && k < max; i++) {
		struct ep_ent *x = &e->ent[i];
		uint32_t rev;

		if (!(x->events & ~(EPOLLET | EPOLLONESHOT | EPOLLEXCLUSIVE | EPOLLWAKEUP)))
			continue;	/* disabled by EPOLLONESHOT */
		rev = (uint32_t)gl_poll_revents(&gl_rt, x->s) & (x->events | EPOLLERR | EPOLLHUP);
		if (!rev)
			continue;
		if (x->events & EPOLLET) {
			/* report only what changed since the last report */
			bool rd = (rev & (EPOLLIN | EPOLLRDHUP)) && x->last_rseq != x->s->rseq;
			bool wr = (rev & EPOLLOUT) && x->last_wseq != x->s->wseq;
			bool bad = (rev & (EPOLLERR | EPOLLHUP)) &&
				   (x->last_rseq != x->s->rseq || x->last_wseq != x->s->wseq);

			if (!rd && !wr && !bad)
				continue;
		}
		x->last_rseq = x->s->rseq;
		x->last_wseq = x->s->wseq;
		evs[k].events = rev;
		evs[k].data = x->data;
		k++;
		if (x->events & EPOLLONESHOT)
			x->events &= EPOLLET | EPOLLONESHOT;
	}
	return k;
}

int gl_epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout, const sigset_t *mask)
{
	int64_t deadline = gl_chan_deadline(timeout);
	struct pollfd pfd = { .fd = epfd, .events = POLLIN };
	struct gl_epoll *e;
	int k, r;

	if (max <= 0)
		return -EINVAL;
	gl_rt_lock();
	e = ep_find(epfd, false);
	if (!e) {
		gl_rt_unlock();
		r = gl_real.epoll_pwait(epfd, evs, max, timeout, mask);
		return r < 0 ? -errno : r;
	}
	for (;;) {
		int tmo;

		k = collect(e, evs, max);
		if (k < max) {
			/* the ordinary fds, without blocking */
			r = gl_real.epoll_pwait(epfd, evs + k, max - k, 0, NULL);
			if (r < 0 && !k) {
				r = -errno;
				gl_rt_unlock();
				return r;
			}
			if (r > 0)
				k += r;
		}
		if (k)
			break;
		tmo = gl_poll_left_ms(deadline);
		if (deadline >= 0 && tmo == 0)
			break;
		r = gl_chan_sleep(&gl_rt, &pfd, 1, tmo, mask);
		if (r < 0) {
			gl_rt_unlock();
			return r;
		}
		/* woken or ready: look again (the table may have changed meanwhile) */
		e = ep_find(epfd, false);
		if (!e) {
			gl_rt_unlock();
			return -EBADF;
		}
	}
	gl_rt_unlock();
	return k;
}
