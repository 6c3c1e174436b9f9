// SPDX-License-Identifier: MIT
/*
 * HTTP request buffers for http_uri / http_header / http_method /
 * http_client_body, from the to-server byte stream, with libhttp-parser.
 *
 * A flow is HTTP when its to-server stream starts with a request method
 * and a space.  Each request is parsed incrementally, across chunks; its
 * head is gathered by the collector the waf engine uses too
 * (vnfs/http/http_head.h) and written into the buffers rules see when an
 * event needs them; buffers are capped (IDS_HTTP_*_MAX, excess dropped).
 * Events:
 *   headers complete -> rules of class HTTP_HDR (uri, header, method);
 *   message complete, or body buffer full -> rules of class HTTP_BODY.
 * The URI buffer is percent-decoded (no other normalisation).  A parse
 * error, an upgrade or CONNECT ends HTTP inspection for the flow; raw
 * rules keep running.  The bytes are the guest's: nothing here trusts a
 * length or a header; the parser is strict and all copies are bounded.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ids_int.h"

static const char *const methods[] = { "GET ", "POST ", "HEAD ", "PUT ",
	"DELETE ", "OPTIONS ", "PATCH ", "TRACE ", "CONNECT ", NULL };

struct ids_http *ids_http_create(ids_http_event_fn event)
{
	struct ids_http *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->event = event;
	http_parser_init(&h->parser, HTTP_REQUEST);
	h->buf[IDS_BUF_URI].max = IDS_HTTP_URI_MAX;
	h->buf[IDS_BUF_HEADER].max = IDS_HTTP_HEADER_MAX;
	h->buf[IDS_BUF_METHOD].max = 32;
	h->buf[IDS_BUF_RAW_URI].max = IDS_HTTP_URI_MAX;
	h->buf[IDS_BUF_COOKIE].max = IDS_HTTP_HEADER_MAX;
	h->buf[IDS_BUF_BODY].max = IDS_HTTP_BODY_MAX;
	return h;
}

void ids_http_destroy(struct ids_http *h)
{
	if (!h)
		return;
	for (int b = 0; b < IDS_BUF_COUNT; b++)
		free(h->buf[b].p);
	http_head_free(&h->head);
	free(h);
}

/* Appends up to the buffer's cap; -1 only when memory runs out. */
static int sb_add(struct ids_sbuf *sb, const void *d, size_t n)
{
	if (sb->len + n > sb->max)
		n = sb->max - sb->len;
	if (n == 0)
		return 0;
	if (sb->len + n > sb->cap) {
		size_t ncap = sb->cap ? sb->cap : 256;
		uint8_t *np;

		while (ncap < sb->len + n)
			ncap *= 2;
		if (ncap > sb->max)
			ncap = sb->max;
		np = realloc(sb->p, ncap);
		if (!np)
			return -1;
		sb->p = np;
		sb->cap = ncap;
	}
	memcpy(sb->p + sb->len, d, n);
	sb->len += n;
	return 0;
}

static struct ids_flow *flow_of(http_parser *p)
{
	return p->data;
}

static int on_begin(http_parser *p)
{
	struct ids_http *h = flow_of(p)->http;

	for (int b = IDS_BUF_URI; b < IDS_BUF_COUNT; b++)
		h->buf[b].len = 0;
	http_head_reset(&h->head);
	h->hdrs_out = 0;
	h->body_done = false;
	return 0;
}

/*
 * The head is collected whole (no limit of ours: http_parser bounds a head
 * at HTTP_MAX_HEADER_SIZE); the buffers rules see are cut at their caps
 * when written.
 */
static int on_url(http_parser *p, const char *at, size_t n)
{
	return http_head_append(&flow_of(p)->http->head, at, n, SIZE_MAX);
}

static int on_field(http_parser *p, const char *at, size_t n)
{
	return http_head_field(&flow_of(p)->http->head, at, n, SIZE_MAX);
}

static int on_value(http_parser *p, const char *at, size_t n)
{
	return http_head_value(&flow_of(p)->http->head, at, n, SIZE_MAX);
}

/*
 * Appends the headers collected since the last call to the HEADER buffer,
 * "Name: value" joined by CRLF, and a CRLF after the last one if @end_crlf
 * (the head: yes; trailers: no).  A header without a value (only the last
 * one can be) has no ": ".  -1 when memory runs out.
 */
static int headers_out(struct ids_http *h, bool end_crlf)
{
	const struct http_head *hd = &h->head;
	struct ids_sbuf *sb = &h->buf[IDS_BUF_HEADER];

	for (unsigned i = h->hdrs_out; i < hd->n; i++) {
		const struct http_head_hdr *x = &hd->hdrs[i];
		bool last = i + 1 == hd->n;

		if (sb_add(sb, hd->buf + x->name_off, x->name_len))
			return -1;
		if ((!last || hd->in_value) &&
		    (sb_add(sb, ": ", 2) || sb_add(sb, hd->buf + x->val_off, x->val_len)))
			return -1;
		if ((!last || (end_crlf && hd->in_value)) && sb_add(sb, "\r\n", 2))
			return -1;
	}
	h->hdrs_out = hd->n;
	return 0;
}

static void percent_decode(struct ids_sbuf *sb)
{
	size_t o = 0;

	for (size_t i = 0; i < sb->len; i++) {
		if (sb->p[i] == '%' && i + 2 < sb->len &&
		    isxdigit(sb->p[i + 1]) &&
		    isxdigit(sb->p[i + 2])) {
			char hex[3] = { (char)sb->p[i + 1], (char)sb->p[i + 2],
					0 };

			sb->p[o++] = (uint8_t)strtoul(hex, NULL, 16);
			i += 2;
		} else {
			sb->p[o++] = sb->p[i];
		}
	}
	sb->len = o;
}

/* The values of the Cookie headers, CRLF-joined, into the COOKIE buffer. */
static int cookies_out(struct ids_http *h)
{
	const struct http_head *hd = &h->head;
	struct ids_sbuf *sb = &h->buf[IDS_BUF_COOKIE];

	for (unsigned i = 0; i < hd->n; i++) {
		const struct http_head_hdr *x = &hd->hdrs[i];

		if (x->name_len != 6 ||
		    strncasecmp(hd->buf + x->name_off, "cookie", 6))
			continue;
		if ((sb->len && sb_add(sb, "\r\n", 2)) ||
		    sb_add(sb, hd->buf + x->val_off, x->val_len))
			return -1;
	}
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct ids_flow *f = flow_of(p);
	struct ids_http *h = f->http;
	const char *m = http_method_str((enum http_method)p->method);

	if (http_head_end_url(&h->head, SIZE_MAX) ||
	    sb_add(&h->buf[IDS_BUF_URI], h->head.buf, h->head.url_len) ||
	    sb_add(&h->buf[IDS_BUF_RAW_URI], h->head.buf, h->head.url_len) ||
	    headers_out(h, true) || cookies_out(h))
		return -1;
	if (sb_add(&h->buf[IDS_BUF_METHOD], m, strlen(m)))
		return -1;
	percent_decode(&h->buf[IDS_BUF_URI]);
	f->http->event(f, IDS_CLASS_HTTP_HDR);
	return f->denied ? -1 : 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	struct ids_flow *f = flow_of(p);
	struct ids_http *h = f->http;
	struct ids_sbuf *sb = &h->buf[IDS_BUF_BODY];

	if (h->body_done)
		return 0;
	if (sb_add(sb, at, n))
		return -1;
	if (sb->len == sb->max) {
		h->body_done = true;
		f->http->event(f, IDS_CLASS_HTTP_BODY);
	}
	return f->denied ? -1 : 0;
}

static int on_complete(http_parser *p)
{
	struct ids_flow *f = flow_of(p);

	/* trailers (chunked): after the head's headers, as they came */
	if (headers_out(f->http, false))
		return -1;
	if (!f->http->body_done) {
		f->http->body_done = true;
		f->http->event(f, IDS_CLASS_HTTP_BODY);
	}
	return f->denied ? -1 : 0;
}

static const http_parser_settings settings = {
	.on_message_begin = on_begin,
	.on_url = on_url,
	.on_header_field = on_field,
	.on_header_value = on_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_complete,
};

/* Decides from the stream's first bytes; UNKNOWN while they are a prefix. */
static enum ids_http_state detect(const uint8_t *s, size_t n)
{
	for (int i = 0; methods[i]; i++) {
		size_t ml = strlen(methods[i]);
		size_t k = n < ml ? n : ml;

		if (memcmp(s, methods[i], k) == 0)
			return n >= ml ? IDS_HTTP_ON : IDS_HTTP_UNKNOWN;
	}
	return IDS_HTTP_OFF;
}

static void execute(struct ids_flow *f, const uint8_t *d, size_t n)
{
	struct ids_http *h = f->http;
	size_t done;

	h->parser.data = f;
	enum http_errno e;

	done = http_parser_execute(&h->parser, &settings, (const char *)d, n);
	e = HTTP_PARSER_ERRNO(&h->parser);
	if (done != n || e != HPE_OK || h->parser.upgrade)
		h->state = IDS_HTTP_OFF;
	/* our callbacks fail only when denied or out of memory */
	if (!f->denied && !f->err && e >= HPE_CB_message_begin &&
	    e <= HPE_CB_chunk_complete)
		f->err = -ENOMEM;
}

void ids_http_feed(struct ids_flow *f)
{
	struct ids_http *h = f->http;
	const struct ids_stream *st = &f->dir[IDS_TO_SERVER];
	uint8_t head[16];
	size_t hn, take;

	if (h->state == IDS_HTTP_OFF)
		return;
	if (h->state == IDS_HTTP_ON) {
		execute(f, f->chunk, f->chunk_len);
		return;
	}
	/*
	 * Undecided: the stream so far is a strict prefix of a method, so it
	 * is short and still whole in the ring.
	 */
	if (st->total >= sizeof(head)) {
		h->state = IDS_HTTP_OFF;
		return;
	}
	hn = (size_t)st->total;
	if (hn)
		memcpy(head, st->ring, hn);
	take = sizeof(head) - hn < f->chunk_len ? sizeof(head) - hn :
		f->chunk_len;
	memcpy(head + hn, f->chunk, take);
	h->state = detect(head, hn + take);
	if (h->state != IDS_HTTP_ON)
		return;
	if (hn)
		execute(f, st->ring, hn);
	if (h->state == IDS_HTTP_ON)
		execute(f, f->chunk, f->chunk_len);
}
