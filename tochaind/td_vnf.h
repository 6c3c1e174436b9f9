/* SPDX-License-Identifier: MIT */
/*
 * The VNF commands (td_vnf_cmd_*): vnf.add, vnf.del, vnf.ls, vnf.show,
 * vnf.calibrate (docs/CONTROL-PROTOCOL.md).  A VNF is a definition in the
 * state; its instances are td_vnfinst.h's.  Handlers are td_cmd_fn
 * (td_priv.h).
 */
#ifndef TOCHAIN_TD_VNF_H
#define TOCHAIN_TD_VNF_H

#include <jansson.h>

struct daemon;

json_t *td_vnf_cmd_add(struct daemon *d, json_t *args);
json_t *td_vnf_cmd_del(struct daemon *d, json_t *args);
json_t *td_vnf_cmd_ls(struct daemon *d, json_t *args);
json_t *td_vnf_cmd_show(struct daemon *d, json_t *args);
json_t *td_vnf_cmd_calibrate(struct daemon *d, json_t *args);

#endif
