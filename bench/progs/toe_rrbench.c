// SPDX-License-Identifier: MIT
/*
 * Request/response and bulk benchmark over TCP, plain sockets only, so
 * the same binary runs with and without the guest runtime.
 *
 *   toe-rrbench server PORT
 *   toe-rrbench rr   HOST PORT SIZE SECONDS   -> "rr SIZE: N trans/s"
 *   toe-rrbench up   HOST PORT MIB            -> "up: N MB/s"   (client sends)
 *   toe-rrbench down HOST PORT MIB            -> "down: N MB/s" (client receives)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct hdr {
	uint32_t mode;	/* 1 rr, 2 up, 3 down */
	uint32_t size;	/* rr: message size; up/down: MiB */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int full(int fd, void *buf, size_t n, int rd)
{
	size_t off = 0;

	while (off < n) {
		ssize_t k = rd ? recv(fd, (char *)buf + off, n - off, 0)
			       : send(fd, (char *)buf + off, n - off, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		off += (size_t)k;
	}
	return 0;
}

static void serve(int fd)
{
	static char buf[1 << 20];
	struct hdr h;
	uint64_t total = 0;
	ssize_t n;

	if (full(fd, &h, sizeof(h), 1))
		return;
	switch (h.mode) {
	case 1:
		if (h.size > sizeof(buf))
			return;
		while (full(fd, buf, h.size, 1) == 0 && full(fd, buf, h.size, 0) == 0)
			;
		return;
	case 2:
		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
			total += (uint64_t)n;
		full(fd, &total, sizeof(total), 0);
		return;
	case 3:
		for (uint32_t i = 0; i < h.size; i++)
			if (full(fd, buf, sizeof(buf), 0))
				return;
		return;
	}
}

static int dial(const char *host, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1 || fd < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];

	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && !strcmp(argv[1], "server")) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[2])) };
		int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

		signal(SIGCHLD, SIG_IGN);
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 16)) {
			perror("server");
			return 1;
		}
		for (;;) {
			int fd = accept(l, NULL, NULL);

			if (fd < 0)
				continue;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			if (fork() == 0) {
				close(l);
				serve(fd);
				_exit(0);
			}
			close(fd);
		}
	}
	if (argc == 6 && !strcmp(argv[1], "rr")) {
		int fd = dial(argv[2], atoi(argv[3]));
		struct hdr h = { 1, (uint32_t)atoi(argv[4]) };
		double secs = atof(argv[5]), t0, t;
		long n = 0;

		if (h.size == 0 || h.size > sizeof(buf) || full(fd, &h, sizeof(h), 0))
			return 1;
		t0 = now();
		do {
			if (full(fd, buf, h.size, 0) || full(fd, buf, h.size, 1))
				return 1;
			n++;
		} while ((n & 15) || (t = now()) - t0 < secs);
		printf("rr %u: %.0f trans/s\n", h.size, n / (t - t0));
		return 0;
	}
	if (argc == 5 && (!strcmp(argv[1], "up") || !strcmp(argv[1], "down"))) {
		int fd = dial(argv[2], atoi(argv[3]));
		int up = !strcmp(argv[1], "up");
		struct hdr h = { up ? 2 : 3, (uint32_t)atoi(argv[4]) };
		uint64_t total = 0, want = (uint64_t)h.size << 20;
		double t0;
		ssize_t k;

		if (full(fd, &h, sizeof(h), 0))
			return 1;
		t0 = now();
		if (up) {
			for (uint32_t i = 0; i < h.size; i++)
				if (full(fd, buf, sizeof(buf), 0))
					return 1;
			shutdown(fd, SHUT_WR);
			if (full(fd, &total, sizeof(total), 1) || total != want)
				return 1;
		} else {
			while ((k = recv(fd, buf, sizeof(buf), 0)) > 0)
				total += (uint64_t)k;
			if (total != want)
				return 1;
		}
		printf("%s: %.1f MB/s\n", argv[1], total / 1e6 / (now() - t0));
		return 0;
	}
	fprintf(stderr, "usage: see the comment at the top of bench/progs/toe_rrbench.c\n");
	return 2;
}
