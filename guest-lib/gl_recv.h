/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: receiving (gl_recv.c).  mu held;
 * a count or -errno.
 */
#ifndef TOCHAIN_GL_RECV_H
#define TOCHAIN_GL_RECV_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "gl_rt.h"

struct gl_sock;

/* Stream bytes into @iov (recv, read, recvmsg; MSG_PEEK, MSG_WAITALL, MSG_DONTWAIT). */
ssize_t gl_recv_stream(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		       int flags);
/*
 * One datagram into @iov: its source in @a/@l (as recvfrom), MSG_TRUNC
 * ORed into *@mflags when it was longer than @iov (the rest is lost).
 */
ssize_t gl_recv_dgram(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		      int flags, struct sockaddr *a, socklen_t *l, int *mflags);

#endif /* TOCHAIN_GL_RECV_H */
