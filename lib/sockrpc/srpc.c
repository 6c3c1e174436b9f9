// SPDX-License-Identifier: MIT
/*
 * Encoding and validating decoding of socket-call messages; the contract
 * and the trust rules are in srpc.h.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "tochain/srpc.h"

int srpc_encode(struct srpc_msg *m, enum srpc_type type, uint32_t tag, uint32_t sock,
		int32_t a, int32_t b, int32_t c, const void *data, size_t dlen)
{
	if (dlen > SRPC_DATA_MAX || (dlen && !data))
		return -EINVAL;
	memset(m, 0, SRPC_HDR_SIZE);
	m->type = (__u16)type;
	m->version = SRPC_VERSION;
	m->tag = tag;
	m->sock = sock;
	m->a = a;
	m->b = b;
	m->c = c;
	m->dlen = (__u32)dlen;
	if (dlen)
		memcpy(m->data, data, dlen);
	return 0;
}

socklen_t srpc_sockaddr_min(int family)
{
	switch (family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return 24;	/* the kernel accepts the RFC 2133 size, no scope id */
	default:
		return 0;
	}
}

enum opt_kind { OPT_INT, OPT_LINGER, OPT_GET_INT };

struct opt_rule {
	int level, name;
	enum opt_kind kind;
};

/* The options the TOE executes on the guest's behalf, nothing else. */
static const struct opt_rule opt_rules[] = {
	{ SOL_SOCKET, SO_REUSEADDR, OPT_INT },
	{ SOL_SOCKET, SO_REUSEPORT, OPT_INT },
	{ SOL_SOCKET, SO_KEEPALIVE, OPT_INT },
	{ SOL_SOCKET, SO_RCVBUF, OPT_INT },
	{ SOL_SOCKET, SO_SNDBUF, OPT_INT },
	{ SOL_SOCKET, SO_LINGER, OPT_LINGER },
	{ SOL_SOCKET, SO_ERROR, OPT_GET_INT },
	{ SOL_SOCKET, SO_TYPE, OPT_GET_INT },
	{ SOL_SOCKET, SO_ACCEPTCONN, OPT_GET_INT },
	{ SOL_SOCKET, SO_DOMAIN, OPT_GET_INT },
	{ SOL_SOCKET, SO_PROTOCOL, OPT_GET_INT },
	{ IPPROTO_TCP, TCP_NODELAY, OPT_INT },
	{ IPPROTO_TCP, TCP_KEEPIDLE, OPT_INT },
	{ IPPROTO_TCP, TCP_KEEPINTVL, OPT_INT },
	{ IPPROTO_TCP, TCP_KEEPCNT, OPT_INT },
	{ IPPROTO_TCP, TCP_CORK, OPT_INT },
	{ IPPROTO_TCP, TCP_QUICKACK, OPT_INT },
	{ IPPROTO_TCP, TCP_MAXSEG, OPT_INT },
	{ IPPROTO_IP, IP_TOS, OPT_INT },
	{ IPPROTO_IPV6, IPV6_V6ONLY, OPT_INT },
};

int srpc_check_sockopt(int level, int name, size_t optlen, bool set)
{
	for (size_t i = 0; i < sizeof(opt_rules) / sizeof(opt_rules[0]); i++) {
		const struct opt_rule *o = &opt_rules[i];

		if (o->level != level || o->name != name)
			continue;
		if (optlen > SRPC_DATA_MAX)
			return -EINVAL;
		if (!set)
			return 0;	/* the kernel truncates what it returns */
		switch (o->kind) {
		case OPT_INT:
			return optlen >= sizeof(int) ? 0 : -EINVAL;
		case OPT_LINGER:
			return optlen >= sizeof(struct linger) ? 0 : -EINVAL;
		case OPT_GET_INT:
			return -ENOPROTOOPT;	/* read-only, as the kernel says */
		}
	}
	return -ENOPROTOOPT;
}

/* Normalise a guest sockaddr for BIND/CONNECT into out->addr. */
static int decode_addr(struct srpc_req *out)
{
	const struct srpc_msg *m = &out->m;
	sa_family_t family;
	socklen_t min;

	if (m->dlen < sizeof(sa_family_t))
		return -EINVAL;
	memcpy(&family, m->data, sizeof(family));
	min = srpc_sockaddr_min(family);
	if (!min)
		return -EAFNOSUPPORT;
	if (m->dlen < min)
		return -EINVAL;
	out->addrlen = family == AF_INET ? sizeof(struct sockaddr_in)
					 : sizeof(struct sockaddr_in6);
	memset(&out->addr, 0, sizeof(out->addr));
	memcpy(&out->addr, m->data, m->dlen < out->addrlen ? m->dlen : out->addrlen);
	return 0;
}

int srpc_dgram_addr(const struct srpc_dgram *h, struct sockaddr_storage *out, socklen_t *outlen)
{
	sa_family_t family;
	socklen_t min, len;

	*outlen = 0;
	memset(out, 0, sizeof(*out));
	if (h->addrlen == 0)
		return 0;
	if (h->addrlen < sizeof(sa_family_t) || h->addrlen > SRPC_DGRAM_ADDR_MAX)
		return -EINVAL;
	memcpy(&family, h->addr, sizeof(family));
	min = srpc_sockaddr_min(family);
	if (!min)
		return -EAFNOSUPPORT;
	if (h->addrlen < min)
		return -EINVAL;
	len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	memcpy(out, h->addr, h->addrlen < len ? h->addrlen : len);
	*outlen = len;
	return 0;
}

int srpc_decode_req(const void *buf, size_t len, struct srpc_req *out)
{
	struct srpc_msg *m = &out->m;

	memset(out, 0, sizeof(*out));
	if (!buf || len < SRPC_HDR_SIZE || len > SRPC_MSG_MAX)
		return -EPROTO;
	/* The one read of guest memory; everything below works on the copy. */
	memcpy(m, buf, len);
	if (m->version != SRPC_VERSION || m->tag == 0 || m->dlen > SRPC_DATA_MAX ||
	    len != SRPC_HDR_SIZE + m->dlen)
		return -EPROTO;
	if (m->type == 0 || m->type > SRPC_REQ_LAST)
		return -EOPNOTSUPP;
	if (m->type != SRPC_REQ_SOCKET && m->type != SRPC_REQ_FORK && m->sock == 0)
		return -EBADF;

	switch (m->type) {
	case SRPC_REQ_SOCKET:
		if (m->dlen && m->dlen != SRPC_SECRET_LEN)
			return -EINVAL;
		if (m->a != AF_INET && m->a != AF_INET6)
			return -EAFNOSUPPORT;
		if (m->b == SOCK_STREAM)
			return m->c == 0 || m->c == IPPROTO_TCP ? 0 : -EPROTONOSUPPORT;
		if (m->b == SOCK_DGRAM)
			return m->c == 0 || m->c == IPPROTO_UDP ? 0 : -EPROTONOSUPPORT;
		return -EPROTONOSUPPORT;
	case SRPC_REQ_BIND:
	case SRPC_REQ_CONNECT:
		return decode_addr(out);
	case SRPC_REQ_FORK:
		if (m->dlen || m->sock || m->a < 0)
			return -EINVAL;
		return 0;
	case SRPC_REQ_SHUTDOWN:
		if (m->a != SHUT_RD && m->a != SHUT_WR && m->a != SHUT_RDWR)
			return -EINVAL;
		return m->dlen ? -EINVAL : 0;
	case SRPC_REQ_SETSOCKOPT:
		return srpc_check_sockopt(m->a, m->b, m->dlen, true);
	case SRPC_REQ_GETSOCKOPT:
		if (m->dlen || m->c < 0)
			return -EINVAL;
		return srpc_check_sockopt(m->a, m->b, (size_t)m->c, false);
	case SRPC_REQ_ACCEPT:
		return m->dlen && m->dlen != SRPC_SECRET_LEN ? -EINVAL : 0;
	case SRPC_REQ_ADOPT:
		if (m->a == 2)
			return m->dlen == SRPC_SECRET_LEN ? 0 : -EINVAL;
		return m->dlen ? -EINVAL : 0;
	default:	/* LISTEN, CLOSE, GET*NAME, TAKE: no data */
		return m->dlen ? -EINVAL : 0;
	}
}

int srpc_decode_msg(const void *buf, size_t len, struct srpc_msg *out)
{
	memset(out, 0, sizeof(*out));
	if (!buf || len < SRPC_HDR_SIZE || len > SRPC_MSG_MAX)
		return -EPROTO;
	memcpy(out, buf, len);
	if (out->version != SRPC_VERSION || out->dlen > SRPC_DATA_MAX ||
	    len != SRPC_HDR_SIZE + out->dlen)
		return -EPROTO;
	if (out->type == SRPC_RESP)
		return out->tag ? 0 : -EPROTO;
	if (out->type >= SRPC_EV_CONNECTED && out->type <= SRPC_EV_LAST)
		return out->tag == 0 ? 0 : -EPROTO;
	return -EPROTO;
}

const char *srpc_type_name(unsigned int type)
{
	static const char *const names[] = {
		[SRPC_REQ_SOCKET] = "socket", [SRPC_REQ_BIND] = "bind",
		[SRPC_REQ_LISTEN] = "listen", [SRPC_REQ_ACCEPT] = "accept",
		[SRPC_REQ_CONNECT] = "connect", [SRPC_REQ_SHUTDOWN] = "shutdown",
		[SRPC_REQ_CLOSE] = "close", [SRPC_REQ_SETSOCKOPT] = "setsockopt",
		[SRPC_REQ_GETSOCKOPT] = "getsockopt", [SRPC_REQ_GETSOCKNAME] = "getsockname",
		[SRPC_REQ_GETPEERNAME] = "getpeername", [SRPC_REQ_ADOPT] = "adopt",
		[SRPC_REQ_FORK] = "fork", [SRPC_REQ_TAKE] = "take",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	switch (type) {
	case SRPC_RESP: return "resp";
	case SRPC_EV_CONNECTED: return "ev-connected";
	case SRPC_EV_ACCEPTABLE: return "ev-acceptable";
	case SRPC_EV_EOF: return "ev-eof";
	case SRPC_EV_ERROR: return "ev-error";
	case SRPC_EV_OWNER: return "ev-owner";
	default: return "?";
	}
}
