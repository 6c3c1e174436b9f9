// SPDX-License-Identifier: MIT
/*
 * Re-joining a shared socket after a TOE restart.  Processes that shared
 * a listener (nginx's master and workers, by fork) or a datagram socket
 * each re-create it on the new TOE with the socket's secret (guest-lib
 * gl_revive.c); the first bind wins, and the others' binds to the same
 * address find it by that secret and join it as holders, as the fork's
 * inheritance had made them before.  A bind without the secret is
 * refused with EADDRINUSE as ever.
 *
 * Trust: the guest chose the secret and the address; a process that
 * knows a socket's secret may already take it (ADOPT a=2, srpc.h), so
 * joining gives it nothing more.  Only a socket the caller alone holds,
 * fresh (never listened, connected or shared), is given up for its
 * sibling, so no other process loses a socket it holds.
 *
 * Runs on the TOE's loop thread only, as the socket layer.
 */
#include <netinet/in.h>
#include <string.h>

#include "toe_chan.h"
#include "toe_join.h"
#include "toe_ready.h"
#include "toe_sock.h"

/* Is @s bound to @addr (family, port and address equal)? */
static bool bound_to(const struct toe_sock *s, const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(s->fd, (struct sockaddr *)&ss, &sl) || ss.ss_family != addr->sa_family)
		return false;
	if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *a = (const void *)addr, *b = (const void *)&ss;

		return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
	}
	if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const void *)addr, *b = (const void *)&ss;

		return a->sin6_port == b->sin6_port &&
		       !memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(a->sin6_addr));
	}
	return false;
}

static int type_of(const struct toe_sock *s)
{
	int type = 0;
	socklen_t tl = sizeof(type);

	return getsockopt(s->fd, SOL_SOCKET, SO_TYPE, &type, &tl) ? -1 : type;
}

bool toe_join(struct toe *t, uint32_t ch, struct toe_sock *s, const struct sockaddr *addr,
	      socklen_t len, uint32_t tag)
{
	struct toe_sock *sib = NULL;
	uint32_t id;

	if (!s->has_secret || s->chans != 1ull << ch || s->listening || s->connecting ||
	    (s->connected && !s->dgram) || s->closing || s->flow != TCR_FLOW_NONE ||
	    s->tx_pending || s->rx_inflight || s->rx_queued)
		return false;
	for (uint32_t i = 0; i < t->p.max_socks && !sib; i++) {
		struct toe_sock *o = &t->socks[i];

		if (o->id && o != s && !o->closing && !o->failed && o->dgram == s->dgram &&
		    toe_sock_secret_is(o, s->secret) && bound_to(o, addr, len) &&
		    type_of(o) == type_of(s))
			sib = o;
	}
	if (!sib)
		return false;
	sib->chans |= 1ull << ch;
	/*
	 * A connection may wait already, and an event sent now could reach
	 * the guest before it knows the id: the guest marks a joined
	 * listener acceptable itself (a spurious EAGAIN at worst,
	 * toe_ready.h), and this is what it was told.
	 */
	toe_ready_forget(sib, ch);
	if (sib->listening)
		toe_ready_told(sib, ch, true);
	id = s->id;
	toe_sock_free(t, s);
	toe_chan_respond(t, ch, tag, id, 0, (int)(sib->id & 0x7fffffff), NULL, 0);
	return true;
}
