/* SPDX-License-Identifier: MIT */
/*
 * Changes of tochaind's state (td_change_*), and the apply command.
 *
 * Every change goes the same way: a complete next state is built and
 * validated (td_apply_plan, td_state_check, td_admit) while nothing has
 * changed yet; then it is realized: the TOEs are made to agree with it
 * (td_converge), it is saved, and only then is what is gone removed.
 * When a step fails the affected TOEs are converged back to the old
 * state and the old state stays.
 *
 * Runs on the daemon's one thread (td_priv.h).
 */
#ifndef TOCHAIN_TD_CHANGE_H
#define TOCHAIN_TD_CHANGE_H

#include <jansson.h>
#include <stdbool.h>

#include "td_state.h"

struct daemon;

/*
 * Plan topology @topo (td_apply.h; its reference is taken) against the
 * state and realize it; @what names the command in errors and the log.
 * The reply: with @say_plan the list of changes, else NULL on success.
 */
json_t *td_change_apply(struct daemon *d, json_t *topo, const char *what, bool say_plan);

/* Realize @next, the state with objects deleted (no plan needed).  The
 * failure reply, or NULL. */
json_t *td_change_remove(struct daemon *d, struct td_state *next, const char *what);

/* apply: a whole topology (docs/CONTROL-PROTOCOL.md). */
json_t *td_change_cmd_apply(struct daemon *d, json_t *args);

#endif
