/* SPDX-License-Identifier: MIT */
/*
 * The `null` VNF kind (vnf_null_*): allows everything, optionally after an
 * artificial per-packet cost, optionally denying payloads that contain a
 * marker (tests).  It keeps, per service thread, what it saw: packets,
 * bytes, and a checksum (sum of FNV-1a of each payload, order-free), so a
 * test can check that every VNF of a parallel hop saw every byte.
 */
#ifndef TOCHAIN_VNF_NULL_H
#define TOCHAIN_VNF_NULL_H

#include <stdint.h>

#include "vnf.h"

#define VNF_NULL_RULE_MARKER	1	/* rule id of a --deny-marker Deny */

struct vnf_null_opts {
	const char *deny_marker;	/* NULL: allow everything */
};

/* What a service thread saw (every kind; the --stats file). */
struct vnf_null_stats {
	uint64_t packets, bytes, csum, denied;
};

/* FNV-1a 64 of a buffer (the per-payload checksum). */
uint64_t vnf_null_fnv(const uint8_t *p, uint32_t len);

/* Verdict of the null kind for one payload (rule in *rule for a Deny). */
uint32_t vnf_null_inspect(const struct vnf_null_opts *o, const uint8_t *p, uint32_t len,
			  uint32_t *rule);

#endif /* TOCHAIN_VNF_NULL_H */
