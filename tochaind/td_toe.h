/* SPDX-License-Identifier: MIT */
/*
 * The TOE control client (td_toe_*): a VM's TOE serves the control
 * protocol on R.ctl next to its region (host-toe/toe/README.md: vnf.*,
 * chain.*, stats).  One request per call, at most TD_TOE_CALL_MS.
 */
#ifndef TOCHAIN_TD_TOE_H
#define TOCHAIN_TD_TOE_H

#include <jansson.h>
#include <stddef.h>

#include "td_state.h"

#define TD_TOE_CALL_MS 5000

/*
 * Send @cmd with @args (a reference is taken) to @vm's TOE.  Its "result"
 * object (the caller's reference), or NULL with @err naming the VM: the
 * socket could not be reached, the TOE refused, or it gave no result.
 */
json_t *td_toe_call(const struct td_vm *vm, const char *cmd, json_t *args, char *err,
		    size_t errlen);

/*
 * @vm's chains are set (or it has none): its TOE, started with --hold
 * (td_vm.c), may serve inbound connections now (chains.ready).  Logs
 * a failure: the TOE then stays held, fail-closed, until the next try.
 */
void td_toe_ready(const struct td_vm *vm);

/* The object of array @list whose string member @key is @val, or NULL. */
json_t *td_toe_find(json_t *list, const char *key, const char *val);

#endif
