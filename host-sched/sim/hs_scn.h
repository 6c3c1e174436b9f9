/* SPDX-License-Identifier: MIT */
/*
 * hs_scn — tochain-sim scenario files: parsing and validation.
 *
 * The format is line based; '#' starts a comment; blank lines are
 * ignored; each line is a keyword followed by positional words and
 * key=value options.  See host-sched/README.md for the reference.  The
 * parser takes the file's text (it does no I/O itself) and reports the
 * first problem as "FILE:LINE: reason".
 */
#ifndef HS_SCN_H
#define HS_SCN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_SCN_NAME 48
#define HS_SCN_MAX_HOPS 8
#define HS_SCN_MAX_PER_HOP 8
#define HS_SCN_MAX_COUNT 100000

struct hs_scn_vnf {
	char name[HS_SCN_NAME];
	uint64_t f_pps;		/* one service thread, dedicated pCPU */
	uint32_t threads;	/* max threads per chain */
	bool service;		/* runs in the service partition (with the TOE) */
};

struct hs_scn_vm {
	char name[HS_SCN_NAME];
	uint32_t nvcpu;
	double rx_pps;		/* packets one vCPU takes per second of CPU */
	double busy;		/* CPU share each vCPU wants for its own work */
	uint32_t group;		/* index of the `vm` line it came from */
};

/* A `vm` line; with count=N it stands for N VMs NAME-0 .. NAME-(N-1). */
struct hs_scn_vmgroup {
	char name[HS_SCN_NAME];
	uint32_t first;		/* index of its first VM */
	uint32_t count;
	uint32_t next;		/* member the next chain naming the group gets */
};

struct hs_scn_chain {
	char name[HS_SCN_NAME];
	uint32_t vm;		/* VM index */
	uint64_t sla_pps;
	double qcap;		/* input queue capacity, packets */
	uint32_t nhop;
	uint32_t hop_n[HS_SCN_MAX_HOPS];
	uint32_t hop_vnf[HS_SCN_MAX_HOPS][HS_SCN_MAX_PER_HOP];
};

struct hs_scn_load {
	char name[HS_SCN_NAME];
	double scale;		/* offered = scale * SLA, on average */
	double on_ms, off_ms;	/* bursty on/off; off_ms == 0: constant */
};

enum hs_scn_early_b {
	HS_SCN_EARLY_B_BUSY = 0,	/* E_i over periods the receiver was busy */
	HS_SCN_EARLY_B_LITERAL,		/* E_i over every period, as printed */
	HS_SCN_EARLY_B_OFF,		/* only condition (a) */
};

struct hs_scn {
	uint32_t cores;		/* host cores */
	uint32_t service;	/* of which the service partition */
	double tick_ms;
	uint32_t period;	/* ticks per period, g (and C of eq. 2) */
	double duration_s;	/* simulated time per (mode, load) run */
	double warmup_s;	/* excluded from the figures */
	uint32_t window;	/* w of the early-end condition (b) */
	uint32_t slices;	/* sub-steps per tick (CFS granularity) */
	double svc_cost_us;	/* service-partition CPU per packet */
	bool mode_sync, mode_cfs;
	enum hs_scn_early_b early_b;

	uint32_t nvnf, nvm, nchain, nload;
	struct hs_scn_vnf *vnf;
	struct hs_scn_vm *vm;
	struct hs_scn_chain *chain;
	struct hs_scn_load *load;
	uint32_t nvm_group;
	struct hs_scn_vmgroup *vm_group;
};

/*
 * Parses @text (NUL-terminated) into @scn.  @fname only labels errors.
 * Returns 0, or -EINVAL with @err = "FILE:LINE: reason" (or "FILE: reason"
 * for whole-file problems), or -ENOMEM.  @scn must be freed with
 * hs_scn_free() in every case.
 */
int hs_scn_parse(const char *text, const char *fname, struct hs_scn *scn,
		 char *err, size_t errlen);
void hs_scn_free(struct hs_scn *scn);

/* Number of sync-partition VNFs of a chain. */
uint32_t hs_scn_sync_vnfs(const struct hs_scn *scn, const struct hs_scn_chain *c);

#endif
