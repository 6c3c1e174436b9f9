/* SPDX-License-Identifier: MIT */
/*
 * fw_rules_priv.h - PRIVATE to vnfs/fw: the compiled form of a ruleset,
 * shared by the parser (fw_rules.c), the matcher (fw_match.c) and the
 * nftables compiler (fw_nft.c).  Other modules use fw_rules.h only.
 *
 * Sets live in two pools owned by the ruleset; rules refer to them by
 * index so that the pools may grow while parsing.  Sets are normalised
 * (sorted, duplicates and contained elements removed, port ranges merged),
 * so that the matcher can stop early and the nft text is canonical.
 */
#ifndef TOCHAIN_FW_RULES_PRIV_H
#define TOCHAIN_FW_RULES_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "fw_rules.h"

/* One address prefix.  @net and @mask are the 16 address bytes loaded as
 * two native words (memcpy), @net already masked; IPv4 uses bytes 0..3. */
struct fw_prefix {
	uint64_t net[2];
	uint64_t mask[2];
	uint8_t addr[16];	/* network order, masked: for printing and sorting */
	uint8_t plen;
};

struct fw_range {
	uint16_t lo, hi;	/* inclusive, host order */
};

/* A set of elements in one of the pools; @neg inverts the test. */
struct fw_set {
	uint32_t off;
	uint16_t n;		/* 0: clause absent */
	bool neg;
};

struct fw_rule {
	uint8_t action;		/* enum fw_verdict */
	uint8_t family;		/* 0 any, 4 or 6 */
	bool has_proto;
	uint8_t proto;		/* IP protocol number when @has_proto */
	uint8_t ct_states;	/* bit per enum fw_ct as written; 0: no clause */
	bool ct_neg;
	uint8_t ct_match;	/* states that pass: @ct_states folded with @ct_neg */
	uint8_t flags_mask;	/* TCP flags tested; 0: no clause */
	uint8_t flags_val;	/* required value of the tested flags */
	struct fw_set src, dst;		/* fw_ruleset.prefixes */
	struct fw_set sport, dport;	/* fw_ruleset.ranges */
	unsigned int number;	/* 1-based position among the file's rules */
	unsigned int line;
	char comment[FW_MAX_COMMENT + 1];	/* "" when none */
};

struct fw_chain {
	struct fw_rule *rules;	/* in file order */
	unsigned int n, cap;
	uint8_t policy;		/* FW_ACCEPT or FW_DROP */
	bool policy_set;
};

struct fw_ruleset {
	struct fw_chain chain[FW_DIR_COUNT];
	struct fw_prefix *prefixes;
	uint32_t n_prefixes, cap_prefixes;
	struct fw_range *ranges;
	uint32_t n_ranges, cap_ranges;
	unsigned int n_rules;
};

#define FW_CT_ALL	((1u << FW_CT_COUNT) - 1)

#endif /* TOCHAIN_FW_RULES_PRIV_H */
