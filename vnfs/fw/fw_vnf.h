/* SPDX-License-Identifier: MIT */
/* The fw kind (vnf_kind_fw in vnf_kind.h); see fw_vnf.c.  Private to vnfs/. */
#ifndef TOCHAIN_FW_VNF_H
#define TOCHAIN_FW_VNF_H

#include <stdint.h>

#include "vnf.h"

/* The conntrack state (enum fw_ct) the fw kind gives @pk with flow @f (or NULL). */
uint8_t fw_vnf_ct(const struct vnf_pkt *pk, const struct vnf_flow *f);

#endif /* TOCHAIN_FW_VNF_H */
