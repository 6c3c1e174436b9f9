/* SPDX-License-Identifier: MIT */
/*
 * HTTP message head collector (http_head_*): the request line's URL (or a
 * response's status text) and the header fields of one HTTP/1.x message
 * head, gathered from the pieces http_parser's on_url / on_header_field /
 * on_header_value callbacks hand out (a piece may end anywhere: a name or
 * a value may come in several).  Used by the ids engine (its http_uri and
 * http_header buffers, ids_http.c) and the waf engine (ModSecurity's URI
 * and headers, waf_flow.c).
 *
 * Layout: buf holds the URL, a NUL (once http_head_end_url ran: headers
 * started or the head is complete), then each header's name and value
 * bytes, without separators; hdrs[i] says where header i's name and value
 * are.  A name given in several pieces is one name; a field piece after a
 * value starts the next header.
 *
 * Bounds: every append is checked against the caller's @limit on len + 1
 * (SIZE_MAX: only http_parser's own bound on a head, HTTP_MAX_HEADER_SIZE,
 * applies).  Going over sets overflow and fails; the caller decides what a
 * too-large head means.  The bytes are the peer's: nothing here trusts a
 * length or a header, and every copy is bounded.
 *
 * THREADS: a collector belongs to the flow (and thread) that feeds it.
 */
#ifndef TOCHAIN_HTTP_HEAD_H
#define TOCHAIN_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_HEAD_KEEP	(16u << 10)	/* buffer kept between messages */

struct http_head_hdr {
	size_t name_off, name_len;
	size_t val_off, val_len;
};

/* One message head in pieces; all zero is an empty collector. */
struct http_head {
	char *buf;		/* URL, NUL, then names and values, no NULs */
	size_t len, cap;
	size_t url_len;		/* URL bytes before the NUL (url_done) */
	struct http_head_hdr *hdrs;
	unsigned n, hcap;
	bool url_done;		/* URL terminated: headers started */
	bool in_value;		/* last piece was a header value */
	bool overflow;		/* an append went over its limit */
};

/* Frees the buffers; @h is an empty collector again. */
void http_head_free(struct http_head *h);
/*
 * Ready for the next message; a buffer grown past HTTP_HEAD_KEEP by one
 * large head is not kept by an idle keep-alive connection.
 */
void http_head_reset(struct http_head *h);
/* Appends URL bytes: 0, or -1 when over @limit (overflow) or out of memory. */
int http_head_append(struct http_head *h, const char *p, size_t n, size_t limit);
/* Terminates the URL (or status text) once: 0 or -1 as http_head_append. */
int http_head_end_url(struct http_head *h, size_t limit);
/* A header name piece (ends the URL first): 0 or -1 as http_head_append. */
int http_head_field(struct http_head *h, const char *p, size_t n, size_t limit);
/*
 * A header value piece: 0 or -1 as http_head_append; -1 also for a value
 * before any name (http_parser never gives one).
 */
int http_head_value(struct http_head *h, const char *p, size_t n, size_t limit);
/* True when a header is named @name (ASCII case-insensitive). */
bool http_head_has(const struct http_head *h, const char *name);

#endif /* TOCHAIN_HTTP_HEAD_H */
