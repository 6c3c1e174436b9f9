/* SPDX-License-Identifier: MIT */
/*
 * Declarative apply and SLA admission (td_apply_*, td_admit): pure
 * functions over states, no I/O (the rules-file comparison is a callback),
 * so the whole of "what would change" is decided before anything does.
 *
 * A topology is the JSON object sfc-ctl builds from a topology file
 * (docs/CONTROL-PROTOCOL.md):
 *   {"vms": [{"name","ip","region_size"?,"line"?}],
 *    "vnfs": [VNF as vnf.add takes it, "line"?],
 *    "chains": [chain as chain.add takes it, "line"?],
 *    "prune": bool}
 * Objects in the topology are created, or updated where they differ;
 * objects not in it are kept, unless "prune" is true: then they are
 * deleted (chains, then VNFs, then VMs).  Errors name the topology line.
 */
#ifndef TOCHAIN_TD_APPLY_H
#define TOCHAIN_TD_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "td_state.h"

#define TD_MAX_CHANGES (TD_MAX_VMS + TD_MAX_VNFS + TD_MAX_CHAINS)
#define TD_ADMIT_G 50		/* ticks per period, tochain-sched's default */

enum td_op { TD_OP_CREATE, TD_OP_UPDATE, TD_OP_DELETE };
enum td_obj { TD_OBJ_VM, TD_OBJ_VNF, TD_OBJ_CHAIN };

struct td_change {
	enum td_op op;
	enum td_obj obj;
	char name[TD_OBJ_NAME_MAX];
	bool rules;		/* a VNF update that changes only its rules/rate */
};

struct td_plan {
	unsigned int n;
	struct td_change c[TD_MAX_CHANGES];
};

/* Does the content of @v's rules file differ from what runs? */
typedef bool (*td_rules_changed_fn)(const struct td_vnf *v, void *arg);

/*
 * Compute @next = @cur changed by @topo, and the changes in @plan.  The
 * whole topology is validated, @next cross-checked (td_state_check) and,
 * when anything changes, admitted (td_admit with @npcpu).  0, or -EINVAL
 * with @err ("line N: ..." when the entry carries a line).  @next and
 * @plan are scratch on failure.
 */
int td_apply_plan(const struct td_state *cur, json_t *topo, unsigned int npcpu,
		  td_rules_changed_fn rules_changed, void *arg, struct td_state *next,
		  struct td_plan *plan, char *err, size_t errlen);

/* [{"op":"create","object":"vm","name":..}, ...] */
json_t *td_plan_json(const struct td_plan *p);

/*
 * SLA admission of every chain of @st with an SLA, through host-sched's
 * hs_admit on @npcpu CPUs: each VNF of such a chain needs an f (--rate or
 * calibrated).  0, or -EINVAL/-ERANGE/-E2BIG/-ENOSPC with @why.
 */
int td_admit(const struct td_state *st, unsigned int npcpu, char *why, size_t whylen);

/* The CPU quota admission gives chain @name: ticks per period summed over
 * its VNF vCPUs (of TD_ADMIT_G per CPU) and their count.  0, or -ENOENT
 * (no SLA), or an admission error. */
int td_chain_quota(const struct td_state *st, unsigned int npcpu, const char *name,
		   uint64_t *ticks, uint32_t *nvcpu);

/* Do two VNF definitions differ in what the TOE or the process sees
 * (kind, threads, on-failure, args, libvirt domain)? */
bool td_vnf_runtime_differs(const struct td_vnf *a, const struct td_vnf *b);

/* Do two chains differ in hops? */
bool td_chain_hops_differ(const struct td_chain *a, const struct td_chain *b);

#endif
