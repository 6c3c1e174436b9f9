// SPDX-License-Identifier: MIT
/*
 * The interposed libc entry points: the only symbols the library exports
 * (gl.map).  Each one sends an offloaded fd to the runtime under mu and
 * everything else to the real libc untouched.  What the caller passes by
 * pointer is not trusted: msghdrs, iovec arrays, addresses, lengths and
 * option values are copied in and out through gl_user.h, in the kernel's
 * order, so that a bad pointer gives EFAULT where the kernel's does (and
 * what a receive took before it is taken, as there).  The waiting calls
 * (poll, select, epoll) are in gl_api_wait.c.
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

/* The exported names: prototypes so -Wmissing-prototypes holds for the _chk ones. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
		       struct sockaddr *a, socklen_t *l);
int fcntl64(int fd, int cmd, ...);
ssize_t sendfile64(int out, int in, off_t *off, size_t count);

static void maybe_sigpipe(long r, int flags)
{
	if (r == -EPIPE && !(flags & MSG_NOSIGNAL))
		raise(SIGPIPE);
}

/* Lock and look @fd up again under the lock; NULL (unlocked) if it is not ours. */
static struct gl_sock *lock_sock(int fd)
{
	struct gl_sock *s;

	gl_rt_lock();
	s = gl_fd_sock(fd);
	if (!s) {
		gl_rt_unlock();
		return NULL;
	}
	return s;
}


__attribute__((constructor)) static void gl_init(void)
{
	const char *path;

	gl_real_init();
	path = getenv("TOCHAIN_REGION");
	if (path && *path) {
		gl_rt.path = strdup(path);
		gl_rt.configured = gl_rt.path != NULL;
		gl_rt.vm = gl_vm_is_dev(path);
	}
	pthread_atfork(gl_fork_prepare, gl_fork_parent, gl_fork_child);
	if (gl_rt.configured)
		gl_exec_adopt();
}

int socket(int domain, int type, int protocol)
{
	long r;
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);

	gl_real_init();
	if (!gl_rt.configured || (domain != AF_INET && domain != AF_INET6) ||
	    !((base == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP)) ||
	      (base == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP))))
		return gl_real.socket(domain, type, protocol);
	gl_rt_lock();
	r = gl_ctl_socket(&gl_rt, domain, type, protocol);
	gl_rt_unlock();
	return (int)ret_errno(r);
}

int bind(int fd, const struct sockaddr *a, socklen_t l)
{
	struct sockaddr_storage ss;
	struct gl_sock *s = lock_sock(fd);
	long r;

	if (!s)
		return gl_real.bind(fd, a, l);
	r = gl_user_addr_in(a, l, &ss);
	if (!r)
		r = gl_ctl_bind(&gl_rt, s, a ? (struct sockaddr *)&ss : NULL, l);
	gl_rt_unlock();
	return (int)ret_errno(r);
}

int listen(int fd, int backlog)
{
	struct gl_sock *s = lock_sock(fd);
	long r;

	if (!s)
		return gl_real.listen(fd, backlog);
	r = gl_ctl_listen(&gl_rt, s, backlog);
	gl_rt_unlock();
	return (int)ret_errno(r);
}

int accept4(int fd, struct sockaddr *a, socklen_t *l, int flags)
{
	struct gl_sock *s = lock_sock(fd);
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	long r;

	if (!s)
		return gl_real.accept4(fd, a, l, flags);
	r = gl_ctl_accept(&gl_rt, s, &ss, &sl, flags);
	gl_rt_unlock();
	if (r >= 0 && a) {
		int err = gl_user_addr_out(&ss, sl, a, l);

		if (err) {	/* the kernel too has taken the connection and drops it */
			close((int)r);
			r = err;
		}
	}
	return (int)ret_errno(r);
}

int accept(int fd, struct sockaddr *a, socklen_t *l)
{
	if (!OFFLOADED(fd))
		return gl_real.accept(fd, a, l);
	return accept4(fd, a, l, 0);
}

int connect(int fd, const struct sockaddr *a, socklen_t l)
{
	struct sockaddr_storage ss;
	struct gl_sock *s = lock_sock(fd);
	long r;

	if (!s)
		return gl_real.connect(fd, a, l);
	r = gl_user_addr_in(a, l, &ss);
	if (!r)
		r = gl_ctl_connect(&gl_rt, s, a ? (struct sockaddr *)&ss : NULL, l);
	gl_rt_unlock();
	return (int)ret_errno(r);
}

/*
 * @iov: the runtime's copy of the array; @a/@l: the runtime's copy of the
 * destination of a datagram (NULL: connected); streams ignore it.
 */
static ssize_t sendv(int fd, const struct iovec *iov, int n, int flags,
		     const struct sockaddr_storage *a, socklen_t l)
{
	struct gl_sock *s = lock_sock(fd);
	long r;

	if (!s)
		return -ENOTSOCK;
	if (s->dgram)
		r = gl_send_dgram(&gl_rt, s, iov, n, flags, (const struct sockaddr *)a, l);
	else
		r = gl_send_stream(&gl_rt, s, iov, n, flags);
	gl_rt_unlock();
	maybe_sigpipe(r, flags);
	return ret_errno(r);
}

/*
 * @iov: the runtime's copy of the array; a datagram's source goes to
 * @ss and *@sl (a stream has none: *@sl = 0, as the kernel for a
 * connected stream); *@mflags gets MSG_TRUNC.  A count or -errno.
 */
static ssize_t recvv(int fd, const struct iovec *iov, int n, int flags,
		     struct sockaddr_storage *ss, socklen_t *sl, int *mflags)
{
	struct gl_sock *s = lock_sock(fd);
	long r;

	*sl = 0;
	if (!s)
		return -ENOTSOCK;
	if (s->dgram)
		r = gl_recv_dgram(&gl_rt, s, iov, n, flags, ss, sl, mflags);
	else
		r = gl_recv_stream(&gl_rt, s, iov, n, flags);
	gl_rt_unlock();
	return r;
}

/* recvv into the caller's @buf of @n bytes, without an address. */
static ssize_t recv1(int fd, void *buf, size_t n, int flags)
{
	struct iovec iov = { buf, n };
	struct sockaddr_storage ss;
	socklen_t sl;

	return ret_errno(recvv(fd, &iov, 1, flags, &ss, &sl, NULL));
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	struct iovec iov = { (void *)buf, n };

	if (!OFFLOADED(fd))
		return gl_real.send(fd, buf, n, flags);
	return sendv(fd, &iov, 1, flags, NULL, 0);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *a,
	       socklen_t l)
{
	struct iovec iov = { (void *)buf, n };
	struct sockaddr_storage ss;
	long r;

	if (!OFFLOADED(fd))
		return gl_real.sendto(fd, buf, n, flags, a, l);
	if (!a)
		return sendv(fd, &iov, 1, flags, NULL, 0);
	r = gl_user_addr_in(a, l, &ss);	/* copied even for TCP, which ignores it */
	if (r)
		return ret_errno(r);
	return sendv(fd, &iov, 1, flags, &ss, l);
}

/*
 * The kernel's copy_msghdr_from_user: the caller's msghdr @um into @m,
 * its name into @ss (sendmsg; NULL: recvmsg, which writes it later) with
 * *@nl its length (0: none), its iovec array into @small or *@iov
 * (gl_user_iov_put).  0, -EFAULT, -EINVAL, -EMSGSIZE, -ENOMEM.
 */
static int msghdr_in(const struct msghdr *um, struct msghdr *m, struct sockaddr_storage *ss,
		     socklen_t *nl, struct iovec *small, struct iovec **iov)
{
	int r = gl_user_read(m, um, sizeof(*m));

	if (r)
		return r;
	if ((int)m->msg_namelen < 0)
		return -EINVAL;
	/* the kernel cuts a longer name to sockaddr_storage; none without a pointer */
	*nl = !m->msg_name ? 0 : m->msg_namelen < sizeof(*ss) ? m->msg_namelen : sizeof(*ss);
	if (ss) {
		r = gl_user_read(ss, m->msg_name, *nl);
		if (r)
			return r;
	}
	if (m->msg_iovlen > IOV_MAX)
		return -EMSGSIZE;
	return gl_user_iov_get(m->msg_iov, (int)m->msg_iovlen, small, iov);
}

ssize_t sendmsg(int fd, const struct msghdr *um, int flags)
{
	struct iovec small[GL_USER_IOV_SMALL], *iov;
	struct sockaddr_storage ss;
	struct msghdr m;
	socklen_t nl;
	long r;

	if (!OFFLOADED(fd))
		return gl_real.sendmsg(fd, um, flags);
	r = msghdr_in(um, &m, &ss, &nl, small, &iov);
	if (r)
		return ret_errno(r);
	r = sendv(fd, iov, (int)m.msg_iovlen, flags, nl ? &ss : NULL, nl);
	gl_user_iov_put(iov, small);
	return r;
}

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	if (!OFFLOADED(fd))
		return gl_real.recv(fd, buf, n, flags);
	return recv1(fd, buf, n, flags);
}

ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	(void)buflen;
	return recv(fd, buf, n, flags);
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *a, socklen_t *l)
{
	struct iovec iov = { buf, n };
	struct sockaddr_storage ss;
	socklen_t sl;
	ssize_t r;

	if (!OFFLOADED(fd))
		return gl_real.recvfrom(fd, buf, n, flags, a, l);
	r = recvv(fd, &iov, 1, flags, &ss, &sl, NULL);
	if (r >= 0 && a) {	/* after the data is taken, as the kernel */
		int err = gl_user_addr_out(&ss, sl, a, l);

		if (err)
			r = err;
	}
	return ret_errno(r);
}

ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
		       struct sockaddr *a, socklen_t *l)
{
	(void)buflen;
	return recvfrom(fd, buf, n, flags, a, l);
}

ssize_t recvmsg(int fd, struct msghdr *um, int flags)
{
	struct iovec small[GL_USER_IOV_SMALL], *iov;
	struct sockaddr_storage ss;
	struct msghdr m;
	socklen_t sl;
	int mf = 0;
	ssize_t r;

	if (!OFFLOADED(fd))
		return gl_real.recvmsg(fd, um, flags);
	r = msghdr_in(um, &m, NULL, &sl, small, &iov);
	if (r)
		return ret_errno(r);
	r = recvv(fd, iov, (int)m.msg_iovlen, flags, &ss, &sl, &mf);
	gl_user_iov_put(iov, small);
	if (r < 0)
		return ret_errno(r);
	/* the kernel's order: name and its length, flags, control length */
	if (m.msg_name) {
		int err = gl_user_addr_out(&ss, sl, m.msg_name, &um->msg_namelen);

		if (err)
			return ret_errno(err);
	}
	m.msg_controllen = 0;
	if (gl_user_write(&um->msg_flags, &mf, sizeof(mf)) ||
	    gl_user_write(&um->msg_controllen, &m.msg_controllen, sizeof(m.msg_controllen)))
		return ret_errno(-EFAULT);
	return r;
}

ssize_t read(int fd, void *buf, size_t n)
{
	if (!OFFLOADED(fd))
		return gl_real.read(fd, buf, n);
	return recv1(fd, buf, n, 0);
}

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	(void)buflen;
	return read(fd, buf, n);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	struct iovec iov = { (void *)buf, n };

	if (!OFFLOADED(fd))
		return gl_real.write(fd, buf, n);
	return sendv(fd, &iov, 1, 0, NULL, 0);
}

ssize_t readv(int fd, const struct iovec *uiov, int n)
{
	struct iovec small[GL_USER_IOV_SMALL], *iov;
	struct sockaddr_storage ss;
	socklen_t sl;
	ssize_t r;

	if (!OFFLOADED(fd))
		return gl_real.readv(fd, uiov, n);
	if (n < 0 || n > IOV_MAX)
		return ret_errno(-EINVAL);
	r = gl_user_iov_get(uiov, n, small, &iov);
	if (r)
		return ret_errno(r);
	r = recvv(fd, iov, n, 0, &ss, &sl, NULL);
	gl_user_iov_put(iov, small);
	return ret_errno(r);
}

ssize_t writev(int fd, const struct iovec *uiov, int n)
{
	struct iovec small[GL_USER_IOV_SMALL], *iov;
	ssize_t r;

	if (!OFFLOADED(fd))
		return gl_real.writev(fd, uiov, n);
	if (n < 0 || n > IOV_MAX)
		return ret_errno(-EINVAL);
	r = gl_user_iov_get(uiov, n, small, &iov);
	if (r)
		return ret_errno(r);
	r = sendv(fd, iov, n, 0, NULL, 0);
	gl_user_iov_put(iov, small);
	return r;
}

ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	struct gl_sock *s;
	long r;

	if (OFFLOADED(in))
		return ret_errno(-EINVAL);
	s = lock_sock(out);
	if (!s)
		return gl_real.sendfile(out, in, off, count);
	r = gl_send_file(&gl_rt, s, in, off, count);
	gl_rt_unlock();
	maybe_sigpipe(r, 0);
	return ret_errno(r);
}

ssize_t sendfile64(int out, int in, off_t *off, size_t count)
{
	return sendfile(out, in, off, count);
}

int shutdown(int fd, int how)
{
	struct gl_sock *s = lock_sock(fd);
	long r;

	if (!s)
		return gl_real.shutdown(fd, how);
	r = gl_ctl_shutdown(&gl_rt, s, how);
	gl_rt_unlock();
	return (int)ret_errno(r);
}

/* @fd is about to stop naming what it names (close, dup2 target). */
static void forget_fd(int fd)
{
	struct gl_sock *s;

	if ((!gl_fd_sock(fd) && !gl_rt.epolls) || gl_rt_held())
		return;	/* held: the runtime closes one of its own fds (gl_rt.c) */
	gl_rt_lock();
	s = gl_fd_sock(fd);
	if (s) {
		gl_fd_set(fd, NULL);
		gl_epoll_forget_fd(fd);
		gl_ctl_put(&gl_rt, s);
	} else {
		gl_epoll_forget_epfd(fd);
	}
	gl_rt_unlock();
}

int close(int fd)
{
	gl_real_init();
	forget_fd(fd);
	return gl_real.close(fd);
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	gl_real_init();
	if (!(flags & CLOSE_RANGE_CLOEXEC)) {
		unsigned int max = (unsigned int)gl_fd_max();

		for (unsigned int fd = first; fd <= last && fd < max; fd++)
			forget_fd((int)fd);
	}
	return gl_real.close_range(first, last, flags);
}

void closefrom(int lowfd)
{
	gl_real_init();
	if (lowfd < 0)
		lowfd = 0;
	for (int fd = lowfd; fd < gl_fd_max(); fd++)
		if (gl_fd_sock(fd))
			forget_fd(fd);
	/* glibc's closefrom calls the syscall internally, not close(). */
	gl_real.closefrom(lowfd);
}

/* @nfd became a copy of @fd. */
static int dup_done(int fd, int nfd)
{
	struct gl_sock *s;

	if (nfd < 0)
		return nfd;
	gl_rt_lock();
	s = gl_fd_sock(fd);
	if (s) {
		if (nfd >= gl_fd_max()) {
			gl_rt_unlock();
			gl_real.close(nfd);
			errno = EMFILE;
			return -1;
		}
		s->refs++;
		gl_fd_set(nfd, s);
	}
	gl_rt_unlock();
	return nfd;
}

int dup(int fd)
{
	if (!OFFLOADED(fd))
		return gl_real.dup(fd);
	return dup_done(fd, gl_real.dup(fd));
}

int dup3(int fd, int nfd, int flags)
{
	int r;

	if (!OFFLOADED(fd) && !OFFLOADED(nfd))
		return gl_real.dup3(fd, nfd, flags);
	if (fd == nfd)
		return gl_real.dup3(fd, nfd, flags);	/* EINVAL, as the kernel */
	r = gl_real.dup3(fd, nfd, flags);
	if (r < 0)
		return r;
	forget_fd(nfd);	/* what nfd named is gone (the kernel closed it) */
	return dup_done(fd, r);
}

int dup2(int fd, int nfd)
{
	int r;

	if (!OFFLOADED(fd) && !OFFLOADED(nfd))
		return gl_real.dup2(fd, nfd);
	if (fd == nfd)
		return gl_real.dup2(fd, nfd);
	r = gl_real.dup2(fd, nfd);
	if (r < 0)
		return r;
	forget_fd(nfd);
	return dup_done(fd, r);
}

static int do_fcntl(int fd, int cmd, void *arg)
{
	struct gl_sock *s;
	int r;

	if (!OFFLOADED(fd))
		return gl_real.fcntl(fd, cmd, arg);
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		return dup_done(fd, gl_real.fcntl(fd, cmd, arg));
	case F_SETFL:
		r = gl_real.fcntl(fd, cmd, arg);
		if (r == 0) {
			s = lock_sock(fd);
			if (s) {
				s->nonblock = ((long)arg & O_NONBLOCK) != 0;
				gl_rt_unlock();
			}
		}
		return r;
	case F_GETFL:
		r = gl_real.fcntl(fd, cmd, arg);
		return r < 0 ? r : (r & ~O_LARGEFILE);
	case F_GETFD:
	case F_SETFD:
		return gl_real.fcntl(fd, cmd, arg);
	default:
		errno = EINVAL;	/* locks, leases, seals: not on sockets */
		return -1;
	}
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	gl_real_init();
	return do_fcntl(fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	gl_real_init();
	return do_fcntl(fd, cmd, arg);
}

int ioctl(int fd, unsigned long req, ...)
{
	struct gl_sock *s;
	va_list ap;
	void *arg;
	long r = 0;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	gl_real_init();
	s = lock_sock(fd);
	if (!s)
		return gl_real.ioctl(fd, req, arg);
	switch (req) {
	case FIONBIO: {
		int on, fl;

		r = gl_user_read(&on, arg, sizeof(on));
		if (r)
			break;
		s->nonblock = on != 0;
		fl = gl_real.fcntl(fd, F_GETFL);
		if (fl >= 0)
			gl_real.fcntl(fd, F_SETFL, s->nonblock ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
		break;
	}
	case FIONREAD: {
		int n;

		if (s->listening) {
			r = -EINVAL;
			break;
		}
		gl_chan_pump(&gl_rt);
		n = s->rx_bytes > 0x7fffffff ? 0x7fffffff : (int)s->rx_bytes;
		r = gl_user_write(arg, &n, sizeof(n));
		break;
	}
	default:
		r = -ENOTTY;
	}
	gl_rt_unlock();
	return (int)ret_errno(r);
}

int setsockopt(int fd, int level, int name, const void *v, socklen_t l)
{
	struct gl_sock *s = lock_sock(fd);
	long r;

	if (!s)
		return gl_real.setsockopt(fd, level, name, v, l);
	if ((int)l < 0)
		r = -EINVAL;
	else
		r = gl_ctl_setsockopt(&gl_rt, s, level, name, v, l);
	gl_rt_unlock();
	return (int)ret_errno(r);
}

int getsockopt(int fd, int level, int name, void *v, socklen_t *l)
{
	struct gl_sock *s = lock_sock(fd);
	uint8_t val[SRPC_DATA_MAX];
	socklen_t kl;
	int len;
	long r;

	if (!s)
		return gl_real.getsockopt(fd, level, name, v, l);
	r = gl_user_read(&len, l, sizeof(len));
	if (!r && len < 0)
		r = -EINVAL;
	if (!r) {
		/* no option is longer: the kernel too gives min(len, its size) */
		kl = (socklen_t)len < sizeof(val) ? (socklen_t)len : sizeof(val);
		r = gl_ctl_getsockopt(&gl_rt, s, level, name, val, &kl);
	}
	gl_rt_unlock();
	if (!r)
		r = gl_user_write(v, val, kl);
	if (!r)
		r = gl_user_write(l, &kl, sizeof(kl));
	return (int)ret_errno(r);
}

static int getname(int fd, bool peer, struct sockaddr *a, socklen_t *l)
{
	struct gl_sock *s = lock_sock(fd);
	struct sockaddr_storage ss;
	socklen_t sl;
	long r;

	if (!s)
		return (peer ? gl_real.getpeername : gl_real.getsockname)(fd, a, l);
	r = gl_ctl_getname(&gl_rt, s, peer, &ss, &sl);
	gl_rt_unlock();
	if (!r)
		r = gl_user_addr_out(&ss, sl, a, l);
	return (int)ret_errno(r);
}

int getsockname(int fd, struct sockaddr *a, socklen_t *l)
{
	return getname(fd, false, a, l);
}

int getpeername(int fd, struct sockaddr *a, socklen_t *l)
{
	return getname(fd, true, a, l);
}

/*
 * Name resolution: libc's resolver would use UDP sockets behind our back
 * (gl_resolv.c), so with the runtime configured the runtime resolves.
 */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		struct addrinfo **res)
{
	gl_real_init();
	if (!gl_rt.configured)
		return gl_real.getaddrinfo(node, service, hints, res);
	return gl_resolv_getaddrinfo(node, service, hints, res);
}

struct hostent *gethostbyname2(const char *name, int family)
{
	gl_real_init();
	if (!gl_rt.configured)
		return gl_real.gethostbyname2(name, family);
	return gl_resolv_gethostbyname2(name, family);
}

struct hostent *gethostbyname(const char *name)
{
	gl_real_init();
	if (!gl_rt.configured)
		return gl_real.gethostbyname(name);
	return gl_resolv_gethostbyname2(name, AF_INET);
}

int gethostbyname2_r(const char *name, int family, struct hostent *he, char *buf, size_t buflen,
		     struct hostent **result, int *h_errnop)
{
	gl_real_init();
	if (!gl_rt.configured)
		return gl_real.gethostbyname2_r(name, family, he, buf, buflen, result, h_errnop);
	return gl_resolv_gethostbyname2_r(name, family, he, buf, buflen, result, h_errnop);
}

int gethostbyname_r(const char *name, struct hostent *he, char *buf, size_t buflen,
		    struct hostent **result, int *h_errnop)
{
	gl_real_init();
	if (!gl_rt.configured)
		return gl_real.gethostbyname_r(name, he, buf, buflen, result, h_errnop);
	return gl_resolv_gethostbyname2_r(name, AF_INET, he, buf, buflen, result, h_errnop);
}
