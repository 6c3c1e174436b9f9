/* SPDX-License-Identifier: MIT */
/*
 * A VM's TOE made to run the chains of a state (td_converge): it is asked
 * what it runs (vnf.ls, stats) and sent only the difference, so chains a
 * TOE still runs are never set again.  This is how a change is realized
 * (td_change.h) and how a restarted daemon or TOE is repaired
 * (td_repair.h).  Runs on the daemon's one thread (td_priv.h).
 */
#ifndef TOCHAIN_TD_CONVERGE_H
#define TOCHAIN_TD_CONVERGE_H

#include <stddef.h>

#include "td_state.h"

struct daemon;

/*
 * Make @vm's TOE run exactly @st's chains of @vm, with one live instance
 * per VNF they use, and nothing else.  Instance pids are written to @st.
 * @prev: the state the TOE was last converged to, or NULL (repair).
 * 0, or -errno with @err.
 */
int td_converge(struct daemon *d, struct td_state *st, struct td_vm *vm,
		struct td_state *prev, char *err, size_t errlen);

#endif
