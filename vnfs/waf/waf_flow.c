/*
 * WAF flows: HTTP/1.x stream parsing and one ModSecurity transaction per
 * request.
 *
 * THREADING: a flow belongs to the thread feeding it (waf_engine.h); this
 * file has no shared mutable state except the engine's reference count and
 * transaction counter, both atomics.
 *
 * STREAMS: each direction has its own http_parser.  Requests are parsed
 * from WAF_DIR_IN; a transaction is created when a request begins and goes
 * through ModSecurity's phases as the parser produces its parts:
 *   message begin     msc_new_transaction + msc_process_connection
 *   headers complete  msc_process_uri, msc_add_n_request_header...,
 *                     msc_process_request_headers           (phase 1)
 *   body              msc_append_request_body (dechunked)
 *   message complete  msc_process_request_body              (phase 2)
 * with an intervention check after each step.  CRS's inbound anomaly
 * evaluation (949110) runs in phase 2, so every request, with or without a
 * body, goes through msc_process_request_body.
 *
 * With response inspection, complete requests queue in arrival order
 * (pipelining) and each response from WAF_DIR_OUT pairs with the oldest;
 * interim 1xx responses do not consume a request.  Only the first
 * WAF_LIVE_WAITING queued requests keep their transaction; the responses of
 * deeper ones pass uninspected (their HEAD flag is kept so that the
 * response parser stays in step).  Without response inspection a
 * transaction ends with its request.
 *
 * The parts of a request head arrive in pieces (a chunk may end anywhere);
 * struct http_head (vnfs/http/http_head.h) collects them, bounded by
 * max_header_bytes.  Bodies are
 * handed to ModSecurity piece by piece and not kept here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "http_head.h"
#include "waf_priv.h"

#define WAF_LIVE_WAITING 16     /* queued requests that keep a transaction */
#define WAF_MAX_WAITING 1024    /* queued requests before a deny */

struct waf_txn {
	Transaction *tx;        /* NULL: response passes uninspected */
	struct waf_match_log log;  /* written by waf_log_cb via msc */
	bool head_req;          /* request was HEAD: response has no body */
	struct waf_txn *next;   /* waiting queue */
};

struct waf_flow {
	struct waf_engine *eng;         /* holds a reference */
	char caddr[64], saddr[64];
	int cport, sport;

	http_parser rp;                 /* requests (WAF_DIR_IN) */
	http_parser sp;                 /* responses (WAF_DIR_OUT) */
	struct http_head rh, sh;        /* request, response heads */

	struct waf_txn *req;            /* request being received */
	struct waf_txn *wait_head, *wait_tail;  /* complete, awaiting response */
	unsigned n_wait;
	struct waf_txn *resp;           /* request whose response is being received */
	bool resp_claimed;              /* a response exchange is under way */

	bool tunnel;                    /* after Upgrade/CONNECT: not HTTP */
	bool denied;
	bool failed;                    /* internal failure (ENOMEM) in a callback */
	struct waf_verdict deny;        /* sticky verdict once denied */
	struct waf_verdict *out;        /* verdict of the feed in progress */
};

/* --- transactions ------------------------------------------------------- */

/* Ends t's ModSecurity transaction, if it still has one. */
static void waf_txn_end(struct waf_flow *f, struct waf_txn *t)
{
	if (t->tx) {
		msc_transaction_cleanup(t->tx);
		t->tx = NULL;
		atomic_fetch_sub_explicit(&f->eng->live_tx, 1,
					  memory_order_relaxed);
	}
}

static void waf_txn_free(struct waf_flow *f, struct waf_txn *t)
{
	if (!t)
		return;
	waf_txn_end(f, t);
	free(t);
}

static void waf_verdict_merge(struct waf_verdict *v,
			      const struct waf_match_log *log)
{
	struct waf_match_log tmp;
	unsigned i;

	tmp.n = v->n_matched;
	memcpy(tmp.ids, v->matched, sizeof(tmp.ids));
	for (i = 0; i < log->n; i++)
		waf_match_log_add(&tmp, log->ids[i]);
	v->n_matched = tmp.n;
	memcpy(v->matched, tmp.ids, sizeof(v->matched));
}

/* Records the flow's final verdict. */
static void waf_flow_set_deny(struct waf_flow *f, enum waf_dir dir,
			      enum waf_source src, unsigned rule, int status,
			      const char *msg, const struct waf_match_log *log)
{
	struct waf_verdict *d = &f->deny;

	if (f->denied)
		return;
	f->denied = true;
	d->action = WAF_DENY;
	d->dir = dir;
	d->source = src;
	d->rule_id = rule;
	d->status = status;
	snprintf(d->msg, sizeof(d->msg), "%s", msg);
	d->n_matched = 0;
	if (log)
		waf_verdict_merge(d, log);
}

static void waf_flow_fail(struct waf_flow *f, enum waf_dir dir)
{
	f->failed = true;
	waf_flow_set_deny(f, dir, WAF_SRC_ENGINE, 0, 500,
			  "internal error (out of memory): failing closed", NULL);
}

/* Checks for a ModSecurity intervention; records the deny if any. */
static bool waf_txn_check(struct waf_flow *f, struct waf_txn *t,
			  enum waf_dir dir)
{
	ModSecurityIntervention it = { .status = 200 };
	char msg[WAF_MSG_LEN];
	unsigned id;

	if (!msc_intervention(t->tx, &it)) {
		free(it.url);
		free(it.log);
		return false;
	}
	id = waf_log_rule_id(it.log);
	waf_log_msg(it.log ? it.log : "denied by ModSecurity", msg, sizeof(msg));
	waf_flow_set_deny(f, dir, id ? WAF_SRC_RULES : WAF_SRC_ENGINE, id,
			  it.status, msg, &t->log);
	free(it.url);
	free(it.log);
	return true;
}

static struct waf_txn *waf_txn_new(struct waf_flow *f)
{
	struct waf_engine *e = f->eng;
	struct waf_txn *t = calloc(1, sizeof(*t));
	char id[48];

	if (!t)
		return NULL;
	snprintf(id, sizeof(id), "waf-%lx",
		 atomic_fetch_add_explicit(&e->next_tx, 1, memory_order_relaxed));
	t->tx = msc_new_transaction_with_id(e->msc, e->rules, id, &t->log);
	if (!t->tx) {
		free(t);
		return NULL;
	}
	atomic_fetch_add_explicit(&e->live_tx, 1, memory_order_relaxed);
	msc_process_connection(t->tx, f->caddr, f->cport, f->saddr, f->sport);
	return t;
}

static void waf_version(const http_parser *p, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u", p->http_major, p->http_minor);
}

/* --- request callbacks -------------------------------------------------- */

static int waf_req_begin(http_parser *p)
{
	struct waf_flow *f = p->data;

	http_head_reset(&f->rh);
	waf_txn_free(f, f->req);
	f->req = waf_txn_new(f);
	if (!f->req) {
		waf_flow_fail(f, WAF_DIR_IN);
		return -1;
	}
	return waf_txn_check(f, f->req, WAF_DIR_IN) ? -1 : 0;
}

static int waf_req_url(http_parser *p, const char *at, size_t n)
{
	struct waf_flow *f = p->data;

	if (f->rh.url_done)
		return -1;
	if (http_head_append(&f->rh, at, n, f->eng->max_header_bytes) < 0) {
		if (!f->rh.overflow)
			waf_flow_fail(f, WAF_DIR_IN);
		return -1;
	}
	return 0;
}

static int waf_req_field(http_parser *p, const char *at, size_t n)
{
	struct waf_flow *f = p->data;

	if (http_head_field(&f->rh, at, n, f->eng->max_header_bytes) < 0) {
		if (!f->rh.overflow)
			waf_flow_fail(f, WAF_DIR_IN);
		return -1;
	}
	return 0;
}

static int waf_req_value(http_parser *p, const char *at, size_t n)
{
	struct waf_flow *f = p->data;

	if (http_head_value(&f->rh, at, n, f->eng->max_header_bytes) < 0) {
		if (!f->rh.overflow)
			waf_flow_fail(f, WAF_DIR_IN);
		return -1;
	}
	return 0;
}

static int waf_req_headers(http_parser *p)
{
	struct waf_flow *f = p->data;
	struct http_head *h = &f->rh;
	struct waf_txn *t = f->req;
	char ver[16];
	unsigned i;

	if (!t)
		return -1;
	if (http_head_end_url(h, f->eng->max_header_bytes) < 0) {
		if (!h->overflow)
			waf_flow_fail(f, WAF_DIR_IN);
		return -1;
	}
	t->head_req = p->method == HTTP_HEAD;
	waf_version(p, ver, sizeof(ver));
	msc_process_uri(t->tx, h->buf, http_method_str(p->method), ver);
	for (i = 0; i < h->n; i++)
		msc_add_n_request_header(t->tx,
			(const unsigned char *)h->buf + h->hdrs[i].name_off,
			h->hdrs[i].name_len,
			(const unsigned char *)h->buf + h->hdrs[i].val_off,
			h->hdrs[i].val_len);
	msc_process_request_headers(t->tx);
	return waf_txn_check(f, t, WAF_DIR_IN) ? -1 : 0;
}

static int waf_req_body(http_parser *p, const char *at, size_t n)
{
	struct waf_flow *f = p->data;

	if (!f->req)
		return -1;
	msc_append_request_body(f->req->tx, (const unsigned char *)at, n);
	return waf_txn_check(f, f->req, WAF_DIR_IN) ? -1 : 0;
}

static void waf_wait_push(struct waf_flow *f, struct waf_txn *t)
{
	t->next = NULL;
	if (f->wait_tail)
		f->wait_tail->next = t;
	else
		f->wait_head = t;
	f->wait_tail = t;
	f->n_wait++;
}

static struct waf_txn *waf_wait_pop(struct waf_flow *f)
{
	struct waf_txn *t = f->wait_head;

	if (!t)
		return NULL;
	f->wait_head = t->next;
	if (!f->wait_head)
		f->wait_tail = NULL;
	f->n_wait--;
	t->next = NULL;
	return t;
}

static int waf_req_complete(http_parser *p)
{
	struct waf_flow *f = p->data;
	struct waf_txn *t = f->req;

	if (!t)
		return -1;
	msc_process_request_body(t->tx);
	if (waf_txn_check(f, t, WAF_DIR_IN))
		return -1;
	f->req = NULL;
	http_head_reset(&f->rh);
	f->out->requests++;
	waf_verdict_merge(f->out, &t->log);
	if (!f->eng->inspect_response) {
		waf_txn_free(f, t);
		return 0;
	}
	if (f->n_wait >= WAF_MAX_WAITING) {
		waf_txn_free(f, t);
		waf_flow_set_deny(f, WAF_DIR_IN, WAF_SRC_HTTP,
				  WAF_RULE_HTTP_OTHER, 400,
				  "too many requests awaiting a response", NULL);
		return -1;
	}
	if (f->n_wait >= WAF_LIVE_WAITING)
		waf_txn_end(f, t);
	waf_wait_push(f, t);
	return 0;
}

/* --- response callbacks ------------------------------------------------- */

static int waf_resp_begin(http_parser *p)
{
	struct waf_flow *f = p->data;

	http_head_reset(&f->sh);
	if (!f->resp_claimed) {
		/* NULL: a response nobody asked for; it passes uninspected. */
		f->resp = waf_wait_pop(f);
		f->resp_claimed = true;
	}
	return 0;
}

static int waf_resp_field(http_parser *p, const char *at, size_t n)
{
	struct waf_flow *f = p->data;

	if (http_head_field(&f->sh, at, n, f->eng->max_header_bytes) < 0) {
		if (!f->sh.overflow)
			waf_flow_fail(f, WAF_DIR_OUT);
		return -1;
	}
	return 0;
}

static int waf_resp_value(http_parser *p, const char *at, size_t n)
{
	struct waf_flow *f = p->data;

	if (http_head_value(&f->sh, at, n, f->eng->max_header_bytes) < 0) {
		if (!f->sh.overflow)
			waf_flow_fail(f, WAF_DIR_OUT);
		return -1;
	}
	return 0;
}

static bool waf_interim(const http_parser *p)
{
	return p->status_code >= 100 && p->status_code < 200 &&
	       p->status_code != 101;
}

static int waf_resp_headers(http_parser *p)
{
	struct waf_flow *f = p->data;
	struct http_head *h = &f->sh;
	struct waf_txn *t = f->resp;
	char proto[24];
	unsigned i;

	if (waf_interim(p))
		return 0;
	if (t && t->tx) {
		for (i = 0; i < h->n; i++)
			msc_add_n_response_header(t->tx,
				(const unsigned char *)h->buf + h->hdrs[i].name_off,
				h->hdrs[i].name_len,
				(const unsigned char *)h->buf + h->hdrs[i].val_off,
				h->hdrs[i].val_len);
		snprintf(proto, sizeof(proto), "HTTP/%u.%u",
			 p->http_major, p->http_minor);
		msc_process_response_headers(t->tx, p->status_code, proto);
		if (waf_txn_check(f, t, WAF_DIR_OUT))
			return -1;
	}
	/* 1: the response to a HEAD request has no body. */
	return t && t->head_req ? 1 : 0;
}

static int waf_resp_body(http_parser *p, const char *at, size_t n)
{
	struct waf_flow *f = p->data;
	struct waf_txn *t = f->resp;

	if (!t || !t->tx)
		return 0;
	msc_append_response_body(t->tx, (const unsigned char *)at, n);
	return waf_txn_check(f, t, WAF_DIR_OUT) ? -1 : 0;
}

static int waf_resp_complete(http_parser *p)
{
	struct waf_flow *f = p->data;
	struct waf_txn *t = f->resp;

	http_head_reset(&f->sh);
	if (waf_interim(p))
		return 0;       /* the final response is still to come */
	f->resp_claimed = false;
	f->resp = NULL;
	if (!t)
		return 0;
	if (t->tx) {
		msc_process_response_body(t->tx);
		if (waf_txn_check(f, t, WAF_DIR_OUT)) {
			waf_txn_free(f, t);
			return -1;
		}
		msc_process_logging(t->tx);
		waf_verdict_merge(f->out, &t->log);
		f->out->responses++;
	}
	waf_txn_free(f, t);
	return 0;
}

static const http_parser_settings waf_req_settings = {
	.on_message_begin = waf_req_begin,
	.on_url = waf_req_url,
	.on_header_field = waf_req_field,
	.on_header_value = waf_req_value,
	.on_headers_complete = waf_req_headers,
	.on_body = waf_req_body,
	.on_message_complete = waf_req_complete,
};

static const http_parser_settings waf_resp_settings = {
	.on_message_begin = waf_resp_begin,
	.on_header_field = waf_resp_field,
	.on_header_value = waf_resp_value,
	.on_headers_complete = waf_resp_headers,
	.on_body = waf_resp_body,
	.on_message_complete = waf_resp_complete,
};

/* --- flows -------------------------------------------------------------- */

struct waf_flow *waf_flow_create(struct waf_engine *e,
				 const char *client_addr, uint16_t client_port,
				 const char *server_addr, uint16_t server_port)
{
	struct waf_flow *f;

	if (!e || !client_addr || !server_addr ||
	    strlen(client_addr) >= sizeof(f->caddr) ||
	    strlen(server_addr) >= sizeof(f->saddr)) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->eng = waf_engine_get(e);
	strcpy(f->caddr, client_addr);
	strcpy(f->saddr, server_addr);
	f->cport = client_port;
	f->sport = server_port;
	http_parser_init(&f->rp, HTTP_REQUEST);
	http_parser_init(&f->sp, HTTP_RESPONSE);
	f->rp.data = f;
	f->sp.data = f;
	return f;
}

/* Frees every transaction the flow holds. */
static void waf_flow_release(struct waf_flow *f)
{
	struct waf_txn *t;

	waf_txn_free(f, f->req);
	f->req = NULL;
	waf_txn_free(f, f->resp);
	f->resp = NULL;
	f->resp_claimed = false;
	while ((t = waf_wait_pop(f)))
		waf_txn_free(f, t);
	http_head_free(&f->rh);
	http_head_free(&f->sh);
}

void waf_flow_destroy(struct waf_flow *f)
{
	if (!f)
		return;
	waf_flow_release(f);
	waf_engine_put(f->eng);
	free(f);
}

/* Maps a parser error to the deny it stands for. */
static void waf_flow_parse_error(struct waf_flow *f, enum waf_dir dir,
				 const http_parser *p, const struct http_head *h)
{
	enum http_errno err = HTTP_PARSER_ERRNO(p);
	bool in_start_line = !h->url_done && h->n == 0;
	unsigned rule = WAF_RULE_HTTP_OTHER;
	char msg[WAF_MSG_LEN];

	if (h->overflow || err == HPE_HEADER_OVERFLOW) {
		rule = WAF_RULE_HTTP_HEADER_LIMIT;
	} else {
		switch (err) {
		case HPE_INVALID_METHOD:
		case HPE_INVALID_URL:
		case HPE_INVALID_HOST:
		case HPE_INVALID_PORT:
		case HPE_INVALID_PATH:
		case HPE_INVALID_QUERY_STRING:
		case HPE_INVALID_FRAGMENT:
		case HPE_INVALID_VERSION:
		case HPE_INVALID_STATUS:
			rule = WAF_RULE_HTTP_REQUEST_LINE;
			break;
		case HPE_INVALID_CONSTANT:
		case HPE_LF_EXPECTED:
		case HPE_STRICT:
		case HPE_INVALID_HEADER_TOKEN:
			rule = in_start_line ? WAF_RULE_HTTP_REQUEST_LINE :
			       WAF_RULE_HTTP_HEADER_SYNTAX;
			break;
		case HPE_INVALID_CONTENT_LENGTH:
			rule = WAF_RULE_HTTP_CONTENT_LENGTH;
			break;
		case HPE_UNEXPECTED_CONTENT_LENGTH:
			rule = http_head_has(h, "transfer-encoding") ?
			       WAF_RULE_HTTP_CL_AND_TE :
			       WAF_RULE_HTTP_CONTENT_LENGTH;
			break;
		case HPE_INVALID_CHUNK_SIZE:
		case HPE_INVALID_TRANSFER_ENCODING:
			rule = WAF_RULE_HTTP_CHUNKED;
			break;
		default:
			break;
		}
	}
	snprintf(msg, sizeof(msg), "HTTP protocol violation (%s): %s",
		 dir == WAF_DIR_IN ? "request" : "response",
		 h->overflow ? "message head too large" :
		 http_errno_description(err));
	waf_flow_set_deny(f, dir, WAF_SRC_HTTP, rule, 400, msg, NULL);
}

static void waf_verdict_init(struct waf_verdict *v, enum waf_dir dir)
{
	memset(v, 0, sizeof(*v));
	v->action = WAF_ALLOW;
	v->dir = dir;
	v->status = 200;
}

/* End of stream in direction dir. */
static int waf_flow_eof(struct waf_flow *f, enum waf_dir dir)
{
	if (dir == WAF_DIR_IN) {
		/* A request cut short never reaches the server whole. */
		waf_txn_free(f, f->req);
		f->req = NULL;
		http_head_reset(&f->rh);
		return WAF_ALLOW;
	}
	/* Responses delimited by the end of the connection complete here;
	 * a truncated response is not an attack: parser errors are ignored. */
	http_parser_execute(&f->sp, &waf_resp_settings, NULL, 0);
	if (f->denied)
		return WAF_DENY;
	return WAF_ALLOW;
}

int waf_flow_feed(struct waf_flow *f, enum waf_dir dir,
		  const uint8_t *data, size_t len, struct waf_verdict *out)
{
	http_parser *p;
	size_t n;
	int rc;

	if (!f || !out || (dir != WAF_DIR_IN && dir != WAF_DIR_OUT) ||
	    (!data && len))
		return -EINVAL;
	if (f->denied) {
		*out = f->deny;
		out->requests = 0;
		out->responses = 0;
		return WAF_DENY;
	}
	waf_verdict_init(out, dir);
	if (f->tunnel || (dir == WAF_DIR_OUT && !f->eng->inspect_response))
		return WAF_ALLOW;

	f->out = out;
	if (len == 0) {
		rc = waf_flow_eof(f, dir);
		goto out;
	}
	p = dir == WAF_DIR_IN ? &f->rp : &f->sp;
	n = http_parser_execute(p, dir == WAF_DIR_IN ? &waf_req_settings :
				&waf_resp_settings, (const char *)data, len);
	if (f->denied) {
		rc = WAF_DENY;
		goto out;
	}
	if (HTTP_PARSER_ERRNO(p) != HPE_OK) {
		waf_flow_parse_error(f, dir, p,
				     dir == WAF_DIR_IN ? &f->rh : &f->sh);
		rc = WAF_DENY;
		goto out;
	}
	if (p->upgrade) {
		/* The parser stopped after an Upgrade/CONNECT message: the
		 * rest (data + n onwards) is another protocol. */
		f->tunnel = true;
	} else if (n != len) {
		waf_flow_set_deny(f, dir, WAF_SRC_HTTP, WAF_RULE_HTTP_OTHER, 400,
				  "HTTP parser stopped early", NULL);
		rc = WAF_DENY;
		goto out;
	}
	rc = WAF_ALLOW;
out:
	f->out = NULL;
	if (f->denied) {
		unsigned reqs = out->requests, resps = out->responses;

		*out = f->deny;
		out->requests = reqs;
		out->responses = resps;
		waf_flow_release(f);
		rc = WAF_DENY;
	}
	return rc;
}

bool waf_flow_in_message(const struct waf_flow *f, enum waf_dir dir)
{
	if (dir == WAF_DIR_IN)
		return f->req != NULL;
	return f->resp_claimed;
}

bool waf_flow_denied(const struct waf_flow *f)
{
	return f->denied;
}

unsigned waf_flow_awaiting(const struct waf_flow *f)
{
	return f->n_wait + (f->resp_claimed ? 1u : 0u);
}
