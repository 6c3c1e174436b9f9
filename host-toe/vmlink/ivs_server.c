/* SPDX-License-Identifier: MIT */
/*
 * ivs_server: the host-side ivshmem server.  See ivs_server.h for the
 * contract.
 *
 * Every message to a client goes through that client's queue: the
 * descriptor it carries is dup'ed when queued (so a peer that leaves
 * meanwhile cannot pull it away) and closed once sent.  The queue is
 * flushed at once and, when the socket is full, again on EPOLLOUT.  A
 * send error or an overflowing queue marks the peer dead; dead peers
 * are removed (and their leave announced) only at the end of the
 * operation that found them, so no list is changed while it is walked.
 *
 * Single-threaded: no locks (see the header).
 */
#include "ivs_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define IVS_LISTEN_KEY	0	/* epoll key of the listening socket */
#define IVS_EVENTS	16

struct ivs_msg {
	int64_t value;
	int fd;			/* owned, -1 if none */
};

struct ivs_peer {
	unsigned int id;
	uint64_t key;		/* epoll key, never reused */
	int sock;		/* -1 for the host peer */
	int efd[IVS_MAX_VECTORS];
	struct ivs_msg *q;	/* ring of queued messages */
	size_t q_head, q_len, q_cap;
	bool want_out;		/* EPOLLOUT registered */
	bool joined;		/* the join callback ran */
	bool dead;
};

struct ivs_server {
	int listen_fd;
	int spare_fd;		/* kept for refusing clients at EMFILE */
	int epoll_fd;
	int shm_fd;
	char *path;
	unsigned int nvectors;
	unsigned int max_peers;
	struct ivs_peer *host;
	struct ivs_peer **peers;	/* guests, in join order */
	size_t npeers;
	unsigned int next_id;
	uint64_t next_key;
	ivs_peer_cb cb;
	void *cb_arg;
};

static void peer_free(struct ivs_peer *p, unsigned int nvectors)
{
	unsigned int i;

	if (!p)
		return;
	if (p->sock >= 0)
		close(p->sock);
	for (i = 0; i < nvectors; i++)
		if (p->efd[i] >= 0)
			close(p->efd[i]);
	while (p->q_len) {
		struct ivs_msg *m = &p->q[p->q_head];

		if (m->fd >= 0)
			close(m->fd);
		p->q_head = (p->q_head + 1) % p->q_cap;
		p->q_len--;
	}
	free(p->q);
	free(p);
}

/* A peer with its eventfds; the socket is the caller's to set. */
static struct ivs_peer *peer_new(struct ivs_server *s, unsigned int id)
{
	struct ivs_peer *p;
	unsigned int i;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = id;
	p->key = ++s->next_key;
	p->sock = -1;
	for (i = 0; i < IVS_MAX_VECTORS; i++)
		p->efd[i] = -1;
	for (i = 0; i < s->nvectors; i++) {
		p->efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (p->efd[i] < 0) {
			int err = errno;

			peer_free(p, s->nvectors);
			errno = err;
			return NULL;
		}
	}
	return p;
}

static bool id_in_use(const struct ivs_server *s, unsigned int id)
{
	size_t i;

	if (s->host && s->host->id == id)
		return true;
	for (i = 0; i < s->npeers; i++)
		if (s->peers[i]->id == id)
			return true;
	return false;
}

/* Next free id after the last one given, so a leaver's id is not reused at once. */
static int alloc_id(struct ivs_server *s)
{
	unsigned int tries;

	for (tries = 0; tries <= IVS_MAX_PEER_ID; tries++) {
		unsigned int id = s->next_id;

		s->next_id = id == IVS_MAX_PEER_ID ? 0 : id + 1;
		if (!id_in_use(s, id))
			return (int)id;
	}
	return -1;
}

static void peer_set_out(struct ivs_server *s, struct ivs_peer *p, bool out)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0),
		.data.u64 = p->key,
	};

	if (p->want_out == out)
		return;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, p->sock, &ev) < 0)
		p->dead = true;
	else
		p->want_out = out;
}

/* Send what is queued; on a full socket wait for EPOLLOUT. */
static void peer_flush(struct ivs_server *s, struct ivs_peer *p)
{
	while (p->q_len && !p->dead) {
		struct ivs_msg *m = &p->q[p->q_head];
		int ret = ivs_proto_send(p->sock, m->value, m->fd);

		if (ret == -EAGAIN)
			break;
		if (ret < 0) {
			p->dead = true;
			break;
		}
		if (m->fd >= 0)
			close(m->fd);
		p->q_head = (p->q_head + 1) % p->q_cap;
		p->q_len--;
	}
	if (!p->dead)
		peer_set_out(s, p, p->q_len > 0);
}

/* Queue one message for a guest peer; fd (if any) is dup'ed. */
static void peer_queue(struct ivs_peer *p, int64_t value, int fd)
{
	struct ivs_msg *m;
	int dfd = -1;

	if (p->dead || p->sock < 0)
		return;
	if (p->q_len == IVS_MAX_QUEUE) {
		p->dead = true;		/* it does not read: drop it */
		return;
	}
	if (p->q_len == p->q_cap) {
		size_t cap = p->q_cap ? p->q_cap * 2 : 64;
		struct ivs_msg *q = malloc(cap * sizeof(*q));
		size_t i;

		if (!q) {
			p->dead = true;
			return;
		}
		for (i = 0; i < p->q_len; i++)
			q[i] = p->q[(p->q_head + i) % p->q_cap];
		free(p->q);
		p->q = q;
		p->q_cap = cap;
		p->q_head = 0;
	}
	if (fd >= 0) {
		dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (dfd < 0) {
			p->dead = true;
			return;
		}
	}
	m = &p->q[(p->q_head + p->q_len) % p->q_cap];
	m->value = value;
	m->fd = dfd;
	p->q_len++;
}

static void queue_vectors(struct ivs_server *s, struct ivs_peer *to,
			  const struct ivs_peer *of)
{
	unsigned int v;

	for (v = 0; v < s->nvectors; v++)
		peer_queue(to, of->id, of->efd[v]);
}

/* Remove dead guest peers, announcing each leave to the rest. */
static void reap(struct ivs_server *s)
{
	bool again = true;

	while (again) {
		size_t i, j;

		again = false;
		for (i = 0; i < s->npeers; i++) {
			struct ivs_peer *gone = s->peers[i];

			if (!gone->dead)
				continue;
			epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, gone->sock, NULL);
			memmove(&s->peers[i], &s->peers[i + 1],
				(s->npeers - i - 1) * sizeof(s->peers[0]));
			s->npeers--;
			for (j = 0; j < s->npeers; j++) {
				peer_queue(s->peers[j], gone->id, -1);
				peer_flush(s, s->peers[j]);
			}
			if (s->cb && gone->joined)
				s->cb(s->cb_arg, gone->id, false);
			peer_free(gone, s->nvectors);
			again = true;	/* announcing may have killed others */
			break;
		}
	}
}

static void accept_one(struct ivs_server *s, int sock)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct ivs_peer *p;
	size_t i;
	int id;

	if (s->npeers >= s->max_peers)
		goto out_close;
	id = alloc_id(s);
	if (id < 0)
		goto out_close;
	p = peer_new(s, (unsigned int)id);
	if (!p)
		goto out_close;
	p->sock = sock;
	ev.data.u64 = p->key;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, sock, &ev) < 0) {
		p->sock = -1;
		peer_free(p, s->nvectors);
		goto out_close;
	}

	/* 1-3: version, id, shared memory */
	peer_queue(p, IVS_PROTO_VERSION, -1);
	peer_queue(p, p->id, -1);
	peer_queue(p, IVS_PROTO_SHM, s->shm_fd);
	/* 4: the others (host first), 5: its own vectors, for receiving */
	if (s->host)
		queue_vectors(s, p, s->host);
	for (i = 0; i < s->npeers; i++)
		queue_vectors(s, p, s->peers[i]);
	queue_vectors(s, p, p);
	peer_flush(s, p);
	if (p->dead) {
		/* gone before it was announced: nobody needs to hear of it */
		epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, sock, NULL);
		peer_free(p, s->nvectors);
		return;
	}

	/* the newcomer to the others */
	for (i = 0; i < s->npeers; i++) {
		queue_vectors(s, s->peers[i], p);
		peer_flush(s, s->peers[i]);
	}
	s->peers[s->npeers++] = p;
	if (s->cb) {
		p->joined = true;
		s->cb(s->cb_arg, p->id, true);
	}
	reap(s);
	return;

out_close:
	close(sock);
}

static void handle_listen(struct ivs_server *s)
{
	int n;

	for (n = 0; n < 16; n++) {
		int sock = accept4(s->listen_fd, NULL, NULL,
				   SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (sock < 0 && (errno == EMFILE || errno == ENFILE) &&
		    s->spare_fd >= 0) {
			/*
			 * Out of descriptors: the connection would stay in the
			 * backlog and the listening socket readable, a busy
			 * loop.  Use the spare one to accept and refuse it.
			 */
			close(s->spare_fd);
			sock = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (sock >= 0)
				close(sock);
			s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			continue;
		}
		if (sock < 0)
			return;		/* EAGAIN, or a client that went away */
		accept_one(s, sock);
	}
}

static struct ivs_peer *find_key(const struct ivs_server *s, uint64_t key)
{
	size_t i;

	for (i = 0; i < s->npeers; i++)
		if (s->peers[i]->key == key)
			return s->peers[i];
	return NULL;
}

static void handle_peer(struct ivs_server *s, struct ivs_peer *p,
			uint32_t events)
{
	if (events & EPOLLIN) {
		char buf[64];
		ssize_t n = recv(p->sock, buf, sizeof(buf), MSG_DONTWAIT);

		/* EOF, an error, or data on a one-way protocol: drop it */
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			p->dead = true;
	}
	if (events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP))
		p->dead = true;
	if (!p->dead && (events & EPOLLOUT))
		peer_flush(s, p);
}

int ivs_server_dispatch(struct ivs_server *s, int timeout_ms)
{
	struct epoll_event ev[IVS_EVENTS];
	int n, i;

	n = epoll_wait(s->epoll_fd, ev, IVS_EVENTS, timeout_ms);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		struct ivs_peer *p;

		if (ev[i].data.u64 == IVS_LISTEN_KEY) {
			handle_listen(s);
			continue;
		}
		p = find_key(s, ev[i].data.u64);
		if (p)		/* else removed earlier in this batch */
			handle_peer(s, p, ev[i].events);
	}
	reap(s);
	return n;
}

static int listen_on(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, err;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			errno = EEXIST;
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		goto out_close;
	if (listen(fd, 16) < 0)
		goto out_unlink;
	return fd;

out_unlink:
	err = errno;
	unlink(path);
	errno = err;
out_close:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

struct ivs_server *ivs_server_create(const struct ivs_server_config *cfg)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = IVS_LISTEN_KEY };
	struct ivs_server *s;
	struct stat st;
	int err;

	if (!cfg || !cfg->socket_path || !cfg->socket_path[0] ||
	    cfg->nvectors < 1 || cfg->nvectors > IVS_MAX_VECTORS ||
	    cfg->max_peers > IVS_MAX_PEER_ID) {
		errno = EINVAL;
		return NULL;
	}
	if (cfg->shm_fd < 0 || fstat(cfg->shm_fd, &st) < 0) {
		errno = EBADF;
		return NULL;
	}
	/* QEMU maps it whole: a file (or memfd) with a size */
	if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->listen_fd = s->epoll_fd = -1;
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	s->nvectors = cfg->nvectors;
	s->max_peers = cfg->max_peers ? cfg->max_peers : IVS_DEFAULT_MAX_PEERS;
	s->peers = calloc(s->max_peers, sizeof(s->peers[0]));
	s->path = strdup(cfg->socket_path);
	if (!s->peers || !s->path)
		goto out_free;
	s->shm_fd = fcntl(cfg->shm_fd, F_DUPFD_CLOEXEC, 0);
	if (s->shm_fd < 0)
		goto out_free;
	if (cfg->host_peer) {
		s->host = peer_new(s, 0);
		if (!s->host)
			goto out_shm;
		s->next_id = 1;
	}
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epoll_fd < 0)
		goto out_host;
	s->listen_fd = listen_on(s->path);
	if (s->listen_fd < 0)
		goto out_epoll;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->listen_fd, &ev) < 0)
		goto out_listen;
	return s;

out_listen:
	err = errno;
	close(s->listen_fd);
	unlink(s->path);
	errno = err;
out_epoll:
	err = errno;
	close(s->epoll_fd);
	errno = err;
out_host:
	err = errno;
	peer_free(s->host, s->nvectors);
	errno = err;
out_shm:
	err = errno;
	close(s->shm_fd);
	errno = err;
out_free:
	err = errno ? errno : ENOMEM;
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	free(s->path);
	free(s->peers);
	free(s);
	errno = err;
	return NULL;
}

void ivs_server_destroy(struct ivs_server *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->npeers; i++)
		peer_free(s->peers[i], s->nvectors);
	peer_free(s->host, s->nvectors);
	close(s->listen_fd);
	unlink(s->path);
	close(s->epoll_fd);
	close(s->shm_fd);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	free(s->path);
	free(s->peers);
	free(s);
}

void ivs_server_set_callback(struct ivs_server *s, ivs_peer_cb cb, void *arg)
{
	s->cb = cb;
	s->cb_arg = arg;
}

int ivs_server_fd(const struct ivs_server *s)
{
	return s->epoll_fd;
}

int ivs_server_host_id(const struct ivs_server *s)
{
	return s->host ? (int)s->host->id : -1;
}

int ivs_server_host_eventfd(const struct ivs_server *s, unsigned int vector)
{
	if (!s->host || vector >= s->nvectors)
		return -EINVAL;
	return s->host->efd[vector];
}

int ivs_server_ring(struct ivs_server *s, unsigned int peer_id,
		    unsigned int vector)
{
	uint64_t one = 1;
	size_t i;

	if (vector >= s->nvectors)
		return -EINVAL;
	for (i = 0; i < s->npeers; i++) {
		if (s->peers[i]->id != peer_id || s->peers[i]->dead)
			continue;
		/* EAGAIN: the count is at its maximum, the guest will wake */
		if (write(s->peers[i]->efd[vector], &one, sizeof(one)) < 0 &&
		    errno != EAGAIN)
			return -errno;
		return 0;
	}
	return -ENOENT;
}

size_t ivs_server_peers(const struct ivs_server *s, uint16_t *ids, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < s->npeers; i++) {
		if (s->peers[i]->dead)
			continue;
		if (n < max)
			ids[n] = (uint16_t)s->peers[i]->id;
		n++;
	}
	return n;
}
