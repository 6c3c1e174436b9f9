/* SPDX-License-Identifier: MIT */
/*
 * Topology files for `sfc-ctl apply -f FILE` (sc_topo_*): one object per
 * line with the CLI's words, '#' starts a comment:
 *
 *   vm web1 ip=10.0.0.2/24 [region-size=16M]
 *   vnf ids kind=ids rules=ids.rules threads=2 on-failure=closed rate=5000 [arg=--x=y]...
 *   chain web-in vm=web1 dir=in hop=fw hop=ids,waf sla=2000
 *
 * Parsed into the JSON object tochaind's "apply" takes (td_apply.h), each
 * entry carrying its "line".  Only syntax is checked here (known words,
 * numbers, each key once except hop and arg); tochaind validates the
 * meaning.  A relative rules path is taken from the file's directory.
 */
#ifndef TOCHAIN_SC_TOPO_H
#define TOCHAIN_SC_TOPO_H

#include <jansson.h>
#include <stddef.h>

/*
 * Parse @len bytes of @text (named @file in messages, relative paths
 * resolved against @dir).  Returns the topology object, or NULL with
 * @err = "FILE:LINE: what is wrong".
 */
json_t *sc_topo_parse(const char *text, size_t len, const char *file, const char *dir,
		      char *err, size_t errlen);

/* Parse a size with optional K/M/G (powers of 1024) suffix; 0 or -1. */
int sc_parse_size(const char *s, long long *out);

/* Parse a whole number in [lo, hi]; 0 or -1. */
int sc_parse_uint(const char *s, long long lo, long long hi, long long *out);

/* "a,b" -> ["a","b"]; NULL when an element is empty. */
json_t *sc_parse_hop(const char *s);

#endif
