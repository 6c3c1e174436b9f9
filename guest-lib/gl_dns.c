// SPDX-License-Identifier: MIT
/*
 * DNS query encoding and answer parsing for the runtime's resolver; the
 * contract and the trust rules are in gl_dns.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "gl_dns.h"

#define HDR	12
#define CLASS_IN 1

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

int gl_dns_query(uint8_t *buf, size_t len, uint16_t id, const char *name, uint16_t qtype)
{
	size_t nlen = name ? strlen(name) : 0, o = HDR;
	const char *p = name;

	if (nlen && name[nlen - 1] == '.')
		nlen--;
	if (nlen == 0 || nlen > 253)
		return -EINVAL;
	if (len < HDR + nlen + 2 + 4)
		return -ENOSPC;
	memset(buf, 0, HDR);
	put16(buf, id);
	buf[2] = 0x01;		/* RD */
	put16(buf + 4, 1);	/* QDCOUNT */
	while (p < name + nlen) {
		const char *dot = memchr(p, '.', (size_t)(name + nlen - p));
		size_t l = dot ? (size_t)(dot - p) : (size_t)(name + nlen - p);

		if (l == 0 || l > 63)
			return -EINVAL;
		buf[o++] = (uint8_t)l;
		memcpy(buf + o, p, l);
		o += l;
		p += l + (dot ? 1 : 0);
		if (dot && p == name + nlen)
			return -EINVAL;	/* "a..": an empty last label */
	}
	buf[o++] = 0;
	put16(buf + o, qtype);
	put16(buf + o + 2, CLASS_IN);
	return (int)(o + 4);
}

/*
 * Read the (possibly compressed) name at *@pos of @msg into @out in wire
 * form, lower case; *@pos moves past it.  Pointers must go strictly
 * backwards from where the previous jump went, so every name ends.
 */
static int read_name(const uint8_t *msg, size_t len, size_t *pos, uint8_t *out, size_t *outlen)
{
	size_t p = *pos, o = 0, limit = *pos;
	bool jumped = false;

	for (;;) {
		uint8_t l;

		if (p >= len)
			return -EPROTO;
		l = msg[p];
		if ((l & 0xc0) == 0xc0) {
			size_t target;

			if (p + 1 >= len)
				return -EPROTO;
			target = (size_t)(l & 0x3f) << 8 | msg[p + 1];
			if (!jumped)
				*pos = p + 2;
			jumped = true;
			if (target >= limit)
				return -EPROTO;	/* forwards or onto itself: a loop */
			limit = target;
			p = target;
			continue;
		}
		if (l & 0xc0)
			return -EPROTO;	/* extended label types */
		if (o + 1 + l > GL_DNS_NAME_MAX || p + 1 + l > len)
			return -EPROTO;
		out[o++] = l;
		if (l == 0)
			break;
		for (size_t i = 0; i < l; i++)
			out[o++] = lower(msg[p + 1 + i]);
		p += 1 + (size_t)l;
	}
	if (!jumped)
		*pos = p + 1;
	*outlen = o;
	return 0;
}

static bool name_eq(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	return al == bl && memcmp(a, b, al) == 0;
}

/* Wire name to dotted text; false if a label holds bytes text cannot show plainly. */
static bool name_text(const uint8_t *w, size_t wl, char *out)
{
	size_t i = 0, o = 0;

	while (i < wl && w[i]) {
		uint8_t l = w[i++];

		if (o)
			out[o++] = '.';
		for (uint8_t k = 0; k < l; k++, i++) {
			uint8_t c = w[i];

			if (c <= ' ' || c >= 0x7f || c == '.' || c == '\\')
				return false;
			out[o++] = (char)c;
		}
	}
	out[o] = 0;
	return true;
}

int gl_dns_parse(const uint8_t *msg, size_t len, const uint8_t *q, size_t qlen,
		 struct gl_dns_answer *out)
{
	uint8_t qname[GL_DNS_NAME_MAX], name[GL_DNS_NAME_MAX], cur[GL_DNS_NAME_MAX];
	size_t qnl, nl, curl, pos = HDR, qpos = HDR;
	uint16_t qtype, ancount;

	memset(out, 0, sizeof(*out));
	if (qlen < HDR + 1 + 4 || read_name(q, qlen, &qpos, qname, &qnl) || qpos + 4 != qlen)
		return -EINVAL;	/* not a query we built */
	qtype = get16(q + qpos);
	if (!msg || len < HDR)
		return -EPROTO;
	if (get16(msg) != get16(q) || !(msg[2] & 0x80))
		return -ESRCH;
	if ((msg[2] >> 3 & 0xf) != 0 || get16(msg + 4) != 1)
		return -ESRCH;
	if (msg[2] & 0x02)
		return -EMSGSIZE;
	if (read_name(msg, len, &pos, name, &nl))
		return -EPROTO;
	if (!name_eq(name, nl, qname, qnl) || pos + 4 > len || memcmp(msg + pos, q + qpos, 4))
		return -ESRCH;
	pos += 4;
	out->rcode = msg[3] & 0xf;
	if (!name_text(qname, qnl, out->canon))
		return -EINVAL;
	if (out->rcode)
		return 0;
	ancount = get16(msg + 6);
	memcpy(cur, qname, qnl);
	curl = qnl;
	for (uint16_t i = 0; i < ancount; i++) {
		uint16_t type, class, rdlen;
		size_t rd;

		if (read_name(msg, len, &pos, name, &nl) || pos + 10 > len)
			return -EPROTO;
		type = get16(msg + pos);
		class = get16(msg + pos + 2);
		rdlen = get16(msg + pos + 8);
		rd = pos + 10;
		if (rd + rdlen > len)
			return -EPROTO;
		pos = rd + rdlen;
		if (class != CLASS_IN || !name_eq(name, nl, cur, curl))
			continue;
		if (type == GL_DNS_T_CNAME) {
			size_t p = rd;

			if (read_name(msg, len, &p, cur, &curl) || p > rd + rdlen)
				return -EPROTO;
			continue;
		}
		if (type != qtype || out->naddr == GL_DNS_ADDR_MAX)
			continue;
		if ((type == GL_DNS_T_A && rdlen == 4) || (type == GL_DNS_T_AAAA && rdlen == 16))
			memcpy(out->addr[out->naddr++], msg + rd, rdlen);
	}
	if (!name_text(cur, curl, out->canon))
		name_text(qname, qnl, out->canon);
	return 0;
}
