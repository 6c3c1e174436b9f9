/* SPDX-License-Identifier: MIT */
/* The waf kind (vnf_kind_waf in vnf_kind.h); see vnf_waf.c.  Private to vnfs/. */
#ifndef TOCHAIN_VNF_WAF_H
#define TOCHAIN_VNF_WAF_H

#include <stdbool.h>
#include <stdint.h>

#include "waf_engine.h"

/* True when @path reads as a vnfs/waf configuration file (key = value). */
bool vnf_waf_is_config(const char *path);
/* The rule id a waf Deny reports (see vnf_waf.c). */
uint32_t vnf_waf_rule(const struct waf_verdict *v);

#endif /* TOCHAIN_VNF_WAF_H */
