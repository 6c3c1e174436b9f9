// SPDX-License-Identifier: MIT
/*
 * Snort rule options that read bytes at a position: isdataat, byte_test,
 * byte_jump, byte_extract, and urilen / dsize, lengths (evaluated by
 * ids_bytes.c).  They look at the buffer of the
 * element before them when relative, else at the raw stream; they are
 * never Hyperscan triggers.  Private to the parser; see ids_parse_priv.h.
 *
 * Refused with a message: dce (needs the DCE/RPC preprocessor), from_end,
 * more than two byte_extract variables, and anything malformed.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_parse_priv.h"

#define MAX_ARGS 16

/* Splits [s, e) at commas into trimmed tokens; -1 when too many. */
static int split_args(const char *s, const char *e, const char *tok[][2])
{
	int n = 0;

	for (;;) {
		const char *c = memchr(s, ',', (size_t)(e - s));
		const char *te = c ? c : e, *ts = s;

		if (n == MAX_ARGS)
			return -1;
		ids_lex_trim(&ts, &te);
		tok[n][0] = ts;
		tok[n][1] = te;
		n++;
		if (!c)
			return n;
		s = c + 1;
	}
}

int ids_opt_var(const struct ids_rstate *st, const char *s, const char *e)
{
	for (int i = 0; i < st->nvars; i++)
		if (ids_lex_eq(s, e, st->var[i]))
			return i;
	return IDS_NO_VAR;
}

/*
 * "123", "-4", "0x1F": a number in [min, max]; or, where @var is not
 * NULL, the name of a byte_extract variable of the rule (*var its index).
 */
static int parse_num(struct ids_rstate *st, const char *what, const char *s,
		     const char *e, long min, long max, long *out, int8_t *var)
{
	if (s < e && (isalpha((unsigned char)*s) || *s == '_')) {
		int v = ids_opt_var(st, s, e);

		if (var && v != IDS_NO_VAR) {
			*var = (int8_t)v;
			*out = 0;
			return 0;
		}
		snprintf(st->err, IDS_ERRLEN, "%s %s '%.*s'", var ?
			 "unknown variable for" : "bad", what,
			 (int)(e - s > 32 ? 32 : e - s), s);
		return -1;
	}
	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		char buf[24], *end;
		unsigned long v;

		if (e - s >= (long)sizeof(buf))
			goto bad;
		memcpy(buf, s, (size_t)(e - s));
		buf[e - s] = 0;
		v = strtoul(buf, &end, 16);
		if (*end || v > (unsigned long)max)
			goto bad;
		*out = (long)v;
		return 0;
	}
	if (!ids_lex_long(s, e, min, max, out))
		return 0;
bad:
	snprintf(st->err, IDS_ERRLEN, "bad %s '%.*s'", what,
		 (int)(e - s > 32 ? 32 : e - s), s);
	return -1;
}

/* "name value" token: true and the value in [vs, e) when it starts so. */
static bool keyed(const char *s, const char *e, const char *name,
		  const char **vs)
{
	size_t n = strlen(name);

	if ((size_t)(e - s) <= n || memcmp(s, name, n) ||
	    !isspace((unsigned char)s[n]))
		return false;
	*vs = s + n;
	while (*vs < e && isspace((unsigned char)**vs))
		(*vs)++;
	return true;
}

/* The flags after the positional arguments of byte_test / byte_jump. */
static int byte_flags(struct ids_rstate *st, struct ids_elem *el,
		      const char *tok[][2], int from, int n, const char *opt)
{
	struct ids_bytes *b = &el->b;
	bool string = false;

	for (int i = from; i < n; i++) {
		const char *s = tok[i][0], *e = tok[i][1], *vs;
		long v;

		if (ids_lex_eq(s, e, "relative")) {
			el->relative = true;
		} else if (ids_lex_eq(s, e, "big")) {
			b->little = false;
		} else if (ids_lex_eq(s, e, "little")) {
			b->little = true;
		} else if (ids_lex_eq(s, e, "string")) {
			string = true;
		} else if (ids_lex_eq(s, e, "hex")) {
			b->base = 16;
		} else if (ids_lex_eq(s, e, "dec")) {
			b->base = 10;
		} else if (ids_lex_eq(s, e, "oct")) {
			b->base = 8;
		} else if (keyed(s, e, "bitmask", &vs)) {
			if (parse_num(st, "bitmask", vs, e, 1, 0xffffffffL, &v,
				      NULL))
				return -1;
			b->bitmask = (uint32_t)v;
		} else if (b->op == IDS_BOP_JUMP && ids_lex_eq(s, e, "align")) {
			b->align = true;
		} else if (b->op == IDS_BOP_JUMP &&
			   ids_lex_eq(s, e, "from_beginning")) {
			b->from_beginning = true;
		} else if (b->op != IDS_BOP_TEST &&
			   keyed(s, e, "multiplier", &vs)) {
			if (parse_num(st, "multiplier", vs, e, 1, 65535, &v,
				      NULL))
				return -1;
			b->multiplier = (uint32_t)v;
		} else if (b->op == IDS_BOP_JUMP &&
			   keyed(s, e, "post_offset", &vs)) {
			if (parse_num(st, "post_offset", vs, e, -65535, 65535,
				      &v, NULL))
				return -1;
			b->post_offset = (int32_t)v;
		} else if (b->op == IDS_BOP_EXTRACT &&
			   keyed(s, e, "align", &vs)) {
			if (parse_num(st, "align", vs, e, 2, 4, &v, NULL) ||
			    v == 3) {
				snprintf(st->err, IDS_ERRLEN, "bad align: 2 or 4");
				return -1;
			}
			b->align_to = (uint8_t)v;
		} else if (ids_lex_eq(s, e, "dce") ||
			   ids_lex_eq(s, e, "from_end")) {
			snprintf(st->err, IDS_ERRLEN, "unsupported %s flag "
				 "'%.*s'", opt, (int)(e - s), s);
			return -1;
		} else {
			snprintf(st->err, IDS_ERRLEN, "bad %s flag '%.*s'", opt,
				 (int)(e - s > 32 ? 32 : e - s), s);
			return -1;
		}
	}
	if (b->base && !string) {
		snprintf(st->err, IDS_ERRLEN, "%s: hex/dec/oct need 'string'",
			 opt);
		return -1;
	}
	if (string && !b->base)
		b->base = 10;
	if (b->nbytes > (b->base ? 10 : 4)) {
		snprintf(st->err, IDS_ERRLEN, "%s: %u bytes is too many for "
			 "a %s number", opt, b->nbytes, b->base ? "string" :
			 "binary");
		return -1;
	}
	return 0;
}

static const struct {
	const char *text;
	enum ids_bcmp cmp;
} cmps[] = {
	{ "<=", IDS_BCMP_LE }, { ">=", IDS_BCMP_GE }, { "<", IDS_BCMP_LT },
	{ ">", IDS_BCMP_GT }, { "=", IDS_BCMP_EQ }, { "&", IDS_BCMP_AND },
	{ "^", IDS_BCMP_XOR },
};

/* New element of kind BYTES, on the buffer of the element before it. */
static struct ids_elem *bytes_elem(struct ids_rstate *st, enum ids_bop op)
{
	struct ids_rule *r = st->r;
	enum ids_buf buf = r->nelems ? r->elems[r->nelems - 1].buf :
		IDS_BUF_RAW;

	/* right after base64_data: the decoded bytes */
	if (st->sticky == IDS_BUF_B64)
		buf = IDS_BUF_B64;
	struct ids_elem *ne = ids_opt_new_elem(st);

	if (!ne)
		return NULL;
	ne->kind = IDS_ELEM_BYTES;
	ne->buf = buf;
	ne->b.op = op;
	ne->b.multiplier = 1;
	st->last = NULL;	/* content modifiers do not apply to it */
	return ne;
}

/*
 * urilen:N, <N, >N, A<>B, A<=>B, then raw (default) or norm; dsize (a
 * datagram's size, @dsize) the same without the buffer choice.
 */
static int opt_urilen(struct ids_rstate *st, const char *tok[][2], int n,
		      bool dsize)
{
	const char *s = tok[0][0], *e = tok[0][1], *sep;
	struct ids_elem *el;
	long lo, hi;
	size_t seplen = 3;

	if (n > 2 || (n == 2 && (dsize ||
	    (!ids_lex_eq(tok[1][0], tok[1][1], "raw") &&
	     !ids_lex_eq(tok[1][0], tok[1][1], "norm"))))) {
		snprintf(st->err, IDS_ERRLEN, dsize ? "bad dsize: want N, <N, "
			 ">N, A<>B or A<=>B" : "bad urilen: want N, <N, >N, "
			 "A<>B or A<=>B, then raw or norm");
		return -1;
	}
	el = ids_opt_new_elem(st);
	if (!el)
		return -1;
	el->kind = IDS_ELEM_BYTES;
	el->b.op = dsize ? IDS_BOP_DSIZE : IDS_BOP_URILEN;
	el->buf = dsize ? IDS_BUF_RAW : n == 2 &&
		ids_lex_eq(tok[1][0], tok[1][1], "norm") ? IDS_BUF_URI :
		IDS_BUF_RAW_URI;
	st->last = NULL;
	sep = memmem(s, (size_t)(e - s), "<=>", 3);
	if (!sep) {
		sep = memmem(s, (size_t)(e - s), "<>", 2);
		seplen = 2;
	}
	if (sep) {
		if (parse_num(st, "urilen bound", s, sep, 0, 65535, &lo,
			      NULL) ||
		    parse_num(st, "urilen bound", sep + seplen, e, 0, 65535,
			      &hi, NULL))
			return -1;
		el->b.cmp = seplen == 3 ? IDS_BCMP_IN_INCL : IDS_BCMP_IN;
		el->b.value = (uint64_t)lo;
		el->b.value_hi = (uint64_t)hi;
		return 0;
	}
	el->b.cmp = IDS_BCMP_EQ;
	if (s < e && (*s == '<' || *s == '>'))
		el->b.cmp = *s++ == '<' ? IDS_BCMP_LT : IDS_BCMP_GT;
	if (parse_num(st, "urilen", s, e, 0, 65535, &lo, NULL))
		return -1;
	el->b.value = (uint64_t)lo;
	return 0;
}

/* base64_decode[:bytes N][,offset M][,relative] (@tok NULL: no value). */
static int opt_b64(struct ids_rstate *st, const char *tok[][2], int n)
{
	struct ids_elem *el;
	long v;

	if (st->sticky == IDS_BUF_B64) {
		snprintf(st->err, IDS_ERRLEN, "base64_decode of decoded data");
		return -1;
	}
	el = bytes_elem(st, IDS_BOP_B64);
	if (!el)
		return -1;
	for (int i = 0; tok && i < n; i++) {
		const char *s = tok[i][0], *e = tok[i][1], *vs;

		if (ids_lex_eq(s, e, "relative")) {
			el->relative = true;
		} else if (keyed(s, e, "bytes", &vs)) {
			if (parse_num(st, "bytes", vs, e, 1, 65535, &v, NULL))
				return -1;
			el->b.value = (uint64_t)v;
		} else if (keyed(s, e, "offset", &vs)) {
			if (parse_num(st, "offset", vs, e, 0, 65535, &v, NULL))
				return -1;
			el->b.offset = (int32_t)v;
		} else {
			snprintf(st->err, IDS_ERRLEN, "bad base64_decode "
				 "argument '%.*s'", (int)(e - s > 32 ? 32 : e - s),
				 s);
			return -1;
		}
	}
	st->has_b64 = true;
	return 0;
}

int ids_opt_bytes(struct ids_rstate *st, const char *name, const char *s,
		  const char *e)
{
	const char *tok[MAX_ARGS][2];
	struct ids_elem *el;
	long v;
	int n;

	if (!s)		/* only base64_decode may come without a value */
		return opt_b64(st, NULL, 0);
	n = split_args(s, e, tok);
	if (n < 0) {
		snprintf(st->err, IDS_ERRLEN, "too many arguments to '%s'", name);
		return -1;
	}
	if (!strcmp(name, "base64_decode"))
		return opt_b64(st, tok, n);
	if (!strcmp(name, "urilen") || !strcmp(name, "dsize"))
		return opt_urilen(st, tok, n, name[0] == 'd');
	if (!strcmp(name, "isdataat")) {
		const char *ns = tok[0][0];
		bool neg = ns < tok[0][1] && *ns == '!';

		el = bytes_elem(st, IDS_BOP_ISDATAAT);
		if (!el)
			return -1;
		el->negated = neg;
		if (parse_num(st, "isdataat offset", ns + neg, tok[0][1], 0,
			      65535, &v, &el->b.var_offset))
			return -1;
		el->b.offset = (int32_t)v;
		for (int i = 1; i < n; i++) {
			if (ids_lex_eq(tok[i][0], tok[i][1], "relative")) {
				el->relative = true;
			} else if (!ids_lex_eq(tok[i][0], tok[i][1], "rawbytes")) {
				snprintf(st->err, IDS_ERRLEN, "bad isdataat flag "
					 "'%.*s'", (int)(tok[i][1] - tok[i][0] >
					 32 ? 32 : tok[i][1] - tok[i][0]),
					 tok[i][0]);
				return -1;
			}
		}
		return 0;
	}
	el = bytes_elem(st, !strcmp(name, "byte_test") ? IDS_BOP_TEST :
			!strcmp(name, "byte_jump") ? IDS_BOP_JUMP :
			IDS_BOP_EXTRACT);
	if (!el)
		return -1;
	if (n < (el->b.op == IDS_BOP_JUMP ? 2 : el->b.op == IDS_BOP_TEST ? 4 : 3)) {
		snprintf(st->err, IDS_ERRLEN, "'%s' needs more arguments", name);
		return -1;
	}
	if (parse_num(st, "byte count", tok[0][0], tok[0][1], 1, 10, &v, NULL))
		return -1;
	el->b.nbytes = (uint8_t)v;
	if (el->b.op == IDS_BOP_TEST) {
		const char *os = tok[1][0], *oe = tok[1][1];
		size_t k;

		if (os < oe && *os == '!') {
			el->b.not = true;
			os++;
		}
		for (k = 0; k < sizeof(cmps) / sizeof(cmps[0]); k++)
			if (ids_lex_eq(os, oe, cmps[k].text))
				break;
		if (k == sizeof(cmps) / sizeof(cmps[0])) {
			snprintf(st->err, IDS_ERRLEN, "bad byte_test operator "
				 "'%.*s'", (int)(oe - os > 8 ? 8 : oe - os), os);
			return -1;
		}
		el->b.cmp = cmps[k].cmp;
		if (parse_num(st, "byte_test value", tok[2][0], tok[2][1], 0,
			      0xffffffffL, &v, &el->b.var_value))
			return -1;
		el->b.value = (uint64_t)v;
	}
	if (parse_num(st, "offset", tok[el->b.op == IDS_BOP_TEST ? 3 : 1][0],
		      tok[el->b.op == IDS_BOP_TEST ? 3 : 1][1], -65535, 65535,
		      &v, &el->b.var_offset))
		return -1;
	el->b.offset = (int32_t)v;
	if (el->b.op == IDS_BOP_EXTRACT) {
		const char *vs = tok[2][0], *ve = tok[2][1];

		if (!ids_lex_ident(vs, ve, "_") || ve - vs >= 32 ||
		    isdigit((unsigned char)*vs)) {
			snprintf(st->err, IDS_ERRLEN, "bad byte_extract name "
				 "'%.*s'", (int)(ve - vs > 32 ? 32 : ve - vs), vs);
			return -1;
		}
		if (ids_opt_var(st, vs, ve) != IDS_NO_VAR ||
		    st->nvars == IDS_MAX_VARS) {
			snprintf(st->err, IDS_ERRLEN, "unsupported byte_extract "
				 "'%.*s' (at most %d variables, each named "
				 "once)", (int)(ve - vs), vs, IDS_MAX_VARS);
			return -1;
		}
		memcpy(st->var[st->nvars], vs, (size_t)(ve - vs));
		st->var[st->nvars][ve - vs] = 0;
		el->b.var_out = (int8_t)st->nvars++;
	}
	return byte_flags(st, el, tok, el->b.op == IDS_BOP_JUMP ? 2 :
			  el->b.op == IDS_BOP_TEST ? 4 : 3, n, name);
}
