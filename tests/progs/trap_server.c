// SPDX-License-Identifier: MIT
/*
 * A small TCP server for the trap path (tests/integration/121_*,
 * bench/21_*), built by the test itself: with `gcc -static` (libc's
 * socket calls in a statically linked binary) or with -DRAW_SYSCALLS
 * (every socket call made with syscall(__NR_...), the way Go and
 * hand-rolled runtimes do), so that only the trap path can offload it.
 * One connection at a time (fork: the parent accepts the next at once).
 *
 *   trap-server http PORT FILE   answer every request with FILE (HTTP/1.0, close)
 *   trap-server fork PORT FILE   the same from a child per connection, which
 *                                closes its copy of the listener first
 *   trap-server drop PORT FILE   as http, but drops root to nobody (65534)
 *                                once it listens, as daemons do; prints
 *                                "dropped to uid 65534" (tests/integration/715_*)
 *   trap-server rr PORT          toe-rrbench's request/response protocol
 *                                (bench/progs/toe_rrbench.c, mode 1: echo)
 * It prints "listening PORT" on stdout once it listens.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef RAW_SYSCALLS
#define S_SOCKET(d, t, p) syscall(__NR_socket, d, t, p)
#define S_BIND(f, a, l) syscall(__NR_bind, f, a, l)
#define S_LISTEN(f, n) syscall(__NR_listen, f, n)
#define S_ACCEPT4(f, a, l, fl) syscall(__NR_accept4, f, a, l, fl)
#define S_SETSOCKOPT(f, lv, o, v, l) syscall(__NR_setsockopt, f, lv, o, v, l)
#define S_GETSOCKNAME(f, a, l) syscall(__NR_getsockname, f, a, l)
#define S_CLOSE(f) syscall(__NR_close, f)
#else
#define S_SOCKET socket
#define S_BIND bind
#define S_LISTEN listen
#define S_ACCEPT4 accept4
#define S_SETSOCKOPT setsockopt
#define S_GETSOCKNAME getsockname
#define S_CLOSE close
#endif

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void serve_http(int c, const char *file)
{
	char req[4096], hdr[128], buf[65536];
	size_t got = 0;
	struct stat st;
	ssize_t n;
	int fd;

	/* the request head, up to the blank line */
	while (got < sizeof(req) - 1) {
		n = read(c, req + got, sizeof(req) - 1 - got);
		if (n <= 0)
			return;
		got += (size_t)n;
		req[got] = 0;
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	fd = open(file, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		write_all(c, "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n", 45);
		if (fd >= 0)
			close(fd);
		return;
	}
	n = snprintf(hdr, sizeof(hdr), "HTTP/1.0 200 OK\r\nContent-Length: %lld\r\n\r\n",
		     (long long)st.st_size);
	if (write_all(c, hdr, (size_t)n) == 0)
		while ((n = read(fd, buf, sizeof(buf))) > 0 && write_all(c, buf, (size_t)n) == 0)
			;
	close(fd);
}

static void serve_rr(int c)
{
	char buf[65536];
	uint32_t hdr[2];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(hdr)) {	/* mode and size: echo whatever follows */
		n = read(c, (char *)hdr + got, sizeof(hdr) - got);
		if (n <= 0)
			return;
		got += (size_t)n;
	}
	while ((n = read(c, buf, sizeof(buf))) > 0 && write_all(c, buf, (size_t)n) == 0)
		;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int l, one = 1, fork_each = argc == 4 && !strcmp(argv[1], "fork");
	int drop = argc == 4 && !strcmp(argv[1], "drop");
	int http = fork_each || drop || !strcmp(argv[1], "http");

	if (argc < 3 || (http ? argc != 4 : strcmp(argv[1], "rr") || argc != 3)) {
		fprintf(stderr, "usage: trap-server http|fork|drop PORT FILE | rr PORT\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_IGN);
	a.sin_port = htons((uint16_t)atoi(argv[2]));
	l = (int)S_SOCKET(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || S_SETSOCKOPT(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    S_BIND(l, (struct sockaddr *)&a, sizeof(a)) || S_LISTEN(l, 16) ||
	    S_GETSOCKNAME(l, (struct sockaddr *)&a, &al)) {
		perror("trap-server");
		return 1;
	}
	printf("listening %d\n", ntohs(a.sin_port));
	fflush(stdout);
	if (drop) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
			perror("trap-server: dropping root");
			return 1;
		}
		printf("dropped to uid %d\n", (int)getuid());
		fflush(stdout);
	}
	for (;;) {
		int c = (int)S_ACCEPT4(l, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			perror("trap-server: accept4");
			return 1;
		}
		S_SETSOCKOPT(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (fork_each) {
			pid_t p = fork();

			if (p == 0) {
				S_CLOSE(l);
				serve_http(c, argv[3]);
				_exit(0);
			}
			if (p < 0)
				perror("trap-server: fork");
		} else if (http)
			serve_http(c, argv[3]);
		else
			serve_rr(c);
		S_CLOSE(c);
	}
}
