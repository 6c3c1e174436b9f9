// SPDX-License-Identifier: MIT
/* The null VNF kind; see vnf_null.h (served by vnf_cli.c through vnf_kind.c). */
#include <string.h>

#include <tochain/util.h>

#include "vnf_null.h"

uint64_t vnf_null_fnv(const uint8_t *p, uint32_t len)
{
	return tu_fnv1a64(p, len);
}

uint32_t vnf_null_inspect(const struct vnf_null_opts *o, const uint8_t *p, uint32_t len,
			  uint32_t *rule)
{
	if (o->deny_marker && *o->deny_marker &&
	    memmem(p, len, o->deny_marker, strlen(o->deny_marker))) {
		*rule = VNF_NULL_RULE_MARKER;
		return VNF_VERDICT_DENY;
	}
	*rule = 0;
	return VNF_VERDICT_ALLOW;
}
