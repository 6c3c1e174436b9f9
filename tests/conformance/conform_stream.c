// SPDX-License-Identifier: MIT
/* The TCP stream checks of the conformance program (conform.h). */
#include "conform.h"

static int sigpipes;
static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

/* ---- checks ---- */

void t_basic(void)
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

void t_connect(void)
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

void t_data(void)
{
	int fd = connect_to(7001), v;
	char buf[256] = { 0 };
	struct iovec iov[3];
	struct msghdr mh = { .msg_iov = iov };
	socklen_t l = sizeof(v);

	/* the runtime posts these without waiting: a later call still sees them */
	v = 1;
	CHECK("setsockopt TCP_CORK connected", setsockopt(fd, IPPROTO_TCP, TCP_CORK, &v, sizeof(v)));
	v = 0;
	CHECK("getsockopt TCP_CORK connected", (getsockopt(fd, IPPROTO_TCP, TCP_CORK, &v, &l), v));
	CHECK("setsockopt TCP_CORK off", setsockopt(fd, IPPROTO_TCP, TCP_CORK, &v, sizeof(v)));
	v = 1;
	CHECK("setsockopt TCP_NODELAY connected", setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)));
	v = 0;
	l = sizeof(v);
	CHECK("getsockopt TCP_NODELAY connected", (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l), v));
	CHECK("setsockopt TCP_CORK unmapped", setsockopt(fd, IPPROTO_TCP, TCP_CORK, (void *)8, sizeof(v)));
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

void t_bulk(void)
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

void t_peer_close(void)
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

void t_sendfile(void)
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
	CHECK("sendfile at the end of the file", sendfile(fd, f, NULL, 4096));
	off = sizeof(data) - 3000;
	CHECK("sendfile past the end", sendfile(fd, f, &off, 70000));
	CHECK("sendfile past the end: offset", (long)off);
	shutdown(fd, SHUT_WR);
	wait_ev(fd, POLLIN, 5000);
	usleep(50000);
	CHECK("sink reply", recv(fd, buf, sizeof(buf) - 1, 0));
	SHOW("sink count", buf);
	close(fd);
	close(f);
}
