/* SPDX-License-Identifier: MIT */
/*
 * The TOE's service-chain stage (toe_chain_*): one packet scheduler
 * (host-toe/chain/ch_psched.h) for the VM's two chains, chain 0 = in (kernel socket
 * -> VNFs -> guest) and chain 1 = out (guest -> VNFs -> kernel socket),
 * and the files next to the region file R that go with it:
 *   R.counters  per-chain counters (host region, block 0 = in, 1 = out)
 *   R.flows     the flow table (include/tochain/ch_flow.h), granted read-only to VNFs
 *   R.out       host-only data region: the TOE's private copy of each
 *               outbound payload, so that what the VNFs approve is byte
 *               for byte what is sent (DESIGN section 3, TOCTOU);
 *               header name "<name>.out"
 *   R.vnf-NAME  each VNF's region (ch_psched_vnf_add); header name
 *               "<name>.vnf-NAME" (toe_chain_region_name)
 * all removed by toe_chain_destroy().  Data region ids in descriptors:
 * 0 = the guest region R (inbound payload), 1 = R.out (outbound copies).
 *
 * THREADS.  Two users:
 *   - the TOE's loop thread (the data path): toe_chain_active, _submit,
 *     _take, the R.out slot calls, the flow calls, _deny_note, _arm;
 *   - the control thread (toe_ctl.c): the vnf/chain/stats calls, which
 *     hold tc->lock among themselves.
 * They share only: the scheduler (its own rules, ch_psched.h), the
 * configured flag of each direction (store-release by control after the
 * chain's table is published, load-acquire by the loop), and the denial
 * log (under lock).  A direction stays "active" for the loop while it is
 * configured or while descriptors it submitted are still out, so that a
 * deleted chain drains in order before the direction goes straight
 * through again.
 */
#ifndef TOCHAIN_TOE_CHAIN_H
#define TOCHAIN_TOE_CHAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tochain/ch_flow.h"
#include "ch_psched.h"

#define TOE_DIR_IN		0
#define TOE_DIR_OUT		1
#define TOE_NAME_MAX		32	/* VNF and chain names: 1..32 of [a-z0-9_-] */
#define TOE_DENIALS		64	/* kept for stats */
#define TOE_REGION_GUEST	0	/* ch_pkt.region of inbound payload */
#define TOE_REGION_OUT		1	/* ch_pkt.region of outbound copies */
#define TOE_VNF_HANG_NS		5000000000ull	/* work out, no progress: the VNF is hung */

struct toe_chain;

/*
 * Create the scheduler and its files for region file @region_path whose
 * header name is @name (the TOE's --name), with @nbufs buffers of
 * @slot_size bytes, @out_nbufs private outbound slots and a flow table of
 * @nflows entries.  The scheduler runs in the loop that sleeps on epoll
 * set @epfd: its VNFs' bells join the set with data.u64 = @tag | an id
 * for toe_chain_bell_rang() (ch_psched_loop_attach()).  NULL with errno.
 */
struct toe_chain *toe_chain_create(const char *region_path, const char *name, uint32_t nbufs,
				   uint32_t slot_size, uint32_t out_nbufs, uint32_t nflows,
				   int epfd, uint64_t tag);

/*
 * Header names of the regions next to R, unique on the host because TOE
 * names are (a guest's driver names its devices after them and refuses a
 * second device of a taken name): @toe @tag @x, i.e. "<toe>.out" (@tag
 * ".out", @x "") and "<toe>.vnf-<X>" (@tag ".vnf-").  When that is longer
 * than TCR_NAME_MAX - 1 characters: "<toe prefix>@tag.<h>", h = 12 hex
 * digits of the FNV-1a 64 hash of the full name (its top 48 bits).  Its
 * last '.'-component is then the hash, never "out" nor "vnf-..." as in an
 * untruncated name (VNF names have no '.'), so a hashed name cannot equal
 * an untruncated one; two hashed names clash only if 48-bit hashes do.
 */
void toe_chain_region_name(char out[TCR_NAME_MAX], const char *toe, const char *tag,
			   const char *x);
/* Stop the scheduler, free everything, remove the files. */
void toe_chain_destroy(struct toe_chain *tc);

/* ---- data path (the TOE's loop thread) ---- */

/* Must descriptors of direction @dir go through the scheduler now? */
bool toe_chain_active(struct toe_chain *tc, uint32_t dir);
/*
 * Submit one descriptor on @dir's chain; false: the input queue is full.
 * The scheduler, run by the same loop, takes a turn's submits at the
 * loop's next toe_chain_poll().
 */
bool toe_chain_submit(struct toe_chain *tc, uint32_t dir, const struct ch_pkt *p);
/* Take up to @n results of @dir; returns how many. */
unsigned int toe_chain_take(struct toe_chain *tc, uint32_t dir, struct ch_result *r,
			    unsigned int n);
/* Descriptors of @dir submitted and not taken back yet. */
uint32_t toe_chain_outstanding(const struct toe_chain *tc, uint32_t dir);
/*
 * The scheduler's turn (ch_psched_poll()): the loop calls it after its
 * events and after the turn's submits; returns how much it did.  The loop
 * thread is registered with liburcu.
 */
unsigned int toe_chain_poll(struct toe_chain *tc);
/* An event of the scheduler's (data.u64 = tag | @id) came. */
void toe_chain_bell_rang(struct toe_chain *tc, uint32_t id);
/*
 * Before sleeping: false when results or verdicts wait; true: sleep at
 * most *@ns (UINT64_MAX: no bound), then toe_chain_sleep_done().
 */
bool toe_chain_sleep_prepare(struct toe_chain *tc, uint64_t *ns);
void toe_chain_sleep_done(struct toe_chain *tc);
/* Results waiting in either output queue. */
bool toe_chain_results_waiting(struct toe_chain *tc);

/* R.out: a free slot (index) or -ENOBUFS; its bytes; give it back. */
int toe_chain_out_alloc(struct toe_chain *tc);
uint8_t *toe_chain_out_slot(struct toe_chain *tc, uint32_t slot);
void toe_chain_out_free(struct toe_chain *tc, uint32_t slot);
uint32_t toe_chain_out_nbufs(const struct toe_chain *tc);

/* The flow table (ch_flow.h calls on it; loop thread only). */
struct ch_flows *toe_chain_flows(struct toe_chain *tc);
/* Close flow @idx now (stamped with both chains' arrivals). */
void toe_chain_flow_close(struct toe_chain *tc, uint32_t idx);
/* Free closed flows whose grace period passed (every loop turn). */
void toe_chain_flow_reclaim(struct toe_chain *tc);

/*
 * Record a denied result (stats "denials") and return the names to log:
 * the chain's name and the denying VNF's (or "-").
 */
void toe_chain_deny_note(struct toe_chain *tc, const struct ch_result *r, const char *conn,
			 char chain_name[TOE_NAME_MAX + 1], char vnf_name[TOE_NAME_MAX + 1]);
/*
 * Count a result that carries an Alert (r->alert_vnf, stats "alerted")
 * and return the names to log: the chain's and the alerting VNF's.
 */
void toe_chain_alert_note(struct toe_chain *tc, const struct ch_result *r,
			  char chain_name[TOE_NAME_MAX + 1], char vnf_name[TOE_NAME_MAX + 1]);
const char *toe_chain_reason_name(uint32_t reason);

/* ---- control (the control thread; each call validates everything first) ---- */

bool toe_chain_name_valid(const char *name);

struct toe_vnf_args {
	char name[TOE_NAME_MAX + 1];
	uint32_t threads;		/* 1..VNF_MAX_THREADS */
	uint32_t policy;		/* enum ch_fail_policy */
	uint32_t dispatch;		/* enum ch_dispatch */
};

/*
 * 0 (*@created true, or false when the same name exists with the same
 * args), -EEXIST (same name, other args), -ENOSPC, -errno.  @region gets
 * the VNF's region path.
 */
int toe_chain_vnf_add(struct toe_chain *tc, const struct toe_vnf_args *a, bool *created,
		      uint32_t *id, char *region, size_t region_size);
/* First attach sets the pid; a later one restarts the VNF.  -ENOENT. */
int toe_chain_vnf_attach(struct toe_chain *tc, const char *name, pid_t pid, uint32_t *epoch);
/* -ENOENT, -EBUSY (a chain uses it). */
int toe_chain_vnf_del(struct toe_chain *tc, const char *name);
/*
 * Hand work only to the first @threads service threads of VNF @name (the
 * ones the CPU scheduler runs, eq. 2).  -ENOENT, -EINVAL (0 or more than
 * it has).
 */
int toe_chain_vnf_run(struct toe_chain *tc, const char *name, uint32_t threads);

struct toe_vnf_view {
	struct toe_vnf_args a;
	uint32_t id;
	uint32_t running;		/* threads that get work (toe_chain_vnf_run) */
	pid_t pid;
	struct ch_vnf_info info;
};
/* Up to @max VNFs into @out; returns how many. */
unsigned int toe_chain_vnf_list(struct toe_chain *tc, struct toe_vnf_view *out,
				unsigned int max);

struct toe_chain_spec {
	char name[TOE_NAME_MAX + 1];
	uint32_t nhops;
	uint32_t nvnfs[CH_MAX_HOPS];
	char vnf[CH_MAX_HOPS][CH_MAX_PAR][TOE_NAME_MAX + 1];
};
/*
 * Set (create or replace under RCU) the chain of @dir.  -EINVAL (bad
 * spec), -ENOENT (unknown VNF; *@bad names it).  @version: the table's.
 */
int toe_chain_set(struct toe_chain *tc, uint32_t dir, const struct toe_chain_spec *spec,
		  uint64_t *version, const char **bad);
/* Back to straight through; -ENOENT when no chain is set. */
int toe_chain_del(struct toe_chain *tc, uint32_t dir);

struct toe_chain_stat {
	bool set;
	char name[TOE_NAME_MAX + 1];
	uint64_t version;
	uint32_t nhops;
	uint64_t arrivals, taken, finished, denied;
	uint64_t alerted;		/* results with an Alert the TOE took */
	uint32_t in_qlen, out_qlen;
	double pps;
};
struct toe_denial {
	double time;			/* unix seconds */
	uint32_t dir;
	char chain[TOE_NAME_MAX + 1];
	char vnf[TOE_NAME_MAX + 1];
	uint32_t rule;
	uint32_t reason;		/* enum ch_reason */
	uint32_t incident;		/* a VNF's answer carried it; 0: none */
	char conn[112];			/* SRC:PORT>DST:PORT */
};
/* Both directions, and the denial log oldest first (returns how many). */
unsigned int toe_chain_stats(struct toe_chain *tc, struct toe_chain_stat st[2],
			     struct toe_denial *den, unsigned int max);
/* Sample the finished counts for pps (the control thread, every ~250 ms). */
void toe_chain_sample(struct toe_chain *tc);

#endif /* TOCHAIN_TOE_CHAIN_H */
