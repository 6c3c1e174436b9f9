/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: epoll emulation (gl_epoll.c).
 */
#ifndef TOCHAIN_GL_EPOLL_H
#define TOCHAIN_GL_EPOLL_H

#include <signal.h>
#include <sys/epoll.h>

struct gl_sock;

/* epoll_ctl of an offloaded @fd: 0 or -errno.  Takes mu. */
int gl_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
/* epoll_wait/epoll_pwait (@mask) of an epoll fd with offloaded entries.  Takes mu. */
int gl_epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout, const sigset_t *mask);
void gl_epoll_forget_fd(int fd);	/* fd closed (mu held) */
void gl_epoll_forget_sock(struct gl_sock *s);	/* socket gone (mu held) */
void gl_epoll_forget_epfd(int epfd);	/* an epoll fd closed (mu held) */

#endif /* TOCHAIN_GL_EPOLL_H */
