// SPDX-License-Identifier: MIT
/*
 * exec: the new image's constructor finds the inherited placeholders in
 * /proc/self/fd, attaches a new channel, ADOPTs each placeholder's
 * socket, asks the TOE what each is, and only then closes the old
 * channel's connection, if it inherited one.  The TOE lets a channel
 * ADOPT a socket it does not hold only with proof that the program gave
 * it the socket: the socket's secret, which its placeholder holds
 * (gl_fd.c, include/tochain/srpc.h); that works whatever other fds the
 * program closed before exec (subprocess's close_fds closes the old
 * channel's connection) and inside a VM.  A socket without a secret is
 * adopted the older way: the new image names itself the heir of the old
 * channel over that channel's UNIX connection (not close-on-exec, and
 * only this process holds it), which a VM has not.  Runs once, in the
 * constructor, under mu (gl_rt.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <tochain/srpc.h>

#include "gl_chan.h"
#include "gl_exec.h"
#include "gl_fd.h"
#include "gl_real.h"
#include "gl_revive.h"
#include "gl_rt.h"
#include "gl_sock.h"
#include "gl_vm.h"

/* Is @fd a UNIX connection to our TOE's attach socket (an old channel)? */
static bool is_old_conn(struct gl_rt *rt, int fd)
{
	struct sockaddr_un sun;
	socklen_t l = sizeof(sun);
	char want[sizeof(sun.sun_path)];

	if (gl_real.getpeername(fd, (struct sockaddr *)&sun, &l) || sun.sun_family != AF_UNIX ||
	    l <= offsetof(struct sockaddr_un, sun_path))
		return false;
	if (snprintf(want, sizeof(want), "%s.sock", rt->path) >= (int)sizeof(want))
		return false;
	return strncmp(sun.sun_path, want, sizeof(want)) == 0;
}

/*
 * What a new TOE must be told to re-create the inherited listener @s
 * (gl_revive.c): its address, the reuse options the old image may have
 * set, and a backlog (the old image's is not known: SOMAXCONN).
 */
static void note_listener(struct gl_rt *rt, struct gl_sock *s)
{
	static const int opts[] = { SO_REUSEADDR, SO_REUSEPORT };
	struct gl_waiter w = { 0 };

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		memset(&w, 0, sizeof(w));
		if (gl_chan_call(rt, &w, SRPC_REQ_GETSOCKOPT, s->id, SOL_SOCKET, opts[i],
				 sizeof(int), NULL, 0) == 0 && w.resp.dlen == sizeof(int))
			gl_revive_note_opt(s, SOL_SOCKET, opts[i], w.resp.data, sizeof(int));
	}
	memset(&w, 0, sizeof(w));
	if (gl_chan_call(rt, &w, SRPC_REQ_GETSOCKNAME, s->id, 0, 0, 0, NULL, 0) == 0 &&
	    w.resp.dlen <= sizeof(struct sockaddr_storage))
		gl_revive_note_bind(s, (const struct sockaddr *)w.resp.data, w.resp.dlen);
	gl_revive_note_listen(s, SOMAXCONN);
}

/* Rebuild one inherited socket: adopt it and ask the TOE what it is. */
static void adopt_inherited(struct gl_rt *rt, int fd, uint32_t id)
{
	struct gl_sock *s = gl_sock_find(rt, id);
	struct gl_waiter w = { 0 };
	uint8_t secret[SRPC_SECRET_LEN];
	bool has;
	int fl;

	if (!s) {
		/* the placeholder's secret proves we were given it; else we are its holder's heir */
		has = gl_fd_secret_read(fd, secret);
		if (gl_chan_call(rt, &w, SRPC_REQ_ADOPT, id, has ? 2 : 1, 0, 0, has ? secret : NULL,
				 has ? SRPC_SECRET_LEN : 0) != 0)
			return;	/* the TOE no longer knows it: leave a dead fd */
		s = gl_sock_make(rt, id, AF_INET);
		if (!s)
			return;
		s->has_secret = has;
		if (has)
			memcpy(s->secret, secret, SRPC_SECRET_LEN);
		memset(&w, 0, sizeof(w));
		if (gl_chan_call(rt, &w, SRPC_REQ_GETSOCKOPT, id, SOL_SOCKET, SO_DOMAIN,
				 sizeof(int), NULL, 0) == 0 && w.resp.dlen == sizeof(int))
			memcpy(&s->family, w.resp.data, sizeof(int));
		memset(&w, 0, sizeof(w));
		if (gl_chan_call(rt, &w, SRPC_REQ_GETSOCKOPT, id, SOL_SOCKET, SO_TYPE, sizeof(int),
				 NULL, 0) == 0 && w.resp.dlen == sizeof(int)) {
			int v;

			memcpy(&v, w.resp.data, sizeof(int));
			s->dgram = v == SOCK_DGRAM;
		}
		memset(&w, 0, sizeof(w));
		if (gl_chan_call(rt, &w, SRPC_REQ_GETSOCKOPT, id, SOL_SOCKET, SO_ACCEPTCONN,
				 sizeof(int), NULL, 0) == 0 && w.resp.dlen == sizeof(int)) {
			int v;

			memcpy(&v, w.resp.data, sizeof(int));
			s->listening = v != 0;
			s->acceptable = s->listening;	/* look once: accept tells */
		}
		if (s->listening)
			note_listener(rt, s);
		memset(&w, 0, sizeof(w));
		if (!s->listening &&
		    gl_chan_call(rt, &w, SRPC_REQ_GETPEERNAME, id, 0, 0, 0, NULL, 0) == 0)
			s->connected = true;
	}
	fl = gl_real.fcntl(fd, F_GETFL);
	s->nonblock = fl >= 0 && (fl & O_NONBLOCK);
	s->refs++;
	gl_fd_set(fd, s);
}

/*
 * Name our new channel the heir of the old one, over the old channel's
 * UNIX connection (only its holder can write it); then the TOE lets us
 * ADOPT what it holds.  Inside a VM the old channel has no connection the
 * TOE reads (a claim file): not done there.
 */
static void name_heir(struct gl_rt *rt, int old)
{
	struct srpc_heir h = { SRPC_HEIR_MAGIC, SRPC_VERSION, rt->chan_no, rt->chan_epoch };
	struct timeval tv = { .tv_sec = 5 };
	int32_t ret;
	ssize_t n;

	gl_real.setsockopt(old, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (gl_real.send(old, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		return;
	do
		n = gl_real.recv(old, &ret, sizeof(ret), 0);
	while (n < 0 && errno == EINTR);
}

void gl_exec_adopt(void)
{
	struct gl_rt *rt = &gl_rt;
	int old[16], nold = 0;
	struct { int fd; uint32_t id; } *ph = NULL;
	size_t nph = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return;
	gl_rt_lock();
	while ((e = readdir(d)) != NULL) {
		char link[64], target[128];
		unsigned int id;
		int fd = atoi(e->d_name);
		ssize_t n;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (sscanf(target, "/memfd:tochain-sock-%u", &id) == 1) {
			if (nph == cap) {
				size_t nc = cap ? cap * 2 : 16;
				void *p = realloc(ph, nc * sizeof(*ph));

				if (!p)
					continue;
				ph = p;
				cap = nc;
			}
			ph[nph].fd = fd;
			ph[nph].id = id;
			nph++;
		} else if (nold < 16 && (rt->vm ? gl_vm_is_old_conn(rt, fd) :
				 !strncmp(target, "socket:", 7) && is_old_conn(rt, fd))) {
			old[nold++] = fd;
		}
	}
	closedir(d);
	if (nph && gl_chan_ensure(rt) == 0) {
		if (!rt->vm)
			for (int i = 0; i < nold; i++)
				if (old[i] != rt->conn)
					name_heir(rt, old[i]);
		for (size_t i = 0; i < nph; i++)
			adopt_inherited(rt, ph[i].fd, ph[i].id);
	}
	gl_rt_unlock();
	free(ph);
	/* Only now may the old channel go: the sockets have a new reference. */
	for (int i = 0; i < nold; i++)
		if (!rt->attached || old[i] != rt->conn)
			gl_real.close(old[i]);
}
