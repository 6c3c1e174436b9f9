// SPDX-License-Identifier: MIT
/*
 * Wake-ups of a multithreaded guest process (tests/integration/108_*).
 *
 *   gl-wakeups serve PORT N ROUNDS [quick] the guest, under tochain-run
 *   gl-wakeups drive ADDR PORT N ROUNDS   the peer, on kernel sockets
 *
 * The guest accepts N + 1 connections and blocks one thread in recv() on
 * each of the first N (echoing what it gets); the last stays idle.  The
 * process runs on one CPU, so threads woken together run one after the
 * other and the one a wake-up was meant for is often not the first to
 * take it.  Each round the peer sends a byte on every connection at once
 * (all threads wake; whichever goes back to sleep first sleeps alone for
 * a moment), then, after a pause, on each connection in turn, and wants
 * every echo within 3 s: a thread that slept through its wake-up is a
 * stall.  In the last quarter a thread injects spurious wake-ups (writes
 * every eventfd of the process: the doorbell and the runtime's own) while
 * other threads check that timed waits end on time and never early:
 * recv with SO_RCVTIMEO, poll, select, epoll_wait on the idle connection,
 * recvfrom on an idle UDP socket with SO_RCVTIMEO ("quick": without that
 * quarter).  An echo thread that sees EOF before the peer closed is a
 * failure too.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAXCONN		16
#define TIMEO_MS	150
#define ECHO_WAIT_MS	3000

static int nconn, rounds;
static bool quick;
static int conn[MAXCONN + 1];
static atomic_int echoes, failures, checks, injected;
static atomic_bool stop, inject_on;

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void fail(const char *what, long r, int err, int64_t us)
{
	if (atomic_fetch_add(&failures, 1) < 10)
		fprintf(stderr, "FAIL: %s: ret=%ld errno=%s after %lld us\n", what, r,
			r < 0 ? strerror(err) : "-", (long long)us);
}

/* ---- guest ---- */

static void *echo_thread(void *arg)
{
	int i = (int)(intptr_t)arg, got = 0;
	char buf[64];

	for (;;) {
		ssize_t n = recv(conn[i], buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail("echo recv", n, errno, 0);
			return NULL;
		}
		if (n == 0) {
			if (got < 2 * rounds) {
				fprintf(stderr, "FAIL: conn %d: EOF after %d of %d bytes\n", i, got,
					2 * rounds);
				atomic_fetch_add(&failures, 1);
			}
			return NULL;
		}
		got += (int)n;
		if (send(conn[i], buf, (size_t)n, MSG_NOSIGNAL) != n) {
			fail("echo send", -1, errno, 0);
			return NULL;
		}
		atomic_fetch_add(&echoes, (int)n);
	}
}

/* Write 1 to every eventfd of the process, every half millisecond. */
static void *inject_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		DIR *d;
		struct dirent *e;

		if (!atomic_load(&inject_on)) {
			usleep(1000);
			continue;
		}
		d = opendir("/proc/self/fd");
		if (!d)
			return NULL;
		while ((e = readdir(d)) != NULL) {
			char link[300], target[64];
			uint64_t one = 1;
			ssize_t k;

			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
			k = readlink(link, target, sizeof(target) - 1);
			if (k <= 0)
				continue;
			target[k] = 0;
			if (strcmp(target, "anon_inode:[eventfd]") == 0 &&
			    write(atoi(e->d_name), &one, sizeof(one)) == sizeof(one))
				atomic_fetch_add(&injected, 1);
		}
		closedir(d);
		usleep(500);
	}
	return NULL;
}

/* A timed wait that must end by its timeout, not earlier, with nothing. */
static void check_timed(const char *what, long r, int err, bool want_eagain, int64_t us)
{
	bool ok = want_eagain ? (r == -1 && (err == EAGAIN || err == EWOULDBLOCK)) : r == 0;

	if (!ok || us < TIMEO_MS * 1000 - 500)
		fail(what, r, err, us);
	else
		atomic_fetch_add(&checks, 1);
}

static void *timed_thread(void *arg)
{
	int kind = (int)(intptr_t)arg, fd = conn[nconn], ep = -1, u = -1;
	struct timeval tv = { 0, TIMEO_MS * 1000 };
	char c;

	if (kind == 0) {
		if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
			fail("SO_RCVTIMEO", -1, errno, 0);
	} else if (kind == 2) {
		struct epoll_event ev = { .events = EPOLLIN };

		ep = epoll_create1(0);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
			fail("epoll setup", -1, errno, 0);
	} else if (kind == 3) {
		struct sockaddr_in a = { .sin_family = AF_INET };

		u = socket(AF_INET, SOCK_DGRAM, 0);
		if (u < 0 || bind(u, (struct sockaddr *)&a, sizeof(a)) ||
		    setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
			fail("udp setup", -1, errno, 0);
	}
	while (!atomic_load(&stop)) {
		int64_t t0 = now_us();
		long r;
		int err;

		switch (kind) {
		case 0:
			r = recv(fd, &c, 1, 0);
			err = errno;
			check_timed("recv with SO_RCVTIMEO", r, err, true, now_us() - t0);
			break;
		case 1: {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			struct timeval stv = { 0, TIMEO_MS * 1000 };
			fd_set rs;

			r = poll(&p, 1, TIMEO_MS);
			err = errno;
			check_timed("poll", r, err, false, now_us() - t0);
			FD_ZERO(&rs);
			FD_SET(fd, &rs);
			t0 = now_us();
			r = select(fd + 1, &rs, NULL, NULL, &stv);
			err = errno;
			check_timed("select", r, err, false, now_us() - t0);
			break;
		}
		case 2: {
			struct epoll_event ev;

			r = epoll_wait(ep, &ev, 1, TIMEO_MS);
			err = errno;
			check_timed("epoll_wait", r, err, false, now_us() - t0);
			break;
		}
		default: {
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);

			r = recvfrom(u, &c, 1, 0, (struct sockaddr *)&from, &fl);
			err = errno;
			check_timed("udp recvfrom with SO_RCVTIMEO", r, err, true, now_us() - t0);
			break;
		}
		}
	}
	if (ep >= 0)
		close(ep);
	if (u >= 0)
		close(u);
	return NULL;
}

/*
 * Busy neighbours: a thread that polls the idle connection with a 1 ms
 * timeout in a loop (it wakes, takes the doorbell, pumps, all the time)
 * and one that only burns the CPU, so that a woken thread waits for its
 * turn while the others run.
 */
static void *short_poll_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		struct pollfd p = { .fd = conn[nconn], .events = POLLIN };
		int64_t t0 = now_us();
		int r = poll(&p, 1, 1);

		if (r != 0 || now_us() - t0 < 1000)
			fail("poll 1 ms", r, errno, now_us() - t0);
	}
	return NULL;
}

static void *burn_thread(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	while (!atomic_load(&stop))
		for (int i = 0; i < 100000; i++)
			x++;
	return NULL;
}

static int serve(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	pthread_t echo[MAXCONN], timed[4], inj, busy[2];
	bool timed_on = false;
	int64_t timed_t0 = 0;
	cpu_set_t one;
	int l, on = 1;

	/* one CPU: threads woken together take turns (see the top) */
	if (sched_getaffinity(0, sizeof(one), &one) == 0) {
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &one)) {
				CPU_ZERO(&one);
				CPU_SET(c, &one);
				sched_setaffinity(0, sizeof(one), &one);
				break;
			}
	}
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, MAXCONN + 1)) {
		perror("listen");
		return 2;
	}
	for (int i = 0; i <= nconn; i++) {
		conn[i] = accept(l, NULL, NULL);
		if (conn[i] < 0) {
			perror("accept");
			return 2;
		}
	}
	pthread_create(&inj, NULL, inject_thread, NULL);
	for (int i = 0; i < nconn; i++) {
		pthread_create(&echo[i], NULL, echo_thread, (void *)(intptr_t)i);
		usleep(20000);	/* thread 0 sleeps first, alone */
	}
	pthread_create(&busy[0], NULL, short_poll_thread, NULL);
	pthread_create(&busy[1], NULL, burn_thread, NULL);
	/* second half: spurious wake-ups and timed waits */
	while (atomic_load(&echoes) < 2 * rounds * nconn) {
		if (!quick && !timed_on && atomic_load(&echoes) >= 2 * rounds * nconn * 3 / 4) {
			atomic_store(&inject_on, true);
			for (int k = 0; k < 4; k++)
				pthread_create(&timed[k], NULL, timed_thread, (void *)(intptr_t)k);
			timed_on = true;
			timed_t0 = now_us();
		}
		if (atomic_load(&failures))
			break;
		usleep(1000);
	}
	for (int i = 0; i < nconn; i++)
		pthread_join(echo[i], NULL);
	if (!timed_on) {
		/* the echoes ended early (failure): do not wait for timed checks */
		atomic_store(&stop, true);
	} else {
		/* give the timed waits time for a few rounds each */
		while (now_us() - timed_t0 < 4 * TIMEO_MS * 1000)
			usleep(10000);
		atomic_store(&stop, true);
		for (int k = 0; k < 4; k++)
			pthread_join(timed[k], NULL);
	}
	atomic_store(&stop, true);
	pthread_join(inj, NULL);
	pthread_join(busy[0], NULL);
	pthread_join(busy[1], NULL);
	close(conn[nconn]);	/* tells the peer we are done */
	printf("guest: %d conns x %d rounds, %d echoed bytes, %d timed waits on time, "
	       "%d spurious wake-ups injected, %d failures\n", nconn, rounds,
	       atomic_load(&echoes), atomic_load(&checks), atomic_load(&injected),
	       atomic_load(&failures));
	if (timed_on && atomic_load(&checks) < 4)
		fail("too few timed waits", 0, 0, 0);
	return atomic_load(&failures) ? 1 : 0;
}

/* ---- peer ---- */

static bool echo_of(int fd, char want)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ECHO_WAIT_MS) != 1 || recv(fd, &c, 1, 0) != 1 || c != want)
		return false;
	return true;
}

static int drive(const char *addr, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int64_t t0;

	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		return 2;
	for (int i = 0; i <= nconn; i++) {
		int tries = 0;

		for (;;) {
			conn[i] = socket(AF_INET, SOCK_STREAM, 0);
			if (connect(conn[i], (struct sockaddr *)&a, sizeof(a)) == 0)
				break;
			close(conn[i]);
			if (++tries > 200) {
				perror("connect");
				return 2;
			}
			usleep(50000);
		}
	}
	usleep(nconn * 20000 + 50000);	/* every guest thread sleeps */
	t0 = now_us();
	for (int r = 0; r < rounds; r++) {
		char c = (char)('a' + r % 26);

		for (int i = 0; i < nconn; i++)
			if (send(conn[i], &c, 1, 0) != 1)
				return 2;
		for (int i = 0; i < nconn; i++)
			if (!echo_of(conn[i], c)) {
				printf("STALL: round %d, burst, conn %d: no echo in %d ms\n", r, i,
				       ECHO_WAIT_MS);
				return 1;
			}
		usleep(3000);
		for (int i = 0; i < nconn; i++) {
			int k = (i + r) % nconn;	/* a different first target each round */

			if (send(conn[k], &c, 1, 0) != 1)
				return 2;
			if (!echo_of(conn[k], c)) {
				printf("STALL: round %d, conn %d in turn: no echo in %d ms\n", r, k,
				       ECHO_WAIT_MS);
				return 1;
			}
			usleep(1000);
		}
	}
	printf("peer: %d rounds x %d conns echoed in %.2f s\n", rounds, nconn,
	       (double)(now_us() - t0) / 1e6);
	for (int i = 0; i < nconn; i++)
		close(conn[i]);
	/* the guest closes the idle connection when it is done */
	{
		struct pollfd p = { .fd = conn[nconn], .events = POLLIN };
		char c;

		if (poll(&p, 1, 20000) != 1 || recv(conn[nconn], &c, 1, 0) != 0) {
			printf("guest did not finish\n");
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 5 || (argc == 6 && strcmp(argv[5], "quick") == 0)) &&
	    strcmp(argv[1], "serve") == 0) {
		quick = argc == 6;
		nconn = atoi(argv[3]);
		rounds = atoi(argv[4]);
		if (nconn < 2 || nconn > MAXCONN || rounds < 2)
			return 2;
		return serve(atoi(argv[2]));
	}
	if (argc == 6 && strcmp(argv[1], "drive") == 0) {
		nconn = atoi(argv[4]);
		rounds = atoi(argv[5]);
		if (nconn < 2 || nconn > MAXCONN || rounds < 2)
			return 2;
		return drive(argv[2], atoi(argv[3]));
	}
	fprintf(stderr, "usage: %s serve PORT N ROUNDS | drive ADDR PORT N ROUNDS\n", argv[0]);
	return 2;
}
