/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: sending (gl_send.c).  mu held;
 * a count or -errno.
 */
#ifndef TOCHAIN_GL_SEND_H
#define TOCHAIN_GL_SEND_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "gl_rt.h"

struct gl_sock;

/* Stream bytes of @iov (send, write, sendmsg): all of them unless non-blocking. */
ssize_t gl_send_stream(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		       int flags);
/* One datagram of @iov to @a/@l (NULL: the connected peer). */
ssize_t gl_send_dgram(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		      int flags, const struct sockaddr *a, socklen_t l);
/* sendfile(2) from @in_fd (at *@off, or its file position) to stream @s. */
ssize_t gl_send_file(struct gl_rt *rt, struct gl_sock *s, int in_fd, off_t *off, size_t count);
/*
 * setsockopt of an option the TOE applies in the stream's order (TCP_CORK,
 * TCP_NODELAY on a connected TCP socket): posted as a send is, without
 * waiting for the answer.  0 when posted, -errno, or 1: not such an
 * option, make the call.  @val is the caller's int, already read.
 */
int gl_send_sockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, const void *val,
		    socklen_t l);

#endif /* TOCHAIN_GL_SEND_H */
