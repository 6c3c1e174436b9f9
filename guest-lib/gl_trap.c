// SPDX-License-Identifier: MIT
/*
 * The trap path's supervisor (gl_trap.h): it receives the program's
 * socket system calls as seccomp notifications and performs them with
 * the runtime (preloaded into the supervisor, so its socket() is the
 * TOE's), then answers with the result, an fd placed in the program, or
 * "continue" (let the kernel run the call: an fd of the range that is
 * not ours, a socket type not offloaded, the close of a placeholder).
 *
 * What it trusts: nothing the program passes.  Pointers are read and
 * written with process_vm_readv/writev on the calling thread (EFAULT as
 * the kernel would), lengths are bounded before use.  The program is the
 * guest's own: a race between reading its memory and its call going away
 * (a signal) costs that call, never the supervisor.
 *
 * THREADING: workers each take notifications from the listener
 * (SECCOMP_IOCTL_NOTIF_RECV hands each to one of them); when the last
 * idle worker takes one, it starts another (up to TR_MAX_WORKERS), so a
 * call that blocks (accept, connect) never holds up the others.
 * tr.mu protects the fd table, each socket's reference count, state,
 * token and stash; no call into the runtime that can block is made
 * under it (the zero-timeout poll of tr_token_refresh never blocks).
 *
 * Placeholders: socket() and accept() give the program one end of an
 * AF_UNIX socketpair at a number of the range; the supervisor keeps the
 * other end.  Connected streams are relayed (gl_trap_relay.c), so the
 * program's own read/write/poll/epoll work on it natively.  A listener's
 * program end is made readable while the TOE socket has a connection
 * waiting: a per-listener thread writes one byte (the token) into it and
 * accept() reads it back when it runs dry.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "gl_trap.h"
#include "gl_trap_relay.h"

#define TR_MAX_WORKERS 64
#define TR_STASH 8
#define TR_OPT_MAX 256		/* option values copied in or out */
#define TR_WAIT_MS 250		/* blocking calls look at their notification this often */

enum tr_state { TS_OPEN, TS_LISTEN, TS_CONN };

struct tr_sock {
	int ref;		/* table, listener thread, calls in flight, its maker (tr.mu) */
	enum tr_state state;	/* (tr.mu) */
	int off;		/* the offloaded socket */
	int a;			/* our end of the socketpair */
	int b;			/* our copy of the program's end until connected, else -1 */
	bool token;		/* one byte waits in b's queue (tr.mu) */
	bool closed;		/* the program closed it (tr.mu) */
	int stash[TR_STASH];	/* accepted, their accept() was gone (tr.mu) */
	int nstash;
	pthread_cond_t cond;	/* token or closed changed */
};

static struct {
	pthread_mutex_t mu;
	struct tr_sock **tab;	/* [fd - base] (mu) */
	struct gl_trap_range r;
	int listener;
	int idle, workers;	/* (mu) */
} tr = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* A result: a value, or an errno (> 0), or the kernel runs the call, or already answered. */
struct tr_res {
	long val;
	int err;
	enum { TR_RET, TR_CONTINUE, TR_SENT } how;
};

#define RES(v) ((struct tr_res){ .val = (v) })
#define ERR(e) ((struct tr_res){ .err = (e) })
#define CONT ((struct tr_res){ .how = TR_CONTINUE })
#define SENT ((struct tr_res){ .how = TR_SENT })

/* ---- the program's memory ---- */

static int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	if (!len)
		return 0;
	if (!addr)
		return -EFAULT;
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = { (void *)buf, len }, r = { (void *)(uintptr_t)addr, len };

	if (!len)
		return 0;
	if (!addr)
		return -EFAULT;
	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* An address and its length in, as the kernel's move_addr_to_kernel. */
static int addr_in(pid_t pid, uint64_t p, uint64_t len, struct sockaddr_storage *ss)
{
	if ((int)len < 0 || len > sizeof(*ss))
		return -EINVAL;
	return mem_read(pid, p, ss, len);
}

/* An address out through (p, lenp), as the kernel's move_addr_to_user. */
static int addr_out(pid_t pid, uint64_t p, uint64_t lenp, const void *ss, socklen_t have)
{
	int len;

	if (!p)
		return 0;
	if (mem_read(pid, lenp, &len, sizeof(len)))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	if (mem_write(pid, p, ss, (size_t)len < have ? (size_t)len : have))
		return -EFAULT;
	len = (int)have;
	return mem_write(pid, lenp, &len, sizeof(len));
}

static bool notif_alive(uint64_t id)
{
	return ioctl(tr.listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* ---- sockets and the table ---- */

static struct tr_sock *ts_get(int fd)
{
	struct tr_sock *s = NULL;

	if (fd < tr.r.base || fd >= tr.r.base + tr.r.count)
		return NULL;
	pthread_mutex_lock(&tr.mu);
	s = tr.tab[fd - tr.r.base];
	if (s)
		s->ref++;
	pthread_mutex_unlock(&tr.mu);
	return s;
}

static void ts_put(struct tr_sock *s)
{
	bool last;

	pthread_mutex_lock(&tr.mu);
	last = --s->ref == 0;
	pthread_mutex_unlock(&tr.mu);
	if (!last)
		return;
	for (int i = 0; i < s->nstash; i++)
		close(s->stash[i]);
	close(s->off);
	close(s->a);
	if (s->b >= 0)
		close(s->b);
	pthread_cond_destroy(&s->cond);
	free(s);
}

static struct tr_sock *ts_new(int off, int a, int b, enum tr_state st)
{
	struct tr_sock *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->ref = 1;	/* the caller's; ts_place adds the table's */
	s->off = off;
	s->a = a;
	s->b = b;
	s->state = st;
	pthread_cond_init(&s->cond, NULL);
	return s;
}

/* Is fd number @n free in the process of thread @pid?  (Its own fds never are ours.) */
static bool fd_unused(pid_t pid, int n)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)pid, n);
	return access(p, F_OK) && errno == ENOENT;
}

/*
 * Put @s in the table (with a reference of its own) and @progfd into the
 * program at that number, answering the call with it.  On failure @s is
 * not in the table and the answer is the caller's: -errno.  Either way
 * the caller keeps its own reference: once the answer is sent, the
 * program may close the number at once (a server that forks a child per
 * connection does), and that close drops only the table's.
 */
static int ts_place(const struct seccomp_notif *req, struct tr_sock *s, int progfd, bool cloexec)
{
	struct seccomp_notif_addfd add = {
		.id = req->id,
		.flags = SECCOMP_ADDFD_FLAG_SETFD | SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)progfd,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int i, ret;

	pthread_mutex_lock(&tr.mu);
	for (i = 0; i < tr.r.count; i++)
		if (!tr.tab[i] && fd_unused(req->pid, tr.r.base + i))
			break;
	if (i == tr.r.count) {
		pthread_mutex_unlock(&tr.mu);
		return -EMFILE;
	}
	tr.tab[i] = s;
	s->ref++;	/* the table's */
	pthread_mutex_unlock(&tr.mu);
	add.newfd = (uint32_t)(tr.r.base + i);
	ret = ioctl(tr.listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	if (ret < 0) {
		ret = -errno;
		pthread_mutex_lock(&tr.mu);
		if (tr.tab[i] == s) {
			tr.tab[i] = NULL;
			s->ref--;	/* not the last: the caller's is left */
		}
		pthread_mutex_unlock(&tr.mu);
	}
	return ret;
}

/* ---- listener readiness ---- */

static bool off_readable(int off)
{
	struct pollfd p = { .fd = off, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLERR | POLLHUP));
}

/* Make the token say whether accept() would find a connection now.  Under tr.mu. */
static void tr_token_refresh_locked(struct tr_sock *s)
{
	bool ready = s->nstash > 0 || off_readable(s->off);
	char c = 't';

	if (s->b < 0)
		return;
	if (ready && !s->token && send(s->a, &c, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		s->token = true;
	else if (!ready && s->token && recv(s->b, &c, 1, MSG_DONTWAIT) == 1)
		s->token = false;
	pthread_cond_broadcast(&s->cond);
}

static void tr_token_refresh(struct tr_sock *s)
{
	pthread_mutex_lock(&tr.mu);
	tr_token_refresh_locked(s);
	pthread_mutex_unlock(&tr.mu);
}

/* One per listener: sets the token when a connection arrives; holds a reference. */
static void *tr_listen_thread(void *arg)
{
	struct tr_sock *s = arg;

	for (;;) {
		struct pollfd p = { .fd = s->off, .events = POLLIN };

		pthread_mutex_lock(&tr.mu);
		while (s->token && !s->closed)
			pthread_cond_wait(&s->cond, &tr.mu);
		if (s->closed) {
			pthread_mutex_unlock(&tr.mu);
			break;
		}
		pthread_mutex_unlock(&tr.mu);
		if (poll(&p, 1, TR_WAIT_MS) > 0)
			tr_token_refresh(s);
	}
	ts_put(s);
	return NULL;
}

/* ---- the calls ---- */

static struct tr_res do_socket(const struct seccomp_notif *req)
{
	int type = (int)req->data.args[1], off, sv[2], ret;
	struct tr_sock *s;

	if ((type & 0xf) != SOCK_STREAM)
		return CONT;	/* UDP and raw sockets: the kernel's (README) */
	off = socket((int)req->data.args[0], SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		     (int)req->data.args[2]);
	if (off < 0)
		return ERR(errno);
	if (type & ~(0xf | SOCK_NONBLOCK | SOCK_CLOEXEC)) {
		close(off);
		return ERR(EINVAL);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		ret = errno;
		close(off);
		return ERR(ret);
	}
	if (type & SOCK_NONBLOCK)
		fcntl(sv[1], F_SETFL, O_NONBLOCK);
	s = ts_new(off, sv[0], sv[1], TS_OPEN);
	if (!s) {
		close(off);
		close(sv[0]);
		close(sv[1]);
		return ERR(ENOMEM);
	}
	ret = ts_place(req, s, sv[1], type & SOCK_CLOEXEC);
	ts_put(s);
	return ret < 0 ? ERR(-ret) : SENT;
}

static struct tr_res do_bind(struct tr_sock *s, const struct seccomp_notif *req)
{
	struct sockaddr_storage ss;
	int err = addr_in(req->pid, req->data.args[1], req->data.args[2], &ss);

	if (err)
		return ERR(-err);
	return bind(s->off, (struct sockaddr *)&ss, (socklen_t)req->data.args[2]) ? ERR(errno) : RES(0);
}

static struct tr_res do_listen(struct tr_sock *s, const struct seccomp_notif *req)
{
	bool start = false;
	pthread_t t;

	if (listen(s->off, (int)req->data.args[1]))
		return ERR(errno);
	pthread_mutex_lock(&tr.mu);
	if (s->state == TS_OPEN) {
		s->state = TS_LISTEN;
		s->ref++;	/* the listener thread's */
		start = true;
	}
	pthread_mutex_unlock(&tr.mu);
	if (start) {
		if (pthread_create(&t, NULL, tr_listen_thread, s) == 0)
			pthread_detach(t);
		else
			ts_put(s);	/* readiness then only from accept's own refresh */
	}
	return RES(0);
}

/* Wait up to TR_WAIT_MS for @ev on @off; false when the call is gone (a signal). */
static bool wait_off(int off, short ev, uint64_t id)
{
	struct pollfd p = { .fd = off, .events = ev };

	poll(&p, 1, TR_WAIT_MS);
	return notif_alive(id);
}

static struct tr_res do_accept(struct tr_sock *s, const struct seccomp_notif *req, int flags)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	bool nonblock;
	int c = -1, sv[2], ret;
	struct tr_sock *n;

	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return ERR(EINVAL);
	pthread_mutex_lock(&tr.mu);
	ret = s->state == TS_LISTEN ? 0 : EINVAL;
	if (!ret && s->nstash)
		c = s->stash[--s->nstash];
	pthread_mutex_unlock(&tr.mu);
	if (ret)
		return ERR(ret);
	nonblock = fcntl(s->b, F_GETFL) & O_NONBLOCK;
	while (c < 0) {
		c = accept4(s->off, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c >= 0)
			break;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return ERR(errno);
		if (nonblock) {
			tr_token_refresh(s);
			return ERR(EAGAIN);
		}
		if (!wait_off(s->off, POLLIN, req->id))
			return SENT;	/* interrupted: nobody to answer */
	}
	if (getpeername(c, (struct sockaddr *)&ss, &sl))
		sl = 0;
	ret = addr_out(req->pid, req->data.args[1], req->data.args[2], &ss, sl);
	if (ret || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		ret = ret ? -ret : errno;
		close(c);	/* as the kernel: the connection is gone with EFAULT */
		tr_token_refresh(s);
		return ERR(ret);
	}
	if (flags & SOCK_NONBLOCK)
		fcntl(sv[1], F_SETFL, O_NONBLOCK);
	n = ts_new(c, sv[0], -1, TS_CONN);
	ret = n ? ts_place(req, n, sv[1], flags & SOCK_CLOEXEC) : -ENOMEM;
	close(sv[1]);
	if (ret < 0) {
		/* Keep the connection for the next accept (the call was interrupted). */
		if (n) {
			n->off = -1;	/* not its any more */
			ts_put(n);	/* closes sv[0] */
		} else {
			close(sv[0]);
		}
		pthread_mutex_lock(&tr.mu);
		if (s->nstash < TR_STASH)
			s->stash[s->nstash++] = c;
		else
			close(c);
		pthread_mutex_unlock(&tr.mu);
		tr_token_refresh(s);
		return ret == -ENOENT ? SENT : ERR(-ret);
	}
	/* c and sv[0] are n's, and n is ours until here, whatever the program did meanwhile. */
	if (gl_trap_relay_add(dup(c), dup(sv[0])) < 0)
		shutdown(sv[0], SHUT_RDWR);
	ts_put(n);
	tr_token_refresh(s);
	return SENT;
}

static struct tr_res do_connect(struct tr_sock *s, const struct seccomp_notif *req)
{
	struct sockaddr_storage ss;
	socklen_t el = sizeof(int);
	int err = addr_in(req->pid, req->data.args[1], req->data.args[2], &ss), b;

	if (err)
		return ERR(-err);
	if (connect(s->off, (struct sockaddr *)&ss, (socklen_t)req->data.args[2])) {
		if (errno != EINPROGRESS)
			return ERR(errno);
		/* The program's non-blocking connect is done blocking here: 0 is a valid answer. */
		for (;;) {
			struct pollfd p = { .fd = s->off, .events = POLLOUT };

			if (poll(&p, 1, TR_WAIT_MS) > 0)
				break;
			if (!notif_alive(req->id))
				return SENT;
		}
		if (getsockopt(s->off, SOL_SOCKET, SO_ERROR, &err, &el))
			return ERR(errno);
		if (err)
			return ERR(err);
	}
	pthread_mutex_lock(&tr.mu);
	b = s->state == TS_OPEN ? s->b : -1;
	if (b >= 0) {
		s->state = TS_CONN;
		s->b = -1;
	}
	pthread_mutex_unlock(&tr.mu);
	if (b >= 0) {
		close(b);	/* the program's end now closes with the program's last copy */
		if (gl_trap_relay_add(dup(s->off), dup(s->a)) < 0)
			shutdown(s->a, SHUT_RDWR);
	}
	return RES(0);
}

static struct tr_res do_name(struct tr_sock *s, const struct seccomp_notif *req, bool peer)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int err;

	if ((peer ? getpeername : getsockname)(s->off, (struct sockaddr *)&ss, &sl))
		return ERR(errno);
	if (!req->data.args[1])
		return ERR(EFAULT);
	err = addr_out(req->pid, req->data.args[1], req->data.args[2], &ss, sl);
	return err ? ERR(-err) : RES(0);
}

static struct tr_res do_getsockopt(struct tr_sock *s, const struct seccomp_notif *req)
{
	unsigned char v[TR_OPT_MAX];
	int len;
	socklen_t l;

	if (mem_read(req->pid, req->data.args[4], &len, sizeof(len)))
		return ERR(EFAULT);
	if (len < 0)
		return ERR(EINVAL);
	l = len < TR_OPT_MAX ? (socklen_t)len : TR_OPT_MAX;
	if (getsockopt(s->off, (int)req->data.args[1], (int)req->data.args[2], v, &l))
		return ERR(errno);
	if (mem_write(req->pid, req->data.args[3], v, l))
		return ERR(EFAULT);
	len = (int)l;
	return mem_write(req->pid, req->data.args[4], &len, sizeof(len)) ? ERR(EFAULT) : RES(0);
}

static struct tr_res do_setsockopt(struct tr_sock *s, const struct seccomp_notif *req)
{
	unsigned char v[TR_OPT_MAX];
	int len = (int)req->data.args[4];

	if (len < 0)
		return ERR(EINVAL);
	if (len > TR_OPT_MAX)
		len = TR_OPT_MAX;	/* no option the runtime knows is longer */
	if (mem_read(req->pid, req->data.args[3], v, (size_t)len))
		return ERR(EFAULT);
	return setsockopt(s->off, (int)req->data.args[1], (int)req->data.args[2],
			  len ? v : NULL, (socklen_t)len) ? ERR(errno) : RES(0);
}

/* The thread group of thread @tid (0 if gone). */
static pid_t tgid_of(pid_t tid)
{
	char p[64], line[128];
	pid_t tgid = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)tid);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/*
 * Does a process other than @tid's (and this one) hold the program end
 * @b at number @fd?  A forked child inherits a listener at the same
 * number and closes it (servers that fork per connection): the parent's
 * listener must live on.  Scans /proc, so only listeners and unconnected
 * sockets ask (their closes are rare).
 */
static bool held_elsewhere(pid_t tid, int fd, int b)
{
	pid_t me = getpid(), tgid = tgid_of(tid);
	struct stat want, st;
	struct dirent *e;
	bool found = false;
	char p[64];
	DIR *d;

	if (fstat(b, &want) || !(d = opendir("/proc")))
		return false;
	while (!found && (e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid <= 0 || pid == me || pid == tgid)
			continue;
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)pid, fd);
		found = stat(p, &st) == 0 && st.st_ino == want.st_ino && st.st_dev == want.st_dev;
	}
	closedir(d);
	return found;
}

/* The program closes a placeholder: forget the number, let the kernel close its end. */
static struct tr_res do_close(const struct seccomp_notif *req, int fd)
{
	struct tr_sock *s;
	int b = -1;

	pthread_mutex_lock(&tr.mu);
	s = tr.tab[fd - tr.r.base];
	if (s && s->b >= 0)
		b = dup(s->b);	/* stays valid while we look, unlocked */
	pthread_mutex_unlock(&tr.mu);
	if (b >= 0) {
		bool keep = held_elsewhere(req->pid, fd, b);

		close(b);
		if (keep)
			return CONT;
	}
	pthread_mutex_lock(&tr.mu);
	s = tr.tab[fd - tr.r.base];
	tr.tab[fd - tr.r.base] = NULL;
	if (s) {
		s->closed = true;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&tr.mu);
	if (s)
		ts_put(s);	/* a relayed stream lives on in the relay's dups */
	return CONT;
}

static struct tr_res tr_dispatch(const struct seccomp_notif *req)
{
	int nr = req->data.nr, fd = (int)req->data.args[0];
	struct tr_sock *s;
	struct tr_res r;

	if (nr == __NR_socket)
		return do_socket(req);
	if (nr == __NR_close)
		return fd >= tr.r.base && fd < tr.r.base + tr.r.count ? do_close(req, fd) : CONT;
	s = ts_get(fd);
	if (!s)
		return CONT;	/* an fd of the range the program made itself */
	switch (nr) {
	case __NR_bind: r = do_bind(s, req); break;
	case __NR_listen: r = do_listen(s, req); break;
	case __NR_accept: r = do_accept(s, req, 0); break;
	case __NR_accept4: r = do_accept(s, req, (int)req->data.args[3]); break;
	case __NR_connect: r = do_connect(s, req); break;
	case __NR_getsockname: r = do_name(s, req, false); break;
	case __NR_getpeername: r = do_name(s, req, true); break;
	case __NR_getsockopt: r = do_getsockopt(s, req); break;
	case __NR_setsockopt: r = do_setsockopt(s, req); break;
	default: r = CONT; break;
	}
	ts_put(s);
	return r;
}

/* ---- workers ---- */

static void tr_answer(const struct seccomp_notif *req, struct tr_res r)
{
	struct seccomp_notif_resp resp = { .id = req->id };

	if (r.how == TR_SENT)
		return;
	if (r.how == TR_CONTINUE)
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else if (r.err)
		resp.error = -r.err;
	else
		resp.val = r.val;
	/* ENOENT: the call went away (a signal, the thread died); nothing to do. */
	ioctl(tr.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static void *tr_worker(void *arg);

static void tr_spawn(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, tr_worker, NULL) == 0) {
		pthread_detach(t);
		return;
	}
	pthread_mutex_lock(&tr.mu);
	tr.workers--;
	pthread_mutex_unlock(&tr.mu);
}

static void *tr_worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct seccomp_notif req;
		bool more;
		int ret;

		memset(&req, 0, sizeof(req));
		pthread_mutex_lock(&tr.mu);
		tr.idle++;
		pthread_mutex_unlock(&tr.mu);
		ret = ioctl(tr.listener, SECCOMP_IOCTL_NOTIF_RECV, &req);
		pthread_mutex_lock(&tr.mu);
		tr.idle--;
		more = ret == 0 && tr.idle == 0 && tr.workers < TR_MAX_WORKERS;
		if (more)
			tr.workers++;
		pthread_mutex_unlock(&tr.mu);
		if (more)
			tr_spawn();
		if (ret < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;	/* the listener is gone */
		}
		tr_answer(&req, tr_dispatch(&req));
	}
	return NULL;
}

int gl_trap_serve(int listener, int ready_fd, const struct gl_trap_range *r)
{
	struct pollfd p = { .fd = listener, .events = 0 };
	int err, i;

	signal(SIGPIPE, SIG_IGN);
	tr.listener = listener;
	tr.r = *r;
	tr.tab = calloc((size_t)r->count, sizeof(*tr.tab));
	if (!tr.tab)
		return 1;
	err = gl_trap_relay_init();
	if (err) {
		fprintf(stderr, "tochain-run: relay: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < 2; i++) {
		pthread_mutex_lock(&tr.mu);
		tr.workers++;
		pthread_mutex_unlock(&tr.mu);
		tr_spawn();
	}
	if (ready_fd >= 0) {
		if (write(ready_fd, "r", 1) != 1)
			return 1;
		close(ready_fd);
	}
	/* POLLHUP: no process uses the filter any more. */
	while (poll(&p, 1, -1) < 0 || !(p.revents & (POLLHUP | POLLERR | POLLNVAL)))
		;
	/* Let the relay hand over what the program wrote before it exited. */
	for (i = 0; i < 1000 && gl_trap_relay_count() > 0; i++)
		usleep(10000);
	return 0;
}
