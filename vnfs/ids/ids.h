/* SPDX-License-Identifier: MIT */
/*
 * libtochain-ids: a Snort 2.9 subset IDS/IPS engine for TCP byte streams.
 *
 * The engine inspects the payload of TCP connections, one direction at a
 * time, as successive chunks of the byte stream (not as packets).  A VNF
 * service thread uses it like this:
 *
 *	rs = ids_ruleset_load("local.rules", "vars.conf", &diags);
 *	w = ids_worker_create();                    (one per thread)
 *	f = ids_flow_create(rs, &key);              (one per connection)
 *	ids_flow_scan(w, f, IDS_TO_SERVER, buf, n, &v);
 *	if (v.decision == IDS_DENY) abort the connection, log v.deny_rule
 *	ids_flow_destroy(f);
 *
 * THREADING.  A ruleset is immutable once loaded and may be shared by any
 * number of threads; its lifetime is a reference count (get/put; a flow
 * holds one reference).  A worker belongs to one thread at a time.  A flow
 * may be scanned by one thread at a time (any worker).  Reloading rules
 * under traffic: load the new ruleset, publish it for new flows, put the
 * old one; flows created on the old ruleset keep using it until they are
 * destroyed, and the last put frees it.  Publishing the pointer (and taking
 * a reference while reading it) is the caller's business, e.g. a mutex
 * around "read pointer + ids_ruleset_get".
 *
 * REASSEMBLY BOUND.  Each direction of a flow keeps the last IDS_WINDOW
 * bytes of its stream (a ring; less while the stream is shorter).  A rule
 * is confirmed against that history followed by the current chunk: a
 * match whose parts lie more than IDS_WINDOW bytes before the current
 * chunk is not found.  Positions (offset/depth) count from the first byte
 * of the direction's stream, so they stay exact however the stream was
 * chunked.  Memory: at most IDS_WINDOW per direction per flow, plus one
 * IDS_WINDOW + chunk buffer per worker.
 * See README.md for the supported rule language.
 *
 * Errors: constructors return NULL with errno set, actions return 0 or
 * -errno.  Nothing here exits or aborts on bad input.
 */
#ifndef TOCHAIN_IDS_H
#define TOCHAIN_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of stream history kept per flow direction (see REASSEMBLY BOUND). */
#define IDS_WINDOW		(32 * 1024)
/* Alerts reported per ids_flow_scan call; further ones are counted only. */
#define IDS_MAX_ALERTS		8

struct ids_ruleset;
struct ids_flow;
struct ids_worker;

enum ids_action {
	IDS_ACTION_ALERT,
	IDS_ACTION_DROP,
	IDS_ACTION_REJECT,	/* deny; the runtime resets the connection */
};

/* What a rule says about itself; valid while its ruleset is referenced. */
struct ids_rule_info {
	uint32_t sid;
	uint32_t rev;
	enum ids_action action;
	const char *msg;	/* "" when the rule has none */
	const char *classtype;	/* "" when the rule has none */
	const char *file;	/* where the rule was read */
	int line;
};

/*
 * Diagnostics of a load: one "file:line: message" string per problem.
 * Rules that can never apply to what a TOE delivers (icmp, IP/TCP header
 * tests such as ttl or flags) are not problems: they are skipped and
 * listed apart, in na ("file:line: not applicable: why").
 */
struct ids_diags {
	size_t n;
	char **msg;
	size_t nna;
	char **na;
};
void ids_diags_free(struct ids_diags *d);

/*
 * Loads the rules in @path, after the variables of @vars_path (may be NULL;
 * a file of "var/ipvar/portvar NAME VALUE" lines).  Rules that are malformed
 * or use something unsupported are skipped and reported in @diags (may be
 * NULL), never half-read.  Returns a ruleset with one reference, or NULL
 * with errno: ENOENT/EACCES/... from opening a file, EFBIG for a file over
 * 64 MiB, ENOMEM, EINVAL when Hyperscan refuses the compiled patterns.
 * A file without any valid rule gives an empty ruleset, not an error.
 */
struct ids_ruleset *ids_ruleset_load(const char *path, const char *vars_path,
				     struct ids_diags *diags);
/*
 * Same, with a cache of compiled databases in @cache_dir (created 0700 if
 * missing; NULL: none): a load whose patterns, Hyperscan version and
 * platform equal an earlier one's deserializes its databases instead of
 * compiling.  Unreadable, corrupted or foreign cache files are ignored and
 * rewritten; a cache that cannot be written only costs the compile.
 */
struct ids_ruleset *ids_ruleset_load_cached(const char *path,
					    const char *vars_path,
					    const char *cache_dir,
					    struct ids_diags *diags);
/* Same, rules from memory; @name is used in diagnostics. */
struct ids_ruleset *ids_ruleset_load_mem(const char *name, const char *text,
					 size_t len, const char *vars_path,
					 struct ids_diags *diags);
struct ids_ruleset *ids_ruleset_get(struct ids_ruleset *rs);
void ids_ruleset_put(struct ids_ruleset *rs);
size_t ids_ruleset_nrules(const struct ids_ruleset *rs);
/* Rule by sid, or NULL. */
const struct ids_rule_info *ids_ruleset_find(const struct ids_ruleset *rs,
					     uint32_t sid);

/* Per-thread scan context (Hyperscan scratch, PCRE2 match data). */
struct ids_worker *ids_worker_create(void);
void ids_worker_destroy(struct ids_worker *w);

/* Connection identity; addresses in network byte order. */
struct ids_flow_key {
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint8_t client_addr[16];	/* IPv4: first 4 bytes */
	uint8_t server_addr[16];
	uint16_t client_port;	/* host byte order */
	uint16_t server_port;
};

enum ids_dir {
	IDS_TO_SERVER,		/* client -> server bytes */
	IDS_TO_CLIENT,
};

enum ids_decision {
	IDS_ALLOW,
	IDS_DENY,		/* a drop or reject rule matched: abort the flow */
};

struct ids_verdict {
	enum ids_decision decision;
	const struct ids_rule_info *deny_rule;	/* set when IDS_DENY */
	unsigned nalerts;			/* alert rules that matched */
	const struct ids_rule_info *alerts[IDS_MAX_ALERTS];
	unsigned alerts_lost;			/* beyond IDS_MAX_ALERTS */
};

/*
 * A flow takes a reference on @rs.  NULL with errno EINVAL (bad key) or
 * ENOMEM.
 */
struct ids_flow *ids_flow_create(struct ids_ruleset *rs,
				 const struct ids_flow_key *key);
void ids_flow_destroy(struct ids_flow *f);

/*
 * Inspects the next @len bytes of direction @dir of @f.  Every rule reports
 * at most once per flow.  Once a flow is denied, every later call returns
 * IDS_DENY with the same rule and inspects nothing.  Returns 0, -EINVAL
 * for a bad argument (verdict IDS_DENY, deny_rule NULL), -ENOMEM (the
 * same, and the flow stays denied: fail closed).
 */
int ids_flow_scan(struct ids_worker *w, struct ids_flow *f, enum ids_dir dir,
		  const uint8_t *data, size_t len, struct ids_verdict *out);
/*
 * One UDP datagram of the conversation @key (client: the side that sent
 * first, or the higher port), direction @dir: checked against the udp
 * rules alone, by itself (no state between datagrams: udp rules cannot
 * use flowbits).  Same verdict and errors as ids_flow_scan; a deny is for
 * this datagram.
 */
int ids_datagram_scan(struct ids_worker *w, struct ids_ruleset *rs,
		      const struct ids_flow_key *key, enum ids_dir dir,
		      const uint8_t *data, size_t len, struct ids_verdict *out);

/* The ruleset a flow uses (no new reference). */
struct ids_ruleset *ids_flow_ruleset(const struct ids_flow *f);

#endif
