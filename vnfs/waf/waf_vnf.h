/* SPDX-License-Identifier: MIT */
/* The waf kind (vnf_kind_waf in vnf_kind.h); see waf_vnf.c.  Private to vnfs/. */
#ifndef TOCHAIN_WAF_VNF_H
#define TOCHAIN_WAF_VNF_H

#include <stdbool.h>
#include <stdint.h>

#include "waf_engine.h"

/* True when @path reads as a vnfs/waf configuration file (key = value). */
bool waf_vnf_is_config(const char *path);
/* The rule id a waf Deny reports (see waf_vnf.c). */
uint32_t waf_vnf_rule(const struct waf_verdict *v);

#endif /* TOCHAIN_WAF_VNF_H */
