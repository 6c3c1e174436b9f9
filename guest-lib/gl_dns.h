/* SPDX-License-Identifier: MIT */
/*
 * DNS messages for the runtime's stub resolver (gl_dns_*): encoding an
 * A/AAAA query and parsing the answer.  Pure functions, no I/O, no
 * global state (gl_resolv.c does the sending).
 *
 * Trust: an answer is hostile input (anyone who can reach the socket, or
 * a broken server, writes it).  gl_dns_parse reads only inside the
 * @len bytes it is given, checks every length and name pointer, follows
 * compression pointers only backwards (so a name cannot loop) and keeps
 * decoded names within 255 bytes.  An answer must echo our id and our
 * question exactly (case-insensitively), or it is not taken.
 */
#ifndef TOCHAIN_GL_DNS_H
#define TOCHAIN_GL_DNS_H

#include <stddef.h>
#include <stdint.h>

#define GL_DNS_T_A	1
#define GL_DNS_T_CNAME	5
#define GL_DNS_T_AAAA	28
#define GL_DNS_QMAX	(12 + 256 + 4)	/* largest query we build */
#define GL_DNS_NAME_MAX	255		/* wire form, RFC 1035 */
#define GL_DNS_ADDR_MAX	32		/* addresses taken from one answer */

#define GL_DNS_RCODE_NXDOMAIN	3

struct gl_dns_answer {
	int rcode;				/* 0, GL_DNS_RCODE_NXDOMAIN, ... */
	int naddr;				/* records of the asked type for the name */
	uint8_t addr[GL_DNS_ADDR_MAX][16];	/* 4 bytes (A) or 16 (AAAA) each */
	char canon[GL_DNS_NAME_MAX + 1];	/* the name after CNAMEs, dotted */
};

/*
 * Build a query (RD set, one question, class IN) for @name (dotted, an
 * optional final dot) of type @qtype into @buf.  Returns its length, or
 * -EINVAL (empty or over-long name or label), -ENOSPC (@len too small).
 */
int gl_dns_query(uint8_t *buf, size_t len, uint16_t id, const char *name, uint16_t qtype);

/*
 * Parse @msg (@len bytes, untrusted) as the answer to the query @q
 * (@qlen bytes, as gl_dns_query built it).  Returns 0 with @out filled
 * (look at out->rcode), -ESRCH when it is not an answer to @q (other id,
 * not a response, other question: keep waiting), -EMSGSIZE when the
 * server truncated it (TC), -EPROTO when it is malformed.
 */
int gl_dns_parse(const uint8_t *msg, size_t len, const uint8_t *q, size_t qlen,
		 struct gl_dns_answer *out);

#endif /* TOCHAIN_GL_DNS_H */
