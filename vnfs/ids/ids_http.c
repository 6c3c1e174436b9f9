// SPDX-License-Identifier: MIT
/*
 * HTTP request buffers for http_uri / http_raw_uri / http_header /
 * http_cookie / http_method / http_client_body, from the to-server byte
 * stream, and response buffers for http_stat_code / http_stat_msg /
 * http_header / file_data from the to-client one, with libhttp-parser.
 *
 * Responses: the body (file_data) is de-chunked by the parser and, when
 * Content-Encoding is gzip or deflate, inflated with zlib as Snort's
 * http_inspect does, up to IDS_HTTP_FILE_MAX decoded bytes; a body that
 * does not decode keeps what decoded before the error.  Response rules
 * are checked at the end of the response head and of the body (or when
 * file_data is full).  A response flow is one whose to-client stream
 * starts with "HTTP/".
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "ids_int.h"

static const char *const request_methods[] = { "GET ", "POST ", "HEAD ", "PUT ",
	"DELETE ", "OPTIONS ", "PATCH ", "TRACE ", "CONNECT ", NULL };

struct ids_http *ids_http_create(ids_http_event_fn event, bool response)
{
	struct ids_http *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->event = event;
	h->response = response;
	http_parser_init(&h->parser, response ? HTTP_RESPONSE : HTTP_REQUEST);
	h->buf[IDS_BUF_RESP_HEADER].max = IDS_HTTP_HEADER_MAX;
	h->buf[IDS_BUF_STAT_CODE].max = 8;
	h->buf[IDS_BUF_STAT_MSG].max = 256;
	h->buf[IDS_BUF_FILE_DATA].max = IDS_HTTP_FILE_MAX;
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
	if (h->z) {
		inflateEnd(h->z);
		free(h->z);
	}
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

static struct ids_http *http_of(http_parser *p)
{
	return p->data;
}

static struct ids_flow *flow_of(http_parser *p)
{
	return http_of(p)->flow;
}

static int on_begin(http_parser *p)
{
	struct ids_http *h = http_of(p);

	for (int b = IDS_BUF_URI; b < IDS_BUF_COUNT; b++)
		h->buf[b].len = 0;
	http_head_reset(&h->head);
	h->hdrs_out = 0;
	h->body_done = false;
	h->gzip = false;
	h->z_failed = false;
	h->z_ready = false;
	h->nlead = 0;
	return 0;
}

/*
 * The head is collected whole (no limit of ours: http_parser bounds a head
 * at HTTP_MAX_HEADER_SIZE); the buffers rules see are cut at their caps
 * when written.
 */
static int on_url(http_parser *p, const char *at, size_t n)
{
	return http_head_append(&http_of(p)->head, at, n, SIZE_MAX);
}

static int on_field(http_parser *p, const char *at, size_t n)
{
	return http_head_field(&http_of(p)->head, at, n, SIZE_MAX);
}

static int on_value(http_parser *p, const char *at, size_t n)
{
	return http_head_value(&http_of(p)->head, at, n, SIZE_MAX);
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
	struct ids_sbuf *sb = &h->buf[h->response ? IDS_BUF_RESP_HEADER :
				      IDS_BUF_HEADER];

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

static int on_status(http_parser *p, const char *at, size_t n)
{
	return sb_add(&http_of(p)->buf[IDS_BUF_STAT_MSG], at, n);
}

/* A header's value equals @word, ignoring case and surrounding spaces. */
static bool value_is(const struct http_head *hd, const struct http_head_hdr *x,
		     const char *word)
{
	const char *v = hd->buf + x->val_off, *e = v + x->val_len;
	size_t n = strlen(word);

	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return (size_t)(e - v) == n && !strncasecmp(v, word, n);
}

/* Response head: status code, headers, whether the body is compressed. */
static int response_head(http_parser *p)
{
	struct ids_flow *f = flow_of(p);
	struct ids_http *h = http_of(p);
	const struct http_head *hd = &h->head;
	char code[8];

	snprintf(code, sizeof(code), "%u", p->status_code % 1000);
	if (http_head_end_url(&h->head, SIZE_MAX) ||
	    sb_add(&h->buf[IDS_BUF_STAT_CODE], code, strlen(code)) ||
	    headers_out(h, true))
		return -1;
	for (unsigned i = 0; i < hd->n; i++) {
		const struct http_head_hdr *x = &hd->hdrs[i];

		if (x->name_len == 16 &&
		    !strncasecmp(hd->buf + x->name_off, "content-encoding", 16))
			h->gzip = value_is(hd, x, "gzip") ||
				  value_is(hd, x, "x-gzip") ||
				  value_is(hd, x, "deflate");
	}
	h->event(f, IDS_CLASS_RESP_HDR);
	return f->denied ? -1 : 0;
}

static int on_headers_complete(http_parser *p)
{
	struct ids_flow *f = flow_of(p);
	struct ids_http *h = http_of(p);
	const char *m = http_method_str((enum http_method)p->method);

	if (h->response)
		return response_head(p);
	if (http_head_end_url(&h->head, SIZE_MAX) ||
	    sb_add(&h->buf[IDS_BUF_URI], h->head.buf, h->head.url_len) ||
	    sb_add(&h->buf[IDS_BUF_RAW_URI], h->head.buf, h->head.url_len) ||
	    headers_out(h, true) || cookies_out(h))
		return -1;
	if (sb_add(&h->buf[IDS_BUF_METHOD], m, strlen(m)))
		return -1;
	percent_decode(&h->buf[IDS_BUF_URI]);
	h->event(f, IDS_CLASS_HTTP_HDR);
	return f->denied ? -1 : 0;
}

/* Runs @n compressed bytes through h->z into file_data, up to its cap. */
static void inflate_some(struct ids_http *h, const uint8_t *at, size_t n)
{
	struct ids_sbuf *sb = &h->buf[IDS_BUF_FILE_DATA];

	h->z->next_in = (Bytef *)at;
	h->z->avail_in = (uInt)n;
	while (h->z->avail_in && sb->len < sb->max && !h->z_failed) {
		int rc;

		h->z->next_out = sb->p + sb->len;
		h->z->avail_out = (uInt)(sb->max - sb->len);
		rc = inflate(h->z, Z_NO_FLUSH);
		sb->len = sb->max - h->z->avail_out;
		if (rc == Z_STREAM_END)
			break;
		if (rc != Z_OK)
			h->z_failed = true;	/* keep what decoded */
	}
}

/*
 * Inflates @n body bytes into file_data.  The first two bytes say the
 * format: gzip (1f 8b), zlib (a valid RFC 1950 header), else raw deflate,
 * which some servers send as "deflate".  -1 only when memory runs out.
 */
static int inflate_body(struct ids_http *h, const uint8_t *at, size_t n)
{
	struct ids_sbuf *sb = &h->buf[IDS_BUF_FILE_DATA];
	int wbits;

	if (h->z_failed)
		return 0;
	if (!h->z_ready) {
		while (h->nlead < 2 && n) {
			h->zlead[h->nlead++] = *at++;
			n--;
		}
		if (h->nlead < 2)
			return 0;
		if (h->zlead[0] == 0x1f && h->zlead[1] == 0x8b)
			wbits = 15 + 16;
		else if ((h->zlead[0] & 0x0f) == 8 &&
			 (h->zlead[0] << 8 | h->zlead[1]) % 31 == 0)
			wbits = 15;
		else
			wbits = -15;
		if (!h->z) {
			h->z = calloc(1, sizeof(*h->z));
			if (!h->z || inflateInit2(h->z, wbits) != Z_OK) {
				free(h->z);
				h->z = NULL;
				return -1;
			}
		} else if (inflateReset2(h->z, wbits) != Z_OK) {
			return -1;
		}
		if (sb->cap < sb->max) {
			uint8_t *np = realloc(sb->p, sb->max);

			if (!np)
				return -1;
			sb->p = np;
			sb->cap = sb->max;
		}
		h->z_ready = true;
		inflate_some(h, h->zlead, 2);
	}
	inflate_some(h, at, n);
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	struct ids_flow *f = flow_of(p);
	struct ids_http *h = http_of(p);
	struct ids_sbuf *sb = &h->buf[h->response ? IDS_BUF_FILE_DATA :
				      IDS_BUF_BODY];

	if (h->body_done)
		return 0;
	if (h->gzip ? inflate_body(h, (const uint8_t *)at, n) :
	    sb_add(sb, at, n))
		return -1;
	if (sb->len == sb->max) {
		h->body_done = true;
		h->event(f, h->response ? IDS_CLASS_RESP_BODY :
			 IDS_CLASS_HTTP_BODY);
	}
	return f->denied ? -1 : 0;
}

static int on_complete(http_parser *p)
{
	struct ids_flow *f = flow_of(p);
	struct ids_http *h = http_of(p);

	/* trailers (chunked): after the head's headers, as they came */
	if (headers_out(h, false))
		return -1;
	if (!h->body_done) {
		h->body_done = true;
		h->event(f, h->response ? IDS_CLASS_RESP_BODY :
			 IDS_CLASS_HTTP_BODY);
	}
	return f->denied ? -1 : 0;
}

static const http_parser_settings settings = {
	.on_message_begin = on_begin,
	.on_url = on_url,
	.on_status = on_status,
	.on_header_field = on_field,
	.on_header_value = on_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_complete,
};

/* Decides from the stream's first bytes; UNKNOWN while they are a prefix. */
static enum ids_http_state detect(const uint8_t *s, size_t n, bool response)
{
	static const char *const version[] = { "HTTP/", NULL };
	const char *const *methods = response ? version : request_methods;

	for (int i = 0; methods[i]; i++) {
		size_t ml = strlen(methods[i]);
		size_t k = n < ml ? n : ml;

		if (memcmp(s, methods[i], k) == 0)
			return n >= ml ? IDS_HTTP_ON : IDS_HTTP_UNKNOWN;
	}
	return IDS_HTTP_OFF;
}

static void execute(struct ids_flow *f, struct ids_http *h, const uint8_t *d,
		    size_t n)
{
	size_t done;

	h->parser.data = h;
	h->flow = f;
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

void ids_http_feed(struct ids_flow *f, struct ids_http *h)
{
	const struct ids_stream *st = &f->dir[h->response ? IDS_TO_CLIENT :
					      IDS_TO_SERVER];
	uint8_t head[16];
	size_t hn, take;

	if (h->state == IDS_HTTP_OFF)
		return;
	if (h->state == IDS_HTTP_ON) {
		execute(f, h, f->chunk, f->chunk_len);
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
	h->state = detect(head, hn + take, h->response);
	if (h->state != IDS_HTTP_ON)
		return;
	if (hn)
		execute(f, h, st->ring, hn);
	if (h->state == IDS_HTTP_ON)
		execute(f, h, f->chunk, f->chunk_len);
}
