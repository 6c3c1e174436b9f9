// SPDX-License-Identifier: MIT
/*
 * Surviving a TOE restart.  When the TOE serving this process dies (its
 * UNIX connection hangs up, or the new TOE's format of the region makes
 * our channel stale), the process is not told to die with it: what a
 * kernel program would see when its host's stack lost every connection
 * is what it sees here.
 *
 *  - Sockets with a peer (connected or connecting streams) fail as after
 *    a peer's reset: recv/send return ECONNRESET (then EOF / EPIPE),
 *    poll and epoll report POLLERR|POLLHUP, a connect in progress fails
 *    with ECONNREFUSED.  Their bytes in the old region are forgotten.
 *  - Sockets without one (listeners, datagram sockets, sockets not yet
 *    connected) are re-created on the new TOE under the same fds and
 *    socket objects (so epoll registrations, which name the object, stay):
 *    SOCKET, then every option the program set (the last value of each,
 *    as recorded when the old TOE accepted it), BIND to the address it
 *    had, LISTEN with its backlog, and for a datagram socket its CONNECT.
 *    Until then a listener is simply not readable.
 *  - The process looks for a new TOE whenever it runs the pump and at
 *    least every GL_REVIVE_MS while a thread sleeps (gl_chan_wait,
 *    gl_wait_sleep): a new TOE is there once its attach socket answers
 *    the handshake.  Calls that wait for an answer of the dead TOE end
 *    (gl_chan_call: ECONNRESET); new requests fail with ENETDOWN until
 *    a new TOE is attached.
 *
 * Inside a VM the same holds; only how the loss shows and how a channel
 * comes back differ (gl_vm.h).  The loss: the host link withdraws our
 * claim when its TOE dies and rings every vector (gl_vm_claim_gone), the
 * new TOE's format makes the channel stale, or the claim file hangs up
 * when the device is unplugged (a new link, vm del).  A channel comes
 * back when the link offers channels of the new TOE in the claim table,
 * or when a device of the same name is plugged again: a new look maps
 * the device afresh and claims a slot.  Meanwhile the old mapping is
 * replaced by zero pages (gl_vm_forget_region), so that late looks at
 * the old rings touch neither the new TOE's channels nor an unplugged
 * device's pages (which fault: SIGBUS; a look between the unplug and the
 * hang-up still does).
 *
 * Several processes that share a listener (nginx's master and workers)
 * or a bound datagram socket each re-create it with its secret: the
 * first bind wins, and the TOE makes the others holders of that socket
 * (their BIND or LISTEN is answered with its id, joined()), so they
 * share it again as the fork had made them share the old one.
 *
 * mu held throughout (gl_rt.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <tochain/srpc.h>
#include <tochain/util.h>

#include "gl_chan.h"
#include "gl_revive.h"
#include "gl_sock.h"
#include "gl_vm.h"
#include "gl_wait.h"

#define GL_RV_OPTS	16	/* options remembered per socket */
#define GL_RV_OPTLEN	16	/* value bytes per option (ints, linger, timeouts fit) */

struct gl_revive_rec {
	struct sockaddr_storage bound, peer;
	socklen_t bound_len, peer_len;	/* 0: none */
	bool listened;
	int backlog;
	uint32_t nopt;
	struct {
		int level, name;
		uint32_t len;
		uint8_t val[GL_RV_OPTLEN];
	} opt[GL_RV_OPTS];
};

static struct gl_revive_rec *rec(struct gl_sock *s)
{
	if (!s->rv)
		s->rv = calloc(1, sizeof(*s->rv));
	return s->rv;
}

static void note_addr(struct sockaddr_storage *ss, socklen_t *sl, const struct sockaddr *a,
		      socklen_t l)
{
	if (l > sizeof(*ss))
		l = sizeof(*ss);
	memcpy(ss, a, l);
	*sl = l;
}

void gl_revive_note_bind(struct gl_sock *s, const struct sockaddr *a, socklen_t l)
{
	struct gl_revive_rec *r = rec(s);

	if (r)
		note_addr(&r->bound, &r->bound_len, a, l);
}

void gl_revive_note_connect(struct gl_sock *s, const struct sockaddr *a, socklen_t l)
{
	struct gl_revive_rec *r = rec(s);

	if (r)
		note_addr(&r->peer, &r->peer_len, a, l);
}

void gl_revive_note_listen(struct gl_sock *s, int backlog)
{
	struct gl_revive_rec *r = rec(s);

	if (r) {
		r->listened = true;
		r->backlog = backlog;
	}
}

void gl_revive_note_opt(struct gl_sock *s, int level, int name, const void *v, socklen_t l)
{
	struct gl_revive_rec *r;
	uint32_t i;

	if (l > GL_RV_OPTLEN || !(r = rec(s)))
		return;
	for (i = 0; i < r->nopt; i++)
		if (r->opt[i].level == level && r->opt[i].name == name)
			break;
	if (i == GL_RV_OPTS)
		return;	/* a program that sets more: the first GL_RV_OPTS come back */
	if (i == r->nopt)
		r->nopt++;
	r->opt[i].level = level;
	r->opt[i].name = name;
	r->opt[i].len = l;
	memcpy(r->opt[i].val, v, l);
}

void gl_revive_forget(struct gl_rt *rt, struct gl_sock *s)
{
	for (uint32_t i = 0; i < rt->nrevive; i++)
		if (rt->revive[i] == s)
			rt->revive[i] = NULL;
	free(s->rv);
	s->rv = NULL;
}

/* @s had a peer: it fails as after the peer's reset. */
static void reset(struct gl_sock *s)
{
	if (s->connecting) {
		s->connecting = false;
		s->connect_unseen = true;
		s->so_error = ECONNREFUSED;
	} else if (!s->reset) {
		s->err = ECONNRESET;
	}
	s->reset = true;
	s->eof = true;
}

void gl_revive_lost(struct gl_rt *rt)
{
	struct gl_sock **old;
	uint32_t n = 0, nold;

	rt->hup = false;
	if (rt->lost || !rt->attached)
		return;
	rt->incarnation++;	/* answers the dead TOE owed never come (gl_chan_call) */
	/* lost again while re-creating: those not done yet stay on the list */
	old = rt->revive;
	nold = rt->nrevive;
	for (uint32_t i = 0; i < 65536; i++)
		n += rt->by_id[i] != NULL;
	rt->revive = n + nold ? calloc(n + nold, sizeof(*rt->revive)) : NULL;
	rt->nrevive = 0;
	for (uint32_t i = 0; i < nold && rt->revive; i++)
		if (old[i])
			rt->revive[rt->nrevive++] = old[i];
	free(old);
	for (uint32_t i = 0; i < 65536; i++) {
		struct gl_sock *s = rt->by_id[i];

		if (!s)
			continue;
		rt->by_id[i] = NULL;
		s->id = 0;	/* no TOE knows it (gl_ctl_put sends no CLOSE) */
		/* the old region's buffers are the new TOE's now: forget, never return them */
		s->rx_n = s->rx_head = s->rx_off = 0;
		s->rx_bytes = 0;
		s->frozen = false;
		s->frozen_n = 0;
		s->frozen_bytes = 0;
		gl_sock_fork_data_free(s);
		s->tx_inflight = 0;
		s->tx_starved = false;
		s->need_take = s->take_posted = false;
		s->rseq++;
		s->wseq++;
		if (!s->dgram && (s->connected || s->connecting || s->reset))
			reset(s);
		else if (s->listening)
			s->acceptable = false;
		if (!s->dgram && (s->connected || s->connecting || s->reset))
			continue;
		if (rt->revive)
			rt->revive[rt->nrevive++] = s;
	}
	gl_chan_detach(rt);
	if (rt->vm)
		gl_vm_forget_region(rt);	/* the device may be gone: never fault on it */
	rt->starved = false;
	rt->lost = true;
	rt->revive_at = 0;
	gl_wait_wake_all(rt);
}

/* Drop the new TOE's socket @s was given: @s stays without one. */
static void recreate_failed(struct gl_rt *rt, struct gl_sock *s)
{
	gl_chan_post(rt, NULL, SRPC_REQ_CLOSE, s->id, 0, 0, 0, NULL, 0);
	rt->by_id[s->id & 0xffff] = NULL;
	s->id = 0;
}

/*
 * The TOE answered BIND or LISTEN (@w) of @s: with b > 0 it found the
 * socket a process sharing @s re-created first (the same secret, the same
 * address) and made us its holder in place of ours, which it closed
 * (host-toe/toe/toe_join.c).  Our object takes that id.  false: the id
 * is not one we can take (the answer is not trusted further).
 */
static bool joined(struct gl_rt *rt, struct gl_sock *s, const struct gl_waiter *w)
{
	uint32_t id = (uint32_t)w->resp.b;

	if (w->resp.b <= 0 || id == s->id)
		return true;
	if (rt->by_id[id & 0xffff]) {
		gl_chan_post(rt, NULL, SRPC_REQ_CLOSE, id, 0, 0, 0, NULL, 0);
		return false;
	}
	rt->by_id[s->id & 0xffff] = NULL;
	s->id = id;
	rt->by_id[id & 0xffff] = s;
	if (s->listening) {
		/* events of it may have been pumped before we knew the id: look (toe_join.c) */
		s->acceptable = true;
		s->rseq++;
	}
	return true;
}

/* Re-create @s (no peer) on the new TOE under the same object and fds. */
static void recreate(struct gl_rt *rt, struct gl_sock *s)
{
	const struct gl_revive_rec *r = s->rv;
	struct gl_waiter w = { .family = s->family };
	int id;

	/* the same secret: its fds hold it (gl_fd.c) */
	id = gl_chan_call(rt, &w, SRPC_REQ_SOCKET, 0, s->family,
			  s->dgram ? SOCK_DGRAM : SOCK_STREAM, 0, s->has_secret ? s->secret : NULL,
			  s->has_secret ? SRPC_SECRET_LEN : 0);
	if (id <= 0 || !w.made)
		return;	/* stays without a TOE socket: calls on it fail */
	gl_sock_free(rt, w.made);	/* the pump's new object: ours takes its id */
	s->id = (uint32_t)id;
	rt->by_id[s->id & 0xffff] = s;
	if (!r)
		return;
	for (uint32_t i = 0; i < r->nopt; i++) {
		memset(&w, 0, sizeof(w));
		gl_chan_call(rt, &w, SRPC_REQ_SETSOCKOPT, s->id, r->opt[i].level, r->opt[i].name,
			     0, r->opt[i].val, r->opt[i].len);
	}
	memset(&w, 0, sizeof(w));
	if (r->bound_len && (gl_chan_call(rt, &w, SRPC_REQ_BIND, s->id, 0, 0, 0, &r->bound,
					  r->bound_len) != 0 || !joined(rt, s, &w))) {
		recreate_failed(rt, s);
		return;
	}
	memset(&w, 0, sizeof(w));
	if (r->listened &&
	    (gl_chan_call(rt, &w, SRPC_REQ_LISTEN, s->id, r->backlog, 0, 0, NULL, 0) != 0 ||
	     !joined(rt, s, &w))) {
		recreate_failed(rt, s);
		return;
	}
	memset(&w, 0, sizeof(w));
	if (s->dgram && r->peer_len)
		gl_chan_call(rt, &w, SRPC_REQ_CONNECT, s->id, 0, 0, 0, &r->peer, r->peer_len);
}

int gl_revive_try(struct gl_rt *rt)
{
	struct tcr_region *old = rt->r;
	uint32_t *stash = rt->stash, *off = rt->buf_off, *len = rt->buf_len;
	struct tcr_chan ch = rt->ch;
	uint64_t now = tu_now_ns();
	struct gl_sock **list;
	uint32_t n;
	int err;

	if (!rt->lost)
		return 0;
	if (now < rt->revive_at)
		return -ENETDOWN;
	rt->revive_at = now + GL_REVIVE_MS * 500000ull;
	/* a new mapping: the new TOE may have formatted another geometry */
	rt->r = NULL;
	rt->stash = rt->buf_off = rt->buf_len = NULL;
	err = gl_chan_attach(rt);
	if (err) {
		if (rt->r)
			tcr_region_destroy(rt->r);
		free(rt->stash);
		free(rt->buf_off);
		free(rt->buf_len);
		rt->r = old;	/* sleepers' last looks at the old rings stay in mapped memory */
		rt->stash = stash;
		rt->buf_off = off;
		rt->buf_len = len;
		rt->ch = ch;
		rt->broken = false;
		return -ENETDOWN;
	}
	tcr_region_destroy(old);
	free(stash);
	free(off);
	free(len);
	rt->lost = false;	/* from here on requests go out (recreate) */
	/*
	 * A call waits with mu released: another thread may close a socket
	 * meanwhile (gl_revive_forget clears its entry), so each is held by
	 * a reference while it is re-created.
	 */
	list = rt->revive;
	n = rt->nrevive;
	for (uint32_t i = 0; i < n && rt->revive == list; i++) {
		struct gl_sock *s = list[i];

		if (!s)
			continue;
		list[i] = NULL;
		s->refs++;
		recreate(rt, s);
		if (--s->refs == 0) {
			if (s->id && rt->attached)
				gl_chan_post(rt, NULL, SRPC_REQ_CLOSE, s->id, 0, 0, 0, NULL, 0);
			gl_sock_free(rt, s);
		}
	}
	if (rt->revive == list) {
		free(list);
		rt->revive = NULL;
		rt->nrevive = 0;
	}
	gl_wait_wake_all(rt);
	return 0;
}
