// SPDX-License-Identifier: MIT
/*
 * The process's channel to its TOE: attaching, the pump that drains the
 * channel, requests and their answers, and waiting (locking: gl_rt.c;
 * how sleepers are woken: gl_wait.c).
 *
 * Each process has a channel of its own.  Requests and stream bytes go
 * out on TX in buffers taken from FREE; responses, events and stream
 * bytes come back on RX and are returned on DONE.  Whoever holds mu and
 * needs progress runs the pump; there is no runtime thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <tochain/desc.h>
#include <tochain/util.h>

#include "gl_chan.h"
#include "gl_claim.h"
#include "gl_fd.h"
#include "gl_real.h"
#include "gl_revive.h"
#include "gl_ring.h"
#include "gl_sock.h"
#include "gl_vm.h"
#include "gl_wait.h"

/* ---- attaching ------------------------------------------------------------ */

int gl_chan_handshake(struct gl_rt *rt, struct srpc_welcome *w)
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
	 * the new image has adopted the sockets it inherits (gl_exec_adopt).
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

void gl_chan_detach(struct gl_rt *rt)
{
	if (rt->conn >= 0)
		gl_real.close(rt->conn);
	rt->conn = -1;
	gl_wake_close(&rt->wake);
	rt->attached = false;
	rt->nstash = 0;
	rt->stash_peak = 0;
	rt->ndone = 0;
}

int gl_chan_attach(struct gl_rt *rt)
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
		if (rt->tx_bound > nbufs / 8)
			rt->tx_bound = nbufs / 8;
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
		err = gl_chan_handshake(rt, &w);
	}
	if (!err)
		err = tcr_chan_attach(&rt->ch, rt->r, w.channel, 0);
	if (err) {
		gl_chan_detach(rt);
		return err == -EBUSY ? -ENOBUFS : -ENETDOWN;
	}
	rt->pid = getpid();
	rt->chan_no = w.channel;
	rt->chan_epoch = w.epoch;
	rt->attached = true;
	rt->broken = false;
	return 0;
}

int gl_chan_ensure(struct gl_rt *rt)
{
	int err;

	if (!rt->configured)
		return -EAFNOSUPPORT;
	if (rt->broken)
		return -ENETDOWN;
	if (rt->lost)
		return gl_revive_try(rt);
	if (rt->attached)
		return 0;
	err = gl_fd_table_init();
	if (!err)
		err = gl_chan_attach(rt);
	if (err && err != -ENOBUFS)
		rt->broken = true;
	return err;
}

/* ---- the pump ------------------------------------------------------------ */

static void event(struct gl_rt *rt, const struct srpc_msg *m)
{
	struct gl_sock *s = gl_sock_find(rt, m->sock);

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
		gl_claim_owner_event(rt, s, m);
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
			w->made = gl_sock_make(rt, (uint32_t)m->a, w->family);
			if (w->made && w->type == SRPC_REQ_ACCEPT)
				w->made->connected = true;
		}
		return;
	}
}

static void take_rx(struct gl_rt *rt, uint32_t idx)
{
	struct tcr_desc d;
	struct srpc_msg m;
	struct gl_sock *s;

	if (tcr_desc_load(rt->r, idx, &d)) {
		gl_ring_done_add(rt, idx);
		return;
	}
	if (d.op == TCR_OP_DATA) {
		s = gl_sock_find(rt, d.conn_id);
		if (!s || s->shut_rd || d.len == 0 || (s->dgram && d.len < SRPC_DGRAM_HDR) ||
		    !gl_sock_rxq_push(s, idx)) {
			gl_ring_done_add(rt, idx);
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
	gl_ring_done_add(rt, idx);
}

static void take_free(struct gl_rt *rt, uint32_t idx)
{
	struct tcr_desc d;

	if (tcr_desc_load(rt->r, idx, &d) == 0 && d.arg == SRPC_FREE_TXDONE) {
		struct gl_sock *s = gl_sock_find(rt, d.conn_id);

		if (s && s->tx_inflight) {
			s->tx_inflight--;
			s->wseq++;
		}
	}
	rt->stash[rt->nstash++] = idx;
	if (rt->nstash > rt->stash_peak)
		rt->stash_peak = rt->nstash;
}

/*
 * Is our channel no longer ours?  Stale (closed or reopened), the region
 * formatted again by a new TOE (in place: the channel may be open again
 * with the same number and epoch, for someone else), or inside a VM our
 * claim withdrawn by the link.
 */
static bool chan_gone(const struct gl_rt *rt)
{
	return tcr_chan_stale(&rt->ch) || tcr_region_stale(rt->r) ||
	       (rt->vm && gl_vm_claim_gone(rt));
}

void gl_chan_pump(struct gl_rt *rt)
{
	uint32_t idx[64];
	bool took = false;
	int k;

	if (rt->hup || (rt->attached && !rt->broken && chan_gone(rt)))
		gl_revive_lost(rt);	/* the TOE is gone (or dropped us): wait for a new one */
	if (rt->lost)
		gl_revive_try(rt);
	if (!rt->attached || rt->broken)
		return;
	while ((k = tcr_ring_dequeue_burst(&rt->ch.ring[TCR_CH_RX], idx, 64)) > 0) {
		took = true;
		for (int i = 0; i < k; i++)
			take_rx(rt, idx[i]);
	}
	if (k < 0 && chan_gone(rt)) {
		gl_revive_lost(rt);	/* formatted under our feet */
		return;
	}
	if (k < 0)
		rt->broken = true;
	while (rt->nstash < rt->r->geo.nbufs &&
	       (k = tcr_ring_dequeue_burst(&rt->ch.ring[TCR_CH_FREE], idx, 64)) > 0) {
		took = true;
		for (int i = 0; i < k && rt->nstash < rt->r->geo.nbufs; i++)
			take_free(rt, idx[i]);
	}
	if (rt->starved && rt->nstash > GL_CTRL_RESERVE) {
		rt->starved = false;
		rt->stash_gen++;	/* starved sockets are writable again (gl_rt.h) */
	}
	gl_ring_done_flush(rt);
	/* what we took may be what another thread sleeps for (gl_wait.c, rule 2) */
	if ((took || rt->broken) && rt->sleepers)
		gl_wait_wake_all(rt);
}

/* ---- waiting ------------------------------------------------------------- */

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

int gl_chan_sleep(struct gl_rt *rt, struct pollfd *pfd, nfds_t n, int timeout_ms,
		  const sigset_t *mask)
{
	bool rang = false;
	int r = gl_wait_sleep(rt, pfd, n, timeout_ms, mask, &rang);

	/* gl_wait.c, rule 3: a drained doorbell is pumped at once, kicking the others */
	if (rang || rt->hup || rt->lost)
		gl_chan_pump(rt);
	return r;
}

/*
 * Sleep once, bounded by @deadline (ns, -1 none).  0: woken, look again;
 * -EAGAIN: deadline passed; -EINTR.
 */
int gl_chan_wait(struct gl_rt *rt, int64_t deadline)
{
	int ms = -1, r;

	if (rt->broken || (!rt->attached && !rt->lost))
		return -ENETDOWN;
	if (deadline >= 0) {
		int64_t left = deadline - (int64_t)tu_now_ns();

		if (left <= 0)
			return -EAGAIN;
		ms = (int)((left + 999999) / 1000000);
	}
	if (rt->lost && (ms < 0 || ms > GL_REVIVE_MS))
		ms = GL_REVIVE_MS;	/* look for a new TOE now and then (gl_revive.c) */
	r = gl_chan_sleep(rt, NULL, 0, ms, NULL);
	if (rt->broken)
		return -ENETDOWN;
	/* As the kernel: SA_RESTART restarts a call without a socket timeout. */
	if (r == -EINTR && deadline < 0 && restart_ok())
		return 0;
	return r < 0 ? r : 0;
}

/* ---- requests ------------------------------------------------------------ */

/* Send a request; with @w, register it to wait for the response. */
int gl_chan_post(struct gl_rt *rt, struct gl_waiter *w, enum srpc_type type, uint32_t sock,
		 int a, int b, int c, const void *data, size_t dlen)
{
	uint32_t inc = rt->incarnation;
	struct srpc_msg m;
	uint32_t idx;
	int err;

	if (rt->attached && !rt->broken && (rt->hup || chan_gone(rt))) {
		/*
		 * The TOE died since we last looked (a process that sleeps
		 * outside the runtime, as the nginx master): never write into
		 * the rings its successor may have given another process.
		 */
		gl_chan_pump(rt);
		if (sock && rt->incarnation != inc)
			return -ECONNRESET;	/* @sock was the dead TOE's */
		inc = rt->incarnation;
	}
	if (!rt->attached || rt->broken)
		return -ENETDOWN;	/* the TOE is gone and no new one yet (gl_revive.c) */
	if (++rt->tag == 0)
		rt->tag = 1;
	err = srpc_encode(&m, type, rt->tag, sock, a, b, c, data, dlen);
	if (err)
		return err;
	while (gl_chan_take_buf(rt, &idx)) {
		err = gl_chan_wait(rt, -1);
		if (err && err != -EINTR)
			return err;
		if (rt->incarnation != inc)
			return -ECONNRESET;	/* @sock was the dead TOE's */
	}
	memcpy(tcr_region_slot(rt->r, idx), &m, srpc_msg_size(&m));
	if (w) {
		/* w->family is the caller's */
		w->done = false;
		w->incarnation = inc;
		w->made = NULL;
		w->tag = m.tag;
		w->type = (uint16_t)type;
		w->next = rt->waiters;
		rt->waiters = w;
	}
	gl_ring_submit(rt, idx, TCR_OP_CTRL, 0, (uint32_t)srpc_msg_size(&m));
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
int gl_chan_call(struct gl_rt *rt, struct gl_waiter *w, enum srpc_type type, uint32_t sock,
		 int a, int b, int c, const void *data, size_t dlen)
{
	int err = gl_chan_post(rt, w, type, sock, a, b, c, data, dlen);

	if (err)
		return err;
	for (;;) {
		gl_chan_pump(rt);
		if (w->done)
			break;
		if (w->incarnation != rt->incarnation) {
			unlink_waiter(rt, w);	/* its TOE died: no answer comes */
			return -ECONNRESET;
		}
		err = gl_chan_wait(rt, -1);
		if (err && err != -EINTR) {
			unlink_waiter(rt, w);
			return err;
		}
	}
	unlink_waiter(rt, w);
	return w->resp.a;
}
