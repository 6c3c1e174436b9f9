/* SPDX-License-Identifier: MIT */
/*
 * fw_match.h - the firewall VNF's matcher: first matching rule of a
 * compiled ruleset (fw_rules.h) for one parsed packet or descriptor.
 *
 * Contract: fw_match() reads only @rs and @pkt, allocates nothing, takes no
 * lock and may run on any number of threads at once.  Its cost grows with
 * the number of rules of the packet's direction tried before the match.
 */
#ifndef TOCHAIN_FW_MATCH_H
#define TOCHAIN_FW_MATCH_H

#include <stdint.h>

#include "fw_rules.h"

/*
 * The header fields a descriptor / flow-table entry carries.  Filled by the
 * trusted side (TOE) from the kernel socket, never copied from guest memory
 * without validation; fw_match() still treats out-of-range values safely.
 */
struct fw_packet {
	uint8_t family;		/* 4 or 6; anything else matches no address rule */
	uint8_t dir;		/* enum fw_dir; invalid: FW_DROP */
	uint8_t proto;		/* IP protocol number (6 tcp, 17 udp, ...) */
	uint8_t tcp_flags;	/* FW_TCP_* of the segment, 0 when not TCP */
	uint8_t ct;		/* enum fw_ct; out of range counts as invalid */
	uint16_t sport;		/* host byte order */
	uint16_t dport;		/* host byte order */
	uint8_t src[16];	/* network order; IPv4 in bytes 0..3 */
	uint8_t dst[16];
};

/* Which rule decided. */
struct fw_hit {
	unsigned int rule;	/* 1-based number among the file's rules; 0: policy */
	unsigned int line;	/* line in the rule file; 0: policy or bad packet */
	const char *comment;	/* "" if none; valid while the ruleset lives */
};

/* Verdict for @pkt; @hit (may be NULL) says which rule gave it. */
enum fw_verdict fw_match(const struct fw_ruleset *rs, const struct fw_packet *pkt,
			 struct fw_hit *hit);

#endif /* TOCHAIN_FW_MATCH_H */
