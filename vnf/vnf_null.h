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
	const char *region;		/* VNF region path */
	uint32_t threads;		/* 0: one per channel of the region */
	uint64_t cost_ns;		/* busy time per packet */
	const char *deny_marker;	/* NULL: allow everything */
	const char *stats_path;		/* written at exit, NULL: none */
	int attach_timeout_ms;
};

struct vnf_null_stats {
	uint64_t packets, bytes, csum, denied;
};

/* FNV-1a 64 of a buffer (the per-payload checksum). */
uint64_t vnf_null_fnv(const uint8_t *p, uint32_t len);

/* Verdict of the null kind for one payload (rule in *rule for a Deny). */
uint32_t vnf_null_inspect(const struct vnf_null_opts *o, const uint8_t *p, uint32_t len,
			  uint32_t *rule);

/* Run until *stop becomes non-zero or the region dies; 0 or -errno. */
int vnf_null_run(const struct vnf_null_opts *o, volatile int *stop);

/* The `tochain-vnf` command line (main.c calls only this). */
int vnf_main(int argc, char **argv);

#endif /* TOCHAIN_VNF_NULL_H */
