/* SPDX-License-Identifier: MIT */
/*
 * The chain commands (td_chain_cmd_*): chain.add, chain.del, chain.ls,
 * chain.show, chain.set-sla (docs/CONTROL-PROTOCOL.md).  Handlers are
 * td_cmd_fn (td_priv.h).
 */
#ifndef TOCHAIN_TD_CHAIN_H
#define TOCHAIN_TD_CHAIN_H

#include <jansson.h>

struct daemon;
struct td_chain;

/* The chain named by args' "name", or NULL with *@fail set to the refusal. */
struct td_chain *td_chain_need(struct daemon *d, json_t *args, json_t **fail);

json_t *td_chain_cmd_add(struct daemon *d, json_t *args);
json_t *td_chain_cmd_del(struct daemon *d, json_t *args);
json_t *td_chain_cmd_ls(struct daemon *d, json_t *args);
json_t *td_chain_cmd_show(struct daemon *d, json_t *args);
json_t *td_chain_cmd_set_sla(struct daemon *d, json_t *args);

#endif
