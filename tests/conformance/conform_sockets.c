// SPDX-License-Identifier: MIT
/*
 * The listener, epoll, exec, pass-through, UDP, signal and close_range
 * checks of the conformance program (conform.h).
 */
#include "conform.h"

/* Ask the peer to connect to our @port and do a ping/pong. */
int ctrl_connect_back(int port)
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

void t_listen(void)
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

void t_epoll(void)
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
int exec_child(int fd)
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

void t_exec(void)
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

void t_passthrough(void)
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
void t_udp(void)
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

void t_signals(void)
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
void t_close_many(void)
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
