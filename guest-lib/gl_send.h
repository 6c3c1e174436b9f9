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

#include "gl_chan.h"
#include "gl_rt.h"
#include "gl_sock.h"

/*
 * How many FREE buffers socket @s may take now, counting @extra buffers
 * still on the FREE ring: at most its own bound (tx_bound), never the
 * GL_CTRL_RESERVE kept for requests, and beyond its first GL_TX_MIN
 * buffers never the last quarter of the process's grants (stash_peak / 4),
 * which stays for its other sockets.  The stash is the process's, shared
 * by all its sockets: with 2 KiB slots tx_bound (then 128 KiB) was 64
 * buffers, the whole grant, and one peer that stopped reading held
 * every buffer, so every other connection of the process waited for that peer
 * (tests/integration/212, a rate-limited download beside sequential
 * fetches: single fetches took up to 10 s).  One slow peer now costs the
 * others nothing but the buffers it holds.
 */
static inline uint32_t gl_tx_room(const struct gl_rt *rt, const struct gl_sock *s,
				  uint32_t extra)
{
	uint32_t have = rt->nstash + extra, all, own, shared, room;

	if (s->tx_inflight >= rt->tx_bound || have <= GL_CTRL_RESERVE)
		return 0;
	room = rt->tx_bound - s->tx_inflight;
	all = have - GL_CTRL_RESERVE;
	own = s->tx_inflight < GL_TX_MIN ? GL_TX_MIN - s->tx_inflight : 0;
	if (own > all)
		own = all;
	shared = all > rt->stash_peak / 4 ? all - rt->stash_peak / 4 : 0;
	if (shared < own)
		shared = own;
	return room < shared ? room : shared;
}

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
