/* SPDX-License-Identifier: MIT */
/*
 * The packet scheduler (ch_psched_*): moves descriptors of payload through
 * service chains, hop by hop, to VNF processes and back.
 *
 * Who calls what:
 *   - the control plane (tochaind, tests): create, add data regions and
 *     VNFs, set/delete chains, report VNF processes (pids), restart them;
 *   - the TOE (one thread per chain): ch_psched_push() into a chain's
 *     input queue, ch_psched_take() from its output queue;
 *   - the scheduler's thread, the owner's epoll loop (the TOE's, a test
 *     driver's) that calls ch_psched_poll() every turn and sleeps as
 *     below (or a test driving ch_psched_poll() step by step): everything
 *     else.
 *
 * A descriptor (struct ch_pkt) names a payload in a data region (the VM's
 * region: id, buffer index, offset, length) with its connection and
 * parsed 5-tuple.  The scheduler takes it from the chain's input queue,
 * pins the chain's current forwarding table (RCU, ch_table.h) and, for
 * each hop in turn, gives a work descriptor to every VNF of the hop at
 * once (round-robin over each VNF's service threads).  The next hop
 * starts when all VNFs of the hop allowed; the first Deny stops the
 * descriptor (the others of the hop still return theirs).  Results leave
 * through the output queue in each connection's arrival order (a stream's
 * order is kept even when VNF threads finish out of order; a connection
 * whose descriptors are done does not wait for another's).
 *
 * Trust: VNFs are not trusted.  Each VNF has its own region
 * (include/tochain/vnf_proto.h); the scheduler keeps a private copy of what it gave,
 * reads back only the verdict (once), and takes back only indices the
 * VNF's channel holds (tcr_pool).  A garbage verdict denies that
 * descriptor (CH_REASON_BAD_VERDICT); a protocol violation (an index it
 * was not given, a corrupt ring) fails the VNF.  A failed VNF (dead pid,
 * no progress for hang_ns, protocol violation) has its channels closed
 * (tcr_chan_close reclaims every slot); its chains follow its policy:
 * fail-closed denies its in-flight and new descriptors
 * (CH_REASON_VNF_FAILED), fail-open bypasses it (counted and logged).
 * ch_psched_vnf_restart() reopens it for a new process.
 *
 * TOE input is trusted only for memory safety: region id, buffer index
 * and payload bounds are checked against the data region's geometry
 * (CH_REASON_BAD_DESC otherwise).
 */
#ifndef TOCHAIN_CH_PSCHED_H
#define TOCHAIN_CH_PSCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <tochain/region_layout.h>

#include "ch_table.h"

#define CH_VNF_NONE	0xffffffffu

/* A descriptor from the TOE (its private memory; copied on submit). */
struct ch_pkt {
	uint64_t cookie;		/* the caller's; returned unchanged */
	uint64_t conn_id;		/* connection id (TOE) */
	uint64_t seq;			/* stream offset of the first byte */
	uint64_t tsc;			/* arrival TSC; 0: stamped on submit */
	uint32_t region;		/* data region id (ch_psched_region_add) */
	uint32_t buf;			/* buffer index in the data region */
	uint32_t off, len;		/* payload inside the buffer */
	uint32_t flow;			/* flow table entry or TCR_FLOW_NONE */
	uint16_t sport, dport;		/* host byte order */
	uint8_t family, l4proto, tcp_flags, pad0;
	uint8_t saddr[16], daddr[16];	/* IPv4 in the first 4 bytes */
};

enum ch_verdict { CH_ALLOW = 1, CH_DENY = 2 };

enum ch_reason {
	CH_REASON_NONE		= 0,	/* allowed */
	CH_REASON_RULE		= 1,	/* a VNF denied: deny_vnf, deny_rule */
	CH_REASON_VNF_FAILED	= 2,	/* deny_vnf failed, policy closed */
	CH_REASON_BAD_VERDICT	= 3,	/* deny_vnf wrote an invalid verdict */
	CH_REASON_NO_CHAIN	= 4,	/* the chain has no table */
	CH_REASON_BAD_DESC	= 5,	/* region/buffer/bounds invalid */
};

/* A finished descriptor, in the output queue. */
struct ch_result {
	struct ch_pkt pkt;		/* as submitted */
	uint64_t table_version;		/* table it ran on, 0 if none */
	uint64_t done_tsc;		/* TSC when it finished */
	uint32_t chain;
	uint32_t verdict;		/* enum ch_verdict */
	uint32_t reason;		/* enum ch_reason */
	uint32_t deny_vnf;		/* VNF id, or CH_VNF_NONE */
	uint32_t deny_rule;		/* the VNF's rule id (CH_REASON_RULE) */
	uint32_t hops;			/* hops it passed completely */
	uint32_t bypassed;		/* failed fail-open VNFs skipped */
	uint32_t incident;		/* with an answer: its incident id (vnf_proto.h) */
	/*
	 * A Deny whose VNF asked to end the connection with a message to the
	 * client (VNF_VERDICT_ANSWER): answer_len (1..VNF_ANSWER_MAX) bytes,
	 * copied out of the VNF's region, malloc'd; the taker owns them and
	 * frees them (free(NULL) when there is none).  NULL otherwise.
	 */
	uint32_t answer_len;
	/*
	 * An Alert (VNF_VERDICT_ALERT, also on a Deny when an earlier hop
	 * alerted): alert_vnf (CH_VNF_NONE: none), its rule, and its message,
	 * alert_msg_len (0..VNF_ALERT_MSG_MAX) bytes malloc'd, no NUL; the
	 * taker frees alert_msg as it frees answer.
	 */
	uint32_t alert_vnf;
	uint32_t alert_rule;
	uint32_t alert_msg_len;
	uint8_t *answer;
	char *alert_msg;
};

enum ch_fail_policy { CH_FAIL_CLOSED = 0, CH_FAIL_OPEN = 1 };

/*
 * How a VNF's work descriptors are spread over its service threads:
 * round-robin (default), or by flow: every descriptor of one connection
 * (ch_pkt.conn_id) goes to the same thread, in submission order, for
 * VNFs that keep per-stream state (an IDS reassembling a stream).
 */
enum ch_dispatch { CH_DISPATCH_RR = 0, CH_DISPATCH_FLOW = 1 };

struct ch_psched_cfg {
	uint32_t nchains;		/* chain ids 0..nchains-1; default 16, max 64 */
	uint32_t qcap;			/* input/output queue records; default 1024 */
	uint32_t max_flight;		/* descriptors in processing; default 1024 */
	uint32_t vnf_nbufs;		/* work descriptors per VNF region; default 1024 */
	uint64_t hang_ns;		/* no progress with work out: hung; default 1 s */
	const char *counters_path;	/* chain counters region file; NULL: private */
};

struct ch_vnf_cfg {
	const char *name;		/* for logs */
	const char *region_path;	/* VNF region file to create (e.g. /dev/shm/...) */
	const char *region_name;	/* its header name (tcr_name_valid); NULL: name */
	uint32_t nthreads;		/* service threads = channels, 1..VNF_MAX_THREADS */
	uint32_t policy;		/* enum ch_fail_policy */
	uint32_t dispatch;		/* enum ch_dispatch; 0: round-robin */
};

struct ch_vnf_info {
	bool failed;
	uint32_t epoch;			/* restarts */
	uint64_t dispatched;		/* work descriptors sent */
	uint64_t verdicts;		/* verdicts received */
	uint64_t bad_verdicts;
	uint64_t bypassed;		/* descriptors that skipped it (fail-open) */
	uint64_t failures;
	uint64_t alerts;		/* Alert verdicts (VNF_VERDICT_ALERT) */
	uint32_t outstanding;		/* work descriptors it holds now */
	uint32_t pool_free;		/* work descriptors free in its region */
	uint32_t bells;			/* threads whose verdicts ring the owner's loop (ch_psched_loop.c) */
};

struct ch_psched;

/* NULL with errno (EINVAL, ENOMEM, or from creating the counters region). */
struct ch_psched *ch_psched_create(const struct ch_psched_cfg *cfg);
/*
 * Frees everything and takes its bells out of the loop's epoll set (close
 * that set after); VNF region files stay.  Not while a poll runs.
 */
void ch_psched_destroy(struct ch_psched *s);

/*
 * Control plane.  Data regions and VNFs are added once (ids never
 * reused); chains reference them.  0/id or -errno.
 */
int ch_psched_region_add(struct ch_psched *s, uint32_t id, const char *path,
			 uint32_t nbufs, uint32_t slot_size);
int ch_psched_vnf_add(struct ch_psched *s, const struct ch_vnf_cfg *cfg);
/*
 * The flow table file (ch_flow.h) of data region @id, granted read-only
 * to VNFs with the region.  Before the region's chains are created.
 * 0, -EINVAL, -ENOENT (no such region), -EEXIST.
 */
int ch_psched_region_flows(struct ch_psched *s, uint32_t id, const char *path);
/*
 * The header name of data region @id (tcr_name_valid), sent in its grants
 * after the path (vnf_proto.h: a VNF inside a guest maps the device of
 * that name).  Before the region's chains are created.  0, -EINVAL (bad
 * name), -ENAMETOOLONG (path and name do not fit a grant's slot together:
 * grants then carry the path alone), -ENOENT, -EEXIST.
 */
int ch_psched_region_name(struct ch_psched *s, uint32_t id, const char *name);
/* The process serving VNF @vnf (0: none; death detection by pid). */
int ch_psched_vnf_set_pid(struct ch_psched *s, uint32_t vnf, pid_t pid);
/*
 * (Re)open VNF @vnf's channels for a new process @pid: a live VNF is
 * failed first.  Grants are sent again.  Asynchronous: done by the
 * scheduler's next poll.
 */
int ch_psched_vnf_restart(struct ch_psched *s, uint32_t vnf, pid_t pid);
int ch_psched_vnf_info(struct ch_psched *s, uint32_t vnf, struct ch_vnf_info *out);
/*
 * Dispatch to the first @n (1..nthreads) service threads of VNF @vnf
 * only: those the CPU scheduler plans to run (eq. 2's R).  Takes effect at
 * the next descriptor; what a thread holds already it still answers.
 * With CH_DISPATCH_FLOW a connection keeps its thread while that thread
 * runs.  0 or -EINVAL.  ch_psched_vnf_running(): the current count (0 for
 * a bad id).
 */
int ch_psched_vnf_run_threads(struct ch_psched *s, uint32_t vnf, uint32_t n);
uint32_t ch_psched_vnf_running(struct ch_psched *s, uint32_t vnf);
/*
 * Create/replace (@cfg) or delete (NULL) chain @chain's table; waits a
 * grace period.  -EINVAL (bad id, config, unknown VNF or region), -ENOENT.
 */
int ch_psched_chain_set(struct ch_psched *s, uint32_t chain, const struct ch_chain_cfg *cfg,
			uint64_t *version);

/*
 * TOE side (one producer and one consumer thread per chain).
 * ch_psched_push() queues @p[@n] on @chain's input; ch_psched_take()
 * takes results from its output.  Each returns how many descriptors it
 * moved.  A push wakes nothing: the loop that runs the scheduler pushes
 * itself (the TOE's does, before its turn's poll), or the descriptor waits
 * for the loop's next turn (at most the sleep bound below).
 */
unsigned int ch_psched_push(struct ch_psched *s, uint32_t chain, const struct ch_pkt *p,
			    unsigned int n);
unsigned int ch_psched_take(struct ch_psched *s, uint32_t chain, struct ch_result *r,
			    unsigned int n);
/* Results waiting in @chain's output queue (a snapshot; 0 for a bad id). */
uint32_t ch_psched_out_len(struct ch_psched *s, uint32_t chain);
/* The chain's counters (region_layout.h), NULL for a bad id. */
struct tcr_chain_counters *ch_psched_counters(struct ch_psched *s, uint32_t chain);
/*
 * Results leave in each connection's arrival order, not the chain's: one
 * connection's slow descriptor holds back only that connection's younger
 * ones.  ch_psched_settled() counts the arrivals of @chain that left, and
 * every older one with them (all pushed before the oldest still here): no
 * VNF reads any of them any more (a flow entry's grace period,
 * ch_flow_reclaim).  0 for a bad id.
 */
uint64_t ch_psched_settled(struct ch_psched *s, uint32_t chain);

/*
 * Running the scheduler: its owner's epoll loop (the TOE's, a test
 * driver's; ch_psched_loop.c) runs it, in one thread registered with
 * liburcu (urcu_memb_register_thread()).  ch_psched_loop_attach() once,
 * before the first poll: the scheduler then adds the bells of its VNF
 * threads (eventfds their processes announce) to @epfd, edge-triggered,
 * with data.u64 = @tag (low 32 bits zero) | a bell id; 0 or -EINVAL.
 * The loop calls ch_psched_poll() every turn: one round of work, which
 * returns how many events it handled (0: idle); and
 * ch_psched_bell_rang() with the id of each such event.  Before it
 * sleeps, ch_psched_sleep_prepare(): false, work is ready (do not
 * sleep); true: sleep at most *@ns (UINT64_MAX: no bound), then call
 * ch_psched_sleep_done().  Nothing here makes a system call but the
 * epoll changes of a bell taken, muted or dropped.  A test may also call
 * ch_psched_poll() step by step without a loop (no bells are taken then).
 */
int ch_psched_loop_attach(struct ch_psched *s, int epfd, uint64_t tag);
unsigned int ch_psched_poll(struct ch_psched *s);
void ch_psched_bell_rang(struct ch_psched *s, uint32_t id);
bool ch_psched_sleep_prepare(struct ch_psched *s, uint64_t *ns);
void ch_psched_sleep_done(struct ch_psched *s);

/* Descriptors in processing (all chains); for tests and draining. */
uint32_t ch_psched_in_flight(struct ch_psched *s);

#endif /* TOCHAIN_CH_PSCHED_H */
