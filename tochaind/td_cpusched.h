/* SPDX-License-Identifier: MIT */
/*
 * tochaind's registry with the CPU scheduler (td_cpusched_*): the CPU
 * scheduler is its own daemon, tochain-sched (host-sched/README.md), at
 * --sched-socket.  Not to be confused with the TOE's packet scheduler.
 *
 * What is registered with it (sched.register): the service threads of
 * the instances of a chain with an SLA (role vnf, once all their threads
 * run; again when an instance was replaced, and after sched.unregister
 * when the SLA changed), only the R threads of each VNF that eq. 2 asks
 * for (the TOE hands work to those only: vnf.run); a VM's SLA covers
 * both directions: when the VM's chain of the other direction has no SLA
 * of its own, its VNFs are registered under this chain too and
 * tochain-sched counts both counter blocks (index2); and each VM run by a
 * libvirt domain (role vm, once: tochain-sched follows the domain's vCPU
 * threads itself).  An unreachable tochain-sched is not an error: the
 * note says so, and the next tick tries again.  The sched.show and
 * sched.mode commands are passed to it as they are.
 *
 * The registry lives in the daemon object (td_priv.h) and is not
 * persisted; runs on the daemon's one thread.
 */
#ifndef TOCHAIN_TD_CPUSCHED_H
#define TOCHAIN_TD_CPUSCHED_H

#include <jansson.h>
#include <stdbool.h>

#include "td_state.h"

struct daemon;

/* VNFs a chain's registration covers: its own and the other direction's. */
#define TD_CPUSCHED_VNFS (2 * TD_MAX_HOPS * TD_MAX_PER_HOP)

struct td_cpusched_chain {	/* a chain's registration with tochain-sched */
	char chain[TD_OBJ_NAME_MAX];	/* "" : slot free */
	bool done;		/* registered (or refused: see note) */
	bool registered;	/* tochain-sched has it (sched.unregister before an SLA change) */
	uint64_t sla;		/* the SLA it was registered (or refused) with */
	pid_t pids[TD_CPUSCHED_VNFS];	/* instances registered */
	char note[200];
};

struct td_cpusched_vm {		/* a domain VM's vCPUs with tochain-sched */
	char vm[TD_OBJ_NAME_MAX];	/* "" : slot free */
	bool done;		/* registered (or refused: see note) */
	char note[200];
};

struct td_cpusched {
	struct td_cpusched_chain chains[TD_MAX_CHAINS];
	struct td_cpusched_vm vms[TD_MAX_VMS];
};

/* Every ~500 ms: forget what is gone, register what is due. */
void td_cpusched_tick(struct daemon *d);

/* What tochain-sched knows of chain @c, for `chain show` ("no SLA", ...). */
const char *td_cpusched_chain_note(struct daemon *d, const struct td_chain *c);

/* What tochain-sched knows of VM @vm's vCPUs (a domain VM), or NULL. */
const char *td_cpusched_vm_note(struct daemon *d, const char *vm);

/* sched.show, sched.mode: @cmd sent to tochain-sched, its reply returned as it is. */
json_t *td_cpusched_cmd_forward(struct daemon *d, const char *cmd, json_t *args);

/*
 * tochain-sched's sched.show result (host-sched/README.md: mode, periods,
 * early_ends, chains, plan, ...), asked within @timeout_ms; NULL when
 * its socket is absent, it does not answer or refuses.  For the metrics.
 */
json_t *td_cpusched_show(struct daemon *d, int timeout_ms);

#endif
