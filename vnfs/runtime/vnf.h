/* SPDX-License-Identifier: MIT */
/*
 * The VNF runtime library (vnf_*): what a VNF service thread links to talk
 * to the packet scheduler.  The protocol underneath is vnf_proto.h.
 *
 *   struct vnf_thread *t = vnf_attach("/dev/shm/tochain-vnf-ids", 0, 5000);
 *   struct vnf_pkt pk[32];
 *   for (;;) {
 *           int n = vnf_recv(t, pk, 32, 100);     // sleeps when idle
 *           for (int i = 0; i < n; i++)
 *                   vnf_post(t, &pk[i], inspect(pk[i].data, pk[i].len)
 *                            ? VNF_VERDICT_ALLOW : VNF_VERDICT_DENY, rule);
 *   }                                             // vnf_recv flushes verdicts
 *
 * One struct vnf_thread per service thread (= channel of the VNF region);
 * a handle is used by one thread only.  Each handle maps the VNF region
 * and, read-only, the data regions the scheduler grants it (control
 * messages handled inside vnf_recv, never seen by the caller).  When the
 * scheduler reopens the channel (after a failure or a restart of the
 * VNF), vnf_recv reattaches by itself and drops its data mappings (the
 * scheduler grants them again).
 *
 * Waiting: vnf_recv polls within an adaptive budget (tochain/spin.h),
 * then sleeps on the RX ring's futex word (a shared futex) until the
 * scheduler kicks it or the timeout ends, so an idle VNF costs no CPU;
 * handing back verdicts (vnf_flush) wakes a sleeping scheduler the same
 * way.  Inside a guest (vnf_attach_guest) no futex wake-up arrives: it
 * polls with growing naps instead.
 *
 * Trust: the VNF trusts the scheduler (it writes the VNF region) but not
 * the guest: payload is in the guest's region, mapped read-only, and may
 * change under the reader; a work descriptor's bounds are checked against
 * the data region's geometry before the payload pointer is formed.
 */
#ifndef TOCHAIN_VNF_H
#define TOCHAIN_VNF_H

#include <stdbool.h>
#include <stdint.h>

#include <tochain/region_layout.h>

#include "tochain/vnf_proto.h"

struct vnf_pkt {
	uint32_t idx;			/* work descriptor (pass back to vnf_post) */
	uint32_t epoch;			/* channel epoch it came from */
	struct tcr_desc d;		/* private copy: conn, 5-tuple, chain, hop, flow */
	const uint8_t *data;		/* payload, read-only; NULL if unmapped */
	uint32_t len;			/* payload bytes */
};

struct vnf_thread;

/*
 * Attach service thread @thread (channel) of the VNF region at @path,
 * waiting up to @timeout_ms for the region and channel to be ready.
 * NULL with errno (ENOENT, ENOTCONN when not opened in time, EBADMSG ...).
 */
struct vnf_thread *vnf_attach(const char *path, uint32_t thread, int timeout_ms);

/*
 * The same inside a guest (guest mode): @path is the VNF region's device
 * (tochain_ivshmem.ko, e.g. /dev/tochain/vm1.vnf-ids) and a granted data
 * region is mapped read-only from @dev_dir/<its header name> (the name
 * the grant carries after the host path).  The host's futex wake-up does
 * not reach a guest, so vnf_recv never announces a sleep: it polls,
 * backing off from 50 us to 1 ms naps while idle.  Flow tables are not
 * granted into guests: vnf_flow() says -ENOENT.  vnf_recv returns
 * -ENODEV once the device is gone (unplugged: POLLHUP on its file;
 * revoked: the BAR reads all ones).  A device unplugged while the thread
 * touches it raises SIGBUS (the driver zaps the mapping): the process
 * dies of it, the caller's supervisor (tochain-vnf's agent) reaps it.
 */
struct vnf_thread *vnf_attach_guest(const char *path, uint32_t thread, int timeout_ms,
				    const char *dev_dir);
void vnf_detach(struct vnf_thread *t);

/*
 * Receive up to @max descriptors; waits up to @timeout_ms (0: do not
 * wait, <0: forever) for the first.  Verdicts posted before are flushed
 * first.  Returns the count, 0 on timeout, or -errno (-ESHUTDOWN: the
 * region was killed, -ENODEV: its device is gone (guest mode); the VNF
 * should exit).
 */
int vnf_recv(struct vnf_thread *t, struct vnf_pkt *pkts, unsigned int max, int timeout_ms);

/* Post the verdict for @p (enum vnf_verdict, rule id for a Deny).  0 or -errno. */
int vnf_post(struct vnf_thread *t, const struct vnf_pkt *p, uint32_t verdict, uint32_t rule);

/*
 * Post a Deny that asks the TOE to end the connection with @answer (@len
 * bytes, 1..VNF_ANSWER_MAX: an HTTP response, headers included) rather
 * than a reset; @incident (nonzero) names it in the TOE's log and stats
 * (vnf_proto.h).  Without an answer or an incident it posts a plain Deny.
 * 0 or -errno.
 */
int vnf_post_answer(struct vnf_thread *t, const struct vnf_pkt *p, uint32_t rule,
		    uint32_t incident, const void *answer, uint32_t len);

/*
 * Post an Alert for @p: the data goes on, and the TOE records it as
 * evidence under @rule with @msg (@len bytes, cut to VNF_ALERT_MSG_MAX;
 * vnf_proto.h).  0 or -errno.
 */
int vnf_post_alert(struct vnf_thread *t, const struct vnf_pkt *p, uint32_t rule,
		   const char *msg, uint32_t len);

/* Hand posted verdicts back to the scheduler now.  0 or -errno. */
int vnf_flush(struct vnf_thread *t);

/* Raise early-end flags TCR_EARLY_* for chain @chain (design section 2). */
void vnf_report_early(struct vnf_thread *t, uint32_t chain, uint32_t flags);

/*
 * Chain @chain's counter block in the VNF region (the packet scheduler
 * copies the chain's queue lengths and receiver history there), NULL for
 * a bad id; vnf_early.h reads it.
 */
struct tcr_chain_counters *vnf_chain_counters(struct vnf_thread *t, uint32_t chain);

/* Whether the thread's RX ring holds no descriptor now (a snapshot). */
bool vnf_rx_empty(struct vnf_thread *t);

/* Number of service threads (channels) the VNF region has, or -errno. */
int vnf_region_threads(const char *path);

/*
 * Shared flow state (seed 002, include/tochain/ch_flow.h).  The TOE keeps, per VM,
 * a flow table: 5-tuple and TCP state of each connection; a descriptor's
 * d.flow names its entry (TCR_FLOW_NONE: none).  The scheduler grants
 * the table with the data region; the runtime maps it read-only.
 */
struct vnf_flow {
	uint32_t region;		/* data region id */
	uint32_t idx;			/* entry */
	uint32_t gen;			/* changes when the entry is reused */
	uint8_t state;			/* enum ch_flow_state */
	uint8_t family, l4proto;
	uint16_t sport, dport;
	uint8_t saddr[16], daddr[16];
};

/* The flow of @p, a consistent copy.  0, -ENOENT (none), -EAGAIN (busy). */
int vnf_flow(struct vnf_thread *t, const struct vnf_pkt *p, struct vnf_flow *out);

/*
 * One private 64-bit slot per flow for this VNF, in its own memory (no
 * other VNF can see or write it), shared by its threads.  vnf_slot()
 * returns the slot of @f, reset to 0 when the entry was reused for a new
 * flow since the slot was last used; NULL if out of range.  Threads that
 * work on the same flow synchronise on the slot themselves (atomics).
 */
struct vnf_slots;
struct vnf_slots *vnf_slots_create(uint32_t nflows);
void vnf_slots_destroy(struct vnf_slots *s);
uint64_t *vnf_slot(struct vnf_slots *s, const struct vnf_flow *f);

#endif /* TOCHAIN_VNF_H */
