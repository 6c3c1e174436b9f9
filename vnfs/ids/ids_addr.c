// SPDX-License-Identifier: MIT
/*
 * Address and port fields of rule headers: "any", variables, CIDR blocks,
 * port ranges, lists and negation.  Text comes from rule files, which we
 * do not trust to be well formed: every field is checked and a bad one is
 * refused with a message, never guessed at.
 *
 * A set is kept flat, as a positive and a negative list.  Negating a list
 * that itself contains a negation ("![a,!b]") cannot be flattened and is
 * refused as unsupported.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_int.h"

#define VAR_DEPTH_MAX	16

const char *ids_var_lookup(const struct ids_parse *p, const char *name,
			   size_t len)
{
	for (size_t i = p->nvars; i-- > 0;) {
		if (strlen(p->vars[i].name) == len &&
		    memcmp(p->vars[i].name, name, len) == 0)
			return p->vars[i].value;
	}
	return NULL;
}

struct sparse {
	const struct ids_parse *p;
	char *err;
	size_t errlen;
	bool is_port;
	struct ids_addrset *as;
	struct ids_portset *ps;
};

static void trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

static int push(void **arr, size_t *n, size_t size, const void *item)
{
	void *na = realloc(*arr, (*n + 1) * size);

	if (!na)
		return -1;
	memcpy((char *)na + *n * size, item, size);
	*arr = na;
	(*n)++;
	return 0;
}

static int parse_cidr(const char *s, const char *e, struct ids_cidr *c)
{
	char buf[64];
	size_t n = (size_t)(e - s);
	char *slash;
	long plen = -1;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	slash = strchr(buf, '/');
	if (slash) {
		char *end;

		*slash = 0;
		if (!isdigit((unsigned char)slash[1]))
			return -1;
		errno = 0;
		plen = strtol(slash + 1, &end, 10);
		if (*end || errno)
			return -1;
	}
	memset(c, 0, sizeof(*c));
	if (inet_pton(AF_INET, buf, c->addr) == 1) {
		c->family = 4;
		if (plen > 32)
			return -1;
		c->plen = plen < 0 ? 32 : (uint8_t)plen;
	} else if (inet_pton(AF_INET6, buf, c->addr) == 1) {
		c->family = 6;
		if (plen > 128)
			return -1;
		c->plen = plen < 0 ? 128 : (uint8_t)plen;
	} else {
		return -1;
	}
	return 0;
}

static int parse_port(const char *s, const char *e, long *out)
{
	long v = 0;

	if (s == e || e - s > 5)
		return -1;
	for (; s < e; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v > 65535)
		return -1;
	*out = v;
	return 0;
}

static int parse_prange(const char *s, const char *e, struct ids_prange *r)
{
	const char *colon = memchr(s, ':', (size_t)(e - s));
	long lo = 0, hi = 65535;

	if (!colon) {
		if (parse_port(s, e, &lo))
			return -1;
		hi = lo;
	} else {
		if (colon == s && colon + 1 == e)
			return -1;
		if (colon > s && parse_port(s, colon, &lo))
			return -1;
		if (colon + 1 < e && parse_port(colon + 1, e, &hi))
			return -1;
	}
	if (lo > hi)
		return -1;
	r->lo = (uint16_t)lo;
	r->hi = (uint16_t)hi;
	return 0;
}

static int fail(struct sparse *sp, const char *fmt, const char *s, size_t n)
{
	char item[48];

	if (n >= sizeof(item))
		n = sizeof(item) - 1;
	memcpy(item, s, n);
	item[n] = 0;
	snprintf(sp->err, sp->errlen, fmt, item);
	return -1;
}

/*
 * One element or list, with polarity @neg; @under_neg says a negation is
 * already in force above us (a second one cannot be flattened).
 */
static int parse_spec(struct sparse *sp, const char *s, const char *e,
		      bool neg, bool under_neg, int depth)
{
	trim(&s, &e);
	if (s == e)
		return fail(sp, "empty %s list element",
			    sp->is_port ? "port" : "address",
			    sp->is_port ? 4 : 7);
	if (*s == '!') {
		if (under_neg)
			return fail(sp, "nested negation '%s' not supported",
				    s, (size_t)(e - s));
		return parse_spec(sp, s + 1, e, !neg, true, depth);
	}
	if (*s == '[') {
		const char *item;
		int level = 0;

		if (e[-1] != ']')
			return fail(sp, "unterminated list '%s'", s,
				    (size_t)(e - s));
		s++;
		e--;
		item = s;
		for (const char *c = s; c <= e; c++) {
			if (c < e && *c == '[')
				level++;
			else if (c < e && *c == ']')
				level--;
			if (level < 0)
				return fail(sp, "unbalanced ']' in '%s'", s,
					    (size_t)(e - s));
			if (c == e || (*c == ',' && level == 0)) {
				if (parse_spec(sp, item, c, neg, under_neg,
					       depth))
					return -1;
				item = c + 1;
			}
		}
		if (level != 0)
			return fail(sp, "unbalanced '[' in '%s'", s,
				    (size_t)(e - s));
		return 0;
	}
	if (*s == '$') {
		const char *v;

		if (depth >= VAR_DEPTH_MAX)
			return fail(sp, "variable '%s' nested too deep", s + 1,
				    (size_t)(e - s - 1));
		v = ids_var_lookup(sp->p, s + 1, (size_t)(e - s - 1));
		if (!v)
			return fail(sp, "unknown variable '%s'", s + 1,
				    (size_t)(e - s - 1));
		return parse_spec(sp, v, v + strlen(v), neg, under_neg,
				  depth + 1);
	}
	if (e - s == 3 && memcmp(s, "any", 3) == 0) {
		if (sp->is_port) {
			if (neg)
				sp->ps->none = true;
			else
				sp->ps->pos_any = true;
		} else {
			if (neg)
				sp->as->none = true;
			else
				sp->as->pos_any = true;
		}
		return 0;
	}
	if (sp->is_port) {
		struct ids_prange r;
		int rc;

		if (parse_prange(s, e, &r))
			return fail(sp, "bad port '%s'", s, (size_t)(e - s));
		if (neg)
			rc = push((void **)&sp->ps->neg, &sp->ps->nneg,
				  sizeof(r), &r);
		else
			rc = push((void **)&sp->ps->pos, &sp->ps->npos,
				  sizeof(r), &r);
		if (rc)
			return fail(sp, "out of memory%s", "", 0);
	} else {
		struct ids_cidr c;
		int rc;

		if (parse_cidr(s, e, &c))
			return fail(sp, "bad address '%s'", s, (size_t)(e - s));
		if (neg)
			rc = push((void **)&sp->as->neg, &sp->as->nneg,
				  sizeof(c), &c);
		else
			rc = push((void **)&sp->as->pos, &sp->as->npos,
				  sizeof(c), &c);
		if (rc)
			return fail(sp, "out of memory%s", "", 0);
	}
	return 0;
}

int ids_addrset_parse(const struct ids_parse *p, const char *text,
		      struct ids_addrset *out, char *err, size_t errlen)
{
	struct sparse sp = { .p = p, .err = err, .errlen = errlen,
			     .as = out };

	memset(out, 0, sizeof(*out));
	if (parse_spec(&sp, text, text + strlen(text), false, false, 0)) {
		ids_addrset_free(out);
		return -1;
	}
	return 0;
}

int ids_portset_parse(const struct ids_parse *p, const char *text,
		      struct ids_portset *out, char *err, size_t errlen)
{
	struct sparse sp = { .p = p, .err = err, .errlen = errlen,
			     .is_port = true, .ps = out };

	memset(out, 0, sizeof(*out));
	if (parse_spec(&sp, text, text + strlen(text), false, false, 0)) {
		ids_portset_free(out);
		return -1;
	}
	return 0;
}

static bool cidr_match(const struct ids_cidr *c, int family,
		       const uint8_t *addr)
{
	unsigned full = c->plen / 8, rest = c->plen % 8;

	if (c->family != family)
		return false;
	if (memcmp(c->addr, addr, full))
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff00 >> rest);

		if ((c->addr[full] & mask) != (addr[full] & mask))
			return false;
	}
	return true;
}

/* @family: 4 or 6. */
bool ids_addrset_match(const struct ids_addrset *s, int family,
		       const uint8_t *addr)
{
	bool pos = s->pos_any || s->npos == 0;

	if (s->none)
		return false;
	for (size_t i = 0; !pos && i < s->npos; i++)
		pos = cidr_match(&s->pos[i], family, addr);
	if (!pos)
		return false;
	for (size_t i = 0; i < s->nneg; i++)
		if (cidr_match(&s->neg[i], family, addr))
			return false;
	return true;
}

bool ids_portset_match(const struct ids_portset *s, uint16_t port)
{
	bool pos = s->pos_any || s->npos == 0;

	if (s->none)
		return false;
	for (size_t i = 0; !pos && i < s->npos; i++)
		pos = port >= s->pos[i].lo && port <= s->pos[i].hi;
	if (!pos)
		return false;
	for (size_t i = 0; i < s->nneg; i++)
		if (port >= s->neg[i].lo && port <= s->neg[i].hi)
			return false;
	return true;
}

void ids_addrset_free(struct ids_addrset *s)
{
	free(s->pos);
	free(s->neg);
	memset(s, 0, sizeof(*s));
}

void ids_portset_free(struct ids_portset *s)
{
	free(s->pos);
	free(s->neg);
	memset(s, 0, sizeof(*s));
}
