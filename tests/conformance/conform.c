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
 * The checks are in conform_stream.c, conform_sockets.c and
 * conform_errors.c (conform.h).
 *
 * Peer ports: 7001 echo, 7002 reset after accept, 7003 "hello" then
 * shutdown(SHUT_WR), 7004 control ("CONNECT port": connect back, send
 * "ping", expect "pong"), 7005 sink (counts bytes to EOF, replies the
 * count); 7009 is closed (ECONNREFUSED).  UDP 7001 echoes each datagram.
 */

#include "conform.h"

struct in_addr peer_ip;
int failures;

void line(const char *name, long r, int err)
{
	printf("%-34s ret=%ld errno=%s\n", name, r, r < 0 ? strerrorname_np(err) : "-");
	fflush(stdout);
}

struct sockaddr_in peer(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = peer_ip };

	return a;
}

int connect_to(int port)
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
short wait_ev(int fd, short events, int ms)
{
	struct pollfd p = { fd, events, 0 };

	return poll(&p, 1, ms) > 0 ? p.revents : 0;
}

const char *bits(short r)
{
	static char b[64];

	snprintf(b, sizeof(b), "%s%s%s%s%s", r & POLLIN ? "IN " : "", r & POLLOUT ? "OUT " : "",
		 r & POLLERR ? "ERR " : "", r & POLLHUP ? "HUP " : "", r & POLLRDHUP ? "RDHUP" : "");
	return b;
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
	t_errors();
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
