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
struct td_chain;
struct td_vm;

json_t *td_capture_cmd_set(struct daemon *d, json_t *args);
json_t *td_capture_cmd_ls(struct daemon *d, json_t *args);
json_t *td_capture_cmd_get(struct daemon *d, json_t *args);

/*
 * Capture is the TOE's state, per direction, and lives only as long as the
 * TOE: capture.set also writes (on) or removes (off) CHAIN-DIR/.capture.json
 * with its kib and max_bytes, and td_converge calls these two:
 *  - td_capture_restore once it has set @ch on a TOE that did not run it
 *    (a new chain, or a restarted TOE): capture back on if the file says so;
 *  - td_capture_forget once it has deleted direction @dir (chain @chain) on
 *    the TOE: capture of that direction off (a later chain of the same
 *    direction must not write into this chain's directory), file removed.
 * Failures are logged; they never fail the convergence.
 */
void td_capture_restore(struct daemon *d, const struct td_vm *vm, const struct td_chain *ch);
void td_capture_forget(struct daemon *d, const struct td_vm *vm, const char *dir,
		       const char *chain);

#endif
