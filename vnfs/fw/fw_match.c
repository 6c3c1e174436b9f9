// SPDX-License-Identifier: MIT
/*
 * fw_match.c - first-match evaluation of a compiled ruleset.
 *
 * Hot path of the firewall VNF.  Rules are pre-split by direction and sets
 * are pre-normalised (fw_rules.c): a rule costs a few compares per clause
 * it has, addresses are compared as two masked 64-bit words, port sets are
 * sorted ranges scanned with early exit.  No locks, no allocation.
 */
#include <string.h>

#include "fw_match.h"
#include "fw_rules_priv.h"

static inline bool addr_in(const struct fw_prefix *px, unsigned int n,
			   uint64_t a0, uint64_t a1)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (((a0 & px[i].mask[0]) == px[i].net[0]) &
		    ((a1 & px[i].mask[1]) == px[i].net[1]))
			return true;
	return false;
}

static inline bool port_in(const struct fw_range *r, unsigned int n, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (port < r[i].lo)
			return false;	/* sorted: no later range can hold it */
		if (port <= r[i].hi)
			return true;
	}
	return false;
}

enum fw_verdict fw_match(const struct fw_ruleset *rs, const struct fw_packet *pkt,
			 struct fw_hit *hit)
{
	const struct fw_chain *c;
	const struct fw_prefix *px = rs->prefixes;
	const struct fw_range *rg = rs->ranges;
	uint64_t s[2], d[2];
	unsigned int i, ctbit;

	if (pkt->dir >= FW_DIR_COUNT) {
		if (hit)
			*hit = (struct fw_hit){ .rule = 0, .line = 0, .comment = "" };
		return FW_DROP;
	}
	c = &rs->chain[pkt->dir];
	memcpy(s, pkt->src, 16);
	memcpy(d, pkt->dst, 16);
	ctbit = 1u << (pkt->ct < FW_CT_COUNT ? pkt->ct : FW_CT_INVALID);

	for (i = 0; i < c->n; i++) {
		const struct fw_rule *r = &c->rules[i];

		if (r->has_proto && r->proto != pkt->proto)
			continue;
		if (r->family && r->family != pkt->family)
			continue;
		if (!(r->ct_match & ctbit))
			continue;
		if ((pkt->tcp_flags & r->flags_mask) != r->flags_val)
			continue;
		if (r->dport.n && port_in(rg + r->dport.off, r->dport.n, pkt->dport) == r->dport.neg)
			continue;
		if (r->sport.n && port_in(rg + r->sport.off, r->sport.n, pkt->sport) == r->sport.neg)
			continue;
		if (r->src.n && addr_in(px + r->src.off, r->src.n, s[0], s[1]) == r->src.neg)
			continue;
		if (r->dst.n && addr_in(px + r->dst.off, r->dst.n, d[0], d[1]) == r->dst.neg)
			continue;
		if (hit)
			*hit = (struct fw_hit){ .rule = r->number, .line = r->line,
						.comment = r->comment };
		return (enum fw_verdict)r->action;
	}
	if (hit)
		*hit = (struct fw_hit){ .rule = 0, .line = 0, .comment = "" };
	return (enum fw_verdict)c->policy;
}
