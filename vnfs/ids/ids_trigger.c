// SPDX-License-Identifier: MIT
/*
 * Widening a pcre into a cheaper Hyperscan prefilter.
 *
 * A trigger only has to be a superset of the pcre: it must fire wherever a
 * match of the pcre ends (ids_ruleset.c confirms every candidate with
 * PCRE2).  Large counted repeats are what makes Hyperscan's compile slow
 * (the community ruleset's `[^\x27]{1075,}` costs a quarter of a second
 * per pattern, and a few dozen of them made a 4,000-rule load take
 * minutes), so every counted repeat whose bounds exceed IDS_TRIGGER_REP is
 * rewritten to an open one with a small minimum: X{n} X{n,} X{n,m} become
 * X{min(n,K),}.  Any string matching the original repeat matches the
 * rewritten one and ends at the same place, so the result is a superset.
 * Possessive repeats (X{n,m}+) are left alone: making them open could make
 * them swallow what follows, which is no superset.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_trigger.h"

/* Parses "{n}", "{n,}" or "{n,m}" at @s; false if it is a literal brace. */
static bool parse_rep(const char *s, unsigned long *lo, unsigned long *hi,
		      bool *open, const char **end)
{
	char *e;

	if (*s != '{' || !isdigit((unsigned char)s[1]))
		return false;
	*lo = strtoul(s + 1, &e, 10);
	*open = false;
	*hi = *lo;
	if (*e == ',') {
		if (e[1] == '}') {
			*open = true;
			e++;
		} else if (isdigit((unsigned char)e[1])) {
			*hi = strtoul(e + 1, &e, 10);
		} else {
			return false;
		}
	}
	if (*e != '}')
		return false;
	*end = e + 1;
	return true;
}

char *ids_trigger_widen(const char *re)
{
	size_t n = strlen(re);
	char *out = malloc(2 * n + 1);	/* "{5}" -> "{4,}" at most */
	size_t o = 0;
	bool in_class = false;

	if (!out)
		return NULL;
	for (const char *c = re; *c;) {
		unsigned long lo, hi;
		bool open;
		const char *end;

		if (*c == '\\') {
			const char *stop = c + 2;

			if (!c[1]) {
				out[o++] = *c++;
				continue;
			}
			if (c[1] == 'Q') {	/* literal up to \E */
				const char *q = strstr(c + 2, "\\E");

				stop = q ? q + 2 : c + strlen(c);
			} else if (strchr("xpPgk", c[1]) && c[2] == '{') {
				const char *q = strchr(c + 3, '}');

				stop = q ? q + 1 : c + strlen(c);
			}
			while (c < stop)
				out[o++] = *c++;
			continue;
		}
		if (in_class) {
			if (*c == ']')
				in_class = false;
			out[o++] = *c++;
			continue;
		}
		if (*c == '[') {
			in_class = true;
			out[o++] = *c++;
			if (*c == '^')
				out[o++] = *c++;
			if (*c == ']')
				out[o++] = *c++;	/* a leading ']' is literal */
			continue;
		}
		if (parse_rep(c, &lo, &hi, &open, &end) && *end != '+' &&
		    (lo > IDS_TRIGGER_REP || (!open && hi > IDS_TRIGGER_REP))) {
			o += (size_t)sprintf(out + o, "{%lu,}",
					     lo < IDS_TRIGGER_REP ? lo :
					     (unsigned long)IDS_TRIGGER_REP);
			c = end;
			continue;
		}
		out[o++] = *c++;
	}
	out[o] = 0;
	return out;
}
