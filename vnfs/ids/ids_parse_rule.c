// SPDX-License-Identifier: MIT
/*
 * One Snort rule line: its header (action, protocol, addresses, ports,
 * direction; equal headers shared) and its "name[:value];" options (msg,
 * sid, rev, classtype, flow, flowbits and the ignored ones here; content,
 * pcre and their modifiers in ids_parse_content.c), then the checks that
 * need the whole rule.  A rule is kept whole or not at all.  Private to the
 * parser; see ids_parse_priv.h.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_parse_priv.h"

static int opt_flow(struct ids_rstate *st, const char *s, const char *e)
{
	const char *item = s;

	for (const char *c = s; c <= e; c++) {
		const char *is = item, *ie = c;
		enum ids_flowdir d = IDS_FLOW_ANY;

		if (c < e && *c != ',')
			continue;
		item = c + 1;
		ids_lex_trim(&is, &ie);
		if (ids_lex_eq(is, ie, "to_server") || ids_lex_eq(is, ie, "from_client"))
			d = IDS_FLOW_TO_SERVER;
		else if (ids_lex_eq(is, ie, "to_client") || ids_lex_eq(is, ie, "from_server"))
			d = IDS_FLOW_TO_CLIENT;
		else if (ids_lex_eq(is, ie, "only_stream") ||
			 ids_lex_eq(is, ie, "no_stream")) {
			/*
			 * A TOE's stream is reassembled, a datagram never is:
			 * the rule either always or never applies.
			 */
			bool udp = st->p->headers[st->r->header].proto ==
				IDS_PROTO_UDP;

			if ((is[0] == 'o') == udp) {
				snprintf(st->err, IDS_ERRLEN, "flow:%.*s never "
					 "applies: a TOE delivers %s", (int)(ie - is),
					 is, udp ? "datagrams, not reassembled" :
					 "reassembled streams, not packets");
				st->not_applicable = true;
				return -1;
			}
		} else if (!ids_lex_eq(is, ie, "established") &&
			 !ids_lex_eq(is, ie, "stateless")) {
			snprintf(st->err, IDS_ERRLEN,
				 "unsupported flow option '%.*s'",
				 (int)(ie - is > 40 ? 40 : ie - is), is);
			return -1;
		}
		if (d != IDS_FLOW_ANY) {
			if (st->r->flowdir != IDS_FLOW_ANY &&
			    st->r->flowdir != d) {
				snprintf(st->err, IDS_ERRLEN,
					 "conflicting flow directions");
				return -1;
			}
			st->r->flowdir = d;
		}
	}
	return 0;
}

/* detection_filter:track by_src|by_dst, count C, seconds S (any order). */
static int opt_dfilter(struct ids_rstate *st, const char *s, const char *e)
{
	bool track = false, count = false, secs = false;
	const char *item = s;

	for (const char *c = s; c <= e; c++) {
		const char *is = item, *ie = c, *v, *ke;
		long n;

		if (c < e && *c != ',')
			continue;
		item = c + 1;
		ids_lex_trim(&is, &ie);
		v = is;
		while (v < ie && !isspace((unsigned char)*v))
			v++;
		ke = v;		/* [is, ke) the key, [v, ie) its value */
		ids_lex_trim(&v, &ie);
		if (ids_lex_eq(is, ke, "track") &&
		    (ids_lex_eq(v, ie, "by_src") || ids_lex_eq(v, ie, "by_dst"))) {
			st->r->df.by_dst = v[3] == 'd';
			track = true;
		} else if ((ids_lex_eq(is, ke, "count") ||
			    ids_lex_eq(is, ke, "seconds")) &&
			   !ids_lex_long(v, ie, 1, 86400 * 365, &n)) {
			if (*is == 'c')
				st->r->df.count = (uint32_t)n, count = true;
			else
				st->r->df.seconds = (uint32_t)n, secs = true;
		} else {
			snprintf(st->err, IDS_ERRLEN, "bad detection_filter "
				 "'%.*s'", (int)(ie - is > 40 ? 40 : ie - is), is);
			return -1;
		}
	}
	if (!track || !count || !secs) {
		snprintf(st->err, IDS_ERRLEN, "detection_filter needs track, "
			 "count and seconds");
		return -1;
	}
	st->r->df.on = true;
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

static int opt_flowbits(struct ids_rstate *st, const char *s, const char *e)
{
	const char *comma;
	struct ids_fbop op;
	struct ids_fbop *nfb;

	ids_lex_trim(&s, &e);
	if (ids_lex_eq(s, e, "noalert")) {
		st->r->noalert = true;
		return 0;
	}
	comma = memchr(s, ',', (size_t)(e - s));
	if (!comma) {
		snprintf(st->err, IDS_ERRLEN, "unsupported flowbits '%.*s'",
			 (int)(e - s > 40 ? 40 : e - s), s);
		return -1;
	}
	{
		const char *os = s, *oe = comma;

		ids_lex_trim(&os, &oe);
		if (ids_lex_eq(os, oe, "set"))
			op.op = IDS_FB_SET;
		else if (ids_lex_eq(os, oe, "unset"))
			op.op = IDS_FB_UNSET;
		else if (ids_lex_eq(os, oe, "toggle"))
			op.op = IDS_FB_TOGGLE;
		else if (ids_lex_eq(os, oe, "isset"))
			op.op = IDS_FB_ISSET;
		else if (ids_lex_eq(os, oe, "isnotset"))
			op.op = IDS_FB_ISNOTSET;
		else {
			snprintf(st->err, IDS_ERRLEN,
				 "unsupported flowbits operation '%.*s'",
				 (int)(oe - os > 40 ? 40 : oe - os), os);
			return -1;
		}
	}
	s = comma + 1;
	ids_lex_trim(&s, &e);
	/* names joined by & (all) or | (any, tests only); no groups */
	{
		const char *sep = s + strcspn(s, "&|,");
		char opc = sep < e ? *sep : 0;
		size_t first = st->r->nfb;
		uint16_t n = 0;

		if (opc == ',' || (opc == '|' && op.op != IDS_FB_ISSET &&
				   op.op != IDS_FB_ISNOTSET)) {
			snprintf(st->err, IDS_ERRLEN, "unsupported flowbits "
				 "'%.*s' (%s)", (int)(e - s > 40 ? 40 : e - s),
				 s, opc == ',' ? "groups are not supported" :
				 "'|' only tests bits");
			return -1;
		}
		for (;;) {
			const char *ne = s;

			while (ne < e && *ne != opc)
				ne++;
			if (!opc)
				ne = e;
			{
				const char *ns = s, *nend = ne;

				ids_lex_trim(&ns, &nend);
				if (!ids_lex_ident(ns, nend, ".-_")) {
					snprintf(st->err, IDS_ERRLEN,
						 "bad flowbits name '%.*s'",
						 (int)(nend - ns > 40 ? 40 :
						       nend - ns), ns);
					return -1;
				}
				if (flowbit_index(st->p, ns, (size_t)(nend - ns),
						  &op.bit))
					goto oom;
			}
			nfb = realloc(st->r->fb, (st->r->nfb + 1) * sizeof(*nfb));
			if (!nfb)
				goto oom;
			st->r->fb = nfb;
			op.n = 1;
			op.any = false;
			nfb[st->r->nfb++] = op;
			n++;
			if (ne >= e)
				break;
			s = ne + 1;
		}
		st->r->fb[first].n = n;
		st->r->fb[first].any = opc == '|';
	}
	return 0;
oom:
	snprintf(st->err, IDS_ERRLEN, "out of memory");
	return -1;
}

static int opt_msg(struct ids_rstate *st, const char *s, const char *e)
{
	char *buf, *o;
	bool neg;

	if (ids_lex_unquote(&s, &e, &neg, st->err) || neg) {
		snprintf(st->err, IDS_ERRLEN, "msg must be a quoted string");
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
	snprintf(st->err, IDS_ERRLEN, "out of memory");
	return -1;
}

/* One "name[:value]" option; value is [s, e) or s == NULL. */
static int rule_option(struct ids_rstate *st, const char *name, const char *s,
		       const char *e)
{
	static const char *const ignored[] = { "metadata", "reference",
		"priority", "gid", "fast_pattern", "rawbytes", NULL };
	static const struct {
		const char *name;
		enum ids_buf buf;	/* IDS_BUF_RAW: nocase */
	} flagmods[] = {
		{ "nocase", IDS_BUF_RAW }, { "http_uri", IDS_BUF_URI },
		{ "http_header", IDS_BUF_HEADER },
		{ "http_method", IDS_BUF_METHOD },
		{ "http_client_body", IDS_BUF_BODY },
		{ "http_raw_uri", IDS_BUF_RAW_URI },
		{ "http_cookie", IDS_BUF_COOKIE },
		/* our header and cookie buffers are not normalised: the raw
		 * ones are the same bytes */
		{ "http_raw_header", IDS_BUF_HEADER },
		{ "http_raw_cookie", IDS_BUF_COOKIE },
		{ "http_stat_code", IDS_BUF_STAT_CODE },
		{ "http_stat_msg", IDS_BUF_STAT_MSG }, { NULL, IDS_BUF_RAW },
	};
	long v;

	for (int i = 0; flagmods[i].name; i++) {
		if (strcmp(name, flagmods[i].name))
			continue;
		if (ids_opt_need_content(st, name))
			return -1;
		if (s) {
			snprintf(st->err, IDS_ERRLEN, "'%s' takes no value", name);
			return -1;
		}
		if (i == 0) {
			st->last->nocase = true;
		} else {
			enum ids_buf b = flagmods[i].buf;

			if (st->last->buf != st->sticky &&
			    st->last->buf != b) {
				snprintf(st->err, IDS_ERRLEN,
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
			snprintf(st->err, IDS_ERRLEN, "'%s' needs a value", name);
			return -1;
		}
		return ids_opt_modifier(st, name, s, e);
	}
	if (!strcmp(name, "base64_data")) {
		if (s || !st->has_b64) {
			snprintf(st->err, IDS_ERRLEN, s ? "'base64_data' takes no "
				 "value" : "base64_data without base64_decode");
			return -1;
		}
		st->sticky = IDS_BUF_B64;
		return 0;
	}
	if (!strcmp(name, "base64_decode"))
		return ids_opt_bytes(st, name, s, e);
	if (!strcmp(name, "file_data") || !strcmp(name, "pkt_data")) {
		if (s) {
			snprintf(st->err, IDS_ERRLEN, "unsupported %s '%.*s'",
				 name, (int)(e - s > 16 ? 16 : e - s), s);
			return -1;
		}
		st->sticky = name[0] == 'f' ? IDS_BUF_FILE_DATA : IDS_BUF_RAW;
		return 0;
	}
	if (!s && strcmp(name, "flowbits")) {
		snprintf(st->err, IDS_ERRLEN, "'%s' needs a value", name);
		if (!strcmp(name, "msg") || !strcmp(name, "sid") ||
		    !strcmp(name, "rev") || !strcmp(name, "classtype") ||
		    !strcmp(name, "content") || !strcmp(name, "uricontent") ||
		    !strcmp(name, "pcre") || !strcmp(name, "flow"))
			return -1;
		snprintf(st->err, IDS_ERRLEN, "unsupported option '%s'", name);
		return -1;
	}
	if (!strcmp(name, "msg"))
		return opt_msg(st, s, e);
	if (!strcmp(name, "sid") || !strcmp(name, "rev")) {
		if (ids_lex_long(s, e, name[0] == 's' ? 1 : 0, UINT32_MAX >> 1,
			       &v)) {
			snprintf(st->err, IDS_ERRLEN, "bad %s", name);
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
		ids_lex_trim(&s, &e);
		if (!ids_lex_ident(s, e, "-")) {
			snprintf(st->err, IDS_ERRLEN, "bad classtype");
			return -1;
		}
		st->r->info.classtype = ids_intern(st->p, s, (size_t)(e - s));
		if (!st->r->info.classtype) {
			snprintf(st->err, IDS_ERRLEN, "out of memory");
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "content"))
		return ids_opt_content(st, s, e, st->sticky);
	if (!strcmp(name, "uricontent"))
		return ids_opt_content(st, s, e, IDS_BUF_URI);
	if (!strcmp(name, "pcre"))
		return ids_opt_pcre(st, s, e);
	if (!strcmp(name, "flow"))
		return opt_flow(st, s, e);
	if (!strcmp(name, "detection_filter"))
		return opt_dfilter(st, s, e);
	if (!strcmp(name, "isdataat") || !strcmp(name, "byte_test") ||
	    !strcmp(name, "byte_jump") || !strcmp(name, "urilen") ||
	    !strcmp(name, "byte_extract"))
		return ids_opt_bytes(st, name, s, e);
	if (!strcmp(name, "dsize") &&
	    st->p->headers[st->r->header].proto == IDS_PROTO_UDP)
		return ids_opt_bytes(st, name, s, e);
	if (!strcmp(name, "flowbits")) {
		if (!s) {
			snprintf(st->err, IDS_ERRLEN, "'flowbits' needs a value");
			return -1;
		}
		return opt_flowbits(st, s, e);
	}
	snprintf(st->err, IDS_ERRLEN, "unsupported option '%s'", name);
	return -1;
}

/* Checks that need the whole rule, and derived fields. */
static int rule_finish(struct ids_rstate *st)
{
	struct ids_rule *r = st->r;
	if (!st->has_sid) {
		snprintf(st->err, IDS_ERRLEN, "missing sid");
		return -1;
	}
	r->cls = IDS_CLASS_RAW;
	for (size_t i = 0; i < r->nelems; i++) {
		struct ids_elem *el = &r->elems[i];

		if (el->kind == IDS_ELEM_CONTENT) {
			if (el->has_depth && el->var_depth == IDS_NO_VAR &&
			    (size_t)el->depth < el->len) {
				snprintf(st->err, IDS_ERRLEN,
					 "depth %d shorter than content",
					 el->depth);
				return -1;
			}
			if (el->has_within && el->var_within == IDS_NO_VAR &&
			    (size_t)el->within < el->len) {
				snprintf(st->err, IDS_ERRLEN,
					 "within %d shorter than content",
					 el->within);
				return -1;
			}
			if (el->nocase) {
				el->lpat = malloc(el->len);
				if (!el->lpat) {
					snprintf(st->err, IDS_ERRLEN,
						 "out of memory");
					return -1;
				}
				for (size_t k = 0; k < el->len; k++)
					el->lpat[k] = (uint8_t)tolower(
						el->pat[k]);
			}
		}
		/* on a response rule, http_header is the response's */
		if (r->flowdir == IDS_FLOW_TO_CLIENT &&
		    el->buf == IDS_BUF_HEADER)
			el->buf = IDS_BUF_RESP_HEADER;
		/* the body event sees the head too: the later class wins */
		if (ids_buf_class(el->buf) > r->cls)
			r->cls = ids_buf_class(el->buf);
	}
	if (st->p->headers[r->header].proto == IDS_PROTO_UDP) {
		if (r->cls != IDS_CLASS_RAW) {
			snprintf(st->err, IDS_ERRLEN, "http buffers on a udp rule");
			return -1;
		}
		if (r->nfb) {
			snprintf(st->err, IDS_ERRLEN, "unsupported flowbits on a "
				 "udp rule (datagrams are inspected one by one)");
			return -1;
		}
	}
	for (size_t i = 0; i < r->nelems; i++) {
		enum ids_class c = ids_buf_class(r->elems[i].buf);
		bool resp = c >= IDS_CLASS_RESP_HDR;

		if (c == IDS_CLASS_RAW)
			continue;
		if (resp && r->flowdir != IDS_FLOW_TO_CLIENT) {
			snprintf(st->err, IDS_ERRLEN, "response buffers "
				 "(file_data, http_stat_*) need flow:to_client");
			return -1;
		}
		if (!resp && r->flowdir == IDS_FLOW_TO_CLIENT) {
			snprintf(st->err, IDS_ERRLEN, "http buffers other than "
				 "http_header are request buffers: not with "
				 "to_client");
			return -1;
		}
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
			/* isdataat and byte_test leave the cursor alone */
			if (!n->negated && (n->kind != IDS_ELEM_BYTES ||
					    n->b.op == IDS_BOP_JUMP))
				break;
		}
	}
	if (!r->info.msg)
		r->info.msg = "";
	if (!r->info.classtype)
		r->info.classtype = "";
	return 0;
}

/*
 * Options about IP, TCP or ICMP headers: the VNFs see the payload a TOE
 * delivers, never a packet header, so such a rule can never apply.  True
 * (and the reason in st->err) for one of them.
 */
static bool na_option(struct ids_rstate *st, const char *name)
{
	static const char *const hdr[] = {
		"ttl", "tos", "id", "ipopts", "fragbits", "fragoffset",
		"ip_proto", "sameip", "flags", "seq", "ack", "window",
		"itype", "icode", "icmp_id", "icmp_seq", NULL,
	};

	/*
	 * A TCP segment's size does not survive the TOE: the VNF sees a byte
	 * stream cut wherever the TOE's buffers were.
	 */
	if (!strcmp(name, "dsize") &&
	    st->p->headers[st->r->header].proto == IDS_PROTO_TCP) {
		snprintf(st->err, IDS_ERRLEN, "'dsize' tests the size of a TCP "
			 "segment, a TOE delivers a byte stream");
		st->not_applicable = true;
		return true;
	}
	for (int i = 0; hdr[i]; i++) {
		if (!strcmp(name, hdr[i])) {
			snprintf(st->err, IDS_ERRLEN, "'%s' tests packet "
				 "headers, a TOE delivers payload only", name);
			st->not_applicable = true;
			return true;
		}
	}
	return false;
}

/* Scans "name[:value];" options between '(' and ')'. */
static int rule_options(struct ids_rstate *st, const char *s, const char *e)
{
	for (;;) {
		const char *ns, *ne, *vs = NULL, *ve = NULL;
		char name[32];

		while (s < e && isspace((unsigned char)*s))
			s++;
		if (s == e) {
			snprintf(st->err, IDS_ERRLEN, "missing ')'");
			return -1;
		}
		if (*s == ')') {
			for (s++; s < e; s++) {
				if (!isspace((unsigned char)*s)) {
					snprintf(st->err, IDS_ERRLEN,
						 "text after ')'");
					return -1;
				}
			}
			return st->failed ? -1 : rule_finish(st);
		}
		ns = s;
		while (s < e && (isalnum((unsigned char)*s) || *s == '_'))
			s++;
		ne = s;
		while (s < e && isspace((unsigned char)*s))
			s++;
		if (ns == ne || (size_t)(ne - ns) >= sizeof(name) ||
		    s == e || (*s != ':' && *s != ';')) {
			snprintf(st->err, IDS_ERRLEN, "malformed option near '%.20s'",
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
				snprintf(st->err, IDS_ERRLEN, inq ?
					 "unterminated quote in '%s'" :
					 "missing ';' after '%s'", name);
				return -1;
			}
			ve = s;
		}
		s++;	/* the ';' */
		/*
		 * After the first problem, keep reading names only: a rule
		 * that cannot apply anyway is reported as such.
		 */
		if (na_option(st, name))
			return -1;
		if (!st->failed && rule_option(st, name, vs, ve))
			st->failed = true;
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
	} else if (!strcmp(tok[1], "udp")) {
		h.proto = IDS_PROTO_UDP;
	} else {
		snprintf(err, IDS_ERRLEN, "unsupported protocol '%.20s'", tok[1]);
		if (!strcmp(tok[1], "icmp"))
			snprintf(err, IDS_ERRLEN, "protocol 'icmp' (TOEs "
				 "carry TCP and UDP payload)");
		goto out_key;
	}
	if (!strcmp(tok[4], "->")) {
		h.bidir = false;
	} else if (!strcmp(tok[4], "<>")) {
		h.bidir = true;
	} else {
		snprintf(err, IDS_ERRLEN, "bad direction '%.20s'", tok[4]);
		goto out_key;
	}
	if (ids_addrset_parse(p, tok[2], &h.src, err, IDS_ERRLEN))
		goto out_key;
	if (ids_portset_parse(p, tok[3], &h.sp, err, IDS_ERRLEN))
		goto out_src;
	if (ids_addrset_parse(p, tok[5], &h.dst, err, IDS_ERRLEN))
		goto out_sp;
	if (ids_portset_parse(p, tok[6], &h.dp, err, IDS_ERRLEN))
		goto out_dst;
	nh = realloc(p->headers, (p->nheaders + 1) * sizeof(*nh));
	if (!nh) {
		snprintf(err, IDS_ERRLEN, "out of memory");
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
	snprintf(err, IDS_ERRLEN, "out of memory");
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

void ids_parse_rule(struct ids_parse *p, const char *line, int lineno)
{
	struct ids_rule r = { 0 };
	struct ids_rstate st = { .p = p, .r = &r };
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
	if (add_header(p, tok, &r.header, st.err)) {
		st.not_applicable = !strcmp(tok[1], "icmp");
		goto out_diag;
	}
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
	if (st.not_applicable)
		ids_diag_na(p->diags, p->file, lineno, "%s", st.err);
	else
		ids_diag(p->diags, p->file, lineno, "%s", st.err);
out_rule:
	ids_rule_free(&r);
out_head:
	free(head);
}
