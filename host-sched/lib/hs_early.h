/* SPDX-License-Identifier: MIT */
/*
 * hs_early — when a VNF service thread ends its slot early (paper §3.2).
 *
 * A service thread asks at its own pace; the window is per chain and has
 * one writer (whoever closes the period) — no locking here.
 */
#ifndef HS_EARLY_H
#define HS_EARLY_H

#include <stdbool.h>
#include <stdint.h>

#define HS_RXWIN_MAX 64

/* Packets the chain's receiver (VM or TOE) took in each of the last w
 * periods, for E_i = (sum r_x) / w. */
struct hs_rxwin {
	uint32_t w;		/* window length, 1..HS_RXWIN_MAX */
	uint32_t n;		/* periods recorded so far, <= w */
	uint32_t next;		/* slot the next period goes to */
	uint64_t sum;		/* sum of r[0..n) */
	uint64_t r[HS_RXWIN_MAX];
};

enum hs_early_reason {
	HS_EARLY_NO = 0,
	HS_EARLY_INPUT_EMPTY,	/* (a) the chain's input queue is empty */
	HS_EARLY_OUTPUT_FULL,	/* (b) O_i >= E_i */
};

/* Returns 0 or -EINVAL (w out of range). */
int hs_rxwin_init(struct hs_rxwin *win, uint32_t w);

/* Records what the receiver took in the period that just ended; the oldest
 * period falls out once w are recorded. */
void hs_rxwin_push(struct hs_rxwin *win, uint64_t received);

/*
 * The same, for the periods that measure the receiver: record @received
 * only if the receiver was @saturated, i.e. it never found the output
 * queue empty while it ran that period and packets were still waiting at
 * its end.  Otherwise it took all there was when it looked, and the count
 * is a lower bound of what it could take, not its capacity.  The literal
 * rule (hs_rxwin_push every period) feeds on itself: a VNF that stops at
 * O >= E lets the receiver take about E, so E never grows and the chain
 * is held far below its SLA (tochain-sim, paper.scn with `early_b
 * literal`: 5 of 9 chains at 3-6% of their SLA at light load).  Counting
 * every period that merely ended with packets left (a receiver whose
 * slot came before the producer's) still held a one-vCPU receiver at 65%
 * (test_hs_sim).  Where "saturated" comes from is the caller's business:
 * the simulator knows it; a daemon asks the receiver (the guest runtime
 * or the TOE) whether it drained the queue.  Returns true if recorded.
 */
bool hs_rxwin_record(struct hs_rxwin *win, uint64_t received, bool saturated);

/* E_i; 0 before any period was recorded.  Before the window is full the
 * mean is over the periods recorded so far, not over w (a fresh chain is
 * not presumed to have a slow receiver). */
double hs_rxwin_mean(const struct hs_rxwin *win);

/*
 * Should a service thread of the chain end its slot now?
 *   (a) @inq == 0, checked first;
 *   (b) @outq >= E_i.  Not before one period was recorded (no estimate),
 *       and never with an empty output queue: with E_i == 0 (the receiver
 *       took nothing lately, e.g. no traffic yet) "0 >= 0" would end every
 *       slot at once and the chain could never start.  The comparison is
 *       exact: O * n >= sum.
 */
enum hs_early_reason hs_early_end(uint64_t inq, uint64_t outq,
				  const struct hs_rxwin *win);

#endif
