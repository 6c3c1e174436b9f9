// SPDX-License-Identifier: MIT
/*
 * ev-ids-proxy - the IDS host of the TraditionalChain baseline (eval/).
 *
 * A TCP-terminating proxy: accepts connections on LISTEN, opens one
 * upstream connection to UPSTREAM for each, and copies bytes both ways.
 * Every chunk read from either side goes through ids_flow_scan() (the
 * project's IDS engine, vnfs/ids/) before it is forwarded; when a drop or
 * reject rule matches, the chunk is not forwarded and both connections are
 * reset (SO_LINGER 0).  This is how an inline Snort in a VM of its own
 * sits in a classic chain: a full TCP/IP stack on each side.
 *
 *   ev-ids-proxy -l ADDR:PORT -u ADDR:PORT [-r RULES [-V VARS]] [-w N]
 *                [-p PIDFILE] [-q]
 *
 *   -r  Snort rule file; without it the ruleset is empty (the proxy still
 *       calls the engine for every chunk: plumbing without inspection)
 *   -w  worker threads (default 1), each with its own epoll loop, its own
 *       SO_REUSEPORT listening socket and its own ids_worker
 *   -p  written once every worker listens (a readiness signal)
 *   -q  do not log each deny
 * Addresses: IPv4 "a.b.c.d:port" or IPv6 "[addr]:port".
 * SIGTERM/SIGINT: workers close their connections, counters go to stderr
 * ("ev-ids-proxy: conns N denies N bytes_up N bytes_down N"), exit 0.
 *
 * THREADING.  Each worker owns its epoll set, its connections and its
 * ids_worker; nothing is shared but the immutable ruleset and the
 * counters (relaxed atomics: totals read once after the workers joined).
 * Stop: the main thread makes an eventfd readable; it sits, level-
 * triggered and never read, in every worker's epoll set.
 *
 * Connections use edge-triggered epoll; on any event both directions are
 * pumped until read or write would block, so no edge is lost.  Each
 * direction has one buffer: a chunk is read, scanned, written out, and
 * only then is the next one read (back-pressure instead of queueing).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ids.h"

#define EV_BUF		(64 * 1024)
#define EV_EVENTS	64

enum ev_side { EV_SIDE_CLIENT, EV_SIDE_UPSTREAM };

struct ev_conn;

/* epoll data: which socket of which connection (or NULL for stop/listen). */
struct ev_tag {
	struct ev_conn *conn;
	enum ev_side side;
};

/* One direction: bytes read from src, scanned, waiting in buf to reach dst. */
struct ev_half {
	size_t off, len;	/* pending bytes are buf[off, off + len) */
	bool eof;		/* src reported EOF */
	bool shut;		/* EOF passed on: shutdown(dst, SHUT_WR) */
	uint8_t buf[EV_BUF];
};

struct ev_conn {
	int cfd, ufd;
	bool connecting;	/* upstream connect() not finished */
	bool dead;		/* closed; freed after the current epoll batch */
	struct ids_flow *flow;
	struct ev_tag tag[2];
	struct ev_conn *prev, *next;	/* worker's list (for the stop) */
	struct ev_half up;	/* client -> upstream */
	struct ev_half down;	/* upstream -> client */
};

struct ev_opts {
	struct sockaddr_storage listen, upstream;
	socklen_t listen_len, upstream_len;
	struct ids_ruleset *rs;
	bool quiet;
	int stopfd;
};

struct ev_worker {
	pthread_t thread;
	const struct ev_opts *o;
	int epfd, lfd;
	struct ids_worker *ids;
	struct ev_conn *conns;	/* live connections */
	struct ev_conn *dead;	/* closed in this batch, linked by next */
};

/* epoll data of the listening socket and of the stop eventfd */
static struct ev_tag ev_tag_listen, ev_tag_stop;

static atomic_ulong ev_nconns, ev_ndenies, ev_bytes_up, ev_bytes_down;

static int ev_parse_addr(const char *s, struct sockaddr_storage *ss,
			 socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;
	size_t hl;

	if (!colon)
		return -EINVAL;
	port = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port < 1 || port > 65535)
		return -EINVAL;
	hl = (size_t)(colon - s);
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			return -EINVAL;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a);
		return 0;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*len = sizeof(*a);
		return 0;
	}
}

/* Flow identity for the rules: the client, and the address it connected to. */
static void ev_flow_key(int cfd, struct ids_flow_key *k)
{
	struct sockaddr_storage peer, local;
	socklen_t pl = sizeof(peer), ll = sizeof(local);

	memset(k, 0, sizeof(*k));
	k->family = AF_INET;
	if (getpeername(cfd, (struct sockaddr *)&peer, &pl) < 0 ||
	    getsockname(cfd, (struct sockaddr *)&local, &ll) < 0)
		return;
	if (peer.ss_family == AF_INET6) {
		const struct sockaddr_in6 *p = (void *)&peer, *l = (void *)&local;

		k->family = AF_INET6;
		memcpy(k->client_addr, &p->sin6_addr, 16);
		memcpy(k->server_addr, &l->sin6_addr, 16);
		k->client_port = ntohs(p->sin6_port);
		k->server_port = ntohs(l->sin6_port);
	} else {
		const struct sockaddr_in *p = (void *)&peer, *l = (void *)&local;

		memcpy(k->client_addr, &p->sin_addr, 4);
		memcpy(k->server_addr, &l->sin_addr, 4);
		k->client_port = ntohs(p->sin_port);
		k->server_port = ntohs(l->sin_port);
	}
}

/*
 * Closes both sockets (closing removes them from epoll); @reset sends RSTs
 * instead of FINs.  The memory is freed after the epoll batch, which may
 * still hold an event for the other socket of the same connection.
 */
static void ev_conn_close(struct ev_worker *w, struct ev_conn *c, bool reset)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (reset) {
		setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		setsockopt(c->ufd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(c->cfd);
	close(c->ufd);
	if (c->flow)
		ids_flow_destroy(c->flow);
	c->flow = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->dead = true;
	c->prev = NULL;
	c->next = w->dead;
	w->dead = c;
}

static void ev_free_dead(struct ev_worker *w)
{
	while (w->dead) {
		struct ev_conn *c = w->dead;

		w->dead = c->next;
		free(c);
	}
}

static void ev_log_deny(const struct ev_worker *w, const struct ev_conn *c,
			enum ids_dir dir, const struct ids_verdict *v, int rc)
{
	if (w->o->quiet)
		return;
	if (v->deny_rule)
		fprintf(stderr, "ev-ids-proxy: deny %s fd %d sid %u: %s\n",
			dir == IDS_TO_SERVER ? "to_server" : "to_client", c->cfd,
			v->deny_rule->sid, v->deny_rule->msg);
	else
		fprintf(stderr, "ev-ids-proxy: deny fd %d: engine error %d\n",
			c->cfd, rc);
}

/*
 * Moves one direction forward until a read or a write would block.
 * Returns 0, or -1 when the connection must be reset (deny, socket error).
 */
static int ev_half_pump(struct ev_worker *w, struct ev_conn *c,
			struct ev_half *h, int src, int dst, enum ids_dir dir)
{
	bool dst_ready = dst == c->cfd || !c->connecting;
	bool src_ready = src == c->cfd || !c->connecting;
	struct ids_verdict v;
	ssize_t n;
	int rc;

	for (;;) {
		if (h->len) {
			if (!dst_ready)
				return 0;
			n = send(dst, h->buf + h->off, h->len, MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return errno == EAGAIN ? 0 : -1;
			}
			h->off += (size_t)n;
			h->len -= (size_t)n;
			continue;
		}
		if (h->eof) {
			if (!h->shut && dst_ready) {
				shutdown(dst, SHUT_WR);
				h->shut = true;
			}
			return 0;
		}
		if (!src_ready)
			return 0;
		n = recv(src, h->buf, sizeof(h->buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -1;
		}
		if (n == 0) {
			h->eof = true;
			continue;
		}
		rc = ids_flow_scan(w->ids, c->flow, dir, h->buf, (size_t)n, &v);
		if (rc < 0 || v.decision == IDS_DENY) {
			atomic_fetch_add_explicit(&ev_ndenies, 1, memory_order_relaxed);
			ev_log_deny(w, c, dir, &v, rc);
			return -1;
		}
		atomic_fetch_add_explicit(dir == IDS_TO_SERVER ? &ev_bytes_up :
					  &ev_bytes_down, (unsigned long)n,
					  memory_order_relaxed);
		h->off = 0;
		h->len = (size_t)n;
	}
}

static void ev_conn_event(struct ev_worker *w, struct ev_tag *t, uint32_t ev)
{
	struct ev_conn *c = t->conn;

	if (c->dead)
		return;
	if (t->side == EV_SIDE_UPSTREAM && c->connecting) {
		int err = 0;
		socklen_t el = sizeof(err);

		if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
			ev_conn_close(w, c, true);
			return;
		}
		c->connecting = false;
	}
	if (ev_half_pump(w, c, &c->up, c->cfd, c->ufd, IDS_TO_SERVER) < 0 ||
	    ev_half_pump(w, c, &c->down, c->ufd, c->cfd, IDS_TO_CLIENT) < 0) {
		ev_conn_close(w, c, true);
		return;
	}
	if (c->up.shut && c->down.shut)
		ev_conn_close(w, c, false);
}

static void ev_accept(struct ev_worker *w)
{
	const int one = 1;

	for (;;) {
		struct epoll_event ee = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET };
		struct ids_flow_key key;
		struct ev_conn *c;
		int cfd, ufd;

		cfd = accept4(w->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				perror("ev-ids-proxy: accept");
			return;
		}
		ufd = socket(w->o->upstream.ss_family,
			     SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		c = ufd < 0 ? NULL : calloc(1, sizeof(*c));
		if (!c) {
			if (ufd >= 0)
				close(ufd);
			close(cfd);
			continue;
		}
		c->cfd = cfd;
		c->ufd = ufd;
		c->connecting = true;
		ev_flow_key(cfd, &key);
		c->flow = ids_flow_create(w->o->rs, &key);
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->next = w->conns;
		if (w->conns)
			w->conns->prev = c;
		w->conns = c;
		if (!c->flow) {
			ev_conn_close(w, c, true);
			continue;
		}
		if (connect(ufd, (const struct sockaddr *)&w->o->upstream,
			    w->o->upstream_len) < 0 && errno != EINPROGRESS) {
			ev_conn_close(w, c, true);
			continue;
		}
		c->tag[0] = (struct ev_tag){ c, EV_SIDE_CLIENT };
		c->tag[1] = (struct ev_tag){ c, EV_SIDE_UPSTREAM };
		ee.data.ptr = &c->tag[0];
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, cfd, &ee) < 0) {
			ev_conn_close(w, c, true);
			continue;
		}
		ee.data.ptr = &c->tag[1];
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, ufd, &ee) < 0) {
			ev_conn_close(w, c, true);
			continue;
		}
		atomic_fetch_add_explicit(&ev_nconns, 1, memory_order_relaxed);
	}
}

static void *ev_worker_main(void *arg)
{
	struct ev_worker *w = arg;
	struct epoll_event evs[EV_EVENTS];
	bool stop = false;

	while (!stop) {
		int n = epoll_wait(w->epfd, evs, EV_EVENTS, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("ev-ids-proxy: epoll_wait");
			break;
		}
		for (int i = 0; i < n; i++) {
			struct ev_tag *t = evs[i].data.ptr;

			if (t == &ev_tag_stop)
				stop = true;
			else if (t == &ev_tag_listen)
				ev_accept(w);
			else
				ev_conn_event(w, t, evs[i].events);
		}
		ev_free_dead(w);
	}
	while (w->conns)
		ev_conn_close(w, w->conns, false);
	ev_free_dead(w);
	return NULL;
}

static int ev_worker_init(struct ev_worker *w, const struct ev_opts *o)
{
	struct epoll_event ee = { .events = EPOLLIN };
	const int one = 1;

	w->o = o;
	w->epfd = -1;
	w->ids = ids_worker_create();
	if (!w->ids)
		return -errno;
	w->lfd = socket(o->listen.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (w->lfd < 0)
		goto out_ids;
	if (setsockopt(w->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(w->lfd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(w->lfd, (const struct sockaddr *)&o->listen, o->listen_len) < 0 ||
	    listen(w->lfd, 1024) < 0)
		goto out_lfd;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0)
		goto out_lfd;
	ee.data.ptr = &ev_tag_listen;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->lfd, &ee) < 0)
		goto out_ep;
	/* level-triggered and never read: wakes every worker once written */
	ee.data.ptr = &ev_tag_stop;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, o->stopfd, &ee) < 0)
		goto out_ep;
	return 0;

out_ep:
	close(w->epfd);
out_lfd:
	close(w->lfd);
out_ids:
	{
		int err = errno;

		ids_worker_destroy(w->ids);
		return -err;
	}
}

static void ev_worker_fini(struct ev_worker *w)
{
	close(w->epfd);
	close(w->lfd);
	ids_worker_destroy(w->ids);
}

static int usage(void)
{
	fprintf(stderr, "usage: ev-ids-proxy -l ADDR:PORT -u ADDR:PORT [-r RULES [-V VARS]]"
			" [-w WORKERS] [-p PIDFILE] [-q]\n");
	return 2;
}

static struct ids_ruleset *ev_load_rules(const char *rules, const char *vars)
{
	struct ids_diags d = { 0 };
	struct ids_ruleset *rs;

	if (rules)
		rs = ids_ruleset_load(rules, vars, &d);
	else
		rs = ids_ruleset_load_mem("(no rules)", "", 0, NULL, &d);
	if (!rs) {
		fprintf(stderr, "ev-ids-proxy: %s: %s\n", rules ? rules : "(no rules)",
			strerror(errno));
	} else {
		/* a skipped rule would silently weaken the baseline: refuse */
		for (size_t i = 0; i < d.n; i++)
			fprintf(stderr, "ev-ids-proxy: %s\n", d.msg[i]);
		if (d.n) {
			ids_ruleset_put(rs);
			rs = NULL;
		}
	}
	ids_diags_free(&d);
	return rs;
}

int main(int argc, char **argv)
{
	const char *rules = NULL, *vars = NULL, *pidfile = NULL;
	struct ev_opts o = { .stopfd = -1 };
	struct ev_worker *ws;
	bool have_l = false, have_u = false;
	int nworkers = 1, started = 0, opt, sig, rc = 1;
	sigset_t ss;

	while ((opt = getopt(argc, argv, "l:u:r:V:w:p:q")) != -1) {
		switch (opt) {
		case 'l':
			if (ev_parse_addr(optarg, &o.listen, &o.listen_len) < 0)
				return usage();
			have_l = true;
			break;
		case 'u':
			if (ev_parse_addr(optarg, &o.upstream, &o.upstream_len) < 0)
				return usage();
			have_u = true;
			break;
		case 'r': rules = optarg; break;
		case 'V': vars = optarg; break;
		case 'w':
			nworkers = atoi(optarg);
			if (nworkers < 1 || nworkers > 64)
				return usage();
			break;
		case 'p': pidfile = optarg; break;
		case 'q': o.quiet = true; break;
		default: return usage();
		}
	}
	if (!have_l || !have_u || optind != argc || (vars && !rules))
		return usage();

	/* Signals are taken by sigwait in this thread only. */
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	pthread_sigmask(SIG_BLOCK, &ss, NULL);

	o.rs = ev_load_rules(rules, vars);
	if (!o.rs)
		return 1;
	o.stopfd = eventfd(0, EFD_CLOEXEC);
	ws = calloc((size_t)nworkers, sizeof(*ws));
	if (o.stopfd < 0 || !ws) {
		perror("ev-ids-proxy");
		goto out_rules;
	}
	for (; started < nworkers; started++) {
		int err = ev_worker_init(&ws[started], &o);

		if (err < 0) {
			fprintf(stderr, "ev-ids-proxy: listen: %s\n", strerror(-err));
			goto out_stop;
		}
		err = pthread_create(&ws[started].thread, NULL, ev_worker_main, &ws[started]);
		if (err) {
			fprintf(stderr, "ev-ids-proxy: thread: %s\n", strerror(err));
			ev_worker_fini(&ws[started]);
			goto out_stop;
		}
	}
	fprintf(stderr, "ev-ids-proxy: %zu rules, %d workers, ready\n",
		ids_ruleset_nrules(o.rs), nworkers);
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
			perror(pidfile);
			goto out_stop;
		}
	}
	while (sigwait(&ss, &sig) != 0)
		;
	rc = 0;
out_stop:
	if (o.stopfd >= 0 && eventfd_write(o.stopfd, 1) < 0)
		perror("ev-ids-proxy: eventfd");
	for (int i = 0; i < started; i++) {
		pthread_join(ws[i].thread, NULL);
		ev_worker_fini(&ws[i]);
	}
	fprintf(stderr, "ev-ids-proxy: conns %lu denies %lu bytes_up %lu bytes_down %lu\n",
		atomic_load(&ev_nconns), atomic_load(&ev_ndenies),
		atomic_load(&ev_bytes_up), atomic_load(&ev_bytes_down));
	free(ws);
	if (o.stopfd >= 0)
		close(o.stopfd);
out_rules:
	ids_ruleset_put(o.rs);
	return rc;
}
