// SPDX-License-Identifier: MIT
/*
 * The interposed waiting calls: poll, ppoll, select, pselect and epoll.
 * A set that holds no offloaded fd goes to the real libc untouched; one
 * that does waits in the runtime (gl_poll.c, gl_epoll.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <unistd.h>
#include "gl_chan.h"
#include "gl_ctl.h"
#include "gl_epoll.h"
#include "gl_exec.h"
#include "gl_fd.h"
#include "gl_fork.h"
#include "gl_poll.h"
#include "gl_real.h"
#include "gl_recv.h"
#include "gl_resolv.h"
#include "gl_rt.h"
#include "gl_send.h"
#include "gl_sock.h"
#include "gl_user.h"
#include "gl_vm.h"
#include "gl_api.h"

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	gl_real_init();
	return (int)ret_errno(gl_poll(fds, n, timeout, NULL));
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	(void)fdslen;
	return poll(fds, n, timeout);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	int ms = -1;

	gl_real_init();
	if (ts) {
		if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
			return (int)ret_errno(-EINVAL);
		ms = ts->tv_sec > 1000000 ? 1000000000 :
		     (int)(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
	}
	return (int)ret_errno(gl_poll(fds, n, ms, mask));
}

/* select/pselect through gl_poll when an offloaded fd is in the sets. */
static int select_common(int nfds, fd_set *r, fd_set *w, fd_set *e, int ms,
			 const sigset_t *mask)
{
	struct pollfd *p;
	int n = 0, ready, count = 0;

	if (nfds < 0 || nfds > FD_SETSIZE)
		return -EINVAL;
	p = calloc((size_t)nfds + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;

		if (r && FD_ISSET(fd, r))
			ev |= POLLIN;
		if (w && FD_ISSET(fd, w))
			ev |= POLLOUT;
		if (e && FD_ISSET(fd, e))
			ev |= POLLPRI;
		if (!ev)
			continue;
		p[n].fd = fd;
		p[n].events = ev;
		n++;
	}
	ready = gl_poll(p, (nfds_t)n, ms, mask);
	if (ready < 0) {
		free(p);
		return ready;
	}
	for (int i = 0; i < n; i++)
		if (p[i].revents & POLLNVAL) {
			free(p);
			return -EBADF;
		}
	if (r)
		FD_ZERO(r);
	if (w)
		FD_ZERO(w);
	if (e)
		FD_ZERO(e);
	for (int i = 0; i < n; i++) {
		short rev = p[i].revents;

		if (r && (p[i].events & POLLIN) && (rev & (POLLIN | POLLHUP | POLLERR))) {
			FD_SET(p[i].fd, r);
			count++;
		}
		if (w && (p[i].events & POLLOUT) && (rev & (POLLOUT | POLLERR))) {
			FD_SET(p[i].fd, w);
			count++;
		}
		if (e && (p[i].events & POLLPRI) && (rev & POLLPRI)) {
			FD_SET(p[i].fd, e);
			count++;
		}
	}
	free(p);
	return count;
}

static bool sets_offloaded(int nfds, fd_set *r, fd_set *w, fd_set *e)
{
	if (nfds > FD_SETSIZE)
		nfds = FD_SETSIZE;
	for (int fd = 0; fd < nfds; fd++)
		if (((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) || (e && FD_ISSET(fd, e))) &&
		    OFFLOADED(fd))
			return true;
	return false;
}

int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	int ms = -1;

	gl_real_init();
	if (!sets_offloaded(nfds, r, w, e))
		return gl_real.select(nfds, r, w, e, tv);
	if (tv) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0)
			return (int)ret_errno(-EINVAL);
		ms = (int)(tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000);
	}
	return (int)ret_errno(select_common(nfds, r, w, e, ms, NULL));
}

int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
	    const sigset_t *mask)
{
	int ms = -1;

	gl_real_init();
	if (!sets_offloaded(nfds, r, w, e))
		return gl_real.pselect(nfds, r, w, e, ts, mask);
	if (ts) {
		if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
			return (int)ret_errno(-EINVAL);
		ms = (int)(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
	}
	return (int)ret_errno(select_common(nfds, r, w, e, ms, mask));
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	gl_real_init();
	if (!OFFLOADED(fd))
		return gl_real.epoll_ctl(epfd, op, fd, ev);
	return (int)ret_errno(gl_epoll_ctl(epfd, op, fd, ev));
}

int epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
	gl_real_init();
	if (!gl_rt.epolls)
		return gl_real.epoll_wait(epfd, evs, max, timeout);
	return (int)ret_errno(gl_epoll_wait(epfd, evs, max, timeout, NULL));
}

int epoll_pwait(int epfd, struct epoll_event *evs, int max, int timeout, const sigset_t *mask)
{
	gl_real_init();
	if (!gl_rt.epolls)
		return gl_real.epoll_pwait(epfd, evs, max, timeout, mask);
	return (int)ret_errno(gl_epoll_wait(epfd, evs, max, timeout, mask));
}
