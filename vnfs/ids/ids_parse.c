// SPDX-License-Identifier: MIT
/*
 * Snort 2.9 rule text -> struct ids_rule: files and lines, diagnostics,
 * and variables (var, ipvar, portvar).  A rule line goes to
 * ids_parse_rule.c (header and options), whose content and pcre options
 * are in ids_parse_content.c; all three build on ids_parse_base.c
 * (diagnostics, interned strings, freeing, lexical helpers), and
 * ids_parse_priv.h is what these files share.  Calls go one way:
 * ids_parse -> ids_parse_rule -> ids_parse_content -> ids_parse_base.
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

#include "ids_parse_priv.h"

/* ---- variables ---- */

static void parse_var(struct ids_parse *p, const char *kind, const char *s,
		      int lineno)
{
	const char *e = s + strlen(s), *ns, *ne;
	char err[IDS_ERRLEN];
	struct ids_var *nv, v;

	ids_lex_trim(&s, &e);
	ns = s;
	while (s < e && !isspace((unsigned char)*s))
		s++;
	ne = s;
	ids_lex_trim(&s, &e);
	if (!ids_lex_ident(ns, ne, "") || isdigit((unsigned char)*ns) || s == e) {
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

			rc = ids_addrset_parse(p, v.value, &as, err, IDS_ERRLEN);
			if (!rc)
				ids_addrset_free(&as);
		} else {
			struct ids_portset ps;

			rc = ids_portset_parse(p, v.value, &ps, err, IDS_ERRLEN);
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
			ids_parse_rule(p, w, lineno);
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
