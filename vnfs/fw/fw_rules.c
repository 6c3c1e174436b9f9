// SPDX-License-Identifier: MIT
/*
 * fw_rules.c - parser of the firewall rule file (syntax: vnfs/fw/README.md).
 *
 * Trust: the file is untrusted text.  Every line is length-checked before it
 * is copied, every byte is checked to be printable ASCII, every number is
 * range-checked, and any error refuses the whole file: the caller gets NULL
 * and a "NAME:LINE: reason" diagnostic, never a partial ruleset.
 *
 * Threading: parsing touches only its own allocations; no global state.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fw_rules_priv.h"

#define MAX_TOKENS	64

struct token {
	const char *s;
	bool quoted;
};

struct parser {
	struct fw_ruleset *rs;
	const char *name;
	unsigned int line;
	struct fw_diag *diag;
};

/* Clause bits, to refuse a clause given twice in one rule. */
enum {
	CL_PROTO = 1 << 0,
	CL_FAMILY = 1 << 1,
	CL_FROM = 1 << 2,
	CL_TO = 1 << 3,
	CL_SPORT = 1 << 4,
	CL_DPORT = 1 << 5,
	CL_CT = 1 << 6,
	CL_FLAGS = 1 << 7,
	CL_COMMENT = 1 << 8,
};

/* @name for a diagnostic: its last 96 bytes, the informative end of a path. */
static const char *short_name(const char *name, const char **ellipsis)
{
	size_t len = strlen(name);

	*ellipsis = len > 96 ? "..." : "";
	return len > 96 ? name + len - 96 : name;
}

__attribute__((format(printf, 2, 3)))
static int fail(struct parser *p, const char *fmt, ...)
{
	const char *name, *dots;
	char reason[200];
	va_list ap;

	if (!p->diag)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	p->diag->line = p->line;
	name = short_name(p->name, &dots);
	snprintf(p->diag->msg, sizeof(p->diag->msg), "%s%s:%u: %s",
		 dots, name, p->line, reason);
	return -EINVAL;
}

static void diag_plain(struct fw_diag *diag, const char *name, const char *reason)
{
	const char *dots;

	if (!diag)
		return;
	diag->line = 0;
	name = short_name(name, &dots);
	snprintf(diag->msg, sizeof(diag->msg), "%s%s: %s", dots, name, reason);
}

const char *fw_verdict_name(enum fw_verdict v)
{
	switch (v) {
	case FW_ACCEPT:
		return "accept";
	case FW_DROP:
		return "drop";
	case FW_REJECT:
		return "reject";
	}
	return "?";
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, (size_t)ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* Splits @l in place into tokens; a '#' at the start of a word starts a
 * comment; "..." is one quoted token (no escapes). */
static int tokenize(struct parser *p, char *l, struct token *tok, int *ntok)
{
	int n = 0;
	char *s = l;

	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s || *s == '#')
			break;
		if (n == MAX_TOKENS)
			return fail(p, "too many words (limit %d)", MAX_TOKENS);
		if (*s == '"') {
			char *end = strchr(s + 1, '"');

			if (!end)
				return fail(p, "unterminated string");
			*end = '\0';
			tok[n].s = s + 1;
			tok[n].quoted = true;
			n++;
			s = end + 1;
			if (*s && *s != ' ' && *s != '\t' && *s != '\r')
				return fail(p, "junk after closing '\"'");
			continue;
		}
		tok[n].s = s;
		tok[n].quoted = false;
		n++;
		while (*s && *s != ' ' && *s != '\t' && *s != '\r') {
			if (*s == '"')
				return fail(p, "unexpected '\"' inside a word");
			s++;
		}
		if (*s)
			*s++ = '\0';
	}
	*ntok = n;
	return 0;
}

static int parse_dir(const char *s)
{
	if (!strcmp(s, "in") || !strcmp(s, "input"))
		return FW_DIR_IN;
	if (!strcmp(s, "out") || !strcmp(s, "output"))
		return FW_DIR_OUT;
	return -1;
}

/* Decimal digits only, at most @max; returns -1 when not a number. */
static long parse_num(const char *s, size_t len, long max)
{
	long v = 0;
	size_t i;

	if (len == 0 || len > 6)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v <= max ? v : -2;
}

/* Splits @arg at commas into @elems (pointers into @buf). */
static int split_set(struct parser *p, const char *kw, const char *arg,
		     char *buf, size_t bufsz, char **elems, int *n)
{
	char *s, *comma;
	int k = 0;

	if (strlen(arg) >= bufsz)
		return fail(p, "argument of '%s' too long", kw);
	strcpy(buf, arg);
	s = buf;
	for (;;) {
		comma = strchr(s, ',');
		if (comma)
			*comma = '\0';
		if (!*s)
			return fail(p, "empty element in '%s' list", kw);
		if (k == FW_MAX_SET)
			return fail(p, "too many elements after '%s' (limit %d)",
				    kw, FW_MAX_SET);
		elems[k++] = s;
		if (!comma)
			break;
		s = comma + 1;
	}
	*n = k;
	return 0;
}

static void prefix_fill(struct fw_prefix *px, const uint8_t *addr, int plen)
{
	uint8_t m[16] = { 0 };
	int i;

	for (i = 0; i < 16; i++) {
		int bits = plen - 8 * i;

		if (bits >= 8)
			m[i] = 0xff;
		else if (bits > 0)
			m[i] = (uint8_t)(0xff << (8 - bits));
	}
	for (i = 0; i < 16; i++)
		px->addr[i] = addr[i] & m[i];
	px->plen = (uint8_t)plen;
	memcpy(px->net, px->addr, 16);
	memcpy(px->mask, m, 16);
}

static bool prefix_contains(const struct fw_prefix *outer,
			    const struct fw_prefix *inner)
{
	return outer->plen <= inner->plen &&
	       (inner->net[0] & outer->mask[0]) == outer->net[0] &&
	       (inner->net[1] & outer->mask[1]) == outer->net[1];
}

static int prefix_cmp(const void *a, const void *b)
{
	const struct fw_prefix *x = a, *y = b;
	int c = memcmp(x->addr, y->addr, 16);

	return c ? c : (int)x->plen - (int)y->plen;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fw_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi > y->hi) - (x->hi < y->hi);
}

static int parse_addrset(struct parser *p, const char *kw, const char *arg,
			 struct fw_set *set, uint8_t *family)
{
	char buf[FW_MAX_LINE + 1], *elems[FW_MAX_SET];
	struct fw_prefix px[FW_MAX_SET];
	bool drop[FW_MAX_SET] = { false };
	int n, i, j, k, rc, fam = 0;

	set->neg = arg[0] == '!';
	if (set->neg)
		arg++;
	rc = split_set(p, kw, arg, buf, sizeof(buf), elems, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		char *slash = strchr(elems[i], '/');
		uint8_t addr[16] = { 0 };
		int efam, maxlen;
		long plen;

		if (slash)
			*slash = '\0';
		efam = strchr(elems[i], ':') ? 6 : 4;
		maxlen = efam == 4 ? 32 : 128;
		if (inet_pton(efam == 4 ? AF_INET : AF_INET6, elems[i], addr) != 1)
			return fail(p, "bad IPv%d address '%.48s' after '%s'",
				    efam, elems[i], kw);
		if (fam && fam != efam)
			return fail(p, "'%s' mixes IPv4 and IPv6 addresses", kw);
		fam = efam;
		plen = maxlen;
		if (slash) {
			plen = parse_num(slash + 1, strlen(slash + 1), maxlen);
			if (plen < 0)
				return fail(p, "bad prefix length '/%.16s' for IPv%d (0-%d)",
					    slash + 1, efam, maxlen);
		}
		prefix_fill(&px[i], addr, (int)plen);
		if (memcmp(px[i].addr, addr, 16)) {
			char good[INET6_ADDRSTRLEN];

			inet_ntop(efam == 4 ? AF_INET : AF_INET6, px[i].addr,
				  good, sizeof(good));
			return fail(p, "host bits set in '%.48s/%ld' (network is %s/%ld)",
				    elems[i], plen, good, plen);
		}
	}
	/* Canonical form: sorted, without duplicates or covered prefixes. */
	qsort(px, n, sizeof(px[0]), prefix_cmp);
	for (j = 0; j < n; j++)
		for (i = 0; i < n && !drop[j]; i++)
			if (i != j && !drop[i] && prefix_contains(&px[i], &px[j]) &&
			    (px[i].plen < px[j].plen || i < j))
				drop[j] = true;
	if (grow((void **)&p->rs->prefixes, &p->rs->cap_prefixes,
		 p->rs->n_prefixes + n, sizeof(px[0])))
		return -ENOMEM;
	set->off = p->rs->n_prefixes;
	for (k = 0, i = 0; i < n; i++)
		if (!drop[i])
			p->rs->prefixes[set->off + k++] = px[i];
	set->n = (uint16_t)k;
	p->rs->n_prefixes += k;
	*family = (uint8_t)fam;
	return 0;
}

static int parse_portset(struct parser *p, const char *kw, const char *arg,
			 struct fw_set *set)
{
	char buf[FW_MAX_LINE + 1], *elems[FW_MAX_SET];
	struct fw_range r[FW_MAX_SET];
	int n, i, k, rc;

	set->neg = arg[0] == '!';
	if (set->neg)
		arg++;
	rc = split_set(p, kw, arg, buf, sizeof(buf), elems, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		char *dash = strchr(elems[i], '-');
		size_t l1 = dash ? (size_t)(dash - elems[i]) : strlen(elems[i]);
		long lo, hi;

		lo = parse_num(elems[i], l1, 65535);
		hi = dash ? parse_num(dash + 1, strlen(dash + 1), 65535) : lo;
		if (lo == -2 || hi == -2)
			return fail(p, "port '%.32s' out of range (0-65535)", elems[i]);
		if (lo < 0 || hi < 0)
			return fail(p, "bad port '%.32s' after '%s'", elems[i], kw);
		if (lo > hi)
			return fail(p, "empty port range '%.32s'", elems[i]);
		r[i].lo = (uint16_t)lo;
		r[i].hi = (uint16_t)hi;
	}
	/* Canonical form: sorted, overlapping and adjacent ranges merged. */
	qsort(r, n, sizeof(r[0]), range_cmp);
	for (k = 0, i = 1; i < n; i++) {
		if ((long)r[i].lo <= (long)r[k].hi + 1) {
			if (r[i].hi > r[k].hi)
				r[k].hi = r[i].hi;
		} else {
			r[++k] = r[i];
		}
	}
	k++;
	if (grow((void **)&p->rs->ranges, &p->rs->cap_ranges,
		 p->rs->n_ranges + k, sizeof(r[0])))
		return -ENOMEM;
	set->off = p->rs->n_ranges;
	set->n = (uint16_t)k;
	memcpy(p->rs->ranges + set->off, r, k * sizeof(r[0]));
	p->rs->n_ranges += k;
	return 0;
}

static const char *const ct_names[FW_CT_COUNT] = {
	[FW_CT_NEW] = "new",
	[FW_CT_ESTABLISHED] = "established",
	[FW_CT_RELATED] = "related",
	[FW_CT_INVALID] = "invalid",
};

static int parse_ct(struct parser *p, const char *arg, struct fw_rule *r)
{
	char buf[FW_MAX_LINE + 1], *elems[FW_MAX_SET];
	int n, i, s, rc;

	r->ct_neg = arg[0] == '!';
	if (r->ct_neg)
		arg++;
	rc = split_set(p, "ct", arg, buf, sizeof(buf), elems, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		for (s = 0; s < FW_CT_COUNT; s++)
			if (!strcmp(elems[i], ct_names[s]))
				break;
		if (s == FW_CT_COUNT)
			return fail(p, "unknown ct state '%.32s' (new, established, related, invalid)",
				    elems[i]);
		r->ct_states |= 1u << s;
	}
	r->ct_match = r->ct_neg ? (FW_CT_ALL & ~r->ct_states) : r->ct_states;
	if (!r->ct_match)
		return fail(p, "'ct !%.64s' matches no state", arg);
	return 0;
}

static const char *const flag_names[8] = {
	"fin", "syn", "rst", "psh", "ack", "urg", "ecn", "cwr",
};

static int parse_flags(struct parser *p, const char *arg, struct fw_rule *r)
{
	char buf[FW_MAX_LINE + 1], *elems[FW_MAX_SET];
	uint8_t set = 0, clear = 0;
	int n, i, b, rc;

	rc = split_set(p, "flags", arg, buf, sizeof(buf), elems, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		bool neg = elems[i][0] == '!';
		const char *name = elems[i] + neg;

		for (b = 0; b < 8; b++)
			if (!strcmp(name, flag_names[b]))
				break;
		if (b == 8)
			return fail(p, "unknown TCP flag '%.32s' (fin syn rst psh ack urg ecn cwr)",
				    name);
		if (neg)
			clear |= 1u << b;
		else
			set |= 1u << b;
	}
	if (set & clear)
		return fail(p, "TCP flag both required and forbidden in '%.64s'", arg);
	r->flags_mask = set | clear;
	r->flags_val = set;
	return 0;
}

static int parse_proto(struct parser *p, const char *s, struct fw_rule *r)
{
	static const struct {
		const char *name;
		uint8_t num;
	} names[] = {
		{ "tcp", 6 }, { "udp", 17 }, { "icmp", 1 }, { "icmpv6", 58 },
	};
	size_t i;
	long v;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name)) {
			r->proto = names[i].num;
			r->has_proto = true;
			return 0;
		}
	v = parse_num(s, strlen(s), 255);
	if (v < 0)
		return fail(p, "bad protocol '%.32s' (tcp, udp, icmp, icmpv6 or 0-255)", s);
	r->proto = (uint8_t)v;
	r->has_proto = true;
	return 0;
}

static int add_rule(struct parser *p, int dir, const struct fw_rule *r)
{
	struct fw_chain *c = &p->rs->chain[dir];

	if (p->rs->n_rules == FW_MAX_RULES)
		return fail(p, "too many rules (limit %d)", FW_MAX_RULES);
	if (grow((void **)&c->rules, &c->cap, c->n + 1, sizeof(*r)))
		return -ENOMEM;
	c->rules[c->n++] = *r;
	p->rs->n_rules++;
	return 0;
}

static int parse_rule(struct parser *p, const struct token *tok, int ntok,
		      uint8_t action)
{
	struct fw_rule r;
	unsigned int seen = 0;
	uint8_t fam_explicit = 0, fam_from = 0, fam_to = 0;
	int dir, i, rc;

	memset(&r, 0, sizeof(r));
	r.action = action;
	r.line = p->line;
	r.number = p->rs->n_rules + 1;
	r.ct_match = FW_CT_ALL;
	if (ntok < 2 || tok[1].quoted || (dir = parse_dir(tok[1].s)) < 0)
		return fail(p, "'%s' needs a direction: in or out", tok[0].s);

	for (i = 2; i < ntok; i++) {
		const char *kw = tok[i].s, *arg;
		unsigned int bit;

		if (tok[i].quoted)
			return fail(p, "unexpected string \"%.32s\" (comment \"...\"?)", kw);
		if (!strcmp(kw, "tcp") || !strcmp(kw, "udp") || !strcmp(kw, "icmp") ||
		    !strcmp(kw, "icmpv6") || !strcmp(kw, "proto"))
			bit = CL_PROTO;
		else if (!strcmp(kw, "ip4") || !strcmp(kw, "ip6"))
			bit = CL_FAMILY;
		else if (!strcmp(kw, "from"))
			bit = CL_FROM;
		else if (!strcmp(kw, "to"))
			bit = CL_TO;
		else if (!strcmp(kw, "sport"))
			bit = CL_SPORT;
		else if (!strcmp(kw, "dport"))
			bit = CL_DPORT;
		else if (!strcmp(kw, "ct"))
			bit = CL_CT;
		else if (!strcmp(kw, "flags"))
			bit = CL_FLAGS;
		else if (!strcmp(kw, "comment"))
			bit = CL_COMMENT;
		else
			return fail(p, "unknown keyword '%.40s'", kw);
		if (seen & bit)
			return fail(p, "'%s' given twice (or two protocols/families)", kw);
		seen |= bit;

		if (bit == CL_FAMILY) {
			fam_explicit = kw[2] == '4' ? 4 : 6;
			continue;
		}
		if (bit == CL_PROTO && strcmp(kw, "proto")) {
			rc = parse_proto(p, kw, &r);
			if (rc)
				return rc;
			continue;
		}
		/* Every other keyword takes one argument. */
		if (i + 1 >= ntok)
			return fail(p, "'%s' needs an argument", kw);
		arg = tok[++i].s;
		if (bit == CL_COMMENT) {
			size_t len = strlen(arg);

			if (!tok[i].quoted)
				return fail(p, "comment must be in double quotes");
			if (len == 0)
				return fail(p, "empty comment");
			if (len > FW_MAX_COMMENT)
				return fail(p, "comment longer than %d bytes", FW_MAX_COMMENT);
			if (strchr(arg, '\\'))
				return fail(p, "comment may not contain '\\'");
			memcpy(r.comment, arg, len + 1);
			continue;
		}
		if (tok[i].quoted)
			return fail(p, "'%s' does not take a quoted string", kw);
		switch (bit) {
		case CL_PROTO:
			rc = parse_proto(p, arg, &r);
			break;
		case CL_FROM:
			rc = parse_addrset(p, kw, arg, &r.src, &fam_from);
			break;
		case CL_TO:
			rc = parse_addrset(p, kw, arg, &r.dst, &fam_to);
			break;
		case CL_SPORT:
			rc = parse_portset(p, kw, arg, &r.sport);
			break;
		case CL_DPORT:
			rc = parse_portset(p, kw, arg, &r.dport);
			break;
		case CL_CT:
			rc = parse_ct(p, arg, &r);
			break;
		default:
			rc = parse_flags(p, arg, &r);
			break;
		}
		if (rc)
			return rc;
	}

	if ((seen & (CL_SPORT | CL_DPORT)) && !(r.has_proto && (r.proto == 6 || r.proto == 17)))
		return fail(p, "'%s' needs protocol tcp or udp",
			    seen & CL_SPORT ? "sport" : "dport");
	if ((seen & CL_FLAGS) && !(r.has_proto && r.proto == 6))
		return fail(p, "'flags' needs protocol tcp");
	if (fam_from && fam_to && fam_from != fam_to)
		return fail(p, "'from' is IPv%d but 'to' is IPv%d", fam_from, fam_to);
	r.family = fam_from ? fam_from : fam_to;
	if (fam_explicit && r.family && fam_explicit != r.family)
		return fail(p, "'ip%d' contradicts the IPv%d addresses", fam_explicit, r.family);
	if (fam_explicit)
		r.family = fam_explicit;
	return add_rule(p, dir, &r);
}

static int parse_policy(struct parser *p, const struct token *tok, int ntok)
{
	struct fw_chain *c;
	int dir;

	if (ntok != 3 || tok[1].quoted || tok[2].quoted)
		return fail(p, "usage: policy in|out accept|drop");
	dir = parse_dir(tok[1].s);
	if (dir < 0)
		return fail(p, "unknown direction '%.32s' (in or out)", tok[1].s);
	c = &p->rs->chain[dir];
	if (c->policy_set)
		return fail(p, "policy for '%s' given twice", tok[1].s);
	if (!strcmp(tok[2].s, "accept"))
		c->policy = FW_ACCEPT;
	else if (!strcmp(tok[2].s, "drop"))
		c->policy = FW_DROP;
	else
		return fail(p, "policy must be accept or drop, not '%.32s'", tok[2].s);
	c->policy_set = true;
	return 0;
}

static int parse_line(struct parser *p, char *l)
{
	struct token tok[MAX_TOKENS];
	int ntok = 0, rc;

	rc = tokenize(p, l, tok, &ntok);
	if (rc || ntok == 0)
		return rc;
	if (tok[0].quoted)
		return fail(p, "line starts with a string");
	if (!strcmp(tok[0].s, "policy"))
		return parse_policy(p, tok, ntok);
	if (!strcmp(tok[0].s, "accept"))
		return parse_rule(p, tok, ntok, FW_ACCEPT);
	if (!strcmp(tok[0].s, "drop"))
		return parse_rule(p, tok, ntok, FW_DROP);
	if (!strcmp(tok[0].s, "reject"))
		return parse_rule(p, tok, ntok, FW_REJECT);
	return fail(p, "unknown keyword '%.40s' (policy, accept, drop, reject)", tok[0].s);
}

void fw_ruleset_destroy(struct fw_ruleset *rs)
{
	int d;

	if (!rs)
		return;
	for (d = 0; d < FW_DIR_COUNT; d++)
		free(rs->chain[d].rules);
	free(rs->prefixes);
	free(rs->ranges);
	free(rs);
}

struct fw_ruleset *fw_ruleset_parse(const char *buf, size_t len,
				    const char *name, struct fw_diag *diag)
{
	struct parser p = { .name = name ? name : "<rules>", .diag = diag };
	char l[FW_MAX_LINE + 1];
	size_t pos = 0;
	int rc = 0;

	if (diag) {
		diag->msg[0] = '\0';
		diag->line = 0;
	}
	if (len > FW_MAX_FILE_BYTES) {
		diag_plain(diag, p.name, "file too large");
		errno = EFBIG;
		return NULL;
	}
	p.rs = calloc(1, sizeof(*p.rs));
	if (!p.rs)
		goto out_nomem;

	while (pos < len && !rc) {
		const char *start = buf + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - start) : len - pos, i;

		p.line++;
		pos += ll + 1;
		if (ll > FW_MAX_LINE) {
			rc = fail(&p, "line too long (%zu bytes, limit %d)", ll, FW_MAX_LINE);
			break;
		}
		for (i = 0; i < ll; i++) {
			unsigned char c = (unsigned char)start[i];

			if (c == 0) {
				rc = fail(&p, "binary data (NUL byte) at column %zu", i + 1);
				break;
			}
			if ((c < 0x20 && c != '\t' && c != '\r') || c >= 0x7f) {
				rc = fail(&p, "invalid byte 0x%02x at column %zu", c, i + 1);
				break;
			}
		}
		if (rc)
			break;
		memcpy(l, start, ll);
		l[ll] = '\0';
		rc = parse_line(&p, l);
	}
	if (rc == -ENOMEM)
		goto out_nomem;
	if (rc) {
		fw_ruleset_destroy(p.rs);
		errno = -rc;
		return NULL;
	}
	return p.rs;

out_nomem:
	fw_ruleset_destroy(p.rs);
	diag_plain(diag, p.name, "out of memory");
	errno = ENOMEM;
	return NULL;
}

struct fw_ruleset *fw_ruleset_load(const char *path, struct fw_diag *diag)
{
	struct fw_ruleset *rs = NULL;
	size_t len = 0, cap = 4096;
	char *buf;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		goto out_err;
	}
	buf = malloc(cap);
	if (!buf) {
		err = ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (cap > FW_MAX_FILE_BYTES) {
				err = EFBIG;
				goto out_free;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				err = ENOMEM;
				goto out_free;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			goto out_free;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	rs = fw_ruleset_parse(buf, len, path, diag);
	err = errno;
	free(buf);
	close(fd);
	errno = err;
	return rs;

out_free:
	free(buf);
out_close:
	close(fd);
out_err:
	if (err == EFBIG) {
		diag_plain(diag, path, "file too large");
	} else {
		char ebuf[128];

		diag_plain(diag, path, strerror_r(err, ebuf, sizeof(ebuf)));
	}
	errno = err;
	return NULL;
}

unsigned int fw_ruleset_count(const struct fw_ruleset *rs)
{
	return rs->n_rules;
}

unsigned int fw_ruleset_policies(const struct fw_ruleset *rs)
{
	unsigned int n = 0;

	for (int d = 0; d < FW_DIR_COUNT; d++)
		n += rs->chain[d].policy_set;
	return n;
}

enum fw_verdict fw_ruleset_policy(const struct fw_ruleset *rs, enum fw_dir dir)
{
	return (enum fw_verdict)rs->chain[dir].policy;
}
