/* SPDX-License-Identifier: MIT */
/*
 * Private to the rule parser (ids_parse.c, ids_parse_rule.c,
 * ids_parse_content.c, ids_parse_base.c): what its files share.  Not an API; the rest of
 * vnfs/ids sees the parser through ids_int.h (ids_parse_text ...).
 *
 * Conventions: text is [s, e) (not NUL-terminated); a failing helper
 * writes one message of at most IDS_ERRLEN bytes into its @err (or
 * st->err) and returns -1.
 */
#ifndef TOCHAIN_IDS_PARSE_PRIV_H
#define TOCHAIN_IDS_PARSE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ids_int.h"

#define IDS_ERRLEN 256

/* The rule being read: its options go into @r; @err says why it failed. */
struct ids_rstate {
	struct ids_parse *p;
	struct ids_rule *r;
	struct ids_elem *last;		/* last content (modifier target) */
	enum ids_buf sticky;		/* file_data / pkt_data: where content
					 * and pcre look by default */
	bool has_b64;			/* a base64_decode came before */
	char var[IDS_MAX_VARS][32];	/* byte_extract names, in order */
	int nvars;
	bool has_sid;
	bool failed;			/* err holds the first problem */
	bool not_applicable;		/* err says why no TOE can see it */
	char err[IDS_ERRLEN];
};

/* ids_parse_base.c: lexical helpers */
void ids_lex_trim(const char **s, const char **e);
bool ids_lex_eq(const char *s, const char *e, const char *word);
int ids_lex_long(const char *s, const char *e, long min, long max, long *out);
bool ids_lex_ident(const char *s, const char *e, const char *extra);
int ids_lex_unquote(const char **s, const char **e, bool *neg, char *err);
void ids_rule_free(struct ids_rule *r);

/* ids_parse_rule.c: one rule line starting at its action word (diagnostics in p). */
void ids_parse_rule(struct ids_parse *p, const char *line, int lineno);

/* ids_parse_content.c: content/uricontent (into @buf), pcre, and modifiers */
int ids_opt_content(struct ids_rstate *st, const char *s, const char *e,
		    enum ids_buf buf);
int ids_opt_pcre(struct ids_rstate *st, const char *s, const char *e);
/* ids_parse_bytes.c: isdataat, byte_test, byte_jump, urilen (@name) */
int ids_opt_bytes(struct ids_rstate *st, const char *name, const char *s,
		  const char *e);
/* The byte_extract variable named [s, e), or IDS_NO_VAR. */
int ids_opt_var(const struct ids_rstate *st, const char *s, const char *e);
/* A zeroed element (no variables) appended to the rule, or NULL (st->err says why). */
struct ids_elem *ids_opt_new_elem(struct ids_rstate *st);
/* -1 when no content precedes option @name. */
int ids_opt_need_content(struct ids_rstate *st, const char *name);
/* offset, depth, distance, within (@name) of the last content. */
int ids_opt_modifier(struct ids_rstate *st, const char *name, const char *s,
		     const char *e);

#endif /* TOCHAIN_IDS_PARSE_PRIV_H */
