/* SPDX-License-Identifier: MIT */
/*
 * Private to vnfs/ids: the compiled form of rules and rulesets, shared by the
 * parser, the compiler, the matcher and the flow code.  Not an API.
 */
#ifndef TOCHAIN_IDS_INT_H
#define TOCHAIN_IDS_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <hs.h>

#include "ids.h"

/* Inspection buffers. */
enum ids_buf {
	IDS_BUF_RAW,
	IDS_BUF_URI,		/* percent-decoded request target */
	IDS_BUF_HEADER,		/* request header lines, "Name: value\r\n" */
	IDS_BUF_METHOD,
	IDS_BUF_RAW_URI,	/* request target as sent */
	IDS_BUF_COOKIE,		/* Cookie header values, CRLF-joined */
	IDS_BUF_BODY,		/* request body, first IDS_HTTP_BODY_MAX bytes */
	/* response buffers (flow:to_client rules), ids_http.c */
	IDS_BUF_RESP_HEADER,	/* response header lines (http_header) */
	IDS_BUF_STAT_CODE,	/* "200" */
	IDS_BUF_STAT_MSG,	/* "OK" */
	IDS_BUF_FILE_DATA,	/* response body: de-chunked, gunzipped */
	IDS_BUF_B64,		/* base64_data: what base64_decode decoded,
				 * during one check only; never a trigger */
	IDS_BUF_COUNT,
};

#define IDS_HTTP_FILE_MAX	65536	/* file_data bytes kept per response */
#define IDS_B64_MAX		4096	/* base64_decode output kept per check */

#define IDS_HTTP_URI_MAX	8192
#define IDS_HTTP_HEADER_MAX	16384
#define IDS_HTTP_BODY_MAX	16384
#define IDS_MAX_LINE		65536
#define IDS_MAX_FILE		(64u << 20)
#define IDS_EVAL_BUDGET		4096	/* candidate positions per rule check */

enum ids_elem_kind { IDS_ELEM_CONTENT, IDS_ELEM_PCRE, IDS_ELEM_BYTES };

/* isdataat, byte_test, byte_jump, urilen (ids_parse_bytes.c, ids_bytes.c). */
enum ids_bop { IDS_BOP_ISDATAAT, IDS_BOP_TEST, IDS_BOP_JUMP, IDS_BOP_URILEN,
	       IDS_BOP_DSIZE,	/* dsize: udp rules, the datagram's size */
	       IDS_BOP_EXTRACT,	/* byte_extract: into a rule variable */
	       IDS_BOP_B64 };	/* base64_decode: into IDS_BUF_B64 */

#define IDS_MAX_VARS	2	/* byte_extract variables per rule (Snort's) */
#define IDS_NO_VAR	(-1)
enum ids_bcmp { IDS_BCMP_LT, IDS_BCMP_GT, IDS_BCMP_LE, IDS_BCMP_GE,
		IDS_BCMP_EQ, IDS_BCMP_AND, IDS_BCMP_XOR,
		IDS_BCMP_IN,		/* urilen a<>b: a < len < b */
		IDS_BCMP_IN_INCL };	/* urilen a<=>b: a <= len <= b */

struct ids_bytes {
	enum ids_bop op;
	uint8_t nbytes;		/* bytes read: 1..4 binary, 1..10 string */
	uint8_t base;		/* string: 8, 10, 16; 0: binary */
	bool little;		/* binary: little endian */
	bool not;		/* byte_test '!': the comparison negated */
	enum ids_bcmp cmp;	/* byte_test */
	uint64_t value;		/* byte_test operand; urilen bound */
	uint64_t value_hi;	/* urilen: upper bound of a range */
	uint32_t bitmask;	/* 0: none */
	int32_t offset;		/* isdataat: N; others: where to read */
	int32_t post_offset;	/* byte_jump */
	uint32_t multiplier;	/* byte_jump, 1 by default */
	bool align;		/* byte_jump: round the jump up to 4;
				 * byte_extract: align the value to align_to */
	uint8_t align_to;	/* byte_extract: 2 or 4 */
	int8_t var_out;		/* byte_extract: the variable it sets */
	int8_t var_value;	/* byte_test value from a variable, or NO_VAR */
	int8_t var_offset;	/* offset from a variable, or NO_VAR */
	bool from_beginning;	/* byte_jump: from the buffer's start */
};

/* One content or pcre option of a rule, in rule order. */
struct ids_elem {
	enum ids_elem_kind kind;
	enum ids_buf buf;
	bool negated;
	bool nocase;
	bool relative;		/* distance/within, or pcre R */
	bool has_offset, has_depth, has_distance, has_within;
	int32_t offset, depth, distance, within;
	uint8_t *pat;		/* content bytes, or pcre source (NUL-ended) */
	size_t len;
	uint8_t *lpat;		/* lower-cased content when nocase */
	uint32_t pcre_opts;	/* PCRE2_* compile options */
	pcre2_code *re;
	bool anchor;		/* a later element is relative to this one */
	struct ids_bytes b;	/* IDS_ELEM_BYTES; negated: isdataat:! */
	/* offset, depth, distance, within from byte_extract variables */
	int8_t var_offset, var_depth, var_distance, var_within;
};

/* Address and port sets: matches (pos_any || npos == 0 || in pos) && !in neg. */
struct ids_cidr {
	uint8_t family;		/* 4 or 6 */
	uint8_t plen;
	uint8_t addr[16];
};

struct ids_addrset {
	bool none;		/* "!any" */
	bool pos_any;
	size_t npos, nneg;
	struct ids_cidr *pos, *neg;
};

struct ids_prange {
	uint16_t lo, hi;
};

struct ids_portset {
	bool none;
	bool pos_any;
	size_t npos, nneg;
	struct ids_prange *pos, *neg;
};

enum ids_proto { IDS_PROTO_IP, IDS_PROTO_TCP, IDS_PROTO_UDP };

struct ids_header {
	enum ids_proto proto;
	bool bidir;
	struct ids_addrset src, dst;
	struct ids_portset sp, dp;
	char *key;		/* canonical text, to share equal headers */
};

enum ids_fbop_kind { IDS_FB_SET, IDS_FB_UNSET, IDS_FB_TOGGLE, IDS_FB_ISSET,
		     IDS_FB_ISNOTSET };

/*
 * One flowbits operation on one bit.  "a&b" and "a|b" give one op per
 * name, consecutive; the first holds the group's size in n (1 alone) and
 * whether any of the tests suffices (|) rather than all (&).
 */
struct ids_fbop {
	enum ids_fbop_kind op;
	uint32_t bit;
	uint16_t n;
	bool any;
};

enum ids_flowdir { IDS_FLOW_ANY, IDS_FLOW_TO_SERVER, IDS_FLOW_TO_CLIENT };

/* When a rule is checked: on raw stream data, or on HTTP request events. */
enum ids_class { IDS_CLASS_RAW, IDS_CLASS_HTTP_HDR, IDS_CLASS_HTTP_BODY,
		 IDS_CLASS_RESP_HDR, IDS_CLASS_RESP_BODY, IDS_CLASS_COUNT };

/* The class of the rules whose check a buffer's event starts. */
static inline enum ids_class ids_buf_class(enum ids_buf b)
{
	switch (b) {
	case IDS_BUF_RAW: return IDS_CLASS_RAW;
	case IDS_BUF_BODY: return IDS_CLASS_HTTP_BODY;
	case IDS_BUF_RESP_HEADER: case IDS_BUF_STAT_CODE:
	case IDS_BUF_STAT_MSG: return IDS_CLASS_RESP_HDR;
	case IDS_BUF_FILE_DATA: return IDS_CLASS_RESP_BODY;
	case IDS_BUF_B64: return IDS_CLASS_RAW;	/* follows its source */
	default: return IDS_CLASS_HTTP_HDR;
	}
}

struct ids_rule {
	struct ids_rule_info info;
	unsigned header;	/* index into ruleset headers */
	enum ids_flowdir flowdir;
	enum ids_class cls;
	bool noalert;
	size_t nelems, nfb;
	struct ids_elem *elems;
	struct ids_fbop *fb;
	struct {		/* detection_filter (ids_dfilter.c) */
		bool on, by_dst;
		uint32_t count, seconds;
	} df;
};

/* Variables of a load: name -> text value. */
struct ids_var {
	char *name;
	char *value;
};

/* Everything the parser hands the compiler. */
struct ids_parse {
	const char *file;
	struct ids_diags *diags;	/* may be NULL */
	size_t nvars, nrules, nheaders, nflowbits;
	struct ids_var *vars;
	struct ids_rule *rules;
	struct ids_header *headers;
	char **flowbits;		/* names; index = bit */
	char **strings;			/* interned msg/classtype/file text */
	size_t nstrings;
	bool oom;
};

/* A Hyperscan database and, per pattern id, the rules it triggers. */
struct ids_db {
	hs_database_t *db;
	size_t npat;
	uint32_t *rule_off;	/* npat + 1 offsets into rule_idx */
	uint32_t *rule_idx;
};

/* Rules checked without a trigger: per direction (raw), per HTTP event. */
enum ids_list { IDS_LIST_RAW_TS, IDS_LIST_RAW_TC, IDS_LIST_HTTP_HDR,
		IDS_LIST_HTTP_BODY, IDS_LIST_RESP_HDR, IDS_LIST_RESP_BODY,
		IDS_LIST_UDP_TS, IDS_LIST_UDP_TC, IDS_LIST_COUNT };

struct ids_ruleset {
	int refcnt;
	uint64_t gen;
	struct ids_parse p;
	struct ids_db raw[2];		/* streaming, per enum ids_dir */
	struct ids_db http[IDS_BUF_COUNT];	/* block mode, index URI.. BODY */
	struct ids_db udp[2];		/* block mode, datagrams per direction */
	uint32_t *always[IDS_LIST_COUNT];
	size_t nalways[IDS_LIST_COUNT];
	bool inspect[2];		/* a rule may look at this direction */
	uint32_t *by_sid;		/* rule indices sorted by sid */
	const char *cache_dir;		/* during the load only, may be NULL */
	struct ids_dftab *df;		/* detection_filter counters: the one
					 * mutable part (its own lock); NULL
					 * without such rules */
};

/* ids_parse.c */
void ids_diag(struct ids_diags *d, const char *file, int line,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A rule skipped as not applicable (into d->na). */
void ids_diag_na(struct ids_diags *d, const char *file, int line,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
char *ids_intern(struct ids_parse *p, const char *s, size_t len);
int ids_parse_text(struct ids_parse *p, const char *file, const char *text,
		   size_t len, bool vars_only);
void ids_parse_free(struct ids_parse *p);
void ids_elem_free(struct ids_elem *e);

/* ids_addr.c */
/* 0, or -1 with a message in err (the caller adds file:line). */
int ids_addrset_parse(const struct ids_parse *p, const char *text,
		      struct ids_addrset *out, char *err, size_t errlen);
int ids_portset_parse(const struct ids_parse *p, const char *text,
		      struct ids_portset *out, char *err, size_t errlen);
bool ids_addrset_match(const struct ids_addrset *s, int family,
		       const uint8_t *addr);
bool ids_portset_match(const struct ids_portset *s, uint16_t port);
void ids_addrset_free(struct ids_addrset *s);
void ids_portset_free(struct ids_portset *s);
const char *ids_var_lookup(const struct ids_parse *p, const char *name,
			   size_t len);

/* ids_match.c: one buffer as the matcher sees it. */
struct ids_view {
	const uint8_t *data;	/* bytes available */
	size_t len;
	uint64_t base;		/* position of data[0] */
	uint64_t start;		/* position of the buffer's first byte */
	bool present;
};

struct ids_match_ctx {
	struct ids_view v[IDS_BUF_COUNT];
	/* builds the raw view on first use (data NULL until then) */
	int (*fill_raw)(struct ids_match_ctx *m);
	void *arg;
	int err;		/* fill_raw failed: -ENOMEM */
	pcre2_match_data *md;
	pcre2_match_context *mctx;
	int budget;
	uint64_t vars[IDS_MAX_VARS];	/* byte_extract values of this check */
	uint8_t b64[IDS_B64_MAX];	/* the IDS_BUF_B64 view's bytes */
};

bool ids_rule_elems_match(const struct ids_rule *r, struct ids_match_ctx *m);
/*
 * ids_bytes.c: evaluates a byte option at cursor @cur of view @v; true
 * with the cursor after it in *next (moved by byte_jump only).
 */
bool ids_bytes_eval(const struct ids_elem *el, const struct ids_view *v,
		    uint64_t cur, uint64_t *next, uint64_t *vars);
/*
 * base64_decode at cursor @cur of @v into @out (at most IDS_B64_MAX
 * bytes); the decoded length, 0 when there is nothing to decode.
 */
size_t ids_b64_decode(const struct ids_elem *el, const struct ids_view *v,
		      uint64_t cur, uint8_t *out);
bool ids_bytes_find(const uint8_t *hay, size_t hlen, const uint8_t *pat,
		    size_t plen, bool nocase, size_t *pos);

/* ---- flows (ids_flow.c, ids_http.c) ---- */

#include <http_parser.h>

#include "http_head.h"

struct ids_sbuf {
	uint8_t *p;
	size_t len, cap, max;
};

enum ids_http_state { IDS_HTTP_UNKNOWN, IDS_HTTP_ON, IDS_HTTP_OFF };

/*
 * HTTP request parsing of the to-server direction: the request head is
 * collected in @head and written into the URI and HEADER buffers when a
 * rule event needs them (headers complete; trailers before the body event).
 */
struct ids_flow;

/* What the HTTP layer calls after a request event: check the rules of @cls. */
typedef void (*ids_http_event_fn)(struct ids_flow *f, enum ids_class cls);

struct ids_http {
	http_parser parser;
	ids_http_event_fn event;	/* the flow's rule check (ids_flow.c) */
	struct ids_flow *flow;		/* during ids_http_feed */
	bool response;			/* parses the to-client direction */
	bool gzip;			/* this response's body is compressed */
	bool z_failed;			/* ... and could not be decoded */
	struct z_stream_s *z;		/* inflate state, made on first use */
	bool z_ready;			/* z set up for this body's format */
	uint8_t zlead[2];		/* first body bytes, to tell the format */
	uint8_t nlead;
	enum ids_http_state state;
	bool body_done;		/* body event ran for this message */
	struct http_head head;	/* the request head (and trailers), whole */
	unsigned hdrs_out;	/* head.hdrs already in buf[IDS_BUF_HEADER] */
	struct ids_sbuf buf[IDS_BUF_COUNT];	/* URI .. BODY used */
};

/*
 * One direction of a flow: Hyperscan stream and history ring.  The byte at
 * stream offset o is ring[o % IDS_WINDOW]; the ring grows up to
 * IDS_WINDOW, and while cap < IDS_WINDOW it holds the whole stream.
 */
struct ids_stream {
	hs_stream_t *hs;
	uint8_t *ring;
	size_t cap;
	uint64_t total;		/* stream bytes before the current chunk */
};

struct ids_worker {
	hs_scratch_t *scratch;
	uint64_t scratch_gen;	/* ruleset the scratch was last sized for */
	uint32_t *touched;	/* rules to check in this batch */
	size_t ntouched;
	uint32_t *stamp;	/* stamp[rule] == epoch: already touched */
	size_t cap;
	uint32_t epoch;
	pcre2_match_data *md;
	pcre2_match_context *mctx;
	const struct ids_db *cur_db;	/* for the Hyperscan callback */
	uint8_t *lin;		/* history + chunk, built when a rule needs it */
	size_t lincap;
};

struct ids_flow {
	struct ids_ruleset *rs;
	struct ids_flow_key key;
	struct ids_stream dir[2];
	uint8_t *hdr_ok[2];	/* per header: matches this direction */
	uint64_t *bits;		/* flowbits */
	uint64_t *fired;	/* per rule: already reported */
	bool denied;
	const struct ids_rule_info *deny_rule;
	struct ids_http *http;	/* NULL when the ruleset has no HTTP rule */
	struct ids_http *resp;	/* NULL without HTTP response rules */
	/* valid during ids_flow_scan only */
	struct ids_worker *w;
	struct ids_verdict *out;
	enum ids_dir cur_dir;
	const uint8_t *chunk;
	size_t chunk_len;
	int err;
};

/*
 * ids_http.c: the flow layer passes the check it wants after each event;
 * @response: parse responses (to-client), else requests.
 */
struct ids_http *ids_http_create(ids_http_event_fn event, bool response);
void ids_http_destroy(struct ids_http *h);
/* Feeds @h the current chunk (f->chunk, not yet in the ring) of its side. */
void ids_http_feed(struct ids_flow *f, struct ids_http *h);

#endif
