// SPDX-License-Identifier: MIT
/*
 * Conformance of the guest runtime with the kernel's sockets.
 *
 *   conform peer             run the peer servers (client namespace)
 *   conform guest PEER_IP    run every check against the peer, print one
 *                            line per check: name, result, errno name
 *
 * The integration test runs "guest" twice, once on plain kernel sockets
 * and once under tochain-run, and requires identical output.  Lines never
 * contain addresses, ports or fd numbers (which differ between runs),
 * only what a program may rely on.
 *
 * Peer ports: 7001 echo, 7002 reset after accept, 7003 "hello" then
 * shutdown(SHUT_WR), 7004 control ("CONNECT port": connect back, send
 * "ping", expect "pong"), 7005 sink (counts bytes to EOF, replies the
 * count); 7009 is closed (ECONNREFUSED).  UDP 7001 echoes each datagram.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <linux/close_range.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct in_addr peer_ip;
static int failures;

static void line(const char *name, long r, int err)
{
	printf("%-34s ret=%ld errno=%s\n", name, r, r < 0 ? strerrorname_np(err) : "-");
	fflush(stdout);
}

#define CHECK(name, expr) do { errno = 0; long r_ = (long)(expr); line(name, r_, errno); } while (0)
#define SHOW(name, val) do { printf("%-34s %s\n", name, (val)); fflush(stdout); } while (0)

static struct sockaddr_in peer(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = peer_ip };

	return a;
}

static int connect_to(int port)
{
	struct sockaddr_in a = peer(port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect_to");
		failures++;
	}
	return fd;
}

/* Wait until @fd has @events (bounded); the revents seen. */
static short wait_ev(int fd, short events, int ms)
{
	struct pollfd p = { fd, events, 0 };

	return poll(&p, 1, ms) > 0 ? p.revents : 0;
}

static const char *bits(short r)
{
	static char b[64];

	snprintf(b, sizeof(b), "%s%s%s%s%s", r & POLLIN ? "IN " : "", r & POLLOUT ? "OUT " : "",
		 r & POLLERR ? "ERR " : "", r & POLLHUP ? "HUP " : "", r & POLLRDHUP ? "RDHUP" : "");
	return b;
}

static int sigpipes;
static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

/* ---- checks ---- */

static void t_basic(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), v;
	socklen_t l = sizeof(v);
	struct sockaddr_in a;
	char buf[64];

	CHECK("socket", fd >= 0 ? 0 : -1);
	CHECK("getsockopt SO_TYPE", (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l), v));
	CHECK("getsockopt SO_ERROR", (getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &l), v));
	CHECK("getsockopt SO_DOMAIN", (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l), v));
	SHOW("poll fresh socket", bits(wait_ev(fd, POLLIN | POLLOUT, 0)));
	l = sizeof(a);
	CHECK("getpeername unconnected", getpeername(fd, (struct sockaddr *)&a, &l));
	CHECK("recv unconnected", recv(fd, buf, 1, 0));
	signal(SIGPIPE, on_sigpipe);
	sigpipes = 0;
	CHECK("send unconnected", send(fd, "x", 1, 0));
	CHECK("sigpipe count", sigpipes);
	CHECK("shutdown unconnected", shutdown(fd, SHUT_WR));
	CHECK("accept not listening", accept(fd, NULL, NULL));
	CHECK("setsockopt unknown", setsockopt(fd, SOL_SOCKET, 9999, &v, sizeof(v)));
	v = 1;
	CHECK("setsockopt short optlen", setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, 2));
	CHECK("setsockopt SO_REUSEADDR", setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v)));
	CHECK("setsockopt SO_KEEPALIVE", setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, sizeof(v)));
	CHECK("setsockopt TCP_NODELAY", setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)));
	l = sizeof(v);
	v = 0;
	CHECK("getsockopt TCP_NODELAY", (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l), v));
	v = 65536;
	CHECK("setsockopt SO_RCVBUF", setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)));
	CHECK("getsockopt SO_RCVBUF", (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &l), v));
	v = 65536;
	CHECK("setsockopt SO_SNDBUF", setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	{
		struct linger lg = { 1, 5 };
		socklen_t ll = sizeof(lg);

		CHECK("setsockopt SO_LINGER", setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
		memset(&lg, 0, sizeof(lg));
		CHECK("getsockopt SO_LINGER", (getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &ll),
					       lg.l_onoff * 100 + lg.l_linger));
	}
	CHECK("shutdown bad how", shutdown(fd, 7));
	CHECK("close", close(fd));

	fd = socket(AF_INET6, SOCK_STREAM, 0);
	{
		struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
		socklen_t l6 = sizeof(a6);

		CHECK("socket AF_INET6", fd >= 0 ? 0 : -1);
		CHECK("bind AF_INET6 any", bind(fd, (struct sockaddr *)&a6, sizeof(a6)));
		CHECK("getsockname AF_INET6", (getsockname(fd, (struct sockaddr *)&a6, &l6),
					       a6.sin6_family * 1000 + (a6.sin6_port != 0) * 1 + (int)l6 * 10));
		CHECK("bind short addrlen", bind(fd, (struct sockaddr *)&a6, 8));
		close(fd);
	}
}

static void t_connect(void)
{
	struct sockaddr_in a = peer(7009), b;
	socklen_t l = sizeof(b);
	int fd = socket(AF_INET, SOCK_STREAM, 0), v = 0;

	CHECK("connect refused", connect(fd, (struct sockaddr *)&a, sizeof(a)));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	CHECK("connect nonblock refused", connect(fd, (struct sockaddr *)&a, sizeof(a)));
	SHOW("poll after refused", bits(wait_ev(fd, POLLOUT, 3000)));
	l = sizeof(v);
	CHECK("SO_ERROR after refused", (getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &l), v));
	CHECK("SO_ERROR cleared", (getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &l), v));
	close(fd);

	a = peer(7001);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	CHECK("connect nonblock", connect(fd, (struct sockaddr *)&a, sizeof(a)));
	SHOW("poll after connect", bits(wait_ev(fd, POLLOUT, 3000)));
	CHECK("SO_ERROR after connect", (getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &l), v));
	CHECK("connect again", connect(fd, (struct sockaddr *)&a, sizeof(a)));
	close(fd);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK("connect blocking", connect(fd, (struct sockaddr *)&a, sizeof(a)));
	l = sizeof(b);
	CHECK("getpeername", (getpeername(fd, (struct sockaddr *)&b, &l),
			      ntohs(b.sin_port) + (b.sin_addr.s_addr == peer_ip.s_addr) * 100000));
	l = sizeof(b);
	CHECK("getsockname", (getsockname(fd, (struct sockaddr *)&b, &l),
			      b.sin_family * 10 + (b.sin_port != 0)));
	CHECK("listen on connected", listen(fd, 5));
	CHECK("bind on connected", bind(fd, (struct sockaddr *)&a, sizeof(a)));
	close(fd);
}

static void t_data(void)
{
	int fd = connect_to(7001), v;
	char buf[256] = { 0 };
	struct iovec iov[3];
	struct msghdr mh = { .msg_iov = iov };

	CHECK("send", send(fd, "abc", 3, 0));
	wait_ev(fd, POLLIN, 3000);
	CHECK("recv MSG_PEEK", recv(fd, buf, sizeof(buf), MSG_PEEK));
	SHOW("peeked", buf);
	CHECK("recv 2", recv(fd, buf, 2, 0));
	CHECK("recv rest", recv(fd, buf, sizeof(buf), 0));
	CHECK("recv DONTWAIT empty", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	iov[0] = (struct iovec){ "0123", 4 };
	iov[1] = (struct iovec){ "", 0 };
	iov[2] = (struct iovec){ "456789", 6 };
	mh.msg_iovlen = 3;
	CHECK("sendmsg iovecs", sendmsg(fd, &mh, 0));
	memset(buf, 0, sizeof(buf));
	iov[0] = (struct iovec){ buf, 3 };
	iov[1] = (struct iovec){ buf + 3, 7 };
	mh.msg_iovlen = 2;
	CHECK("recvmsg WAITALL", recvmsg(fd, &mh, MSG_WAITALL));
	SHOW("recvmsg data", buf);
	CHECK("write", write(fd, "hello", 5));
	memset(buf, 0, sizeof(buf));
	CHECK("read WAITALL-ish", (wait_ev(fd, POLLIN, 3000), usleep(100000), read(fd, buf, 5)));
	iov[0] = (struct iovec){ "ab", 2 };
	iov[1] = (struct iovec){ "cd", 2 };
	CHECK("writev", writev(fd, iov, 2));
	memset(buf, 0, sizeof(buf));
	iov[0] = (struct iovec){ buf, 1 };
	iov[1] = (struct iovec){ buf + 1, 10 };
	CHECK("readv", (wait_ev(fd, POLLIN, 3000), usleep(100000), readv(fd, iov, 2)));
	SHOW("readv data", buf);
	CHECK("sendto (addr ignored)", sendto(fd, "xyz", 3, 0, NULL, 0));
	usleep(100000);
	v = -1;
	CHECK("FIONREAD", (ioctl(fd, FIONREAD, &v), v));
	{
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);

		CHECK("recvfrom", recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl));
		CHECK("recvfrom addrlen", fl);
	}
	CHECK("F_GETFL nonblock", fcntl(fd, F_GETFL) & O_NONBLOCK);
	v = 1;
	CHECK("FIONBIO on", ioctl(fd, FIONBIO, &v));
	CHECK("F_GETFL after FIONBIO", !!(fcntl(fd, F_GETFL) & O_NONBLOCK));
	CHECK("recv nonblock empty", recv(fd, buf, 1, 0));
	CHECK("F_SETFL blocking", fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK));
	CHECK("F_GETFD", fcntl(fd, F_GETFD));
	CHECK("F_SETFD CLOEXEC", fcntl(fd, F_SETFD, FD_CLOEXEC));
	CHECK("F_GETFD after", fcntl(fd, F_GETFD));
	CHECK("ioctl unknown", ioctl(fd, TIOCGWINSZ, buf));

	/* dups share the socket */
	int d = dup(fd);

	CHECK("dup", d >= 0 ? 0 : -1);
	CHECK("send via dup", send(d, "q", 1, 0));
	CHECK("close original", close(fd));
	CHECK("recv via dup", (wait_ev(d, POLLIN, 3000), recv(d, buf, 1, 0)));
	CHECK("dup2", dup2(d, 100) == 100 ? 0 : -1);
	CHECK("F_DUPFD", fcntl(d, F_DUPFD, 200) >= 200 ? 0 : -1);
	CHECK("dup3 CLOEXEC", dup3(d, 101, O_CLOEXEC) == 101 ? 0 : -1);
	CHECK("F_GETFD dup3", fcntl(101, F_GETFD));
	CHECK("dup3 same fd", dup3(d, d, 0));
	CHECK("send via dup2", send(100, "r", 1, 0));
	CHECK("recv via dup3", (wait_ev(101, POLLIN, 3000), recv(101, buf, 1, 0)));
	close(100);
	close(101);
	for (int i = 200; i < 210; i++)
		close(i);

	/* shutdown: the echo peer sees EOF and closes */
	CHECK("shutdown SHUT_WR", shutdown(d, SHUT_WR));
	CHECK("recv EOF", (wait_ev(d, POLLIN, 3000), recv(d, buf, 1, 0)));
	SHOW("poll after both shut", bits(wait_ev(d, POLLIN | POLLOUT | POLLRDHUP, 0)));
	sigpipes = 0;
	CHECK("send after SHUT_WR NOSIGNAL", send(d, "x", 1, MSG_NOSIGNAL));
	CHECK("sigpipe after NOSIGNAL", sigpipes);
	CHECK("send after SHUT_WR", send(d, "x", 1, 0));
	CHECK("sigpipe count", sigpipes);
	CHECK("close dup", close(d));
}

static void t_bulk(void)
{
	/* 4 MiB through the echo peer with non-blocking I/O and poll. */
	const size_t total = 4u << 20;
	int fd = connect_to(7001);
	uint8_t *out = malloc(total), *in = malloc(total);
	size_t sent = 0, got = 0;
	bool ok = true;

	for (size_t i = 0; i < total; i++)
		out[i] = (uint8_t)(i * 7 + (i >> 13));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (got < total && ok) {
		struct pollfd p = { fd, POLLIN | (sent < total ? POLLOUT : 0), 0 };

		if (poll(&p, 1, 5000) <= 0) {
			ok = false;
			break;
		}
		if ((p.revents & POLLOUT) && sent < total) {
			ssize_t n = send(fd, out + sent, total - sent > 100000 ? 100000 : total - sent, 0);

			if (n > 0)
				sent += (size_t)n;
			else if (errno != EAGAIN)
				ok = false;
		}
		if (p.revents & POLLIN) {
			ssize_t n = recv(fd, in + got, total - got, 0);

			if (n > 0)
				got += (size_t)n;
			else if (n == 0 || errno != EAGAIN)
				ok = false;
		}
	}
	CHECK("bulk 4MiB echo", ok && got == total && !memcmp(in, out, total) ? 0 : -1);
	/* blocking MSG_WAITALL of 100000 bytes */
	fcntl(fd, F_SETFL, 0);
	CHECK("send 100000", send(fd, out, 100000, 0));
	CHECK("recv WAITALL 100000", recv(fd, in, 100000, MSG_WAITALL));
	CHECK("WAITALL data", memcmp(in, out, 100000) ? -1 : 0);
	close(fd);

	/*
	 * A peer that never reads: fill the path until EAGAIN, then other
	 * sockets of the process must still work.
	 */
	{
		int stuck = connect_to(7006), e = connect_to(7001);
		long pushed = 0;
		char b[4] = { 0 };

		fcntl(stuck, F_SETFL, O_NONBLOCK);
		for (int i = 0; i < 100000; i++) {
			ssize_t n = send(stuck, out, 65536, 0);

			if (n < 0)
				break;
			pushed += n;
		}
		CHECK("stalled peer gives EAGAIN", (errno == EAGAIN && pushed > 0) ? 0 : -1);
		SHOW("stalled poll", bits(wait_ev(stuck, POLLOUT, 200)));
		CHECK("other socket send", send(e, "ok", 2, 0));
		CHECK("other socket recv", (wait_ev(e, POLLIN, 3000), usleep(50000), recv(e, b, 2, 0)));
		CHECK("new socket while stalled", ({ int x = connect_to(7001); int r = x >= 0 ? 0 : -1; close(x); r; }));
		close(e);
		close(stuck);
	}
	free(out);
	free(in);
}

static void t_peer_close(void)
{
	char buf[16] = { 0 };
	int fd = connect_to(7002);

	CHECK("recv after peer RST", (wait_ev(fd, POLLIN, 3000), recv(fd, buf, 1, 0)));
	CHECK("recv after RST again", recv(fd, buf, 1, 0));
	close(fd);

	fd = connect_to(7003);
	CHECK("recv hello", (wait_ev(fd, POLLIN, 3000), usleep(100000), recv(fd, buf, sizeof(buf), 0)));
	CHECK("recv EOF after peer shutdown", recv(fd, buf, sizeof(buf), 0));
	SHOW("poll peer shut", bits(wait_ev(fd, POLLIN | POLLOUT | POLLRDHUP, 0)));
	CHECK("send after peer shutdown", send(fd, "x", 1, 0));
	close(fd);
}

static void t_sendfile(void)
{
	char path[] = "/tmp/conform.XXXXXX", buf[64] = { 0 };
	int f = mkstemp(path), fd = connect_to(7005);
	off_t off = 1000;
	static char data[100000];

	memset(data, 'z', sizeof(data));
	CHECK("sendfile setup", write(f, data, sizeof(data)));
	unlink(path);
	CHECK("sendfile with offset", sendfile(fd, f, &off, 50000));
	CHECK("sendfile offset moved", (long)off);
	lseek(f, 0, SEEK_SET);
	CHECK("sendfile from position", sendfile(fd, f, NULL, sizeof(data)));
	CHECK("file position", (long)lseek(f, 0, SEEK_CUR));
	shutdown(fd, SHUT_WR);
	wait_ev(fd, POLLIN, 5000);
	usleep(50000);
	CHECK("sink reply", recv(fd, buf, sizeof(buf) - 1, 0));
	SHOW("sink count", buf);
	close(fd);
	close(f);
}

/* Ask the peer to connect to our @port and do a ping/pong. */
static int ctrl_connect_back(int port)
{
	char cmd[32];
	int c = connect_to(7004);

	snprintf(cmd, sizeof(cmd), "CONNECT %d\n", port);
	if (send(c, cmd, strlen(cmd), 0) < 0)
		failures++;
	return c;
}

static void serve_one(int l, const char *tag)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	char buf[8] = { 0 }, name[64];
	int fd;

	snprintf(name, sizeof(name), "%s poll listener", tag);
	SHOW(name, bits(wait_ev(l, POLLIN, 5000)));
	fd = accept4(l, (struct sockaddr *)&a, &al, SOCK_NONBLOCK | SOCK_CLOEXEC);
	snprintf(name, sizeof(name), "%s accept4", tag);
	CHECK(name, fd >= 0 ? 0 : -1);
	snprintf(name, sizeof(name), "%s accept addr", tag);
	CHECK(name, a.sin_family * 10 + (a.sin_addr.s_addr == peer_ip.s_addr) + (al == sizeof(a)) * 100);
	snprintf(name, sizeof(name), "%s accepted flags", tag);
	CHECK(name, fcntl(fd, F_GETFD) * 10 + !!(fcntl(fd, F_GETFL) & O_NONBLOCK));
	wait_ev(fd, POLLIN, 3000);
	usleep(50000);
	snprintf(name, sizeof(name), "%s recv ping", tag);
	CHECK(name, recv(fd, buf, sizeof(buf), 0));
	snprintf(name, sizeof(name), "%s send pong", tag);
	CHECK(name, send(fd, "pong", 4, 0));
	wait_ev(fd, POLLIN, 3000);
	snprintf(name, sizeof(name), "%s recv EOF", tag);
	CHECK(name, recv(fd, buf, sizeof(buf), 0));
	close(fd);
}

static void t_listen(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(7100) };
	int l = socket(AF_INET, SOCK_STREAM, 0), l2 = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	int c;
	char buf[8];

	CHECK("bind 7100", bind(l, (struct sockaddr *)&a, sizeof(a)));
	CHECK("listen", listen(l, 16));
	CHECK("bind in use", bind(l2, (struct sockaddr *)&a, sizeof(a)));
	setsockopt(l2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK("bind in use REUSEADDR", bind(l2, (struct sockaddr *)&a, sizeof(a)));
	close(l2);
	CHECK("SO_ACCEPTCONN", ({ int v = 0; socklen_t vl = sizeof(v);
				  getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &vl); v; }));
	fcntl(l, F_SETFL, O_NONBLOCK);
	CHECK("accept nonblock empty", accept(l, NULL, NULL));
	SHOW("poll idle listener", bits(wait_ev(l, POLLIN, 0)));
	c = ctrl_connect_back(7100);
	serve_one(l, "nb");
	CHECK("ctrl done", (wait_ev(c, POLLIN, 3000), recv(c, buf, sizeof(buf), 0)));
	close(c);

	/* blocking accept, woken by the connection */
	fcntl(l, F_SETFL, 0);
	c = ctrl_connect_back(7100);
	{
		int fd = accept(l, NULL, NULL);

		CHECK("blocking accept", fd >= 0 ? 0 : -1);
		close(fd);
	}
	wait_ev(c, POLLIN, 3000);
	close(c);

	/* select */
	{
		fd_set r;
		struct timeval tv = { 0, 0 };

		FD_ZERO(&r);
		FD_SET(l, &r);
		CHECK("select idle", select(l + 1, &r, NULL, NULL, &tv));
		c = ctrl_connect_back(7100);
		FD_ZERO(&r);
		FD_SET(l, &r);
		tv.tv_sec = 5;
		CHECK("select ready", select(l + 1, &r, NULL, NULL, &tv));
		CHECK("select set", FD_ISSET(l, &r));
		serve_one(l, "sel");
		close(c);
	}

	/* pselect and ppoll, with a signal mask */
	{
		fd_set r;
		struct timespec ts = { 0, 0 };
		struct pollfd p = { l, POLLIN, 0 };
		sigset_t mask;

		sigemptyset(&mask);
		sigaddset(&mask, SIGUSR1);
		FD_ZERO(&r);
		FD_SET(l, &r);
		CHECK("pselect idle", pselect(l + 1, &r, NULL, NULL, &ts, &mask));
		CHECK("ppoll idle", ppoll(&p, 1, &ts, &mask));
		c = ctrl_connect_back(7100);
		ts.tv_sec = 5;
		CHECK("ppoll ready", ppoll(&p, 1, &ts, &mask));
		CHECK("ppoll revents", p.revents);
		FD_ZERO(&r);
		FD_SET(l, &r);
		CHECK("pselect ready", pselect(l + 1, &r, NULL, NULL, &ts, &mask));
		serve_one(l, "ppoll");
		close(c);
	}
	{
		int r2 = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a2 = { .sin_family = AF_INET, .sin_port = htons(7101) };

		CHECK("SO_REUSEPORT", setsockopt(r2, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)));
		CHECK("bind 7101 reuseport", bind(r2, (struct sockaddr *)&a2, sizeof(a2)));
		close(r2);
	}

	/* fork: a child accepts on the inherited listener (as nginx workers) */
	{
		pid_t pid;
		int st = -1;

		c = ctrl_connect_back(7100);
		pid = fork();
		if (pid == 0) {
			int fd = accept(l, NULL, NULL);
			char b[8];

			if (fd < 0)
				_exit(2);
			wait_ev(fd, POLLIN, 3000);
			usleep(50000);
			if (recv(fd, b, sizeof(b), 0) != 4 || send(fd, "pong", 4, 0) != 4)
				_exit(3);
			wait_ev(fd, POLLIN, 3000);
			_exit(recv(fd, b, sizeof(b), 0) == 0 ? 0 : 4);
		}
		waitpid(pid, &st, 0);
		CHECK("fork child accept", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		close(c);
		/* the parent still accepts */
		c = ctrl_connect_back(7100);
		serve_one(l, "after-fork");
		close(c);
	}
	close(l);
}

static void t_epoll(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), fd = connect_to(7001), p[2];
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 }, out[4];
	char buf[16];

	if (pipe(p))
		failures++;
	CHECK("epoll_ctl ADD", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	CHECK("epoll_ctl ADD again", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	CHECK("epoll_ctl MOD missing", epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &ev));
	ev.data.u64 = 7;
	CHECK("epoll_ctl ADD pipe", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	CHECK("epoll_wait idle", epoll_wait(ep, out, 4, 50));
	send(fd, "ab", 2, 0);
	CHECK("epoll_wait LT", epoll_wait(ep, out, 4, 3000));
	CHECK("epoll data", (long)out[0].data.u64 * 100 + out[0].events);
	usleep(50000);
	CHECK("epoll_wait LT again", epoll_wait(ep, out, 4, 100));
	ev.events = EPOLLIN | EPOLLET;
	ev.data.u64 = 43;
	CHECK("epoll_ctl MOD ET", epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
	CHECK("epoll_wait ET first", epoll_wait(ep, out, 4, 100));
	CHECK("epoll_wait ET no change", epoll_wait(ep, out, 4, 100));
	send(fd, "c", 1, 0);
	CHECK("epoll_wait ET new data", epoll_wait(ep, out, 4, 3000));
	usleep(50000);
	CHECK("drain", recv(fd, buf, sizeof(buf), 0));
	CHECK("pipe write", write(p[1], "z", 1));
	CHECK("epoll_wait pipe", epoll_wait(ep, out, 4, 3000));
	CHECK("pipe event data", (long)out[0].data.u64);
	CHECK("pipe read", read(p[0], buf, 1));
	ev.events = EPOLLOUT | EPOLLONESHOT;
	ev.data.u64 = 44;
	CHECK("epoll_ctl MOD ONESHOT", epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
	CHECK("epoll_wait ONESHOT", epoll_wait(ep, out, 4, 3000));
	CHECK("epoll_wait ONESHOT off", epoll_wait(ep, out, 4, 50));
	CHECK("epoll_ctl DEL", epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
	CHECK("epoll_ctl DEL again", epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
	CHECK("epoll_pwait idle", epoll_pwait(ep, out, 4, 20, NULL));
	close(fd);
	close(p[0]);
	close(p[1]);
	close(ep);
}

/* The socket survives exec (inetd style): the new image uses the inherited fd. */
static int exec_child(int fd)
{
	char buf[8];
	struct sockaddr_in a;
	socklen_t l = sizeof(a);

	if (getpeername(fd, (struct sockaddr *)&a, &l) || ntohs(a.sin_port) != 7001)
		return 2;
	if (send(fd, "exec", 4, 0) != 4)
		return 3;
	if (wait_ev(fd, POLLIN, 3000) == 0)
		return 5;
	usleep(50000);
	if (recv(fd, buf, sizeof(buf), 0) != 4 || memcmp(buf, "exec", 4))
		return 6;
	return 0;
}

static void t_exec(void)
{
	int fd = connect_to(7001), st = -1;
	char arg[16];
	pid_t pid;

	snprintf(arg, sizeof(arg), "%d", fd);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "conform", "exec-child", arg, (char *)NULL);
		_exit(9);
	}
	waitpid(pid, &st, 0);
	CHECK("exec child uses inherited socket", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	/* the parent's copy still works */
	CHECK("parent after exec child", send(fd, "p", 1, 0));
	CHECK("parent recv", (wait_ev(fd, POLLIN, 3000), recv(fd, arg, 1, 0)));
	close(fd);
}

static void t_passthrough(void)
{
	int sv[2], p[2];
	char buf[8] = { 0 };

	CHECK("socketpair AF_UNIX", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK("unix send", send(sv[0], "u", 1, 0));
	CHECK("unix recv", recv(sv[1], buf, 1, 0));
	CHECK("pipe", pipe(p));
	CHECK("pipe write", write(p[1], "p", 1));
	CHECK("pipe read", read(p[0], buf, 1));
	CHECK("udp socket", ({ int u = socket(AF_INET, SOCK_DGRAM, 0); int r = u >= 0 ? 0 : -1; close(u); r; }));
	CHECK("close bad fd", close(-5));
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

/* UDP datagrams against the peer's echo (udp/7001). */
static void t_udp(void)
{
	struct sockaddr_in a = peer(7001), from;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	socklen_t fl = sizeof(from), l = sizeof(int);
	char buf[64] = { 0 }, big[100];
	struct iovec iov = { buf, 4 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	static char huge[70000];
	int fd = socket(AF_INET, SOCK_DGRAM, 0), v = 0;

	CHECK("udp dgram socket", fd >= 0 ? 0 : -1);
	CHECK("udp SO_TYPE", (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l), v));
	CHECK("udp SO_PROTOCOL", (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &l), v));
	CHECK("udp send unconnected", send(fd, "x", 1, 0));
	CHECK("udp recv DONTWAIT empty", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	CHECK("udp poll before", wait_ev(fd, POLLIN | POLLOUT, 0));
	CHECK("udp sendto", sendto(fd, "abc", 3, 0, (struct sockaddr *)&a, sizeof(a)));
	CHECK("udp sendto short addrlen", sendto(fd, "abc", 3, 0, (struct sockaddr *)&a, 8));
	CHECK("udp sendto AF_INET6 addr", sendto(fd, "abc", 3, 0, (struct sockaddr *)&a6,
						 sizeof(a6)));
	CHECK("udp sendto too big", sendto(fd, huge, sizeof(huge), 0, (struct sockaddr *)&a,
					   sizeof(a)));
	CHECK("udp poll IN", wait_ev(fd, POLLIN, 3000));
	CHECK("udp recvfrom", recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl));
	SHOW("udp recvfrom source", fl == sizeof(from) && from.sin_port == a.sin_port &&
		 from.sin_addr.s_addr == a.sin_addr.s_addr ? "peer" : "other");
	CHECK("udp getsockname port set", (fl = sizeof(from),
		getsockname(fd, (struct sockaddr *)&from, &fl), from.sin_port != 0));
	memset(big, 'b', sizeof(big));
	sendto(fd, big, sizeof(big), 0, (struct sockaddr *)&a, sizeof(a));
	wait_ev(fd, POLLIN, 3000);
	CHECK("udp recv MSG_TRUNC|PEEK", recv(fd, buf, 4, MSG_TRUNC | MSG_PEEK));
	CHECK("udp recvmsg truncated", recvmsg(fd, &mh, 0));
	CHECK("udp recvmsg MSG_TRUNC flag", (mh.msg_flags & MSG_TRUNC) != 0);
	CHECK("udp rest discarded", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	sendto(fd, "", 0, 0, (struct sockaddr *)&a, sizeof(a));
	wait_ev(fd, POLLIN, 3000);
	CHECK("udp empty datagram", recv(fd, buf, sizeof(buf), 0));
	CHECK("udp listen", listen(fd, 5));
	CHECK("udp accept", accept(fd, NULL, NULL));
	CHECK("udp getpeername unconnected", (fl = sizeof(from),
		getpeername(fd, (struct sockaddr *)&from, &fl)));
	CHECK("udp connect", connect(fd, (struct sockaddr *)&a, sizeof(a)));
	CHECK("udp getpeername", (fl = sizeof(from),
		getpeername(fd, (struct sockaddr *)&from, &fl), from.sin_port == a.sin_port));
	CHECK("udp send connected", send(fd, "hello", 5, 0));
	CHECK("udp read connected", (wait_ev(fd, POLLIN, 3000), read(fd, buf, sizeof(buf))));
	CHECK("udp write connected", write(fd, "hi", 2));
	CHECK("udp recv connected", (wait_ev(fd, POLLIN, 3000), recv(fd, buf, sizeof(buf), 0)));
	CHECK("udp close", close(fd));

	/* ICMP port unreachable: reported once to the next call of a connected socket */
	a = peer(7009);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK("udp connect closed port", connect(fd, (struct sockaddr *)&a, sizeof(a)));
	CHECK("udp send closed port", send(fd, "x", 1, 0));
	CHECK("udp poll ERR", (wait_ev(fd, POLLIN, 3000) & POLLERR) != 0);
	CHECK("udp recv refused", recv(fd, buf, sizeof(buf), 0));
	CHECK("udp recv after error", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	CHECK("udp send again", send(fd, "x", 1, 0));
	CHECK("udp SO_ERROR after ICMP", (wait_ev(fd, POLLIN, 3000),
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &l), v));
	CHECK("udp SO_ERROR cleared", (getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &l), v));
	close(fd);
}

/* A signal during a blocking recv: EINTR, or restarted with SA_RESTART. */
static void on_alarm(int sig)
{
	(void)sig;
}

static void t_signals(void)
{
	struct itimerval it = { .it_value = { 0, 100000 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	char buf[8] = { 0 };
	int fd;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	fd = connect_to(7007);
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK("recv interrupted", recv(fd, buf, sizeof(buf), 0));
	CHECK("recv after EINTR", recv(fd, buf, sizeof(buf), 0));
	close(fd);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	fd = connect_to(7007);
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK("recv SA_RESTART", recv(fd, buf, sizeof(buf), 0));
	close(fd);
	signal(SIGALRM, SIG_DFL);
}

/* close_range and closefrom close offloaded fds too (they never call close). */
static void t_close_many(void)
{
	int a = connect_to(7001), b = connect_to(7001);

	CHECK("dup2 to 300", dup2(a, 300) == 300 ? 0 : -1);
	CHECK("close_range 300", close_range(300, 300, 0));
	CHECK("send on range-closed fd", send(300, "x", 1, MSG_NOSIGNAL));
	CHECK("original still works", send(a, "y", 1, MSG_NOSIGNAL));
	CHECK("close_range CLOEXEC", close_range(a, a, CLOSE_RANGE_CLOEXEC));
	CHECK("F_GETFD after CLOSE_RANGE_CLOEXEC", fcntl(a, F_GETFD));
	CHECK("dup2 to 400", dup2(b, 400) == 400 ? 0 : -1);
	closefrom(400);
	CHECK("send after closefrom", send(400, "x", 1, MSG_NOSIGNAL));
	CHECK("below closefrom works", send(b, "z", 1, MSG_NOSIGNAL));
	close(a);
	close(b);
}

static int guest(const char *ip)
{
	if (inet_pton(AF_INET, ip, &peer_ip) != 1)
		return 2;
	t_basic();
	t_connect();
	t_data();
	t_bulk();
	t_peer_close();
	t_sendfile();
	t_listen();
	t_epoll();
	t_exec();
	t_signals();
	t_close_many();
	t_udp();
	t_passthrough();
	printf("failures %d\n", failures);
	return failures ? 1 : 0;
}

/* ---- the peer ---- */

static void peer_conn(int port, int fd, struct sockaddr_in *from)
{
	char buf[65536];
	ssize_t n;

	switch (port) {
	case 7001:
		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
			for (ssize_t off = 0; off < n;) {
				ssize_t w = send(fd, buf + off, (size_t)(n - off), MSG_NOSIGNAL);

				if (w <= 0)
					return;
				off += w;
			}
		return;
	case 7002: {
		struct linger lg = { 1, 0 };

		usleep(100000);
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		return;
	}
	case 7003:
		send(fd, "hello", 5, MSG_NOSIGNAL);
		shutdown(fd, SHUT_WR);
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
		return;
	case 7004: {
		int p = 0, c;
		struct sockaddr_in a = *from;

		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			return;
		buf[n] = 0;
		if (sscanf(buf, "CONNECT %d", &p) != 1)
			return;
		a.sin_port = htons(p);
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&a, sizeof(a)) == 0) {
			send(c, "ping", 4, MSG_NOSIGNAL);
			n = recv(c, buf, 4, MSG_WAITALL);
		}
		close(c);
		send(fd, "done", 4, MSG_NOSIGNAL);
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
		return;
	}
	case 7007:	/* answers late */
		usleep(300000);
		send(fd, "late", 4, MSG_NOSIGNAL);
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
		return;
	case 7006:	/* never reads */
		sleep(10);
		return;
	case 7005: {
		size_t total = 0;

		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
			total += (size_t)n;
		n = snprintf(buf, sizeof(buf), "%zu", total);
		send(fd, buf, (size_t)n, MSG_NOSIGNAL);
		return;
	}
	}
}

static int peer_main(void)
{
	static const int ports[] = { 7001, 7002, 7003, 7004, 7005, 7006, 7007 };
	struct pollfd p[7];

	signal(SIGCHLD, SIG_IGN);
	if (fork() == 0) {	/* udp/7001: echo every datagram */
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(7001) };
		int u = socket(AF_INET, SOCK_DGRAM, 0);
		char buf[2048];

		if (u < 0 || bind(u, (struct sockaddr *)&a, sizeof(a)))
			_exit(1);
		for (;;) {
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(u, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

			if (n >= 0)
				sendto(u, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
		}
	}
	for (int i = 0; i < 7; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(ports[i]) };
		int one = 1;

		p[i].fd = socket(AF_INET, SOCK_STREAM, 0);
		p[i].events = POLLIN;
		setsockopt(p[i].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(p[i].fd, (struct sockaddr *)&a, sizeof(a)) || listen(p[i].fd, 64)) {
			perror("peer bind");
			return 1;
		}
	}
	for (;;) {
		if (poll(p, 7, -1) < 0)
			continue;
		for (int i = 0; i < 7; i++) {
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			int fd;

			if (!(p[i].revents & POLLIN))
				continue;
			fd = accept(p[i].fd, (struct sockaddr *)&from, &fl);
			if (fd < 0)
				continue;
			if (fork() == 0) {
				for (int j = 0; j < 7; j++)
					close(p[j].fd);
				peer_conn(ports[i], fd, &from);
				close(fd);
				_exit(0);
			}
			close(fd);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "peer"))
		return peer_main();
	if (argc == 3 && !strcmp(argv[1], "exec-child"))
		return exec_child(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "guest"))
		return guest(argv[2]);
	fprintf(stderr, "usage: conform peer | conform guest PEER_IP\n");
	return 2;
}
