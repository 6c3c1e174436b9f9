// SPDX-License-Identifier: MIT
/*
 * Confirms a rule's content and pcre options against the inspection
 * buffers, with Snort's positional semantics:
 *
 *   offset N / depth D   the match lies in [start + N, start + N + D)
 *   distance N / within W  the match lies in [cur + N, cur + N + W), where
 *                        cur is the end of the previous match in the same
 *                        buffer (its start when there is none)
 *   pcre R               the regex is tried from cur
 *
 * Positions are absolute (stream offsets for the raw buffer), so a buffer
 * that is a window onto a longer stream is evaluated exactly as long as
 * the bytes a match needs are in the window.  When a later option fails,
 * earlier positive options are retried at their next occurrence
 * (backtracking), within a budget of IDS_EVAL_BUDGET positions per check so
 * a hostile stream cannot make one check expensive; running out of budget
 * counts as no match.
 */
#include <ctype.h>
#include <string.h>

#include "ids_int.h"

bool ids_bytes_find(const uint8_t *hay, size_t hlen, const uint8_t *pat,
		    size_t plen, bool nocase, size_t *pos)
{
	if (plen == 0 || hlen < plen)
		return false;
	if (!nocase) {
		const uint8_t *h = memmem(hay, hlen, pat, plen);

		if (!h)
			return false;
		*pos = (size_t)(h - hay);
		return true;
	}
	/* pat is lower case */
	{
		uint8_t c0 = pat[0], c1 = (uint8_t)toupper(pat[0]);
		size_t last = hlen - plen;

		for (size_t i = 0; i <= last; i++) {
			size_t k;

			if (hay[i] != c0 && hay[i] != c1)
				continue;
			for (k = 1; k < plen; k++)
				if (tolower(hay[i + k]) != pat[k])
					break;
			if (k == plen) {
				*pos = i;
				return true;
			}
		}
	}
	return false;
}

/* The window [lo, hi) in which @el may match, clipped to the view. */
/* A modifier's value: its constant, or the variable it names. */
static int32_t modval(int32_t c, int8_t var, const uint64_t *vars)
{
	return var == IDS_NO_VAR ? c : (int32_t)(vars[var] & 0x7fffffff);
}

static bool region(const struct ids_elem *el, const struct ids_view *v,
		   uint64_t cur, uint64_t *lo, uint64_t *hi,
		   const uint64_t *vars)
{
	int64_t b;
	uint64_t l, h = UINT64_MAX;
	uint64_t vend = v->base + v->len;
	int32_t offset = modval(el->offset, el->var_offset, vars);
	int32_t depth = modval(el->depth, el->var_depth, vars);
	int32_t distance = modval(el->distance, el->var_distance, vars);
	int32_t within = modval(el->within, el->var_within, vars);

	if (el->kind == IDS_ELEM_PCRE) {
		l = el->relative ? cur : v->start;
	} else if (el->relative) {
		b = (int64_t)cur + distance;
		if (el->has_within)
			h = b + within < 0 ? 0 : (uint64_t)(b + within);
		l = b < (int64_t)v->start ? v->start : (uint64_t)b;
	} else {
		l = v->start + (uint64_t)offset;
		if (el->has_depth)
			h = l + (uint64_t)depth;
	}
	if (l < v->base)
		l = v->base;
	if (h > vend)
		h = vend;
	if (l > h)
		return false;
	*lo = l;
	*hi = h;
	return true;
}

static bool eval(const struct ids_rule *r, size_t i, struct ids_match_ctx *m,
		 uint64_t *cur)
{
	const struct ids_elem *el;
	const struct ids_view *v;
	uint64_t lo, hi, save;

	if (i == r->nelems)
		return true;
	el = &r->elems[i];
	v = &m->v[el->buf];
	if (v->present && !v->data && m->fill_raw && el->buf == IDS_BUF_RAW) {
		m->err = m->fill_raw(m);
		if (m->err)
			return false;
	}
	if (el->kind == IDS_ELEM_BYTES && el->b.op == IDS_BOP_B64) {
		/* the decoded view for base64_data; re-made on backtracking */
		size_t n;

		if (!v->present || --m->budget < 0)
			return false;
		n = ids_b64_decode(el, v, cur[el->buf], m->b64);
		if (!n)
			return false;
		m->v[IDS_BUF_B64] = (struct ids_view){ m->b64, n, 0, 0, true };
		cur[IDS_BUF_B64] = 0;
		if (eval(r, i + 1, m, cur))
			return true;
		m->v[IDS_BUF_B64].present = false;
		return false;
	}
	if (el->kind == IDS_ELEM_BYTES) {
		uint64_t next, vars[IDS_MAX_VARS];

		memcpy(vars, m->vars, sizeof(vars));
		if (!v->present || --m->budget < 0 ||
		    !ids_bytes_eval(el, v, cur[el->buf], &next, m->vars)) {
			memcpy(m->vars, vars, sizeof(vars));
			return false;
		}
		save = cur[el->buf];
		cur[el->buf] = next;
		if (eval(r, i + 1, m, cur))
			return true;
		cur[el->buf] = save;
		memcpy(m->vars, vars, sizeof(vars));	/* backtracking */
		return false;
	}
	if (!v->present || !region(el, v, cur[el->buf], &lo, &hi, m->vars))
		return el->negated ? eval(r, i + 1, m, cur) : false;
	save = cur[el->buf];
	if (el->kind == IDS_ELEM_CONTENT) {
		const uint8_t *pat = el->nocase ? el->lpat : el->pat;

		while (lo + el->len <= hi) {
			size_t pos;

			if (--m->budget < 0)
				return false;
			if (!ids_bytes_find(v->data + (lo - v->base),
					    (size_t)(hi - lo), pat, el->len,
					    el->nocase, &pos))
				break;
			if (el->negated)
				return false;
			cur[el->buf] = lo + pos + el->len;
			if (eval(r, i + 1, m, cur))
				return true;
			cur[el->buf] = save;
			if (!el->anchor)
				return false;
			lo += pos + 1;
		}
		return el->negated ? eval(r, i + 1, m, cur) : false;
	}
	/*
	 * pcre: the subject is [lo, hi) for a relative pcre (so '^' is the
	 * cursor, as in Snort), else the buffer up to hi, where '^' cannot
	 * match at the window's first byte unless that is the buffer's start.
	 */
	{
		uint64_t sbase = el->relative ? lo : v->base;
		uint32_t opts = !el->relative && v->base > v->start ?
			PCRE2_NOTBOL : 0;

		while (lo <= hi) {
			PCRE2_SIZE *ov;
			int rc;

			if (--m->budget < 0)
				return false;
			rc = pcre2_match(el->re, v->data + (sbase - v->base),
					 (PCRE2_SIZE)(hi - sbase),
					 (PCRE2_SIZE)(lo - sbase), opts, m->md,
					 m->mctx);
			if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && !el->negated)
				return false;	/* limits hit: no match */
			if (rc < 0)
				break;
			if (el->negated)
				return false;
			ov = pcre2_get_ovector_pointer(m->md);
			cur[el->buf] = sbase + ov[1];
			if (eval(r, i + 1, m, cur))
				return true;
			cur[el->buf] = save;
			if (!el->anchor)
				return false;
			lo = sbase + ov[0] + 1;
		}
	}
	return el->negated ? eval(r, i + 1, m, cur) : false;
}

bool ids_rule_elems_match(const struct ids_rule *r, struct ids_match_ctx *m)
{
	uint64_t cur[IDS_BUF_COUNT];

	for (int b = 0; b < IDS_BUF_COUNT; b++)
		cur[b] = m->v[b].start;
	m->budget = IDS_EVAL_BUDGET;
	return eval(r, 0, m, cur);
}
