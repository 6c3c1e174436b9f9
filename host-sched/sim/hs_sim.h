/* SPDX-License-Identifier: MIT */
/*
 * hs_sim — the tick-stepped host model behind tochain-sim.
 *
 * Model (see README): each tick is cut into `slices` sub-steps.  Traffic
 * arrives as a fluid at each chain's input queue (constant or on/off
 * bursts; beyond qcap it is dropped).  A running VNF service thread
 * processes f/s packets per second of CPU from its share (1/threads) of
 * what its hop received; a hop passes on what all of its VNFs finished;
 * service-partition VNFs (the paper's iptables, with the TOE) keep up and
 * only cost service CPU.  A running VM vCPU takes rx packets per second
 * from its chains' output queues, oldest first.  In sync mode the plan of
 * hs_sched_plan() is followed tick by tick, with the early-end rules; in
 * cfs mode each slice runs, on every pCPU, the runnable vCPU that ran
 * least (hs_cfs_plan with a one-slice period).
 *
 * No output; results go to the caller's struct.  Not thread-safe per run
 * object (there is none: each call is self-contained).
 */
#ifndef HS_SIM_H
#define HS_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "hs_scn.h"

enum hs_sim_mode {
	HS_SIM_SYNC = 0,
	HS_SIM_CFS = 1,
};

struct hs_sim_chain_res {
	double offered;		/* packets/s offered, after warmup */
	double achieved;	/* packets/s taken by the VM */
	double dropped;		/* packets/s dropped at a full input queue */
	double inq, outq;	/* time-averaged queue lengths, packets */
	uint32_t quota;		/* ticks per period of its VNF vCPUs (sum) */
	uint32_t vcpus;		/* its VNF vCPUs */
};

struct hs_sim_res {
	enum hs_sim_mode mode;
	uint32_t load;
	double cpu_sync;	/* busy share of the synchronous partition, 0..1 */
	double cpu_service;	/* busy share of the service partition */
	double cpu_host;	/* busy share of all cores */
	double jain;		/* over VMs, of achieved/SLA */
	uint64_t periods;	/* planning calls (sync) */
	double plan_us_median, plan_us_p99, plan_us_max;
	uint64_t deferred;	/* chain-periods deferred by Algorithm 1 */
	uint64_t early_input, early_output;	/* early-ended VNF slots */
	struct hs_sim_chain_res *chain;	/* caller's, scn->nchain entries */
	int want_plan;		/* caller: 1 text, 2 JSON, 0 none */
	char *plan;		/* sync: the last period's plan, malloc'd;
				 * the caller frees it */
};

/*
 * Runs scenario @scn in @mode under load number @load.  Returns 0, or
 * -EINVAL with @err set (admission refused: the reason names the chain),
 * or -ENOMEM.
 */
int hs_sim_run(const struct hs_scn *scn, enum hs_sim_mode mode, uint32_t load,
	       struct hs_sim_res *res, char *err, size_t errlen);

/* Admission control of the scenario's chains alone (what hs_sim_run would
 * refuse first), so that a caller can fail before printing anything. */
int hs_sim_admit(const struct hs_scn *scn, char *err, size_t errlen);

const char *hs_sim_mode_name(enum hs_sim_mode mode);

#endif
