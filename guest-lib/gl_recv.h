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

/*
 * Stream bytes into @iov (recv, read, recvmsg; MSG_PEEK, MSG_WAITALL,
 * MSG_DONTWAIT, MSG_TRUNC discards).  @iov is the runtime's copy, the
 * memory it names the caller's: a fault takes nothing (-EFAULT, or the
 * count before it).
 */
ssize_t gl_recv_stream(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		       int flags);
/*
 * One datagram into @iov: its source in @ss and *@sl (*@sl = 0: none),
 * MSG_TRUNC ORed into *@mflags when it was longer than @iov (the rest is
 * lost).  A fault in @iov loses the datagram too (-EFAULT), as the kernel.
 */
ssize_t gl_recv_dgram(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		      int flags, struct sockaddr_storage *ss, socklen_t *sl, int *mflags);

#endif /* TOCHAIN_GL_RECV_H */
