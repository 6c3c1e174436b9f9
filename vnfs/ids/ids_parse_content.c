// SPDX-License-Identifier: MIT
/*
 * Snort rule options that make a rule's elements: content (with its
 * escapes and |hex| blocks) and uricontent, pcre ("/regex/flags"), and the
 * content modifiers offset, depth, distance, within.  The flag modifiers
 * (nocase, http_*) are read by the option dispatcher, ids_parse_rule.c.
 * Private to the parser; see ids_parse_priv.h.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_parse_priv.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Content text with escapes and |hex| blocks -> bytes. */
static int decode_content(const char *s, const char *e, uint8_t **out,
			  size_t *outlen, char *err)
{
	uint8_t *b = malloc((size_t)(e - s) + 1);
	size_t n = 0;

	if (!b) {
		snprintf(err, IDS_ERRLEN, "out of memory");
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
					snprintf(err, IDS_ERRLEN,
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
				snprintf(err, IDS_ERRLEN,
					 "unterminated '|' in content");
				goto out_free;
			}
			if (hi >= 0) {
				snprintf(err, IDS_ERRLEN,
					 "odd number of hex digits in content");
				goto out_free;
			}
			s++;
		} else if (*s == '"') {
			snprintf(err, IDS_ERRLEN, "unescaped '\"' in content");
			goto out_free;
		} else {
			b[n++] = (uint8_t)*s++;
		}
	}
	if (n == 0) {
		snprintf(err, IDS_ERRLEN, "empty content");
		goto out_free;
	}
	*out = b;
	*outlen = n;
	return 0;

bad_escape:
	snprintf(err, IDS_ERRLEN, "trailing '\\' in content");
out_free:
	free(b);
	return -1;
}


struct ids_elem *ids_opt_new_elem(struct ids_rstate *st)
{
	struct ids_rule *r = st->r;
	struct ids_elem *ne = realloc(r->elems, (r->nelems + 1) * sizeof(*ne));

	if (!ne) {
		snprintf(st->err, IDS_ERRLEN, "out of memory");
		return NULL;
	}
	r->elems = ne;
	memset(&ne[r->nelems], 0, sizeof(*ne));
	ne[r->nelems].var_offset = ne[r->nelems].var_depth = IDS_NO_VAR;
	ne[r->nelems].var_distance = ne[r->nelems].var_within = IDS_NO_VAR;
	ne[r->nelems].b.var_out = IDS_NO_VAR;
	ne[r->nelems].b.var_value = ne[r->nelems].b.var_offset = IDS_NO_VAR;
	return &ne[r->nelems++];
}

int ids_opt_content(struct ids_rstate *st, const char *s, const char *e,
		    enum ids_buf buf)
{
	struct ids_elem *el;
	bool neg;

	if (ids_lex_unquote(&s, &e, &neg, st->err))
		return -1;
	el = ids_opt_new_elem(st);
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

int ids_opt_pcre(struct ids_rstate *st, const char *s, const char *e)
{
	struct ids_elem *el;
	const char *last;
	enum ids_buf buf = st->sticky;
	uint32_t opts = 0;
	bool neg, rel = false;
	int errcode;
	PCRE2_SIZE erroff;

	if (ids_lex_unquote(&s, &e, &neg, st->err))
		return -1;
	if (s == e || *s != '/') {
		snprintf(st->err, IDS_ERRLEN, "pcre must be \"/regex/flags\"");
		return -1;
	}
	for (last = e - 1; last > s && *last != '/'; last--)
		;
	if (last == s) {
		snprintf(st->err, IDS_ERRLEN, "pcre without closing '/'");
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
		case 'H': case 'K': nb = IDS_BUF_HEADER; break;	/* K: raw */
		case 'P': nb = IDS_BUF_BODY; break;
		case 'M': nb = IDS_BUF_METHOD; break;
		case 'I': nb = IDS_BUF_RAW_URI; break;
		case 'C': case 'D': nb = IDS_BUF_COOKIE; break;	/* D: raw */
		case 'S': nb = IDS_BUF_STAT_CODE; break;
		case 'Y': nb = IDS_BUF_STAT_MSG; break;
		default:
			snprintf(st->err, IDS_ERRLEN, "unsupported pcre flag '%c'",
				 isprint((unsigned char)*f) ? *f : '?');
			return -1;
		}
		if (nb != IDS_BUF_COUNT) {
			if (buf != st->sticky && buf != nb) {
				snprintf(st->err, IDS_ERRLEN,
					 "pcre with two buffer flags");
				return -1;
			}
			buf = nb;
		}
	}
	el = ids_opt_new_elem(st);
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
		snprintf(st->err, IDS_ERRLEN, "out of memory");
		return -1;
	}
	el->re = pcre2_compile(el->pat, el->len, opts, &errcode, &erroff, NULL);
	if (!el->re) {
		char msg[128];

		pcre2_get_error_message(errcode, (PCRE2_UCHAR *)msg,
					sizeof(msg));
		snprintf(st->err, IDS_ERRLEN, "bad pcre at offset %zu: %s",
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

int ids_opt_need_content(struct ids_rstate *st, const char *name)
{
	if (!st->last) {
		snprintf(st->err, IDS_ERRLEN, "'%s' without a preceding content",
			 name);
		return -1;
	}
	return 0;
}

int ids_opt_modifier(struct ids_rstate *st, const char *name, const char *s,
		     const char *e)
{
	struct ids_elem *el = st->last;
	long v;
	bool *has;
	int32_t *slot;
	int8_t *var;
	long min, max;

	if (ids_opt_need_content(st, name))
		return -1;
	if (!strcmp(name, "offset")) {
		has = &el->has_offset, slot = &el->offset, min = 0, max = 1 << 20;
		var = &el->var_offset;
	} else if (!strcmp(name, "depth")) {
		has = &el->has_depth, slot = &el->depth, min = 1, max = 1 << 20;
		var = &el->var_depth;
	} else if (!strcmp(name, "distance")) {
		has = &el->has_distance, slot = &el->distance;
		min = -(1 << 20), max = 1 << 20;
		var = &el->var_distance;
	} else {
		has = &el->has_within, slot = &el->within, min = 1, max = 1 << 20;
		var = &el->var_within;
	}
	if (*has) {
		snprintf(st->err, IDS_ERRLEN, "'%s' given twice", name);
		return -1;
	}
	ids_lex_trim(&s, &e);
	*var = (int8_t)ids_opt_var(st, s, e);
	v = 0;
	if (*var == IDS_NO_VAR && ids_lex_long(s, e, min, max, &v)) {
		snprintf(st->err, IDS_ERRLEN, "bad value for '%s'", name);
		return -1;
	}
	*has = true;
	*slot = (int32_t)v;
	if ((el->has_offset || el->has_depth) &&
	    (el->has_distance || el->has_within)) {
		snprintf(st->err, IDS_ERRLEN,
			 "offset/depth mixed with distance/within");
		return -1;
	}
	el->relative = el->has_distance || el->has_within;
	return 0;
}
