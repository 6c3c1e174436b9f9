// SPDX-License-Identifier: MIT
/*
 * The guest runtime's core: attaching a process to its TOE, the pump
 * that drains the channel, and the socket calls (see gl.h for locking).
 *
 * Each process has a channel of its own.  Requests and stream bytes go
 * out on TX in buffers taken from FREE; responses, events and stream
 * bytes come back on RX and are returned on DONE.  Whoever holds mu and
 * needs progress runs the pump; there is no runtime thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <stddef.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/desc.h>
#include <tochain/util.h>

#include "gl.h"

struct gl_rt gl_rt = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.conn = -1,
	.wake = { .efd_mine = -1, .efd_host = -1, .vm = { .dev = -1 } },
	.kid = { .conn = -1, .wake = { .efd_mine = -1, .efd_host = -1, .vm = { .dev = -1 } } },
};

struct gl_waiter {
	struct gl_waiter *next;
	uint32_t tag;
	uint16_t type;		/* request type */
	bool done;
	struct srpc_msg resp;
	struct gl_sock *made;	/* SOCKET/ACCEPT: the socket the pump created */
	int family;		/* its family */
};

/* ---- fd table ------------------------------------------------------------ */

static struct gl_sock **fds;
static int nfds_max;

struct gl_sock *gl_fd_sock(int fd)
{
	struct gl_sock **t = __atomic_load_n(&fds, __ATOMIC_ACQUIRE);

	if (!t || fd < 0 || fd >= nfds_max)
		return NULL;
	return __atomic_load_n(&t[fd], __ATOMIC_ACQUIRE);
}

int gl_fd_max(void)
{
	return nfds_max;
}

static int fd_table_init(void)
{
	struct rlimit rl;
	int n = 65536;
	struct gl_sock **t;

	if (fds)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
	    rl.rlim_max > (rlim_t)n)
		n = rl.rlim_max > (1u << 20) ? (1 << 20) : (int)rl.rlim_max;
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	nfds_max = n;
	__atomic_store_n(&fds, t, __ATOMIC_RELEASE);
	return 0;
}

void gl_fd_set(int fd, struct gl_sock *s)
{
	if (fds && fd >= 0 && fd < nfds_max)
		__atomic_store_n(&fds[fd], s, __ATOMIC_RELEASE);
}

void gl_lock(void)
{
	pthread_mutex_lock(&gl_rt.mu);
}

void gl_unlock(void)
{
	pthread_mutex_unlock(&gl_rt.mu);
}

/* ---- sockets ----------------------------------------------------------- */

static struct gl_sock *by_id(struct gl_rt *rt, uint64_t id)
{
	struct gl_sock *s;

	if (!rt->by_id || id == 0 || id > 0xffffffffu)
		return NULL;
	s = rt->by_id[id & 0xffff];
	return s && s->id == id ? s : NULL;
}

static struct gl_sock *sock_make(struct gl_rt *rt, uint32_t id, int family)
{
	struct gl_sock *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = id;
	s->family = family;
	s->rcvtimeo_ms = s->sndtimeo_ms = -1;
	rt->by_id[id & 0xffff] = s;
	return s;
}

static void done_flush(struct gl_rt *rt)
{
	uint32_t off = 0;

	while (off < rt->ndone) {
		int k = tcr_ring_enqueue_burst(&rt->ch.ring[TCR_CH_DONE], rt->done + off,
					       rt->ndone - off);
		if (k <= 0)
			break;	/* cannot happen: the ring holds every buffer */
		off += (uint32_t)k;
	}
	rt->ndone = 0;
	if (off && tcr_ring_prod_kick_needed(&rt->ch.ring[TCR_CH_DONE]))
		gl_wake_host(&rt->wake);
}

static void done_add(struct gl_rt *rt, uint32_t idx)
{
	rt->done[rt->ndone++] = idx;
	if (rt->ndone == sizeof(rt->done) / sizeof(rt->done[0]))
		done_flush(rt);
}

static void fork_data_free(struct gl_sock *s)
{
	free(s->fk);
	free(s->pre);
	s->fk = s->pre = NULL;
	s->fk_len = s->pre_len = s->pre_off = 0;
	s->fk_mine = false;
}

static void rxq_drop(struct gl_rt *rt, struct gl_sock *s)
{
	while (s->rx_n) {
		done_add(rt, s->rxq[s->rx_head]);
		s->rx_head = (s->rx_head + 1) % s->rx_cap;
		s->rx_n--;
	}
	s->rx_bytes = 0;
	s->rx_off = 0;
	s->frozen = false;
	s->frozen_n = 0;
	s->frozen_bytes = 0;
	fork_data_free(s);
}

static void send_close(struct gl_rt *rt, uint32_t id);

void gl_sock_put(struct gl_rt *rt, struct gl_sock *s)
{
	if (--s->refs > 0)
		return;
	gl_epoll_forget_sock(s);
	if (rt->attached && !rt->broken) {
		rxq_drop(rt, s);
		done_flush(rt);
		send_close(rt, s->id);
	}
	if (rt->by_id && rt->by_id[s->id & 0xffff] == s)
		rt->by_id[s->id & 0xffff] = NULL;
	fork_data_free(s);
	free(s->rxq);
	free(s);
}

/* ---- attaching ------------------------------------------------------------ */

static int handshake(struct gl_rt *rt, struct srpc_welcome *w)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct srpc_hello h = { SRPC_HELLO_MAGIC, SRPC_VERSION, (uint32_t)getpid(), 0 };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct timeval tv = { .tv_sec = 5 };
	struct cmsghdr *cm;
	ssize_t n;

	if (snprintf(sun.sun_path, sizeof(sun.sun_path), "%s.sock", rt->path) >=
	    (int)sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	/*
	 * Not close-on-exec: across exec the old channel must live until
	 * the new image has adopted the sockets it inherits (gl_after_exec).
	 */
	rt->conn = gl_real.socket(AF_UNIX, SOCK_STREAM, 0);
	if (rt->conn < 0)
		return -errno;
	gl_real.setsockopt(rt->conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (gl_real.connect(rt->conn, (struct sockaddr *)&sun, sizeof(sun)))
		return -errno;
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &rt->wake.efd_mine, sizeof(int));
	if (gl_real.sendmsg(rt->conn, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		return -EIO;

	memset(cbuf, 0, sizeof(cbuf));
	iov.iov_base = w;
	iov.iov_len = sizeof(*w);
	mh.msg_controllen = sizeof(cbuf);
	do
		n = gl_real.recvmsg(rt->conn, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*w) || w->magic != SRPC_WELCOME_MAGIC)
		return -EPROTO;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&rt->wake.efd_host, CMSG_DATA(cm), sizeof(int));
	if (w->status)
		return w->status;
	return rt->wake.efd_host >= 0 ? 0 : -EPROTO;
}

static void detach(struct gl_rt *rt)
{
	if (rt->conn >= 0)
		gl_real.close(rt->conn);
	rt->conn = -1;
	gl_wake_close(&rt->wake);
	rt->attached = false;
	rt->nstash = 0;
	rt->ndone = 0;
}

static int attach(struct gl_rt *rt)
{
	struct srpc_welcome w;
	uint32_t nbufs;
	int err;

	if (!rt->r) {
		rt->r = tcr_region_attach(rt->path, TCR_ATTACH_GUEST);
		if (!rt->r)
			return -ENETDOWN;
		nbufs = rt->r->geo.nbufs;
		rt->tx_bound = GL_TX_BYTES / rt->r->geo.slot_size;
		if (rt->tx_bound < GL_TX_MIN)
			rt->tx_bound = GL_TX_MIN;
		rt->stash = calloc(nbufs, sizeof(uint32_t));
		rt->buf_off = calloc(nbufs, sizeof(uint32_t));
		rt->buf_len = calloc(nbufs, sizeof(uint32_t));
		if (!rt->by_id)
			rt->by_id = calloc(65536, sizeof(*rt->by_id));
		if (!rt->stash || !rt->buf_off || !rt->buf_len || !rt->by_id)
			return -ENOMEM;
	}
	if (rt->vm) {
		/* inside a VM: a channel the host link attached, claimed through the driver */
		err = gl_vm_claim(rt, &w.channel, &w.epoch);
		if (err == -ENOBUFS)
			err = -EBUSY;
	} else {
		rt->wake.efd_mine = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (rt->wake.efd_mine < 0)
			return -errno;
		err = handshake(rt, &w);
	}
	if (!err)
		err = tcr_chan_attach(&rt->ch, rt->r, w.channel, 0);
	if (err) {
		detach(rt);
		return err == -EBUSY ? -ENOBUFS : -ENETDOWN;
	}
	rt->pid = getpid();
	rt->chan_no = w.channel;
	rt->chan_epoch = w.epoch;
	rt->attached = true;
	rt->broken = false;
	return 0;
}

int gl_ensure(struct gl_rt *rt)
{
	int err;

	if (!rt->configured)
		return -EAFNOSUPPORT;
	if (rt->broken)
		return -ENETDOWN;
	if (rt->attached)
		return 0;
	err = fd_table_init();
	if (!err)
		err = attach(rt);
	if (err && err != -ENOBUFS)
		rt->broken = true;
	return err;
}

/* ---- the pump ------------------------------------------------------------ */

/*
 * EV_OWNER: a = 0, another holder took the socket (read again only after
 * TAKE); a = 1, we own it, and with b = 1 the data of the fork is ours:
 * the parent keeps its frozen buffers, a child reads its copy.  Without
 * b the frozen data went to another holder: drop it.
 */
static void owner_event(struct gl_rt *rt, struct gl_sock *s, const struct srpc_msg *m)
{
	if (m->a == 0) {
		s->need_take = true;
		s->take_posted = false;
		return;
	}
	if (!s->need_take)
		return;	/* a repeated TAKE's answer */
	s->need_take = false;
	s->take_posted = false;
	if (m->b == 1 && s->fk_mine) {
		free(s->pre);
		s->pre = s->fk;
		s->pre_len = s->fk_len;
		s->pre_off = 0;
		s->rx_bytes += s->fk_len;
		s->fk = NULL;
		s->fk_len = 0;
	} else if (m->b != 1 && s->frozen) {
		/* another holder read the bytes received before the fork */
		while (s->frozen_n && s->rx_n) {
			done_add(rt, s->rxq[s->rx_head]);
			s->rx_head = (s->rx_head + 1) % s->rx_cap;
			s->rx_n--;
			s->frozen_n--;
		}
		s->rx_off = 0;
		s->rx_bytes = s->rx_bytes > s->frozen_bytes ? s->rx_bytes - s->frozen_bytes : 0;
		free(s->pre);
		s->pre = NULL;
		s->pre_len = s->pre_off = 0;
		done_flush(rt);
	}
	s->frozen = false;
	s->frozen_n = 0;
	s->frozen_bytes = 0;
	free(s->fk);
	s->fk = NULL;
	s->fk_len = 0;
	s->fk_mine = false;
}

static void event(struct gl_rt *rt, const struct srpc_msg *m)
{
	struct gl_sock *s = by_id(rt, m->sock);

	if (!s)
		return;
	s->rseq++;	/* events: both directions may change */
	s->wseq++;
	if (s->dgram) {
		/* UDP: an error for the next call (ICMP, unreachable), nothing closes */
		if (m->type == SRPC_EV_ERROR && m->a > 0)
			s->err = m->a;
		return;
	}
	switch (m->type) {
	case SRPC_EV_OWNER:
		owner_event(rt, s, m);
		break;
	case SRPC_EV_CONNECTED:
		s->connecting = false;
		s->connect_unseen = true;	/* the next connect() reports it */
		if (m->a > 0) {
			s->so_error = m->a;
			s->reset = true;
		} else {
			s->connected = true;
		}
		break;
	case SRPC_EV_ACCEPTABLE:
		s->acceptable = m->a != 0;	/* 0: a sibling took the last one */
		break;
	case SRPC_EV_EOF:
		s->eof = true;
		break;
	case SRPC_EV_ERROR:
		s->reset = true;
		s->eof = true;
		s->err = m->a > 0 ? m->a : ECONNRESET;
		break;
	}
}

static void response(struct gl_rt *rt, const struct srpc_msg *m)
{
	for (struct gl_waiter *w = rt->waiters; w; w = w->next) {
		if (w->tag != m->tag || w->done)
			continue;
		w->resp = *m;
		w->done = true;
		/*
		 * A new socket exists from now on: data for it may follow on
		 * this very ring before the caller runs again.
		 */
		if ((w->type == SRPC_REQ_SOCKET || w->type == SRPC_REQ_ACCEPT) && m->a > 0) {
			w->made = sock_make(rt, (uint32_t)m->a, w->family);
			if (w->made && w->type == SRPC_REQ_ACCEPT)
				w->made->connected = true;
		}
		return;
	}
}

static bool rxq_push(struct gl_sock *s, uint32_t idx)
{
	if (s->rx_n == s->rx_cap) {
		uint32_t cap = s->rx_cap ? s->rx_cap * 2 : 32;
		uint32_t *q = malloc(cap * sizeof(*q));

		if (!q)
			return false;
		for (uint32_t i = 0; i < s->rx_n; i++)
			q[i] = s->rxq[(s->rx_head + i) % s->rx_cap];
		free(s->rxq);
		s->rxq = q;
		s->rx_cap = cap;
		s->rx_head = 0;
	}
	s->rxq[(s->rx_head + s->rx_n) % s->rx_cap] = idx;
	s->rx_n++;
	return true;
}

static void take_rx(struct gl_rt *rt, uint32_t idx)
{
	struct tcr_desc d;
	struct srpc_msg m;
	struct gl_sock *s;

	if (tcr_desc_load(rt->r, idx, &d)) {
		done_add(rt, idx);
		return;
	}
	if (d.op == TCR_OP_DATA) {
		s = by_id(rt, d.conn_id);
		if (!s || s->shut_rd || d.len == 0 || (s->dgram && d.len < SRPC_DGRAM_HDR) ||
		    !rxq_push(s, idx)) {
			done_add(rt, idx);
			return;
		}
		rt->buf_off[idx] = d.off;
		rt->buf_len[idx] = d.len;
		s->rx_bytes += s->dgram ? d.len - SRPC_DGRAM_HDR : d.len;
		s->rseq++;
		return;
	}
	if (d.op == TCR_OP_CTRL &&
	    srpc_decode_msg(tcr_region_slot(rt->r, idx) + d.off, d.len, &m) == 0) {
		if (m.type == SRPC_RESP)
			response(rt, &m);
		else
			event(rt, &m);
	}
	done_add(rt, idx);
}

static void take_free(struct gl_rt *rt, uint32_t idx)
{
	struct tcr_desc d;

	if (tcr_desc_load(rt->r, idx, &d) == 0 && d.arg == SRPC_FREE_TXDONE) {
		struct gl_sock *s = by_id(rt, d.conn_id);

		if (s && s->tx_inflight) {
			s->tx_inflight--;
			s->wseq++;
		}
	}
	rt->stash[rt->nstash++] = idx;
}

void gl_pump(struct gl_rt *rt)
{
	uint32_t idx[64];
	bool took = false;
	int k;

	if (!rt->attached || rt->broken)
		return;
	if (tcr_chan_stale(&rt->ch)) {
		rt->broken = true;
		gl_wake_sleepers(rt);
		return;
	}
	while ((k = tcr_ring_dequeue_burst(&rt->ch.ring[TCR_CH_RX], idx, 64)) > 0) {
		took = true;
		for (int i = 0; i < k; i++)
			take_rx(rt, idx[i]);
	}
	if (k < 0)
		rt->broken = true;
	while (rt->nstash < rt->r->geo.nbufs &&
	       (k = tcr_ring_dequeue_burst(&rt->ch.ring[TCR_CH_FREE], idx, 64)) > 0) {
		took = true;
		for (int i = 0; i < k && rt->nstash < rt->r->geo.nbufs; i++)
			take_free(rt, idx[i]);
	}
	done_flush(rt);
	/* what we took may be what another thread sleeps for (gl_wait.c, rule 2) */
	if ((took || rt->broken) && rt->sleepers)
		gl_wake_sleepers(rt);
}

/*
 * Would the kernel restart a call the signal just interrupted?  We do not
 * know which signal it was: restart only if every caught signal has
 * SA_RESTART (then whichever it was, the kernel would have restarted).
 */
static bool restart_ok(void)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa))
			continue;
		if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
			continue;
		if (!(sa.sa_flags & SA_RESTART))
			return false;
	}
	return true;
}

/*
 * Sleep once, bounded by @deadline (ns, -1 none).  0: woken, look again;
 * -EAGAIN: deadline passed; -EINTR.
 */
static int wait_once(struct gl_rt *rt, int64_t deadline)
{
	int ms = -1, r;

	if (rt->broken || !rt->attached)
		return -ENETDOWN;
	if (deadline >= 0) {
		int64_t left = deadline - (int64_t)tu_now_ns();

		if (left <= 0)
			return -EAGAIN;
		ms = (int)((left + 999999) / 1000000);
	}
	r = gl_sleep(rt, NULL, 0, ms, NULL);
	if (rt->broken)
		return -ENETDOWN;
	/* As the kernel: SA_RESTART restarts a call without a socket timeout. */
	if (r == -EINTR && deadline < 0 && restart_ok())
		return 0;
	return r < 0 ? r : 0;
}

static int64_t deadline_of(int ms)
{
	return ms < 0 ? -1 : (int64_t)tu_now_ns() + (int64_t)ms * 1000000;
}

/* ---- sending --------------------------------------------------------------- */

/* A FREE buffer, or -EAGAIN without one (no wait). */
static int take_buf(struct gl_rt *rt, uint32_t *idx)
{
	if (rt->nstash == 0)
		gl_pump(rt);
	if (rt->nstash == 0)
		return -EAGAIN;
	*idx = rt->stash[--rt->nstash];
	return 0;
}

static void submit(struct gl_rt *rt, uint32_t idx, enum tcr_op op, uint32_t sock, uint32_t len)
{
	struct tcr_desc d = { 0 };

	d.slot = idx;
	d.len = len;
	d.op = (uint16_t)op;
	d.conn_id = sock;
	d.l4proto = 6;
	tcr_desc_store(rt->r, idx, &d);
	if (tcr_ring_enqueue_burst(&rt->ch.ring[TCR_CH_TX], &idx, 1) != 1) {
		rt->broken = true;
		return;
	}
	if (tcr_ring_prod_kick_needed(&rt->ch.ring[TCR_CH_TX]))
		gl_wake_host(&rt->wake);
}

/* Send a request; with @w, register it to wait for the response. */
static int post(struct gl_rt *rt, struct gl_waiter *w, enum srpc_type type, uint32_t sock,
		int a, int b, int c, const void *data, size_t dlen)
{
	struct srpc_msg m;
	uint32_t idx;
	int err;

	if (++rt->tag == 0)
		rt->tag = 1;
	err = srpc_encode(&m, type, rt->tag, sock, a, b, c, data, dlen);
	if (err)
		return err;
	while (take_buf(rt, &idx)) {
		err = wait_once(rt, -1);
		if (err && err != -EINTR)
			return err;
	}
	memcpy(tcr_region_slot(rt->r, idx), &m, srpc_msg_size(&m));
	if (w) {
		/* w->family is the caller's */
		w->done = false;
		w->made = NULL;
		w->tag = m.tag;
		w->type = (uint16_t)type;
		w->next = rt->waiters;
		rt->waiters = w;
	}
	submit(rt, idx, TCR_OP_CTRL, 0, (uint32_t)srpc_msg_size(&m));
	return rt->broken ? -ENETDOWN : 0;
}

static void unlink_waiter(struct gl_rt *rt, struct gl_waiter *w)
{
	for (struct gl_waiter **p = &rt->waiters; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			return;
		}
}

/* A call: post and wait for the answer (signals do not interrupt it). */
static int call(struct gl_rt *rt, struct gl_waiter *w, enum srpc_type type, uint32_t sock,
		int a, int b, int c, const void *data, size_t dlen)
{
	int err = post(rt, w, type, sock, a, b, c, data, dlen);

	if (err)
		return err;
	for (;;) {
		gl_pump(rt);
		if (w->done)
			break;
		err = wait_once(rt, -1);
		if (err && err != -EINTR) {
			unlink_waiter(rt, w);
			return err;
		}
	}
	unlink_waiter(rt, w);
	return w->resp.a;
}

static void send_close(struct gl_rt *rt, uint32_t id)
{
	post(rt, NULL, SRPC_REQ_CLOSE, id, 0, 0, 0, NULL, 0);
}

/* Become the owner of shared @s before reading it (waits for the TOE's answer). */
static int claim(struct gl_rt *rt, struct gl_sock *s)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (!s->need_take)
		return 0;
	ret = call(rt, &w, SRPC_REQ_TAKE, s->id, 0, 0, 0, NULL, 0);
	if (ret == 0)
		s->need_take = false;	/* EV_OWNER came first and settled the data */
	return ret;
}

/* ---- the calls -------------------------------------------------------------- */

int gl_new_fd(struct gl_rt *rt, struct gl_sock *s, bool cloexec)
{
	char name[40];
	int fd;

	(void)rt;
	snprintf(name, sizeof(name), "tochain-sock-%u", s->id);
	fd = memfd_create(name, cloexec ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -errno;
	if (fd >= nfds_max) {
		gl_real.close(fd);
		return -EMFILE;
	}
	if (s->nonblock)
		gl_real.fcntl(fd, F_SETFL, O_NONBLOCK);	/* F_GETFL shows it */
	s->refs++;
	gl_fd_set(fd, s);
	return fd;
}

static uint32_t sock_flags_ok(int type)
{
	return (uint32_t)(type & (SOCK_NONBLOCK | SOCK_CLOEXEC));
}

int gl_socket(struct gl_rt *rt, int domain, int type, int protocol)
{
	struct gl_waiter w = { .family = domain };
	int ret, fd;

	ret = gl_ensure(rt);
	if (ret)
		return ret;
	ret = call(rt, &w, SRPC_REQ_SOCKET, 0, domain, type & ~(int)sock_flags_ok(type),
		   protocol, NULL, 0);
	if (ret < 0)
		return ret;
	if (!w.made)
		return -ENOMEM;
	w.made->nonblock = (type & SOCK_NONBLOCK) != 0;
	w.made->dgram = (type & ~(int)sock_flags_ok(type)) == SOCK_DGRAM;
	fd = gl_new_fd(rt, w.made, (type & SOCK_CLOEXEC) != 0);
	if (fd < 0) {
		w.made->refs = 1;
		gl_sock_put(rt, w.made);
	}
	return fd;
}

static int check_addr(const struct gl_sock *s, const struct sockaddr *a, socklen_t l)
{
	sa_family_t f;

	if (!a)
		return -EFAULT;
	if (l < sizeof(sa_family_t) || l > sizeof(struct sockaddr_storage))
		return -EINVAL;
	memcpy(&f, a, sizeof(f));
	if (s->family == AF_INET && f != AF_INET)
		return f == AF_UNSPEC ? -EAFNOSUPPORT : -EAFNOSUPPORT;
	if (l < srpc_sockaddr_min(f))
		return -EINVAL;
	return 0;
}

int gl_bind(struct gl_rt *rt, struct gl_sock *s, const struct sockaddr *a, socklen_t l)
{
	struct gl_waiter w = { 0 };
	int err = check_addr(s, a, l);

	if (err)
		return err;
	return call(rt, &w, SRPC_REQ_BIND, s->id, 0, 0, 0, a,
		    l > SRPC_DATA_MAX ? SRPC_DATA_MAX : l);
}

int gl_listen(struct gl_rt *rt, struct gl_sock *s, int backlog)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (s->dgram)
		return -EOPNOTSUPP;
	if (s->connected || s->connecting)
		return -EINVAL;
	ret = call(rt, &w, SRPC_REQ_LISTEN, s->id, backlog, 0, 0, NULL, 0);
	if (ret == 0 && !s->listening) {
		s->listening = true;
		s->acceptable = false;
		s->rseq++;
	}
	return ret;
}

static void copy_addr(const struct srpc_msg *m, struct sockaddr *a, socklen_t *l)
{
	socklen_t real = m->dlen;

	if (!a || !l)
		return;
	memcpy(a, m->data, *l < real ? *l : real);
	*l = real;
}

int gl_accept(struct gl_rt *rt, struct gl_sock *s, struct sockaddr *a, socklen_t *l, int flags)
{
	int64_t deadline = deadline_of(s->rcvtimeo_ms);
	struct gl_waiter w;
	int ret, fd;

	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return -EINVAL;
	if (s->dgram)
		return -EOPNOTSUPP;
	if (!s->listening)
		return -EINVAL;
	if (a && !l)
		return -EFAULT;
	for (;;) {
		w.family = s->family;
		/*
		 * Not acceptable from before the call: an ACCEPTABLE event may
		 * be pumped together with the response, and must win.
		 */
		if (s->acceptable) {
			s->acceptable = false;
			s->rseq++;
		}
		ret = call(rt, &w, SRPC_REQ_ACCEPT, s->id, 0, 0, 0, NULL, 0);
		if (ret > 0)
			break;
		if (ret != -EAGAIN)
			return ret;
		if (s->nonblock)
			return -EAGAIN;
		while (!s->acceptable) {
			int err;

			gl_pump(rt);
			if (s->acceptable)
				break;
			err = wait_once(rt, deadline);
			if (err)
				return err;
		}
	}
	if (!w.made)
		return -ENOMEM;
	if (w.resp.b && !s->acceptable) {
		s->acceptable = true;	/* more are waiting */
		s->rseq++;
	}
	w.made->nonblock = (flags & SOCK_NONBLOCK) != 0;
	copy_addr(&w.resp, a, l);
	fd = gl_new_fd(rt, w.made, (flags & SOCK_CLOEXEC) != 0);
	if (fd < 0) {
		w.made->refs = 1;
		gl_sock_put(rt, w.made);
	}
	return fd;
}

int gl_connect(struct gl_rt *rt, struct gl_sock *s, const struct sockaddr *a, socklen_t l)
{
	int64_t deadline = deadline_of(s->sndtimeo_ms);
	struct gl_waiter w = { 0 };
	int ret = check_addr(s, a, l);

	if (ret)
		return ret;
	if (s->dgram) {
		ret = call(rt, &w, SRPC_REQ_CONNECT, s->id, 0, 0, 0, a,
			   l > SRPC_DATA_MAX ? SRPC_DATA_MAX : l);
		if (ret == 0 && !s->connected) {
			s->connected = true;
			s->wseq++;
		}
		return ret;
	}
	if (s->listening)
		return -EISCONN;
	gl_pump(rt);
	if (s->connect_unseen && !s->connecting) {
		/* as the kernel: the first connect() after completion reports it */
		s->connect_unseen = false;
		if (s->connected)
			return 0;
		ret = s->so_error ? s->so_error : ECONNABORTED;
		s->so_error = 0;
		return -ret;
	}
	if (s->connected)
		return -EISCONN;
	if (!s->connecting) {
		if (s->reset)
			return -ECONNABORTED;
		/*
		 * Connecting from before the call: the completion event may be
		 * pumped together with the response, before we look at it.
		 */
		s->connecting = true;
		ret = call(rt, &w, SRPC_REQ_CONNECT, s->id, 0, 0, 0, a,
			   l > SRPC_DATA_MAX ? SRPC_DATA_MAX : l);
		if (ret != -EINPROGRESS)
			s->connecting = false;
		if (ret == 0) {
			s->connected = true;
			s->wseq++;
			return 0;
		}
		if (ret != -EINPROGRESS)
			return ret;
		if (s->nonblock)
			return -EINPROGRESS;
	} else if (s->nonblock) {
		return -EALREADY;
	}
	while (s->connecting) {
		gl_pump(rt);
		if (!s->connecting)
			break;
		ret = wait_once(rt, deadline);
		if (ret == -EAGAIN)
			return -EINPROGRESS;
		if (ret)
			return ret;
	}
	s->connect_unseen = false;
	if (s->so_error) {
		ret = s->so_error;
		s->so_error = 0;
		return -ret;
	}
	return 0;
}

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len > SSIZE_MAX - t)
			return SSIZE_MAX;
		t += iov[i].iov_len;
	}
	return t;
}

/* Copy @len bytes from the iovec array at byte @pos into @dst. */
static void iov_gather(const struct iovec *iov, int n, size_t pos, uint8_t *dst, size_t len)
{
	for (int i = 0; i < n && len; i++) {
		size_t l = iov[i].iov_len;

		if (pos >= l) {
			pos -= l;
			continue;
		}
		size_t k = l - pos < len ? l - pos : len;

		memcpy(dst, (const uint8_t *)iov[i].iov_base + pos, k);
		dst += k;
		len -= k;
		pos = 0;
	}
}

static void iov_scatter(const struct iovec *iov, int n, size_t pos, const uint8_t *src, size_t len)
{
	for (int i = 0; i < n && len; i++) {
		size_t l = iov[i].iov_len;

		if (pos >= l) {
			pos -= l;
			continue;
		}
		size_t k = l - pos < len ? l - pos : len;

		memcpy((uint8_t *)iov[i].iov_base + pos, src, k);
		src += k;
		len -= k;
		pos = 0;
	}
}

ssize_t gl_sendv(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n, int flags)
{
	int64_t deadline = deadline_of(s->sndtimeo_ms);
	size_t total = iov_total(iov, n), sent = 0;
	uint32_t slot = rt->r->geo.slot_size;
	bool nb = s->nonblock || (flags & MSG_DONTWAIT);

	while (s->connecting && !nb) {
		int err;

		gl_pump(rt);
		if (!s->connecting)
			break;
		err = wait_once(rt, deadline);
		if (err)
			return err;
	}
	if (s->connecting)
		return -EAGAIN;
	if (s->err) {
		int e = s->err;

		s->err = 0;
		return -e;
	}
	if (s->shut_wr || s->reset || !s->connected)
		return -EPIPE;
	while (sent < total) {
		uint32_t idx, k;
		int err;

		if (s->tx_inflight >= rt->tx_bound || rt->nstash <= GL_CTRL_RESERVE)
			gl_pump(rt);
		if (s->reset)
			break;
		if (s->tx_inflight < rt->tx_bound && rt->nstash > GL_CTRL_RESERVE &&
		    take_buf(rt, &idx) == 0) {
			k = total - sent < slot ? (uint32_t)(total - sent) : slot;
			iov_gather(iov, n, sent, tcr_region_slot(rt->r, idx), k);
			s->tx_inflight++;
			submit(rt, idx, TCR_OP_DATA, s->id, k);
			sent += k;
			continue;
		}
		if (sent && nb)
			break;
		if (nb)
			return -EAGAIN;
		err = wait_once(rt, deadline);
		if (err)
			return sent ? (ssize_t)sent : err;
	}
	if (!sent && s->reset) {
		int e = s->err ? s->err : EPIPE;

		s->err = 0;
		return -e;
	}
	return (ssize_t)sent;
}

ssize_t gl_dgram_send(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		      int flags, const struct sockaddr *a, socklen_t l)
{
	int64_t deadline = deadline_of(s->sndtimeo_ms);
	size_t total = iov_total(iov, n);
	bool nb = s->nonblock || (flags & MSG_DONTWAIT);
	struct srpc_dgram h;

	memset(&h, 0, sizeof(h));
	if (a) {
		int err = check_addr(s, a, l);

		if (err)
			return err;
		h.addrlen = l < SRPC_DGRAM_ADDR_MAX ? l : SRPC_DGRAM_ADDR_MAX;
		memcpy(h.addr, a, h.addrlen);
	} else if (!s->connected) {
		return -EDESTADDRREQ;
	}
	if (s->shut_wr)
		return -EPIPE;
	gl_pump(rt);
	if (s->err) {
		int e = s->err;

		s->err = 0;
		return -e;
	}
	if (total > rt->r->geo.slot_size - SRPC_DGRAM_HDR)
		return -EMSGSIZE;
	for (;;) {
		uint32_t idx;
		int err;

		if (s->tx_inflight >= rt->tx_bound || rt->nstash <= GL_CTRL_RESERVE)
			gl_pump(rt);
		if (s->tx_inflight < rt->tx_bound && rt->nstash > GL_CTRL_RESERVE &&
		    take_buf(rt, &idx) == 0) {
			uint8_t *slot = tcr_region_slot(rt->r, idx);

			memcpy(slot, &h, sizeof(h));
			iov_gather(iov, n, 0, slot + SRPC_DGRAM_HDR, total);
			s->tx_inflight++;
			submit(rt, idx, TCR_OP_DATA, s->id, SRPC_DGRAM_HDR + (uint32_t)total);
			return rt->broken ? -ENETDOWN : (ssize_t)total;
		}
		if (nb)
			return -EAGAIN;
		err = wait_once(rt, deadline);
		if (err)
			return err;
	}
}

ssize_t gl_dgram_recv(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		      int flags, struct sockaddr *a, socklen_t *l, int *mflags)
{
	int64_t deadline = deadline_of(s->rcvtimeo_ms);
	size_t total = iov_total(iov, n);
	bool nb = s->nonblock || (flags & MSG_DONTWAIT);

	if (a && !l)
		return -EFAULT;
	for (;;) {
		int err;

		gl_pump(rt);
		if (s->rx_n) {
			uint32_t idx = s->rxq[s->rx_head];
			const uint8_t *p = tcr_region_slot(rt->r, idx) + rt->buf_off[idx];
			uint32_t plen = rt->buf_len[idx] - SRPC_DGRAM_HDR;
			size_t k = total < plen ? total : plen;
			struct sockaddr_storage ss;
			socklen_t sl;
			struct srpc_dgram h;

			/* the TOE's header: one copy, then checked */
			memcpy(&h, p, sizeof(h));
			iov_scatter(iov, n, 0, p + SRPC_DGRAM_HDR, k);
			if (srpc_dgram_addr(&h, &ss, &sl))
				sl = 0;
			if (a) {
				memcpy(a, &ss, *l < sl ? *l : sl);
				*l = sl;
			}
			if (mflags && (k < plen || (h.flags & SRPC_DGRAM_TRUNC)))
				*mflags |= MSG_TRUNC;
			if (!(flags & MSG_PEEK)) {
				s->rx_head = (s->rx_head + 1) % s->rx_cap;
				s->rx_n--;
				s->rx_bytes -= plen;
				done_add(rt, idx);
				done_flush(rt);
			}
			return (flags & MSG_TRUNC) ? (ssize_t)plen : (ssize_t)k;
		}
		if (s->err) {
			err = s->err;
			s->err = 0;
			return -err;
		}
		if (s->shut_rd)
			return 0;
		if (nb)
			return -EAGAIN;
		err = wait_once(rt, deadline);
		if (err)
			return err;
	}
}

ssize_t gl_sendfile(struct gl_rt *rt, struct gl_sock *s, int in_fd, off_t *off, size_t count)
{
	uint8_t *buf;
	size_t chunk = count < 65536 ? count : 65536;
	ssize_t done = 0;

	if (count == 0)
		return 0;
	buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	while ((size_t)done < count) {
		size_t want = count - (size_t)done < chunk ? count - (size_t)done : chunk;
		ssize_t n = off ? pread(in_fd, buf, want, *off) : gl_real.read(in_fd, buf, want);
		struct iovec iov;
		ssize_t w;

		if (n < 0) {
			if (!done)
				done = -errno;
			break;
		}
		if (n == 0)
			break;
		iov.iov_base = buf;
		iov.iov_len = (size_t)n;
		w = gl_sendv(rt, s, &iov, 1, 0);
		if (w < 0) {
			if (!off)	/* give back what we read but could not send */
				lseek(in_fd, -n, SEEK_CUR);
			if (!done)
				done = w;
			break;
		}
		if (off)
			*off += w;
		else if (w < n)
			lseek(in_fd, w - n, SEEK_CUR);
		done += w;
		if (w < n)
			break;
	}
	free(buf);
	return done;
}

ssize_t gl_recvv(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n, int flags)
{
	int64_t deadline = deadline_of(s->rcvtimeo_ms);
	size_t total = iov_total(iov, n), got = 0;
	bool nb = s->nonblock || (flags & MSG_DONTWAIT);
	bool peek = flags & MSG_PEEK;

	if (s->listening || (!s->connected && !s->connecting && !s->reset))
		return -ENOTCONN;
	for (;;) {
		int err;

		/* shared after a fork (maybe by another thread while we slept): own it first */
		if (s->need_take) {
			err = claim(rt, s);
			if (err)
				return got ? (ssize_t)got : err;
		}
		gl_pump(rt);
		/* first what a fork handed us (a copy), then what is queued */
		if (s->pre && got < total) {
			size_t k = s->pre_len - s->pre_off;

			k = total - got < k ? total - got : k;
			iov_scatter(iov, n, got, s->pre + s->pre_off, k);
			got += k;
			if (!peek) {
				s->pre_off += k;
				s->rx_bytes -= k;
				if (s->pre_off == s->pre_len) {
					free(s->pre);
					s->pre = NULL;
					s->pre_len = s->pre_off = 0;
				}
			}
		}
		uint32_t pos = s->rx_head, left = s->rx_n, off = s->rx_off;

		while (got < total && left) {
			uint32_t idx = s->rxq[pos];
			uint32_t avail = rt->buf_len[idx] - off;
			size_t k = total - got < avail ? total - got : avail;

			iov_scatter(iov, n, got, tcr_region_slot(rt->r, idx) + rt->buf_off[idx] + off, k);
			got += k;
			off += (uint32_t)k;
			if (off == rt->buf_len[idx]) {
				pos = (pos + 1) % s->rx_cap;
				left--;
				off = 0;
				if (!peek) {
					done_add(rt, idx);
					s->rx_head = pos;
					s->rx_n = left;
				}
			}
			if (!peek) {
				s->rx_off = off;
				s->rx_bytes -= k;
			}
		}
		if (!peek && got)
			done_flush(rt);
		if (got == total || (got && !(flags & MSG_WAITALL)) || (got && peek))
			return (ssize_t)got;
		if (s->rx_bytes == 0 && s->err) {
			int e = s->err;

			s->err = 0;
			return got ? (ssize_t)got : -e;
		}
		if (s->eof || s->shut_rd)
			return (ssize_t)got;
		if (nb)
			return got ? (ssize_t)got : -EAGAIN;
		err = wait_once(rt, deadline);
		if (err)
			return got ? (ssize_t)got : err;
		if (s->connecting)
			continue;
	}
}

int gl_shutdown(struct gl_rt *rt, struct gl_sock *s, int how)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return -EINVAL;
	if (!s->connected && !s->listening)
		return -ENOTCONN;
	ret = call(rt, &w, SRPC_REQ_SHUTDOWN, s->id, how, 0, 0, NULL, 0);
	if (ret)
		return ret;
	if (how != SHUT_WR) {
		s->shut_rd = true;
		rxq_drop(rt, s);
		done_flush(rt);
	}
	if (how != SHUT_RD)
		s->shut_wr = true;
	s->rseq++;
	s->wseq++;
	gl_wake_sleepers(rt);	/* a recv or poll of another thread may end now */
	return 0;
}

static int timeo_ms(const void *v, socklen_t l)
{
	struct timeval tv;

	if (l < sizeof(tv))
		return -EINVAL;
	memcpy(&tv, v, sizeof(tv));
	if (tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000)
		return -EDOM;
	if (tv.tv_sec == 0 && tv.tv_usec == 0)
		return -1;
	if (tv.tv_sec > INT_MAX / 1000 - 1)
		return INT_MAX;
	return (int)(tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000);
}

int gl_setsockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, const void *v,
		  socklen_t l)
{
	struct gl_waiter w = { 0 };
	int err;

	if (!v && l)
		return -EFAULT;
	if (level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO)) {
		int ms = timeo_ms(v, l);

		if (ms < -1)
			return ms;
		if (name == SO_RCVTIMEO)
			s->rcvtimeo_ms = ms;
		else
			s->sndtimeo_ms = ms;
		return 0;
	}
	err = srpc_check_sockopt(level, name, l, true);
	if (err)
		return err;
	return call(rt, &w, SRPC_REQ_SETSOCKOPT, s->id, level, name, 0, v, l);
}

static void put_int(void *v, socklen_t *l, int val)
{
	socklen_t k = *l < sizeof(int) ? *l : sizeof(int);

	memcpy(v, &val, k);
	*l = k;
}

int gl_getsockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, void *v,
		  socklen_t *l)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (!v || !l)
		return -EFAULT;
	if ((int)*l < 0)
		return -EINVAL;
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_ERROR:
			gl_pump(rt);
			ret = s->so_error ? s->so_error : s->err;
			s->so_error = 0;
			s->err = 0;
			put_int(v, l, ret);
			return 0;
		case SO_TYPE:
			put_int(v, l, s->dgram ? SOCK_DGRAM : SOCK_STREAM);
			return 0;
		case SO_DOMAIN:
			put_int(v, l, s->family);
			return 0;
		case SO_PROTOCOL:
			put_int(v, l, s->dgram ? IPPROTO_UDP : IPPROTO_TCP);
			return 0;
		case SO_ACCEPTCONN:
			put_int(v, l, s->listening);
			return 0;
		case SO_RCVTIMEO:
		case SO_SNDTIMEO: {
			int ms = name == SO_RCVTIMEO ? s->rcvtimeo_ms : s->sndtimeo_ms;
			struct timeval tv = { 0 };
			socklen_t k = *l < sizeof(tv) ? *l : sizeof(tv);

			if (ms > 0) {
				tv.tv_sec = ms / 1000;
				tv.tv_usec = (ms % 1000) * 1000;
			}
			memcpy(v, &tv, k);
			*l = k;
			return 0;
		}
		}
	}
	ret = srpc_check_sockopt(level, name, *l, false);
	if (ret)
		return ret;
	ret = call(rt, &w, SRPC_REQ_GETSOCKOPT, s->id, level, name, (int)*l, NULL, 0);
	if (ret)
		return ret;
	memcpy(v, w.resp.data, w.resp.dlen < *l ? w.resp.dlen : *l);
	*l = w.resp.dlen < *l ? w.resp.dlen : *l;
	return 0;
}

int gl_getname(struct gl_rt *rt, struct gl_sock *s, bool peer, struct sockaddr *a, socklen_t *l)
{
	struct gl_waiter w = { 0 };
	int ret;

	if (!a || !l)
		return -EFAULT;
	if ((int)*l < 0)
		return -EINVAL;
	if (peer && !s->connected)
		return -ENOTCONN;
	ret = call(rt, &w, peer ? SRPC_REQ_GETPEERNAME : SRPC_REQ_GETSOCKNAME, s->id, 0, 0, 0,
		   NULL, 0);
	if (ret)
		return ret;
	copy_addr(&w.resp, a, l);
	return 0;
}

/* TAKE without waiting (poll): EV_OWNER settles it when pumped. */
static bool claim_async(struct gl_rt *rt, struct gl_sock *s)
{
	struct srpc_msg m;
	uint32_t idx;

	if (++rt->tag == 0)
		rt->tag = 1;
	if (srpc_encode(&m, SRPC_REQ_TAKE, rt->tag, s->id, 0, 0, 0, NULL, 0) ||
	    rt->nstash == 0)
		return false;	/* no buffer now: the next look tries again */
	idx = rt->stash[--rt->nstash];
	memcpy(tcr_region_slot(rt->r, idx), &m, srpc_msg_size(&m));
	submit(rt, idx, TCR_OP_CTRL, 0, (uint32_t)srpc_msg_size(&m));
	return true;
}

short gl_sock_revents(struct gl_rt *rt, struct gl_sock *s)
{
	short ev = 0;
	int freebufs;
	size_t rx_bytes = s->rx_bytes;

	if (rt->broken)	/* the TOE is gone: every call fails now, say so */
		return POLLIN | POLLOUT | POLLERR | POLLHUP;
	if (s->need_take && rt->attached) {
		/* not ours to read yet: claim it; what we hold may go to another holder */
		if (!s->take_posted)
			s->take_posted = claim_async(rt, s);
		rx_bytes = 0;
	}

	freebufs = tcr_ring_count(&rt->ch.ring[TCR_CH_FREE]);
	if (freebufs < 0)
		freebufs = 0;
	if (s->dgram) {
		if (s->rx_n || s->shut_rd)
			ev |= POLLIN | POLLRDNORM;
		if (s->shut_wr ||
		    (s->tx_inflight < rt->tx_bound && rt->nstash + (uint32_t)freebufs > GL_CTRL_RESERVE))
			ev |= POLLOUT | POLLWRNORM;
		if (s->err)
			ev |= POLLERR;
		return ev;
	}
	if (s->listening)
		return s->acceptable ? POLLIN | POLLRDNORM : 0;
	if (s->connecting)
		return 0;
	if (!s->connected) {
		ev = POLLOUT | POLLWRNORM | POLLHUP;
		if (s->so_error)
			ev |= POLLERR;
		return ev;
	}
	if (rx_bytes || s->eof || s->shut_rd)
		ev |= POLLIN | POLLRDNORM;
	if (s->eof || s->shut_rd)
		ev |= POLLRDHUP;
	freebufs = tcr_ring_count(&rt->ch.ring[TCR_CH_FREE]);
	if (freebufs < 0)
		freebufs = 0;
	if (s->shut_wr || s->reset ||
	    (s->tx_inflight < rt->tx_bound && rt->nstash + (uint32_t)freebufs > GL_CTRL_RESERVE))
		ev |= POLLOUT | POLLWRNORM;
	if ((s->eof && s->shut_wr) || s->reset)
		ev |= POLLHUP;
	if (s->err || s->so_error)
		ev |= POLLERR;
	return ev;
}

/* ---- fork ------------------------------------------------------------------- */

static bool holds_sockets(const struct gl_rt *rt)
{
	for (uint32_t i = 0; i < 65536; i++)
		if (rt->by_id[i])
			return true;
	return false;
}

/* Close our copies of the child's channel (after fork, or when it failed). */
static void kid_close(struct gl_rt *rt)
{
	if (rt->kid.conn >= 0)
		gl_real.close(rt->kid.conn);
	gl_wake_close(&rt->kid.wake);	/* every fd in it is -1 or ours */
	rt->kid.conn = -1;
	rt->kid.ok = false;
}

/* Attach the child-to-be's channel into rt->kid; ours stays in use. */
static int kid_attach(struct gl_rt *rt)
{
	struct gl_wake mine = rt->wake;
	int conn = rt->conn, err;
	struct srpc_welcome w = { 0 };

	rt->conn = -1;
	rt->wake.efd_mine = rt->wake.efd_host = -1;
	rt->wake.vm.dev = rt->wake.vm.tfd = -1;
	if (rt->vm) {
		err = gl_vm_claim(rt, &w.channel, &w.epoch);
	} else {
		rt->wake.efd_mine = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		err = rt->wake.efd_mine < 0 ? -errno : handshake(rt, &w);
	}
	rt->kid.conn = rt->conn;
	rt->kid.wake = rt->wake;
	rt->kid.chan_no = w.channel;
	rt->kid.chan_epoch = w.epoch;
	rt->conn = conn;
	rt->wake = mine;
	if (err)
		kid_close(rt);
	return err;
}

/*
 * The parent's half of a shared connected stream: it no longer reads it
 * before TAKE, and keeps a copy of what it has received (fk) for the
 * child, which gets it if its TAKE comes first (host-toe/toe/toe_int.h).
 */
static void freeze(struct gl_rt *rt, struct gl_sock *s)
{
	size_t n = 0;

	s->need_take = true;
	s->take_posted = false;
	s->frozen = true;
	s->frozen_n = s->rx_n;
	s->frozen_bytes = s->rx_bytes;
	free(s->fk);
	s->fk = s->rx_bytes ? malloc(s->rx_bytes) : NULL;
	s->fk_len = 0;
	s->fk_mine = false;
	if (!s->fk)
		return;	/* nothing received (or no memory: the child starts without it) */
	if (s->pre) {
		n = s->pre_len - s->pre_off;
		memcpy(s->fk, s->pre + s->pre_off, n);
	}
	for (uint32_t i = 0; i < s->rx_n; i++) {
		uint32_t idx = s->rxq[(s->rx_head + i) % s->rx_cap];
		uint32_t off = i == 0 ? s->rx_off : 0;
		uint32_t len = rt->buf_len[idx] - off;

		if (n + len > s->rx_bytes)
			break;
		memcpy(s->fk + n, tcr_region_slot(rt->r, idx) + rt->buf_off[idx] + off, len);
		n += len;
	}
	s->fk_len = n;
}

void gl_fork_prepare(void)
{
	struct gl_rt *rt = &gl_rt;
	struct gl_waiter w = { 0 };

	gl_lock();
	if (!rt->configured || !rt->attached || rt->broken || !rt->by_id || !holds_sockets(rt))
		return;	/* the child attaches when it first needs to */
	if (kid_attach(rt))
		return;
	/* answered once nothing of ours is between a kernel socket and our RX ring */
	if (call(rt, &w, SRPC_REQ_FORK, 0, (int)rt->kid.chan_no, (int)rt->kid.chan_epoch, 0,
		 NULL, 0)) {
		kid_close(rt);
		return;
	}
	gl_pump(rt);
	rt->kid.ok = true;
	for (uint32_t i = 0; i < 65536; i++) {
		struct gl_sock *s = rt->by_id[i];

		if (s && !s->dgram && !s->listening && s->connected && !s->need_take)
			freeze(rt, s);
	}
}

void gl_fork_parent(void)
{
	struct gl_rt *rt = &gl_rt;

	if (rt->kid.ok && rt->sleepers)
		gl_wake_sleepers(rt);	/* our other threads' sockets need TAKE now */
	kid_close(rt);	/* the child holds its channel's connection now */
	gl_unlock();
}

static void fork_reattach(struct gl_rt *rt);

void gl_after_fork_child(void)
{
	struct gl_rt *rt = &gl_rt;

	pthread_mutex_init(&rt->mu, NULL);
	gl_lock();	/* what follows expects mu held (it sleeps through gl_sleep) */
	gl_wait_after_fork(rt);
	if (rt->attached)
		fork_reattach(rt);
	gl_unlock();
}

static void fork_reattach(struct gl_rt *rt)
{
	/* The parent's channel, buffers and waiters are not ours. */
	detach(rt);
	rt->waiters = NULL;
	for (uint32_t i = 0; i < 65536; i++) {
		struct gl_sock *s = rt->by_id[i];

		if (!s)
			continue;
		s->rx_n = s->rx_head = s->rx_off = 0;
		s->rx_bytes = 0;
		s->tx_inflight = 0;
		s->frozen = false;
		s->frozen_n = 0;
		s->frozen_bytes = 0;
		free(s->pre);	/* the parent's; our share of it is in fk */
		s->pre = NULL;
		s->pre_len = s->pre_off = 0;
		s->fk_mine = s->fk != NULL;
		s->take_posted = false;
		if (!s->dgram && !s->listening)
			s->need_take = true;	/* read only after TAKE */
	}
	if (!rt->kid.ok)
		return;	/* nothing inherited: attach on the first call */
	rt->conn = rt->kid.conn;
	rt->wake = rt->kid.wake;
	rt->kid.conn = -1;
	rt->kid.ok = false;
	rt->kid.wake.efd_mine = rt->kid.wake.efd_host = -1;	/* ours now */
	rt->kid.wake.vm.dev = -1;
	if (tcr_chan_attach(&rt->ch, rt->r, rt->kid.chan_no, 0)) {
		detach(rt);
		rt->broken = true;
		return;
	}
	rt->pid = getpid();
	rt->chan_no = rt->kid.chan_no;
	rt->chan_epoch = rt->kid.chan_epoch;
	rt->attached = true;
	rt->broken = false;
}

/* ---- exec ------------------------------------------------------------------- */

/* Is @fd a UNIX connection to our TOE's attach socket (an old channel)? */
static bool is_old_conn(struct gl_rt *rt, int fd)
{
	struct sockaddr_un sun;
	socklen_t l = sizeof(sun);
	char want[sizeof(sun.sun_path)];

	if (gl_real.getpeername(fd, (struct sockaddr *)&sun, &l) || sun.sun_family != AF_UNIX ||
	    l <= offsetof(struct sockaddr_un, sun_path))
		return false;
	if (snprintf(want, sizeof(want), "%s.sock", rt->path) >= (int)sizeof(want))
		return false;
	return strncmp(sun.sun_path, want, sizeof(want)) == 0;
}

/* Rebuild one inherited socket: adopt it and ask the TOE what it is. */
static void adopt_inherited(struct gl_rt *rt, int fd, uint32_t id)
{
	struct gl_sock *s = by_id(rt, id);
	struct gl_waiter w = { 0 };
	int fl;

	if (!s) {
		if (call(rt, &w, SRPC_REQ_ADOPT, id, 1, 0, 0, NULL, 0) != 0)
			return;	/* the TOE no longer knows it: leave a dead fd */
		s = sock_make(rt, id, AF_INET);
		if (!s)
			return;
		memset(&w, 0, sizeof(w));
		if (call(rt, &w, SRPC_REQ_GETSOCKOPT, id, SOL_SOCKET, SO_DOMAIN, sizeof(int),
			 NULL, 0) == 0 && w.resp.dlen == sizeof(int))
			memcpy(&s->family, w.resp.data, sizeof(int));
		memset(&w, 0, sizeof(w));
		if (call(rt, &w, SRPC_REQ_GETSOCKOPT, id, SOL_SOCKET, SO_TYPE, sizeof(int),
			 NULL, 0) == 0 && w.resp.dlen == sizeof(int)) {
			int v;

			memcpy(&v, w.resp.data, sizeof(int));
			s->dgram = v == SOCK_DGRAM;
		}
		memset(&w, 0, sizeof(w));
		if (call(rt, &w, SRPC_REQ_GETSOCKOPT, id, SOL_SOCKET, SO_ACCEPTCONN, sizeof(int),
			 NULL, 0) == 0 && w.resp.dlen == sizeof(int)) {
			int v;

			memcpy(&v, w.resp.data, sizeof(int));
			s->listening = v != 0;
			s->acceptable = s->listening;	/* look once: accept tells */
		}
		memset(&w, 0, sizeof(w));
		if (!s->listening &&
		    call(rt, &w, SRPC_REQ_GETPEERNAME, id, 0, 0, 0, NULL, 0) == 0)
			s->connected = true;
	}
	fl = gl_real.fcntl(fd, F_GETFL);
	s->nonblock = fl >= 0 && (fl & O_NONBLOCK);
	s->refs++;
	gl_fd_set(fd, s);
}

/*
 * Name our new channel the heir of the old one, over the old channel's
 * UNIX connection (only its holder can write it); then the TOE lets us
 * ADOPT what it holds.  Inside a VM the old channel has no connection the
 * TOE reads (a claim file): not done there.
 */
static void name_heir(struct gl_rt *rt, int old)
{
	struct srpc_heir h = { SRPC_HEIR_MAGIC, SRPC_VERSION, rt->chan_no, rt->chan_epoch };
	struct timeval tv = { .tv_sec = 5 };
	int32_t ret;
	ssize_t n;

	gl_real.setsockopt(old, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (gl_real.send(old, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		return;
	do
		n = gl_real.recv(old, &ret, sizeof(ret), 0);
	while (n < 0 && errno == EINTR);
}

void gl_after_exec(void)
{
	struct gl_rt *rt = &gl_rt;
	int old[16], nold = 0;
	struct { int fd; uint32_t id; } *ph = NULL;
	size_t nph = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return;
	gl_lock();
	while ((e = readdir(d)) != NULL) {
		char link[64], target[128];
		unsigned int id;
		int fd = atoi(e->d_name);
		ssize_t n;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (sscanf(target, "/memfd:tochain-sock-%u", &id) == 1) {
			if (nph == cap) {
				size_t nc = cap ? cap * 2 : 16;
				void *p = realloc(ph, nc * sizeof(*ph));

				if (!p)
					continue;
				ph = p;
				cap = nc;
			}
			ph[nph].fd = fd;
			ph[nph].id = id;
			nph++;
		} else if (nold < 16 && (rt->vm ? gl_vm_is_old_conn(rt, fd) :
				 !strncmp(target, "socket:", 7) && is_old_conn(rt, fd))) {
			old[nold++] = fd;
		}
	}
	closedir(d);
	if (nph && gl_ensure(rt) == 0) {
		if (!rt->vm)
			for (int i = 0; i < nold; i++)
				if (old[i] != rt->conn)
					name_heir(rt, old[i]);
		for (size_t i = 0; i < nph; i++)
			adopt_inherited(rt, ph[i].fd, ph[i].id);
	}
	gl_unlock();
	free(ph);
	/* Only now may the old channel go: the sockets have a new reference. */
	for (int i = 0; i < nold; i++)
		if (!rt->attached || old[i] != rt->conn)
			gl_real.close(old[i]);
}
