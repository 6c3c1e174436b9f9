// SPDX-License-Identifier: MIT
/*
 * The socket calls other than the data path: socket, bind, listen,
 * accept, connect, shutdown, options, names, and the last close.  Each is
 * a request to the TOE (gl_chan_call) plus the state the kernel would
 * keep; accept and connect wait as the kernel's do.  mu held (gl_rt.c).
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <tochain/srpc.h>

#include "gl_chan.h"
#include "gl_ctl.h"
#include "gl_epoll.h"
#include "gl_fd.h"
#include "gl_revive.h"
#include "gl_ring.h"
#include "gl_send.h"
#include "gl_sock.h"
#include "gl_user.h"
#include "gl_wait.h"

static void send_close(struct gl_rt *rt, uint32_t id)
{
	gl_chan_post(rt, NULL, SRPC_REQ_CLOSE, id, 0, 0, 0, NULL, 0);
}

void gl_ctl_put(struct gl_rt *rt, struct gl_sock *s)
{
	if (--s->refs > 0)
		return;
	gl_epoll_forget_sock(s);
	if (rt->attached && !rt->broken && s->id) {	/* id 0: no TOE knows it (gl_revive.c) */
		gl_sock_rxq_drop(rt, s);
		gl_ring_done_flush(rt);
		send_close(rt, s->id);
	}
	gl_sock_free(rt, s);
}

/* An fd for @s, which the pump just made; without one, @s is closed again. */
static int made_fd(struct gl_rt *rt, struct gl_sock *s, bool cloexec)
{
	int fd = gl_fd_new(s, cloexec);

	if (fd < 0) {
		s->refs = 1;
		gl_ctl_put(rt, s);
	}
	return fd;
}

static uint32_t sock_flags_ok(int type)
{
	return (uint32_t)(type & (SOCK_NONBLOCK | SOCK_CLOEXEC));
}

/* @s was made with @secret (or without, @has false): its fds will hold it (gl_fd.c). */
static void give_secret(struct gl_sock *s, const uint8_t *secret, bool has)
{
	s->has_secret = has;
	if (has)
		memcpy(s->secret, secret, SRPC_SECRET_LEN);
}

int gl_ctl_socket(struct gl_rt *rt, int domain, int type, int protocol)
{
	struct gl_waiter w = { .family = domain };
	uint8_t secret[SRPC_SECRET_LEN];
	bool has = gl_fd_secret_new(secret);
	int ret;

	ret = gl_chan_ensure(rt);
	if (ret)
		return ret;
	ret = gl_chan_call(rt, &w, SRPC_REQ_SOCKET, 0, domain, type & ~(int)sock_flags_ok(type),
			   protocol, has ? secret : NULL, has ? SRPC_SECRET_LEN : 0);
	if (ret < 0)
		return ret;
	if (!w.made)
		return -ENOMEM;
	give_secret(w.made, secret, has);
	w.made->nonblock = (type & SOCK_NONBLOCK) != 0;
	w.made->dgram = (type & ~(int)sock_flags_ok(type)) == SOCK_DGRAM;
	return made_fd(rt, w.made, (type & SOCK_CLOEXEC) != 0);
}

int gl_ctl_bind(struct gl_rt *rt, struct gl_sock *s, const struct sockaddr *a, socklen_t l)
{
	struct gl_waiter w = { 0 };
	int err = gl_sock_check_addr(s, a, l);

	if (err)
		return err;
	err = gl_chan_call(rt, &w, SRPC_REQ_BIND, s->id, 0, 0, 0, a,
			   l > SRPC_DATA_MAX ? SRPC_DATA_MAX : l);
	if (!err)
		gl_revive_note_bind(s, a, l);
	return err;
}

int gl_ctl_listen(struct gl_rt *rt, struct gl_sock *s, int backlog)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (s->dgram)
		return -EOPNOTSUPP;
	if (s->connected || s->connecting)
		return -EINVAL;
	ret = gl_chan_call(rt, &w, SRPC_REQ_LISTEN, s->id, backlog, 0, 0, NULL, 0);
	if (ret == 0)
		gl_revive_note_listen(s, backlog);
	if (ret == 0 && !s->listening) {
		s->listening = true;
		s->acceptable = false;
		s->rseq++;
	}
	return ret;
}

/* The TOE's address in @m as the kernel's copy in @ss, *@sl (the caller gives it out). */
static void copy_addr(const struct srpc_msg *m, struct sockaddr_storage *ss, socklen_t *sl)
{
	*sl = m->dlen < sizeof(*ss) ? m->dlen : sizeof(*ss);
	memcpy(ss, m->data, *sl);
}

int gl_ctl_accept(struct gl_rt *rt, struct gl_sock *s, struct sockaddr_storage *ss, socklen_t *sl,
		  int flags)
{
	int64_t deadline = gl_chan_deadline(s->rcvtimeo_ms);
	uint8_t secret[SRPC_SECRET_LEN];
	struct gl_waiter w;
	bool has;
	int ret;

	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return -EINVAL;
	if (s->dgram)
		return -EOPNOTSUPP;
	if (!s->listening)
		return -EINVAL;
	has = gl_fd_secret_new(secret);
	for (;;) {
		w.family = s->family;
		/*
		 * Not acceptable from before the call: an ACCEPTABLE event may
		 * be pumped together with the response, and must win.
		 */
		if (s->acceptable) {
			s->acceptable = false;
			s->rseq++;
		}
		ret = gl_chan_call(rt, &w, SRPC_REQ_ACCEPT, s->id, 0, 0, 0, has ? secret : NULL,
				   has ? SRPC_SECRET_LEN : 0);
		if (ret > 0)
			break;
		if (ret == -ECONNRESET || (ret == -ENETDOWN && rt->lost))
			ret = -EAGAIN;	/* its TOE died: it waits for the new one (gl_revive.c) */
		if (ret != -EAGAIN)
			return ret;
		if (s->nonblock)
			return -EAGAIN;
		while (!s->acceptable) {
			int err;

			gl_chan_pump(rt);
			if (s->acceptable)
				break;
			err = gl_chan_wait(rt, deadline);
			if (err)
				return err;
		}
	}
	if (!w.made)
		return -ENOMEM;
	give_secret(w.made, secret, has);
	if (w.resp.b && !s->acceptable) {
		s->acceptable = true;	/* more are waiting */
		s->rseq++;
	}
	w.made->nonblock = (flags & SOCK_NONBLOCK) != 0;
	copy_addr(&w.resp, ss, sl);
	return made_fd(rt, w.made, (flags & SOCK_CLOEXEC) != 0);
}

int gl_ctl_connect(struct gl_rt *rt, struct gl_sock *s, const struct sockaddr *a, socklen_t l)
{
	int64_t deadline = gl_chan_deadline(s->sndtimeo_ms);
	struct gl_waiter w = { 0 };
	int ret = gl_sock_check_addr(s, a, l);

	if (ret)
		return ret;
	if (s->dgram) {
		ret = gl_chan_call(rt, &w, SRPC_REQ_CONNECT, s->id, 0, 0, 0, a,
				   l > SRPC_DATA_MAX ? SRPC_DATA_MAX : l);
		if (ret == 0)
			gl_revive_note_connect(s, a, l);
		if (ret == 0 && !s->connected) {
			s->connected = true;
			s->wseq++;
		}
		return ret;
	}
	if (s->listening)
		return -EISCONN;
	gl_chan_pump(rt);
	if (s->connect_unseen && !s->connecting) {
		/* as the kernel: the first connect() after completion reports it */
		s->connect_unseen = false;
		if (s->connected)
			return 0;
		ret = s->so_error ? s->so_error : ECONNABORTED;
		s->so_error = 0;
		return -ret;
	}
	if (s->connected)
		return -EISCONN;
	if (!s->connecting) {
		if (s->reset)
			return -ECONNABORTED;
		/*
		 * Connecting from before the call: the completion event may be
		 * pumped together with the response, before we look at it.
		 */
		s->connecting = true;
		ret = gl_chan_call(rt, &w, SRPC_REQ_CONNECT, s->id, 0, 0, 0, a,
				   l > SRPC_DATA_MAX ? SRPC_DATA_MAX : l);
		if (ret != -EINPROGRESS)
			s->connecting = false;
		if (ret == 0) {
			s->connected = true;
			s->wseq++;
			return 0;
		}
		if (ret != -EINPROGRESS)
			return ret;
		if (s->nonblock)
			return -EINPROGRESS;
	} else if (s->nonblock) {
		return -EALREADY;
	}
	while (s->connecting) {
		gl_chan_pump(rt);
		if (!s->connecting)
			break;
		ret = gl_chan_wait(rt, deadline);
		if (ret == -EAGAIN)
			return -EINPROGRESS;
		if (ret)
			return ret;
	}
	s->connect_unseen = false;
	if (s->so_error) {
		ret = s->so_error;
		s->so_error = 0;
		return -ret;
	}
	return 0;
}

int gl_ctl_shutdown(struct gl_rt *rt, struct gl_sock *s, int how)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return -EINVAL;
	if (!s->connected && !s->listening)
		return -ENOTCONN;
	ret = gl_chan_call(rt, &w, SRPC_REQ_SHUTDOWN, s->id, how, 0, 0, NULL, 0);
	if (ret)
		return ret;
	if (how != SHUT_WR) {
		s->shut_rd = true;
		gl_sock_rxq_drop(rt, s);
		gl_ring_done_flush(rt);
	}
	if (how != SHUT_RD)
		s->shut_wr = true;
	s->rseq++;
	s->wseq++;
	gl_wait_wake_all(rt);	/* a recv or poll of another thread may end now */
	return 0;
}

/* SO_RCVTIMEO/SO_SNDTIMEO: the caller's timeval at @v, @l bytes, in ms (-1: none) or -errno. */
static int timeo_ms(const void *v, socklen_t l)
{
	struct timeval tv;

	if (l < sizeof(tv))
		return -EINVAL;
	if (gl_user_read(&tv, v, sizeof(tv)))
		return -EFAULT;
	if (tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000)
		return -EDOM;
	if (tv.tv_sec == 0 && tv.tv_usec == 0)
		return -1;
	if (tv.tv_sec > INT_MAX / 1000 - 1)
		return INT_MAX;
	return (int)(tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000);
}

int gl_ctl_setsockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, const void *v,
		      socklen_t l)
{
	struct gl_waiter w = { 0 };
	uint8_t val[SRPC_DATA_MAX];
	int err;

	if (level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO)) {
		int ms = timeo_ms(v, l);

		if (ms < -1)
			return ms;
		if (name == SO_RCVTIMEO)
			s->rcvtimeo_ms = ms;
		else
			s->sndtimeo_ms = ms;
		return 0;
	}
	err = srpc_check_sockopt(level, name, l, true);	/* the length first, as the kernel */
	if (err)
		return err;
	if (gl_user_read(val, v, l))	/* l <= SRPC_DATA_MAX now */
		return -EFAULT;
	err = gl_send_sockopt(rt, s, level, name, val, l);
	if (err > 0)	/* not one posted without an answer: ask the TOE */
		err = gl_chan_call(rt, &w, SRPC_REQ_SETSOCKOPT, s->id, level, name, 0, val, l);
	if (!err)
		gl_revive_note_opt(s, level, name, val, l);
	return err;
}

/* Does the kernel know option level @level for @s (whatever the option)? */
static bool level_known(const struct gl_sock *s, int level)
{
	return level == SOL_SOCKET || level == IPPROTO_IP ||
	       level == (s->dgram ? IPPROTO_UDP : IPPROTO_TCP) ||
	       (level == IPPROTO_IPV6 && s->family == AF_INET6);
}

static void put_int(void *v, socklen_t *l, int val)
{
	socklen_t k = *l < sizeof(int) ? *l : sizeof(int);

	memcpy(v, &val, k);
	*l = k;
}

int gl_ctl_getsockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, void *v,
		      socklen_t *l)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (!level_known(s, level))	/* the kernel's IPv4 and IPv6 layers differ here */
		return s->family == AF_INET6 ? -ENOPROTOOPT : -EOPNOTSUPP;
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_ERROR:
			gl_chan_pump(rt);
			ret = s->so_error ? s->so_error : s->err;
			s->so_error = 0;
			s->err = 0;
			put_int(v, l, ret);
			return 0;
		case SO_TYPE:
			put_int(v, l, s->dgram ? SOCK_DGRAM : SOCK_STREAM);
			return 0;
		case SO_DOMAIN:
			put_int(v, l, s->family);
			return 0;
		case SO_PROTOCOL:
			put_int(v, l, s->dgram ? IPPROTO_UDP : IPPROTO_TCP);
			return 0;
		case SO_ACCEPTCONN:
			put_int(v, l, s->listening);
			return 0;
		case SO_RCVTIMEO:
		case SO_SNDTIMEO: {
			int ms = name == SO_RCVTIMEO ? s->rcvtimeo_ms : s->sndtimeo_ms;
			struct timeval tv = { 0 };
			socklen_t k = *l < sizeof(tv) ? *l : sizeof(tv);

			if (ms > 0) {
				tv.tv_sec = ms / 1000;
				tv.tv_usec = (ms % 1000) * 1000;
			}
			memcpy(v, &tv, k);
			*l = k;
			return 0;
		}
		}
	}
	ret = srpc_check_sockopt(level, name, *l, false);
	if (ret)
		return ret;
	ret = gl_chan_call(rt, &w, SRPC_REQ_GETSOCKOPT, s->id, level, name, (int)*l, NULL, 0);
	if (ret)
		return ret;
	memcpy(v, w.resp.data, w.resp.dlen < *l ? w.resp.dlen : *l);
	*l = w.resp.dlen < *l ? w.resp.dlen : *l;
	return 0;
}

int gl_ctl_getname(struct gl_rt *rt, struct gl_sock *s, bool peer, struct sockaddr_storage *ss,
		   socklen_t *sl)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (peer && !s->connected)
		return -ENOTCONN;
	ret = gl_chan_call(rt, &w, peer ? SRPC_REQ_GETPEERNAME : SRPC_REQ_GETSOCKNAME, s->id,
			   0, 0, 0, NULL, 0);
	if (ret)
		return ret;
	copy_addr(&w.resp, ss, sl);
	return 0;
}
