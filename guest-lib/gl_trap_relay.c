// SPDX-License-Identifier: MIT
/*
 * The stream relay of the trap path (gl_trap_relay.h).
 *
 * THREADING: one relay thread owns every stream's buffers and fds once
 * added; gl_trap_relay_add (any thread) only appends to the pending list
 * under rl.mu and writes rl.kick, an eventfd in every poll set of the
 * relay thread, so a new stream is watched at once.  Flow control is the
 * two sides': the relay reads a side only while the buffer towards the
 * other has room, so a slow program stops the TOE socket's reads (and
 * the TOE's window) and a slow peer fills the socketpair.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gl_trap_relay.h"

#define RL_BUF (64 << 10)

/* One direction: bytes read from one side, not yet written to the other. */
struct rl_dir {
	char *buf;
	size_t head, tail;	/* buf[head, tail) waits to be written */
	bool eof;		/* the reading side said EOF */
	bool shut;		/* and the writing side has been shut down */
};

struct rl_stream {
	int off, a;
	struct rl_dir down;	/* off -> a */
	struct rl_dir up;	/* a -> off */
	bool dead;
	struct rl_stream *next;
};

static struct {
	pthread_mutex_t mu;
	struct rl_stream *pending;	/* added, not yet taken by the thread (mu) */
	int count;			/* streams added and not finished (mu) */
	int kick;			/* eventfd: pending changed */
	pthread_t thr;
} rl = { .mu = PTHREAD_MUTEX_INITIALIZER, .kick = -1 };

static void rl_free(struct rl_stream *s)
{
	close(s->off);
	close(s->a);
	free(s->down.buf);
	free(s->up.buf);
	free(s);
	pthread_mutex_lock(&rl.mu);
	rl.count--;
	pthread_mutex_unlock(&rl.mu);
}

/* Read from @fd into @d while there is room; false when @fd failed. */
static bool rl_fill(struct rl_dir *d, int fd)
{
	ssize_t n;

	if (d->eof || d->tail == RL_BUF)
		return true;
	n = recv(fd, d->buf + d->tail, RL_BUF - d->tail, MSG_DONTWAIT);
	if (n > 0)
		d->tail += (size_t)n;
	else if (n == 0)
		d->eof = true;
	else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		return false;
	return true;
}

/* Write what @d holds to @fd; at EOF with nothing left, shut @fd's write side. */
static bool rl_flush(struct rl_dir *d, int fd)
{
	while (d->head < d->tail) {
		ssize_t n = send(fd, d->buf + d->head, d->tail - d->head,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		d->head += (size_t)n;
	}
	d->head = d->tail = 0;
	if (d->eof && !d->shut) {
		shutdown(fd, SHUT_WR);
		d->shut = true;
	}
	return true;
}

/* One poll result of @s: move what can move; mark it dead when done or failed. */
static void rl_step(struct rl_stream *s, short ev_off, short ev_a)
{
	bool ok = true;

	if (ev_off & (POLLIN | POLLHUP | POLLERR))
		ok = ok && rl_fill(&s->down, s->off);
	if (ev_a & (POLLIN | POLLHUP | POLLERR))
		ok = ok && rl_fill(&s->up, s->a);
	ok = ok && rl_flush(&s->down, s->a);
	ok = ok && rl_flush(&s->up, s->off);
	if (!ok || (ev_off & POLLNVAL) || (ev_a & POLLNVAL)) {
		/* The program sees its peer gone: EOF, then EPIPE on write. */
		shutdown(s->a, SHUT_RDWR);
		s->dead = true;
	} else if (s->down.shut && s->up.shut) {
		s->dead = true;
	}
}

static short rl_events(const struct rl_dir *from, const struct rl_dir *to)
{
	short ev = 0;

	if (!from->eof && from->tail < RL_BUF)
		ev |= POLLIN;
	if (to->head < to->tail)
		ev |= POLLOUT;
	return ev;
}

static void *rl_thread(void *arg)
{
	struct rl_stream *live = NULL;
	struct pollfd *pfd = NULL;
	size_t cap = 0;

	(void)arg;
	for (;;) {
		struct rl_stream *s, **pp;
		size_t n = 1, i;
		uint64_t v;

		pthread_mutex_lock(&rl.mu);
		while (rl.pending) {
			s = rl.pending;
			rl.pending = s->next;
			s->next = live;
			live = s;
		}
		pthread_mutex_unlock(&rl.mu);
		for (pp = &live; (s = *pp) != NULL;) {
			if (s->dead) {
				*pp = s->next;
				rl_free(s);
			} else {
				pp = &s->next;
				n += 2;
			}
		}
		if (n > cap) {
			struct pollfd *np = realloc(pfd, n * 2 * sizeof(*pfd));

			if (!np) {
				usleep(10000);
				continue;
			}
			pfd = np;
			cap = n * 2;
		}
		pfd[0] = (struct pollfd){ .fd = rl.kick, .events = POLLIN };
		for (i = 1, s = live; s; s = s->next, i += 2) {
			pfd[i] = (struct pollfd){ .fd = s->off, .events = rl_events(&s->down, &s->up) };
			pfd[i + 1] = (struct pollfd){ .fd = s->a, .events = rl_events(&s->up, &s->down) };
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno != EINTR)
				usleep(1000);
			continue;
		}
		if (pfd[0].revents && read(rl.kick, &v, sizeof(v)) < 0)
			v = 0;
		for (i = 1, s = live; s; s = s->next, i += 2)
			if (pfd[i].revents || pfd[i + 1].revents)
				rl_step(s, pfd[i].revents, pfd[i + 1].revents);
	}
	return NULL;
}

int gl_trap_relay_init(void)
{
	int err;

	rl.kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rl.kick < 0)
		return -errno;
	err = pthread_create(&rl.thr, NULL, rl_thread, NULL);
	if (err) {
		close(rl.kick);
		return -err;
	}
	pthread_detach(rl.thr);
	return 0;
}

int gl_trap_relay_add(int off, int a)
{
	struct rl_stream *s = calloc(1, sizeof(*s));
	uint64_t one = 1;

	if (s) {
		s->down.buf = malloc(RL_BUF);
		s->up.buf = malloc(RL_BUF);
	}
	if (!s || !s->down.buf || !s->up.buf) {
		if (s) {
			free(s->down.buf);
			free(s->up.buf);
		}
		free(s);
		close(off);
		close(a);
		return -ENOMEM;
	}
	s->off = off;
	s->a = a;
	pthread_mutex_lock(&rl.mu);
	s->next = rl.pending;
	rl.pending = s;
	rl.count++;
	pthread_mutex_unlock(&rl.mu);
	if (write(rl.kick, &one, sizeof(one)) < 0)
		return 0;	/* the counter is full: the thread is awake anyway */
	return 0;
}

int gl_trap_relay_count(void)
{
	int n;

	pthread_mutex_lock(&rl.mu);
	n = rl.count;
	pthread_mutex_unlock(&rl.mu);
	return n;
}
