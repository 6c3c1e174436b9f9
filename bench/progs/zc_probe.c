// SPDX-License-Identifier: MIT
/*
 * Would MSG_ZEROCOPY take the TOE's copy (slot -> socket buffer) off a
 * response?  One TCP stream of 64 KiB sends from a shared-memory buffer,
 * as the TOE sends from a region's slots, once copied (plain send) and
 * once with MSG_ZEROCOPY (SO_ZEROCOPY; the buffer is reused only after
 * its completion).  Each side prints its own CPU time, so the script
 * (bench/22_toe_zerocopy_local.sh) can put the two modes side by side.
 *
 *   toe-zcprobe recv PORT                 -> "recv MIB cpu_s sys_s"
 *   toe-zcprobe send HOST PORT MIB copy|zc
 *       -> "send MIB seconds cpu_s sys_s completions copied"
 *
 * "copied" counts the completions the kernel flagged
 * SO_EE_CODE_ZEROCOPY_COPIED: it copied those bytes after all (a local
 * receiver, a device without scatter-gather, ...).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define CHUNK	(64u << 10)
#define NCHUNK	256u			/* 16 MiB of "slots", reused in turn */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	return *sys + (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
}

static int die(const char *what)
{
	fprintf(stderr, "toe-zcprobe: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Reads every completion queued on fd's error queue; returns the number
 * of sends completed, and adds those the kernel copied to *copied. */
static unsigned long reap(int fd, unsigned long *copied)
{
	unsigned long done = 0;

	for (;;) {
		char cbuf[128];
		struct msghdr m = { .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		struct sock_extended_err *ee;
		unsigned long n;

		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return done;
		cm = CMSG_FIRSTHDR(&m);
		if (!cm)
			continue;
		ee = (struct sock_extended_err *)CMSG_DATA(cm);
		if (ee->ee_errno != 0 || ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
			continue;
		n = ee->ee_data - ee->ee_info + 1;
		done += n;
		if (ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
			*copied += n;
	}
}

static int do_recv(int port)
{
	static char buf[CHUNK];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int l, c, one = 1;
	double s0, s1, c0, c1;
	unsigned long long total = 0;
	ssize_t n;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		return die("listen");
	printf("ready\n");
	fflush(stdout);
	c = accept(l, NULL, NULL);
	if (c < 0)
		return die("accept");
	c0 = cpu(&s0);
	while ((n = read(c, buf, sizeof(buf))) > 0)
		total += (unsigned long long)n;
	if (n < 0)
		return die("read");
	c1 = cpu(&s1);
	printf("recv %llu %.3f %.3f\n", total >> 20, c1 - c0, s1 - s0);
	return 0;
}

static int do_send(const char *host, int port, unsigned long mib, int zc)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned long sent = 0, calls = 0, done = 0, copied = 0;
	unsigned long total = mib << 20;
	double t0, s0, s1, c0, c1;
	char *slots;
	int fd, one = 1;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		fprintf(stderr, "toe-zcprobe: bad address %s\n", host);
		return 2;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		return die("connect");
	if (zc && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
		return die("SO_ZEROCOPY");
	slots = mmap(NULL, (size_t)CHUNK * NCHUNK, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED)
		return die("mmap");
	memset(slots, 'x', (size_t)CHUNK * NCHUNK);

	t0 = now();
	c0 = cpu(&s0);
	while (sent < total) {
		/* A zerocopy send may reuse its chunk only once completed. */
		if (zc && calls - done >= NCHUNK) {
			struct pollfd p = { .fd = fd };

			if (poll(&p, 1, 1000) < 0 && errno != EINTR)
				return die("poll");
			done += reap(fd, &copied);
			continue;
		}
		ssize_t n = send(fd, slots + (size_t)(calls % NCHUNK) * CHUNK, CHUNK,
				 zc ? MSG_ZEROCOPY : 0);
		if (n < 0) {
			if (errno == ENOBUFS && zc) {	/* optmem full: reap first */
				struct pollfd p = { .fd = fd };

				poll(&p, 1, 10);
				done += reap(fd, &copied);
				continue;
			}
			return die("send");
		}
		sent += (unsigned long)n;
		calls++;
		if (zc && (calls & 15) == 0)
			done += reap(fd, &copied);
	}
	while (zc && done < calls) {
		struct pollfd p = { .fd = fd };

		if (poll(&p, 1, 2000) <= 0)
			break;
		done += reap(fd, &copied);
	}
	c1 = cpu(&s1);
	printf("send %lu %.3f %.3f %.3f %lu %lu\n", sent >> 20, now() - t0, c1 - c0,
	       s1 - s0, zc ? done : 0, copied);
	shutdown(fd, SHUT_WR);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "recv"))
		return do_recv(atoi(argv[2]));
	if (argc == 6 && !strcmp(argv[1], "send") &&
	    (!strcmp(argv[5], "copy") || !strcmp(argv[5], "zc")))
		return do_send(argv[2], atoi(argv[3]), strtoul(argv[4], NULL, 10),
			       !strcmp(argv[5], "zc"));
	fprintf(stderr, "usage: toe-zcprobe recv PORT | send HOST PORT MIB copy|zc\n");
	return 2;
}
