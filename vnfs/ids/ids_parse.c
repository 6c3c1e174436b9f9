// SPDX-License-Identifier: MIT
/*
 * Snort 2.9 rule text -> struct ids_rule.
 *
 * Rule files are operator input and may be garbage: every line is checked,
 * and a rule that is malformed or uses anything outside the supported
 * subset is reported as "file:line: message" and skipped as a whole.  A
 * rule is never half-read (an unknown option is not ignored, since that
 * would make the rule match more than its author meant).  Options that do
 * not change what matches (metadata, reference, priority, gid,
 * fast_pattern, rawbytes) are accepted and ignored.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_int.h"

#define ERRLEN 256

void ids_diag(struct ids_diags *d, const char *file, int line,
	      const char *fmt, ...)
{
	char msg[512], *full;
	char **nm;
	va_list ap;

	if (!d)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* rule files may hold anything: keep diagnostics printable */
	for (char *c = msg; *c; c++)
		if (!isprint((unsigned char)*c))
			*c = '?';
	if (asprintf(&full, "%s:%d: %s", file, line, msg) < 0)
		return;
	nm = realloc(d->msg, (d->n + 1) * sizeof(*nm));
	if (!nm) {
		free(full);
		return;
	}
	d->msg = nm;
	d->msg[d->n++] = full;
}

void ids_diags_free(struct ids_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->msg[i]);
	free(d->msg);
	d->msg = NULL;
	d->n = 0;
}

char *ids_intern(struct ids_parse *p, const char *s, size_t len)
{
	char **ns;
	char *c = strndup(s, len);

	if (!c)
		return NULL;
	ns = realloc(p->strings, (p->nstrings + 1) * sizeof(*ns));
	if (!ns) {
		free(c);
		return NULL;
	}
	p->strings = ns;
	p->strings[p->nstrings++] = c;
	return c;
}

void ids_elem_free(struct ids_elem *e)
{
	free(e->pat);
	free(e->lpat);
	pcre2_code_free(e->re);
	memset(e, 0, sizeof(*e));
}

static void rule_free(struct ids_rule *r)
{
	for (size_t i = 0; i < r->nelems; i++)
		ids_elem_free(&r->elems[i]);
	free(r->elems);
	free(r->fb);
	memset(r, 0, sizeof(*r));
}

void ids_parse_free(struct ids_parse *p)
{
	for (size_t i = 0; i < p->nvars; i++) {
		free(p->vars[i].name);
		free(p->vars[i].value);
	}
	free(p->vars);
	for (size_t i = 0; i < p->nrules; i++)
		rule_free(&p->rules[i]);
	free(p->rules);
	for (size_t i = 0; i < p->nheaders; i++) {
		ids_addrset_free(&p->headers[i].src);
		ids_addrset_free(&p->headers[i].dst);
		ids_portset_free(&p->headers[i].sp);
		ids_portset_free(&p->headers[i].dp);
		free(p->headers[i].key);
	}
	free(p->headers);
	for (size_t i = 0; i < p->nflowbits; i++)
		free(p->flowbits[i]);
	free(p->flowbits);
	for (size_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	memset(p, 0, sizeof(*p));
}

/* ---- small lexical helpers ---- */

static void trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

static bool eq(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - s) == n && memcmp(s, word, n) == 0;
}

static int parse_long(const char *s, const char *e, long min, long max,
		      long *out)
{
	long v = 0;
	bool neg = false;

	trim(&s, &e);
	if (s < e && (*s == '-' || *s == '+')) {
		neg = *s == '-';
		s++;
	}
	if (s == e || e - s > 10)
		return -1;
	for (; s < e; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static bool ident_ok(const char *s, const char *e, const char *extra)
{
	if (s == e)
		return false;
	for (; s < e; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' &&
		    !strchr(extra, *s))
			return false;
	return true;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Strips '!' and the surrounding quotes: [s, e) becomes the inner text. */
static int unquote(const char **s, const char **e, bool *neg, char *err)
{
	trim(s, e);
	*neg = false;
	if (*s < *e && **s == '!') {
		*neg = true;
		(*s)++;
		trim(s, e);
	}
	if (*e - *s < 2 || **s != '"' || (*e)[-1] != '"' ||
	    ((*e)[-2] == '\\' && *e - *s == 2)) {
		snprintf(err, ERRLEN, "value must be a quoted string");
		return -1;
	}
	(*s)++;
	(*e)--;
	return 0;
}

/* Content text with escapes and |hex| blocks -> bytes. */
static int decode_content(const char *s, const char *e, uint8_t **out,
			  size_t *outlen, char *err)
{
	uint8_t *b = malloc((size_t)(e - s) + 1);
	size_t n = 0;

	if (!b) {
		snprintf(err, ERRLEN, "out of memory");
		return -1;
	}
	while (s < e) {
		if (*s == '\\') {
			if (s + 1 == e)
				goto bad_escape;
			b[n++] = (uint8_t)s[1];
			s += 2;
		} else if (*s == '|') {
			int hi = -1;

			for (s++; s < e && *s != '|'; s++) {
				int v;

				if (*s == ' ')
					continue;
				v = hexval((unsigned char)*s);
				if (v < 0) {
					snprintf(err, ERRLEN,
						 "bad hex digit '%c' in content",
						 isprint((unsigned char)*s) ?
						 *s : '?');
					goto out_free;
				}
				if (hi < 0) {
					hi = v;
				} else {
					b[n++] = (uint8_t)(hi << 4 | v);
					hi = -1;
				}
			}
			if (s == e) {
				snprintf(err, ERRLEN,
					 "unterminated '|' in content");
				goto out_free;
			}
			if (hi >= 0) {
				snprintf(err, ERRLEN,
					 "odd number of hex digits in content");
				goto out_free;
			}
			s++;
		} else if (*s == '"') {
			snprintf(err, ERRLEN, "unescaped '\"' in content");
			goto out_free;
		} else {
			b[n++] = (uint8_t)*s++;
		}
	}
	if (n == 0) {
		snprintf(err, ERRLEN, "empty content");
		goto out_free;
	}
	*out = b;
	*outlen = n;
	return 0;

bad_escape:
	snprintf(err, ERRLEN, "trailing '\\' in content");
out_free:
	free(b);
	return -1;
}

/* ---- rule options ---- */

struct rstate {
	struct ids_parse *p;
	struct ids_rule *r;
	struct ids_elem *last;		/* last content (modifier target) */
	bool has_sid;
	char err[ERRLEN];
};

static struct ids_elem *new_elem(struct rstate *st)
{
	struct ids_rule *r = st->r;
	struct ids_elem *ne = realloc(r->elems, (r->nelems + 1) * sizeof(*ne));

	if (!ne) {
		snprintf(st->err, ERRLEN, "out of memory");
		return NULL;
	}
	r->elems = ne;
	memset(&ne[r->nelems], 0, sizeof(*ne));
	return &ne[r->nelems++];
}

static int opt_content(struct rstate *st, const char *s, const char *e,
		       enum ids_buf buf)
{
	struct ids_elem *el;
	bool neg;

	if (unquote(&s, &e, &neg, st->err))
		return -1;
	el = new_elem(st);
	if (!el)
		return -1;
	el->kind = IDS_ELEM_CONTENT;
	el->buf = buf;
	el->negated = neg;
	if (decode_content(s, e, &el->pat, &el->len, st->err)) {
		st->r->nelems--;
		return -1;
	}
	st->last = el;
	return 0;
}

static int opt_pcre(struct rstate *st, const char *s, const char *e)
{
	struct ids_elem *el;
	const char *last;
	enum ids_buf buf = IDS_BUF_RAW;
	uint32_t opts = 0;
	bool neg, rel = false;
	int errcode;
	PCRE2_SIZE erroff;

	if (unquote(&s, &e, &neg, st->err))
		return -1;
	if (s == e || *s != '/') {
		snprintf(st->err, ERRLEN, "pcre must be \"/regex/flags\"");
		return -1;
	}
	for (last = e - 1; last > s && *last != '/'; last--)
		;
	if (last == s) {
		snprintf(st->err, ERRLEN, "pcre without closing '/'");
		return -1;
	}
	for (const char *f = last + 1; f < e; f++) {
		enum ids_buf nb = IDS_BUF_COUNT;

		switch (*f) {
		case 'i': opts |= PCRE2_CASELESS; break;
		case 's': opts |= PCRE2_DOTALL; break;
		case 'm': opts |= PCRE2_MULTILINE; break;
		case 'x': opts |= PCRE2_EXTENDED; break;
		case 'A': opts |= PCRE2_ANCHORED; break;
		case 'E': opts |= PCRE2_DOLLAR_ENDONLY; break;
		case 'G': opts |= PCRE2_UNGREEDY; break;
		case 'R': rel = true; break;
		case 'B': case 'O': break;
		case 'U': nb = IDS_BUF_URI; break;
		case 'H': nb = IDS_BUF_HEADER; break;
		case 'P': nb = IDS_BUF_BODY; break;
		case 'M': nb = IDS_BUF_METHOD; break;
		default:
			snprintf(st->err, ERRLEN, "unsupported pcre flag '%c'",
				 isprint((unsigned char)*f) ? *f : '?');
			return -1;
		}
		if (nb != IDS_BUF_COUNT) {
			if (buf != IDS_BUF_RAW && buf != nb) {
				snprintf(st->err, ERRLEN,
					 "pcre with two buffer flags");
				return -1;
			}
			buf = nb;
		}
	}
	el = new_elem(st);
	if (!el)
		return -1;
	el->kind = IDS_ELEM_PCRE;
	el->buf = buf;
	el->negated = neg;
	el->relative = rel;
	el->pcre_opts = opts;
	el->len = (size_t)(last - s - 1);
	el->pat = (uint8_t *)strndup(s + 1, el->len);
	if (!el->pat) {
		st->r->nelems--;
		snprintf(st->err, ERRLEN, "out of memory");
		return -1;
	}
	el->re = pcre2_compile(el->pat, el->len, opts, &errcode, &erroff, NULL);
	if (!el->re) {
		char msg[128];

		pcre2_get_error_message(errcode, (PCRE2_UCHAR *)msg,
					sizeof(msg));
		snprintf(st->err, ERRLEN, "bad pcre at offset %zu: %s",
			 (size_t)erroff, msg);
		ids_elem_free(el);
		st->r->nelems--;
		return -1;
	}
	/* JIT is an optimisation: without it the interpreter runs. */
	(void)pcre2_jit_compile(el->re, PCRE2_JIT_COMPLETE);
	st->last = NULL;
	return 0;
}

static int need_content(struct rstate *st, const char *name)
{
	if (!st->last) {
		snprintf(st->err, ERRLEN, "'%s' without a preceding content",
			 name);
		return -1;
	}
	return 0;
}

static int opt_modifier(struct rstate *st, const char *name, const char *s,
			const char *e)
{
	struct ids_elem *el = st->last;
	long v;
	bool *has;
	int32_t *slot;
	long min, max;

	if (need_content(st, name))
		return -1;
	if (!strcmp(name, "offset")) {
		has = &el->has_offset, slot = &el->offset, min = 0, max = 1 << 20;
	} else if (!strcmp(name, "depth")) {
		has = &el->has_depth, slot = &el->depth, min = 1, max = 1 << 20;
	} else if (!strcmp(name, "distance")) {
		has = &el->has_distance, slot = &el->distance;
		min = -(1 << 20), max = 1 << 20;
	} else {
		has = &el->has_within, slot = &el->within, min = 1, max = 1 << 20;
	}
	if (*has) {
		snprintf(st->err, ERRLEN, "'%s' given twice", name);
		return -1;
	}
	if (parse_long(s, e, min, max, &v)) {
		snprintf(st->err, ERRLEN, "bad value for '%s'", name);
		return -1;
	}
	*has = true;
	*slot = (int32_t)v;
	if ((el->has_offset || el->has_depth) &&
	    (el->has_distance || el->has_within)) {
		snprintf(st->err, ERRLEN,
			 "offset/depth mixed with distance/within");
		return -1;
	}
	el->relative = el->has_distance || el->has_within;
	return 0;
}

static int opt_flow(struct rstate *st, const char *s, const char *e)
{
	const char *item = s;

	for (const char *c = s; c <= e; c++) {
		const char *is = item, *ie = c;
		enum ids_flowdir d = IDS_FLOW_ANY;

		if (c < e && *c != ',')
			continue;
		item = c + 1;
		trim(&is, &ie);
		if (eq(is, ie, "to_server") || eq(is, ie, "from_client"))
			d = IDS_FLOW_TO_SERVER;
		else if (eq(is, ie, "to_client") || eq(is, ie, "from_server"))
			d = IDS_FLOW_TO_CLIENT;
		else if (!eq(is, ie, "established") &&
			 !eq(is, ie, "stateless")) {
			snprintf(st->err, ERRLEN,
				 "unsupported flow option '%.*s'",
				 (int)(ie - is > 40 ? 40 : ie - is), is);
			return -1;
		}
		if (d != IDS_FLOW_ANY) {
			if (st->r->flowdir != IDS_FLOW_ANY &&
			    st->r->flowdir != d) {
				snprintf(st->err, ERRLEN,
					 "conflicting flow directions");
				return -1;
			}
			st->r->flowdir = d;
		}
	}
	return 0;
}

static int flowbit_index(struct ids_parse *p, const char *s, size_t n,
			 uint32_t *bit)
{
	char **nf;

	for (size_t i = 0; i < p->nflowbits; i++) {
		if (strlen(p->flowbits[i]) == n &&
		    !memcmp(p->flowbits[i], s, n)) {
			*bit = (uint32_t)i;
			return 0;
		}
	}
	nf = realloc(p->flowbits, (p->nflowbits + 1) * sizeof(*nf));
	if (!nf)
		return -1;
	p->flowbits = nf;
	nf[p->nflowbits] = strndup(s, n);
	if (!nf[p->nflowbits])
		return -1;
	*bit = (uint32_t)p->nflowbits++;
	return 0;
}

static int opt_flowbits(struct rstate *st, const char *s, const char *e)
{
	const char *comma;
	struct ids_fbop op;
	struct ids_fbop *nfb;

	trim(&s, &e);
	if (eq(s, e, "noalert")) {
		st->r->noalert = true;
		return 0;
	}
	comma = memchr(s, ',', (size_t)(e - s));
	if (!comma) {
		snprintf(st->err, ERRLEN, "unsupported flowbits '%.*s'",
			 (int)(e - s > 40 ? 40 : e - s), s);
		return -1;
	}
	{
		const char *os = s, *oe = comma;

		trim(&os, &oe);
		if (eq(os, oe, "set"))
			op.op = IDS_FB_SET;
		else if (eq(os, oe, "unset"))
			op.op = IDS_FB_UNSET;
		else if (eq(os, oe, "toggle"))
			op.op = IDS_FB_TOGGLE;
		else if (eq(os, oe, "isset"))
			op.op = IDS_FB_ISSET;
		else if (eq(os, oe, "isnotset"))
			op.op = IDS_FB_ISNOTSET;
		else {
			snprintf(st->err, ERRLEN,
				 "unsupported flowbits operation '%.*s'",
				 (int)(oe - os > 40 ? 40 : oe - os), os);
			return -1;
		}
	}
	s = comma + 1;
	trim(&s, &e);
	if (!ident_ok(s, e, ".-")) {
		snprintf(st->err, ERRLEN,
			 "unsupported flowbits name '%.*s' (groups and "
			 "operators are not supported)",
			 (int)(e - s > 40 ? 40 : e - s), s);
		return -1;
	}
	if (flowbit_index(st->p, s, (size_t)(e - s), &op.bit))
		goto oom;
	nfb = realloc(st->r->fb, (st->r->nfb + 1) * sizeof(*nfb));
	if (!nfb)
		goto oom;
	st->r->fb = nfb;
	nfb[st->r->nfb++] = op;
	return 0;
oom:
	snprintf(st->err, ERRLEN, "out of memory");
	return -1;
}

static int opt_msg(struct rstate *st, const char *s, const char *e)
{
	char *buf, *o;
	bool neg;

	if (unquote(&s, &e, &neg, st->err) || neg) {
		snprintf(st->err, ERRLEN, "msg must be a quoted string");
		return -1;
	}
	buf = malloc((size_t)(e - s) + 1);
	if (!buf)
		goto oom;
	for (o = buf; s < e; s++) {
		if (*s == '\\' && s + 1 < e)
			s++;
		*o++ = *s;
	}
	st->r->info.msg = ids_intern(st->p, buf, (size_t)(o - buf));
	free(buf);
	if (!st->r->info.msg)
		goto oom;
	return 0;
oom:
	snprintf(st->err, ERRLEN, "out of memory");
	return -1;
}

/* One "name[:value]" option; value is [s, e) or s == NULL. */
static int rule_option(struct rstate *st, const char *name, const char *s,
		       const char *e)
{
	static const char *const ignored[] = { "metadata", "reference",
		"priority", "gid", "fast_pattern", "rawbytes", NULL };
	static const char *const flagmods[] = { "nocase", "http_uri",
		"http_header", "http_method", "http_client_body", NULL };
	long v;

	for (int i = 0; flagmods[i]; i++) {
		if (strcmp(name, flagmods[i]))
			continue;
		if (need_content(st, name))
			return -1;
		if (s) {
			snprintf(st->err, ERRLEN, "'%s' takes no value", name);
			return -1;
		}
		if (i == 0) {
			st->last->nocase = true;
		} else {
			enum ids_buf b = (enum ids_buf)i;	/* URI..BODY */

			if (st->last->buf != IDS_BUF_RAW &&
			    st->last->buf != b) {
				snprintf(st->err, ERRLEN,
					 "content with two http buffers");
				return -1;
			}
			st->last->buf = b;
		}
		return 0;
	}
	for (int i = 0; ignored[i]; i++)
		if (!strcmp(name, ignored[i]))
			return 0;
	if (!strcmp(name, "offset") || !strcmp(name, "depth") ||
	    !strcmp(name, "distance") || !strcmp(name, "within")) {
		if (!s) {
			snprintf(st->err, ERRLEN, "'%s' needs a value", name);
			return -1;
		}
		return opt_modifier(st, name, s, e);
	}
	if (!s && strcmp(name, "flowbits")) {
		snprintf(st->err, ERRLEN, "'%s' needs a value", name);
		if (!strcmp(name, "msg") || !strcmp(name, "sid") ||
		    !strcmp(name, "rev") || !strcmp(name, "classtype") ||
		    !strcmp(name, "content") || !strcmp(name, "uricontent") ||
		    !strcmp(name, "pcre") || !strcmp(name, "flow"))
			return -1;
		snprintf(st->err, ERRLEN, "unsupported option '%s'", name);
		return -1;
	}
	if (!strcmp(name, "msg"))
		return opt_msg(st, s, e);
	if (!strcmp(name, "sid") || !strcmp(name, "rev")) {
		if (parse_long(s, e, name[0] == 's' ? 1 : 0, UINT32_MAX >> 1,
			       &v)) {
			snprintf(st->err, ERRLEN, "bad %s", name);
			return -1;
		}
		if (name[0] == 's') {
			st->r->info.sid = (uint32_t)v;
			st->has_sid = true;
		} else {
			st->r->info.rev = (uint32_t)v;
		}
		return 0;
	}
	if (!strcmp(name, "classtype")) {
		trim(&s, &e);
		if (!ident_ok(s, e, "-")) {
			snprintf(st->err, ERRLEN, "bad classtype");
			return -1;
		}
		st->r->info.classtype = ids_intern(st->p, s, (size_t)(e - s));
		if (!st->r->info.classtype) {
			snprintf(st->err, ERRLEN, "out of memory");
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "content"))
		return opt_content(st, s, e, IDS_BUF_RAW);
	if (!strcmp(name, "uricontent"))
		return opt_content(st, s, e, IDS_BUF_URI);
	if (!strcmp(name, "pcre"))
		return opt_pcre(st, s, e);
	if (!strcmp(name, "flow"))
		return opt_flow(st, s, e);
	if (!strcmp(name, "flowbits")) {
		if (!s) {
			snprintf(st->err, ERRLEN, "'flowbits' needs a value");
			return -1;
		}
		return opt_flowbits(st, s, e);
	}
	snprintf(st->err, ERRLEN, "unsupported option '%s'", name);
	return -1;
}

/* Checks that need the whole rule, and derived fields. */
static int rule_finish(struct rstate *st)
{
	struct ids_rule *r = st->r;
	if (!st->has_sid) {
		snprintf(st->err, ERRLEN, "missing sid");
		return -1;
	}
	r->cls = IDS_CLASS_RAW;
	for (size_t i = 0; i < r->nelems; i++) {
		struct ids_elem *el = &r->elems[i];

		if (el->kind == IDS_ELEM_CONTENT) {
			if (el->has_depth && (size_t)el->depth < el->len) {
				snprintf(st->err, ERRLEN,
					 "depth %d shorter than content",
					 el->depth);
				return -1;
			}
			if (el->has_within && (size_t)el->within < el->len) {
				snprintf(st->err, ERRLEN,
					 "within %d shorter than content",
					 el->within);
				return -1;
			}
			if (el->nocase) {
				el->lpat = malloc(el->len);
				if (!el->lpat) {
					snprintf(st->err, ERRLEN,
						 "out of memory");
					return -1;
				}
				for (size_t k = 0; k < el->len; k++)
					el->lpat[k] = (uint8_t)tolower(
						el->pat[k]);
			}
		}
		if (el->buf == IDS_BUF_BODY)
			r->cls = IDS_CLASS_HTTP_BODY;
		else if (el->buf != IDS_BUF_RAW && r->cls == IDS_CLASS_RAW)
			r->cls = IDS_CLASS_HTTP_HDR;
	}
	if (r->cls != IDS_CLASS_RAW && r->flowdir == IDS_FLOW_TO_CLIENT) {
		snprintf(st->err, ERRLEN,
			 "http buffers are request buffers: not with to_client");
		return -1;
	}
	/*
	 * An element's position matters only if a later element of the same
	 * buffer is relative to it: the next cursor-setting element is
	 * relative, or a relative one follows after negated ones only.
	 */
	for (size_t i = 0; i < r->nelems; i++) {
		struct ids_elem *el = &r->elems[i];

		for (size_t j = i + 1; j < r->nelems; j++) {
			const struct ids_elem *n = &r->elems[j];

			if (n->buf != el->buf)
				continue;
			if (n->relative) {
				el->anchor = true;
				break;
			}
			if (!n->negated)
				break;
		}
	}
	if (!r->info.msg)
		r->info.msg = "";
	if (!r->info.classtype)
		r->info.classtype = "";
	return 0;
}

/* Scans "name[:value];" options between '(' and ')'. */
static int rule_options(struct rstate *st, const char *s, const char *e)
{
	for (;;) {
		const char *ns, *ne, *vs = NULL, *ve = NULL;
		char name[32];

		while (s < e && isspace((unsigned char)*s))
			s++;
		if (s == e) {
			snprintf(st->err, ERRLEN, "missing ')'");
			return -1;
		}
		if (*s == ')') {
			for (s++; s < e; s++) {
				if (!isspace((unsigned char)*s)) {
					snprintf(st->err, ERRLEN,
						 "text after ')'");
					return -1;
				}
			}
			return rule_finish(st);
		}
		ns = s;
		while (s < e && (isalnum((unsigned char)*s) || *s == '_'))
			s++;
		ne = s;
		while (s < e && isspace((unsigned char)*s))
			s++;
		if (ns == ne || (size_t)(ne - ns) >= sizeof(name) ||
		    s == e || (*s != ':' && *s != ';')) {
			snprintf(st->err, ERRLEN, "malformed option near '%.20s'",
				 ns);
			for (char *c = st->err; *c; c++)
				if (!isprint((unsigned char)*c))
					*c = '?';
			return -1;
		}
		memcpy(name, ns, (size_t)(ne - ns));
		name[ne - ns] = 0;
		if (*s == ':') {
			bool inq = false;

			vs = ++s;
			for (; s < e; s++) {
				if (*s == '\\' && s + 1 < e) {
					s++;
					continue;
				}
				if (*s == '"')
					inq = !inq;
				else if (*s == ';' && !inq)
					break;
			}
			if (s == e) {
				snprintf(st->err, ERRLEN, inq ?
					 "unterminated quote in '%s'" :
					 "missing ';' after '%s'", name);
				return -1;
			}
			ve = s;
		}
		s++;	/* the ';' */
		if (rule_option(st, name, vs, ve))
			return -1;
	}
}

static int add_header(struct ids_parse *p, char *tok[7], unsigned *idx,
		      char *err)
{
	struct ids_header h = { 0 };
	struct ids_header *nh;
	char *key;

	if (asprintf(&key, "%s %s %s %s %s %s #%zu", tok[1], tok[2], tok[3],
		     tok[4], tok[5], tok[6], p->nvars) < 0)
		goto oom;
	for (size_t i = 0; i < p->nheaders; i++) {
		if (!strcmp(p->headers[i].key, key)) {
			free(key);
			*idx = (unsigned)i;
			return 0;
		}
	}
	h.key = key;
	if (!strcmp(tok[1], "tcp")) {
		h.proto = IDS_PROTO_TCP;
	} else if (!strcmp(tok[1], "ip")) {
		h.proto = IDS_PROTO_IP;
	} else {
		snprintf(err, ERRLEN, "unsupported protocol '%.20s'", tok[1]);
		goto out_key;
	}
	if (!strcmp(tok[4], "->")) {
		h.bidir = false;
	} else if (!strcmp(tok[4], "<>")) {
		h.bidir = true;
	} else {
		snprintf(err, ERRLEN, "bad direction '%.20s'", tok[4]);
		goto out_key;
	}
	if (ids_addrset_parse(p, tok[2], &h.src, err, ERRLEN))
		goto out_key;
	if (ids_portset_parse(p, tok[3], &h.sp, err, ERRLEN))
		goto out_src;
	if (ids_addrset_parse(p, tok[5], &h.dst, err, ERRLEN))
		goto out_sp;
	if (ids_portset_parse(p, tok[6], &h.dp, err, ERRLEN))
		goto out_dst;
	nh = realloc(p->headers, (p->nheaders + 1) * sizeof(*nh));
	if (!nh) {
		snprintf(err, ERRLEN, "out of memory");
		goto out_dp;
	}
	p->headers = nh;
	nh[p->nheaders] = h;
	*idx = (unsigned)p->nheaders++;
	return 0;

out_dp:
	ids_portset_free(&h.dp);
out_dst:
	ids_addrset_free(&h.dst);
out_sp:
	ids_portset_free(&h.sp);
out_src:
	ids_addrset_free(&h.src);
out_key:
	free(key);
	return -1;
oom:
	snprintf(err, ERRLEN, "out of memory");
	return -1;
}

/* Splits the header into 7 fields; brackets may hold spaces.  Modifies s. */
static int split_header(char *s, char *tok[7])
{
	int n = 0, level = 0;
	char *t = NULL;

	for (;; s++) {
		bool sep = *s == 0 || (isspace((unsigned char)*s) && level == 0);

		if (*s == '[')
			level++;
		else if (*s == ']')
			level--;
		if (sep) {
			if (t) {
				if (n == 7)
					return -1;
				tok[n++] = t;
				t = NULL;
			}
			if (*s == 0)
				break;
			*s = 0;
		} else if (!t) {
			t = s;
		}
	}
	return n == 7 && level == 0 ? 0 : -1;
}

static void parse_rule(struct ids_parse *p, const char *line, int lineno)
{
	struct ids_rule r = { 0 };
	struct rstate st = { .p = p, .r = &r };
	const char *paren = strchr(line, '(');
	char *head, *tok[7];
	struct ids_rule *nr;

	if (!paren) {
		ids_diag(p->diags, p->file, lineno, "missing rule options");
		return;
	}
	head = strndup(line, (size_t)(paren - line));
	if (!head) {
		p->oom = true;
		return;
	}
	if (split_header(head, tok)) {
		ids_diag(p->diags, p->file, lineno, "malformed rule header");
		goto out_head;
	}
	if (!strcmp(tok[0], "drop") || !strcmp(tok[0], "sdrop")) {
		r.info.action = IDS_ACTION_DROP;
	} else if (!strcmp(tok[0], "reject")) {
		r.info.action = IDS_ACTION_REJECT;
	} else {
		r.info.action = IDS_ACTION_ALERT;
	}
	if (add_header(p, tok, &r.header, st.err))
		goto out_diag;
	if (rule_options(&st, paren + 1, line + strlen(line)))
		goto out_diag;
	r.info.file = p->file;
	r.info.line = lineno;
	nr = realloc(p->rules, (p->nrules + 1) * sizeof(*nr));
	if (!nr) {
		p->oom = true;
		goto out_rule;
	}
	p->rules = nr;
	nr[p->nrules++] = r;
	free(head);
	return;

out_diag:
	ids_diag(p->diags, p->file, lineno, "%s", st.err);
out_rule:
	rule_free(&r);
out_head:
	free(head);
}

static void parse_var(struct ids_parse *p, const char *kind, const char *s,
		      int lineno)
{
	const char *e = s + strlen(s), *ns, *ne;
	char err[ERRLEN];
	struct ids_var *nv, v;

	trim(&s, &e);
	ns = s;
	while (s < e && !isspace((unsigned char)*s))
		s++;
	ne = s;
	trim(&s, &e);
	if (!ident_ok(ns, ne, "") || isdigit((unsigned char)*ns) || s == e) {
		ids_diag(p->diags, p->file, lineno, "malformed %s line", kind);
		return;
	}
	v.name = strndup(ns, (size_t)(ne - ns));
	v.value = strndup(s, (size_t)(e - s));
	if (!v.name || !v.value)
		goto oom;
	if (!strcmp(kind, "ipvar") || !strcmp(kind, "portvar")) {
		int rc;

		if (kind[0] == 'i') {
			struct ids_addrset as;

			rc = ids_addrset_parse(p, v.value, &as, err, ERRLEN);
			if (!rc)
				ids_addrset_free(&as);
		} else {
			struct ids_portset ps;

			rc = ids_portset_parse(p, v.value, &ps, err, ERRLEN);
			if (!rc)
				ids_portset_free(&ps);
		}
		if (rc) {
			ids_diag(p->diags, p->file, lineno, "%s %s: %s", kind,
				 v.name, err);
			goto out_free;
		}
	}
	nv = realloc(p->vars, (p->nvars + 1) * sizeof(*nv));
	if (!nv)
		goto oom;
	p->vars = nv;
	nv[p->nvars++] = v;
	return;
oom:
	p->oom = true;
out_free:
	free(v.name);
	free(v.value);
}

static void parse_line(struct ids_parse *p, char *line, int lineno,
		       bool vars_only)
{
	char *s = line, *w;
	size_t wl;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == 0 || *s == '#')
		return;
	for (char *c = s; *c; c++) {
		if ((unsigned char)*c < 0x20 && *c != '\t' && *c != '\r') {
			ids_diag(p->diags, p->file, lineno,
				 "invalid character 0x%02x",
				 (unsigned char)*c);
			return;
		}
	}
	w = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	wl = (size_t)(s - w);
	if (wl == 3 && !memcmp(w, "var", 3)) {
		parse_var(p, "var", s, lineno);
	} else if (wl == 5 && !memcmp(w, "ipvar", 5)) {
		parse_var(p, "ipvar", s, lineno);
	} else if (wl == 7 && !memcmp(w, "portvar", 7)) {
		parse_var(p, "portvar", s, lineno);
	} else if ((wl == 5 && !memcmp(w, "alert", 5)) ||
		   (wl == 4 && !memcmp(w, "drop", 4)) ||
		   (wl == 5 && !memcmp(w, "sdrop", 5)) ||
		   (wl == 6 && !memcmp(w, "reject", 6))) {
		if (vars_only)
			ids_diag(p->diags, p->file, lineno,
				 "rule in a variables file");
		else
			parse_rule(p, w, lineno);
	} else if ((wl == 4 && !memcmp(w, "pass", 4)) ||
		   (wl == 3 && !memcmp(w, "log", 3)) ||
		   (wl == 8 && !memcmp(w, "activate", 8)) ||
		   (wl == 7 && !memcmp(w, "dynamic", 7))) {
		ids_diag(p->diags, p->file, lineno,
			 "unsupported action '%.*s'", (int)wl, w);
	} else {
		ids_diag(p->diags, p->file, lineno,
			 "unsupported keyword '%.*s'",
			 (int)(wl > 40 ? 40 : wl), w);
	}
}

/*
 * Splits @text into logical lines (a trailing '\' continues a line) and
 * parses each.  Returns 0, or -ENOMEM (diagnostics so far are kept).
 */
int ids_parse_text(struct ids_parse *p, const char *file, const char *text,
		   size_t len, bool vars_only)
{
	const char *s = text, *end = text + len;
	int lineno = 0;
	char *buf = malloc(IDS_MAX_LINE + 1);

	if (!buf)
		return -ENOMEM;
	p->file = ids_intern(p, file, strlen(file));
	if (!p->file) {
		free(buf);
		return -ENOMEM;
	}
	while (s < end && !p->oom) {
		size_t n = 0;
		int first = lineno + 1;
		bool toolong = false, cont;

		do {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			const char *le = nl ? nl : end;
			size_t ll = (size_t)(le - s);

			lineno++;
			if (ll > 0 && le[-1] == '\r')	/* CRLF files */
				ll--;
			cont = ll > 0 && s[ll - 1] == '\\';
			if (cont)
				ll--;
			if (!toolong && n + ll <= IDS_MAX_LINE) {
				memcpy(buf + n, s, ll);
				n += ll;
			} else {
				toolong = true;
			}
			s = nl ? nl + 1 : end;
		} while (cont && s < end);
		if (toolong) {
			ids_diag(p->diags, p->file, first,
				 "line longer than %d bytes", IDS_MAX_LINE);
			continue;
		}
		if (memchr(buf, 0, n)) {
			ids_diag(p->diags, p->file, first, "NUL byte in line");
			continue;
		}
		buf[n] = 0;
		parse_line(p, buf, first, vars_only);
	}
	free(buf);
	return p->oom ? -ENOMEM : 0;
}
