/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/chain/ (not installed, not for other modules): the
 * packet scheduler's state, shared by its files.  The contract is in
 * ch_psched.h.
 *
 *   ch_psched.c           creation, control plane, TOE side, the poll
 *   ch_psched_dispatch.c  VNF channels and grants; admitting descriptors
 *                         and dispatching them hop by hop
 *   ch_psched_collect.c   verdicts back from VNFs; results released in
 *                         each connection's arrival order
 *   ch_psched_live.c      VNF liveness, failure and restart
 *   ch_psched_loop.c      run by its owner's epoll loop: VNF bells, the
 *                         loop's sleep
 *   ch_psched_sla.c       counters for the CPU scheduler, early-end flags
 *   ch_psched_plan.c      the service threads planned to run get the work
 *
 * SYNCHRONIZATION.
 *  - Everything below "scheduler thread state" in the structs here, and
 *    every function of ch_psched_dispatch.c, _collect.c and _live.c,
 *    belongs to the one thread that runs ch_psched_poll(), "the scheduler
 *    thread" of these files (the owner's loop): flights, VNF pools,
 *    channels, grants.
 *  - Control-plane calls publish new data regions and VNFs by filling the
 *    slot and then store-releasing `present` (paired with the scheduler's
 *    load-acquire); they never touch a published object again except
 *    through atomic request words (pid, restart_pid).
 *  - Forwarding tables: RCU (ch_table.c).  Each flight holds a table
 *    reference from admission to completion, so a descriptor finishes on
 *    the table it started on.  Retired tables are freed by
 *    ch_psched_poll(), after their grants were revoked.
 *  - Statistics read by other threads are written with relaxed atomics.
 *  - Input/output queues: SPSC (ch_queue.h).  Nothing wakes the loop on
 *    a push: the loop's own thread pushes (the TOE's), or the descriptor
 *    waits for its next turn.
 */
#ifndef TOCHAIN_CH_PSCHED_INT_H
#define TOCHAIN_CH_PSCHED_INT_H

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/counters.h>
#include <tochain/pool.h>
#include <tochain/region.h>

#include "ch_psched.h"
#include "ch_queue.h"
#include "tochain/vnf_proto.h"

_Static_assert(CH_MAX_PAR <= 16, "hop masks are 16 bits");
_Static_assert(CH_MAX_REGIONS <= VNF_REGION_CHAINS, "region ids fit the protocol");

#define BURST		32
#define FLIGHT_CTRL	0xffffffffu	/* vdesc of a control message */
#define ORDER_GONE	0xffffffffu	/* an order slot released ahead of the oldest */
#define HOLD_CONNS	32		/* connections one release pass can hold back */
#define CHECK_NS	2000000ull	/* liveness checks every 2 ms */
/* The sleeps of the owner's loop (ch_psched_loop.c): */
#define SLEEP_NS	50000000ull	/* nothing out, or out at VNF threads that all ring */
#define NAP_NS		50000ull	/* work out at a VNF thread that does not ring */
#define FRUITLESS_MAX	8		/* wake-ups that found nothing, in a row ... */
#define FRUITLESS_NS	1000000ull	/* ... then the ringer is not heard for this long */

enum flight_state { FL_FREE = 0, FL_BUSY = 1, FL_DONE = 2 };

struct flight {
	struct ch_pkt pkt;
	struct ch_table *tb;		/* reference held while busy */
	uint32_t chain;
	uint32_t gen;			/* bumped at each reuse */
	uint8_t state;			/* enum flight_state */
	uint8_t hop;			/* current hop */
	uint8_t stalled;		/* in the stall ring */
	uint8_t pad0;
	uint16_t pending;		/* VNFs of the hop still to dispatch */
	uint16_t outstanding;		/* dispatched, verdict not back */
	uint32_t verdict, reason, deny_vnf, deny_rule, bypassed;
	uint32_t incident, answer_len;	/* the answer of the recorded Deny, if any */
	uint8_t *answer;		/* malloc'd; moves to the result at release */
	uint32_t alert_vnf, alert_rule, alert_msg_len;	/* the first Alert, if any */
	char *alert_msg;		/* malloc'd; moves to the result at release */
};

/* What the scheduler gave a VNF work descriptor for (private). */
struct vdesc {
	uint32_t flight;		/* flight id or FLIGHT_CTRL */
	uint32_t gen;
	uint8_t slot;			/* position of the VNF in the hop */
	uint8_t chan;			/* channel it was sent on */
};

struct vchan {
	uint32_t outstanding;		/* work descriptors the thread holds */
	uint64_t last_progress;		/* ns, monotonic */
	bool kick;			/* enqueued on RX this round */
	uint32_t taken;			/* verdicts collected, wrapping */
	/* owner's loop (ch_psched_loop.c): its bell */
	uint32_t bell_of;		/* the announcement taken (fd + 1), 0: none */
	int bell;			/* our fd of it; -1: none (set at vnf_add) */
	bool bell_pending;		/* rang since the last judgement */
	uint32_t bell_taken;		/* taken when it rang */
	uint32_t bell_fruitless;	/* rings in a row that brought no verdict */
	uint64_t bell_muted;		/* ns until which it is muted, 0: heard */
	uint32_t bell_takes;		/* announcements taken for this process */
};

struct vnf {
	uint32_t present;		/* store-release by the control plane */
	uint32_t id, nthreads, policy, dispatch;
	char name[TCR_NAME_MAX];
	int pid;			/* atomic: process serving it */
	int restart_pid;		/* atomic: -1 none, else restart request */
	uint32_t run;			/* atomic: threads dispatched to, 0: all (ch_psched_plan.c) */
	/* scheduler thread state */
	struct tcr_region *r;
	struct tcr_pool *pool;
	struct tcr_chan chan[VNF_MAX_THREADS];
	struct vchan vc[VNF_MAX_THREADS];
	struct vdesc *vd;
	uint32_t rr;
	uint32_t grants[CH_MAX_REGIONS];
	bool failed;			/* also read (relaxed) by info */
	uint32_t pool_free;		/* snapshot of the pool's free stock, for info */
	uint32_t epoch;
	int pidfd;			/* of pidfd_of; -1: kill(2) instead (ch_psched_live.c) */
	int pidfd_of;			/* pid that pidfd is for, 0: none opened */
	uint64_t dispatched, verdicts, bad_verdicts, bypassed, failures, alerts;
};

struct dregion {
	uint32_t present;		/* store-release by the control plane */
	uint32_t nbufs, slot_size;
	char path[VNF_REGION_SLOT];
	uint32_t has_flows;		/* store-release after flows_path */
	char flows_path[VNF_REGION_SLOT];
	uint32_t has_name;		/* store-release after name */
	char name[TCR_NAME_MAX];	/* its header name, for guests */
};

struct chain_rt {
	struct ch_queue *in, *out;
	struct tcr_chain_counters *ctr;
	uint32_t *order;		/* flight ids in arrival order, ORDER_GONE: released */
	uint32_t ohead, otail;		/* ohead: the oldest not released */
	uint32_t inflight;
	uint32_t ndone;			/* flights done, not released */
	uint64_t settled;		/* atomic: arrivals all released before the oldest
					 * not released (ch_psched_settled) */
	uint32_t early_pend;		/* TCR_EARLY_* asked by VNFs (ch_psched_sla.c) */
	uint64_t early_arrivals;	/* arrivals when (a) was asked */
};

struct ch_psched {
	struct ch_psched_cfg cfg;
	struct ch_tables *tables;
	struct chain_rt *chain;
	struct vnf vnf[CH_MAX_VNFS];
	uint32_t nvnfs;			/* store-release after a VNF is ready */
	struct dregion region[CH_MAX_REGIONS];
	pthread_mutex_t ctl_lock;	/* serialises control-plane calls */
	struct tcr_region *ctr_region;
	void *ctr_mem;
	/* scheduler thread state */
	struct flight *fl;
	uint32_t *free_fl, nfree;
	uint32_t *stall, shead, stail;	/* ring of flight ids, max_flight slots */
	uint32_t flight_mask;		/* order/stall ring mask */
	uint64_t next_check;
	uint32_t live_round;		/* liveness checks so far (ch_psched_live.c) */
	uint32_t in_flight;		/* atomic for readers */
	/* the owner's epoll loop (ch_psched_loop.c) */
	int loop_epfd;			/* -1: none */
	uint64_t loop_tag;
	struct tcr_ring *armed[CH_MAX_VNFS * VNF_MAX_THREADS];	/* for this sleep */
	uint32_t narmed;
};

static inline void futex_wake(__u32 *word)
{
	/* Shared mapping: not FUTEX_PRIVATE. */
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Publish the free stock of @vn's pool for ch_psched_vnf_info (relaxed). */
#define pool_note(vn) \
	tc_store_relaxed(&(vn)->pool_free, (uint32_t)tcr_pool_count((vn)->pool, TCR_HOLDER_FREE))

static inline void stat_add(uint64_t *p, uint64_t v)
{
	tc_store_relaxed(p, tc_load_relaxed(p) + v);
}

/* Data region @id once the control plane published it, else NULL. */
static inline const struct dregion *dregion_get(struct ch_psched *s, uint32_t id)
{
	if (id >= CH_MAX_REGIONS || !tc_load_acquire(&s->region[id].present))
		return NULL;
	return &s->region[id];
}

static inline void flight_deny(struct flight *f, uint32_t reason, uint32_t vnf, uint32_t rule)
{
	if (f->verdict == CH_DENY)
		return;		/* the first Deny is the one recorded */
	f->verdict = CH_DENY;
	f->reason = reason;
	f->deny_vnf = vnf;
	f->deny_rule = rule;
}

#endif /* TOCHAIN_CH_PSCHED_INT_H */
