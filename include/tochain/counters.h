/* SPDX-License-Identifier: MIT */
/*
 * Per-chain counters for the CPU scheduler (tcr_counters_*), design
 * section 2: what arrived (I_i), finished (F_i) and is left (R_i) in a
 * chain's input queue each period, the output queue (O_i) and what its
 * receiver took per period (for E_i), the arrival time of the output
 * queue's head (Algorithm 2), and the early-end flags a service thread
 * raises.
 *
 * Writers: the packet scheduler updates the first line with relaxed
 * atomics (single writer per chain); the CPU scheduler closes periods (the
 * second line, single writer); service threads raise early-end flags (the
 * third line, atomic OR).  Readers take a snapshot that reads each field
 * once and checks it against the previous snapshot: cumulative counters
 * never go back and queue lengths never exceed the ring size, otherwise
 * the snapshot is refused (-EBADMSG), because counters may sit in memory
 * that a party the reader does not trust can write.
 */
#ifndef TOCHAIN_COUNTERS_H
#define TOCHAIN_COUNTERS_H

#include <stdint.h>
#include <tochain/region_layout.h>

struct tcr_counters_snap {
	uint64_t arrivals, finished, denied, taken;
	uint64_t out_head_tsc;
	uint32_t in_qlen, out_qlen;
	uint32_t early_end;
};

/* Packet scheduler side (single writer per chain). */
void tcr_counters_arrived(struct tcr_chain_counters *c, uint32_t n);
void tcr_counters_finished(struct tcr_chain_counters *c, uint32_t n, uint32_t denied);
void tcr_counters_taken(struct tcr_chain_counters *c, uint32_t n);
void tcr_counters_queues(struct tcr_chain_counters *c, uint32_t in_qlen,
			 uint32_t out_qlen, uint64_t out_head_tsc);

/* Service thread: raise TCR_EARLY_* flags (atomic OR, bumps early_seq). */
void tcr_counters_raise_early(struct tcr_chain_counters *c, uint32_t flags);
/* CPU scheduler: take and clear the raised flags. */
uint32_t tcr_counters_take_early(struct tcr_chain_counters *c);

/*
 * Read a consistent-enough snapshot; @prev (may be NULL) is the previous
 * one, @max_qlen the largest valid queue length.  0 or -EBADMSG.
 */
int tcr_counters_snapshot(const struct tcr_chain_counters *c,
			  const struct tcr_counters_snap *prev, uint32_t max_qlen,
			  struct tcr_counters_snap *out);

/* CPU scheduler: record what the receiver took in period @period. */
void tcr_counters_close_period(struct tcr_chain_counters *c, uint64_t period,
			       uint32_t taken_in_period);

/*
 * E_i: mean of what the receiver took over the last @w closed periods
 * (1 <= w <= TCR_TAKEN_WINDOW; fewer if fewer periods were closed).
 */
uint32_t tcr_counters_mean_taken(const struct tcr_chain_counters *c, unsigned int w);

#endif /* TOCHAIN_COUNTERS_H */
