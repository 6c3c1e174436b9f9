/* ev-load: an open-loop HTTP/1.1 load generator (bench/92_sla_real.sh).
 *
 *   ev-load -a ADDR:PORT [-p PATH] -r RATE -d SECONDS [-c MAXCONN] [-g GRACE]
 *
 * Sends GET PATH at RATE requests/s for SECONDS, whatever the server
 * does: request i is due at start + i/RATE and goes out on an idle
 * keep-alive connection, or on a new one while fewer than MAXCONN are
 * open (default 512); when all MAXCONN connections wait for a response
 * the request is counted "unsent" (the server is that far behind).  This
 * is the paper's load: offered at the configured rate, not paced by the
 * responses as a closed-loop client (wrk) is.  Latency runs from the
 * time a request was due (not when it went out), so queueing in front of
 * a slow server counts.  After SECONDS it waits GRACE seconds (default 2)
 * for outstanding responses; those still missing are "unanswered".
 *
 * Prints one line:
 *   EVLOAD sent=N done=N errors=N unsent=N unanswered=N p50_us=N p99_us=N
 *          duration_us=N
 * done: complete 200 responses; errors: other statuses, resets, failed
 * connects; p50/p99 over the done responses.  Exit 0, 1 on a system
 * error, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum ev_conn_state { EVC_FREE, EVC_CONNECTING, EVC_IDLE, EVC_BUSY };

struct ev_conn {
	int fd;
	enum ev_conn_state state;
	uint64_t due_ns;	/* when the outstanding request was due */
	char head[4096];	/* response head so far */
	size_t head_len;
	long body_left;		/* -1 while the head is incomplete */
	int status;
};

struct ev_load {
	struct sockaddr_in addr;
	char req[512];
	size_t req_len;
	int ep;
	struct ev_conn *conns;
	int maxconn, nopen;
	int *idle, nidle;	/* stack of idle connection indices */
	uint64_t sent, done, errors, unsent;
	uint64_t *lat_us;
	size_t nlat, cap_lat;
};

static uint64_t ev_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void ev_close(struct ev_load *l, int i)
{
	struct ev_conn *c = &l->conns[i];

	if (c->state == EVC_IDLE) {
		for (int k = 0; k < l->nidle; k++)
			if (l->idle[k] == i) {
				l->idle[k] = l->idle[--l->nidle];
				break;
			}
	}
	close(c->fd);
	c->fd = -1;
	c->state = EVC_FREE;
	l->nopen--;
}

/* The outstanding request on connection i failed. */
static void ev_fail(struct ev_load *l, int i)
{
	if (l->conns[i].state == EVC_BUSY || l->conns[i].state == EVC_CONNECTING)
		l->errors++;
	ev_close(l, i);
}

static int ev_send(struct ev_load *l, int i)
{
	struct ev_conn *c = &l->conns[i];
	ssize_t n = send(c->fd, l->req, l->req_len, MSG_NOSIGNAL);

	/* a request fits in an empty socket buffer: a short write is an error */
	if (n != (ssize_t)l->req_len) {
		ev_fail(l, i);
		return -1;
	}
	c->state = EVC_BUSY;
	c->head_len = 0;
	c->body_left = -1;
	l->sent++;
	return 0;
}

/* Issues one request due at DUE_NS. */
static void ev_issue(struct ev_load *l, uint64_t due_ns)
{
	if (l->nidle > 0) {
		int i = l->idle[--l->nidle];

		l->conns[i].due_ns = due_ns;
		ev_send(l, i);
		return;
	}
	if (l->nopen >= l->maxconn) {
		l->unsent++;
		return;
	}
	int i = 0;

	while (l->conns[i].state != EVC_FREE)
		i++;
	struct ev_conn *c = &l->conns[i];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0) {
		l->errors++;
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&l->addr, sizeof(l->addr)) < 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		l->errors++;
		return;
	}
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.u32 = (uint32_t)i };

	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		l->errors++;
		return;
	}
	c->fd = fd;
	c->state = EVC_CONNECTING;
	c->due_ns = due_ns;
	l->nopen++;
}

static void ev_record(struct ev_load *l, uint64_t lat_ns)
{
	if (l->nlat == l->cap_lat) {
		size_t cap = l->cap_lat ? 2 * l->cap_lat : 4096;
		uint64_t *p = realloc(l->lat_us, cap * sizeof(*p));

		if (!p)
			return;
		l->lat_us = p;
		l->cap_lat = cap;
	}
	l->lat_us[l->nlat++] = lat_ns / 1000;
}

/* Parses the head once it is complete: status and Content-Length. */
static int ev_parse_head(struct ev_conn *c, size_t *head_end)
{
	char *end = memmem(c->head, c->head_len, "\r\n\r\n", 4);

	if (!end)
		return c->head_len == sizeof(c->head) ? -1 : 0;
	*end = '\0';
	*head_end = (size_t)(end - c->head) + 4;
	if (sscanf(c->head, "HTTP/1.%*d %d", &c->status) != 1)
		return -1;
	char *cl = strcasestr(c->head, "\r\ncontent-length:");

	if (!cl)
		return -1;	/* nginx's static files always carry one */
	c->body_left = strtol(cl + 17, NULL, 10);
	return c->body_left < 0 ? -1 : 1;
}

static void ev_readable(struct ev_load *l, int i, uint64_t now)
{
	struct ev_conn *c = &l->conns[i];
	char buf[65536];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			ev_fail(l, i);
			return;
		}
		if (c->state != EVC_BUSY) {	/* nothing asked: a protocol error */
			ev_fail(l, i);
			return;
		}
		size_t off = 0;

		if (c->body_left < 0) {
			size_t room = sizeof(c->head) - c->head_len, take = (size_t)n < room ? (size_t)n : room;
			size_t old = c->head_len, head_end = 0;

			memcpy(c->head + old, buf, take);
			c->head_len += take;
			int r = ev_parse_head(c, &head_end);

			if (r < 0) {
				ev_fail(l, i);
				return;
			}
			if (r == 0)
				continue;
			off = head_end - old;
		}
		c->body_left -= (long)((size_t)n - off);
		if (c->body_left > 0)
			continue;
		if (c->body_left < 0) {	/* more than was announced */
			ev_fail(l, i);
			return;
		}
		if (c->status == 200) {
			l->done++;
			ev_record(l, now - c->due_ns);
		} else {
			l->errors++;
		}
		c->state = EVC_IDLE;
		l->idle[l->nidle++] = i;
	}
}

static void ev_writable(struct ev_load *l, int i)
{
	struct ev_conn *c = &l->conns[i];
	int err = 0;
	socklen_t len = sizeof(err);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.u32 = (uint32_t)i };

	if (c->state != EVC_CONNECTING)
		return;
	getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err || epoll_ctl(l->ep, EPOLL_CTL_MOD, c->fd, &ev) < 0) {
		ev_fail(l, i);
		return;
	}
	ev_send(l, i);
}

static int ev_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void ev_usage(void)
{
	fprintf(stderr, "usage: ev-load -a ADDR:PORT [-p PATH] -r RATE -d SECONDS [-c MAXCONN] [-g GRACE]\n");
	exit(2);
}

static double ev_num(const char *opt, const char *s, double min)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= min) || v > 1e7) {
		fprintf(stderr, "ev-load: %s: bad value '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct ev_load l = { .maxconn = 512 };
	const char *path = "/1k/x", *hostport = NULL;
	double rate = 0, secs = 0, grace = 2;
	int opt;

	while ((opt = getopt(argc, argv, "a:p:r:d:c:g:")) != -1) {
		switch (opt) {
		case 'a': hostport = optarg; break;
		case 'p': path = optarg; break;
		case 'r': rate = ev_num("-r", optarg, 0.1); break;
		case 'd': secs = ev_num("-d", optarg, 0.1); break;
		case 'c': l.maxconn = (int)ev_num("-c", optarg, 1); break;
		case 'g': grace = ev_num("-g", optarg, 0); break;
		default: ev_usage();
		}
	}
	if (!hostport || rate <= 0 || secs <= 0 || optind != argc || path[0] != '/' ||
	    strlen(path) > 256 || l.maxconn > 60000)
		ev_usage();
	char host[64];
	const char *colon = strrchr(hostport, ':');

	if (!colon || (size_t)(colon - hostport) >= sizeof(host)) {
		fprintf(stderr, "ev-load: -a: want ADDR:PORT, got '%s'\n", hostport);
		return 2;
	}
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	l.addr.sin_family = AF_INET;
	l.addr.sin_port = htons((uint16_t)ev_num("-a port", colon + 1, 1));
	if (inet_pton(AF_INET, host, &l.addr.sin_addr) != 1) {
		fprintf(stderr, "ev-load: -a: '%s' is not an IPv4 address\n", host);
		return 2;
	}
	l.req_len = (size_t)snprintf(l.req, sizeof(l.req),
				     "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ev-load\r\n\r\n", path, host);

	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)l.maxconn + 16) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)l.maxconn + 16 ? rl.rlim_max : (rlim_t)l.maxconn + 16;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	l.conns = calloc((size_t)l.maxconn, sizeof(*l.conns));
	l.idle = calloc((size_t)l.maxconn, sizeof(*l.idle));
	l.ep = epoll_create1(EPOLL_CLOEXEC);
	if (!l.conns || !l.idle || l.ep < 0) {
		perror("ev-load");
		return 1;
	}
	for (int i = 0; i < l.maxconn; i++)
		l.conns[i].fd = -1;

	uint64_t start = ev_now_ns(), end = start + (uint64_t)(secs * 1e9);
	uint64_t stop = end + (uint64_t)(grace * 1e9), next = start, k = 0;
	struct epoll_event evs[256];

	for (;;) {
		uint64_t now = ev_now_ns();

		while (next <= now && next < end) {
			ev_issue(&l, next);
			k++;
			next = start + (uint64_t)((double)k * 1e9 / rate);
		}
		int busy = l.nopen - l.nidle;

		if (now >= stop || (now >= end && busy == 0))
			break;
		uint64_t until = next < end ? next : stop;
		uint64_t wait_ns = until > now ? until - now : 0;
		struct timespec tmo = { .tv_sec = (time_t)(wait_ns / 1000000000u),
					.tv_nsec = (long)(wait_ns % 1000000000u) };
		int n = epoll_pwait2(l.ep, evs, 256, &tmo, NULL);

		if (n < 0 && errno != EINTR) {
			perror("ev-load: epoll_pwait2");
			return 1;
		}
		now = ev_now_ns();
		for (int j = 0; j < n; j++) {
			int i = (int)evs[j].data.u32;

			if (l.conns[i].state == EVC_FREE)
				continue;
			if (evs[j].events & EPOLLOUT)
				ev_writable(&l, i);
			if (l.conns[i].state != EVC_FREE &&
			    (evs[j].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
				ev_readable(&l, i, now);
		}
	}
	uint64_t unanswered = 0;

	for (int i = 0; i < l.maxconn; i++)
		if (l.conns[i].state == EVC_BUSY || l.conns[i].state == EVC_CONNECTING)
			unanswered++;
	uint64_t p50 = 0, p99 = 0;

	if (l.nlat) {
		qsort(l.lat_us, l.nlat, sizeof(*l.lat_us), ev_cmp);
		p50 = l.lat_us[(l.nlat - 1) / 2];
		p99 = l.lat_us[(size_t)((double)(l.nlat - 1) * 0.99)];
	}
	printf("EVLOAD sent=%llu done=%llu errors=%llu unsent=%llu unanswered=%llu p50_us=%llu p99_us=%llu duration_us=%llu\n",
	       (unsigned long long)l.sent, (unsigned long long)l.done, (unsigned long long)l.errors,
	       (unsigned long long)l.unsent, (unsigned long long)unanswered, (unsigned long long)p50,
	       (unsigned long long)p99, (unsigned long long)((end - start) / 1000));
	return 0;
}
