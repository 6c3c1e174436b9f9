/* SPDX-License-Identifier: MIT */
/*
 * The capture commands (td_capture_cmd_*): capture.set, capture.ls,
 * capture.get (docs/CONTROL-PROTOCOL.md).  A chain's captures live in
 * STATE_DIR/captures/VM/CHAIN/, written there by the VM's TOE
 * (host-toe/toe/toe_capture.h) and bounded in size by it; tochaind only
 * creates the directory, tells the TOE, lists and reads.  Handlers are
 * td_cmd_fn (td_priv.h).
 */
#ifndef TOCHAIN_TD_CAPTURE_H
#define TOCHAIN_TD_CAPTURE_H

#include <jansson.h>

#define TD_CAP_LIST_MAX		200		/* newest files listed per chain */
#define TD_CAP_FETCH_MAX	(160 * 1024)	/* a fetched file fits one reply in base64 */

struct daemon;

json_t *td_capture_cmd_set(struct daemon *d, json_t *args);
json_t *td_capture_cmd_ls(struct daemon *d, json_t *args);
json_t *td_capture_cmd_get(struct daemon *d, json_t *args);

#endif
