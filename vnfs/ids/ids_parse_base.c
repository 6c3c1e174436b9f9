// SPDX-License-Identifier: MIT
/*
 * What the rule parser's files build on (ids_parse_priv.h): diagnostics
 * ("file:line: message"), strings interned in the parse, freeing parsed
 * rules, and the small lexical helpers.  It calls nothing of the parser.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_parse_priv.h"

static void diag_add(size_t *n, char ***list, const char *file, int line,
		     const char *prefix, const char *fmt, va_list ap)
{
	char msg[512], *full;
	char **nm;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* rule files may hold anything: keep diagnostics printable */
	for (char *c = msg; *c; c++)
		if (!isprint((unsigned char)*c))
			*c = '?';
	if (asprintf(&full, "%s:%d: %s%s", file, line, prefix, msg) < 0)
		return;
	nm = realloc(*list, (*n + 1) * sizeof(*nm));
	if (!nm) {
		free(full);
		return;
	}
	*list = nm;
	nm[(*n)++] = full;
}

void ids_diag(struct ids_diags *d, const char *file, int line,
	      const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return;
	va_start(ap, fmt);
	diag_add(&d->n, &d->msg, file, line, "", fmt, ap);
	va_end(ap);
}

void ids_diag_na(struct ids_diags *d, const char *file, int line,
		 const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return;
	va_start(ap, fmt);
	diag_add(&d->nna, &d->na, file, line, "not applicable: ", fmt, ap);
	va_end(ap);
}

void ids_diags_free(struct ids_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->msg[i]);
	for (size_t i = 0; i < d->nna; i++)
		free(d->na[i]);
	free(d->msg);
	free(d->na);
	d->msg = d->na = NULL;
	d->n = d->nna = 0;
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
void ids_rule_free(struct ids_rule *r)
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
		ids_rule_free(&p->rules[i]);
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

void ids_lex_trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

bool ids_lex_eq(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - s) == n && memcmp(s, word, n) == 0;
}

int ids_lex_long(const char *s, const char *e, long min, long max, long *out)
{
	long v = 0;
	bool neg = false;

	ids_lex_trim(&s, &e);
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

bool ids_lex_ident(const char *s, const char *e, const char *extra)
{
	if (s == e)
		return false;
	for (; s < e; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' &&
		    !strchr(extra, *s))
			return false;
	return true;
}

/* Strips '!' and the surrounding quotes: [s, e) becomes the inner text. */
int ids_lex_unquote(const char **s, const char **e, bool *neg, char *err)
{
	ids_lex_trim(s, e);
	*neg = false;
	if (*s < *e && **s == '!') {
		*neg = true;
		(*s)++;
		ids_lex_trim(s, e);
	}
	if (*e - *s < 2 || **s != '"' || (*e)[-1] != '"' ||
	    ((*e)[-2] == '\\' && *e - *s == 2)) {
		snprintf(err, IDS_ERRLEN, "value must be a quoted string");
		return -1;
	}
	(*s)++;
	(*e)--;
	return 0;
}
