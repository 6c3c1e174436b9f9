/*
 * Private to vnfs/waf: what waf_flow.c needs from waf_engine.c.
 * Not installed, not part of the API.
 */
#ifndef TOCHAIN_WAF_PRIV_H
#define TOCHAIN_WAF_PRIV_H

#include <stdatomic.h>

#include <modsecurity/modsecurity.h>
#include <modsecurity/rules_set.h>
#include <modsecurity/transaction.h>

#include "waf_engine.h"

struct waf_engine {
	atomic_uint refs;          /* get: relaxed; put: acq_rel, pairs with itself */
	RulesSet *rules;           /* read-only once created; shared by all threads */
	ModSecurity *msc;          /* the process-wide instance (waf_engine.c) */
	int paranoia;
	char *deny_page;           /* copy of waf_config.deny_page, or NULL */
	bool inspect_response;
	size_t max_header_bytes;
	unsigned n_rules;
	atomic_ulong next_tx;      /* transaction id counter; relaxed, ids only */
	atomic_uint live_tx;       /* transactions alive; relaxed, a gauge */
};

/*
 * Sink that ModSecurity's log callback writes matched rule ids to: the
 * engine passes one per transaction as the callback's data pointer.
 */
struct waf_match_log {
	unsigned n;
	unsigned ids[WAF_MAX_MATCHED];
};

/* Adds id to the log unless present or full. */
void waf_match_log_add(struct waf_match_log *log, unsigned id);
/* Parses `[id "N"]` out of a ModSecurity log line; 0 if absent. */
unsigned waf_log_rule_id(const char *line);
/* Copies the `[msg "..."]` of a log line into buf (or the line itself,
 * shortened, when it has none). */
void waf_log_msg(const char *line, char *buf, size_t len);

#endif
