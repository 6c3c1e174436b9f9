// SPDX-License-Identifier: MIT
/*
 * Flows, workers and the per-chunk scan.
 *
 * Per chunk of direction d of flow f:
 *   1. run the chunk through d's Hyperscan stream: each trigger pattern
 *      that ends in this chunk marks its rules;
 *   2. confirm the marked rules and the "always" raw rules on d's history
 *      (the last IDS_WINDOW bytes) followed by the chunk, in ruleset order
 *      (flowbit setters first); that linear copy is made in the worker
 *      only when a rule actually looks at raw bytes;
 *   3. to-server bytes of an HTTP flow go to the request parser, whose
 *      events check the HTTP rules (ids_http.c -> the flow's http_event);
 *   4. the chunk's tail goes into d's history ring: each byte is copied
 *      once, and a flow never holds more than IDS_WINDOW per direction.
 * A rule reports at most once per flow; the first drop/reject rule denies
 * the flow for good.
 *
 * THREADING: a flow is used by one thread at a time, with that thread's
 * worker; the fields w/out/cur_dir live only during one ids_flow_scan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "ids_dfilter.h"
#include "ids_int.h"

static void http_event(struct ids_flow *f, enum ids_class cls);

/* ---- workers ---- */

struct ids_worker *ids_worker_create(void)
{
	struct ids_worker *w = calloc(1, sizeof(*w));

	if (!w)
		goto out_nomem;
	w->md = pcre2_match_data_create(1, NULL);
	if (!w->md)
		goto out_free;
	w->mctx = pcre2_match_context_create(NULL);
	if (!w->mctx)
		goto out_md;
	/* a hostile stream must not make one regex expensive */
	pcre2_set_match_limit(w->mctx, 100000);
	pcre2_set_depth_limit(w->mctx, 10000);
	w->epoch = 1;
	return w;

out_md:
	pcre2_match_data_free(w->md);
out_free:
	free(w);
out_nomem:
	errno = ENOMEM;
	return NULL;
}

void ids_worker_destroy(struct ids_worker *w)
{
	if (!w)
		return;
	hs_free_scratch(w->scratch);
	pcre2_match_context_free(w->mctx);
	pcre2_match_data_free(w->md);
	free(w->touched);
	free(w->stamp);
	free(w->lin);
	free(w);
}

/* Sizes the scratch and the touch arrays for @rs. */
static int worker_prepare(struct ids_worker *w, const struct ids_ruleset *rs)
{
	if (w->scratch_gen != rs->gen) {
		const struct ids_db *dbs[4 + IDS_BUF_COUNT];
		int n = 0;

		dbs[n++] = &rs->raw[IDS_TO_SERVER];
		dbs[n++] = &rs->raw[IDS_TO_CLIENT];
		dbs[n++] = &rs->udp[IDS_TO_SERVER];
		dbs[n++] = &rs->udp[IDS_TO_CLIENT];
		for (int b = IDS_BUF_URI; b < IDS_BUF_COUNT; b++)
			dbs[n++] = &rs->http[b];
		/* hs_alloc_scratch only grows: it stays valid for older dbs */
		for (int i = 0; i < n; i++)
			if (dbs[i]->db &&
			    hs_alloc_scratch(dbs[i]->db, &w->scratch) !=
			    HS_SUCCESS)
				return -ENOMEM;
		w->scratch_gen = rs->gen;
	}
	if (w->cap < rs->p.nrules) {
		size_t ncap = rs->p.nrules;
		uint32_t *t = realloc(w->touched, ncap * sizeof(*t));
		uint32_t *s;

		if (!t)
			return -ENOMEM;
		w->touched = t;
		s = realloc(w->stamp, ncap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		memset(s + w->cap, 0, (ncap - w->cap) * sizeof(*s));
		w->stamp = s;
		w->cap = ncap;
	}
	return 0;
}

static void touch_begin(struct ids_worker *w)
{
	w->ntouched = 0;
	if (++w->epoch == 0) {
		memset(w->stamp, 0, w->cap * sizeof(*w->stamp));
		w->epoch = 1;
	}
}

static void touch(struct ids_worker *w, uint32_t ri)
{
	if (w->stamp[ri] == w->epoch)
		return;
	w->stamp[ri] = w->epoch;
	w->touched[w->ntouched++] = ri;
}

static int on_hs_match(unsigned id, unsigned long long from,
		       unsigned long long to, unsigned flags, void *ctx)
{
	struct ids_worker *w = ctx;
	const struct ids_db *d = w->cur_db;

	(void)from;
	(void)to;
	(void)flags;
	for (uint32_t k = d->rule_off[id]; k < d->rule_off[id + 1]; k++)
		touch(w, d->rule_idx[k]);
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- flows ---- */

static bool header_dir_match(const struct ids_header *h, int fam,
			     const uint8_t *sa, uint16_t sp,
			     const uint8_t *da, uint16_t dp)
{
	return ids_addrset_match(&h->src, fam, sa) &&
	       ids_portset_match(&h->sp, sp) &&
	       ids_addrset_match(&h->dst, fam, da) &&
	       ids_portset_match(&h->dp, dp);
}

static void compute_headers(struct ids_flow *f)
{
	const struct ids_parse *p = &f->rs->p;
	const struct ids_flow_key *k = &f->key;
	int fam = k->family == AF_INET ? 4 : 6;

	for (size_t i = 0; i < p->nheaders; i++) {
		const struct ids_header *h = &p->headers[i];
		bool cs = header_dir_match(h, fam, k->client_addr,
					   k->client_port, k->server_addr,
					   k->server_port);
		bool sc = header_dir_match(h, fam, k->server_addr,
					   k->server_port, k->client_addr,
					   k->client_port);

		f->hdr_ok[IDS_TO_SERVER][i] = cs || (h->bidir && sc);
		f->hdr_ok[IDS_TO_CLIENT][i] = sc || (h->bidir && cs);
	}
}

/* Whether a rule looks at HTTP requests (or responses: @resp). */
static bool has_http_rules(const struct ids_ruleset *rs, bool resp)
{
	for (int b = IDS_BUF_URI; b < IDS_BUF_COUNT; b++)
		if (rs->http[b].db &&
		    (ids_buf_class(b) >= IDS_CLASS_RESP_HDR) == resp)
			return true;
	if (resp)
		return rs->nalways[IDS_LIST_RESP_HDR] ||
		       rs->nalways[IDS_LIST_RESP_BODY];
	return rs->nalways[IDS_LIST_HTTP_HDR] ||
	       rs->nalways[IDS_LIST_HTTP_BODY];
}

/*
 * A flow's state; @datagram: for one UDP datagram, without Hyperscan
 * streams or HTTP parsers.
 */
static struct ids_flow *flow_new(struct ids_ruleset *rs,
				 const struct ids_flow_key *key, bool datagram)
{
	struct ids_flow *f;
	size_t nh, nwords;

	if (!rs || !key ||
	    (key->family != AF_INET && key->family != AF_INET6)) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		goto out_nomem;
	f->key = *key;
	f->rs = rs;
	nh = rs->p.nheaders ? rs->p.nheaders : 1;
	f->hdr_ok[0] = calloc(nh, 1);
	f->hdr_ok[1] = calloc(nh, 1);
	f->bits = calloc(rs->p.nflowbits / 64 + 1, sizeof(uint64_t));
	nwords = rs->p.nrules / 64 + 1;
	f->fired = calloc(nwords, sizeof(uint64_t));
	if (!f->hdr_ok[0] || !f->hdr_ok[1] || !f->bits || !f->fired)
		goto out_free;
	if (datagram)
		goto done;
	for (int d = 0; d < 2; d++)
		if (rs->raw[d].db &&
		    hs_open_stream(rs->raw[d].db, 0, &f->dir[d].hs) != HS_SUCCESS)
			goto out_free;
	if (has_http_rules(rs, false)) {
		f->http = ids_http_create(http_event, false);
		if (!f->http)
			goto out_free;
	}
	if (has_http_rules(rs, true)) {
		f->resp = ids_http_create(http_event, true);
		if (!f->resp)
			goto out_free;
	}
done:
	compute_headers(f);
	ids_ruleset_get(rs);
	return f;

out_free:
	f->rs = NULL;
	ids_flow_destroy(f);
out_nomem:
	errno = ENOMEM;
	return NULL;
}

struct ids_flow *ids_flow_create(struct ids_ruleset *rs,
				 const struct ids_flow_key *key)
{
	return flow_new(rs, key, false);
}

void ids_flow_destroy(struct ids_flow *f)
{
	if (!f)
		return;
	for (int d = 0; d < 2; d++) {
		/* no scratch: end-of-stream matches are not wanted */
		if (f->dir[d].hs)
			hs_close_stream(f->dir[d].hs, NULL, NULL, NULL);
		free(f->dir[d].ring);
		free(f->hdr_ok[d]);
	}
	ids_http_destroy(f->http);
	ids_http_destroy(f->resp);
	free(f->bits);
	free(f->fired);
	ids_ruleset_put(f->rs);
	free(f);
}

struct ids_ruleset *ids_flow_ruleset(const struct ids_flow *f)
{
	return f->rs;
}

_Static_assert(IDS_WINDOW >= 4096, "ring growth starts at 2 KiB");

/* Appends the chunk to the history ring, keeping the last IDS_WINDOW. */
static int ring_append(struct ids_stream *st, const uint8_t *d, size_t n)
{
	uint64_t end = st->total + n, o;
	size_t k = n < IDS_WINDOW ? n : IDS_WINDOW;

	if (st->cap < IDS_WINDOW && end > st->cap) {
		size_t ncap = st->cap ? st->cap : 2048;
		uint8_t *nr;

		while (ncap < end && ncap < IDS_WINDOW)
			ncap *= 2;
		if (ncap > IDS_WINDOW)
			ncap = IDS_WINDOW;
		/* still linear: [0, total) keeps its place */
		nr = realloc(st->ring, ncap);
		if (!nr)
			return -ENOMEM;
		st->ring = nr;
		st->cap = ncap;
	}
	d += n - k;
	for (o = end - k; k;) {
		size_t pos = (size_t)(o % IDS_WINDOW);
		size_t c = IDS_WINDOW - pos < k ? IDS_WINDOW - pos : k;

		memcpy(st->ring + pos, d, c);
		d += c;
		o += c;
		k -= c;
	}
	st->total = end;
	return 0;
}

/* The raw view: history of the current direction, then the chunk. */
static int fill_raw(struct ids_match_ctx *m)
{
	struct ids_flow *f = m->arg;
	const struct ids_stream *st = &f->dir[f->cur_dir];
	struct ids_worker *w = f->w;
	size_t h = st->total < IDS_WINDOW ? (size_t)st->total : IDS_WINDOW;
	size_t need = h + f->chunk_len, pos, first;
	uint64_t start = st->total - h;

	if (need > w->lincap) {
		size_t ncap = need < 2 * IDS_WINDOW ? 2 * IDS_WINDOW : need;
		uint8_t *nl = realloc(w->lin, ncap);

		if (!nl)
			return -ENOMEM;
		/* PCRE2's JIT may read ahead past the subject: keep it defined */
		memset(nl + w->lincap, 0, ncap - w->lincap);
		w->lin = nl;
		w->lincap = ncap;
	}
	pos = (size_t)(start % IDS_WINDOW);
	first = IDS_WINDOW - pos < h ? IDS_WINDOW - pos : h;
	if (h) {
		memcpy(w->lin, st->ring + pos, first);
		memcpy(w->lin + first, st->ring, h - first);
	}
	memcpy(w->lin + h, f->chunk, f->chunk_len);
	m->v[IDS_BUF_RAW].data = w->lin;
	m->v[IDS_BUF_RAW].len = need;
	m->v[IDS_BUF_RAW].base = start;
	return 0;
}

static bool bit_test(const uint64_t *b, uint32_t i)
{
	return b[i / 64] >> (i % 64) & 1;
}

static void bit_set(uint64_t *b, uint32_t i, bool v)
{
	if (v)
		b[i / 64] |= 1ull << (i % 64);
	else
		b[i / 64] &= ~(1ull << (i % 64));
}

/* Views for a check in the current direction; HTTP ones if @http. */
static void fill_views(struct ids_flow *f, struct ids_match_ctx *m, bool http)
{
	memset(m, 0, sizeof(*m));
	m->v[IDS_BUF_RAW].present = true;	/* data: fill_raw() */
	m->fill_raw = fill_raw;
	m->arg = f;
	if (http) {
		for (int b = IDS_BUF_URI; b < IDS_BUF_COUNT; b++) {
			const struct ids_http *h = ids_buf_class(b) >=
				IDS_CLASS_RESP_HDR ? f->resp : f->http;
			const struct ids_sbuf *sb;

			if (!h || b == IDS_BUF_B64)
				continue;
			sb = &h->buf[b];
			m->v[b] = (struct ids_view){ sb->p, sb->len, 0, 0,
						     true };
		}
	}
	m->md = f->w->md;
	m->mctx = f->w->mctx;
}

static void report(struct ids_flow *f, const struct ids_rule *r)
{
	struct ids_verdict *out = f->out;

	if (r->info.action != IDS_ACTION_ALERT) {
		f->denied = true;
		f->deny_rule = &r->info;
		out->decision = IDS_DENY;
		out->deny_rule = &r->info;
		return;
	}
	if (out->nalerts < IDS_MAX_ALERTS)
		out->alerts[out->nalerts++] = &r->info;
	else
		out->alerts_lost++;
}

static void check_rule(struct ids_flow *f, uint32_t ri,
		       struct ids_match_ctx *m)
{
	const struct ids_rule *r = &f->rs->p.rules[ri];

	if (bit_test(f->fired, ri))
		return;
	if ((r->flowdir == IDS_FLOW_TO_SERVER && f->cur_dir != IDS_TO_SERVER) ||
	    (r->flowdir == IDS_FLOW_TO_CLIENT && f->cur_dir != IDS_TO_CLIENT))
		return;
	if (!f->hdr_ok[f->cur_dir][r->header])
		return;
	for (size_t i = 0; i < r->nfb; i += r->fb[i].n) {
		const struct ids_fbop *op = &r->fb[i];
		unsigned ok = 0;

		if (op->op != IDS_FB_ISSET && op->op != IDS_FB_ISNOTSET)
			continue;
		for (unsigned k = 0; k < op->n; k++)
			ok += bit_test(f->bits, op[k].bit) ==
			      (op->op == IDS_FB_ISSET);
		if (op->any ? ok == 0 : ok < op->n)
			return;
	}
	if (!ids_rule_elems_match(r, m))
		return;
	if (r->df.on) {
		/* by_src: the sender of this direction's bytes */
		const uint8_t *a = (f->cur_dir == IDS_TO_SERVER) != r->df.by_dst ?
			f->key.client_addr : f->key.server_addr;
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (!ids_dftab_hit(f->rs->df, ri, a, r->df.count,
				   r->df.seconds, (uint64_t)ts.tv_sec))
			return;	/* not over the rate yet: no match */
	}
	bit_set(f->fired, ri, true);
	for (size_t i = 0; i < r->nfb; i++) {
		const struct ids_fbop *op = &r->fb[i];

		if (op->op == IDS_FB_SET)
			bit_set(f->bits, op->bit, true);
		else if (op->op == IDS_FB_UNSET)
			bit_set(f->bits, op->bit, false);
		else if (op->op == IDS_FB_TOGGLE)
			bit_set(f->bits, op->bit, !bit_test(f->bits, op->bit));
	}
	if (!r->noalert)
		report(f, r);
}

/* Checks the touched rules plus the always-list @l, in rule order. */
static void check_touched(struct ids_flow *f, enum ids_list l, bool http)
{
	struct ids_worker *w = f->w;
	const struct ids_ruleset *rs = f->rs;
	struct ids_match_ctx m;

	for (size_t i = 0; i < rs->nalways[l]; i++)
		touch(w, rs->always[l][i]);
	if (w->ntouched == 0)
		return;
	qsort(w->touched, w->ntouched, sizeof(*w->touched), u32_cmp);
	fill_views(f, &m, http);
	for (size_t i = 0; i < w->ntouched && !f->denied && !m.err; i++)
		check_rule(f, w->touched[i], &m);
	if (m.err)
		f->err = m.err;
}

static void scan_block(struct ids_worker *w, const struct ids_db *d,
		       const struct ids_sbuf *sb)
{
	if (!d->db || sb->len == 0)
		return;
	w->cur_db = d;
	/* errors only on misuse; the rules then stay unchecked */
	(void)hs_scan(d->db, (const char *)sb->p, (unsigned)sb->len, 0,
		      w->scratch, on_hs_match, w);
}

/* Checks the rules of @cls after an HTTP request or response event (ids_http.c). */
static void http_event(struct ids_flow *f, enum ids_class cls)
{
	struct ids_worker *w = f->w;
	const struct ids_ruleset *rs = f->rs;

	if (f->denied)
		return;
	static const enum ids_list list[IDS_CLASS_COUNT] = {
		[IDS_CLASS_HTTP_HDR] = IDS_LIST_HTTP_HDR,
		[IDS_CLASS_HTTP_BODY] = IDS_LIST_HTTP_BODY,
		[IDS_CLASS_RESP_HDR] = IDS_LIST_RESP_HDR,
		[IDS_CLASS_RESP_BODY] = IDS_LIST_RESP_BODY,
	};
	const struct ids_http *h = cls >= IDS_CLASS_RESP_HDR ? f->resp :
		f->http;

	touch_begin(w);
	for (int b = IDS_BUF_URI; b < IDS_BUF_COUNT; b++)
		if (ids_buf_class(b) == cls)
			scan_block(w, &rs->http[b], &h->buf[b]);
	check_touched(f, list[cls], true);
}

static void deny_closed(struct ids_verdict *out)
{
	out->decision = IDS_DENY;
	out->deny_rule = NULL;
}

int ids_flow_scan(struct ids_worker *w, struct ids_flow *f, enum ids_dir dir,
		  const uint8_t *data, size_t len, struct ids_verdict *out)
{
	struct ids_stream *st;
	int rc;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!w || !f || (dir != IDS_TO_SERVER && dir != IDS_TO_CLIENT) ||
	    (!data && len) || len > UINT32_MAX) {
		deny_closed(out);
		return -EINVAL;
	}
	if (f->denied) {
		out->decision = IDS_DENY;
		out->deny_rule = f->deny_rule;
		return 0;
	}
	/* no rule looks at this direction: nothing to scan or keep */
	if (len == 0 || !f->rs->inspect[dir])
		return 0;
	st = &f->dir[dir];
	rc = worker_prepare(w, f->rs);
	if (rc) {
		deny_closed(out);
		return rc;
	}
	f->w = w;
	f->out = out;
	f->cur_dir = dir;
	f->chunk = data;
	f->chunk_len = len;
	f->err = 0;
	touch_begin(w);
	if (st->hs) {
		w->cur_db = &f->rs->raw[dir];
		if (hs_scan_stream(st->hs, (const char *)data, (unsigned)len, 0,
				   w->scratch, on_hs_match, w) != HS_SUCCESS)
			f->err = -EINVAL;
	}
	if (!f->err)
		check_touched(f, dir == IDS_TO_SERVER ? IDS_LIST_RAW_TS :
			      IDS_LIST_RAW_TC, false);
	if (dir == IDS_TO_SERVER && f->http && !f->denied && !f->err)
		ids_http_feed(f, f->http);
	if (dir == IDS_TO_CLIENT && f->resp && !f->denied && !f->err)
		ids_http_feed(f, f->resp);
	rc = f->err ? f->err : ring_append(st, data, len);
	if (rc && !f->denied) {
		/* fail closed, for good: the history now has a gap */
		deny_closed(out);
		f->denied = true;
		f->deny_rule = NULL;
	}
	f->w = NULL;
	f->out = NULL;
	f->chunk = NULL;
	return rc;
}

/*
 * One UDP datagram: the udp rules of its direction, on the datagram alone
 * (no history, no flowbits: each datagram is judged by itself, as a
 * stateless packet).  Same verdict contract as ids_flow_scan.
 */
int ids_datagram_scan(struct ids_worker *w, struct ids_ruleset *rs,
		      const struct ids_flow_key *key, enum ids_dir dir,
		      const uint8_t *data, size_t len, struct ids_verdict *out)
{
	const struct ids_db *db;
	struct ids_flow *f;
	int rc;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!w || !rs || !key || (dir != IDS_TO_SERVER && dir != IDS_TO_CLIENT) ||
	    (!data && len) || len > UINT32_MAX) {
		deny_closed(out);
		return -EINVAL;
	}
	db = &rs->udp[dir];
	if (!db->db && !rs->nalways[dir == IDS_TO_SERVER ? IDS_LIST_UDP_TS :
				    IDS_LIST_UDP_TC])
		return 0;	/* no udp rule for this direction */
	rc = worker_prepare(w, rs);
	f = rc ? NULL : flow_new(rs, key, true);
	if (!f) {
		deny_closed(out);
		return rc ? rc : -errno;
	}
	f->w = w;
	f->out = out;
	f->cur_dir = dir;
	f->chunk = data;
	f->chunk_len = len;
	touch_begin(w);
	if (db->db && len) {
		w->cur_db = db;
		if (hs_scan(db->db, (const char *)data, (unsigned)len, 0,
			    w->scratch, on_hs_match, w) != HS_SUCCESS)
			f->err = -EINVAL;
	}
	if (!f->err)
		check_touched(f, dir == IDS_TO_SERVER ? IDS_LIST_UDP_TS :
			      IDS_LIST_UDP_TC, false);
	rc = f->err;
	if (rc && !f->denied)
		deny_closed(out);
	ids_flow_destroy(f);
	return rc;
}
