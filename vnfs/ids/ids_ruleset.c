// SPDX-License-Identifier: MIT
/*
 * Rulesets: loading, compiling the Hyperscan prefilters, lifetime.
 *
 * Prefilter ("trigger") design.  Hyperscan finds where a rule *may* match;
 * ids_match.c confirms it.  A raw-stream rule registers every positive
 * content and every positive pcre (as an HS_FLAG_PREFILTER regex) in the
 * streaming database of each direction it applies to, so whichever of its parts arrives last fires in the
 * chunk that completes the match, and the rule is confirmed then: nothing
 * is missed however the stream is chunked.  A rule without such a trigger
 * (only negated parts, a pcre Hyperscan cannot approximate) goes to the
 * "always" list of its class and is checked on every chunk.  HTTP rules
 * are checked once per request event, when their buffers are complete;
 * their http-buffer contents go into one block-mode database per buffer.
 *
 * Lifetime: a ruleset is immutable after load; refcnt counts the loader's
 * reference and one per flow.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ids_int.h"
#include "ids_cache.h"
#include "ids_dfilter.h"
#include "ids_trigger.h"

static uint64_t next_gen = 1;	/* ruleset identity for worker scratch */

static int read_file(const char *path, char **out, size_t *outlen)
{
	struct stat st;
	char *buf;
	size_t n = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out_close;
	}
	if ((uint64_t)st.st_size > IDS_MAX_FILE) {
		err = -EFBIG;
		goto out_close;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out_close;
	}
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			free(buf);
			goto out_close;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*out = buf;
	*outlen = n;
	return 0;

out_close:
	close(fd);
	return err;
}

/* One trigger pattern before deduplication. */
struct tpat {
	char *expr;
	unsigned flags;
	uint32_t rule;
};

struct tlist {
	struct tpat *v;
	size_t n, cap;
};

static int tlist_add(struct tlist *l, char *expr, unsigned flags,
		     uint32_t rule)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		struct tpat *nv = realloc(l->v, ncap * sizeof(*nv));

		if (!nv)
			return -1;
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n++] = (struct tpat){ expr, flags, rule };
	return 0;
}

static void tlist_free(struct tlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].expr);
	free(l->v);
}

static int tpat_cmp(const void *a, const void *b)
{
	const struct tpat *x = a, *y = b;
	int c = strcmp(x->expr, y->expr);

	if (c)
		return c;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/* A literal as a Hyperscan regex: every byte as \xHH. */
static char *literal_expr(const uint8_t *s, size_t n)
{
	char *e = malloc(n * 4 + 1);

	if (!e)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(e + i * 4, 5, "\\x%02x", s[i]);
	e[n * 4] = 0;
	return e;
}

/*
 * The regex Hyperscan sees for a relative pcre.  Confirmation runs it on
 * the buffer from the cursor, where '^' means the cursor; Hyperscan would
 * read '^' as the start of the stream.  A leading '^' is dropped (any
 * match of "^X" at the cursor is a match of "X": still a superset); any
 * other anchor outside a character class makes the pcre unusable as a
 * trigger.  Returns a new string, or NULL.
 */
static char *relative_trigger(const char *re)
{
	bool in_class = false;
	int anchors = 0;

	for (const char *c = re; *c; c++) {
		if (*c == '\\') {
			if (c[1] == 'A' || c[1] == 'G')
				return NULL;
			if (c[1])
				c++;
			continue;
		}
		if (in_class) {
			if (*c == ']')
				in_class = false;
			continue;
		}
		if (*c == '[') {
			in_class = true;
			if (c[1] == '^')
				c++;
			if (c[1] == ']')
				c++;	/* a leading ']' is literal */
			continue;
		}
		if (*c == '^' && (c != re || ++anchors > 1))
			return NULL;
	}
	return strdup(re[0] == '^' ? re + 1 : re);
}

/*
 * The Hyperscan prefilter for a pcre: regex in *expr, flags returned; -1
 * when it cannot be a prefilter (then *expr is NULL).
 */
static int pcre_trigger(const struct ids_elem *el, unsigned mode, char **expr)
{
	unsigned f = HS_FLAG_PREFILTER;
	char *rel;
	hs_expr_info_t *info;
	hs_compile_error_t *cerr;

	*expr = NULL;
	if (el->pcre_opts & ~(uint32_t)(PCRE2_CASELESS | PCRE2_DOTALL |
					PCRE2_MULTILINE))
		return -1;
	/*
	 * In streaming mode an end anchor matches only when the stream is
	 * closed, while the confirmation treats the end of the data so far as
	 * the end: such a pattern cannot be a streaming trigger.
	 */
	if (mode == HS_MODE_STREAM &&
	    (strchr((const char *)el->pat, '$') ||
	     strstr((const char *)el->pat, "\\Z") ||
	     strstr((const char *)el->pat, "\\z")))
		return -1;
	rel = el->relative ? relative_trigger((const char *)el->pat) : NULL;
	if (el->relative && !rel)
		return -1;
	*expr = ids_trigger_widen(rel ? rel : (const char *)el->pat);
	free(rel);
	if (!*expr)
		return -1;
	if (el->pcre_opts & PCRE2_CASELESS)
		f |= HS_FLAG_CASELESS;
	if (el->pcre_opts & PCRE2_DOTALL)
		f |= HS_FLAG_DOTALL;
	if (el->pcre_opts & PCRE2_MULTILINE)
		f |= HS_FLAG_MULTILINE;
	/*
	 * Parsing and analysis only, a fraction of a compile: a pattern that
	 * passes but still fails in the database compile is found there
	 * (compile() then checks its rule on every chunk).
	 */
	if (hs_expression_info(*expr, f, &info, &cerr) != HS_SUCCESS) {
		hs_free_compile_error(cerr);
		info = NULL;
	}
	if (!info || info->min_width == 0) {	/* refused, or matches empty */
		free(info);
		free(*expr);
		*expr = NULL;
		return -1;
	}
	free(info);
	return (int)f;
}

static int build_db(struct ids_db *d, struct tlist *l, unsigned mode,
		    const char *cache_dir, char *failed_msg, size_t msglen,
		    uint32_t *failed_rule)
{
	struct ids_cache_input in;
	const char **exprs = NULL;
	unsigned *flags = NULL, *ids = NULL;
	size_t nu = 0;
	hs_compile_error_t *cerr;
	int rc = -ENOMEM;

	memset(d, 0, sizeof(*d));
	if (l->n == 0)
		return 0;
	qsort(l->v, l->n, sizeof(*l->v), tpat_cmp);
	exprs = calloc(l->n, sizeof(*exprs));
	flags = calloc(l->n, sizeof(*flags));
	ids = calloc(l->n, sizeof(*ids));
	d->rule_off = calloc(l->n + 1, sizeof(*d->rule_off));
	d->rule_idx = calloc(l->n, sizeof(*d->rule_idx));
	if (!exprs || !flags || !ids || !d->rule_off || !d->rule_idx)
		goto out;
	for (size_t i = 0, k = 0; i < l->n; i++) {
		bool same = i > 0 && !strcmp(l->v[i].expr, l->v[i - 1].expr) &&
			    l->v[i].flags == l->v[i - 1].flags;

		if (!same) {
			exprs[nu] = l->v[i].expr;
			flags[nu] = l->v[i].flags;
			ids[nu] = (unsigned)nu;
			d->rule_off[nu] = (uint32_t)k;
			nu++;
		} else if (l->v[i].rule == l->v[i - 1].rule) {
			continue;
		}
		d->rule_idx[k++] = l->v[i].rule;
		d->rule_off[nu] = (uint32_t)k;
	}
	d->npat = nu;
	in = (struct ids_cache_input){ exprs, flags, ids, nu, mode };
	d->db = ids_cache_get(cache_dir, &in);
	if (d->db) {
		rc = 0;
		goto out;
	}
	if (hs_compile_multi(exprs, flags, ids, (unsigned)nu, mode, NULL,
			     &d->db, &cerr) != HS_SUCCESS) {
		rc = -EINVAL;
		if (cerr->expression >= 0 && (size_t)cerr->expression < nu) {
			size_t u = (size_t)cerr->expression;

			snprintf(failed_msg, msglen, "%s", cerr->message);
			*failed_rule = d->rule_idx[d->rule_off[u]];
		}
		hs_free_compile_error(cerr);
		d->db = NULL;
		goto out;
	}
	ids_cache_put(cache_dir, &in, d->db);
	rc = 0;
out:
	free(exprs);
	free(flags);
	free(ids);
	if (rc) {
		free(d->rule_off);
		free(d->rule_idx);
		memset(d, 0, sizeof(*d));
	}
	return rc;
}

static void db_free(struct ids_db *d)
{
	hs_free_database(d->db);
	free(d->rule_off);
	free(d->rule_idx);
	memset(d, 0, sizeof(*d));
}

/*
 * Trigger lists: [IDS_BUF_URI .. IDS_BUF_COUNT) the HTTP buffers, the raw
 * stream per direction at RAW_LIST(dir), datagrams (udp rules) per
 * direction at UDP_LIST(dir).
 */
#define NLISTS		(IDS_BUF_COUNT + 3)
#define RAW_LIST(d)	((d) == IDS_TO_SERVER ? IDS_BUF_RAW : IDS_BUF_COUNT)
#define UDP_LIST(d)	(IDS_BUF_COUNT + 1 + (d))

static struct ids_db *list_db(struct ids_ruleset *rs, int l)
{
	if (l == IDS_BUF_RAW)
		return &rs->raw[IDS_TO_SERVER];
	if (l == IDS_BUF_COUNT)
		return &rs->raw[IDS_TO_CLIENT];
	if (l > IDS_BUF_COUNT)
		return &rs->udp[l - IDS_BUF_COUNT - 1];
	return &rs->http[l];
}

static bool is_udp(const struct ids_ruleset *rs, const struct ids_rule *r)
{
	return rs->p.headers[r->header].proto == IDS_PROTO_UDP;
}

static bool rule_applies(const struct ids_rule *r, enum ids_dir d)
{
	return r->flowdir == IDS_FLOW_ANY ||
	       (r->flowdir == IDS_FLOW_TO_SERVER) == (d == IDS_TO_SERVER);
}

/* Collects a rule's triggers; false when it needs the "always" list. */
static bool rule_triggers(struct ids_ruleset *rs, uint32_t ri,
			  struct tlist *lists, int *oom)
{
	const struct ids_rule *r = &rs->p.rules[ri];
	bool udp = is_udp(rs, r);
	size_t added = 0;
	char *expr = NULL;

	for (size_t i = 0; i < r->nelems; i++) {
		const struct ids_elem *el = &r->elems[i];
		unsigned mode = el->buf == IDS_BUF_RAW && !udp ?
			HS_MODE_STREAM : HS_MODE_BLOCK;
		int f;

		if (el->negated || el->kind == IDS_ELEM_BYTES ||
		    el->buf == IDS_BUF_B64)
			continue;
		/* only a buffer complete at the rule's event triggers it */
		if (ids_buf_class(el->buf) != r->cls)
			continue;
		if (el->kind == IDS_ELEM_CONTENT) {
			expr = literal_expr(el->pat, el->len);
			f = el->nocase ? HS_FLAG_CASELESS : 0;
		} else {
			f = pcre_trigger(el, mode, &expr);
			if (f < 0) {
				/* raw rules must see every part; others
				 * only need one trigger */
				if (r->cls == IDS_CLASS_RAW)
					return false;
				continue;
			}
		}
		if (!expr)
			goto oom;
		if (el->buf != IDS_BUF_RAW) {
			if (tlist_add(&lists[el->buf], expr, (unsigned)f, ri))
				goto oom_expr;
		} else {
			enum ids_dir d = rule_applies(r, IDS_TO_SERVER) ?
				IDS_TO_SERVER : IDS_TO_CLIENT;
			char *copy = NULL;

			/* both directions: each list owns a copy */
			if (rule_applies(r, IDS_TO_SERVER) &&
			    rule_applies(r, IDS_TO_CLIENT)) {
				copy = strdup(expr);
				if (!copy)
					goto oom_expr;
				if (tlist_add(&lists[udp ? UDP_LIST(IDS_TO_CLIENT) :
						     RAW_LIST(IDS_TO_CLIENT)], copy,
					      (unsigned)f, ri)) {
					free(copy);
					goto oom_expr;
				}
			}
			if (tlist_add(&lists[udp ? UDP_LIST(d) : RAW_LIST(d)],
				      expr, (unsigned)f, ri))
				goto oom_expr;
		}
		added++;
	}
	return added > 0;

oom_expr:
	free(expr);
oom:
	*oom = 1;
	return false;
}

static int add_list(struct ids_ruleset *rs, enum ids_list l, uint32_t ri)
{
	uint32_t *na = realloc(rs->always[l], (rs->nalways[l] + 1) *
			       sizeof(*na));

	if (!na)
		return -ENOMEM;
	rs->always[l] = na;
	na[rs->nalways[l]++] = ri;
	return 0;
}

static int add_always(struct ids_ruleset *rs, uint32_t ri)
{
	const struct ids_rule *r = &rs->p.rules[ri];
	int rc = 0;

	if (r->cls == IDS_CLASS_HTTP_HDR)
		return add_list(rs, IDS_LIST_HTTP_HDR, ri);
	if (r->cls == IDS_CLASS_HTTP_BODY)
		return add_list(rs, IDS_LIST_HTTP_BODY, ri);
	if (r->cls == IDS_CLASS_RESP_HDR)
		return add_list(rs, IDS_LIST_RESP_HDR, ri);
	if (r->cls == IDS_CLASS_RESP_BODY)
		return add_list(rs, IDS_LIST_RESP_BODY, ri);
	if (is_udp(rs, r)) {
		if (rule_applies(r, IDS_TO_SERVER))
			rc = add_list(rs, IDS_LIST_UDP_TS, ri);
		if (!rc && rule_applies(r, IDS_TO_CLIENT))
			rc = add_list(rs, IDS_LIST_UDP_TC, ri);
		return rc;
	}
	if (rule_applies(r, IDS_TO_SERVER))
		rc = add_list(rs, IDS_LIST_RAW_TS, ri);
	if (!rc && rule_applies(r, IDS_TO_CLIENT))
		rc = add_list(rs, IDS_LIST_RAW_TC, ri);
	return rc;
}

static int rule_sid_cmp(const void *a, const void *b, void *arg)
{
	const struct ids_rule *rules = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (rules[x].info.sid != rules[y].info.sid)
		return rules[x].info.sid < rules[y].info.sid ? -1 : 1;
	return x < y ? -1 : x > y;
}

static bool sets_bits(const struct ids_rule *r)
{
	for (size_t i = 0; i < r->nfb; i++)
		if (r->fb[i].op <= IDS_FB_TOGGLE)
			return true;
	return false;
}

/*
 * Drops rules with a sid seen before (reported), then orders rules that
 * set flowbits first so that, within one chunk, checks see the bits set by
 * the same chunk.
 */
static int order_rules(struct ids_ruleset *rs)
{
	struct ids_parse *p = &rs->p;
	uint32_t *idx = malloc((p->nrules + 1) * sizeof(*idx));
	bool *drop = calloc(p->nrules + 1, sizeof(*drop));
	struct ids_rule *nr = malloc((p->nrules + 1) * sizeof(*nr));
	size_t n = 0;

	if (!idx || !drop || !nr) {
		free(idx);
		free(drop);
		free(nr);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nrules; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, p->nrules, sizeof(*idx), rule_sid_cmp, p->rules);
	for (size_t i = 1; i < p->nrules; i++) {
		const struct ids_rule *a = &p->rules[idx[i - 1]];
		struct ids_rule *b = &p->rules[idx[i]];

		if (a->info.sid != b->info.sid)
			continue;
		ids_diag(p->diags, b->info.file, b->info.line,
			 "duplicate sid %u (first at %s:%d)", b->info.sid,
			 a->info.file, a->info.line);
		drop[idx[i]] = true;
		idx[i] = idx[i - 1];	/* compare later dups with the first */
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->nrules; i++) {
			struct ids_rule *r = &p->rules[i];

			if (drop[i] || sets_bits(r) != (pass == 0))
				continue;
			nr[n++] = *r;
		}
	}
	for (size_t i = 0; i < p->nrules; i++) {
		if (drop[i]) {
			for (size_t k = 0; k < p->rules[i].nelems; k++)
				ids_elem_free(&p->rules[i].elems[k]);
			free(p->rules[i].elems);
			free(p->rules[i].fb);
		}
	}
	free(p->rules);
	p->rules = nr;
	p->nrules = n;
	for (size_t i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, n, sizeof(*idx), rule_sid_cmp, p->rules);
	rs->by_sid = idx;
	free(drop);
	return 0;
}

static int compile(struct ids_ruleset *rs)
{
	struct tlist lists[NLISTS];
	bool *always = NULL;
	int rc = -ENOMEM, oom = 0;

	memset(lists, 0, sizeof(lists));
	rc = order_rules(rs);
	if (rc)
		return rc;
	always = calloc(rs->p.nrules + 1, sizeof(*always));
	if (!always)
		return -ENOMEM;
retry:
	for (int b = 0; b < NLISTS; b++) {
		tlist_free(&lists[b]);
		memset(&lists[b], 0, sizeof(lists[b]));
	}
	for (size_t i = 0; i < rs->p.nrules && !oom; i++)
		if (!always[i] && !rule_triggers(rs, (uint32_t)i, lists, &oom))
			always[i] = true;
	if (oom)
		goto out;
	for (int b = 0; b < NLISTS; b++) {
		struct ids_db *d = list_db(rs, b);
		bool stream = b == IDS_BUF_RAW || b == IDS_BUF_COUNT;
		char msg[128] = "";
		uint32_t bad = UINT32_MAX;

		rc = build_db(d, &lists[b], stream ? HS_MODE_STREAM :
			      HS_MODE_BLOCK, rs->cache_dir, msg, sizeof(msg),
			      &bad);
		if (rc == -EINVAL && bad != UINT32_MAX && !always[bad]) {
			/* keep the rule, checked on every chunk instead */
			const struct ids_rule *r = &rs->p.rules[bad];

			ids_diag(rs->p.diags, r->info.file, r->info.line,
				 "sid %u: no fast prefilter (%s); checked "
				 "on every chunk", r->info.sid, msg);
			always[bad] = true;
			for (int k = 0; k < b; k++)
				db_free(list_db(rs, k));
			goto retry;
		}
		if (rc)
			goto out;
	}
	for (size_t i = 0; i < rs->p.nrules; i++) {
		if (always[i]) {
			rc = add_always(rs, (uint32_t)i);
			if (rc)
				goto out;
		}
	}
	/* a direction no rule can look at needs no history and no scan */
	for (int d = 0; d < 2; d++)
		rs->inspect[d] = rs->raw[d].db ||
			rs->nalways[d == IDS_TO_SERVER ? IDS_LIST_RAW_TS :
				    IDS_LIST_RAW_TC];
	for (int b = IDS_BUF_URI; b < IDS_BUF_COUNT; b++)
		if (rs->http[b].db)
			rs->inspect[ids_buf_class(b) >= IDS_CLASS_RESP_HDR ?
				    IDS_TO_CLIENT : IDS_TO_SERVER] = true;
	if (rs->nalways[IDS_LIST_HTTP_HDR] || rs->nalways[IDS_LIST_HTTP_BODY])
		rs->inspect[IDS_TO_SERVER] = true;
	if (rs->nalways[IDS_LIST_RESP_HDR] || rs->nalways[IDS_LIST_RESP_BODY])
		rs->inspect[IDS_TO_CLIENT] = true;
	rc = 0;
out:
	for (int b = 0; b < NLISTS; b++)
		tlist_free(&lists[b]);
	free(always);
	return oom ? -ENOMEM : rc;
}

static void ruleset_free(struct ids_ruleset *rs)
{
	for (int d = 0; d < 2; d++) {
		db_free(&rs->raw[d]);
		db_free(&rs->udp[d]);
	}
	for (int b = 0; b < IDS_BUF_COUNT; b++)
		db_free(&rs->http[b]);
	for (int l = 0; l < IDS_LIST_COUNT; l++)
		free(rs->always[l]);
	free(rs->by_sid);
	ids_dftab_destroy(rs->df);
	ids_parse_free(&rs->p);
	free(rs);
}

static struct ids_ruleset *load_mem(const char *name, const char *text,
				     size_t len, const char *vars_path,
				     const char *cache_dir,
				     struct ids_diags *diags)
{
	struct ids_ruleset *rs;
	int rc;

	if (!name || (!text && len)) {
		errno = EINVAL;
		return NULL;
	}
	rs = calloc(1, sizeof(*rs));
	if (!rs) {
		errno = ENOMEM;
		return NULL;
	}
	rs->refcnt = 1;
	rs->gen = __atomic_fetch_add(&next_gen, 1, __ATOMIC_RELAXED);
	rs->p.diags = diags;
	if (vars_path) {
		char *vt;
		size_t vl;

		rc = read_file(vars_path, &vt, &vl);
		if (rc)
			goto out_free;
		rc = ids_parse_text(&rs->p, vars_path, vt, vl, true);
		free(vt);
		if (rc)
			goto out_free;
	}
	rc = ids_parse_text(&rs->p, name, text ? text : "", len, false);
	if (rc)
		goto out_free;
	rs->cache_dir = cache_dir;
	rc = compile(rs);
	rs->cache_dir = NULL;	/* the caller's string: do not keep it */
	if (rc)
		goto out_free;
	for (size_t i = 0; i < rs->p.nrules && !rs->df; i++) {
		if (!rs->p.rules[i].df.on)
			continue;
		rs->df = ids_dftab_create();
		if (!rs->df) {
			rc = -ENOMEM;
			goto out_free;
		}
	}
	rs->p.diags = NULL;	/* the caller owns it; do not keep it */
	return rs;

out_free:
	rs->p.diags = NULL;
	ruleset_free(rs);
	errno = -rc;
	return NULL;
}

struct ids_ruleset *ids_ruleset_load_mem(const char *name, const char *text,
					 size_t len, const char *vars_path,
					 struct ids_diags *diags)
{
	return load_mem(name, text, len, vars_path, NULL, diags);
}

struct ids_ruleset *ids_ruleset_load(const char *path, const char *vars_path,
				     struct ids_diags *diags)
{
	return ids_ruleset_load_cached(path, vars_path, NULL, diags);
}

struct ids_ruleset *ids_ruleset_load_cached(const char *path,
					    const char *vars_path,
					    const char *cache_dir,
					    struct ids_diags *diags)
{
	struct ids_ruleset *rs;
	char *text;
	size_t len;
	int rc;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	rc = read_file(path, &text, &len);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	rs = load_mem(path, text, len, vars_path, cache_dir, diags);
	rc = errno;
	free(text);
	errno = rc;
	return rs;
}

struct ids_ruleset *ids_ruleset_get(struct ids_ruleset *rs)
{
	/* Relaxed: the caller already holds a reference. */
	__atomic_fetch_add(&rs->refcnt, 1, __ATOMIC_RELAXED);
	return rs;
}

void ids_ruleset_put(struct ids_ruleset *rs)
{
	if (!rs)
		return;
	/*
	 * Acq-rel: our uses of the ruleset happen before the free that the
	 * thread dropping the last reference performs.
	 */
	if (__atomic_sub_fetch(&rs->refcnt, 1, __ATOMIC_ACQ_REL) == 0)
		ruleset_free(rs);
}

size_t ids_ruleset_nrules(const struct ids_ruleset *rs)
{
	return rs->p.nrules;
}

const struct ids_rule_info *ids_ruleset_find(const struct ids_ruleset *rs,
					     uint32_t sid)
{
	size_t lo = 0, hi = rs->p.nrules;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct ids_rule *r = &rs->p.rules[rs->by_sid[mid]];

		if (r->info.sid == sid)
			return &r->info;
		if (r->info.sid < sid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
