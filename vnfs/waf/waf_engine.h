/*
 * TOChain WAF engine: OWASP CRS on libmodsecurity v3, fed with TCP streams.
 *
 * A VNF service thread owns flows; each flow gets the bytes of one TCP
 * connection in order, in chunks of any size, as they pass the chain:
 * the client->server stream (WAF_DIR_IN) and, if the caller wants responses
 * inspected, the server->client stream (WAF_DIR_OUT).  The engine parses
 * HTTP/1.x out of the streams, runs every request (and its response) as one
 * ModSecurity transaction against the rules of the flow's engine, and
 * answers each chunk with a verdict: allow, or deny.  A deny is final for
 * the flow: the caller aborts the connection (DESIGN.md §3, "A Deny is
 * enforced on a byte stream").
 *
 * Threading contract:
 *  - An engine is immutable once created and may be used by any number of
 *    threads at once; its lifetime is reference counted (waf_engine_get/put).
 *    A rule reload creates a new engine and swaps the pointer that new flows
 *    take; flows created on the old engine keep it alive until destroyed.
 *  - A flow is used by one thread at a time (the caller serialises feeds of
 *    one flow; two flows may be fed concurrently from different threads).
 *  - waf_engine_create may be called from any thread; rule loading is
 *    serialised internally (libmodsecurity's rule parser is not reentrant),
 *    so it never blocks feeds of other engines, only other creations.
 *
 * What the engine trusts: nothing in the streams.  Every byte is untrusted
 * input; a malformed HTTP stream is a protocol violation and is denied.
 * The bytes of a chunk may even change while they are being fed (shared
 * memory an untrusted guest writes): the engine never reads outside
 * [data, data + len), keeps no pointer into it after waf_flow_feed
 * returns, and copies what it keeps, so this cannot hurt the engine; but
 * a verdict holds for the bytes as read, so a caller that must send
 * exactly what was approved feeds a stable copy (DESIGN.md §3).
 */
#ifndef TOCHAIN_WAF_ENGINE_H
#define TOCHAIN_WAF_ENGINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct waf_engine;
struct waf_flow;

/* Default location of Debian's modsecurity-crs rules (DIR/rules/NAME.conf). */
#define WAF_CRS_DIR_DEFAULT "/usr/share/modsecurity-crs"

struct waf_config {
	const char *crs_dir;          /* NULL: WAF_CRS_DIR_DEFAULT; "" : no CRS */
	int paranoia_level;           /* 1..4; 0 means 1 */
	bool inspect_response;        /* run phases 3/4 on WAF_DIR_OUT data */
	size_t request_body_limit;    /* bytes; 0: 1 MiB; larger bodies denied */
	size_t response_body_limit;   /* bytes inspected; 0: 512 KiB (partial beyond) */
	int inbound_threshold;        /* CRS inbound anomaly threshold; 0: 5 */
	int outbound_threshold;       /* CRS outbound anomaly threshold; 0: 4 */
	size_t max_header_bytes;      /* request/response head size; 0: 64 KiB */
	/* Rule files loaded before the CRS (e.g. exclusions that set tx vars,
	 * like CRS's REQUEST-900 file) and after it (SecRuleRemoveById...). */
	const char *const *pre_rule_files;
	size_t n_pre_rule_files;
	const char *const *extra_rule_files;
	size_t n_extra_rule_files;
	/* Template of the deny answer's page (waf_answer.h); NULL: built-in.
	 * The engine keeps a copy, so flows on it keep their page. */
	const char *deny_page;
};

/*
 * Loads the base configuration (vnfs/waf/conf/, compiled in), the CRS setup
 * for the configured paranoia level, the CRS rules and the extra files.
 * Slow (about a second for the full CRS): do it once and share the engine.
 * Returns the engine with one reference, or NULL with errno set and a
 * message in err (if errlen > 0):
 *   EINVAL  bad configuration value or a rule file that does not parse
 *   ENOENT  the CRS directory has no rules/NAME.conf files, or a rule file
 *           is missing (EACCES if unreadable)
 *   ENOMEM  out of memory
 */
struct waf_engine *waf_engine_create(const struct waf_config *cfg,
				     char *err, size_t errlen);
/* Takes a reference; returns e. */
struct waf_engine *waf_engine_get(struct waf_engine *e);
/* Drops a reference; the last one frees the rules. NULL is ignored. */
void waf_engine_put(struct waf_engine *e);
/* Number of references held (for tests and statistics). */
unsigned waf_engine_refs(const struct waf_engine *e);
/* Rules loaded (as counted by libmodsecurity) and the paranoia level. */
unsigned waf_engine_rule_count(const struct waf_engine *e);
int waf_engine_paranoia(const struct waf_engine *e);
/* The deny page template of the configuration, or NULL (the built-in
 * page); valid while a reference to e is held. */
const char *waf_engine_deny_page(const struct waf_engine *e);
/* ModSecurity transactions alive on this engine, over all its flows (a
 * leak check for tests; a gauge for statistics). */
unsigned waf_engine_live_transactions(const struct waf_engine *e);

/*
 * The current engine of a VNF, swapped by a rule reload while service
 * threads create flows on it.  Reading a bare pointer and then taking a
 * reference would race with the reloader's put; the slot does both under
 * its lock (taken once per flow creation and per reload, never per chunk).
 */
struct waf_engine_slot {
	pthread_mutex_t lock;
	struct waf_engine *cur;         /* (lock) holds one reference */
};

/* Initialises the slot with e (may be NULL), taking over its reference. */
void waf_slot_init(struct waf_engine_slot *s, struct waf_engine *e);
/* A new reference to the current engine (NULL if none): put it when done. */
struct waf_engine *waf_slot_get(struct waf_engine_slot *s);
/* Installs e (taking over its reference) and puts the previous engine,
 * which lives on until its last flow is destroyed. */
void waf_slot_swap(struct waf_engine_slot *s, struct waf_engine *e);
/* Puts the current engine; the slot is unusable afterwards. */
void waf_slot_destroy(struct waf_engine_slot *s);

enum waf_dir {
	WAF_DIR_IN = 0,   /* client -> server: requests */
	WAF_DIR_OUT = 1,  /* server -> client: responses */
};

enum waf_action {
	WAF_ALLOW = 0,
	WAF_DENY = 1,
};

/* Who decided a deny. */
enum waf_source {
	WAF_SRC_NONE = 0,
	WAF_SRC_RULES,    /* a ModSecurity rule (CRS, base config or extra) */
	WAF_SRC_HTTP,     /* the HTTP parser: malformed or unsupported stream */
	WAF_SRC_ENGINE,   /* libmodsecurity without a rule id (body limit) or
			   * an internal failure (out of memory) */
};

/*
 * Rule ids the HTTP parser reports for protocol violations it finds itself
 * (ModSecurity never sees such a request).  Where CRS has a rule for the
 * same violation, its id is used, so that logs read the same; the rest are
 * in the local range.
 */
#define WAF_RULE_HTTP_REQUEST_LINE   920100 /* bad method, URL, version */
#define WAF_RULE_HTTP_CONTENT_LENGTH 920160 /* non-numeric or conflicting */
#define WAF_RULE_HTTP_CL_AND_TE      920181 /* Content-Length + Transfer-Encoding */
#define WAF_RULE_HTTP_HEADER_SYNTAX  921140 /* invalid character in a header */
#define WAF_RULE_HTTP_CHUNKED        921110 /* broken chunked body (smuggling) */
#define WAF_RULE_HTTP_OTHER          99001  /* other protocol violation */
#define WAF_RULE_HTTP_HEADER_LIMIT   99002  /* head larger than max_header_bytes */

#define WAF_MAX_MATCHED 16
#define WAF_MSG_LEN 192

struct waf_verdict {
	enum waf_action action;
	enum waf_source source;
	enum waf_dir dir;             /* direction of the deny */
	unsigned rule_id;             /* rule that caused the deny (e.g. 949110) */
	int status;                   /* HTTP status ModSecurity asked for */
	char msg[WAF_MSG_LEN];        /* reason, NUL-terminated */
	/* Ids of the rules that matched and logged: for a deny, those of the
	 * denied transaction (e.g. 942100 then 949110's contributors); for an
	 * allow, those of the transactions finished in this call (warnings
	 * below the threshold).  Deduplicated, in match order, truncated to
	 * WAF_MAX_MATCHED (n_matched counts the stored ones). */
	unsigned n_matched;
	unsigned matched[WAF_MAX_MATCHED];
	unsigned requests;            /* requests completed in this call */
	unsigned responses;           /* responses completed in this call */
};

/*
 * Creates a flow on engine e (takes a reference).  Addresses are textual
 * (IPv4 or IPv6) as ModSecurity wants them; they feed REMOTE_ADDR etc.
 * Returns NULL with errno EINVAL (bad argument) or ENOMEM.
 */
struct waf_flow *waf_flow_create(struct waf_engine *e,
				 const char *client_addr, uint16_t client_port,
				 const char *server_addr, uint16_t server_port);
/* Frees the flow and every transaction it still holds, whatever its state. */
void waf_flow_destroy(struct waf_flow *f);

/*
 * Feeds the next len bytes of direction dir.  len == 0 means end of stream
 * (FIN) in that direction.  Fills *out (always) and returns its action:
 * WAF_ALLOW or WAF_DENY.  Once a flow has denied, every later feed denies
 * again with the same verdict and the flow holds no transaction any more.
 * WAF_DIR_OUT data is ignored (allowed) unless the engine inspects
 * responses.  After a request with Upgrade (or CONNECT) the rest of the
 * connection is an opaque tunnel and is allowed without inspection.
 * Returns -EINVAL (and out untouched) on bad arguments.
 */
int waf_flow_feed(struct waf_flow *f, enum waf_dir dir,
		  const uint8_t *data, size_t len, struct waf_verdict *out);

/* True while a request or response is partly received (a chunk boundary
 * inside a message): an allowed chunk then carries a request whose verdict
 * is not known yet. */
bool waf_flow_in_message(const struct waf_flow *f, enum waf_dir dir);
/* Complete requests whose response has not ended, as far as the flow
 * saw responses (WAF_DIR_OUT fed); 0 when it sees none. */
unsigned waf_flow_awaiting(const struct waf_flow *f);
/* True once the flow has denied. */
bool waf_flow_denied(const struct waf_flow *f);

#endif
