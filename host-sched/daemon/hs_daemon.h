/* SPDX-License-Identifier: MIT */
/*
 * hs_daemon — tochain-sched, the daemon that runs the synchronous CPU
 * scheduler (hs_sched) on real threads (hsd_*).
 *
 * Vocabulary.  A *thread* is a registered vCPU thread: a VNF service
 * thread (role vnf: chain, VNF, region + chain index of its counters) or
 * a VM vCPU thread (role vm).  Threads register over the control socket
 * (hs_daemon_ctl.c), or the daemon finds a libvirt domain's vCPU
 * threads itself (hsd_register_domain, hs_libvirt).  A thread's index in the registry is its vCPU id in the
 * library's configuration; the registry only grows (dead threads are
 * marked and left out of the configuration; a chain whose threads all
 * exited is marked dead too, its name can be registered again, and its
 * region is released when no live chain uses it).
 *
 * Per period (g ticks of tick_us) in sync mode the scheduler thread
 *   1. snapshots every chain's counters (tcr_counters_snapshot: a counter
 *      that goes back or a queue longer than the ring refuses the chain's
 *      numbers for the period: it is planned with zero stats) and each
 *      VNF thread's busy time (/proc/TID/schedstat: running + runnable),
 *      which with the packets the chain finished feed the quotas back
 *      (hs_rate.h),
 *   2. calls hs_sched_plan() and lays the plan out on a tick timeline per
 *      pCPU (hsd_timeline: the VNF slots of one chain start at the same
 *      tick on all their pCPUs, VM slots fill the remaining ticks),
 *   3. pins each thread to its pCPU and then, tick by tick, thaws the
 *      owner of each pCPU's tick and freezes the others (freezer gating),
 *      or writes each thread's ticks as a CFS quota per period once
 *      (quota gating),
 *   4. at each tick takes the chains' early-end flags and hands the rest
 *      of a flagged chain's VNF slots to the VM threads of those pCPUs;
 *      a chain whose slots ended and whose input queue (either block)
 *      holds packets again takes its handed-off ticks back (re-wake),
 *   5. closes the period in the counters (what the receiver took).
 * In cfs mode every thread is thawed, unpinned within the synchronous
 * partition and uncapped: the stock scheduler decides (TOChain-CFS).
 *
 * The implementation is cut by concept into hs_daemon*.c; the private
 * hs_daemon_int.h lists the files and the order they call each other in.
 *
 * Locking: one mutex (hsd.lock) guards everything below; the scheduler
 * thread holds it while it plans and at each tick's gating, the control
 * thread while it serves a request.  Neither sleeps with it held.
 */
#ifndef HS_DAEMON_H
#define HS_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <tochain/counters.h>
#include <tochain/region.h>

#include "hs_chain.h"
#include "hs_enforce.h"
#include "hs_libvirt.h"
#include "hs_plan.h"
#include "hs_sched.h"
#include "hs_vmshare.h"

#define HSD_MAX_PCPU	64
#define HSD_MAX_THREADS	256
#define HSD_MAX_CHAINS	64
#define HSD_MAX_VMS	64
#define HSD_MAX_REGIONS	16
#define HSD_MAX_TICKS	1000
#define HSD_MAX_VMQ	32
#define HSD_NAME_MAX	48
#define HSD_MAX_DOMAINS	16
#define HSD_DEFAULT_SOCKET	"/run/tochain/sched.sock"

enum hsd_mode { HSD_SYNC = 0, HSD_CFS = 1 };
enum hsd_gating { HSD_GATE_FREEZER = 0, HSD_GATE_QUOTA = 1 };
enum hsd_role { HSD_ROLE_VNF = 0, HSD_ROLE_VM = 1 };

struct hsd_cfg {
	uint32_t tick_us;		/* tick length (10000) */
	uint32_t g;			/* ticks per period (50) */
	uint32_t npcpu;			/* synchronous partition */
	int pcpu[HSD_MAX_PCPU];		/* its CPU numbers */
	char sync_cpus[128];		/* the same as a list, "0-1" */
	char service_cpus[128];		/* where the daemon runs, "" anywhere */
	enum hsd_mode mode;
	enum hsd_gating gating;
};

/* What a thread asks to be (sched.register). */
struct hsd_reg {
	enum hsd_role role;
	pid_t tid;
	const char *vm;			/* vm: its VM; vnf: the receiving VM (may be NULL: the TOE) */
	const char *chain;		/* vnf */
	const char *vnf;		/* vnf: VNF name (NULL: "vnf") */
	uint64_t sla_pps;		/* vnf */
	uint64_t f_pps;			/* vnf */
	const char *region;		/* vnf: region file holding the chain's counters */
	uint32_t index;			/* vnf: chain index in that region */
	bool has_index2;		/* vnf: the SLA covers a second block ... */
	uint32_t index2;		/* ... of the same region: the VM's other direction */
	uint32_t threads;		/* vnf: service threads the VNF will
					 * register (0: 1); it is planned once
					 * all of them did */
};

struct hsd_thread {
	pid_t tid;
	enum hsd_role role;
	uint32_t chain, vnf, vm;	/* registry indices (vm: UINT32_MAX none) */
	bool dead;
	bool enforced;			/* enf holds a group */
	struct hse_thread enf;
	uint64_t busy_ns;		/* running + runnable so far (schedstat),
					 * read at the last period start */
	bool have_busy;			/* busy_ns read at least once */
	uint64_t seen_ns;		/* busy time read during this period ... */
	uint32_t seen_k;		/* ... at this tick (NONE: not yet) */
	bool lv;			/* a vCPU of libvirt domain dom[dom] */
	uint32_t dom;
	int vcpu_index;			/* its libvirt/QEMU vCPU index */
};

/*
 * A VM registered by libvirt domain (sched.register {"role": "vm",
 * "domain": NAME}).  Its vCPU threads are discovered by the daemon and
 * enforced through hs_libvirt, never put in hs_enforce's groups.  Each
 * period the daemon asks libvirt for the domain's id: a new id (QEMU
 * restarted) or a dead vCPU thread makes it read the threads again; a
 * domain that is defined but not running keeps its entry (its threads
 * are dropped) until it runs again; a domain libvirt no longer knows is
 * dropped (gone), its name can be registered again.
 */
struct hsd_domain {
	char name[HSD_NAME_MAX];
	uint32_t vm;			/* registry VM */
	bool gone;
	bool running;			/* threads registered for st.id */
	struct hsl_dom st;		/* vCPUs and what was written */
	uint32_t slot[HSL_MAX_VCPUS];	/* registry thread of st.vcpu[i] */
	uint64_t restarts;		/* threads read again */
	uint64_t errors;		/* libvirt calls that failed */
	char last_error[256];
};

struct hsd_vnf {
	char name[HSD_NAME_MAX];
	uint64_t f_pps;
	uint32_t threads;		/* declared service threads */
	uint32_t registered;		/* of which registered and alive */
};

struct hsd_chain {
	char name[HSD_NAME_MAX];
	uint64_t sla_pps;
	uint32_t vm;			/* registry index, UINT32_MAX: TOE */
	uint32_t region;		/* index into hsd.region */
	uint32_t index;			/* chain block in the region */
	uint32_t index2;		/* the other direction's block, NONE: none */
	uint32_t nvnf;
	struct hsd_vnf vnf[HS_MAX_VNFS];
	/* counters */
	struct tcr_counters_snap prev;
	bool have_prev;
	uint64_t bad;			/* snapshots refused */
	uint64_t taken_last;		/* taken at the last period close */
	struct tcr_counters_snap prev2;	/* the same for block index2 */
	bool have_prev2;
	uint64_t taken_last2;
	uint64_t served_last;		/* SLA packets (block index) last period */
	bool standby;			/* its window came this period: its threads
					 * wait thawed within budget (hs_daemon_tick.c) */
	bool ended_b;			/* ended by (b) this period: no standby */
	uint64_t early_ends;		/* slots ended early */
	uint64_t rewakes;		/* ended slots given back (hs_daemon_tick.c) */
	bool dead;			/* all its threads exited: name free */
};

struct hsd_vm {
	char name[HSD_NAME_MAX];
};

struct hsd_region {
	char path[256];			/* "" once released */
	struct tcr_region *r;		/* NULL once no live chain uses it */
};

/* Registry -> library configuration. */
struct hsd_cfgset {
	uint32_t nchain, nvm;
	struct hs_chain_cfg chain[HSD_MAX_CHAINS];
	struct hs_vm_cfg vm[HSD_MAX_VMS];
	uint32_t chain_of[HSD_MAX_CHAINS];	/* cfg chain -> registry chain */
	uint32_t vm_cfg_of[HSD_MAX_VMS];	/* registry VM -> cfg VM or UINT32_MAX */
};

struct hsd {
	pthread_mutex_t lock;
	struct hsd_cfg cfg;
	enum hsd_mode mode_next;	/* sched.mode: applied at the next period */
	struct hse *enf;		/* NULL: plan only, nothing enforced */
	struct hsl *lv;			/* NULL: no libvirt, domains refused;
					 * set after hsd_init, owned by the caller */

	uint32_t nthread, nchain, nvm, nregion;
	struct hsd_thread thread[HSD_MAX_THREADS];
	struct hsd_chain chain[HSD_MAX_CHAINS];
	struct hsd_vm vm[HSD_MAX_VMS];
	struct hsd_region region[HSD_MAX_REGIONS];
	uint32_t ndom;
	struct hsd_domain dom[HSD_MAX_DOMAINS];

	/* The library's view, rebuilt on each registry change into the
	 * spare set (hs_sched keeps its configuration by reference). */
	struct hs_sched *sched;
	struct hsd_cfgset set[2];
	struct hsd_cfgset *cs;		/* the one sched uses */
	struct hs_plan *plan;
	bool plan_valid;		/* plan holds this period's plan */
	bool timeline_valid;		/* timeline too (survives a rebuild) */

	/* This period's timeline: owner thread of each tick, -1 idle. */
	int32_t *timeline;		/* npcpu * g */
	int32_t cur_owner[HSD_MAX_PCPU];
	uint32_t pcpu_of[HSD_MAX_THREADS];	/* this period, UINT32_MAX none */
	uint32_t ticks_of[HSD_MAX_THREADS];	/* this period's planned ticks */
	int32_t vmq[HSD_MAX_PCPU][HSD_MAX_VMQ];	/* VM threads per pCPU, plan order */
	uint32_t nvmq[HSD_MAX_PCPU];
	uint32_t vmq_left[HSD_MAX_PCPU][HSD_MAX_VMQ];	/* timeline build: ticks to lay out */
	uint32_t vmq_rr[HSD_MAX_PCPU];		/* early-end hand-off, round robin */
	bool co_thawed[HSD_MAX_THREADS];	/* thawed beside its pCPU's owner:
						 * a gang member whose chain runs */
	uint32_t given_up[HSD_MAX_THREADS];	/* VNF ticks early end handed off
						 * this period, not taken back yet */
	int busy_fd[HSD_MAX_THREADS];	/* /proc/TID/schedstat kept open, -1 none */
	pid_t busy_fd_tid[HSD_MAX_THREADS];	/* ... of this tid */
	enum hsd_mode mode_applied;
	uint64_t period;		/* periods run */

	/* Measurements. */
	uint64_t cpu_mark_us;		/* process CPU at the last period start */
	uint64_t cpu_us_last;		/* daemon CPU in the last period */
	uint64_t cpu_us_total;
	uint64_t cpu_periods;
	uint64_t gate_writes;		/* freezer writes, total */
	uint64_t early_total;
	uint64_t rewake_total;
	char plan_text[16384];
	char plan_json[32768];
};

/* Parses a CPU list "0-1,3" into cfg->pcpu/npcpu; 0 or -EINVAL. */
int hsd_parse_cpus(const char *list, int *cpus, uint32_t max, uint32_t *n);

/* Defaults: tick 10 ms, 50 ticks, sync mode, freezer gating, cpus 0. */
void hsd_cfg_default(struct hsd_cfg *cfg);

/*
 * Changes the tick and the ticks per period at run time (sched.period;
 * caller holds d->lock).  Admission runs again with the new g; until the
 * next period boundary nothing is gated (the threads keep their state),
 * from there on the new period is laid out.  0, or with @why: -EINVAL
 * (tick outside 1..1000 ms, g outside 1..HSD_MAX_TICKS, quota gating
 * with a period over 1 s), -ENOMEM, admission's refusal; nothing
 * changes on error.
 */
int hsd_set_period(struct hsd *d, uint32_t tick_us, uint32_t g, char *why, size_t len);

/* @enf may be NULL (nothing enforced).  0, -EINVAL, -ENOMEM. */
int hsd_init(struct hsd *d, const struct hsd_cfg *cfg, struct hse *enf);
/* Thaws and releases every thread, detaches regions, frees. */
void hsd_fini(struct hsd *d);

/*
 * Validates and adds a thread; rebuilds the scheduler (admission runs
 * again: a refused set changes nothing).  Caller holds d->lock.
 * Returns 0 or -errno with @why: EINVAL (bad field, inconsistent with an
 * earlier registration), EEXIST (tid registered), ESRCH (no such
 * thread), ENOSPC (registry full), EBADMSG/ENOENT (region), ERANGE /
 * E2BIG (admission refused), or the backend's error.
 */
int hsd_register(struct hsd *d, const struct hsd_reg *r, char *why, size_t len);

/*
 * Registers the vCPU threads of running libvirt domain @domain as the
 * VM @vm (NULL: named like the domain), all or none.  Caller holds
 * d->lock (the discovery is a libvirt round trip made under it).
 * Returns 0 or -errno with @why: ENOTSUP (no libvirt), EINVAL (bad
 * name), EEXIST (domain or one of its threads registered), ENOSPC,
 * ECONNREFUSED (libvirtd not reachable), ENOENT (no such domain), ESRCH
 * (not running), EIO/EBADMSG (libvirt or QEMU refused), admission.
 */
int hsd_register_domain(struct hsd *d, const char *domain, const char *vm,
			char *why, size_t len);

/*
 * Drops every thread of chain @chain (thawed, back in the top cgroup: it
 * runs unmanaged from now on) and the chain, so that it can be
 * registered again with another SLA or other threads.  Caller holds
 * d->lock.  0 or -ENOENT (no such chain) with @why.
 */
int hsd_unregister_chain(struct hsd *d, const char *chain, char *why, size_t len);

/* Marks threads that no longer exist dead, follows the domains (restart:
 * threads read again; gone: dropped), rebuilds; returns how many
 * threads were dropped. */
int hsd_reap(struct hsd *d);

/*
 * Reads chain @c's counters into @st (delta since the last call).
 * 0, or -EBADMSG if the snapshot was refused (then @st is zeroed).
 */
int hsd_read_counters(struct hsd *d, uint32_t c, struct hs_chain_stats *st);

/*
 * Starts a period: counters, plan, timeline, placement (caller holds the
 * lock).  In cfs mode only counters and placement.  0 or -errno.
 */
int hsd_period_begin(struct hsd *d);
/* Applies tick @k of the current period (gating, early ends).  The
 * period is closed in the counters by the next hsd_period_begin(), with
 * the counters it reads anyway. */
void hsd_tick(struct hsd *d, uint32_t k);

/* Owner thread of @pcpu at tick @k, or -1. */
int32_t hsd_owner(const struct hsd *d, uint32_t pcpu, uint32_t k);

/* Renders the state for sched.show / the periodic print. */
void hsd_render(struct hsd *d);

const char *hsd_mode_name(enum hsd_mode m);
int hsd_mode_parse(const char *s, enum hsd_mode *m);

#endif
