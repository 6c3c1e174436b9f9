// SPDX-License-Identifier: MIT
/*
 * Socket objects (struct gl_sock, gl_sock.h): made by the pump when the
 * TOE's answer to SOCKET or ACCEPT arrives (or by exec's adoption), found
 * by TOE id in gl_rt.by_id, freed when the last fd naming them goes
 * (gl_ctl_put).  Received buffers wait in a per-socket ring of RX buffer
 * indices (rxq) until a receive copies them out and returns them on DONE.
 * mu held throughout (gl_rt.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <tochain/srpc.h>

#include "gl_revive.h"
#include "gl_ring.h"
#include "gl_sock.h"

struct gl_sock *gl_sock_make(struct gl_rt *rt, uint32_t id, int family)
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

void gl_sock_free(struct gl_rt *rt, struct gl_sock *s)
{
	if (rt->by_id && rt->by_id[s->id & 0xffff] == s)
		rt->by_id[s->id & 0xffff] = NULL;
	gl_revive_forget(rt, s);
	gl_sock_fork_data_free(s);
	free(s->rxq);
	free(s);
}

void gl_sock_fork_data_free(struct gl_sock *s)
{
	free(s->fk);
	free(s->pre);
	s->fk = s->pre = NULL;
	s->fk_len = s->pre_len = s->pre_off = 0;
	s->fk_mine = false;
}

void gl_sock_rxq_drop(struct gl_rt *rt, struct gl_sock *s)
{
	while (s->rx_n) {
		gl_ring_done_add(rt, s->rxq[s->rx_head]);
		s->rx_head = (s->rx_head + 1) % s->rx_cap;
		s->rx_n--;
	}
	s->rx_bytes = 0;
	s->rx_off = 0;
	s->frozen = false;
	s->frozen_n = 0;
	s->frozen_bytes = 0;
	gl_sock_fork_data_free(s);
}

int gl_sock_check_addr(const struct gl_sock *s, const struct sockaddr *a, socklen_t l)
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
