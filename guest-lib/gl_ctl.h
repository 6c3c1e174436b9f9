/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: the socket calls other than the
 * data path (gl_ctl.c).  mu held; -errno on failure.
 */
#ifndef TOCHAIN_GL_CTL_H
#define TOCHAIN_GL_CTL_H

#include <stdbool.h>
#include <sys/socket.h>

#include "gl_rt.h"

struct gl_sock;

/* A new offloaded socket: its fd, or -errno (attaches the process first). */
int gl_ctl_socket(struct gl_rt *rt, int domain, int type, int protocol);
/*
 * Pointers: the addresses of bind/connect are the runtime's copies
 * (gl_user_addr_in); the addresses accept and getsockname/getpeername
 * give are the runtime's, which the caller hands out (gl_user_addr_out);
 * getsockopt fills the runtime's @v of *@l bytes (*@l: its length, then
 * the value's).  setsockopt's @v is the caller's, read through gl_user.h.
 */
int gl_ctl_bind(struct gl_rt *rt, struct gl_sock *s, const struct sockaddr *a, socklen_t l);
int gl_ctl_listen(struct gl_rt *rt, struct gl_sock *s, int backlog);
int gl_ctl_accept(struct gl_rt *rt, struct gl_sock *s, struct sockaddr_storage *ss,
		  socklen_t *sl, int flags);
int gl_ctl_connect(struct gl_rt *rt, struct gl_sock *s, const struct sockaddr *a, socklen_t l);
int gl_ctl_shutdown(struct gl_rt *rt, struct gl_sock *s, int how);
int gl_ctl_setsockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, const void *v,
		      socklen_t l);
int gl_ctl_getsockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, void *v,
		      socklen_t *l);
int gl_ctl_getname(struct gl_rt *rt, struct gl_sock *s, bool peer, struct sockaddr_storage *ss,
		   socklen_t *sl);
/*
 * An fd naming @s goes away (close, a dup2 target): drop its reference;
 * the last one forgets its epoll registrations, closes it in the TOE and
 * frees it.
 */
void gl_ctl_put(struct gl_rt *rt, struct gl_sock *s);

#endif /* TOCHAIN_GL_CTL_H */
